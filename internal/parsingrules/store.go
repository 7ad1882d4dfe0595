package parsingrules

import (
	"context"
	"fmt"
	"math"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// lockTeam serialises the team's rule-group writers until the transaction ends, so that the
// "after the others" order of a new group and an all-or-nothing bulk delete see a stable set
// across replicas (db.Tx.Serialize).
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.parsingrules:%d", teamID))
}

// nextOrder is one more than the highest order of the team's groups, or 1 when it has none; it
// stays at the largest int64 rather than overflow.
func nextOrder(ctx context.Context, q db.Querier, teamID int64) (int64, error) {
	var max int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(sort_order), 0) FROM parsing_rule_groups WHERE team_id = $1`, teamID).Scan(&max)
	if err != nil {
		return 0, fmt.Errorf("next rule group order: %w", err)
	}
	if max == math.MaxInt64 {
		return max, nil
	}
	return max + 1, nil
}

// insertGroup stores g with its number of rules (rule_count), which teamUsage sums.
func insertGroup(ctx context.Context, tx *db.Tx, teamID int64, g oas.ParsingRuleGroup) error {
	doc, err := g.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO parsing_rule_groups (team_id, id, sort_order, document, rule_count, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $6)`,
		teamID, g.ID.Or(""), g.Order.Or(0), string(doc), ruleCount(g), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert rule group: %w", err)
	}
	return nil
}

// updateGroup replaces the stored group g and its number of rules.
func updateGroup(ctx context.Context, tx *db.Tx, teamID int64, g oas.ParsingRuleGroup) error {
	doc, err := g.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE parsing_rule_groups SET sort_order = $3, document = $4, rule_count = $5, updated_at = $6
		 WHERE team_id = $1 AND id = $2`,
		teamID, g.ID.Or(""), g.Order.Or(0), string(doc), ruleCount(g), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update rule group: %w", err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanGroup(row scanner) (oas.ParsingRuleGroup, error) {
	var g oas.ParsingRuleGroup
	var doc string
	if err := row.Scan(&doc); err != nil {
		return g, db.Translate(err)
	}
	if err := g.UnmarshalJSON([]byte(doc)); err != nil {
		return g, fmt.Errorf("rule group document: %w", err)
	}
	return g, nil
}

// getGroup returns the team's group; db.ErrNotFound when there is none.
func getGroup(ctx context.Context, q db.Querier, teamID int64, id string) (oas.ParsingRuleGroup, error) {
	return scanGroup(q.QueryRowContext(ctx, `SELECT document FROM parsing_rule_groups WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachGroup calls yield with each of the team's groups by order, then oldest first, reading one row at a time;
// it stops at yield's first error and returns it.
func eachGroup(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.ParsingRuleGroup) error) error {
	rows, err := q.QueryContext(ctx,
		`SELECT document FROM parsing_rule_groups WHERE team_id = $1 ORDER BY sort_order, created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list rule groups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return err
		}
		if err := yield(&g); err != nil {
			return err
		}
	}
	return rows.Err()
}

// deleteGroup deletes the team's group; db.ErrNotFound when there is none.
func deleteGroup(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM parsing_rule_groups WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete rule group")
}
