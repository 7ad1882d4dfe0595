// Package messages turns a notification's entity, a connector and a preset into what the
// connector sends: the preset's message templates rendered against the entity (notifyexpr), then
// mapped onto the fields of the connector type's delivery (a Slack message's text, a PagerDuty
// event's summary and severity, a Teams card's title and text, a generic webhook's JSON body, an
// email's recipients, subject and text).
// Routing (internal/routers) and the testing operations (internal/notifytesting) both compose
// through it, so a test message is what a real notification would be.
package messages

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/presets"
)

// Message is what one notification to one connector sends.
type Message struct {
	Type delivery.ConnectorType
	// URL, RoutingKey, Method and Headers are the connector's destination (see delivery.Delivery);
	// secrets, never to be logged.
	URL, RoutingKey, Method string
	Headers                 map[string]string
	// Fields are the delivery's fields, in the connector type's terms (delivery.Delivery.Fields).
	Fields map[string]any
	// Webhook, WebhookType and WebhookSettings are set when Type is delivery.Webhook (an
	// EVENTBRIDGE connector, sent through the AWS_EVENT_BRIDGE outgoing webhook it names): the
	// message as the webhook types render it (its Key and Time are the caller's to set), the
	// webhook's type and its settings (a secret), whose detail is the preset's rendered detail
	// when it renders one.
	Webhook         *notifiers.Message
	WebhookType     string
	WebhookSettings map[string]string
}

// ErrNotDelivered is Compose's answer for a connector of a type mgmtapi stores but does not send
// through.
var ErrNotDelivered = errors.New("mgmtapi does not deliver through connectors of this type")

// maxParents bounds the preset chain a message walks (a preset, its parent, …).
const maxParents = 8

// Preset returns the preset a route's target renders with, read in q: presetID when the target
// names one, else the team's default for the connector type and entity type, else nil (the
// message is then rendered with the built-in fallback templates).
//
// Errors: db.ErrNotFound when presetID names no preset of the team; a database error.
func Preset(ctx context.Context, q db.Querier, teamID int64, presetID string, c oas.ConnectorType, e oas.NotificationEntityType) (*oas.Preset, error) {
	if presetID != "" {
		p, err := presets.Load(ctx, q, teamID, presetID)
		if err != nil {
			return nil, err
		}
		return &p, nil
	}
	p, ok, err := presets.Default(ctx, q, teamID, c, e)
	if err != nil || !ok {
		return nil, err
	}
	return &p, nil
}

// Compose renders preset (nil: the fallback templates) against entity and maps the result onto
// connector c's delivery. A preset's parents are read in q (a child's templates win field by
// field). The error names what failed: a template that does not render (its field and the
// engine's message), a JSON field whose rendering is not a JSON object, a connector of a type
// mgmtapi does not deliver through (ErrNotDelivered).
func Compose(ctx context.Context, q db.Querier, teamID int64, c connectors.Connector, preset *oas.Preset, entity map[string]any) (Message, error) {
	ty, ok := connectors.TypeOf(c.Type)
	if !ok || !ty.Delivered {
		return Message{}, ErrNotDelivered
	}
	url, key, _ := c.Destination()
	// A template of the entity type wins over the connector's value: a generic URL that depends
	// on the alert's status, a PagerDuty key per priority.
	c.Fields = maps.Clone(c.Fields) // genericFields writes rendered values; the caller's stay
	switch c.Type {
	case oas.ConnectorTypeGENERICHTTPS:
		v, err := configValue(ty, c, "url", entity)
		if err != nil {
			return Message{}, err
		}
		url = v
	case oas.ConnectorTypePAGERDUTY:
		v, err := configValue(ty, c, "integrationKey", entity)
		if err != nil {
			return Message{}, err
		}
		key = v
		if v, err = configValue(ty, c, "eventsUrl", entity); err != nil {
			return Message{}, err
		} else if v != "" {
			url = v
		}
	}
	m := Message{Type: delivery.ConnectorType(c.Type), URL: url, RoutingKey: key}
	switch c.Type {
	case oas.ConnectorTypeSERVICENOW:
		instance, err := configValue(ty, c, "instanceUrl", entity)
		if err != nil {
			return Message{}, err
		}
		user, err := configValue(ty, c, "username", entity)
		if err != nil {
			return Message{}, err
		}
		m.URL = strings.TrimRight(instance, "/") + "/api/now/table/incident"
		m.Headers = map[string]string{"Accept": "application/json",
			"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+c.Fields["password"]))}
	case oas.ConnectorTypeINCIDENTIO:
		v, err := configValue(ty, c, "alertEventsUrl", entity)
		if err != nil {
			return Message{}, err
		}
		m.URL = v
		m.Headers = map[string]string{"Authorization": "Bearer " + c.Fields["alertSourceToken"]}
	case oas.ConnectorTypeEVENTBRIDGE:
		if c.Integration == nil {
			return Message{}, errors.New("connector field integrationId: the EVENTBRIDGE connector names no resolved outgoing webhook (one stored with only eventBusArn sends nothing)")
		}
		m.Type, m.URL, m.WebhookType = delivery.Webhook, c.Integration.URL, c.Integration.Type
		m.WebhookSettings = maps.Clone(c.Integration.Settings)
	}
	if c.Type == oas.ConnectorTypePAGERDUTYINCIDENTS {
		// Sent as Events API v2 events through the PAGERDUTY webhook it names (its serviceKey
		// routes them), so acknowledge and resolve follow the trigger under one dedup key.
		m.Type = delivery.PagerDuty
		if m.URL == "" {
			m.URL = delivery.DefaultPagerDutyURL
		}
	}
	templates, payload, err := templatesOf(ctx, q, teamID, preset, entitySubType(entity))
	if err != nil {
		return Message{}, err
	}
	rendered := make(map[string]string, len(templates))
	for _, name := range sortedKeys(templates) {
		out, err := notifyexpr.Render(templates[name], entity)
		if err != nil {
			return Message{}, fmt.Errorf("preset field %s: %w", name, err)
		}
		rendered[name] = out
	}
	switch c.Type {
	case oas.ConnectorTypeSLACK:
		m.Fields, err = slackFields(payload, rendered)
		if err == nil {
			err = slackChannel(ty, c, m.Fields, entity)
		}
	case oas.ConnectorTypeGENERICHTTPS:
		err = genericFields(&m, c, rendered, entity)
	case oas.ConnectorTypePAGERDUTY:
		m.Fields, err = pagerDutyFields(rendered, entity)
	case oas.ConnectorTypePAGERDUTYINCIDENTS:
		switch strings.ToLower(strings.TrimSpace(rendered["urgency"])) {
		case "high":
			rendered["severity"] = "critical"
		case "low":
			rendered["severity"] = "warning"
		}
		m.Fields, err = pagerDutyFields(rendered, entity)
	case oas.ConnectorTypeMICROSOFTTEAMS:
		m.Fields = map[string]any{"title": rendered["title"], "text": rendered["description"]}
		if rendered["title"] == "" && rendered["description"] == "" {
			m.Fields["title"] = "(empty notification)"
		}
	case oas.ConnectorTypeEMAIL:
		m.Fields, err = emailFields(c, rendered, entity)
	case oas.ConnectorTypeSERVICENOW:
		m.Fields = map[string]any{"short_description": orEmpty(rendered["title"]), "description": rendered["description"]}
		for _, k := range []string{"impact", "urgency"} {
			if v := strings.TrimSpace(rendered[k]); v != "" {
				m.Fields[k] = v
			}
		}
	case oas.ConnectorTypeINCIDENTIO:
		m.Fields = map[string]any{"title": orEmpty(rendered["title"]), "description": rendered["description"],
			"metadata": labelsOf(entity)}
	case oas.ConnectorTypeEVENTBRIDGE:
		err = eventBridgeMessage(&m, rendered, entity)
	}
	return m, err
}

// orEmpty is a rendered title, or "(empty notification)" when it is blank: the types whose
// receivers require a title get one.
func orEmpty(title string) string {
	if strings.TrimSpace(title) == "" {
		return "(empty notification)"
	}
	return title
}

// labelsOf are the entity's labels (an alert's, a case's) as strings, never nil.
func labelsOf(entity map[string]any) map[string]string {
	out := map[string]string{}
	for _, path := range [][2]string{{"alert", "labels"}, {"case", "labels"}} {
		o, _ := entity[path[0]].(map[string]any)
		switch ls := o[path[1]].(type) {
		case map[string]string:
			maps.Copy(out, ls)
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

// eventBridgeMessage sets m's webhook message: the rendered title and description, the alert's
// severity, resolved when the entity's status is Resolved (else triggered), the entity's labels
// as fields; a rendered detail (a JSON object) becomes the settings' detail, which the
// AWS_EVENT_BRIDGE delivery merges into the event's detail.
func eventBridgeMessage(m *Message, rendered map[string]string, entity map[string]any) error {
	status := notifiers.Triggered
	alert, _ := entity["alert"].(map[string]any)
	if alert == nil {
		alert, _ = entity["case"].(map[string]any)
	}
	if s, _ := alert["status"].(string); strings.EqualFold(s, "Resolved") {
		status = notifiers.Resolved
	}
	severity, _ := alert["severity"].(string)
	m.Webhook = &notifiers.Message{Title: orEmpty(rendered["title"]), Text: rendered["description"], Status: status,
		Severity: strings.ToLower(severity), Fields: labelsOf(entity)}
	if d := strings.TrimSpace(rendered["detail"]); d != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(d), &obj); err != nil || obj == nil {
			return errors.New("preset field detail: its rendering must be a JSON object")
		}
		if m.WebhookSettings == nil {
			m.WebhookSettings = map[string]string{}
		}
		m.WebhookSettings["detail"] = d
	}
	return nil
}

// IntegrationID is the integration connector c delivers through for the entity: its
// integrationId template for the entity's type rendered (trimmed, and checked against the
// field's rule), when it has one, else its integrationId ("" for none). Set it as
// c.Fields["integrationId"] before Connector.Resolve.
//
// Errors: the template does not render, or its rendering breaks the field's rule.
func IntegrationID(c connectors.Connector, entity map[string]any) (string, error) {
	ty, ok := connectors.TypeOf(c.Type)
	if !ok {
		return c.Fields["integrationId"], nil
	}
	if _, ok := ty.Field("integrationId"); !ok {
		return "", nil
	}
	return configValue(ty, c, "integrationId", entity)
}

// emailFields: the addresses (emailAddresses, or the connector's template for the entity type
// when it has one, rendered to a JSON array of addresses), the customSubject (the title when not
// set) as the subject and the customContent (the description when not set) as the text.
func emailFields(c connectors.Connector, r map[string]string, entity map[string]any) (map[string]any, error) {
	addresses := c.Fields["emailAddresses"]
	if t, ok := c.Overrides[entityType(entity)]["emailAddresses"]; ok {
		out, err := notifyexpr.Render(t, entity)
		if err != nil {
			return nil, fmt.Errorf("connector field emailAddresses: %w", err)
		}
		addresses = out
	}
	to, err := connectors.Recipients(addresses)
	if err != nil {
		return nil, fmt.Errorf("connector field emailAddresses: %w", err)
	}
	subject, text := r["customSubject"], r["customContent"]
	if strings.TrimSpace(subject) == "" {
		subject = r["title"]
	}
	if strings.TrimSpace(text) == "" {
		text = r["description"]
	}
	return map[string]any{"to": to, "subject": subject, "text": text}, nil
}

// configValue is connector c's value of the configuration field name for the entity: its template
// for the entity's type rendered, without the spaces and line breaks around it (templates are
// often written over several lines), when it has one, else the value stored ("" for none). A
// rendered value must meet the field's rule.
//
// Errors: the template does not render, or its rendering breaks the field's rule (named, never
// quoting the value).
func configValue(ty connectors.Type, c connectors.Connector, name string, entity map[string]any) (string, error) {
	t, ok := c.Overrides[entityType(entity)][name]
	if !ok {
		return c.Fields[name], nil
	}
	out, err := notifyexpr.Render(t, entity)
	if err != nil {
		return "", fmt.Errorf("connector field %s: %w", name, err)
	}
	out = strings.TrimSpace(out)
	if f, ok := ty.Field(name); ok {
		if err := connectors.CheckValue(f, out); err != nil {
			return "", fmt.Errorf("connector field %s: its rendering %v", name, err)
		}
	}
	return out, nil
}

// slackChannel sets the message's channel: the connector's channel (its template for the entity
// type when it has one), else its fallbackChannel; none when neither is set.
func slackChannel(ty connectors.Type, c connectors.Connector, fields map[string]any, entity map[string]any) error {
	ch, err := configValue(ty, c, "channel", entity)
	if err != nil {
		return err
	}
	if ch == "" {
		if ch, err = configValue(ty, c, "fallbackChannel", entity); err != nil {
			return err
		}
	}
	if _, set := fields["channel"]; !set && ch != "" { // a raw message's own channel wins
		fields["channel"] = ch
	}
	return nil
}

// Fallback are the templates of a message whose preset does not render: the entity's headline,
// so the people on call are still told, and the reason in the text. The connector's own field
// values are used, not its templates per entity type (which may be what did not render).
func Fallback(c connectors.Connector, entity map[string]any, reason error) (Message, error) {
	c.Overrides = nil
	fallback := &oas.Preset{ConfigOverrides: []oas.PresetConfigOverride{{MessageConfig: oas.NewOptPresetMessageConfig(oas.PresetMessageConfig{
		Fields: []oas.PresetMessageField{
			{FieldName: oas.NewOptString("title"), Template: oas.NewOptString(defaultTitle)},
			{FieldName: oas.NewOptString("description"), Template: oas.NewOptString("The notification's preset could not be rendered: " +
				escapeTemplate(reason.Error()))},
		},
	})}}}
	return Compose(context.Background(), nil, 0, c, fallback, entity)
}

// defaultTitle and defaultDescription are used where no preset applies (a pair without a default
// preset) and by Fallback: they read what both entity types define.
const (
	defaultTitle       = "{% if alert is defined %}[{{ alert.status }}] {{ alertDef.name }}{% else %}[{{ case.status }}] {{ case.title }}{% endif %}"
	defaultDescription = "{% if alert is defined %}{{ alertDef.description }}{% else %}{{ case.readableId }}, priority {{ case.priority }}{% endif %}"
)

// escapeTemplate makes s literal text in a template.
func escapeTemplate(s string) string {
	return "{% raw %}" + strings.ReplaceAll(s, "{% endraw %}", "") + "{% endraw %}"
}

// templatesOf collects the message templates of preset and its parents (a child's win, field by
// field) and the payload type chosen: of each preset, the override for the entity's sub type when
// it has one, else its override for every notification of the entity type.
func templatesOf(ctx context.Context, q db.Querier, teamID int64, preset *oas.Preset, subType string) (map[string]string, string, error) {
	if preset == nil {
		return map[string]string{"title": defaultTitle, "description": defaultDescription}, "", nil
	}
	chain := []oas.Preset{*preset}
	for p := *preset; p.ParentId.Or("") != "" && len(chain) < maxParents; {
		if q == nil {
			break
		}
		parent, err := presets.Load(ctx, q, teamID, p.ParentId.Value)
		if db.IsNotFound(err) {
			break
		}
		if err != nil {
			return nil, "", err
		}
		chain = append(chain, parent)
		p = parent
	}
	templates := map[string]string{}
	payload := ""
	for i := len(chain) - 1; i >= 0; i-- { // the root first, the preset itself last
		o, ok := override(chain[i], subType)
		if !ok {
			continue
		}
		if pt := o.PayloadType.Or(""); pt != "" {
			payload = pt
		}
		for _, f := range o.MessageConfig.Value.Fields {
			templates[f.FieldName.Or("")] = f.Template.Or("")
		}
	}
	delete(templates, "")
	return templates, payload, nil
}

// override picks p's override for the sub type, else its override for the whole entity type.
func override(p oas.Preset, subType string) (oas.PresetConfigOverride, bool) {
	var general *oas.PresetConfigOverride
	for i, o := range p.ConfigOverrides {
		ct := o.ConditionType.Or(oas.PresetConditionType{})
		if s, ok := ct.MatchEntityTypeAndSubType.Get(); ok {
			if subType != "" && s.EntitySubType.Or("") == subType {
				return o, true
			}
			continue
		}
		if general == nil {
			general = &p.ConfigOverrides[i]
		}
	}
	if general == nil {
		return oas.PresetConfigOverride{}, false
	}
	return *general, true
}

// entitySubType is the entity's _context.entitySubType.
func entitySubType(entity map[string]any) string {
	ctx, _ := entity["_context"].(map[string]any)
	s, _ := ctx["entitySubType"].(string)
	return s
}

// slackFields: the raw payload is the whole message, as rendered; the default payload is the
// title in bold over the description, with the footer under them.
func slackFields(payload string, r map[string]string) (map[string]any, error) {
	if strings.EqualFold(payload, "slack_raw") || strings.EqualFold(payload, "raw") {
		obj, err := jsonObject("payload", r["payload"])
		if err != nil {
			return nil, err
		}
		if s, _ := obj["text"].(string); s == "" {
			obj["text"] = r["title"]
		}
		if s, _ := obj["text"].(string); s == "" {
			return nil, errors.New("preset field payload: a Slack message needs its text")
		}
		return obj, nil
	}
	var lines []string
	if t := strings.TrimSpace(r["title"]); t != "" {
		lines = append(lines, "*"+t+"*")
	}
	for _, name := range []string{"description", "footer"} {
		if t := strings.TrimSpace(r[name]); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) == 0 {
		lines = []string{"(empty notification)"}
	}
	return map[string]any{"text": strings.Join(lines, "\n")}, nil
}

// genericFields: the method in upper case, whatever the case sent (the connector's template for
// the entity type when it has one); the body is the rendered `body` object when the preset has
// one, else the object of the rendered fields; the connector's additionalBodyFields (its template
// for the entity type when it has one) are added to it, the preset's `headers` to the
// connector's additionalHeaders (its template for the entity type when it has one).
func genericFields(m *Message, c connectors.Connector, r map[string]string, entity map[string]any) error {
	ty, _ := connectors.TypeOf(c.Type)
	method, err := configValue(ty, c, "method", entity)
	if err != nil {
		return err
	}
	m.Method = strings.ToUpper(method)
	if t, ok := c.Overrides[entityType(entity)]["additionalHeaders"]; ok {
		out, err := notifyexpr.Render(t, entity)
		if err != nil {
			return fmt.Errorf("connector field additionalHeaders: %w", err)
		}
		c.Fields["additionalHeaders"] = out
	}
	body := map[string]any{}
	if strings.TrimSpace(r["body"]) != "" {
		obj, err := jsonObject("body", r["body"])
		if err != nil {
			return err
		}
		body = obj
	} else {
		for name, v := range r {
			if name != "headers" {
				body[name] = v
			}
		}
		for name, v := range defaultDocument(entity) {
			if _, set := body[name]; !set {
				body[name] = v
			}
		}
	}
	extra := c.Fields["additionalBodyFields"]
	if t, ok := c.Overrides[entityType(entity)]["additionalBodyFields"]; ok {
		out, err := notifyexpr.Render(t, entity)
		if err != nil {
			return fmt.Errorf("connector field additionalBodyFields: %w", err)
		}
		extra = out
	}
	if extra != "" {
		obj, err := jsonObject("additionalBodyFields", extra)
		if err != nil {
			return err
		}
		for k, v := range obj {
			if _, set := body[k]; !set {
				body[k] = v
			}
		}
	}
	m.Fields = body
	m.Headers = map[string]string{}
	for _, src := range []struct{ name, doc string }{{"additionalHeaders", c.Fields["additionalHeaders"]}, {"headers", r["headers"]}} {
		if strings.TrimSpace(src.doc) == "" {
			continue
		}
		var h map[string]string
		if err := json.Unmarshal([]byte(src.doc), &h); err != nil {
			return fmt.Errorf("field %s: must be a JSON object of strings", src.name)
		}
		for k, v := range h {
			m.Headers[k] = v
		}
	}
	return nil
}

// pagerDutyFields: the summary (the title when not set), the severity (from the alert's priority
// when not set) and the event's other fields.
func pagerDutyFields(r map[string]string, entity map[string]any) (map[string]any, error) {
	f := map[string]any{}
	summary := strings.TrimSpace(r["summary"])
	if summary == "" {
		summary = strings.TrimSpace(r["title"])
	}
	if summary == "" {
		summary = "(no summary)"
	}
	f["summary"] = summary
	// Templates of the severity are often written over several lines ({% if … %} critical {% elif
	// … %}); the severity is the word they render, in lower case.
	severity := strings.ToLower(strings.TrimSpace(r["severity"]))
	if severity == "" {
		severity = severityOf(entity)
	}
	f["severity"] = severity
	for _, name := range []string{"source", "component", "group", "class", "timestamp"} {
		if v := strings.TrimSpace(r[name]); v != "" {
			f[name] = v
		}
	}
	if f["source"] == nil {
		f["source"] = "mgmtapi"
	}
	if r["customDetails"] != "" {
		obj, err := jsonObject("customDetails", r["customDetails"])
		if err != nil {
			return nil, err
		}
		f["custom_details"] = obj
	} else if d := strings.TrimSpace(r["description"]); d != "" {
		f["custom_details"] = map[string]any{"description": d}
	}
	return f, nil
}

// severityOf maps the entity's priority (P1…P5) to PagerDuty's severities.
func severityOf(entity map[string]any) string {
	p, _ := entity["priority"].(string)
	switch p {
	case "P1":
		return "critical"
	case "P2":
		return "error"
	case "P3":
		return "warning"
	}
	return "info"
}

// entityType is the entity's _context.entityType.
func entityType(entity map[string]any) oas.NotificationEntityType {
	ctx, _ := entity["_context"].(map[string]any)
	s, _ := ctx["entityType"].(string)
	return oas.NotificationEntityType(s)
}

// jsonObject parses a rendered JSON field.
func jsonObject(name, doc string) (map[string]any, error) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("preset field %s: its rendering is not a JSON object", name)
	}
	return obj, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// defaultDocument is what a generic webhook's body carries, beside the preset's rendered fields,
// when no preset renders a whole body: the members receivers of Alertmanager's and Grafana's
// webhooks expect (status, labels, annotations, severity, priority, start and end, the incident's
// and case's ids), read from the entity. An alert's endsAt is its last change once resolved, and
// empty while it fires.
func defaultDocument(entity map[string]any) map[string]any {
	if a, ok := entity["alert"].(map[string]any); ok {
		def, _ := entity["alertDef"].(map[string]any)
		ends := ""
		if a["status"] == notifyexpr.AlertResolved {
			ends, _ = a["timestamp"].(string)
		}
		return map[string]any{
			"status": a["status"], "alertName": def["name"], "severity": a["severity"], "priority": def["priority"],
			"labels": a["labels"], "annotations": a["annotations"], "startsAt": a["createdAt"], "endsAt": ends,
			"incidentId": a["id"], "caseId": a["caseId"],
		}
	}
	if c, ok := entity["case"].(map[string]any); ok {
		return map[string]any{
			"status": c["status"], "priority": c["priority"], "labels": c["labels"], "startsAt": c["createTime"],
			"caseId": c["id"], "readableId": c["readableId"], "event": member(entity, "caseMetadata", "event"),
		}
	}
	return nil
}

// member reads entity[outer][inner]; nil when either is absent.
func member(entity map[string]any, outer, inner string) any {
	o, _ := entity[outer].(map[string]any)
	return o[inner]
}
