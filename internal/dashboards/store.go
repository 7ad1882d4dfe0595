package dashboards

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// stored is a dashboard row.
type stored struct {
	id                   string
	name, slug           string
	doc                  oas.Dashboard
	accessPolicy         sql.NullString
	locked               bool
	createdAt, updatedAt time.Time
}

// encodeDoc writes the dashboard as JSON with its keys in order.
func encodeDoc(d oas.Dashboard) (string, error) {
	m := make(map[string]json.RawMessage, len(d))
	for k, v := range d {
		m[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode dashboard: %w", err)
	}
	return string(b), nil
}

func decodeDoc(text string) (oas.Dashboard, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("decode dashboard: %w", err)
	}
	out := make(oas.Dashboard, len(m))
	for k, v := range m {
		out[k] = jx.Raw(v)
	}
	return out, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func policyArg(p oas.OptString) any {
	if v, ok := p.Get(); ok {
		return v
	}
	return nil
}

// insertDashboard stores a new dashboard.
func insertDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored, policy oas.OptString) error {
	text, err := encodeDoc(d.doc)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO dashboards (team_id, id, name, slug_name, document, access_policy, is_locked, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		teamID, d.id, d.name, nullable(d.slug), text, policyArg(policy), d.locked, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert dashboard: %w", db.Translate(err))
	}
	return nil
}

// replaceDashboard rewrites the team's dashboard; db.ErrNotFound when there is none.
func replaceDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored, policy oas.OptString) error {
	text, err := encodeDoc(d.doc)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE dashboards SET name = $3, slug_name = $4, document = $5, access_policy = $6, is_locked = $7, updated_at = $8
		 WHERE team_id = $1 AND id = $2`,
		teamID, d.id, d.name, nullable(d.slug), text, policyArg(policy), d.locked, tx.Now.UnixMicro())
	return db.OneRow(res, err, "replace dashboard")
}

// getDashboard returns the team's dashboard; db.ErrNotFound when there is none.
func getDashboard(ctx context.Context, q db.Querier, teamID int64, id string) (stored, error) {
	var d stored
	var text string
	var created, updated int64
	err := q.QueryRowContext(ctx,
		`SELECT id, name, document, access_policy, is_locked, created_at, updated_at
		 FROM dashboards WHERE team_id = $1 AND id = $2`, teamID, id).
		Scan(&d.id, &d.name, &text, &d.accessPolicy, &d.locked, &created, &updated)
	if err != nil {
		return d, db.Translate(err)
	}
	d.createdAt, d.updatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	d.doc, err = decodeDoc(text)
	return d, err
}

// listDashboards returns the team's dashboards (without documents) by name, then id.
func listDashboards(ctx context.Context, q db.Querier, teamID int64) ([]stored, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT id, name, slug_name, is_locked, created_at, updated_at
		 FROM dashboards WHERE team_id = $1 ORDER BY name, id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list dashboards: %w", err)
	}
	defer rows.Close()
	out := []stored{}
	for rows.Next() {
		var d stored
		var slug sql.NullString
		var created, updated int64
		if err := rows.Scan(&d.id, &d.name, &slug, &d.locked, &created, &updated); err != nil {
			return nil, fmt.Errorf("list dashboards: %w", err)
		}
		d.slug = slug.String
		d.createdAt, d.updatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// countForCreate answers how many dashboards the team holds. It first upserts the team's
// dashboard_creates row, which locks it until the transaction ends (PostgreSQL; SQLite serialises
// writers anyway), so concurrent creates of one team count one after another.
func countForCreate(ctx context.Context, tx *db.Tx, teamID int64) (int, error) {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_creates (team_id, total) VALUES ($1, 1)
		 ON CONFLICT (team_id) DO UPDATE SET total = dashboard_creates.total + 1`, teamID); err != nil {
		return 0, fmt.Errorf("lock dashboard creates: %w", db.Translate(err))
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM dashboards WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count dashboards: %w", err)
	}
	return n, nil
}

// deleteDashboard deletes the team's dashboard and, when requestID is not empty, remembers it.
// When the dashboard is already gone it answers nil if that request id deleted it before, and
// db.ErrNotFound otherwise.
func deleteDashboard(ctx context.Context, tx *db.Tx, teamID int64, id, requestID string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM dashboards WHERE team_id = $1 AND id = $2`, teamID, id)
	err = db.OneRow(res, err, "delete dashboard")
	switch {
	case err == nil && requestID != "":
		_, err = tx.ExecContext(ctx,
			`INSERT INTO dashboard_deletions (team_id, dashboard_id, request_id, deleted_at)
			 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, teamID, id, requestID, tx.Now.UnixMicro())
		if err != nil {
			return fmt.Errorf("remember dashboard delete: %w", db.Translate(err))
		}
		return nil
	case err == db.ErrNotFound && requestID != "":
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM dashboard_deletions WHERE team_id = $1 AND dashboard_id = $2 AND request_id = $3`,
			teamID, id, requestID).Scan(&n); err != nil {
			return fmt.Errorf("find dashboard delete: %w", err)
		}
		if n > 0 {
			return nil
		}
	}
	return err
}
