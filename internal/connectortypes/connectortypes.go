// Package connectortypes holds the notification center's connector types: for each, in one file,
// its configuration fields, the payload types and message fields its presets may set, how a
// notification becomes what it sends (Compose), the request body its deliveries carry and which
// answers are worth retrying. The types are registered in one table (kinds, below): adding a type
// is one file and one line there.
//
// The connectors area checks connector bodies against the table and answers the connector schema
// from it; presets check their message fields against it; internal/messages composes through it;
// the delivery worker builds each stored delivery's body through it. The outgoing webhook types
// that connectors may deliver through have their own table, in internal/notifiers.
package connectortypes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
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
	// the team, of one of these types.
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

// Kind is one connector type: its configuration fields, the payload types of its messages, the
// entity types it carries notifications about, and how mgmtapi delivers through it.
type Kind struct {
	Type oas.ConnectorType
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
	// Sender delivers it; nil for a type mgmtapi stores and checks but sends nothing through.
	Sender Sender
	// Record is what a stored delivery of the type holds besides its fields, for the types whose
	// deliveries the outbox stores in the type's own format (Format, below).
	Record RecordShape
}

// RecordShape is what a stored delivery of a connector type holds besides its fields: the
// outbox checks a delivery against it (CheckRecord) before it stores it, whoever composed it
// (the routing, or the operator's direct delivery).
type RecordShape struct {
	// Methods are the HTTP methods a delivery may use, compared without regard to case; POST
	// alone when empty.
	Methods []string
	// Headers says that a delivery may carry headers of its own (a generic webhook's, a
	// service's credentials).
	Headers bool
	// Authorization says that a delivery must carry an Authorization header (the service's
	// credentials).
	Authorization bool
	// NoURL says that a delivery goes nowhere by URL (EMAIL: its recipients are fields.to).
	NoURL bool
	// DefaultURL is the URL of a delivery that names none; the URL is required when empty
	// (and NoURL is false).
	DefaultURL string
	// RoutingKey says that a delivery must carry a routing key (PagerDuty's events); no other
	// type's may.
	RoutingKey bool
	// DedupKey says that a delivery carries a deduplication key: mgmtapi's own for its entity
	// when none was set, at most 255 characters.
	DedupKey bool
}

// Sender is how a connector type turns a notification into what it sends.
type Sender interface {
	// Compose maps the preset's message fields, rendered against the entity, and the connector's
	// configuration onto what one notification sends. The error names what failed (a connector
	// field whose template does not render or breaks its rule, a message field whose rendering
	// is not what the type needs), never quoting a secret.
	Compose(c Config, m Message, entity map[string]any) (Outgoing, error)
}

// Message is a preset's message for one notification: the payload type it chose ("" for the
// type's first) and its message fields rendered against the entity, by name.
type Message struct {
	PayloadType string
	Fields      map[string]string
}

// HTTPSender is a Sender whose deliveries the delivery worker sends as HTTP requests: it builds
// each stored delivery's body (at enqueue, to check it, and at every attempt) and says which
// answers to retry. EMAIL deliveries go through the SMTP server and EVENTBRIDGE ones through their
// outgoing webhook (internal/notifiers): those types are Senders only.
type HTTPSender interface {
	Sender
	// Body is the JSON body of r in the receiver's own format; the error names the delivery field
	// that is missing or wrong.
	Body(r Record) ([]byte, error)
	// Retry reports whether an answer with this HTTP status may succeed when sent again.
	Retry(status int) bool
}

// RequestPreparer is an HTTPSender whose request for a record depends on what the receiver holds
// (ServiceNow's resolution updates the incident its trigger created, found by its correlation
// id): Prepare may send requests of its own through client, with req's headers, and rewrites
// req's method and URL from their answers. Its error says what was not found; retry says that
// trying again later may succeed.
type RequestPreparer interface {
	Prepare(ctx context.Context, client *http.Client, r Record, req *http.Request) (retry bool, err error)
}

// retryOverloaded is the retry rule of every HTTP type today: 429 Too Many Requests and 5xx
// answers are retried (the receiver was busy or broken), other answers are final.
type retryOverloaded struct{}

// Retry retries 429 and 5xx answers.
func (retryOverloaded) Retry(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// Config is a connector as its type's Compose reads it. Values are secrets: never log them.
type Config struct {
	// Fields are the stored configuration values by field name (each field not sent holding its
	// default).
	Fields map[string]string
	// Templates are the connector's templates for the notification's entity type, by field name.
	Templates map[string]string
	// Integration is the outgoing webhook the connector's integrationId names, when it names one
	// and it was read; nil otherwise.
	Integration *Integration
	kind        Kind
	// evaluation is the context the connector's templates render under (notifyexpr's pacing
	// and offloading): Compose's.
	evaluation context.Context
}

// Integration is an outgoing webhook of a team as a connector delivers through it: its id, its
// type (SLACK, MS_TEAMS_WORKFLOW, MICROSOFT_TEAMS, AWS_EVENT_BRIDGE, PAGERDUTY, …), the URL it
// sends to and its other settings by name. URL and Settings are secrets: never log them.
type Integration struct {
	ID, Type, URL string
	Settings      map[string]string
}

// Value is the connector's value of the configuration field name for the entity: its template
// for the entity's type rendered, without the spaces and line breaks around it (templates are
// often written over several lines), when it has one, else the value stored ("" for none). A
// rendered value must meet the field's rule.
//
// Errors: the template does not render, or its rendering breaks the field's rule (named, never
// quoting the value).
func (c Config) Value(name string, entity map[string]any) (string, error) {
	if _, templated := c.Templates[name]; !templated {
		return c.Fields[name], nil
	}
	out, err := c.rawValue(name, entity)
	if err != nil {
		return "", err
	}
	out = strings.TrimSpace(out)
	if f, ok := c.kind.Field(name); ok {
		if err := CheckValue(f, out); err != nil {
			return "", fmt.Errorf("connector field %s: its rendering %v", name, err)
		}
	}
	return out, nil
}

// rawValue is the connector's value of the field for the entity, as Value, without the field's
// rule checked nor spaces trimmed: JSON documents whose rule the caller checks as it reads them.
func (c Config) rawValue(name string, entity map[string]any) (string, error) {
	t, ok := c.Templates[name]
	if !ok {
		return c.Fields[name], nil
	}
	ctx := c.evaluation
	if ctx == nil { // a Config not made by Compose
		ctx = context.Background()
	}
	out, err := notifyexpr.RenderContext(ctx, t, entity)
	if err != nil {
		return "", fmt.Errorf("connector field %s: %w", name, err)
	}
	return out, nil
}

// Outgoing is what one notification through a connector sends.
type Outgoing struct {
	// Format is the connector type whose deliveries carry it: the connector's own type, or the
	// one whose wire format it borrows (PAGERDUTY_INCIDENTS sends PAGERDUTY events). Empty when
	// Webhook is set.
	Format oas.ConnectorType
	// URL, RoutingKey, Method and Headers say where and how it is sent; secrets, never logged.
	URL, RoutingKey, Method string
	Headers                 map[string]string
	// Fields are the delivery's fields, in the Format's terms (its Body reads them).
	Fields map[string]any
	// Webhook is set when the notification goes through the connector's outgoing webhook (an
	// EVENTBRIDGE connector's AWS_EVENT_BRIDGE webhook), which renders it in its own format.
	Webhook *WebhookMessage
}

// WebhookMessage is a notification as an outgoing webhook type renders it: Type, URL and
// Settings are the webhook's (Settings a secret), the rest what the notification says.
type WebhookMessage struct {
	Type, URL                     string
	Settings                      map[string]string
	Title, Text, Status, Severity string
	Fields                        map[string]string
}

// Record is a stored delivery as its type's Body reads it.
type Record struct {
	// Fields are the delivery's fields, as Compose (or the operator's delivery) set them.
	Fields map[string]any
	// RoutingKey and DedupKey are PagerDuty's routing key and every type's deduplication key.
	RoutingKey, DedupKey string
	// Event is what happened: triggered, acknowledged, resolved, opened, changed or commented.
	Event string
	// EntityType and EntityID name what the delivery is about.
	EntityType, EntityID string
}

// StoredDelivery is a delivery as CheckRecord reads it and completes it.
type StoredDelivery struct {
	TeamID               int64
	URL, Method          string
	Headers              map[string]string
	RoutingKey, DedupKey string
	EntityType, EntityID string
}

// CheckRecord checks d against the shape of the connector type t's deliveries and fills the
// defaults the shape gives (the URL, the deduplication key). The error names the delivery field
// and the rule, never quoting a secret.
func CheckRecord(t oas.ConnectorType, d *StoredDelivery) error {
	kind, ok := Lookup(t)
	if !ok || kind.Sender == nil {
		return fmt.Errorf("delivery connectorType: %q is not delivered by mgmtapi", t)
	}
	shape := kind.Record
	methods := shape.Methods
	if len(methods) == 0 {
		methods = []string{http.MethodPost}
	}
	if !slices.ContainsFunc(methods, func(m string) bool { return strings.EqualFold(m, d.Method) }) {
		return fmt.Errorf("delivery method: %s deliveries must be %s, not %q", t, strings.Join(methods, " or "), d.Method)
	}
	if len(d.Headers) > 0 && !shape.Headers {
		var own []string
		for _, k := range kinds {
			if k.Record.Headers {
				own = append(own, string(k.Type))
			}
		}
		return fmt.Errorf("delivery headers: %s deliveries carry none of their own (%s ones do)", t, strings.Join(own, ", "))
	}
	if shape.Authorization && headerValue(d.Headers, "Authorization") == "" {
		return fmt.Errorf("delivery headers: Authorization is required for %s (its credentials)", t)
	}
	switch {
	case shape.RoutingKey && d.RoutingKey == "":
		return fmt.Errorf("delivery routingKey: required for %s", t)
	case !shape.RoutingKey && d.RoutingKey != "":
		return fmt.Errorf("delivery routingKey: %s deliveries have none", t)
	}
	if shape.NoURL {
		if d.URL != "" {
			return fmt.Errorf("delivery url: %s deliveries go to no URL", t)
		}
	} else {
		if d.URL == "" {
			d.URL = shape.DefaultURL
		}
		if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("delivery url: must be an absolute http or https URL")
		}
	}
	if shape.DedupKey {
		if d.DedupKey == "" {
			d.DedupKey = fmt.Sprintf("mgmtapi/%d/%s/%s", d.TeamID, d.EntityType, d.EntityID)
		}
		if len(d.DedupKey) > 255 {
			return fmt.Errorf("delivery dedupKey: at most 255 characters, not %d", len(d.DedupKey))
		}
	}
	return nil
}

// headerValue is the value of the header name in headers, whatever the case of its key.
func headerValue(headers map[string]string, name string) string {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// The events a Body tells apart.
const (
	eventAcknowledged = "acknowledged"
	eventResolved     = "resolved"
)

// Mask is the value a sensitive field is answered with. Sent back in a replace, it stands for the
// value stored.
const Mask = "********"

// Field returns the configuration field of the type with that name (a retired alias names its
// public field).
func (k Kind) Field(name string) (Field, bool) {
	if public, ok := k.Aliases[name]; ok {
		name = public
	}
	for _, f := range k.Config {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// EventFilter is a Sender that sends only some of the events of an entity.
type EventFilter interface {
	// Sends reports whether the event (triggered, acknowledged, resolved, opened, changed,
	// commented) is sent.
	Sends(event string) bool
}

// Sends reports whether connectors of the type send the event: a type not delivered sends none,
// an EventFilter the events it says, every other type all of them.
func (k Kind) Sends(event string) bool {
	if k.Sender == nil {
		return false
	}
	if f, ok := k.Sender.(EventFilter); ok {
		return f.Sends(event)
	}
	return true
}

// TestMarker is a Sender whose deliveries can be marked as a test (the notification-center testing
// operations send them), so that an on-call channel never takes one for an outage: its title or
// subject starts with TestPrefix and its text carries TestNotice, where a person reads them.
type TestMarker interface {
	// MarkTest rewrites a delivery's fields (a copy: the caller's are never changed) as a test's.
	MarkTest(fields map[string]any)
}

// What a test notification says.
const (
	TestPrefix = "[TEST] "
	TestNotice = "This is a test notification sent to check the connector; it reports no real alert or case."
)

// MarkTest returns a delivery's fields, of the type whose wire format sends it, marked as a
// test's (a copy); the fields as they are for a type that is no TestMarker.
func (k Kind) MarkTest(fields map[string]any) map[string]any {
	f := maps.Clone(fields)
	if f == nil {
		f = map[string]any{}
	}
	if m, ok := k.Sender.(TestMarker); ok {
		m.MarkTest(f)
	}
	return f
}

// prefixTest makes the string field key start with TestPrefix.
func prefixTest(f map[string]any, key string) {
	s, _ := f[key].(string)
	if !strings.HasPrefix(s, TestPrefix) {
		f[key] = TestPrefix + s
	}
}

// noticeTest adds TestNotice to the string field key: first, or last.
func noticeTest(f map[string]any, key string, first bool) {
	s, _ := f[key].(string)
	switch {
	case s == "":
		f[key] = TestNotice
	case first:
		f[key] = TestNotice + "\n\n" + s
	default:
		f[key] = s + "\n\n" + TestNotice
	}
}

// Delivered reports whether mgmtapi sends notifications through connectors of the type.
func (k Kind) Delivered() bool { return k.Sender != nil }

// Compose is the type's Sender's Compose for a connector of the type: its stored fields, its
// templates for the entity's type and its integration (nil for none). The templates render
// under ctx (see notifyexpr.RenderContext).
//
// Errors: ErrNotDelivered for a type mgmtapi does not send through; those of the Sender.
func (k Kind) Compose(ctx context.Context, fields, templates map[string]string, integration *Integration, m Message, entity map[string]any) (Outgoing, error) {
	if k.Sender == nil {
		return Outgoing{}, ErrNotDelivered
	}
	out, err := k.Sender.Compose(Config{Fields: fields, Templates: templates, Integration: integration, kind: k, evaluation: ctx}, m, entity)
	if err == nil && out.Format == "" && out.Webhook == nil {
		out.Format = k.Type
	}
	return out, err
}

// ErrNotDelivered is Compose's answer for a connector of a type mgmtapi stores but does not send
// through.
var ErrNotDelivered = fmt.Errorf("mgmtapi does not deliver through connectors of this type")

// payloadAliases are the payload type names presets stored before the public ones: "default"
// names a type's first payload type, "raw" Slack's whole-message one.
var payloadAliases = map[string]string{"default": "", "raw": "slack_raw"}

// Payload returns the payload type of the type with that name, compared without regard to case;
// the retired names "default" and "raw" name their public payload types.
func (k Kind) Payload(name string) (Payload, bool) {
	if public, ok := payloadAliases[strings.ToLower(name)]; ok {
		if public == "" {
			return k.Payloads[0], true
		}
		name = public
	}
	for _, p := range k.Payloads {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Payload{}, false
}

// Supports reports whether connectors of the type carry notifications about the entity type; an
// UNSPECIFIED entity type is supported by every type.
func (k Kind) Supports(e oas.NotificationEntityType) bool {
	return e == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED || slices.Contains(k.EntityTypes, e)
}

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
	deprecated = " Deprecated: kept from connectors stored before the public fields; it has no public counterpart."
)

// integrationID is the integrationId field of the types that deliver through an outgoing webhook
// of the team, its description followed by note; unless names the deprecated field that lifts its
// requirement.
func integrationID(webhookTypes []string, note string, unless ...string) Field {
	return Field{Name: "integrationId", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, RequiredUnless: unless,
		Integrations: webhookTypes,
		Description:  "The id of the team's outgoing webhook (of type " + strings.Join(webhookTypes, " or ") + ") that says where notifications go." + note}
}

// kinds is the table of every connector type, in the enumeration's order; each is defined in its
// own file. The field names are those the vendor's public clients send (see docs/decisions.md).
var kinds = []Kind{
	slackKind,
	genericHTTPSKind,
	pagerDutyKind,
	ibmEventNotificationsKind,
	serviceNowKind,
	emailKind,
	pagerDutyIncidentsKind,
	microsoftTeamsKind,
	eventBridgeKind,
	incidentIOKind,
}

func init() {
	for i := range kinds {
		for j := range kinds[i].Config {
			f := &kinds[i].Config[j]
			f.AllowOverrides = !f.Sensitive && !f.Deprecated
		}
	}
}

// PublicFieldName returns the public name of a configuration field of the connector type: name
// itself, or the public field a retired alias stands for (Kind.Aliases).
func PublicFieldName(t oas.ConnectorType, name string) string {
	if k, ok := Lookup(t); ok {
		if public, ok := k.Aliases[name]; ok {
			return public
		}
	}
	return name
}

// Kinds returns every connector type, in the enumeration's order. The slices are shared: callers
// must not change them.
func Kinds() []Kind { return kinds }

// Lookup returns the connector type t; false for CONNECTOR_TYPE_UNSPECIFIED and unknown values.
func Lookup(t oas.ConnectorType) (Kind, bool) {
	for _, k := range kinds {
		if k.Type == t {
			return k, true
		}
	}
	return Kind{}, false
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
			return fmt.Errorf(`must be a JSON array of strings written in a string, e.g. "[\"ops@example.com\"]"`)
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
	k, ok := Lookup(c)
	if !ok || payload == "" {
		return nil
	}
	if _, ok := k.Payload(payload); !ok {
		return fmt.Errorf("%q is not a payload type of %s connectors (%s)", payload, c, strings.Join(payloadNames(k), ", "))
	}
	return nil
}

// CheckMessageField checks that a preset's message field fieldName belongs to the payload type of
// the connector type (payload "" meaning the type's first payload type). A connector type that is
// UNSPECIFIED checks nothing: such a preset names no connector type.
func CheckMessageField(c oas.ConnectorType, payload, fieldName string) error {
	k, ok := Lookup(c)
	if !ok {
		return nil
	}
	if err := CheckPayloadType(c, payload); err != nil {
		return fmt.Errorf("payload type %w", err)
	}
	p := k.Payloads[0]
	if payload != "" {
		p, _ = k.Payload(payload)
	}
	for _, f := range p.Fields {
		if f.Name == fieldName {
			return nil
		}
	}
	return fmt.Errorf("%q is not a message field of %s payload type %s (%s)", fieldName, c, p.Name, strings.Join(fieldNames(p.Fields), ", "))
}

func payloadNames(k Kind) []string {
	out := make([]string, len(k.Payloads))
	for i, p := range k.Payloads {
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

// Schema is the connector-schema answer of the type.
func (k Kind) Schema() oas.ConnectorSchema {
	out := oas.ConnectorSchema{
		Type:                  k.Type,
		ConnectorConfigSchema: oas.ConnectorConfigSchema{Fields: []oas.ConnectorConfigSchemaField{}},
		MessageConfigSchemas:  []oas.MessageConfigSchema{},
		SupportedPayloadTypes: payloadNames(k),
	}
	for _, f := range k.Config {
		s := oas.ConnectorConfigSchemaField{
			FieldName: f.Name, Description: f.Description, FieldType: f.Kind, Required: f.Required,
			AllowOverrides: f.AllowOverrides, AllowedValues: append([]string{}, f.AllowedValues...),
		}
		if f.Default != "" {
			s.Default = oas.NewOptString(f.Default)
		}
		out.ConnectorConfigSchema.Fields = append(out.ConnectorConfigSchema.Fields, s)
	}
	for _, p := range k.Payloads {
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

// text reads a string field of a delivery; other values are not text.
func text(fields map[string]any, key string) string {
	s, _ := fields[key].(string)
	return s
}

// orEmpty is a rendered title, or "(empty notification)" when it is blank: the types whose
// receivers require a title get one.
func orEmpty(title string) string {
	if strings.TrimSpace(title) == "" {
		return "(empty notification)"
	}
	return title
}

// jsonObject parses a rendered JSON message field.
func jsonObject(name, doc string) (map[string]any, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("preset field %s: its rendering is not a JSON object", name)
	}
	return obj, nil
}

// alertStatus is what the entity's notification says happened, resolved when its alert's (or
// case's) status is Resolved and triggered otherwise, and its severity in lower case.
func alertStatus(entity map[string]any) (status, severity string) {
	status = "triggered"
	alert, _ := entity["alert"].(map[string]any)
	if alert == nil {
		alert, _ = entity["case"].(map[string]any)
	}
	if s, _ := alert["status"].(string); strings.EqualFold(s, notifyexpr.AlertResolved) {
		status = "resolved"
	}
	severity, _ = alert["severity"].(string)
	return status, strings.ToLower(severity)
}

// labelsOf are the entity's labels (an alert's, a case's) as strings, never nil.
func labelsOf(entity map[string]any) map[string]string {
	out := map[string]string{}
	for _, path := range [][2]string{{"alert", "labels"}, {"case", "labels"}} {
		o, _ := entity[path[0]].(map[string]any)
		switch ls := o[path[1]].(type) {
		case map[string]string:
			for k, v := range ls {
				out[k] = v
			}
		case map[string]any:
			for k, v := range ls {
				if s, ok := v.(string); ok {
					out[k] = s
				}
			}
		}
	}
	return out
}

// CutBytes keeps at most n bytes of s, whole runes.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ConfigNames are the names of the type's configuration fields, joined for an error message.
func (k Kind) ConfigNames() string { return strings.Join(fieldNames(k.Config), ", ") }

// IntegrationID is the integration a connector of the type, with these stored fields and these
// templates of the entity's type, delivers through for the entity: its integrationId template
// rendered (trimmed, and checked against the field's rule) when it has one, else its
// integrationId; "" for a type without the field.
//
// Errors: the template does not render, or its rendering breaks the field's rule.
func (k Kind) IntegrationID(fields, templates map[string]string, entity map[string]any) (string, error) {
	if _, ok := k.Field("integrationId"); !ok {
		return "", nil
	}
	return Config{Fields: fields, Templates: templates, kind: k}.Value("integrationId", entity)
}
