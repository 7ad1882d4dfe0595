package e2m

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// GetE2MLimits answers the team's limits (rules, reserved permutations, labels per rule) and how
// much of the first two the team's rules use. It only reads.
func (h *E2MHandler) GetE2MLimits(ctx context.Context) (*oas.E2MLimits, error) {
	caller := auth.PrincipalFrom(ctx)
	n, reserved, err := teamUsage(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.E2MLimits{
		CompanyId:         strconv.FormatInt(caller.TeamID, 10),
		LabelsLimit:       MaxLabels,
		MetricsLimit:      oas.E2MLimitUsage{Limit: MaxRules, Used: clampInt32(n)},
		PermutationsLimit: oas.E2MLimitUsage{Limit: MaxTeamPermutations, Used: clampInt32(reserved)},
	}, nil
}

func clampInt32(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(v)
}

// teamUsage is the number of the team's rules and the sum of their permutation limits.
func teamUsage(ctx context.Context, q db.Querier, teamID int64) (rules, permutations int64, err error) {
	err = q.QueryRowContext(ctx,
		`SELECT COUNT(*), COALESCE(SUM(permutations_limit), 0) FROM e2m_rules WHERE team_id = $1`, teamID).Scan(&rules, &permutations)
	if err != nil {
		return 0, 0, fmt.Errorf("e2m usage: %w", err)
	}
	return rules, permutations, nil
}
