package policies

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// StreamPolicies writes the answer of ListPolicies for params, the same bytes, while reading the
// policies: the server serves the list with it (see package streaming).
func (h *PolicyHandler) StreamPolicies(ctx context.Context, params oas.ListPoliciesParams, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	src := sourceTypes[params.SourceType.Or(oas.PolicySourceTypeSOURCETYPEUNSPECIFIED)]
	return out.Array("policies", func() error {
		return eachPolicy(ctx, h.db.Read(), caller.TeamID, src, params.EnabledOnly.Or(false), func(p *oas.Policy) error {
			return out.Item(p)
		})
	})
}

// eachPolicy calls yield with each policy listPolicies returns, in its order, reading one row at
// a time; it stops at yield's first error and returns it. The policy yield gets is valid until
// yield returns (the next row is decoded into the same one): yield copies what it keeps.
func eachPolicy(ctx context.Context, q db.Querier, teamID int64, src sourceType, enabledOnly bool, yield func(*oas.Policy) error) error {
	query := selectPolicy + ` WHERE team_id = $1`
	args := []any{teamID}
	if src != "" {
		args = append(args, string(src))
		query += fmt.Sprintf(` AND source_type = $%d`, len(args))
	}
	if enabledOnly {
		args = append(args, true)
		query += fmt.Sprintf(` AND enabled = $%d`, len(args))
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY source_type, position, id`, args...)
	if err != nil {
		return fmt.Errorf("list policies: %w", err)
	}
	defer rows.Close()
	read := newPolicyRows()
	for rows.Next() {
		p, err := read.next(rows, teamID)
		if err != nil {
			return err
		}
		if err := yield(p); err != nil {
			return err
		}
	}
	return rows.Err()
}
