package extensions

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// insertDeployment stores a new deployment; db.ErrConflict (from the primary key) when the team
// already has one of that extension, so that of racing deploys exactly one succeeds.
func insertDeployment(ctx context.Context, tx *db.Tx, teamID int64, d deployment) error {
	items, apps, subs := encodeLists(d)
	_, err := tx.ExecContext(ctx,
		`INSERT INTO extension_deployments (team_id, extension_id, version, item_ids, applications, subsystems, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		teamID, d.ID, d.Version, items, apps, subs, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert extension deployment: %w", db.Translate(err))
	}
	return nil
}

// updateDeployment replaces the team's deployment of d.ID; db.ErrNotFound when there is none.
func updateDeployment(ctx context.Context, tx *db.Tx, teamID int64, d deployment) error {
	items, apps, subs := encodeLists(d)
	res, err := tx.ExecContext(ctx,
		`UPDATE extension_deployments SET version = $3, item_ids = $4, applications = $5, subsystems = $6, updated_at = $7
		 WHERE team_id = $1 AND extension_id = $2`,
		teamID, d.ID, d.Version, items, apps, subs, tx.Now.UnixMicro())
	return db.OneRow(res, err, "update extension deployment")
}

// deleteDeployment removes the team's deployment of the extension; db.ErrNotFound when there is none.
func deleteDeployment(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM extension_deployments WHERE team_id = $1 AND extension_id = $2`, teamID, id)
	return db.OneRow(res, err, "delete extension deployment")
}

func encodeLists(d deployment) (string, string, string) {
	enc := func(list []string) string {
		b, _ := json.Marshal(nonNil(list))
		return string(b)
	}
	return enc(d.ItemIDs), enc(d.Applications), enc(d.Subsystems)
}

const selectDeployment = `SELECT extension_id, version, item_ids, applications, subsystems FROM extension_deployments`

type scanner interface{ Scan(dest ...any) error }

func scanDeployment(row scanner) (deployment, error) {
	var d deployment
	var items, apps, subs string
	if err := row.Scan(&d.ID, &d.Version, &items, &apps, &subs); err != nil {
		return d, db.Translate(err)
	}
	for _, l := range []struct {
		text string
		into *[]string
	}{{items, &d.ItemIDs}, {apps, &d.Applications}, {subs, &d.Subsystems}} {
		if err := json.Unmarshal([]byte(l.text), l.into); err != nil {
			return d, fmt.Errorf("extension deployment %s: %w", d.ID, err)
		}
	}
	return d, nil
}

// getDeployment returns the team's deployment of the extension, locking its row when forUpdate
// (PostgreSQL only); db.ErrNotFound when there is none.
func getDeployment(ctx context.Context, q db.Querier, teamID int64, id string, forUpdate bool) (deployment, error) {
	query := selectDeployment + ` WHERE team_id = $1 AND extension_id = $2`
	if forUpdate {
		query += ` FOR UPDATE`
	}
	return scanDeployment(q.QueryRowContext(ctx, query, teamID, id))
}

// listDeployments returns the team's deployments by extension id.
func listDeployments(ctx context.Context, q db.Querier, teamID int64) ([]deployment, error) {
	rows, err := q.QueryContext(ctx, selectDeployment+` WHERE team_id = $1 ORDER BY extension_id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list extension deployments: %w", err)
	}
	defer rows.Close()
	out := []deployment{}
	for rows.Next() {
		d, err := scanDeployment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
