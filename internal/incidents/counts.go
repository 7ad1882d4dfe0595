package incidents

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// countKey is one row of incident_counts: the fields E18 counts.
type countKey struct {
	severity, state, status, assignedTo, meta string
}

func (r row) countKey() countKey {
	return countKey{severity: r.severity, state: r.state, status: r.status, assignedTo: r.assignedTo, meta: r.meta}
}

// countDeltas are a transaction's changes to incident_counts, written once before it commits
// (db.Tx.BeforeCommit), keys in sorted order: concurrent transactions then take the counter rows'
// locks in the same order and cannot deadlock, however their incidents are ordered.
type countDeltas map[countKey]int64

type countDeltasKey struct{ teamID int64 }

// addCount adds one incident to k's count (delta 1) or removes one (delta -1) when tx commits.
func addCount(ctx context.Context, tx *db.Tx, teamID int64, k countKey, delta int64) {
	deltas := tx.Local(countDeltasKey{teamID}, func() any {
		d := countDeltas{}
		tx.BeforeCommit(func() error { return d.write(ctx, tx, teamID) })
		return d
	}).(countDeltas)
	deltas[k] += delta
}

// moveCount moves one incident's count from one key to another (nothing when they are equal).
func moveCount(ctx context.Context, tx *db.Tx, teamID int64, from, to countKey) {
	if from == to {
		return
	}
	addCount(ctx, tx, teamID, from, -1)
	addCount(ctx, tx, teamID, to, 1)
}

// write applies the deltas in key order; a row whose count reaches 0 is removed.
func (d countDeltas) write(ctx context.Context, tx *db.Tx, teamID int64) error {
	keys := make([]countKey, 0, len(d))
	for k, delta := range d {
		if delta != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b countKey) int {
		return cmp.Or(cmp.Compare(a.severity, b.severity), cmp.Compare(a.state, b.state),
			cmp.Compare(a.status, b.status), cmp.Compare(a.assignedTo, b.assignedTo), cmp.Compare(a.meta, b.meta))
	})
	for _, k := range keys {
		_, err := tx.ExecContext(ctx, `INSERT INTO incident_counts (team_id, severity, state, status, assigned_to, meta_labels, n)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (team_id, severity, state, status, assigned_to, meta_labels) DO UPDATE SET n = incident_counts.n + excluded.n`,
			teamID, k.severity, k.state, k.status, k.assignedTo, k.meta, d[k])
		if err == nil && d[k] < 0 {
			_, err = tx.ExecContext(ctx, `DELETE FROM incident_counts
				WHERE team_id = $1 AND severity = $2 AND state = $3 AND status = $4 AND assigned_to = $5 AND meta_labels = $6 AND n <= 0`,
				teamID, k.severity, k.state, k.status, k.assignedTo, k.meta)
		}
		if err != nil {
			return fmt.Errorf("count incidents: %w", err)
		}
	}
	return nil
}

// syncLabels copies the incident's aggregated columns into its label rows; every write that
// changes one of them calls it in the same transaction.
func syncLabels(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	_, err := tx.ExecContext(ctx, `UPDATE incident_labels SET (severity, state, status, assigned_to, meta_labels,
		created_at, closed_at, last_state_update_time) = (SELECT severity, state, status, assigned_to, meta_labels,
		created_at, closed_at, last_state_update_time FROM incidents WHERE team_id = $1 AND id = $2)
		WHERE team_id = $1 AND incident_id = $2`, teamID, id)
	if err != nil {
		return fmt.Errorf("update incident labels: %w", err)
	}
	return nil
}
