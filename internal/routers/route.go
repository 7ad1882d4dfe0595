package routers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/alertschedules"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/messages"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

// Sink returns the event sink that routes the incidents' and cases' events (db.Tx.Emit) to the
// team's routers and writes the resulting deliveries to the outbox, in the event's transaction:
// install it with db.DB.SetEventSink. logger records what a route could not do (a condition
// that does not evaluate, a target whose connector is gone); nil discards it.
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
// The sink returns an error only when the database fails: the event's transaction then rolls
// back, so a committed event always has its deliveries.
func Sink(logger *slog.Logger, defs Definitions) db.EventSink {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, tx *db.Tx, events []db.Event) error {
		teams := map[int64]*teamRouting{} // read once per team and transaction
		for _, e := range events {
			team, read := teams[e.TeamID]
			if !read {
				team = &teamRouting{}
				var err error
				if team.routers, err = activeRouters(ctx, tx, e.TeamID); err != nil {
					return err
				}
				if defs.TeamHasAny != nil {
					if team.hasAlertDefs, err = defs.TeamHasAny(ctx, tx, e.TeamID); err != nil {
						return err
					}
				}
				teams[e.TeamID] = team
			}
			if err := routeEvent(ctx, tx, logger, defs, team, e); err != nil {
				return fmt.Errorf("route the %s event of %s %s: %w", e.Kind, e.EntityType, e.EntityID, err)
			}
		}
		return nil
	}
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

// teamRouting is what the routing of a transaction read once about a team.
type teamRouting struct {
	routers      []oas.GlobalRouter // active, oldest first
	hasAlertDefs bool
}

// activeRouters are the team's routers that are not disabled, oldest first.
func activeRouters(ctx context.Context, tx *db.Tx, teamID int64) ([]oas.GlobalRouter, error) {
	var out []oas.GlobalRouter
	err := eachRouter(ctx, tx, teamID, func(r *oas.GlobalRouter) error {
		if !r.Disabled.Or(false) {
			out = append(out, *r)
		}
		return nil
	})
	return out, err
}

// routeEvent writes the deliveries of one event through the team's active routers, or, for an
// incident of an alert definition, as the definition says (routeDefinitionEvent).
func routeEvent(ctx context.Context, tx *db.Tx, logger *slog.Logger, defs Definitions, team *teamRouting, e db.Event) error {
	routers := routersOf(team.routers, oas.NotificationEntityType(e.EntityType))
	definitions := team.hasAlertDefs && defs.OfAlert != nil && e.EntityType == notifyexpr.EntityAlerts
	if len(routers) == 0 && !definitions {
		return nil
	}
	entity, labels, caseID, err := loadEntity(ctx, tx, e)
	if db.IsNotFound(err) {
		return nil // nothing left to tell about (not expected inside the event's own transaction)
	}
	if err != nil {
		return err
	}
	requestID := tx.NewID()
	if definitions {
		def, found, err := defs.OfAlert(ctx, tx, e.TeamID, labels)
		if err != nil {
			return err
		}
		if found {
			return routeDefinitionEvent(ctx, tx, logger, routers, e, def, entity, labels, caseID, requestID)
		}
	}
	return sendThroughRouters(ctx, tx, logger, e, routers, entity, labels, caseID, requestID, map[string]bool{})
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

// sendThroughRouters sends the event through each of routers that takes the entity's labels
// (Takes), to the targets its rules (or fallback) choose, once per connector (sent, by connector
// id, holds those the event was already sent to).
func sendThroughRouters(ctx context.Context, tx *db.Tx, logger *slog.Logger, e db.Event, routers []oas.GlobalRouter,
	entity map[string]any, labels map[string]string, caseID, requestID string, sent map[string]bool) error {
	entityType := oas.NotificationEntityType(e.EntityType)
	for _, r := range routers {
		if !Takes(r, labels) {
			continue
		}
		if err := sendToTargets(ctx, tx, logger, e, r, chosenTargets(r, entityType, entity, logger), entity, caseID, requestID, sent); err != nil {
			return err
		}
	}
	return nil
}

// sendToTargets enqueues the notification of each target whose connector the event has not been
// sent to yet (sent, by connector id), and marks it sent.
func sendToTargets(ctx context.Context, tx *db.Tx, logger *slog.Logger, e db.Event, r oas.GlobalRouter, targets []oas.RoutingTarget,
	entity map[string]any, caseID, requestID string, sent map[string]bool) error {
	for _, t := range targets {
		if sent[t.ConnectorId.Or("")] {
			continue
		}
		sent[t.ConnectorId.Or("")] = true
		if err := enqueue(ctx, tx, logger, e, r, t, entity, caseID, requestID); err != nil {
			return err
		}
	}
	return nil
}

// routeDefinitionEvent routes an event of an incident that an alert definition's alert made:
//
//   - While one of the team's alert scheduler rules silences the alert (its definition and
//     labels, now), nothing is sent: the suppression is logged (and recorded on the alert's event
//     in the feed by ingestion).
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
//     (sendToWebhooks).
func routeDefinitionEvent(ctx context.Context, tx *db.Tx, logger *slog.Logger, routers []oas.GlobalRouter, e db.Event, def oas.AlertDef,
	entity map[string]any, labels map[string]string, caseID, requestID string) error {
	defID := def.ID.Or("")
	if ruleID, silenced, err := alertschedules.Suppressing(ctx, tx, e.TeamID, defID, labels, tx.Now); err != nil {
		return err
	} else if silenced {
		logger.Info("alert notification suppressed by an alert scheduler rule",
			"alert_def_id", defID, "scheduler_rule", ruleID, "incident", e.EntityID, "event", e.Kind)
		return nil
	}
	p := def.AlertDefProperties.Value
	if ad, ok := entity["alertDef"].(map[string]any); ok {
		ad["id"] = defID
		ad["name"] = p.Name.Or("")
		ad["description"] = p.Description.Or("")
		ad["type"] = strings.TrimPrefix(string(p.Type.Or("")), "ALERT_DEF_TYPE_")
		ad["entityLabels"] = map[string]string(p.EntityLabels.Or(nil))
		ad["groupByKeys"] = p.GroupByKeys
	}
	if err := sendToWebhooks(ctx, tx, logger, e, def, entity, labels, requestID); err != nil {
		return err
	}
	group := p.NotificationGroup.Value
	if len(group.Destinations) == 0 && !group.Router.Set {
		return sendThroughRouters(ctx, tx, logger, e, routers, entity, labels, caseID, requestID, map[string]bool{})
	}
	notifies := func(on oas.OptAlertDefNotifyOn) bool { return notifiesOn(e.Kind, on) }
	sent := map[string]bool{}
	var direct []oas.RoutingTarget
	for _, d := range group.Destinations {
		if notifies(d.NotifyOn) {
			direct = append(direct, oas.RoutingTarget{ConnectorId: d.ConnectorId, PresetId: d.PresetId})
		}
	}
	// A destination's delivery names the definition where a router's names the router.
	source := oas.GlobalRouter{ID: oas.NewOptString(defID), Name: oas.NewOptString("alert definition " + p.Name.Or(""))}
	if err := sendToTargets(ctx, tx, logger, e, source, direct, entity, caseID, requestID, sent); err != nil {
		return err
	}
	if group.Router.Set && notifies(group.Router.Value.NotifyOn) {
		routerID := group.Router.Value.ID.Or("")
		if routerID == "" {
			return sendThroughRouters(ctx, tx, logger, e, routers, entity, definitionLabels(labels, p), caseID, requestID, sent)
		}
		var chosen *oas.GlobalRouter
		for i := range routers {
			if routers[i].ID.Or("") == routerID {
				chosen = &routers[i]
			}
		}
		if chosen == nil {
			logger.Warn("alert definition's router is gone, disabled or of cases only; nothing is sent through it",
				"alert_def_id", defID, "router", routerID)
			return nil
		}
		targets := chosenTargets(*chosen, oas.NotificationEntityType(e.EntityType), entity, logger)
		if err := sendToTargets(ctx, tx, logger, e, *chosen, targets, entity, caseID, requestID, sent); err != nil {
			return err
		}
	}
	return nil
}

// definitionLabels are the labels a definition's alert is routed by: the alert's, with the
// definition's entityLabels over them (a new map; labels is left as it is).
func definitionLabels(labels map[string]string, p oas.AlertDefProperties) map[string]string {
	out := make(map[string]string, len(labels))
	maps.Copy(out, labels)
	maps.Copy(out, p.EntityLabels.Or(nil))
	return out
}

// chosenTargets are the targets router r sends an entity of the type to: those of every rule
// whose condition holds, else the fallback ones.
func chosenTargets(r oas.GlobalRouter, entityType oas.NotificationEntityType, entity map[string]any, logger *slog.Logger) []oas.RoutingTarget {
	var out []oas.RoutingTarget
	matched := false
	for i, rule := range r.Rules {
		if et := rule.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED); et != oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED && et != entityType {
			continue
		}
		holds, err := notifyexpr.EvalCondition(rule.Condition.Or(""), entity)
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

// enqueue composes the notification of one target and writes it to the outbox.
func enqueue(ctx context.Context, tx *db.Tx, logger *slog.Logger, e db.Event, r oas.GlobalRouter, t oas.RoutingTarget,
	entity map[string]any, caseID, requestID string) error {
	c, err := connectors.Load(ctx, tx, e.TeamID, t.ConnectorId.Or(""))
	if db.IsNotFound(err) {
		logger.Warn("notification target's connector is gone", "router", r.ID.Or(""), "connector", t.ConnectorId.Or(""))
		return nil
	}
	if err != nil {
		return err
	}
	if ty, ok := connectors.TypeOf(c.Type); !ok || !ty.Delivered {
		return nil // stored and checked, not sent through: the type's summary says so
	}
	if c.Type == oas.ConnectorTypeSERVICENOW && e.Kind != string(delivery.Triggered) && e.Kind != string(delivery.Opened) {
		// A ServiceNow connector creates an incident per alert or case opened; mgmtapi does not
		// keep the incident's sys_id, so an acknowledgement, resolution or change is not sent (a
		// second incident would be wrong); the incident carries the correlation_id by which an
		// instance's own rules may close it.
		return nil
	}
	id, err := messages.IntegrationID(c, entity)
	if err != nil {
		logger.Warn("notification target's integrationId does not render; nothing is sent",
			"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
		return nil
	}
	if id != "" {
		c.Fields["integrationId"] = id // its template for the entity type wins, as for every field
	}
	if err := c.Resolve(ctx, tx, e.TeamID, outgoingwebhooks.Integrations{}); db.IsNotFound(err) || errors.Is(err, connectors.ErrIntegrationType) {
		// The outgoing webhook the connector names was deleted since (or changed type, which a
		// webhook in use cannot): nothing to send to, and the write that caused the event stands.
		logger.Warn("notification target's integration is gone or of another type; nothing is sent",
			"router", r.ID.Or(""), "connector", c.ID, "integration", c.Fields["integrationId"])
		return nil
	} else if err != nil {
		return err
	}
	preset, err := messages.Preset(ctx, tx, e.TeamID, t.PresetId.Or(""), c.Type, oas.NotificationEntityType(e.EntityType))
	if err != nil && !db.IsNotFound(err) {
		return err
	}
	msg, err := messages.Compose(ctx, tx, e.TeamID, c, preset, entity)
	if err != nil {
		logger.Warn("notification preset does not render; the fallback message is sent",
			"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
		if msg, err = messages.Fallback(c, entity, err); err != nil {
			// Fallback reads nothing: its failure is the connector's (an email connector stored
			// with recipients the current rule refuses), never the database's, and must not
			// refuse the incident or case write that caused it.
			logger.Warn("notification cannot be composed; it is dropped",
				"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
			return nil
		}
	}
	d := delivery.Delivery{
		TeamID: e.TeamID, RequestID: requestID, RouterID: r.ID.Or(""), RouterName: r.Name.Or(""),
		ConnectorID: c.ID, ConnectorName: c.Name, ConnectorType: msg.Type,
		URL: msg.URL, RoutingKey: msg.RoutingKey, Method: msg.Method, Headers: msg.Headers, Fields: msg.Fields,
		EntityType: e.EntityType, EntityID: e.EntityID, EventKind: delivery.EventKind(e.Kind), CaseID: caseID,
	}
	if msg.Webhook != nil {
		// An EVENTBRIDGE connector: an outgoing webhook record of the webhook it names, sent by
		// the worker through the webhook type's delivery (PutEvents).
		wm := *msg.Webhook
		wm.Key = "mgmtapi/" + strconv.FormatInt(e.TeamID, 10) + "/" + e.EntityType + "/" + e.EntityID
		wm.Time = tx.Now.UTC()
		d.Message, _ = json.Marshal(wm) // strings, maps of strings and a time: always encodes
		d.WebhookType, d.WebhookSettings, d.DedupKey = msg.WebhookType, msg.WebhookSettings, wm.Key
		d.Method, d.Headers, d.Fields = "", nil, nil
	}
	err = delivery.Enqueue(ctx, tx, d)
	var incomplete delivery.IncompleteError
	if errors.As(err, &incomplete) {
		// A notification that cannot be sent as composed (a header mgmtapi sets itself, say)
		// must not refuse the incident or case write that caused it.
		logger.Warn("notification cannot be sent as composed; it is dropped",
			"router", r.ID.Or(""), "connector", c.ID, "error", err.Error())
		return nil
	}
	return err
}

// loadEntity reads what conditions and templates see of the event's entity, its labels (for the
// routers' entityLabels) and the case its outcome is recorded on.
func loadEntity(ctx context.Context, tx *db.Tx, e db.Event) (entity map[string]any, labels map[string]string, caseID string, err error) {
	switch e.EntityType {
	case notifyexpr.EntityAlerts:
		inc, caseID, err := incidents.Load(ctx, tx, e.TeamID, e.EntityID)
		if err != nil {
			return nil, nil, "", err
		}
		entity = notifyexpr.AlertEntity(inc, e.TeamID)
		if a, ok := entity["alert"].(map[string]any); ok {
			a["caseId"] = caseID // the case the incident belongs to ("" when none), for templates and bodies
		}
		return entity, stringLabels(entity, "alertDef", "entityLabels"), caseID, nil
	case notifyexpr.EntityCases:
		c, err := cases.Load(ctx, tx, e.TeamID, e.EntityID)
		if err != nil {
			return nil, nil, "", err
		}
		entity = notifyexpr.CaseEntity(c, e.TeamID, e.Cause)
		return entity, stringLabels(entity, "case", "labels"), c.ID, nil
	}
	return nil, nil, "", db.ErrNotFound
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
