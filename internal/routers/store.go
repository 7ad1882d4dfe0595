package routers

import (
	"context"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// maxUsersNamed bounds the routers a 409 names.
const maxUsersNamed = 20

// writeTargets replaces the target rows of router id with the distinct (connector, preset) pairs
// of r.
func writeTargets(ctx context.Context, tx *db.Tx, teamID int64, id string, r *oas.GlobalRouter) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM notification_router_targets WHERE team_id = $1 AND router_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("clear router targets: %w", err)
	}
	seen := map[[2]string]bool{}
	for _, t := range targetsOf(r) {
		pair := [2]string{t.t.ConnectorId.Or(""), t.t.PresetId.Or("")}
		if seen[pair] {
			continue
		}
		seen[pair] = true
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO notification_router_targets (team_id, router_id, connector_id, preset_id) VALUES ($1, $2, $3, $4)`,
			teamID, id, pair[0], pair[1]); err != nil {
			return fmt.Errorf("insert router target: %w", err)
		}
	}
	return nil
}

func insertRouter(ctx context.Context, tx *db.Tx, teamID int64, r oas.GlobalRouter) error {
	doc, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO notification_routers (team_id, id, name, document, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		teamID, r.ID.Or(""), r.Name.Or(""), string(doc), tx.Now.UnixMicro()); err != nil {
		return fmt.Errorf("insert router: %w", err)
	}
	return writeTargets(ctx, tx, teamID, r.ID.Or(""), &r)
}

func updateRouter(ctx context.Context, tx *db.Tx, teamID int64, r oas.GlobalRouter) error {
	doc, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE notification_routers SET name = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
		teamID, r.ID.Or(""), r.Name.Or(""), string(doc), tx.Now.UnixMicro()); err != nil {
		return fmt.Errorf("update router: %w", err)
	}
	return writeTargets(ctx, tx, teamID, r.ID.Or(""), &r)
}

func deleteRouter(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM notification_router_targets WHERE team_id = $1 AND router_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete router targets: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM notification_routers WHERE team_id = $1 AND id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete router: %w", err)
	}
	return nil
}

const selectRouter = `SELECT document, created_at, updated_at FROM notification_routers`

type scanner interface{ Scan(dest ...any) error }

func scanRouter(row scanner) (oas.GlobalRouter, error) {
	var r oas.GlobalRouter
	var doc string
	var created, updated int64
	if err := row.Scan(&doc, &created, &updated); err != nil {
		return r, db.Translate(err)
	}
	if err := r.UnmarshalJSON([]byte(doc)); err != nil {
		return r, fmt.Errorf("router document: %w", err)
	}
	r.CreateTime = oas.NewOptDateTime(time.UnixMicro(created).UTC())
	r.UpdateTime = oas.NewOptDateTime(time.UnixMicro(updated).UTC())
	return r, nil
}

// getRouter returns the team's router; db.ErrNotFound when there is none.
func getRouter(ctx context.Context, q db.Querier, teamID int64, id string) (oas.GlobalRouter, error) {
	return scanRouter(q.QueryRowContext(ctx, selectRouter+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachRouter calls yield with each of the team's routers, oldest first; it stops at yield's first
// error and returns it.
func eachRouter(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.GlobalRouter) error) error {
	rows, err := q.QueryContext(ctx, selectRouter+` WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list routers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRouter(rows)
		if err != nil {
			return err
		}
		if err := yield(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

func countRouters(ctx context.Context, q db.Querier, teamID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_routers WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count routers: %w", err)
	}
	return n, nil
}

// usersBy names the routers of the team whose targets have column = value, by id, at most
// maxUsersNamed and then how many more.
func usersBy(ctx context.Context, q db.Querier, teamID int64, column, value string) ([]string, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT DISTINCT r.id, r.name FROM notification_router_targets t
		 JOIN notification_routers r ON r.team_id = t.team_id AND r.id = t.router_id
		 WHERE t.team_id = $1 AND t.`+column+` = $2 ORDER BY r.id`, teamID, value)
	if err != nil {
		return nil, fmt.Errorf("find routers using %s: %w", column, err)
	}
	defer rows.Close()
	var out []string
	n := 0
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("find routers using %s: %w", column, err)
		}
		n++
		if n <= maxUsersNamed {
			out = append(out, fmt.Sprintf("router %q (id %s)", name, id))
		}
	}
	if n > maxUsersNamed {
		out = append(out, fmt.Sprintf("%d more routers", n-maxUsersNamed))
	}
	return out, rows.Err()
}

// ConnectorUsers names the team's routers that have a target on the connector (a
// connectors.Users).
func ConnectorUsers(ctx context.Context, tx *db.Tx, teamID int64, connectorID string) ([]string, error) {
	return usersBy(ctx, tx, teamID, "connector_id", connectorID)
}

// PresetUsers names the team's routers that have a target rendered with the preset (a
// presets.Users).
func PresetUsers(ctx context.Context, tx *db.Tx, teamID int64, presetID string) ([]string, error) {
	return usersBy(ctx, tx, teamID, "preset_id", presetID)
}

// Exists reports whether the team has router id, read in q.
func Exists(ctx context.Context, q db.Querier, teamID int64, id string) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_routers WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&n); err != nil {
		return false, fmt.Errorf("find router: %w", err)
	}
	return n > 0, nil
}
