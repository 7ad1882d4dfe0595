package db

import (
	"context"
	"fmt"
)

// Event is something that happened to one of a team's entities that the notification center may
// route to its connectors: an incident triggered, acknowledged or resolved; a case opened,
// changed or commented. Areas emit events inside the write transaction that makes them happen
// (Tx.Emit); the transaction records each, with a snapshot of its entity, in the table
// notification_events before it commits, and does nothing more about it: the delivery worker
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

// Emit records e to be written to notification_events before the transaction commits, after fn
// and the BeforeCommit work added before the first Emit, so that its snapshot sees the whole
// change. A transaction that does not commit records nothing; a PostgreSQL transaction run again
// records only the events of the run that commits. The events of one transaction keep the order
// they were emitted in (seq) and the transaction's time.
func (tx *Tx) Emit(ctx context.Context, e Event) {
	if len(tx.emitted) == 0 {
		tx.BeforeCommit(func() error { return tx.recordEvents(ctx) })
	}
	tx.emitted = append(tx.emitted, e)
}

// recordEvents writes the emitted events, each with its snapshot.
func (tx *Tx) recordEvents(ctx context.Context) error {
	for i, e := range tx.emitted {
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
		// Last in the transaction, and on PostgreSQL in the round trip that ends it.
		tx.ExecAtEnd(fmt.Sprintf("record the %s event of %s %s", e.Kind, e.EntityType, e.EntityID),
			`INSERT INTO notification_events
			(team_id, id, entity_type, entity_id, kind, cause, snapshot, case_id, created_at, seq, suppressed_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			e.TeamID, tx.NewID(), e.EntityType, e.EntityID, e.Kind, e.Cause, string(entity), caseID,
			tx.Now.UnixMicro(), i, e.SuppressedBy)
	}
	return nil
}
