package db

import (
	"context"
	"fmt"
)

// Event is something that happened to one of a team's entities that the notification center may
// route to its connectors: an incident triggered, acknowledged or resolved; a case opened,
// changed or commented. Areas emit events inside the write transaction that makes them happen
// (Tx.Emit); the transaction records each that something could route (a team without routers
// records none), with a snapshot of its entity, in the table notification_events before it
// commits, and does nothing more about it: the delivery worker
// routes the recorded events later, outside any write transaction (internal/delivery), so no
// router, condition or template ever runs while the writer waits.
type Event struct {
	TeamID int64
	// EntityType names the kind of entity as the notification center's entity types do: "ALERTS"
	// for an incident, "CASES" for a case.
	EntityType string
	// EntityID is the entity's id within the team (an incident's id, a case's id).
	EntityID string
	// Kind is what happened: "triggered", "acknowledged", "resolved", "opened", "changed",
	// "commented".
	Kind string
	// Cause is the area's own name for what happened, finer than Kind (a case event's kind:
	// "created", "statusChanged", "comment", "assigned", …), "" when it has none.
	Cause string
	// Snapshot reads the entity as the transaction leaves it, the public object encoded as JSON,
	// and the case an incident belongs to ("" when none). It is called inside the transaction,
	// after the area's own work (see Emit); the area that emits the event provides it. An error
	// rolls the transaction back.
	Snapshot func(ctx context.Context, tx *Tx) (entity []byte, caseID string, err error)
	// SuppressedBy is the answer of the alert scheduler rules asked in the transaction for the
	// event's alert (RecordSuppression): nil when none was asked, else the id of the rule that
	// silences the alert, "" when none does.
	SuppressedBy *string
}

// RecordSuppression records, on the events this transaction emitted so far for the entity, the
// answer of the alert scheduler rules it asked at its own instant (ruleID, "" when no rule
// silences the alert), so that the routing uses it instead of asking again (alertschedules).
func (tx *Tx) RecordSuppression(entityType, entityID, ruleID string) {
	for i := range tx.emitted {
		if e := &tx.emitted[i]; e.EntityType == entityType && e.EntityID == entityID {
			e.SuppressedBy = &ruleID
		}
	}
}

// Emit records e to be written to notification_events before the transaction commits, when
// something could route it (RoutableCondition), after fn and the BeforeCommit work added before
// the first Emit, so that its snapshot sees the whole change. A transaction that does not commit
// records nothing; a PostgreSQL transaction run again records only the events of the run that
// commits. The events of one transaction keep the order they were emitted in (seq) and the
// transaction's time.
func (tx *Tx) Emit(ctx context.Context, e Event) {
	if len(tx.emitted) == 0 {
		tx.BeforeCommit(func() error { return tx.recordEvents(ctx) })
	}
	tx.emitted = append(tx.emitted, e)
}

// RoutableCondition is the SQL condition, on an event's team and entity type given as team and
// entityType (placeholders, columns or a quoted literal), that holds when something could route
// the event: the team has a notification router (any, even disabled or of another entity type), or, for an
// incident's event, an alert definition. These are what internal/routers routes through (its
// pass.route); with neither, routing the event would give no delivery, and recording it would
// cost every such write an outbox row and the delivery worker a claim, a lease and a delete. It
// reads the routers as the transaction sees them: an event is routed by routers that existed
// when its transaction wrote it (a router created later never sees it, as it never sees an event
// routed before it). An area that asks it in a statement of its own (a column of an UPDATE's
// RETURNING, on SQLite) gives the answer to Tx.KnowRoutable.
func RoutableCondition(team, entityType string) string {
	return `(EXISTS (SELECT 1 FROM notification_routers WHERE team_id = ` + team + `)
		OR (` + entityType + ` = 'ALERTS' AND EXISTS (SELECT 1 FROM alert_defs WHERE team_id = ` + team + `)))`
}

// recordRoutableEvent writes one event to notification_events when RoutableCondition holds.
// The parameters are cast: PostgreSQL types the columns of a SELECT from its parameters alone.
var recordRoutableEvent = `INSERT INTO notification_events
	(team_id, id, entity_type, entity_id, kind, cause, snapshot, case_id, created_at, seq, suppressed_by)
	SELECT CAST($1 AS BIGINT), CAST($2 AS TEXT), CAST($3 AS TEXT), CAST($4 AS TEXT), CAST($5 AS TEXT),
		CAST($6 AS TEXT), CAST($7 AS TEXT), CAST($8 AS TEXT), CAST($9 AS BIGINT), CAST($10 AS BIGINT),
		CAST($11 AS TEXT)
	WHERE ` + RoutableCondition("$1", "$3")

// mayRoute answers whether RoutableCondition holds for e, so that an event nothing would route
// costs no snapshot either (its entity read and encoded), nor a statement to record it. The
// transaction's earlier answers (KnowRoutable, its earlier events) are kept. On SQLite it asks
// when it has none; the write transaction holds SQLite's write lock, so the answer stays true
// until it commits. On PostgreSQL, with no answer yet, it answers true without asking, which
// would cost a round trip of its own: recordRoutableEvent asks as it inserts. An answer read
// earlier in a PostgreSQL transaction is as good as that one: a router created by a transaction
// that commits meanwhile may or may not be seen by either, as it may by any transaction that
// runs beside its creation.
func (tx *Tx) mayRoute(ctx context.Context, e Event) (bool, error) {
	key := routeQuestion{team: e.TeamID, alerts: e.EntityType == "ALERTS"}
	for _, a := range tx.routable {
		if a.question == key {
			return a.ok, nil
		}
	}
	if tx.Engine != SQLite {
		return true, nil
	}
	var ok bool
	if err := tx.QueryRowContext(ctx, `SELECT `+RoutableCondition("$1", "$2"), e.TeamID, e.EntityType).Scan(&ok); err != nil {
		return false, fmt.Errorf("ask whether the %s event of %s %s can be routed: %w", e.Kind, e.EntityType, e.EntityID, err)
	}
	tx.KnowRoutable(e.TeamID, e.EntityType, ok)
	return ok, nil
}

// KnowRoutable gives the transaction the answer of RoutableCondition for the team's events of
// entityType, read in this transaction, so that recording them asks no more (on SQLite a
// statement less a write; on either engine no snapshot and no statement for an event nothing
// could route). The answer must still hold when the transaction records its events:
// a transaction that creates or deletes the team's routers or alert definitions after asking
// does not call it.
func (tx *Tx) KnowRoutable(teamID int64, entityType string, ok bool) {
	key := routeQuestion{team: teamID, alerts: entityType == "ALERTS"}
	for i := range tx.routable {
		if tx.routable[i].question == key {
			tx.routable[i].ok = ok
			return
		}
	}
	tx.routable = append(tx.routable, routeAnswer{question: key, ok: ok})
}

// routeAnswer is RoutableCondition's answer to one question.
type routeAnswer struct {
	question routeQuestion
	ok       bool
}

// routeQuestion is what RoutableCondition's answer depends on: the team, and whether the event
// is an incident's (which an alert definition routes too).
type routeQuestion struct {
	team   int64
	alerts bool
}

// recordEvents writes the emitted events, each with its snapshot, where something could route
// them (RoutableCondition).
func (tx *Tx) recordEvents(ctx context.Context) error {
	for i, e := range tx.emitted {
		if ok, err := tx.mayRoute(ctx, e); err != nil {
			return err
		} else if !ok {
			continue
		}
		var entity []byte
		caseID := ""
		if e.Snapshot != nil {
			var err error
			if entity, caseID, err = e.Snapshot(ctx, tx); err != nil {
				return fmt.Errorf("snapshot of %s %s for its %s event: %w", e.EntityType, e.EntityID, e.Kind, err)
			}
		}
		if entity == nil {
			entity = []byte("null")
		}
		// Last in the transaction, and on PostgreSQL in the round trip that ends it: the check
		// for somewhere to route it costs no round trip of its own.
		tx.ExecAtEnd(fmt.Sprintf("record the %s event of %s %s", e.Kind, e.EntityType, e.EntityID),
			recordRoutableEvent, e.TeamID, tx.NewID(), e.EntityType, e.EntityID, e.Kind, e.Cause, string(entity), caseID,
			tx.Now.UnixMicro(), i, e.SuppressedBy)
	}
	return nil
}
