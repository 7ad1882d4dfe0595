package routers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/alertschedules"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/messages"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

// Router routes the events write transactions recorded (db.Tx.Emit) to the team's connectors
// and webhooks: the delivery worker calls Route outside any write transaction
// (delivery.Options.Router) and writes the deliveries it answers. Logger records what a route
// could not do (a condition that does not evaluate, a target whose connector is gone); nil
// discards it.
//
// For each event, each of the team's routers that is not disabled, is of the event's entity
// type (or of none) and that takes the entity's labels (Takes) takes the targets of every
// rule whose entity type fits and whose condition holds; when none holds, its fallback targets
// of the entity type (and its deprecated fallback). A connector is sent one notification per
// event, however many rules or routers name it: the first target naming it (routers oldest
// first, rules in order) decides its preset. Its idempotency key is the team's, the event's
// notification request's and the connector's. The preset is the target's,
// else the team's default for the connector type and entity type; a preset that does not render
// sends the fallback message (the headline and the reason) rather than nothing.
//
// ExternalURL is the server's base URL: each entity gains its link (alert.link, case.link: the
// incident's or the case's URL in the API), which the default generic body carries; empty, none.
type Router struct {
	Logger      *slog.Logger
	Definitions Definitions
	ExternalURL string
}

// Route answers the deliveries of one recorded event, reading the team's routers, alert
// definitions, scheduler rules, connectors and presets through q; conditions and templates see
// the entity as the event's transaction left it (its snapshot). It writes nothing. Its error is
// the database's only.
func (r Router) Route(ctx context.Context, q db.Querier, e delivery.Event) ([]delivery.Delivery, error) {
	p := &pass{ctx: ctx, q: q, logger: r.Logger, e: e, externalURL: r.ExternalURL}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if err := p.route(r.Definitions); err != nil {
		return nil, fmt.Errorf("route the %s event of %s %s: %w", e.Kind, e.EntityType, e.EntityID, err)
	}
	return p.out, nil
}

// Definitions are how the routing finds the alert definition an incident's alert was evaluated
// from (internal/alertdefs, which itself reads this package's routers, provides them); without
// them every incident goes through the team's routers.
type Definitions struct {
	// TeamHasAny reports whether the team has any alert definition.
	TeamHasAny func(ctx context.Context, q db.Querier, teamID int64) (bool, error)
	// OfAlert answers the current definition an alert's labels name, and false when none.
	OfAlert func(ctx context.Context, q db.Querier, teamID int64, labels map[string]string) (oas.AlertDef, bool, error)
}

// pass is the routing of one event: what it reads through, what it knows of the entity, and the
// deliveries it has chosen so far.
type pass struct {
	ctx    context.Context
	q      db.Querier
	logger *slog.Logger
	e      delivery.Event
	// entity is what conditions and templates read, caseID the case the outcome is recorded on,
	// requestID the notification request the event's deliveries share.
	entity    map[string]any
	caseID    string
	requestID string
	out       []delivery.Delivery
	// externalURL is Router.ExternalURL.
	externalURL string
}

// activeRouters are the team's routers that are not disabled, oldest first.
func activeRouters(ctx context.Context, q db.Querier, teamID int64) ([]oas.GlobalRouter, error) {
	var out []oas.GlobalRouter
	err := eachRouter(ctx, q, teamID, func(r *oas.GlobalRouter) error {
		if !r.Disabled.Or(false) {
			out = append(out, *r)
		}
		return nil
	})
	return out, err
}

// route chooses the deliveries of the event through the team's active routers, or, for an
// incident of an alert definition, as the definition says (definitionEvent).
func (p *pass) route(defs Definitions) error {
	active, err := activeRouters(p.ctx, p.q, p.e.TeamID)
	if err != nil {
		return err
	}
	routers := routersOf(active, oas.NotificationEntityType(p.e.EntityType))
	definitions := false
	if defs.TeamHasAny != nil && defs.OfAlert != nil && p.e.EntityType == notifyexpr.EntityAlerts {
		if definitions, err = defs.TeamHasAny(p.ctx, p.q, p.e.TeamID); err != nil {
			return err
		}
	}
	if len(routers) == 0 && !definitions {
		return nil
	}
	labels, err := p.readEntity()
	if err != nil {
		p.logger.Warn("notification event's snapshot does not decode; nothing is sent",
			"entity_type", p.e.EntityType, "entity", p.e.EntityID, "error", err.Error())
		return nil
	}
	p.requestID = uuid.Must(uuid.NewV7()).String()
	if definitions {
		def, found, err := defs.OfAlert(p.ctx, p.q, p.e.TeamID, labels)
		if err != nil {
			return err
		}
		if found {
			return p.definitionEvent(routers, def, labels)
		}
	}
	if p.reminder() {
		return nil // a reminder is a definition's, and its definition is gone
	}
	return p.throughRouters(routers, labels, map[string]bool{})
}

// routersOf keeps the routers of the entity type, or of none.
func routersOf(active []oas.GlobalRouter, entityType oas.NotificationEntityType) []oas.GlobalRouter {
	var out []oas.GlobalRouter
	for _, r := range active {
		if et := r.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED); et == entityType || et == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
			out = append(out, r)
		}
	}
	return out
}

// throughRouters sends the event through each of routers that takes labels (Takes), to the
// targets its rules (or fallback) choose, once per connector (sent, by connector id, holds those
// the event was already sent to).
func (p *pass) throughRouters(routers []oas.GlobalRouter, labels map[string]string, sent map[string]bool) error {
	entityType := oas.NotificationEntityType(p.e.EntityType)
	for _, r := range routers {
		if !Takes(r, labels) {
			continue
		}
		if err := p.toTargets(r, chosenTargets(p.ctx, r, entityType, p.entity, p.eventLogger()), sent); err != nil {
			return err
		}
	}
	return nil
}

// toTargets chooses the notification of each target whose connector the event has not been sent
// to yet (sent, by connector id), and marks it sent.
func (p *pass) toTargets(r oas.GlobalRouter, targets []oas.RoutingTarget, sent map[string]bool) error {
	for _, t := range targets {
		if sent[t.ConnectorId.Or("")] {
			continue
		}
		sent[t.ConnectorId.Or("")] = true
		if err := p.target(r, t); err != nil {
			return err
		}
	}
	return nil
}

// suppressing answers whether an alert scheduler rule silences the event's alert (of definition
// defID, with labels) at the event's time: the answer the recording transaction asked, when it
// asked one (ingestion asks for a firing, once, for the alert event feed too), else the rules'.
func (p *pass) suppressing(defID string, labels map[string]string) (ruleID string, silenced bool, err error) {
	if p.e.SuppressedBy != nil {
		return *p.e.SuppressedBy, *p.e.SuppressedBy != "", nil
	}
	return alertschedules.Suppressing(p.ctx, p.q, p.e.TeamID, defID, labels, p.e.At)
}

// definitionEvent routes an event of an incident that an alert definition's alert made:
//
//   - While one of the team's alert scheduler rules silences the alert (its definition and
//     labels, at the event's time), nothing is sent: the suppression is logged. For a firing,
//     ingestion asked once at that instant and recorded the answer on the event and on the
//     alert's event in the feed (suppressing).
//   - The notification variables gain the definition: alertDef.id, .name, .description,
//     .priority (the alert's, which a rule's override sets), .type (METRIC_THRESHOLD, …),
//     .entityLabels (the definition's) and .groupByKeys.
//   - When the definition's notification group names destinations or a router, the event goes
//     there and nowhere else: each destination's connector with its preset, and the router's
//     rules (its entity labels are not asked: the definition chose it). A destination's delivery
//     records the definition (its id and "alert definition <name>") as its router. Each one sends triggered
//     events, and resolved ones too when its notifyOn is NOTIFY_ON_TRIGGERED_AND_RESOLVED;
//     acknowledgements only go through global routers. A router that is disabled or of cases
//     only (or gone: its delete normally takes it out of the definition, ReleaseRouter) sends
//     nothing and is logged.
//   - A router without an id ({"notifyOn": …}) stands for the team's routers that take the
//     definition's routing labels (definitionLabels: the alert's labels under the definition's
//     entityLabels), each once, with the same notifyOn rule.
//   - A definition without destinations or router leaves the event to the team's routers, as
//     any incident's.
//   - Whatever its destinations and router, each of the definition's webhooks
//     (notificationGroup.webhooks[]) whose notifyOn admits the event is sent it through the
//     outgoing webhook it names or to its recipients, once per its retriggering period
//     (toWebhooks).
func (p *pass) definitionEvent(routers []oas.GlobalRouter, def oas.AlertDef, labels map[string]string) error {
	defID := def.ID.Or("")
	if ruleID, silenced, err := p.suppressing(defID, labels); err != nil {
		return err
	} else if silenced {
		p.logger.Info("alert notification suppressed by an alert scheduler rule",
			"alert_def_id", defID, "scheduler_rule", ruleID, "incident", p.e.EntityID, "event", string(p.e.Kind))
		return nil
	}
	props := def.AlertDefProperties.Value
	if props.PhantomMode.Or(false) {
		// Phantom mode (issue 37): the definition is evaluated and its incidents, cases and
		// events recorded, and nobody is notified, not even through the team's routers.
		p.logger.Info("alert notification not sent: the definition is in phantom mode",
			"alert_def_id", defID, "incident", p.e.EntityID, "event", string(p.e.Kind))
		return nil
	}
	if ad, ok := p.entity["alertDef"].(map[string]any); ok {
		ad["id"] = defID
		ad["name"] = props.Name.Or("")
		ad["description"] = props.Description.Or("")
		ad["type"] = strings.TrimPrefix(string(props.Type.Or("")), "ALERT_DEF_TYPE_")
		ad["entityLabels"] = map[string]string(props.EntityLabels.Or(nil))
		ad["groupByKeys"] = props.GroupByKeys
	}
	if err := p.toWebhooks(def, labels); err != nil {
		return err
	}
	group := props.NotificationGroup.Value
	settings := props.IncidentsSettings.Value
	reminder := p.reminder()
	// Connectors sent a triggered notification of the same alert (its definition identity) within
	// a retriggering period are not sent another: with the period of their destination, else
	// the definition's incidentsSettings.minutes. A reminder goes only where there is a period,
	// and once it has passed (less reminderSlack: the earlier trigger's delivery was written when
	// it was routed, after the instant the reminder times count from).
	recent, err := p.recentlyTriggered(def)
	if err != nil {
		return err
	}
	retriggered := func(connectorID string, minutes int64) bool {
		at, ok := recent[connectorID]
		since := p.e.At.Add(-time.Duration(min(minutes, maxRetriggerMinutes)) * time.Minute)
		if reminder {
			since = since.Add(reminderSlack(minutes))
		}
		return ok && minutes > 0 && at.After(since)
	}
	sent := map[string]bool{}
	// The routers' connectors (the team's, or the group's router) go by the definition's period.
	routerMinutes := settings.Minutes.Or(0)
	for connectorID := range recent {
		if retriggered(connectorID, routerMinutes) {
			sent[connectorID] = true
		}
	}
	if len(group.Destinations) == 0 && !group.Router.Set {
		if reminder && routerMinutes <= 0 {
			return nil
		}
		return p.throughRouters(routers, labels, sent)
	}
	// A destination's or router's notifyOn, when unset, is the definition's
	// incidentsSettings.notifyOn.
	notifies := func(on oas.OptAlertDefNotifyOn) bool {
		if !on.Set {
			on = settings.NotifyOn
		}
		return notifiesOn(p.e.Kind, on)
	}
	var direct []oas.RoutingTarget
	for _, d := range group.Destinations {
		minutes := d.RetriggeringPeriodMinutes.Or(0)
		if reminder && minutes <= 0 {
			minutes = routerMinutes
		}
		if reminder && minutes <= 0 {
			continue // no period: no reminder
		}
		if minutes > 0 && retriggered(d.ConnectorId.Or(""), minutes) {
			p.logger.Info("alert notification not sent again within the destination's retriggering period",
				"alert_def_id", defID, "connector", d.ConnectorId.Or(""), "minutes", minutes, "reminder", reminder)
			continue
		}
		if notifies(d.NotifyOn) {
			if reminder {
				delete(sent, d.ConnectorId.Or("")) // its own period said yes
			}
			direct = append(direct, oas.RoutingTarget{ConnectorId: d.ConnectorId, PresetId: d.PresetId})
		}
	}
	// A destination's delivery names the definition where a router's names the router.
	source := oas.GlobalRouter{ID: oas.NewOptString(defID), Name: oas.NewOptString("alert definition " + props.Name.Or(""))}
	if err := p.toTargets(source, direct, sent); err != nil {
		return err
	}
	if group.Router.Set && notifies(group.Router.Value.NotifyOn) && (!reminder || routerMinutes > 0) {
		routerID := group.Router.Value.ID.Or("")
		if routerID == "" {
			return p.throughRouters(routers, definitionLabels(labels, props), sent)
		}
		var chosen *oas.GlobalRouter
		for i := range routers {
			if routers[i].ID.Or("") == routerID {
				chosen = &routers[i]
			}
		}
		if chosen == nil {
			p.logger.Warn("alert definition's router is gone, disabled or of cases only; nothing is sent through it",
				"alert_def_id", defID, "router", routerID)
			return nil
		}
		targets := chosenTargets(p.ctx, *chosen, oas.NotificationEntityType(p.e.EntityType), p.entity, p.eventLogger())
		if err := p.toTargets(*chosen, targets, sent); err != nil {
			return err
		}
	}
	return nil
}

// recentlyTriggered answers, for a triggered event of an incident of def (a first trigger, a
// trigger again, or a reminder) whose definition or destinations have a retriggering period,
// the connectors that were sent a triggered notification of an incident of the same alert (the
// same definition identity: the incidents' fingerprint, internal/ingest; this incident included)
// within the longest of those periods, with the time of the latest. Other events, and
// definitions without a period, answer nothing. Only incidents still open, or closed within the
// period, are asked.
func (p *pass) recentlyTriggered(def oas.AlertDef) (map[string]time.Time, error) {
	if p.e.Kind != delivery.Triggered {
		return nil, nil
	}
	props := def.AlertDefProperties.Value
	longest := props.IncidentsSettings.Value.Minutes.Or(0)
	for _, d := range props.NotificationGroup.Value.Destinations {
		longest = max(longest, d.RetriggeringPeriodMinutes.Or(0))
	}
	if longest <= 0 {
		return nil, nil
	}
	since := p.e.At.Add(-time.Duration(min(longest, maxRetriggerMinutes)) * time.Minute).UnixMicro()
	return lastTriggers(p.ctx, p.q, p.e.TeamID, p.e.EntityType, p.e.EntityID, since)
}

// lastTriggers answers, per connector, the time of the latest triggered notification enqueued
// after since (Unix microseconds) for an incident of the team with the same fingerprint as
// incidentID (that incident included) that its source has not resolved, or resolved after since
// (by the database's clock; closedAt is the source's time). Migration 0062 indexes both halves.
func lastTriggers(ctx context.Context, q db.Querier, teamID int64, entityType, incidentID string, since int64) (map[string]time.Time, error) {
	rows, err := q.QueryContext(ctx, lastTriggersQuery, teamID, since, entityType, incidentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = time.UnixMicro(at)
	}
	return out, rows.Err()
}

// lastTriggersQuery is lastTriggers' question: $1 the team, $2 since, $3 the entity type, $4 the
// incident.
const lastTriggersQuery = `SELECT d.connector_id, MAX(d.created_at) FROM deliveries d
	WHERE d.team_id = $1 AND d.event_kind = 'triggered' AND d.entity_type = $3 AND d.created_at > $2
	AND d.entity_id IN (
		SELECT i.id FROM incidents i WHERE i.team_id = $1 AND i.source_resolved_at IS NULL
			AND i.fingerprint = (SELECT fingerprint FROM incidents WHERE team_id = $1 AND id = $4)
		UNION ALL
		SELECT i.id FROM incidents i WHERE i.team_id = $1 AND i.source_resolved_at > $2
			AND i.fingerprint = (SELECT fingerprint FROM incidents WHERE team_id = $1 AND id = $4))
	GROUP BY d.connector_id`

// reminder says whether the pass routes a reminder (ReminderCause) of a firing that continues.
func (p *pass) reminder() bool {
	return p.e.Kind == delivery.Triggered && p.e.Cause == ReminderCause
}

// definitionLabels are the labels a definition's alert is routed by: the alert's, with the
// definition's entityLabels over them (a new map; labels is left as it is).
func definitionLabels(labels map[string]string, p oas.AlertDefProperties) map[string]string {
	out := make(map[string]string, len(labels))
	maps.Copy(out, labels)
	maps.Copy(out, p.EntityLabels.Or(nil))
	return out
}

// eventLogger is the pass's logger naming the event's entity.
func (p *pass) eventLogger() *slog.Logger {
	return p.logger.With("entity_type", p.e.EntityType, "entity_id", p.e.EntityID, "event", string(p.e.Kind))
}

// missingVariable is the first top-level variable the condition reads that the entity has not
// ("" when it has them all, or when the condition does not compile: its evaluation says why).
func missingVariable(condition string, entity map[string]any) string {
	names, err := notifyexpr.ConditionVariables(condition)
	if err != nil {
		return ""
	}
	for _, n := range names {
		if _, ok := entity[n]; !ok {
			return n
		}
	}
	return ""
}

// chosenTargets are the targets router r sends an entity of the type to: those of every rule
// whose condition holds, else the fallback ones.
func chosenTargets(ctx context.Context, r oas.GlobalRouter, entityType oas.NotificationEntityType, entity map[string]any, logger *slog.Logger) []oas.RoutingTarget {
	var out []oas.RoutingTarget
	matched := false
	for i, rule := range r.Rules {
		if et := rule.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED); et != oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED && et != entityType {
			continue
		}
		if missing := missingVariable(rule.Condition.Or(""), entity); missing != "" {
			// A router of every entity type meets entities without the variable (a condition on
			// alertDef meets cases): the rule is not theirs.
			logger.Debug("notification condition reads a variable the entity has not; the rule is skipped",
				"router", r.ID.Or(""), "rule", i, "variable", missing)
			continue
		}
		holds, err := notifyexpr.EvalConditionContext(ctx, rule.Condition.Or(""), entity)
		if err != nil {
			logger.Warn("notification condition does not evaluate; the rule is skipped",
				"router", r.ID.Or(""), "rule", i, "error", err.Error())
			continue
		}
		if holds {
			matched = true
			out = append(out, rule.Targets...)
		}
	}
	if matched {
		return out
	}
	for _, f := range r.FallbackTargets {
		if et := f.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED); f.Target.Set &&
			(et == entityType || et == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED) {
			out = append(out, f.Target.Value)
		}
	}
	//lint:ignore SA1019 the deprecated fallback is still routed for routers that have one
	return append(out, r.Fallback...)
}

// target composes the notification of one target of router r and adds it to the pass's
// deliveries. A connector that is gone, an integration that is gone or of another type, or an
// integrationId that does not render is logged and sends nothing; a preset that does not render
// sends the fallback message.
func (p *pass) target(r oas.GlobalRouter, t oas.RoutingTarget) error {
	ctx, e := p.ctx, p.e
	c, err := connectors.Load(ctx, p.q, e.TeamID, t.ConnectorId.Or(""))
	if db.IsNotFound(err) {
		p.logger.Warn("notification target's connector is gone", "router", r.ID.Or(""), "connector", t.ConnectorId.Or(""))
		return nil
	}
	if err != nil {
		return err
	}
	if ty, ok := connectortypes.Lookup(c.Type); !ok || !ty.Delivered() {
		return nil // stored and checked, not sent through: the type's summary says so
	}
	if ty, _ := connectortypes.Lookup(c.Type); !ty.Sends(string(e.Kind)) {
		return nil // the type sends only some events (SERVICE_NOW: openings)
	}
	if e.EntityType == string(oas.NotificationEntityTypeALERTS) && (e.Kind == delivery.Resolved || e.Kind == delivery.Acknowledged) {
		// Routing reads the routers and definitions of now: a connector added after the alert's
		// trigger was routed would be told of an end it never saw the start of.
		sent, err := delivery.TriggerSent(ctx, p.q, e.TeamID, c.ID, e.EntityType, e.EntityID)
		if err != nil {
			return err
		}
		if !sent {
			p.logger.Info("alert notification not sent: the connector was not sent the alert's trigger",
				"router", r.ID.Or(""), "connector", c.ID, "incident", e.EntityID, "event", string(e.Kind))
			return nil
		}
	}
	id, err := messages.IntegrationID(c, p.entity)
	if err != nil {
		p.logger.Warn("notification target's integrationId does not render; nothing is sent",
			"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
		return nil
	}
	if id != "" {
		c.Fields["integrationId"] = id // its template for the entity type wins, as for every field
	}
	if err := c.Resolve(ctx, p.q, e.TeamID, outgoingwebhooks.Integrations{}); db.IsNotFound(err) || errors.Is(err, connectors.ErrIntegrationType) {
		// The outgoing webhook the connector names was deleted since (or changed type, which a
		// webhook in use cannot): nothing to send to.
		p.logger.Warn("notification target's integration is gone or of another type; nothing is sent",
			"router", r.ID.Or(""), "connector", c.ID, "integration", c.Fields["integrationId"])
		return nil
	} else if err != nil {
		return err
	}
	preset, err := messages.Preset(ctx, p.q, e.TeamID, t.PresetId.Or(""), c.Type, oas.NotificationEntityType(e.EntityType))
	if err != nil && !db.IsNotFound(err) {
		return err
	}
	msg, err := messages.Compose(ctx, p.q, e.TeamID, c, preset, p.entity)
	if err != nil {
		p.logger.Warn("notification preset does not render; the fallback message is sent",
			"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
		if msg, err = messages.Fallback(c, p.entity, err); err != nil {
			// Fallback reads nothing: its failure is the connector's (an email connector stored
			// with recipients the current rule refuses), never the database's.
			p.logger.Warn("notification cannot be composed; it is dropped",
				"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
			return nil
		}
	}
	d := delivery.Delivery{
		TeamID: e.TeamID, RequestID: p.requestID, RouterID: r.ID.Or(""), RouterName: r.Name.Or(""),
		ConnectorID: c.ID, ConnectorName: c.Name, ConnectorType: msg.Type,
		URL: msg.URL, RoutingKey: msg.RoutingKey, Method: msg.Method, Headers: msg.Headers, Fields: msg.Fields,
		EntityType: e.EntityType, EntityID: e.EntityID, EventKind: e.Kind, CaseID: p.caseID,
	}
	if msg.Webhook != nil {
		// An EVENTBRIDGE connector: an outgoing webhook record of the webhook it names, sent by
		// the worker through the webhook type's delivery (PutEvents).
		wm := *msg.Webhook
		wm.Key = "mgmtapi/" + strconv.FormatInt(e.TeamID, 10) + "/" + e.EntityType + "/" + e.EntityID
		wm.Time = e.At
		d.Message, _ = json.Marshal(wm) // strings, maps of strings and a time: always encodes
		d.WebhookType, d.WebhookSettings, d.DedupKey = msg.WebhookType, msg.WebhookSettings, wm.Key
		d.Method, d.Headers, d.Fields = "", nil, nil
	}
	p.out = append(p.out, d)
	return nil
}

// readEntity decodes the event's snapshot into what conditions and templates see of the entity
// (p.entity) and the case its outcome is recorded on (p.caseID), and answers its labels (for the
// routers' entityLabels).
func (p *pass) readEntity() (labels map[string]string, err error) {
	switch p.e.EntityType {
	case notifyexpr.EntityAlerts:
		var inc oas.Incident
		if err := inc.UnmarshalJSON(p.e.Entity); err != nil {
			return nil, err
		}
		p.entity, p.caseID = notifyexpr.AlertEntity(inc, p.e.TeamID), p.e.CaseID
		if a, ok := p.entity["alert"].(map[string]any); ok {
			a["caseId"] = p.caseID // the case the incident belongs to ("" when none), for templates and bodies
			a["link"] = p.link("/mgmt/openapi/latest/incidents/incidents/v1/", inc.ID)
		}
		return stringLabels(p.entity, "alertDef", "entityLabels"), nil
	case notifyexpr.EntityCases:
		var c oas.Case
		if err := c.UnmarshalJSON(p.e.Entity); err != nil {
			return nil, err
		}
		p.entity, p.caseID = notifyexpr.CaseEntity(c, p.e.TeamID, p.e.Cause), c.ID
		if o, ok := p.entity["case"].(map[string]any); ok {
			o["link"] = p.link("/mgmt/openapi/latest/cases/cases/v1/", c.ID)
		}
		return stringLabels(p.entity, "case", "labels"), nil
	}
	return nil, fmt.Errorf("entity type %q has no notifications", p.e.EntityType)
}

// link is the URL of the entity of that id under path, on the server's external URL; "" without
// one.
func (p *pass) link(path, id string) string {
	if p.externalURL == "" || id == "" {
		return ""
	}
	return p.externalURL + path + url.PathEscape(id)
}

// stringLabels reads entity[outer][inner] as labels.
func stringLabels(entity map[string]any, outer, inner string) map[string]string {
	out := map[string]string{}
	o, _ := entity[outer].(map[string]any)
	switch m := o[inner].(type) {
	case map[string]string:
		return m
	case map[string]any:
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
	}
	return out
}
