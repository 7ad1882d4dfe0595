package cases

import (
	"context"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// storedSettings is a team's configuration as read from case_settings.
type storedSettings struct {
	id               string
	doc              settingsDoc
	created, updated time.Time
}

// insertSettings stores doc as the team's configuration id, unless the team has one: then
// created is false and existing names it. On PostgreSQL a concurrent create of the same team
// makes this one wait for it and then see its row (ON CONFLICT DO NOTHING), so of concurrent
// creates exactly one stores.
func insertSettings(ctx context.Context, tx *db.Tx, teamID int64, id string, doc settingsDoc) (created bool, existing string, err error) {
	b, err := doc.encode()
	if err != nil {
		return false, "", err
	}
	var got string
	err = tx.QueryRowContext(ctx, `INSERT INTO case_settings (team_id, id, document, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT (team_id) DO NOTHING RETURNING id`,
		teamID, id, string(b), micros(tx.Now)).Scan(&got)
	if err == nil {
		return true, "", nil
	}
	if !db.IsNotFound(err) {
		return false, "", fmt.Errorf("insert case settings: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT id FROM case_settings WHERE team_id = $1`, teamID).Scan(&existing); err != nil {
		return false, "", fmt.Errorf("read case settings: %w", db.Translate(err))
	}
	return false, existing, nil
}

// loadSettings reads the team's configuration; id "" reads it whatever its id. db.ErrNotFound
// when the team has none (with that id).
func loadSettings(ctx context.Context, q db.Querier, teamID int64, id string) (storedSettings, error) {
	var s storedSettings
	var doc string
	var created, updated int64
	query := `SELECT id, document, created_at, updated_at FROM case_settings WHERE team_id = $1`
	args := []any{teamID}
	if id != "" {
		query += ` AND id = $2`
		args = append(args, id)
	}
	if err := q.QueryRowContext(ctx, query, args...).Scan(&s.id, &doc, &created, &updated); err != nil {
		return s, db.Translate(err)
	}
	d, err := decodeSettings([]byte(doc))
	if err != nil {
		return s, fmt.Errorf("team %d: %w", teamID, err)
	}
	s.doc, s.created, s.updated = d, fromMicros(created), fromMicros(updated)
	return s, nil
}

// readSettings is loadSettings answered as the public shape.
func readSettings(ctx context.Context, q db.Querier, teamID int64, id string) (oas.CaseSettings, error) {
	s, err := loadSettings(ctx, q, teamID, id)
	if err != nil {
		return oas.CaseSettings{}, err
	}
	return s.doc.wire(s.id, s.created, s.updated), nil
}

// lockSettings touches the team's configuration id so that concurrent updates of it take turns
// (PostgreSQL's row lock; SQLite serialises writers anyway). db.ErrNotFound when there is none.
func lockSettings(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `UPDATE case_settings SET updated_at = updated_at WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "lock case settings")
}

func updateSettings(ctx context.Context, tx *db.Tx, teamID int64, id string, doc settingsDoc) error {
	b, err := doc.encode()
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE case_settings SET document = $3, updated_at = $4 WHERE team_id = $1 AND id = $2`,
		teamID, id, string(b), micros(tx.Now))
	return db.OneRow(res, err, "update case settings")
}

// deleteSettings deletes the team's configuration id; db.ErrNotFound when there is none.
func deleteSettings(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM case_settings WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete case settings")
}

// teamLimits are the KPI limits the team's cases are measured against: its defaults (the
// operator's thresholds, else DefaultKPIThresholds) with its active configuration's KPI list
// over them.
func teamLimits(ctx context.Context, q db.Querier, teamID int64) (kpiLimits, error) {
	t, err := loadThresholds(ctx, q, teamID)
	if err != nil {
		return kpiLimits{}, err
	}
	l := limitsOf(&t)
	s, err := loadSettings(ctx, q, teamID, "")
	if db.IsNotFound(err) {
		return l, nil
	}
	if err != nil {
		return kpiLimits{}, err
	}
	if lc, ok := s.doc.CaseLifecycle.Get(); ok {
		l.overlay(lc.Kpi.Value.Thresholds)
	}
	return l, nil
}
