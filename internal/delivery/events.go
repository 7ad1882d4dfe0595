package delivery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// claimWindow bounds the due events one claim reads, oldest first: a claim costs the same
// whatever the backlog (a comment on a hot case records one event each, faster than they are
// routed under load, and a claim that read the whole backlog ran inside the writer's turn).
const claimWindow = 4 * routeBatch

// routeEvents routes the recorded events that are due: it leases a batch, oldest first, of each
// entity only events whose earlier events it leases in the same batch (an entity's next event
// waits until the one before it is routed, so a resolution's deliveries never precede its
// trigger's), routes them in that order outside any write transaction, and writes their
// deliveries and deletes them in short transactions (see flush). An event whose routing fails keeps its
// lease, and the later events of its entity in the batch are given back unrouted. routed counts
// the events done; err is the database's, the first routing's among them. Without
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
	type entity struct {
		team    int64
		typ, id string
	}
	held := map[entity]bool{} // entities with an event that failed in this batch
	var finished []finishedEvent
	var givenBack []Event
	// flush finishes the events routed so far: it runs at the end of the pass, and before the
	// next routing whenever an event gave deliveries, since routing reads the outbox (a
	// resolution goes where its trigger went): what the router sees is what it saw when every
	// event was finished before the next was routed. Events without deliveries leave nothing
	// the router reads until then, and are finished together.
	flush := func() error {
		lost, err := w.finishEvents(ctx, finished, givenBack)
		if err != nil {
			return err
		}
		for _, f := range finished {
			switch {
			case lost[f.event.ID]:
				w.opts.Logger.Warn("notification event was taken by another worker while this one routed it; its deliveries are not written here",
					"event", f.event.ID, "entity_type", f.event.EntityType, "entity", f.event.EntityID, "kind", string(f.event.Kind))
			case f.dropped:
				w.events.WithLabelValues("dropped").Inc()
			default:
				w.events.WithLabelValues("routed").Inc()
				routed++
			}
		}
		finished, givenBack = finished[:0], givenBack[:0]
		return nil
	}
	for i, e := range events {
		ent := entity{e.TeamID, e.EntityType, e.EntityID}
		if held[ent] {
			givenBack = append(givenBack, e)
			continue
		}
		log := w.opts.Logger.With("event", e.ID, "entity_type", e.EntityType, "entity", e.EntityID, "kind", string(e.Kind))
		if attempts[i] > maxRouteAttempts {
			log.Error("notification event dropped: its routing failed too often", "attempts", attempts[i])
			finished = append(finished, finishedEvent{event: e, dropped: true})
			continue
		}
		routeCtx := ctx
		if !w.opts.InProcessTemplates {
			routeCtx = notifyexpr.Offloaded(routeCtx)
		}
		if w.opts.Serving != nil {
			routeCtx = notifyexpr.Paced(routeCtx, w.opts.Serving)
		}
		deliveries, err := w.opts.Router.Route(routeCtx, w.opts.DB.Read(), e)
		if err != nil {
			// The lease keeps the event, and the events of its entity after it, until it ends;
			// the batch's other events go on.
			log.Warn("notification event not routed; it is routed again when its lease ends", "error", err.Error())
			failed = errors.Join(failed, err)
			held[ent] = true
			continue
		}
		finished = append(finished, finishedEvent{event: e, deliveries: deliveries})
		if len(deliveries) > 0 {
			if err := flush(); err != nil {
				return routed, err
			}
		}
	}
	if err := flush(); err != nil {
		return routed, err
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

// claimEvents leases up to routeBatch due events, oldest first, read from the claimWindow oldest
// due ones: of each entity, its first event there only when no earlier one is recorded (its head;
// an earlier one is routed, or leased, elsewhere or later), and the events after it in the window.
// Every event of an entity between its head and a later leased one is due, so it is in the
// window and leased too: a worker routes an entity's events in order, and no other worker holds
// one of them. On PostgreSQL the rows other workers are claiming are skipped; those are heads and
// what follows them, so an entity whose head is skipped has no head in the window. attempts are
// the routings begun of each, this one included.
func (w *Worker) claimEvents(ctx context.Context) (events []Event, attempts []int, err error) {
	err = w.opts.DB.InTx(db.WithLazyCommit(db.WithoutAudit(ctx)), func(tx *db.Tx) error {
		events, attempts = events[:0], attempts[:0]
		window := `SELECT team_id, id, entity_type, entity_id, created_at, seq FROM notification_events
			WHERE lease_until <= $1 ORDER BY created_at, seq LIMIT $2`
		if tx.Engine == db.Postgres {
			window += ` FOR UPDATE SKIP LOCKED`
		}
		// Only an entity's first event in the window asks whether an earlier one is recorded:
		// one index probe per entity, not per event.
		rows, err := tx.QueryContext(ctx, `SELECT w.team_id, w.id, w.entity_type, w.entity_id,
			CASE WHEN w.first THEN NOT EXISTS (SELECT 1 FROM notification_events m WHERE m.team_id = w.team_id
				AND m.entity_type = w.entity_type AND m.entity_id = w.entity_id
				AND (m.created_at < w.created_at OR (m.created_at = w.created_at AND m.seq < w.seq))) END
			FROM (SELECT n.*, row_number() OVER (PARTITION BY n.team_id, n.entity_type, n.entity_id
				ORDER BY n.created_at, n.seq) = 1 AS first FROM (`+window+`) n) w
			ORDER BY w.created_at, w.seq`, tx.Now.UnixMicro(), claimWindow)
		if err != nil {
			return fmt.Errorf("claim notification events: %w", err)
		}
		type entity struct {
			team    int64
			typ, id string
		}
		type key struct {
			team int64
			id   string
		}
		claimable := map[entity]bool{} // by the entity's first event in the window
		var picked []key
		for rows.Next() {
			var k key
			var ent entity
			var head sql.NullBool // NULL for an entity's later events
			if err := rows.Scan(&k.team, &k.id, &ent.typ, &ent.id, &head); err != nil {
				rows.Close()
				return err
			}
			ent.team = k.team
			ok, seen := claimable[ent]
			if !seen {
				ok = head.Bool
				claimable[ent] = ok
			}
			if ok && len(picked) < routeBatch {
				picked = append(picked, k)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(picked) == 0 {
			return nil
		}
		// One statement per team leases its events (team_id = … AND id IN (…) is a search of
		// the primary key on both engines; SQLite scans the table for a list of row values).
		var teams []int64
		byTeam := map[int64][]string{}
		for _, k := range picked {
			if _, ok := byTeam[k.team]; !ok {
				teams = append(teams, k.team)
			}
			byTeam[k.team] = append(byTeam[k.team], k.id)
		}
		claimed := make(map[key]int, len(picked))
		var all []Event
		var allAttempts []int
		for _, team := range teams {
			args := []any{w.id, tx.Now.Add(w.opts.Lease).UnixMicro(), team}
			var in strings.Builder
			for i, id := range byTeam[team] {
				if i > 0 {
					in.WriteString(", ")
				}
				fmt.Fprintf(&in, "$%d", len(args)+1)
				args = append(args, id)
			}
			rows, err = tx.QueryContext(ctx, `UPDATE notification_events
				SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
				WHERE team_id = $3 AND id IN (`+in.String()+`)
				RETURNING team_id, id, entity_type, entity_id, kind, cause, snapshot, case_id, created_at, attempts, suppressed_by`, args...)
			if err != nil {
				return fmt.Errorf("claim notification events: %w", err)
			}
			for rows.Next() {
				var (
					e            Event
					kind, entity string
					at           int64
					n            int
					suppressedBy sql.NullString
				)
				if err := rows.Scan(&e.TeamID, &e.ID, &e.EntityType, &e.EntityID, &kind, &e.Cause, &entity, &e.CaseID, &at, &n,
					&suppressedBy); err != nil {
					rows.Close()
					return fmt.Errorf("claim notification event: %w", err)
				}
				if suppressedBy.Valid {
					e.SuppressedBy = &suppressedBy.String
				}
				e.Kind, e.Entity, e.At = EventKind(kind), json.RawMessage(entity), time.UnixMicro(at).UTC()
				claimed[key{e.TeamID, e.ID}] = len(all)
				all = append(all, e)
				allAttempts = append(allAttempts, n)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("claim notification events: %w", err)
			}
		}
		for _, k := range picked { // RETURNING promises no order
			if i, ok := claimed[k]; ok {
				events = append(events, all[i])
				attempts = append(attempts, allAttempts[i])
			}
		}
		return nil
	})
	return events, attempts, err
}

// finishedEvent is an event of a batch whose routing is over: routed into deliveries, or dropped
// after too many attempts (no deliveries).
type finishedEvent struct {
	event      Event
	deliveries []Delivery
	dropped    bool
}

// finishEvents writes the deliveries of the finished events and deletes them, in order, and
// gives the givenBack events their lease back (unrouted, their attempt not counted), all in one
// transaction. An event no longer this worker's (its lease ended and another worker took it) is
// left to that worker, nothing of it written: lost names those. A delivery the outbox refuses as
// composed (IncompleteError) is logged and left out: it never holds the others.
func (w *Worker) finishEvents(ctx context.Context, finished []finishedEvent, givenBack []Event) (lost map[string]bool, err error) {
	if len(finished) == 0 && len(givenBack) == 0 {
		return nil, nil
	}
	err = w.opts.DB.InTx(db.WithLazyCommit(db.WithoutAudit(ctx)), func(tx *db.Tx) error {
		lost = map[string]bool{}
		for _, f := range finished {
			e := f.event
			res, err := tx.ExecContext(ctx, `DELETE FROM notification_events WHERE team_id = $1 AND id = $2 AND lease_owner = $3`,
				e.TeamID, e.ID, w.id)
			if err := db.OneRow(res, err, "finish notification event"); db.IsNotFound(err) {
				lost[e.ID] = true
				continue
			} else if err != nil {
				return err
			}
			for _, d := range f.deliveries {
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
		}
		for _, e := range givenBack {
			if _, err := tx.ExecContext(ctx, `UPDATE notification_events SET lease_until = 0, attempts = attempts - 1
				WHERE team_id = $1 AND id = $2 AND lease_owner = $3`, e.TeamID, e.ID, w.id); err != nil {
				return fmt.Errorf("give back notification event: %w", err)
			}
		}
		return nil
	})
	return lost, err
}
