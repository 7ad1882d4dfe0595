package connectors

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Field is one field of a connector type's configuration or of its messages. Every value is a
// string on the wire; Kind says which strings the field takes (see CheckValue).
type Field struct {
	Name        string
	Description string
	Kind        oas.ConnectorFieldType
	Required    bool
	// Sensitive fields (webhook URLs that carry a token, routing keys, passwords) are answered
	// masked (Mask) in connectors and left out of summaries; their values are never logged nor
	// quoted in an error message.
	Sensitive bool
	// AllowOverrides says that a connector's configOverrides may give the field a template per
	// entity type. Sensitive fields allow none (a template would be answered in clear).
	AllowOverrides bool
	// AllowedValues, when not empty, are the only values the field takes.
	AllowedValues []string
	// Default is the value the connector has when the field is not sent ("" for none).
	Default string
	// Rule, when set, is a rule the value meets beyond its kind's (CheckValue); its error is the
	// rule broken, never quoting a sensitive value.
	Rule func(v string) error
}

// Payload is one payload type of a connector type: the message fields its presets may set.
type Payload struct {
	Name   string
	Fields []Field
}

// Type is one connector type: its configuration fields, the payload types of its messages, the
// entity types it carries notifications about, and whether mgmtapi delivers through it.
type Type struct {
	Type oas.ConnectorType
	// Delivered is false for the types mgmtapi stores and checks but sends nothing through.
	Delivered   bool
	EntityTypes []oas.NotificationEntityType
	Config      []Field
	Payloads    []Payload
}

// Field returns the configuration field of the type with that name.
func (t Type) Field(name string) (Field, bool) {
	for _, f := range t.Config {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Payload returns the payload type of the type with that name.
func (t Type) Payload(name string) (Payload, bool) {
	for _, p := range t.Payloads {
		if p.Name == name {
			return p, true
		}
	}
	return Payload{}, false
}

// Supports reports whether connectors of the type carry notifications about the entity type; an
// UNSPECIFIED entity type is supported by every type.
func (t Type) Supports(e oas.NotificationEntityType) bool {
	return e == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED || slices.Contains(t.EntityTypes, e)
}

// Mask is the value a sensitive field is answered with. Sent back in a replace, it stands for the
// value stored.
const Mask = "********"

var (
	allEntities = []oas.NotificationEntityType{
		oas.NotificationEntityTypeALERTS, oas.NotificationEntityTypeTESTNOTIFICATIONS,
		oas.NotificationEntityTypeCASES, oas.NotificationEntityTypeOLLYSCHEDULEDTASKS,
	}
	alertEntities = []oas.NotificationEntityType{
		oas.NotificationEntityTypeALERTS, oas.NotificationEntityTypeTESTNOTIFICATIONS, oas.NotificationEntityTypeCASES,
	}
)

// rendered are the message fields of every type's default payload, title and description (what
// the system presets render), followed by the type's own.
func rendered(own ...Field) []Field {
	return append([]Field{
		{Name: "title", Kind: oas.ConnectorFieldTypeSTRING, Description: "The notification's headline (a subject, a card's or message's title)."},
		{Name: "description", Kind: oas.ConnectorFieldTypeSTRING, Description: "The notification's text."},
	}, own...)
}

const notDelivered = " mgmtapi stores and checks connectors of this type but does not send notifications through them."

// types is the table of every connector type, in the enumeration's order. The connector-schema
// operation answers from it, connector bodies are checked against it, presets check their message
// fields against it, and a delivery worker reads a connector's fields by its names.
var types = []Type{
	{
		Type: oas.ConnectorTypeSLACK, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			{Name: "webhookUrl", Kind: oas.ConnectorFieldTypeURL, Required: true, Sensitive: true,
				Description: "The Slack incoming-webhook URL (https) the messages are posted to; it carries the webhook's secret."},
			{Name: "channel", Kind: oas.ConnectorFieldTypeSTRING, AllowOverrides: true,
				Description: "A channel that overrides the webhook's own (for webhooks that allow it), e.g. #alerts."},
			{Name: "username", Kind: oas.ConnectorFieldTypeSTRING, AllowOverrides: true,
				Description: "The sender name shown with the message, where the webhook allows it."},
		},
		Payloads: []Payload{
			{Name: "default", Fields: rendered(
				Field{Name: "footer", Kind: oas.ConnectorFieldTypeSTRING, Description: "A small line under the message."},
			)},
			{Name: "raw", Fields: []Field{
				{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Required: true,
					Description: "The whole Slack message (blocks, attachments, text) as a JSON object."},
			}},
		},
	},
	{
		Type: oas.ConnectorTypeGENERICHTTPS, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			{Name: "url", Kind: oas.ConnectorFieldTypeURL, Required: true, Sensitive: true,
				Description: "The http or https URL the notification is sent to; it may carry a token, so it is answered masked."},
			{Name: "method", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"POST", "PUT"}, Default: "POST",
				Description: "The HTTP method of the request."},
			{Name: "additionalHeaders", Kind: oas.ConnectorFieldTypeKEYVALUEPAIRS, Sensitive: true,
				Description: "Headers added to every request, as a JSON object of strings (authorization headers belong here)."},
			{Name: "additionalBodyFields", Kind: oas.ConnectorFieldTypeJSONOBJECT, AllowOverrides: true,
				Description: "Members added to every request's JSON body, as a JSON object."},
		},
		Payloads: []Payload{
			{Name: "default", Fields: rendered(
				Field{Name: "headers", Kind: oas.ConnectorFieldTypeKEYVALUEPAIRS, Description: "Headers of the request, a JSON object of strings."},
				Field{Name: "body", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The request's whole JSON body; when not set, the body is the object of the rendered fields."},
			)},
		},
	},
	{
		Type: oas.ConnectorTypePAGERDUTY, Delivered: true, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "integrationKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true,
				Description: "The routing key of the PagerDuty Events API v2 integration."},
			{Name: "eventsUrl", Kind: oas.ConnectorFieldTypeURL, Default: "https://events.pagerduty.com/v2/enqueue",
				Description: "The Events API v2 endpoint the events are sent to."},
		},
		Payloads: []Payload{
			{Name: "default", Fields: rendered(
				Field{Name: "summary", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Description: "The event's summary (at most 1024 characters are sent); the title when not set."},
				Field{Name: "severity", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"critical", "error", "warning", "info"},
					Description: "The event's severity; rendered from the alert's priority when not set."},
				Field{Name: "source", Kind: oas.ConnectorFieldTypeSTRING, Description: "The affected system."},
				Field{Name: "component", Kind: oas.ConnectorFieldTypeSTRING, Description: "The affected component."},
				Field{Name: "group", Kind: oas.ConnectorFieldTypeSTRING, Description: "A logical grouping of components."},
				Field{Name: "class", Kind: oas.ConnectorFieldTypeSTRING, Description: "The class or type of the event."},
				Field{Name: "customDetails", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "Extra details, a JSON object."},
			)},
		},
	},
	{
		Type: oas.ConnectorTypeIBMEVENTNOTIFICATIONS, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "instanceCrn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The CRN of the IBM Cloud Event Notifications instance." + notDelivered},
			{Name: "region", Kind: oas.ConnectorFieldTypeSTRING, Required: true,
				AllowedValues: []string{"us-south", "us-east", "eu-de", "eu-gb", "eu-es", "au-syd", "jp-tok", "jp-osa", "ca-tor", "br-sao"},
				Description:   "The instance's region."},
			{Name: "sourceId", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The id of the API source the events are sent as."},
			{Name: "apiKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Sensitive: true,
				Description: "An IBM Cloud API key allowed to send to the instance."},
		},
		Payloads: []Payload{{Name: "default", Fields: rendered(
			Field{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The event's data, a JSON object."},
		)}},
	},
	{
		Type: oas.ConnectorTypeSERVICENOW, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "instanceUrl", Kind: oas.ConnectorFieldTypeURL, Required: true,
				Description: "The ServiceNow instance's URL (https)." + notDelivered},
			{Name: "username", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Description: "The integration user."},
			{Name: "password", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true, Description: "The integration user's password."},
			{Name: "assignmentGroup", Kind: oas.ConnectorFieldTypeSTRING, AllowOverrides: true, Description: "The group incidents are assigned to."},
		},
		Payloads: []Payload{{Name: "default", Fields: rendered(
			Field{Name: "impact", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"1", "2", "3"}, Description: "1 high, 2 medium, 3 low."},
			Field{Name: "urgency", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"1", "2", "3"}, Description: "1 high, 2 medium, 3 low."},
		)}},
	},
	{
		Type: oas.ConnectorTypeEMAIL, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			{Name: "recipients", Kind: oas.ConnectorFieldTypeARRAYOFSTRINGS, Required: true, AllowOverrides: true, Rule: CheckRecipients,
				Description: "The addresses the messages are sent to, a JSON array of 1 to 100 strings (ops@example.com or Ops <ops@example.com>); a template renders such an array. Messages go through the server's SMTP server (--smtp-url)."},
		},
		Payloads: []Payload{{Name: "default", Fields: rendered()}},
	},
	{
		Type: oas.ConnectorTypePAGERDUTYINCIDENTS, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "apiToken", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true,
				Description: "A PagerDuty REST API token." + notDelivered},
			{Name: "serviceId", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, AllowOverrides: true,
				Description: "The id of the service incidents are opened on."},
			{Name: "fromEmail", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The email of the PagerDuty user the incidents are opened as."},
		},
		Payloads: []Payload{{Name: "default", Fields: rendered(
			Field{Name: "urgency", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"high", "low"}, Description: "The incident's urgency."},
		)}},
	},
	{
		Type: oas.ConnectorTypeMICROSOFTTEAMS, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			{Name: "webhookUrl", Kind: oas.ConnectorFieldTypeURL, Required: true, Sensitive: true,
				Description: "The Teams webhook URL (https) the cards are posted to; it carries the webhook's secret."},
		},
		Payloads: []Payload{{Name: "default", Fields: rendered()}},
	},
	{
		Type: oas.ConnectorTypeEVENTBRIDGE, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "eventBusArn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The ARN of the event bus the events are put on." + notDelivered},
			{Name: "roleArn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The ARN of the role assumed to put events."},
			{Name: "source", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Default: "mgmtapi", Description: "The events' source."},
			{Name: "detailType", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Default: "notification", Description: "The events' detail-type."},
		},
		Payloads: []Payload{{Name: "default", Fields: rendered(
			Field{Name: "detail", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The event's detail, a JSON object."},
		)}},
	},
}

// Types returns every connector type, in the enumeration's order. The slices are shared: callers
// must not change them.
func Types() []Type { return types }

// TypeOf returns the connector type t; false for CONNECTOR_TYPE_UNSPECIFIED and unknown values.
func TypeOf(t oas.ConnectorType) (Type, bool) {
	for _, ty := range types {
		if ty.Type == t {
			return ty, true
		}
	}
	return Type{}, false
}

// CheckValue checks v against the field's kind and allowed values. The error is the rule broken,
// to follow the field's path in a message; it never quotes v.
func CheckValue(f Field, v string) error {
	if len(f.AllowedValues) > 0 && !slices.Contains(f.AllowedValues, v) {
		return fmt.Errorf("must be one of %s", strings.Join(f.AllowedValues, ", "))
	}
	switch f.Kind {
	case oas.ConnectorFieldTypeNONEMPTYSTRING:
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("must not be empty")
		}
	case oas.ConnectorFieldTypeURL:
		return checkURL(v)
	case oas.ConnectorFieldTypeKEYVALUEPAIRS:
		var m map[string]string
		if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return fmt.Errorf("must be a JSON object whose values are strings")
		}
	case oas.ConnectorFieldTypeJSONOBJECT:
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return fmt.Errorf("must be a JSON object")
		}
	case oas.ConnectorFieldTypeARRAYOFSTRINGS:
		var a []string
		if err := json.Unmarshal([]byte(v), &a); err != nil || a == nil {
			return fmt.Errorf("must be a JSON array of strings")
		}
	case oas.ConnectorFieldTypeBOOLEAN:
		if v != "true" && v != "false" {
			return fmt.Errorf("must be true or false")
		}
	case oas.ConnectorFieldTypeDATE:
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return fmt.Errorf("must be a date (2006-01-02) or an RFC 3339 time")
			}
		}
	}
	if f.Rule != nil {
		return f.Rule(v)
	}
	return nil
}

// CheckRecipients is the rule of an EMAIL connector's recipients, stored or rendered from a
// template: a JSON array of strings that delivery.ParseRecipients accepts (the rule the delivery
// checks again when it is enqueued).
func CheckRecipients(v string) error {
	_, err := Recipients(v)
	return err
}

// Recipients reads an EMAIL connector's recipients value (see CheckRecipients) into its bare
// addresses, each once.
func Recipients(v string) ([]string, error) {
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil || list == nil {
		return nil, fmt.Errorf("must be a JSON array of strings")
	}
	return delivery.ParseRecipients(list)
}

// checkURL requires an absolute http or https URL with a host and no user information.
func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("must be an absolute http or https URL with a host")
	}
	if u.User != nil {
		return fmt.Errorf("must not carry user information (user:password@); put credentials in a header or a key field")
	}
	return nil
}

// CheckMessageField checks that a preset's message field fieldName belongs to the payload type of
// the connector type (payload "" meaning the type's first payload type). A connector type that is
// UNSPECIFIED checks nothing: such a preset names no connector type.
func CheckMessageField(c oas.ConnectorType, payload, fieldName string) error {
	ty, ok := TypeOf(c)
	if !ok {
		return nil
	}
	p := ty.Payloads[0]
	if payload != "" {
		if p, ok = ty.Payload(payload); !ok {
			return fmt.Errorf("payload type %q is not one of %s's (%s)", payload, c, strings.Join(payloadNames(ty), ", "))
		}
	}
	for _, f := range p.Fields {
		if f.Name == fieldName {
			return nil
		}
	}
	return fmt.Errorf("%q is not a message field of %s payload type %s (%s)", fieldName, c, p.Name, strings.Join(fieldNames(p.Fields), ", "))
}

func payloadNames(t Type) []string {
	out := make([]string, len(t.Payloads))
	for i, p := range t.Payloads {
		out[i] = p.Name
	}
	return out
}

func fieldNames(fs []Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// schemaOf is the connector-schema answer of the type.
func schemaOf(t Type) oas.ConnectorSchema {
	out := oas.ConnectorSchema{
		Type:                  t.Type,
		ConnectorConfigSchema: oas.ConnectorConfigSchema{Fields: []oas.ConnectorConfigSchemaField{}},
		MessageConfigSchemas:  []oas.MessageConfigSchema{},
		SupportedPayloadTypes: payloadNames(t),
	}
	for _, f := range t.Config {
		s := oas.ConnectorConfigSchemaField{
			FieldName: f.Name, Description: f.Description, FieldType: f.Kind, Required: f.Required,
			AllowOverrides: f.AllowOverrides, AllowedValues: append([]string{}, f.AllowedValues...),
		}
		if f.Default != "" {
			s.Default = oas.NewOptString(f.Default)
		}
		out.ConnectorConfigSchema.Fields = append(out.ConnectorConfigSchema.Fields, s)
	}
	for _, p := range t.Payloads {
		m := oas.MessageConfigSchema{PayloadType: p.Name, Fields: []oas.MessageConfigSchemaField{}}
		for _, f := range p.Fields {
			s := oas.MessageConfigSchemaField{
				FieldName: f.Name, Description: f.Description, FieldType: f.Kind, Required: f.Required,
				AllowedValues: append([]string{}, f.AllowedValues...),
				RenderingMode: oas.NewOptMessageConfigSchemaFieldRenderingMode(oas.MessageConfigSchemaFieldRenderingModeRELAXED),
			}
			if f.Default != "" {
				s.Default = oas.NewOptString(f.Default)
			}
			m.Fields = append(m.Fields, s)
		}
		out.MessageConfigSchemas = append(out.MessageConfigSchemas, m)
	}
	return out
}
