package policies

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// claimType serialises, until the transaction ends, every writer of the team's policies of one
// data type, adds delta to the number of them the team holds and returns that number after the
// change. Every write that adds, removes or renumbers policies of the type claims it first, so the
// number checked against the limit and the positions read stay true until commit, across
// replicas: the number is one row of policy_type_counts, written here, and on PostgreSQL the
// row's lock holds until the transaction ends (SQLite runs one write transaction at a time).
// The number and the policies change in the same transaction, so they cannot disagree.
//
// The row is written by a plain UPDATE (on SQLite an upsert costs several times more to prepare);
// only the team's first write of the type creates it, with ON CONFLICT DO NOTHING, so that two
// first writes at once both go on to the UPDATE, one after the other.
func claimType(ctx context.Context, tx *db.Tx, teamID int64, src sourceType, delta int) (int, error) {
	for range 2 {
		var n int
		err := tx.QueryRowContext(ctx,
			`UPDATE policy_type_counts SET total = total + $3 WHERE team_id = $1 AND source_type = $2 RETURNING total`,
			teamID, string(src), delta).Scan(&n)
		if !db.IsNotFound(err) {
			if err != nil {
				return 0, fmt.Errorf("count policies: %w", err)
			}
			return n, nil
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO policy_type_counts (team_id, source_type, total) VALUES ($1, $2, 0)
			 ON CONFLICT (team_id, source_type) DO NOTHING`, teamID, string(src))
		if err != nil {
			return 0, fmt.Errorf("count policies: %w", err)
		}
	}
	return 0, fmt.Errorf("count policies: no row for team %d, type %s", teamID, src)
}

// resetType is claimType for a write that replaces every policy of the type: the team holds n
// of them once it commits.
func resetType(ctx context.Context, tx *db.Tx, teamID int64, src sourceType, n int) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO policy_type_counts (team_id, source_type, total) VALUES ($1, $2, $3)
		 ON CONFLICT (team_id, source_type) DO UPDATE SET total = excluded.total`, teamID, string(src), n)
	if err != nil {
		return fmt.Errorf("count policies: %w", err)
	}
	return nil
}

// insertPolicy stores p (its Order is the position) with the transaction's time.
func insertPolicy(ctx context.Context, tx *db.Tx, teamID int64, src sourceType, p oas.Policy) error {
	doc, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO policies (team_id, id, source_type, position, enabled, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		teamID, p.ID, string(src), int64(p.Order), p.Enabled, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert policy: %w", err)
	}
	return nil
}

// updatePolicy rewrites the document and enabled flag of p.
func updatePolicy(ctx context.Context, tx *db.Tx, teamID int64, p oas.Policy) error {
	doc, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE policies SET enabled = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
		teamID, p.ID, p.Enabled, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update policy: %w", err)
	}
	return nil
}

const selectPolicy = `SELECT source_type, position, enabled, document, created_at, updated_at FROM policies`

type scanner interface{ Scan(dest ...any) error }

func scanPolicy(row scanner, teamID int64) (oas.Policy, sourceType, error) {
	var p oas.Policy
	var src, doc string
	var pos, created, updated int64
	var enabled bool
	if err := row.Scan(&src, &pos, &enabled, &doc, &created, &updated); err != nil {
		return p, "", db.Translate(err)
	}
	err := fillPolicy(&p, teamID, []byte(doc), pos, enabled, created, updated)
	return p, sourceType(src), err
}

// policyRows reads the rows of selectPolicy one after another into the same policy and the same
// scan destinations, so that a row costs only what its decoding allocates (a list of 10,000
// policies allocated a policy, a copy of its document and its scanned values per row).
type policyRows struct {
	src                   string
	doc                   sql.RawBytes
	pos, created, updated int64
	enabled               bool
	dest                  []any
	policy                oas.Policy
}

func newPolicyRows() *policyRows {
	r := &policyRows{}
	r.dest = []any{&r.src, &r.pos, &r.enabled, &r.doc, &r.created, &r.updated}
	return r
}

// next decodes the current row of rows into the returned policy, which is valid until the next
// call: the next row overwrites it.
func (r *policyRows) next(rows *sql.Rows, teamID int64) (*oas.Policy, error) {
	if err := rows.Scan(r.dest...); err != nil {
		return nil, db.Translate(err)
	}
	r.policy = oas.Policy{}
	if err := fillPolicy(&r.policy, teamID, r.doc, r.pos, r.enabled, r.created, r.updated); err != nil {
		return nil, err
	}
	return &r.policy, nil
}

// fillPolicy decodes the stored document of a policy into the zero policy p and sets what the
// row holds outside it.
func fillPolicy(p *oas.Policy, teamID int64, doc []byte, pos int64, enabled bool, created, updated int64) error {
	if err := p.UnmarshalJSON(doc); err != nil {
		return fmt.Errorf("policy document: %w", err)
	}
	p.CompanyId = teamID
	p.Order = int32(pos)
	p.Enabled = enabled
	p.Deleted = false
	p.CreatedAt = oas.NewOptDateTime(time.UnixMicro(created).UTC())
	p.UpdatedAt = oas.NewOptDateTime(time.UnixMicro(updated).UTC())
	if p.Targets == nil {
		p.Targets = oas.PolicyTargets{} // stored before targets existed
	}
	setStatus(p)
	return nil
}

// getPolicy returns the team's policy and its type; db.ErrNotFound when there is none.
func getPolicy(ctx context.Context, q db.Querier, teamID int64, id string) (oas.Policy, sourceType, error) {
	row := q.QueryRowContext(ctx, selectPolicy+` WHERE team_id = $1 AND id = $2`, teamID, normaliseID(id))
	return scanPolicy(row, teamID)
}

// listPolicies returns the team's policies by type and order; src "" means every type.
func listPolicies(ctx context.Context, q db.Querier, teamID int64, src sourceType, enabledOnly bool) ([]oas.Policy, error) {
	out := []oas.Policy{}
	err := eachPolicy(ctx, q, teamID, src, enabledOnly, func(p *oas.Policy) error {
		out = append(out, *p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// typeIDs returns the ids of the team's policies of one type.
func typeIDs(ctx context.Context, tx *db.Tx, teamID int64, src sourceType) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx,
		`SELECT id FROM policies WHERE team_id = $1 AND source_type = $2`, teamID, string(src))
	if err != nil {
		return nil, fmt.Errorf("list policy ids: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// makeRoom moves every policy of the type one place down, so that position 1 is free.
func makeRoom(ctx context.Context, tx *db.Tx, teamID int64, src sourceType) error {
	_, err := tx.ExecContext(ctx,
		`UPDATE policies SET position = position + 1 WHERE team_id = $1 AND source_type = $2`, teamID, string(src))
	if err != nil {
		return fmt.Errorf("shift policies: %w", err)
	}
	return nil
}

// deletePolicy removes the policy and closes the gap it leaves in its type's order.
func deletePolicy(ctx context.Context, tx *db.Tx, teamID int64, src sourceType, id string, pos int32) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM policies WHERE team_id = $1 AND id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete policy: %w", err)
	}
	_, err := tx.ExecContext(ctx,
		`UPDATE policies SET position = position - 1 WHERE team_id = $1 AND source_type = $2 AND position > $3`,
		teamID, string(src), int64(pos))
	if err != nil {
		return fmt.Errorf("shift policies: %w", err)
	}
	return nil
}

func deleteType(ctx context.Context, tx *db.Tx, teamID int64, src sourceType) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM policies WHERE team_id = $1 AND source_type = $2`, teamID, string(src))
	if err != nil {
		return fmt.Errorf("delete policies: %w", err)
	}
	return nil
}

func setPosition(ctx context.Context, tx *db.Tx, teamID int64, id string, pos int) error {
	_, err := tx.ExecContext(ctx,
		`UPDATE policies SET position = $3, updated_at = $4 WHERE team_id = $1 AND id = $2`,
		teamID, id, int64(pos), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("reorder policy: %w", err)
	}
	return nil
}

// getSettings returns the team's settings, PRIORITY_TYPE_UNSPECIFIED where never set.
func getSettings(ctx context.Context, q db.Querier, teamID int64) (oas.PolicySettings, error) {
	s := defaultSettings()
	var doc string
	err := q.QueryRowContext(ctx, `SELECT document FROM policy_settings WHERE team_id = $1`, teamID).Scan(&doc)
	if err != nil {
		if err = db.Translate(err); errors.Is(err, db.ErrNotFound) {
			return s, nil
		}
		return s, fmt.Errorf("read policy settings: %w", err)
	}
	if err := s.UnmarshalJSON([]byte(doc)); err != nil {
		return s, fmt.Errorf("policy settings document: %w", err)
	}
	return s, nil
}

func defaultSettings() oas.PolicySettings {
	unset := oas.DefaultPrioritySetting{DefaultPriority: oas.NewOptPolicyPriority(oas.PolicyPriorityPRIORITYTYPEUNSPECIFIED)}
	return oas.PolicySettings{
		LogsPolicySettings:  oas.NewOptDefaultPrioritySetting(unset),
		SpansPolicySettings: oas.NewOptDefaultPrioritySetting(unset),
	}
}

func putSettings(ctx context.Context, tx *db.Tx, teamID int64, s oas.PolicySettings) error {
	doc, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO policy_settings (team_id, document, created_at, updated_at) VALUES ($1, $2, $3, $3)
		 ON CONFLICT (team_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		teamID, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("write policy settings: %w", err)
	}
	return nil
}

// normaliseID is the stored form of a policy id: the server generates lower-case UUIDs, and a
// caller may send hex digits in either case.
func normaliseID(id string) string { return strings.ToLower(id) }
