package actions

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// lockTeam serialises the writers of the team's actions until the transaction ends, so that the
// count bound and the display positions hold until commit.
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.actions:%d", teamID))
}

// stored is one stored action: the action as the get answers it and its place in its order.
type stored struct {
	Action   oas.Action
	Position int64
}

// ID is the stored action's id.
func (s stored) ID() string { return s.Action.ID.Or("") }

// private reports whether the action is in the private display order.
func (s stored) private() bool { return s.Action.IsPrivate.Or(false) }

const selectAction = `SELECT position, document FROM actions`

// orderBy is the display order: shared before private, then position, then creation.
const orderBy = ` ORDER BY is_private, position, created_at, id`

type scanner interface{ Scan(dest ...any) error }

func scanAction(row scanner) (stored, error) {
	var s stored
	var doc string
	if err := row.Scan(&s.Position, &doc); err != nil {
		return s, db.Translate(err)
	}
	if err := s.Action.UnmarshalJSON([]byte(doc)); err != nil {
		return s, fmt.Errorf("action document: %w", err)
	}
	return s, nil
}

// getAction returns the team's action id; db.ErrNotFound when there is none.
func getAction(ctx context.Context, q db.Querier, teamID int64, id string) (stored, error) {
	return scanAction(q.QueryRowContext(ctx, selectAction+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// listActions returns the team's actions in display order.
func listActions(ctx context.Context, q db.Querier, teamID int64) ([]stored, error) {
	rows, err := q.QueryContext(ctx, selectAction+` WHERE team_id = $1`+orderBy, teamID)
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	defer rows.Close()
	var out []stored
	for rows.Next() {
		s, err := scanAction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// countAndNext returns how many actions the team holds and the position after the last one of
// the private or shared order.
func countAndNext(ctx context.Context, tx *db.Tx, teamID int64, private bool) (count int, next int64, err error) {
	err = tx.QueryRowContext(ctx,
		`SELECT COUNT(*), COALESCE(MAX(CASE WHEN is_private = $2 THEN position + 1 END), 0) FROM actions WHERE team_id = $1`,
		teamID, boolInt(private)).Scan(&count, &next)
	if err != nil {
		return 0, 0, fmt.Errorf("count actions: %w", err)
	}
	return count, next, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func insertAction(ctx context.Context, tx *db.Tx, teamID int64, s stored) error {
	doc, err := s.Action.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO actions (team_id, id, name, is_private, position, created_by, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		teamID, s.ID(), s.Action.Name.Or(""), boolInt(s.private()), s.Position, s.Action.CreatedBy.Or(""), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert action: %w", db.Translate(err))
	}
	return nil
}

func updateAction(ctx context.Context, tx *db.Tx, teamID int64, s stored) error {
	doc, err := s.Action.MarshalJSON()
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE actions SET name = $3, is_private = $4, position = $5, document = $6, updated_at = $7 WHERE team_id = $1 AND id = $2`,
		teamID, s.ID(), s.Action.Name.Or(""), boolInt(s.private()), s.Position, string(doc), tx.Now.UnixMicro())
	return db.OneRow(res, err, "update action")
}

func setPosition(ctx context.Context, tx *db.Tx, teamID int64, id string, position int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE actions SET position = $3 WHERE team_id = $1 AND id = $2`, teamID, id, position)
	return db.OneRow(res, err, "order action")
}

func deleteAction(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM actions WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete action")
}
