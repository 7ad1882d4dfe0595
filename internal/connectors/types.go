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
	// RequiredUnless names the fields whose presence lifts Required (a connector stored before
	// the public fields, holding a deprecated field that still says where it delivers).
	RequiredUnless []string
	// Sensitive fields are credentials (passwords, API keys, tokens): answered masked (Mask) in
	// connectors and left out of summaries; their values are never logged nor quoted in an
	// error message. Every other field is answered as sent.
	Sensitive bool
	// Deprecated fields are kept from connectors stored before the public fields, with no public
	// counterpart: accepted and answered as stored, never required, never templated.
	Deprecated bool
	// AllowOverrides says that a connector's configOverrides may give the field a template per
	// entity type: every field but the credentials and the deprecated ones (set by init).
	AllowOverrides bool
	// AllowedValues, when not empty, are the only values the field takes, compared without
	// regard to case (the value is kept as sent).
	AllowedValues []string
	// Default is the value the connector has when the field is not sent ("" for none).
	Default string
	// Integrations, when not empty, make the field name an integration (an outgoing webhook) of
	// the team, of one of these types (see Integrations).
	Integrations []string
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
	Delivered bool
	// Preview types are those the vendor's clients offer as a preview and its public documents
	// do not enumerate yet (INCIDENT_IO): accepted and answered when a client names them, left
	// out of the lists a client did not filter by them (type summaries, system presets), so that
	// a client generated from the public documents never meets a value it cannot read.
	Preview     bool
	EntityTypes []oas.NotificationEntityType
	Config      []Field
	// Aliases are the retired names of configuration fields, by the public name they stand for:
	// accepted in requests and configuration documents for one release, translated on input,
	// never answered.
	Aliases  map[string]string
	Payloads []Payload
}

// Field returns the configuration field of the type with that name (a retired alias names its
// public field).
func (t Type) Field(name string) (Field, bool) {
	if public, ok := t.Aliases[name]; ok {
		name = public
	}
	for _, f := range t.Config {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// payloadAliases are the payload type names presets stored before the public ones: "default"
// names a type's first payload type, "raw" Slack's whole-message one.
var payloadAliases = map[string]string{"default": "", "raw": "slack_raw"}

// Payload returns the payload type of the type with that name, compared without regard to case;
// the retired names "default" and "raw" name their public payload types.
func (t Type) Payload(name string) (Payload, bool) {
	if public, ok := payloadAliases[strings.ToLower(name)]; ok {
		if public == "" {
			return t.Payloads[0], true
		}
		name = public
	}
	for _, p := range t.Payloads {
		if strings.EqualFold(p.Name, name) {
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

// defaultPayload is the payload type every connector type has, named after it as clients name
// it (generic_https_default, email_default, slack_default, …).
func defaultPayload(t oas.ConnectorType, own ...Field) Payload {
	return Payload{Name: strings.ToLower(string(t)) + "_default", Fields: rendered(own...)}
}

const (
	notDelivered = " mgmtapi stores and checks connectors of this type but does not send notifications through them."
	deprecated   = " Deprecated: kept from connectors stored before the public fields; it has no public counterpart."
)

// integrationID is the integrationId field of the types that deliver through an outgoing webhook
// of the team, its description followed by note; unless names the deprecated field that lifts its
// requirement.
func integrationID(webhookTypes []string, note string, unless ...string) Field {
	return Field{Name: "integrationId", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, RequiredUnless: unless,
		Integrations: webhookTypes,
		Description:  "The id of the team's outgoing webhook (of type " + strings.Join(webhookTypes, " or ") + ") that says where notifications go." + note}
}

// types is the table of every connector type, in the enumeration's order. The connector-schema
// operation answers from it, connector bodies are checked against it, presets check their message
// fields against it, and a delivery worker reads a connector's fields by its names. The field
// names are those the vendor's public clients send (see docs/decisions.md).
var types = []Type{
	{
		Type: oas.ConnectorTypeSLACK, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			integrationID([]string{"SLACK"}, "", "webhookUrl"),
			{Name: "channel", Kind: oas.ConnectorFieldTypeSTRING, Description: "The channel messages are posted to, e.g. alerts or #alerts."},
			{Name: "fallbackChannel", Kind: oas.ConnectorFieldTypeSTRING, Description: "The channel used when channel's template renders none."},
			{Name: "webhookUrl", Kind: oas.ConnectorFieldTypeURL, Deprecated: true, Sensitive: true,
				Description: "A Slack incoming-webhook URL (it carries the webhook's secret, so it is answered masked) messages are posted to when the connector names no integration." + deprecated},
			{Name: "username", Kind: oas.ConnectorFieldTypeSTRING, Deprecated: true, Description: "A sender name." + deprecated},
		},
		Payloads: []Payload{
			defaultPayload(oas.ConnectorTypeSLACK,
				Field{Name: "footer", Kind: oas.ConnectorFieldTypeSTRING, Description: "A small line under the message."},
			),
			{Name: "slack_raw", Fields: []Field{
				{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Required: true,
					Description: "The whole Slack message (blocks, attachments, text) as a JSON object."},
			}},
		},
	},
	{
		Type: oas.ConnectorTypeGENERICHTTPS, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			{Name: "url", Kind: oas.ConnectorFieldTypeURL, Required: true,
				Description: "The http or https URL the notification is sent to."},
			{Name: "method", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"POST", "PUT"}, Default: "POST",
				Description: "The HTTP method of the request, in any case (sent in upper case)."},
			{Name: "additionalHeaders", Kind: oas.ConnectorFieldTypeKEYVALUEPAIRS,
				Description: "Headers added to every request, as a JSON object of strings."},
			{Name: "additionalBodyFields", Kind: oas.ConnectorFieldTypeJSONOBJECT,
				Description: "Members added to every request's JSON body, as a JSON object."},
		},
		Payloads: []Payload{
			defaultPayload(oas.ConnectorTypeGENERICHTTPS,
				Field{Name: "headers", Kind: oas.ConnectorFieldTypeKEYVALUEPAIRS, Description: "Headers of the request, a JSON object of strings."},
				Field{Name: "body", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The request's whole JSON body; when not set, the body is the object of the rendered fields."},
			),
		},
	},
	{
		Type: oas.ConnectorTypePAGERDUTY, Delivered: true, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "integrationKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The routing key of the PagerDuty Events API v2 integration."},
			{Name: "eventsUrl", Kind: oas.ConnectorFieldTypeURL, Default: "https://events.pagerduty.com/v2/enqueue",
				Description: "The Events API v2 endpoint the events are sent to (an mgmtapi setting, for a proxy or a test receiver)."},
		},
		Payloads: []Payload{
			defaultPayload(oas.ConnectorTypePAGERDUTY,
				Field{Name: "summary", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Description: "The event's summary (at most 1024 characters are sent); the title when not set."},
				Field{Name: "severity", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"critical", "error", "warning", "info"},
					Description: "The event's severity; rendered from the alert's priority when not set."},
				Field{Name: "timestamp", Kind: oas.ConnectorFieldTypeSTRING, Description: "When the event happened, an ISO 8601 time."},
				Field{Name: "source", Kind: oas.ConnectorFieldTypeSTRING, Description: "The affected system."},
				Field{Name: "component", Kind: oas.ConnectorFieldTypeSTRING, Description: "The affected component."},
				Field{Name: "group", Kind: oas.ConnectorFieldTypeSTRING, Description: "A logical grouping of components."},
				Field{Name: "class", Kind: oas.ConnectorFieldTypeSTRING, Description: "The class or type of the event."},
				Field{Name: "customDetails", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "Extra details, a JSON object (the event's custom_details)."},
			),
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
		Payloads: []Payload{defaultPayload(oas.ConnectorTypeIBMEVENTNOTIFICATIONS,
			Field{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The event's data, a JSON object."},
		)},
	},
	{
		Type: oas.ConnectorTypeSERVICENOW, Delivered: true, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "instanceUrl", Kind: oas.ConnectorFieldTypeURL, Required: true,
				Description: "The ServiceNow instance's URL (https). mgmtapi creates one incident per alert triggered or case opened, " +
					"with the Table API (POST {instanceUrl}/api/now/table/incident), the title as short_description, and the " +
					"notification's key as correlation_id; acknowledgements and resolutions are not sent (see the docs)."},
			{Name: "username", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Description: "The integration user (sent with the password as basic credentials)."},
			{Name: "password", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true, Description: "The integration user's password."},
			{Name: "assignmentGroup", Kind: oas.ConnectorFieldTypeSTRING, Deprecated: true, Description: "The group incidents are assigned to." + deprecated},
		},
		Payloads: []Payload{defaultPayload(oas.ConnectorTypeSERVICENOW,
			Field{Name: "impact", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"1", "2", "3"}, Description: "1 high, 2 medium, 3 low."},
			Field{Name: "urgency", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"1", "2", "3"}, Description: "1 high, 2 medium, 3 low."},
		)},
	},
	{
		Type: oas.ConnectorTypeEMAIL, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			{Name: "emailAddresses", Kind: oas.ConnectorFieldTypeARRAYOFSTRINGS, Required: true, Rule: CheckRecipients,
				Description: "The addresses the messages are sent to, a JSON array of 1 to 100 strings in a string (\"[\\\"ops@example.com\\\"]\"; Ops <ops@example.com> also works); a template renders such an array. Messages go through the server's SMTP server (--smtp-url)."},
		},
		Aliases: map[string]string{"recipients": "emailAddresses"},
		Payloads: []Payload{defaultPayload(oas.ConnectorTypeEMAIL,
			Field{Name: "customSubject", Kind: oas.ConnectorFieldTypeSTRING, Description: "The message's subject; the title when not set."},
			Field{Name: "customContent", Kind: oas.ConnectorFieldTypeSTRING, Description: "The message's content, sent as the plain-text body as written (no HTML part is built); the description when not set."},
		)},
	},
	{
		Type: oas.ConnectorTypePAGERDUTYINCIDENTS, Delivered: true, EntityTypes: alertEntities,
		Config: []Field{
			integrationID([]string{"PAGERDUTY"}, " mgmtapi sends PagerDuty Events API v2 events (trigger, acknowledge, resolve under one dedup key) "+
				"with the webhook's serviceKey as the routing key, to the webhook's URL (else PagerDuty's enqueue endpoint); "+
				"the service is then the one that key belongs to. Connectors stored with only the deprecated apiToken send nothing.", "apiToken"),
			{Name: "service", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
				Description: "The id of the PagerDuty service incidents are opened on, e.g. PXXXXXX (stored and answered; the Events API chooses the service by the integration's key)."},
			{Name: "apiToken", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Sensitive: true, Deprecated: true,
				Description: "A PagerDuty REST API token." + deprecated},
			{Name: "fromEmail", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true,
				Description: "The email of the PagerDuty user the incidents are opened as." + deprecated},
		},
		Aliases: map[string]string{"serviceId": "service"},
		Payloads: []Payload{defaultPayload(oas.ConnectorTypePAGERDUTYINCIDENTS,
			Field{Name: "urgency", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"high", "low"},
				Description: "The incident's urgency: high sends the event as critical, low as warning (the service's urgency rules map severities back); the alert's priority when not set."},
		)},
	},
	{
		Type: oas.ConnectorTypeMICROSOFTTEAMS, Delivered: true, EntityTypes: allEntities,
		Config: []Field{
			integrationID([]string{"MS_TEAMS_WORKFLOW", "MICROSOFT_TEAMS"}, "", "webhookUrl"),
			{Name: "teamId", Kind: oas.ConnectorFieldTypeSTRING, Description: "The Microsoft Teams team the cards are posted in."},
			{Name: "channelId", Kind: oas.ConnectorFieldTypeSTRING, Description: "The channel the cards are posted in, e.g. 19:…@thread.tacv2."},
			{Name: "webhookUrl", Kind: oas.ConnectorFieldTypeURL, Deprecated: true, Sensitive: true,
				Description: "A Teams webhook URL (it carries the webhook's secret, so it is answered masked) the cards are posted to when the connector names no integration." + deprecated},
		},
		Payloads: []Payload{defaultPayload(oas.ConnectorTypeMICROSOFTTEAMS)},
	},
	{
		Type: oas.ConnectorTypeEVENTBRIDGE, Delivered: true, EntityTypes: alertEntities,
		Config: []Field{
			integrationID([]string{"AWS_EVENT_BRIDGE"}, " mgmtapi puts one event per notification on the webhook's event bus "+
				"(PutEvents, signed with the server's AWS credentials), as the webhook's own notifications are. Connectors stored "+
				"with only the deprecated eventBusArn send nothing.", "eventBusArn"),
			{Name: "eventBusArn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true,
				Description: "The ARN of the event bus the events are put on." + deprecated},
			{Name: "roleArn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true,
				Description: "The ARN of the role assumed to put events." + deprecated},
			{Name: "source", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true, Description: "The events' source." + deprecated},
			{Name: "detailType", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true, Description: "The events' detail-type." + deprecated},
		},
		Payloads: []Payload{defaultPayload(oas.ConnectorTypeEVENTBRIDGE,
			Field{Name: "detail", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "Members merged into the event's detail, a JSON object (the detail otherwise holds title, text, status, severity, key, time and fields)."},
		)},
	},
	{
		Type: oas.ConnectorTypeINCIDENTIO, Delivered: true, Preview: true, EntityTypes: alertEntities,
		Config: []Field{
			{Name: "apiKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true,
				Description: "An incident.io API key (a preview type). Stored and checked; sending uses the alert source's token, not this key."},
			{Name: "alertEventsUrl", Kind: oas.ConnectorFieldTypeURL, Required: true,
				Description: "The alert source's HTTP endpoint, e.g. https://api.incident.io/v2/alert_events/http/<source id>: " +
					"mgmtapi posts each notification there as an alert event (title, description, status firing or resolved, deduplication_key, metadata)."},
			{Name: "alertSourceToken", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true,
				Description: "The alert source's token, sent as a bearer token."},
		},
		Payloads: []Payload{defaultPayload(oas.ConnectorTypeINCIDENTIO)},
	},
}

func init() {
	for i := range types {
		for j := range types[i].Config {
			f := &types[i].Config[j]
			f.AllowOverrides = !f.Sensitive && !f.Deprecated
		}
	}
}

// PublicFieldName returns the public name of a configuration field of the connector type: name
// itself, or the public field a retired alias stands for (Type.Aliases).
func PublicFieldName(t oas.ConnectorType, name string) string {
	if ty, ok := TypeOf(t); ok {
		if public, ok := ty.Aliases[name]; ok {
			return public
		}
	}
	return name
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
	if len(f.AllowedValues) > 0 && !slices.ContainsFunc(f.AllowedValues, func(a string) bool { return strings.EqualFold(a, v) }) {
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

// CheckRecipients is the rule of an EMAIL connector's emailAddresses, stored or rendered from a
// template: a JSON array of strings that delivery.ParseRecipients accepts (the rule the delivery
// checks again when it is enqueued).
func CheckRecipients(v string) error {
	_, err := Recipients(v)
	return err
}

// Recipients reads an EMAIL connector's emailAddresses value (see CheckRecipients) into its bare
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

// CheckPayloadType checks that payload names a payload type of the connector type ("" names its
// first; names are compared without regard to case, and the retired "default" and "raw" name
// their public payload types). A connector type that is UNSPECIFIED checks nothing. The error is
// the rule broken, to follow the field's path in a message.
func CheckPayloadType(c oas.ConnectorType, payload string) error {
	ty, ok := TypeOf(c)
	if !ok || payload == "" {
		return nil
	}
	if _, ok := ty.Payload(payload); !ok {
		return fmt.Errorf("%q is not a payload type of %s connectors (%s)", payload, c, strings.Join(payloadNames(ty), ", "))
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
	if err := CheckPayloadType(c, payload); err != nil {
		return fmt.Errorf("payload type %w", err)
	}
	p := ty.Payloads[0]
	if payload != "" {
		p, _ = ty.Payload(payload)
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
