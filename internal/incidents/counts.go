package incidents

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// countKey is one row of incident_counts: the fields E18 counts.
type countKey struct {
	severity, state, status, assignedTo, meta string
}

func (r row) countKey() countKey {
	return countKey{severity: r.severity, state: r.state, status: r.status, assignedTo: r.assignedTo, meta: r.meta}
}

// addCount adds one incident to k's count (delta 1) or removes one (delta -1; the row goes when
// its count reaches 0).
func addCount(ctx context.Context, tx *db.Tx, teamID int64, k countKey, delta int64) error {
	var err error
	if delta > 0 {
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_counts (team_id, severity, state, status, assigned_to, meta_labels, n)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (team_id, severity, state, status, assigned_to, meta_labels) DO UPDATE SET n = incident_counts.n + excluded.n`,
			teamID, k.severity, k.state, k.status, k.assignedTo, k.meta, delta)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE incident_counts SET n = n + $7
			WHERE team_id = $1 AND severity = $2 AND state = $3 AND status = $4 AND assigned_to = $5 AND meta_labels = $6`,
			teamID, k.severity, k.state, k.status, k.assignedTo, k.meta, delta)
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM incident_counts
				WHERE team_id = $1 AND severity = $2 AND state = $3 AND status = $4 AND assigned_to = $5 AND meta_labels = $6 AND n <= 0`,
				teamID, k.severity, k.state, k.status, k.assignedTo, k.meta)
		}
	}
	if err != nil {
		return fmt.Errorf("count incidents: %w", err)
	}
	return nil
}

// moveCount moves one incident's count from one key to another (nothing when they are equal).
func moveCount(ctx context.Context, tx *db.Tx, teamID int64, from, to countKey) error {
	if from == to {
		return nil
	}
	if err := addCount(ctx, tx, teamID, from, -1); err != nil {
		return err
	}
	return addCount(ctx, tx, teamID, to, 1)
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
