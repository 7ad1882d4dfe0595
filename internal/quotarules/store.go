package quotarules

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// document is the stored form of a set's rules (the version 5 shape).
type document struct {
	Rules []oas.QuotaRule `json:"rules"`
}

func encode(s oas.QuotaRuleSet) (string, error) {
	b, err := json.Marshal(document{Rules: s.Rules})
	return string(b), err
}

// insertSet stores the team's set unless it has one already; created is false then.
func insertSet(ctx context.Context, tx *db.Tx, teamID int64, s oas.QuotaRuleSet) (created bool, err error) {
	doc, err := encode(s)
	if err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx,
		`INSERT INTO quota_rule_sets (team_id, id, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $4) ON CONFLICT (team_id) DO NOTHING`,
		teamID, s.ID, doc, tx.Now.UnixMicro())
	if err != nil {
		return false, fmt.Errorf("insert quota rule set: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("insert quota rule set: %w", err)
	}
	return n == 1, nil
}

// replaceSet overwrites the rules of the team's set; db.ErrNotFound when there is none.
func replaceSet(ctx context.Context, tx *db.Tx, teamID int64, s oas.QuotaRuleSet) error {
	doc, err := encode(s)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE quota_rule_sets SET document = $2, updated_at = $3 WHERE team_id = $1`,
		teamID, doc, tx.Now.UnixMicro())
	return db.OneRow(res, err, "replace quota rule set")
}

// deleteSet removes the team's set and returns its id; db.ErrNotFound when there is none.
func deleteSet(ctx context.Context, tx *db.Tx, teamID int64) (string, error) {
	var id string
	err := tx.QueryRowContext(ctx, `DELETE FROM quota_rule_sets WHERE team_id = $1 RETURNING id`, teamID).Scan(&id)
	if err != nil {
		return "", db.Translate(err)
	}
	return id, nil
}

// getSet returns the team's set; db.ErrNotFound when there is none.
func getSet(ctx context.Context, q db.Querier, teamID int64) (oas.QuotaRuleSet, error) {
	var id, doc string
	err := q.QueryRowContext(ctx, `SELECT id, document FROM quota_rule_sets WHERE team_id = $1`, teamID).Scan(&id, &doc)
	if err != nil {
		return oas.QuotaRuleSet{}, db.Translate(err)
	}
	var d document
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return oas.QuotaRuleSet{}, fmt.Errorf("quota rule set document: %w", err)
	}
	if d.Rules == nil {
		d.Rules = []oas.QuotaRule{}
	}
	return oas.QuotaRuleSet{ID: id, Rules: d.Rules}, nil
}
