package slos

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// EachTeamSLO calls yield with each of the team's stored SLOs, by create time then id, as the
// list operation answers them, reading one row at a time; it stops at yield's first error and
// returns it. It is the read other packages use (the SLO burn-rate rules of internal/promrules);
// it changes nothing and checks no permission.
func EachTeamSLO(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.Slo) error) error {
	return eachSlo(ctx, q, teamID, yield)
}
