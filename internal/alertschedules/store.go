package alertschedules

import (
	"context"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// lockTeam serialises the team's rule writers until the transaction ends, so that the count
// checked against MaxRules holds until commit.
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.alertschedules:%d", teamID))
}

func enabledOf(r oas.AlertSchedulerRule) int {
	if r.Enabled.Or(false) {
		return 1
	}
	return 0
}

// stored is a rule's document without the fields kept in columns.
func stored(r oas.AlertSchedulerRule) ([]byte, error) {
	r.ID, r.UniqueIdentifier, r.CreatedAt, r.UpdatedAt = oas.OptString{}, oas.OptString{}, oas.OptString{}, oas.OptString{}
	return r.MarshalJSON()
}

func insertRule(ctx context.Context, tx *db.Tx, teamID int64, r oas.AlertSchedulerRule) error {
	doc, err := stored(r)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO alert_scheduler_rules (team_id, unique_id, version_id, enabled, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $6)`,
		teamID, r.UniqueIdentifier.Or(""), r.ID.Or(""), enabledOf(r), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert alert scheduler rule: %w", err)
	}
	return nil
}

func updateRule(ctx context.Context, tx *db.Tx, teamID int64, r oas.AlertSchedulerRule) error {
	doc, err := stored(r)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE alert_scheduler_rules SET version_id = $3, enabled = $4, document = $5, updated_at = $6
		 WHERE team_id = $1 AND unique_id = $2`,
		teamID, r.UniqueIdentifier.Or(""), r.ID.Or(""), enabledOf(r), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update alert scheduler rule: %w", err)
	}
	return nil
}

// deleteRule deletes the team's rule; db.ErrNotFound when there is none.
func deleteRule(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM alert_scheduler_rules WHERE team_id = $1 AND unique_id = $2`, teamID, id)
	if err != nil {
		return fmt.Errorf("delete alert scheduler rule: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return db.ErrNotFound
	}
	return nil
}

const selectRule = `SELECT unique_id, version_id, document, created_at, updated_at FROM alert_scheduler_rules`

type scanner interface{ Scan(dest ...any) error }

// record is a stored rule with its creation time, the list's order and page key.
type record struct {
	rule    oas.AlertSchedulerRule
	created int64
}

func scanRule(row scanner) (record, error) {
	var r oas.AlertSchedulerRule
	var uid, vid, doc string
	var created, updated int64
	if err := row.Scan(&uid, &vid, &doc, &created, &updated); err != nil {
		return record{}, db.Translate(err)
	}
	if err := r.UnmarshalJSON([]byte(doc)); err != nil {
		return record{}, fmt.Errorf("alert scheduler rule document: %w", err)
	}
	r.UniqueIdentifier = oas.NewOptString(uid)
	r.ID = oas.NewOptString(vid)
	r.CreatedAt = oas.NewOptString(time.UnixMicro(created).UTC().Format(time.RFC3339Nano))
	r.UpdatedAt = oas.NewOptString(time.UnixMicro(updated).UTC().Format(time.RFC3339Nano))
	return record{rule: r, created: created}, nil
}

// getRule returns the team's rule by its unique id; db.ErrNotFound when there is none.
func getRule(ctx context.Context, q db.Querier, teamID int64, id string) (oas.AlertSchedulerRule, error) {
	rec, err := scanRule(q.QueryRowContext(ctx, selectRule+` WHERE team_id = $1 AND unique_id = $2`, teamID, id))
	return rec.rule, err
}

// eachRule calls yield with each of the team's rules (only the enabled ones when enabledOnly),
// oldest first; it stops at yield's first error and returns it.
func eachRule(ctx context.Context, q db.Querier, teamID int64, enabledOnly bool, yield func(record) error) error {
	query := selectRule + ` WHERE team_id = $1 ORDER BY created_at, unique_id`
	if enabledOnly {
		query = selectRule + ` WHERE team_id = $1 AND enabled = 1 ORDER BY created_at, unique_id`
	}
	rows, err := q.QueryContext(ctx, query, teamID)
	if err != nil {
		return fmt.Errorf("list alert scheduler rules: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := scanRule(rows)
		if err != nil {
			return err
		}
		if err := yield(rec); err != nil {
			return err
		}
	}
	return rows.Err()
}

func countRules(ctx context.Context, q db.Querier, teamID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM alert_scheduler_rules WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count alert scheduler rules: %w", err)
	}
	return n, nil
}
