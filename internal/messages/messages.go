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
	"fmt"
	"sort"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
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
var ErrNotDelivered = connectortypes.ErrNotDelivered

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
	kind, ok := connectortypes.Lookup(c.Type)
	if !ok || !kind.Delivered() {
		return Message{}, ErrNotDelivered
	}
	templates, payload, err := templatesOf(ctx, q, teamID, preset, entitySubType(entity))
	if err != nil {
		return Message{}, err
	}
	rendered := make(map[string]string, len(templates))
	for _, name := range sortedKeys(templates) {
		out, err := notifyexpr.RenderContext(ctx, templates[name], entity)
		if err != nil {
			return Message{}, fmt.Errorf("preset field %s: %w", name, err)
		}
		rendered[name] = out
	}
	// A connector's template of the entity type wins over its value: a generic URL that depends
	// on the alert's status, a PagerDuty key per priority.
	out, err := kind.Compose(ctx, c.Fields, c.Overrides[entityType(entity)], c.Integration,
		connectortypes.Message{PayloadType: payload, Fields: rendered}, entity)
	if err != nil {
		return Message{}, err
	}
	m := Message{Type: delivery.ConnectorType(out.Format), URL: out.URL, RoutingKey: out.RoutingKey, Method: out.Method,
		Headers: out.Headers, Fields: out.Fields}
	if w := out.Webhook; w != nil {
		m.Type, m.URL, m.WebhookType, m.WebhookSettings = delivery.Webhook, w.URL, w.Type, w.Settings
		m.Webhook = &notifiers.Message{Title: w.Title, Text: w.Text, Status: w.Status, Severity: w.Severity, Fields: w.Fields}
	}
	return m, nil
}

// IntegrationID is the integration connector c delivers through for the entity: its
// integrationId template for the entity's type rendered (trimmed, and checked against the
// field's rule), when it has one, else its integrationId ("" for none). Set it as
// c.Fields["integrationId"] before Connector.Resolve.
//
// Errors: the template does not render, or its rendering breaks the field's rule.
func IntegrationID(c connectors.Connector, entity map[string]any) (string, error) {
	kind, ok := connectortypes.Lookup(c.Type)
	if !ok {
		return c.Fields["integrationId"], nil
	}
	return kind.IntegrationID(c.Fields, c.Overrides[entityType(entity)], entity)
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

// entityType is the entity's _context.entityType.
func entityType(entity map[string]any) oas.NotificationEntityType {
	ctx, _ := entity["_context"].(map[string]any)
	s, _ := ctx["entityType"].(string)
	return oas.NotificationEntityType(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
