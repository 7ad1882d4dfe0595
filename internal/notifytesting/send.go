package notifytesting

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/messages"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
	"github.com/mgmtapi/mgmtapi/internal/presets"
)

// testRouter is the router id a test notification's delivery carries (it names no router).
const testRouter = "notification-test"

// trial is one test notification: the connector it goes through, the preset it is rendered with
// (nil: the built-in templates) and the sample event.
type trial struct {
	connector  connectors.Connector
	preset     *oas.Preset
	entityType oas.NotificationEntityType
	entity     map[string]any
}

// TestExistingConnector sends a TEST_NOTIFICATIONS sample, rendered with the team's default
// preset for the connector's type, through the team's connector connectorId, and answers what
// the receiver made of it (see send).
//
// Errors: Invalid (connectorId: missing; payloadType: not one of the type's); NotFound (no
// connector connectorId).
func (h *TestingHandler) TestExistingConnector(ctx context.Context, req oas.OptTestExistingConnectorRequest) (*oas.NotificationTestResponse, error) {
	body := req.Or(oas.TestExistingConnectorRequest{})
	teamID := auth.PrincipalFrom(ctx).TeamID
	c, err := h.connector(ctx, teamID, string(body.ConnectorId.Or("")))
	if err != nil {
		return nil, err
	}
	return h.withDefaultPreset(ctx, teamID, c, oas.NotificationEntityTypeTESTNOTIFICATIONS, "", string(body.PayloadType.Or("")))
}

// TestConnectorConfig checks type and fields as a connector's create does, then sends a sample of
// entityType (TEST_NOTIFICATIONS when not given) rendered with the team's default preset for the
// pair through that configuration (see send). Nothing is stored.
//
// Errors: Invalid (type, fields[i]: the connector rules; entityType: one the type does not carry
// or mgmtapi sends none of; payloadType: not one of the type's).
func (h *TestingHandler) TestConnectorConfig(ctx context.Context, req oas.OptTestConnectorConfigRequest) (*oas.NotificationTestResponse, error) {
	body := req.Or(oas.TestConnectorConfigRequest{})
	teamID := auth.PrincipalFrom(ctx).TeamID
	c, err := connectors.FromConfig(body.Type.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED), body.Fields)
	if err != nil {
		return nil, err
	}
	if err := c.Resolve(ctx, h.db.Read(), teamID, outgoingwebhooks.Integrations{}); db.IsNotFound(err) || errors.Is(err, connectors.ErrIntegrationType) {
		i := slices.IndexFunc(body.Fields, func(f oas.ConnectorConfigField) bool { return f.FieldName.Or("") == "integrationId" })
		return nil, apierror.Invalidf("fields[%d].value: integrationId %q must name an outgoing webhook of the team of a type %s connectors deliver through (%s)",
			i, c.Fields["integrationId"], c.Type, integrationProblem(err))
	} else if err != nil {
		return nil, err
	}
	entityType := given(body.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS)
	return h.withDefaultPreset(ctx, teamID, c, entityType, "", string(body.PayloadType.Or("")))
}

// TestExistingPreset sends a sample of entityType (the preset's when not given) and entitySubType
// rendered with the preset presetId (the team's default for the pair when not given) through the
// team's connector connectorId (see send).
//
// Errors: Invalid (connectorId: missing; presetId: a preset of another connector type;
// entityType: one the connector does not carry or mgmtapi sends none of); NotFound (no connector
// connectorId, no preset presetId).
func (h *TestingHandler) TestExistingPreset(ctx context.Context, req oas.OptTestExistingPresetRequest) (*oas.NotificationTestResponse, error) {
	body := req.Or(oas.TestExistingPresetRequest{})
	teamID := auth.PrincipalFrom(ctx).TeamID
	c, err := h.connector(ctx, teamID, string(body.ConnectorId.Or("")))
	if err != nil {
		return nil, err
	}
	presetID := string(body.PresetId.Or(""))
	if presetID == "" {
		return h.withDefaultPreset(ctx, teamID, c, given(body.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS),
			string(body.EntitySubType.Or("")), "")
	}
	p, err := h.loadPreset(ctx, teamID, "presetId", presetID, c.Type)
	if err != nil {
		return nil, err
	}
	entityType := given(body.EntityType, given(p.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS))
	t, err := newTrial(c, &p, entityType, string(body.EntitySubType.Or("")))
	if err != nil {
		return nil, err
	}
	return h.send(ctx, teamID, t)
}

// TestPresetConfig sends a sample of entityType (the parent's when not given) and entitySubType
// rendered with the preset made of configOverrides over parentPresetId through the team's
// connector connectorId (see send). Nothing is stored.
//
// Errors: Invalid (connectorId: missing; parentPresetId: a preset of another connector type;
// configOverrides[i]: a conditionType setting both conditions, a payload type not of the
// connector type, a message field not of the payload type; entityType as in TestExistingPreset); NotFound (no connector
// connectorId, no preset parentPresetId).
func (h *TestingHandler) TestPresetConfig(ctx context.Context, req oas.OptTestPresetConfigRequest) (*oas.NotificationTestResponse, error) {
	body := req.Or(oas.TestPresetConfigRequest{})
	teamID := auth.PrincipalFrom(ctx).TeamID
	c, err := h.connector(ctx, teamID, string(body.ConnectorId.Or("")))
	if err != nil {
		return nil, err
	}
	preset := oas.Preset{ConnectorType: oas.NewOptConnectorType(c.Type), ConfigOverrides: body.ConfigOverrides}
	entityType := given(body.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS)
	if parentID := string(body.ParentPresetId.Or("")); parentID != "" {
		parent, err := h.loadPreset(ctx, teamID, "parentPresetId", parentID, c.Type)
		if err != nil {
			return nil, err
		}
		preset.ParentId = oas.NewOptString(parentID)
		entityType = given(body.EntityType, given(parent.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS))
	}
	for i, o := range body.ConfigOverrides {
		if ct, ok := o.ConditionType.Get(); ok && ct.MatchEntityType != nil && ct.MatchEntityTypeAndSubType.Set {
			return nil, apierror.Invalidf("configOverrides[%d].conditionType: must set at most one of matchEntityType and matchEntityTypeAndSubType", i)
		}
		if err := checkPayload(c.Type, o.PayloadType.Or("")); err != nil {
			return nil, apierror.Invalidf("configOverrides[%d].%s", i, err.Error())
		}
		for j, f := range o.MessageConfig.Or(oas.PresetMessageConfig{}).Fields {
			if err := connectortypes.CheckMessageField(c.Type, o.PayloadType.Or(""), f.FieldName.Or("")); err != nil {
				return nil, apierror.Invalidf("configOverrides[%d].messageConfig.fields[%d].fieldName: %v", i, j, err)
			}
		}
	}
	preset.EntityType = oas.NewOptNotificationEntityType(entityType)
	t, err := newTrial(c, &preset, entityType, string(body.EntitySubType.Or("")))
	if err != nil {
		return nil, err
	}
	return h.send(ctx, teamID, t)
}

// TestDestination sends a sample of entityType (TEST_NOTIFICATIONS when not given) and
// entitySubType through the team's connector connectorId, rendered as a router destination would
// render it: the preset presetId (the team's default for the pair when not given) with
// messageConfigFields over its templates (fields of payloadType), and connectorConfigFields as the
// connector's templates for the entity type (see send).
//
// Errors: Invalid (connectorId: missing; connectorConfigFields[i].fieldName: not a field of the
// connector type, one that takes no template, or given twice; messageConfigFields[i].fieldName:
// not a field of the payload type; payloadType: not one of the type's; presetId and entityType as
// in TestExistingPreset); NotFound (no connector connectorId, no preset presetId).
func (h *TestingHandler) TestDestination(ctx context.Context, req oas.OptTestDestinationRequest) (*oas.NotificationTestResponse, error) {
	body := req.Or(oas.TestDestinationRequest{})
	teamID := auth.PrincipalFrom(ctx).TeamID
	c, err := h.connector(ctx, teamID, string(body.ConnectorId.Or("")))
	if err != nil {
		return nil, err
	}
	payload := string(body.PayloadType.Or(""))
	if err := checkPayload(c.Type, payload); err != nil {
		return nil, err
	}
	entityType := given(body.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS)
	var preset *oas.Preset
	if id := string(body.PresetId.Or("")); id != "" {
		p, err := h.loadPreset(ctx, teamID, "presetId", id, c.Type)
		if err != nil {
			return nil, err
		}
		preset = &p
		entityType = given(body.EntityType, given(p.EntityType, oas.NotificationEntityTypeTESTNOTIFICATIONS))
	}
	t, err := newTrial(c, nil, entityType, string(body.EntitySubType.Or("")))
	if err != nil {
		return nil, err
	}
	if preset == nil {
		if preset, err = messages.Preset(ctx, h.db.Read(), teamID, "", c.Type, entityType); err != nil {
			return nil, err
		}
	}
	fields := make([]oas.PresetMessageField, 0, len(body.MessageConfigFields))
	for i, f := range body.MessageConfigFields {
		if err := connectortypes.CheckMessageField(c.Type, payload, f.FieldName.Or("")); err != nil {
			return nil, apierror.Invalidf("messageConfigFields[%d].fieldName: %v", i, err)
		}
		fields = append(fields, f)
	}
	if len(fields) > 0 || (payload != "" && (preset != nil || payload != firstPayload(c.Type))) {
		preset = over(preset, c.Type, entityType, oas.PresetConfigOverride{
			PayloadType:   optString(payload),
			MessageConfig: oas.NewOptPresetMessageConfig(oas.PresetMessageConfig{Fields: fields}),
		})
	}
	t.preset = preset
	if len(body.ConnectorConfigFields) > 0 {
		templates := map[string]string{}
		for i, f := range body.ConnectorConfigFields {
			name := connectortypes.PublicFieldName(c.Type, f.FieldName.Or("")) // a retired alias names its public field
			if err := connectors.CheckTemplatedField(c.Type, name); err != nil {
				return nil, apierror.Invalidf("connectorConfigFields[%d].fieldName: %v", i, err)
			}
			if _, twice := templates[name]; twice {
				return nil, apierror.Invalidf("connectorConfigFields[%d].fieldName: %q is given twice; each field at most once", i, name)
			}
			templates[name] = f.Template.Or("")
		}
		// the connector's templates of the sample's entity type, as a route would use them
		overrides := maps.Clone(t.connector.Overrides)
		if overrides == nil {
			overrides = map[oas.NotificationEntityType]map[string]string{}
		}
		key := contextEntityType(t.entity)
		merged := maps.Clone(overrides[key])
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, templates)
		overrides[key] = merged
		t.connector.Overrides = overrides
	}
	return h.send(ctx, teamID, t)
}

// withDefaultPreset sends a sample of the entity type rendered with the team's default preset for
// the connector's type and the entity type, as payloadType when given.
func (h *TestingHandler) withDefaultPreset(ctx context.Context, teamID int64, c connectors.Connector, e oas.NotificationEntityType, subType, payload string) (*oas.NotificationTestResponse, error) {
	if err := checkPayload(c.Type, payload); err != nil {
		return nil, err
	}
	t, err := newTrial(c, nil, e, subType)
	if err != nil {
		return nil, err
	}
	if t.preset, err = messages.Preset(ctx, h.db.Read(), teamID, "", c.Type, e); err != nil {
		return nil, err
	}
	if payload != "" && (t.preset != nil || payload != firstPayload(c.Type)) {
		t.preset = over(t.preset, c.Type, e, oas.PresetConfigOverride{PayloadType: oas.NewOptString(payload)})
	}
	return h.send(ctx, teamID, t)
}

// send renders t through messages.Compose, the code routing renders with, and delivers the
// message now (delivery.Sender: one attempt under the server's delivery policy, nothing in the
// outbox), marked as a test (delivery.TestPrefix on its title or subject, delivery.TestNotice in
// its text, the delivery.TestHeader header). The answer is success with the receiver's status, or failure with a readable message:
// a preset that does not render, a connector type mgmtapi does not deliver through, a refused
// address, a timeout, a network error, the receiver's 4xx or 5xx (and its status). It never
// carries the connector's URL, key nor headers.
func (h *TestingHandler) send(ctx context.Context, teamID int64, t trial) (*oas.NotificationTestResponse, error) {
	if t.connector.Integration == nil {
		// A stored connector delivers through the outgoing webhook its integrationId names, as
		// routing does (its template for the entity type wins); one deleted since is the test's
		// failure, not the request's.
		id, err := messages.IntegrationID(t.connector, t.entity)
		if err != nil {
			return failure("the notification does not render: "+err.Error(), 0), nil
		}
		if id != "" {
			t.connector.Fields = maps.Clone(t.connector.Fields)
			t.connector.Fields["integrationId"] = id
		}
		err = t.connector.Resolve(ctx, h.db.Read(), teamID, outgoingwebhooks.Integrations{})
		if db.IsNotFound(err) || errors.Is(err, connectors.ErrIntegrationType) {
			return failure(fmt.Sprintf("connector %q names outgoing webhook %q, and %s; nothing was sent",
				t.connector.ID, t.connector.Fields["integrationId"], integrationProblem(err)), 0), nil
		}
		if err != nil {
			return nil, err
		}
	}
	m, err := messages.Compose(ctx, h.db.Read(), teamID, t.connector, t.preset, t.entity)
	if errors.Is(err, messages.ErrNotDelivered) {
		return failure(fmt.Sprintf("%s connectors are stored and checked, but mgmtapi does not send notifications through them; it delivers through %s",
			t.connector.Type, deliveredTypes()), 0), nil
	}
	if err != nil {
		if !renderError(err) {
			return nil, err
		}
		return failure("the notification does not render: "+err.Error(), 0), nil
	}
	requestID := uuid.NewString()
	if m.Webhook != nil {
		return h.sendWebhook(ctx, t, m)
	}
	d := delivery.Delivery{
		TeamID: teamID, RequestID: requestID, RouterID: testRouter,
		ConnectorID: connectorID(t.connector), ConnectorName: t.connector.Name, ConnectorType: m.Type,
		URL: m.URL, RoutingKey: m.RoutingKey, Method: m.Method, Headers: m.Headers, Fields: m.Fields,
		EntityType: string(t.entityType), EntityID: "test-" + requestID, EventKind: delivery.Triggered, Test: true,
	}
	if d.ConnectorType != delivery.GenericHTTPS {
		d.Method = ""
	}
	status, err := h.sender.SendNow(ctx, d)
	if err != nil {
		return failure(err.Error(), status), nil
	}
	return success(t, status), nil
}

// sendWebhook sends a test of a connector delivered through an outgoing webhook record
// (EVENTBRIDGE) once, through the webhook type's own delivery (notifiers.Send, as the worker
// does), as a test message: TestPrefix on its title, TestNotice in its text.
func (h *TestingHandler) sendWebhook(ctx context.Context, t trial, m messages.Message) (*oas.NotificationTestResponse, error) {
	k, ok := notifiers.Lookup(m.WebhookType)
	if !ok || k.Notifier == nil {
		return failure(fmt.Sprintf("the connector's outgoing webhook is of type %s, which mgmtapi does not deliver", m.WebhookType), 0), nil
	}
	wm := *m.Webhook
	wm.Status, wm.Time, wm.Key = notifiers.Test, time.Now().UTC(), "test-"+uuid.NewString()
	wm.Title = delivery.TestPrefix + wm.Title
	wm.Text = delivery.TestNotice + "\n\n" + wm.Text
	o := notifiers.Send(ctx, h.sender, k, notifiers.TargetOf(m.URL, m.WebhookSettings), wm)
	if o.Err != nil {
		return failure(o.Err.Error(), o.Status), nil
	}
	return success(t, o.Status), nil
}

// renderError reports whether Compose's err is about the message (a template that does not
// render, a rendering that is not the JSON a field needs), not a database read.
func renderError(err error) bool {
	var e *notifyexpr.Error
	if errors.As(err, &e) {
		return true
	}
	msg := err.Error()
	for _, prefix := range []string{"preset field ", "connector field ", "field "} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// success is the success answer of a test of t whose receiver answered status: the status, the
// connector and entity types and the preset used ("" for the pair's default).
func success(t trial, status int) *oas.NotificationTestResponse {
	meta := oas.NotificationTestResultSuccessMetadata{
		"statusCode":    strconv.Itoa(status),
		"connectorType": string(t.connector.Type),
		"entityType":    string(t.entityType),
		"presetId":      "",
	}
	if t.preset != nil {
		meta["presetId"] = presetIDOf(t.preset)
	}
	return &oas.NotificationTestResponse{Result: oas.NewOptNotificationTestResult(oas.NotificationTestResult{
		Success: oas.NewOptNotificationTestResultSuccess(oas.NotificationTestResultSuccess{Metadata: oas.NewOptNotificationTestResultSuccessMetadata(meta)}),
	})}
}

// failure is the failure answer: message within the public bound, status when the receiver
// answered.
func failure(message string, status int) *oas.NotificationTestResponse {
	f := oas.NotificationTestResultFailure{Message: oas.NewOptString(cut(message, 10000))}
	if status >= 100 && status <= 599 {
		f.StatusCode = oas.NewOptInt64(int64(status))
	}
	return &oas.NotificationTestResponse{Result: oas.NewOptNotificationTestResult(oas.NotificationTestResult{
		Failure: oas.NewOptNotificationTestResultFailure(f),
	})}
}

// connector reads the team's connector id.
//
// Errors: Invalid (connectorId: missing); NotFound.
func (h *TestingHandler) connector(ctx context.Context, teamID int64, id string) (connectors.Connector, error) {
	if id == "" {
		return connectors.Connector{}, apierror.Invalidf("connectorId: required; the connector the test notification is sent through")
	}
	c, err := connectors.Load(ctx, h.db.Read(), teamID, id)
	if db.IsNotFound(err) {
		return c, apierror.NotFoundf("connectorId: no connector %q", id)
	}
	return c, err
}

// loadPreset reads the team's preset id (system or custom), which must render for the connector
// type (or for none).
//
// Errors: NotFound; Invalid (a preset of another connector type).
func (h *TestingHandler) loadPreset(ctx context.Context, teamID int64, field, id string, c oas.ConnectorType) (oas.Preset, error) {
	p, err := presets.Load(ctx, h.db.Read(), teamID, id)
	if db.IsNotFound(err) {
		return p, apierror.NotFoundf("%s: no preset %q", field, id)
	}
	if err != nil {
		return p, err
	}
	if pt := p.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED); pt != oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED && pt != c {
		return p, apierror.Invalidf("%s: preset %q renders %s notifications, and the connector is %s", field, id, pt, c)
	}
	return p, nil
}

// newTrial checks that the connector carries notifications of the entity type and makes its
// sample event.
//
// Errors: Invalid naming entityType.
func newTrial(c connectors.Connector, preset *oas.Preset, e oas.NotificationEntityType, subType string) (trial, error) {
	if ty, ok := connectortypes.Lookup(c.Type); ok && !ty.Supports(e) {
		return trial{}, apierror.Invalidf("entityType: %s connectors do not carry %s notifications", c.Type, e)
	}
	entity, err := notifyexpr.SampleEntity(string(e), subType)
	if err != nil {
		return trial{}, apierror.Invalidf("entityType: %v", err)
	}
	return trial{connector: c, preset: preset, entityType: e, entity: entity}, nil
}

// checkPayload requires payload, when given, to be a payload type of the connector type.
func checkPayload(c oas.ConnectorType, payload string) error {
	if payload == "" {
		return nil
	}
	ty, ok := connectortypes.Lookup(c)
	if !ok {
		return nil
	}
	if _, ok := ty.Payload(payload); !ok {
		names := make([]string, len(ty.Payloads))
		for i, p := range ty.Payloads {
			names[i] = p.Name
		}
		return apierror.Invalidf("payloadType: %q is not a payload type of %s connectors (%s)", payload, c, strings.Join(names, ", "))
	}
	return nil
}

// firstPayload is the connector type's default payload type.
func firstPayload(c oas.ConnectorType) string {
	if ty, ok := connectortypes.Lookup(c); ok && len(ty.Payloads) > 0 {
		return ty.Payloads[0].Name
	}
	return ""
}

// over is a preset deriving from base (nil: none) with one override for every notification of
// the entity type: its templates win field by field, its payload type when set.
func over(base *oas.Preset, c oas.ConnectorType, e oas.NotificationEntityType, o oas.PresetConfigOverride) *oas.Preset {
	p := &oas.Preset{
		ConnectorType:   oas.NewOptConnectorType(c),
		EntityType:      oas.NewOptNotificationEntityType(e),
		ConfigOverrides: []oas.PresetConfigOverride{o},
	}
	if base != nil {
		// every default and every preset a request names is stored, so base has an id; a preset
		// without one only lends its parent (messages reads one override per preset)
		p.ParentId = base.ParentId
		if id := base.ID.Or(""); id != "" {
			p.ParentId = oas.NewOptString(id)
		}
	}
	return p
}

// presetIDOf is the id of the stored preset that rendered the message (an unstored one's parent).
func presetIDOf(p *oas.Preset) string {
	if id := p.ID.Or(""); id != "" {
		return id
	}
	return p.ParentId.Or("")
}

// given is e when set and specified, else def.
func given(e oas.OptNotificationEntityType, def oas.NotificationEntityType) oas.NotificationEntityType {
	if v := e.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED); v != oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
		return v
	}
	return def
}

func optString(s string) oas.OptString {
	if s == "" {
		return oas.OptString{}
	}
	return oas.NewOptString(s)
}

// connectorID is the connector's id, or "test" for a configuration not stored.
func connectorID(c connectors.Connector) string {
	if c.ID == "" {
		return "test"
	}
	return c.ID
}

// contextEntityType is the sample's _context.entityType, the key messages reads a connector's
// templates by.
func contextEntityType(entity map[string]any) oas.NotificationEntityType {
	ctx, _ := entity["_context"].(map[string]any)
	s, _ := ctx["entityType"].(string)
	return oas.NotificationEntityType(s)
}

// deliveredTypes names the connector types mgmtapi sends through.
func deliveredTypes() string {
	var out []string
	for _, t := range connectortypes.Kinds() {
		if t.Delivered() {
			out = append(out, string(t.Type))
		}
	}
	return strings.Join(out, ", ")
}

// cut keeps at most n runes of s.
func cut(s string, n int) string {
	r := []rune(strings.ToValidUTF8(s, "?"))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-3]) + "..."
}

// integrationProblem says what Resolve's err (not found, or of another type) found wrong.
func integrationProblem(err error) string {
	if errors.Is(err, connectors.ErrIntegrationType) {
		return err.Error()
	}
	return "the team has no such webhook"
}
