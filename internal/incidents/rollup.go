package incidents

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// rollupKey is one row of incident_rollup: the fields of an incident that E18 groups by or filters
// on and that have one value per incident (labels and times aside).
type rollupKey struct {
	name, application, subsystem, severity, state, status, assignedTo, meta string
	muted                                                                   bool
}

// rollupEntry is an incident as incident_rollup counts it: its row and its times.
type rollupEntry struct {
	key     rollupKey
	created int64
	closed  sql.NullInt64
	update  int64
}

// rollupKeyColumns are incident_rollup's key columns after team_id, named as in incidents too.
const rollupKeyColumns = `name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`

// rollupKeyMatch is the condition on rollupKeyColumns with parameters $2 to $10 ($1 is the team).
const rollupKeyMatch = `name = $2 AND application_name = $3 AND subsystem_name = $4 AND severity = $5 AND state = $6
	AND status = $7 AND assigned_to = $8 AND meta_labels = $9 AND is_muted = $10`

func (k rollupKey) args(teamID int64) []any {
	return []any{teamID, k.name, k.application, k.subsystem, k.severity, k.state, k.status, k.assignedTo, k.meta, k.muted}
}

// readRollupEntry reads the incident as incident_rollup counts it, inside tx.
func readRollupEntry(ctx context.Context, tx *db.Tx, teamID int64, id string) (rollupEntry, error) {
	var e rollupEntry
	k := &e.key
	err := tx.QueryRowContext(ctx, `SELECT `+rollupKeyColumns+`, created_at, closed_at, last_state_update_time
		FROM incidents WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&k.name, &k.application, &k.subsystem,
		&k.severity, &k.state, &k.status, &k.assignedTo, &k.meta, &k.muted, &e.created, &e.closed, &e.update)
	if err != nil {
		return e, fmt.Errorf("read incident for its rollup: %w", err)
	}
	return e, nil
}

// rollupDelta is a transaction's change to one incident_rollup row: incidents in minus out, the
// extremes of the times of the incidents that came in (or whose times grew in place), and the
// incidents that left (whose times, if they were the row's extremes, make it recompute them).
type rollupDelta struct {
	n        int64
	arrived  bool
	first    int64
	closed   sql.NullInt64
	update   int64
	departed []rollupEntry
}

func (d *rollupDelta) merge(e rollupEntry) {
	if !d.arrived || e.created < d.first {
		d.first = e.created
	}
	if e.closed.Valid && (!d.closed.Valid || e.closed.Int64 > d.closed.Int64) {
		d.closed = e.closed
	}
	if !d.arrived || e.update > d.update {
		d.update = e.update
	}
	d.arrived = true
}

// rollupDeltas are a transaction's changes to incident_rollup, written once before it commits
// in key order (as countDeltas, so that concurrent transactions cannot deadlock).
type rollupDeltas map[rollupKey]*rollupDelta

type rollupDeltasKey struct{ teamID int64 }

func rollupOf(ctx context.Context, tx *db.Tx, teamID int64) rollupDeltas {
	return tx.Local(rollupDeltasKey{teamID}, func() any {
		d := rollupDeltas{}
		tx.BeforeCommit(func() error { return d.write(ctx, tx, teamID) })
		return d
	}).(rollupDeltas)
}

func (d rollupDeltas) at(k rollupKey) *rollupDelta {
	if d[k] == nil {
		d[k] = &rollupDelta{}
	}
	return d[k]
}

// addRollup counts a new incident when tx commits.
func addRollup(ctx context.Context, tx *db.Tx, teamID int64, e rollupEntry) {
	at := rollupOf(ctx, tx, teamID).at(e.key)
	at.n++
	at.merge(e)
}

// moveRollup records that an incident changed from one entry to another when tx commits: in
// place when its row is the same and its times only grew, else out of one row and into the other.
func moveRollup(ctx context.Context, tx *db.Tx, teamID int64, from, to rollupEntry) {
	if from == to {
		return
	}
	deltas := rollupOf(ctx, tx, teamID)
	grew := from.created == to.created && to.update >= from.update &&
		(!from.closed.Valid || (to.closed.Valid && to.closed.Int64 >= from.closed.Int64))
	if from.key == to.key && grew {
		deltas.at(to.key).merge(to)
		return
	}
	out := deltas.at(from.key)
	out.n--
	out.departed = append(out.departed, from)
	in := deltas.at(to.key)
	in.n++
	in.merge(to)
}

// write applies the deltas in key order. A row whose count reaches 0 is removed; a row that an
// incident holding one of its extremes left recomputes its times from incidents_by_rollup (a
// range scan of the row's own incidents).
func (d rollupDeltas) write(ctx context.Context, tx *db.Tx, teamID int64) error {
	keys := make([]rollupKey, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rollupKey) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.application, b.application), cmp.Compare(a.subsystem, b.subsystem),
			cmp.Compare(a.severity, b.severity), cmp.Compare(a.state, b.state), cmp.Compare(a.status, b.status),
			cmp.Compare(a.assignedTo, b.assignedTo), cmp.Compare(a.meta, b.meta), cmpBool(a.muted, b.muted))
	})
	for _, k := range keys {
		if err := d[k].write(ctx, tx, teamID, k); err != nil {
			return fmt.Errorf("roll incidents up: %w", err)
		}
	}
	return nil
}

func (delta *rollupDelta) write(ctx context.Context, tx *db.Tx, teamID int64, k rollupKey) error {
	args := k.args(teamID)
	var n, first, update int64
	var closed sql.NullInt64
	var err error
	if delta.arrived {
		err = tx.QueryRowContext(ctx, `INSERT INTO incident_rollup (team_id, `+rollupKeyColumns+`, n, first_created, last_closed, last_update)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (team_id, `+rollupKeyColumns+`) DO UPDATE SET n = incident_rollup.n + excluded.n,
				first_created = CASE WHEN excluded.first_created < incident_rollup.first_created
					THEN excluded.first_created ELSE incident_rollup.first_created END,
				last_closed = CASE WHEN incident_rollup.last_closed IS NULL OR excluded.last_closed > incident_rollup.last_closed
					THEN COALESCE(excluded.last_closed, incident_rollup.last_closed) ELSE incident_rollup.last_closed END,
				last_update = CASE WHEN excluded.last_update > incident_rollup.last_update
					THEN excluded.last_update ELSE incident_rollup.last_update END
			RETURNING n, first_created, last_closed, last_update`,
			append(args, delta.n, delta.first, delta.closed, delta.update)...).Scan(&n, &first, &closed, &update)
	} else {
		err = tx.QueryRowContext(ctx, `UPDATE incident_rollup SET n = n + $11 WHERE team_id = $1 AND `+rollupKeyMatch+`
			RETURNING n, first_created, last_closed, last_update`, append(args, delta.n)...).Scan(&n, &first, &closed, &update)
	}
	if err != nil {
		return err
	}
	if n <= 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM incident_rollup WHERE team_id = $1 AND `+rollupKeyMatch, args...)
		return err
	}
	held := false
	for _, e := range delta.departed {
		held = held || e.created == first || e.update == update || (e.closed.Valid && closed.Valid && e.closed.Int64 == closed.Int64)
	}
	if !held {
		return nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE incident_rollup SET (first_created, last_closed, last_update) =
		(SELECT MIN(created_at), MAX(closed_at), MAX(last_state_update_time) FROM incidents WHERE team_id = $1 AND `+rollupKeyMatch+`)
		WHERE team_id = $1 AND `+rollupKeyMatch, args...)
	return err
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// rollupWrite records the change of incident id, read as before ahead of its UPDATE, when tx
// commits.
func rollupWrite(ctx context.Context, tx *db.Tx, teamID int64, id string, before rollupEntry) error {
	after, err := readRollupEntry(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	moveRollup(ctx, tx, teamID, before, after)
	return nil
}
