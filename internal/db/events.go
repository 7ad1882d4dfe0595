package db

import (
	"context"
	"sync/atomic"
)

// Event is something that happened to one of a team's entities that the notification center may
// route to its connectors: an incident triggered, acknowledged or resolved; a case opened,
// changed or commented. Areas emit events inside the write transaction that makes them happen
// (Tx.Emit); the sink the program installed (DB.SetEventSink) receives them in that same
// transaction, after the area's own work, so what it writes (the delivery outbox) commits with
// the event or not at all.
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
	// Entity is what conditions and templates read about the entity, when the area that emits
	// the event has it at hand; nil lets the sink load it (inside the transaction, so it sees
	// the change), and only when a route may need it.
	Entity map[string]any
}

// EventSink receives a committed-to-be transaction's events, in the order emitted, inside that
// transaction. An error rolls the transaction back and is InTx's answer: a sink returns one only
// when it could not write what it must write with the event (a database error), never because
// an event matched nothing or could not be rendered.
type EventSink func(ctx context.Context, tx *Tx, events []Event) error

// eventSinkHolder is the installed sink; a pointer swapped atomically, so installing one while
// transactions run is safe.
type eventSinkHolder struct{ sink atomic.Pointer[EventSink] }

// SetEventSink installs sink as the receiver of every later transaction's events (nil removes
// it). Without a sink, events are dropped: nothing routes them.
func (d *DB) SetEventSink(sink EventSink) {
	if sink == nil {
		d.events.sink.Store(nil)
		return
	}
	d.events.sink.Store(&sink)
}

// eventSink returns the installed sink or nil.
func (d *DB) eventSink() EventSink {
	if p := d.events.sink.Load(); p != nil {
		return *p
	}
	return nil
}

// Emit records e to be handed to the installed event sink before the transaction commits (after
// fn and the BeforeCommit work added before the first Emit). A transaction that does not commit
// hands nothing; a PostgreSQL transaction run again hands only the events of the run that
// commits. Without a sink it does nothing.
func (tx *Tx) Emit(ctx context.Context, e Event) {
	if tx.sink == nil {
		return
	}
	if len(tx.emitted) == 0 {
		tx.BeforeCommit(func() error { return tx.sink(ctx, tx, tx.emitted) })
	}
	tx.emitted = append(tx.emitted, e)
}
