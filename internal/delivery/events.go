package delivery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
)

// Event is one event a write transaction recorded for the notification center (db.Tx.Emit), as
// the worker routes it.
type Event struct {
	TeamID int64
	// ID is the recorded event's own id.
	ID string
	// EntityType ("ALERTS", "CASES") and EntityID name the entity, Kind what happened to it,
	// Cause the emitting area's finer name for it ("" when none).
	EntityType, EntityID string
	Kind                 EventKind
	Cause                string
	// Entity is the entity as its transaction left it: the public Incident or Case object.
	Entity json.RawMessage
	// CaseID is the case an incident belongs to, or the case itself ("" when none).
	CaseID string
	// At is the time of the transaction that recorded the event: the time conditions,
	// suppression and retriggering are judged at.
	At time.Time
	// SuppressedBy is the answer of the alert scheduler rules the recording transaction asked
	// for the event's alert: nil when it asked nothing (the routing asks), else the id of the
	// rule that silenced the alert, "" when none did.
	SuppressedBy *string
}

// Router turns a recorded event into the deliveries it causes (internal/routers.Router, set by
// the wiring): it matches the team's routers and alert definitions, asks the alert scheduler
// rules, renders, and answers one Delivery per receiver. It reads committed state through q and
// writes nothing; it answers an error only when the database fails (the event is then routed
// again later), never because an event matched nothing or could not be rendered.
type Router interface {
	Route(ctx context.Context, q db.Querier, e Event) ([]Delivery, error)
}

// DueEvents is what a Router also implements when events come due with time rather than with a
// write (internal/routers: an alert's reminder once per retriggering period): the worker calls
// RecordDueEvents before each routing pass, and routes the events it records in that pass. It
// answers how many it recorded; its error is the database's only.
type DueEvents interface {
	RecordDueEvents(ctx context.Context, database *db.DB) (recorded int, err error)
}

// maxRouteAttempts bounds the routings begun for one event: an event whose routing failed this
// often (the database failing each time, or a worker dying while routing it) is dropped, logged,
// so that the events of its entity after it are not held for good.
const maxRouteAttempts = 5

// routeBatch bounds the events one claim leases.
const routeBatch = 64

// routeEvents routes the recorded events that are due: it leases a batch, oldest first and at
// most one per entity (an entity's next event waits until the one before it is routed, so a
// resolution's deliveries never precede its trigger's), routes each outside any write
// transaction, and then, in one short transaction per event, writes its deliveries and deletes
// it. routed counts the events done; err is the database's, the first routing's among them. Without
// Options.Router it does nothing: the events wait for a worker that has one.
func (w *Worker) routeEvents(ctx context.Context) (routed int, err error) {
	var failed error
	defer func() {
		if err == nil {
			err = failed
		}
	}()
	if w.opts.Router == nil {
		return 0, nil
	}
	if timed, ok := w.opts.Router.(DueEvents); ok {
		if _, err := timed.RecordDueEvents(ctx, w.opts.DB); err != nil {
			return 0, fmt.Errorf("record the events due: %w", err)
		}
	}
	var due int
	err = w.opts.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM notification_events
		WHERE lease_until <= $1 LIMIT 1) due`, w.opts.DB.Now().UnixMicro()).Scan(&due)
	if err != nil || due == 0 {
		return 0, err
	}
	events, attempts, err := w.claimEvents(ctx)
	if err != nil {
		return 0, err
	}
	for i, e := range events {
		log := w.opts.Logger.With("event", e.ID, "entity_type", e.EntityType, "entity", e.EntityID, "kind", string(e.Kind))
		if attempts[i] > maxRouteAttempts {
			log.Error("notification event dropped: its routing failed too often", "attempts", attempts[i])
			if err := w.finishEvent(ctx, e, nil); err != nil && !errors.Is(err, errLeaseLost) {
				return routed, err
			}
			w.events.WithLabelValues("dropped").Inc()
			continue
		}
		routeCtx := ctx
		if w.opts.Serving != nil {
			routeCtx = notifyexpr.Paced(ctx, w.opts.Serving)
		}
		deliveries, err := w.opts.Router.Route(routeCtx, w.opts.DB.Read(), e)
		if err != nil {
			// The lease keeps the event, and the events of its entity after it, until it ends;
			// the batch's other events go on.
			log.Warn("notification event not routed; it is routed again when its lease ends", "error", err.Error())
			failed = errors.Join(failed, err)
			continue
		}
		err = w.finishEvent(ctx, e, deliveries)
		if errors.Is(err, errLeaseLost) {
			log.Warn("notification event was taken by another worker while this one routed it; its deliveries are not written here")
			continue
		}
		if err != nil {
			return routed, err
		}
		w.events.WithLabelValues("routed").Inc()
		routed++
	}
	return routed, nil
}

// RouteEvents routes every recorded event that is due, and those recorded while it runs, into the
// outbox, sending nothing; it answers the first error of the database. Tests that read the
// outbox call it (Drain does it too).
func (w *Worker) RouteEvents(ctx context.Context) error {
	for {
		routed, err := w.routeEvents(ctx)
		if err != nil || routed == 0 {
			return err
		}
	}
}

// errLeaseLost is finishEvent's answer when the event is no longer this worker's.
var errLeaseLost = errors.New("the event's lease was lost")

// claimEvents leases up to routeBatch due events, oldest first, skipping any whose entity has an
// earlier event still recorded; on PostgreSQL the rows other workers are claiming are skipped.
// attempts are the routings begun of each, this one included.
func (w *Worker) claimEvents(ctx context.Context) (events []Event, attempts []int, err error) {
	err = w.opts.DB.InTx(db.WithoutAudit(ctx), func(tx *db.Tx) error {
		events, attempts = events[:0], attempts[:0]
		q := `SELECT n.team_id, n.id FROM notification_events n WHERE n.lease_until <= $1
			AND NOT EXISTS (SELECT 1 FROM notification_events m WHERE m.team_id = n.team_id
				AND m.entity_type = n.entity_type AND m.entity_id = n.entity_id
				AND (m.created_at < n.created_at OR (m.created_at = n.created_at AND m.seq < n.seq)))
			ORDER BY n.created_at, n.seq LIMIT $2`
		if tx.Engine == db.Postgres {
			q += ` FOR UPDATE OF n SKIP LOCKED`
		}
		rows, err := tx.QueryContext(ctx, q, tx.Now.UnixMicro(), routeBatch)
		if err != nil {
			return fmt.Errorf("claim notification events: %w", err)
		}
		type key struct {
			team int64
			id   string
		}
		var picked []key
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.team, &k.id); err != nil {
				rows.Close()
				return err
			}
			picked = append(picked, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		until := tx.Now.Add(w.opts.Lease).UnixMicro()
		for _, k := range picked {
			var (
				e               Event
				kind, entity    string
				at              int64
				attemptsOfEvent int
				suppressedBy    sql.NullString
			)
			err := tx.QueryRowContext(ctx, `UPDATE notification_events
				SET lease_owner = $3, lease_until = $4, attempts = attempts + 1
				WHERE team_id = $1 AND id = $2
				RETURNING team_id, id, entity_type, entity_id, kind, cause, snapshot, case_id, created_at, attempts, suppressed_by`,
				k.team, k.id, w.id, until).Scan(&e.TeamID, &e.ID, &e.EntityType, &e.EntityID, &kind, &e.Cause,
				&entity, &e.CaseID, &at, &attemptsOfEvent, &suppressedBy)
			if err != nil {
				return fmt.Errorf("claim notification event: %w", err)
			}
			if suppressedBy.Valid {
				e.SuppressedBy = &suppressedBy.String
			}
			e.Kind, e.Entity, e.At = EventKind(kind), json.RawMessage(entity), time.UnixMicro(at).UTC()
			events = append(events, e)
			attempts = append(attempts, attemptsOfEvent)
		}
		return nil
	})
	return events, attempts, err
}

// finishEvent writes an event's deliveries and deletes it, in one transaction, if the event is
// still this worker's (errLeaseLost otherwise, and nothing is written). A delivery the outbox
// refuses as composed (IncompleteError) is logged and left out: it never holds the others.
func (w *Worker) finishEvent(ctx context.Context, e Event, deliveries []Delivery) error {
	return w.opts.DB.InTx(db.WithoutAudit(ctx), func(tx *db.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM notification_events WHERE team_id = $1 AND id = $2 AND lease_owner = $3`,
			e.TeamID, e.ID, w.id)
		if err := db.OneRow(res, err, "finish notification event"); db.IsNotFound(err) {
			return errLeaseLost
		} else if err != nil {
			return err
		}
		for _, d := range deliveries {
			err := Enqueue(ctx, tx, d)
			var incomplete IncompleteError
			if errors.As(err, &incomplete) {
				w.opts.Logger.Warn("notification cannot be sent as composed; it is dropped",
					"router", d.RouterID, "connector", d.ConnectorID, "event", e.ID, "error", err.Error())
				continue
			}
			if err != nil {
				return fmt.Errorf("enqueue the delivery to %s: %w", d.ConnectorID, err)
			}
		}
		return nil
	})
}
