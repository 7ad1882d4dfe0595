package e2m

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// stored is a rule as kept: its normalised document (with id) and the server-set columns.
type stored struct {
	rule      oas.E2M
	limit     int32
	createdAt time.Time
	updatedAt time.Time
}

// wire returns the rule as answered: the document plus the server-set fields.
func (s stored) wire() oas.E2M {
	out := s.rule
	out.PermutationsLimit.Reset()
	out.IsInternal = oas.NewOptBool(false)
	out.CreateTime = oas.NewOptDateTime(s.createdAt.UTC())
	out.UpdateTime = oas.NewOptDateTime(s.updatedAt.UTC())
	// Nothing ingests events here, so no rule ever exceeds its limit.
	out.Permutations = oas.NewOptE2MPermutations(oas.E2MPermutations{HasExceededLimit: false, Limit: s.limit})
	return out
}

// serializeTeam makes the team's other E2M writers wait until this transaction ends, so that
// what loadIndex read stays true until the commit.
func serializeTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, "e2m:"+strconv.FormatInt(teamID, 10))
}

// indexed is what a batch needs to know of each of the team's rules.
type indexed struct {
	name      string
	limit     int32
	createdAt time.Time
}

// loadIndex returns the name, limit and create time, by id, of the team's rules whose id is in ids
// or whose name is in names.
func loadIndex(ctx context.Context, tx *db.Tx, teamID int64, ids, names []string) (map[string]indexed, error) {
	out := map[string]indexed{}
	if len(ids)+len(names) == 0 {
		return out, nil
	}
	args := []any{teamID}
	in := func(values []string) string {
		if len(values) == 0 {
			return "NULL"
		}
		marks := make([]string, len(values))
		for i, v := range values {
			args = append(args, v)
			marks[i] = "$" + strconv.Itoa(len(args))
		}
		return strings.Join(marks, ", ")
	}
	query := `SELECT id, name, permutations_limit, created_at FROM e2m_rules WHERE team_id = $1 AND (id IN (` +
		in(ids) + `) OR name IN (` + in(names) + `))`
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("load e2m index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r indexed
		var created int64
		if err := rows.Scan(&id, &r.name, &r.limit, &created); err != nil {
			return nil, fmt.Errorf("load e2m index: %w", err)
		}
		r.createdAt = time.UnixMicro(created).UTC()
		out[id] = r
	}
	return out, rows.Err()
}

// deleteRule deletes the team's rule; db.ErrNotFound when there is none.
func deleteRule(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM e2m_rules WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete e2m")
}

// insertRule stores s; a name or id the team already holds is db.ErrConflict.
func insertRule(ctx context.Context, tx *db.Tx, teamID int64, s stored) error {
	doc := s.rule
	doc.PermutationsLimit.Reset()
	b, err := doc.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode e2m: %w", err)
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO e2m_rules (team_id, id, name, permutations_limit, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		teamID, string(s.rule.ID), string(s.rule.Name), s.limit, string(b), s.createdAt.UnixMicro(), s.updatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert e2m: %w", db.Translate(err))
	}
	return nil
}

const selectRule = `SELECT id, permutations_limit, document, created_at, updated_at FROM e2m_rules`

type scanner interface{ Scan(dest ...any) error }

func scanRule(row scanner) (stored, error) {
	var s stored
	var id, doc string
	var created, updated int64
	if err := row.Scan(&id, &s.limit, &doc, &created, &updated); err != nil {
		return s, db.Translate(err)
	}
	if err := s.rule.UnmarshalJSON([]byte(doc)); err != nil {
		return s, fmt.Errorf("e2m %s document: %w", id, err)
	}
	s.createdAt, s.updatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return s, nil
}

// getRule returns the team's rule; db.ErrNotFound when there is none.
func getRule(ctx context.Context, q db.Querier, teamID int64, id string) (stored, error) {
	return scanRule(q.QueryRowContext(ctx, selectRule+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachRule calls yield with each of the team's rules by create time, then id, reading one row
// at a time; it stops at yield's first error and returns it.
func eachRule(ctx context.Context, q db.Querier, teamID int64, yield func(stored) error) error {
	rows, err := q.QueryContext(ctx, selectRule+` WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list e2m: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanRule(rows)
		if err != nil {
			return err
		}
		if err := yield(s); err != nil {
			return err
		}
	}
	return rows.Err()
}
