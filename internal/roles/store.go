package roles

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// firstID is the id of a team's first custom role: ids below it are kept clear of the system
// roles' (1–3) so that an id names one role of either kind.
const firstID = 1001

// nextID takes the team's next custom role id. The upsert locks the team's counter row until the
// transaction ends (PostgreSQL; SQLite serialises writers anyway), so concurrent creates get
// distinct ids and a rolled-back create gives its id back.
func nextID(ctx context.Context, tx *db.Tx, teamID int64) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx,
		`INSERT INTO custom_role_ids (team_id, last_id) VALUES ($1, $2)
		 ON CONFLICT (team_id) DO UPDATE SET last_id = custom_role_ids.last_id + 1
		 RETURNING last_id`, teamID, firstID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("next custom role id: %w", err)
	}
	return id, nil
}

// insertRole stores r (its id set). A name the team already uses is db.ErrConflict.
func insertRole(ctx context.Context, tx *db.Tx, teamID int64, r role) error {
	perms, err := json.Marshal(r.permissions)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO custom_roles (team_id, id, name, description, parent_role_id, permissions, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		teamID, r.id, r.name, r.description, r.parentID, string(perms), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert custom role: %w", db.Translate(err))
	}
	return nil
}

// updateRole rewrites r. A name the team already uses is db.ErrConflict.
func updateRole(ctx context.Context, tx *db.Tx, teamID int64, r role) error {
	perms, err := json.Marshal(r.permissions)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE custom_roles SET name = $3, description = $4, permissions = $5, updated_at = $6
		 WHERE team_id = $1 AND id = $2`,
		teamID, r.id, r.name, r.description, string(perms), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update custom role: %w", db.Translate(err))
	}
	return nil
}

const selectRole = `SELECT id, name, description, parent_role_id, permissions FROM custom_roles`

type scanner interface{ Scan(dest ...any) error }

func scanRole(row scanner) (role, error) {
	var r role
	var perms string
	if err := row.Scan(&r.id, &r.name, &r.description, &r.parentID, &perms); err != nil {
		return r, db.Translate(err)
	}
	if err := json.Unmarshal([]byte(perms), &r.permissions); err != nil {
		return r, fmt.Errorf("custom role permissions: %w", err)
	}
	return r, nil
}

// getRole returns the team's custom role; db.ErrNotFound when there is none.
func getRole(ctx context.Context, q db.Querier, teamID, id int64) (role, error) {
	return scanRole(q.QueryRowContext(ctx, selectRole+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// listRoles returns the team's custom roles by id.
func listRoles(ctx context.Context, q db.Querier, teamID int64) ([]role, error) {
	out := []role{}
	err := eachRole(ctx, q, teamID, func(r role) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// eachRole calls yield with each of the team's custom roles in listRoles's order, reading one
// row at a time; it stops at yield's first error and returns it.
func eachRole(ctx context.Context, q db.Querier, teamID int64, yield func(role) error) error {
	rows, err := q.QueryContext(ctx, selectRole+` WHERE team_id = $1 ORDER BY id`, teamID)
	if err != nil {
		return fmt.Errorf("list custom roles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRole(rows)
		if err != nil {
			return err
		}
		if err := yield(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// deleteRole deletes the team's custom role; db.ErrNotFound when there is none.
func deleteRole(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM custom_roles WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete custom role")
}

// reserveID makes the team's counter of custom role ids at least id, so that nextID never hands
// out an id a role was given (an applied configuration document keeps its ids).
func reserveID(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO custom_role_ids (team_id, last_id) VALUES ($1, $2)
		 ON CONFLICT (team_id) DO UPDATE SET last_id = CASE WHEN custom_role_ids.last_id < $2 THEN $2 ELSE custom_role_ids.last_id END`,
		teamID, id)
	if err != nil {
		return fmt.Errorf("reserve custom role id: %w", err)
	}
	return nil
}
