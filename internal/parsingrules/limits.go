package parsingrules

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The most rule groups, and rules over all of its groups, a team may hold.
const (
	MaxGroups = 1000
	MaxRules  = 10000
)

// usage is what a team's stored groups hold.
type usage struct{ groups, rules int }

// ruleCount is the number of rules of g, over its subgroups.
func ruleCount(g oas.ParsingRuleGroup) int {
	n := 0
	for _, sg := range g.RuleSubgroups {
		n += len(sg.Rules)
	}
	return n
}

// teamUsage counts the team's groups and their rules, leaving out the group except (if not ""),
// from the number of rules stored with each group (rule_count, written by insertGroup and
// updateGroup): no document is read.
func teamUsage(ctx context.Context, q db.Querier, teamID int64, except string) (usage, error) {
	var u usage
	err := q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(rule_count), 0) FROM parsing_rule_groups
		WHERE team_id = $1 AND id <> $2`, teamID, except).Scan(&u.groups, &u.rules)
	if err != nil {
		return u, fmt.Errorf("count rule groups: %w", err)
	}
	return u, nil
}

// checkRoom refuses g when the team, holding u besides it, would pass a limit. old is the group
// g replaces (nil for a create): a replace adds no group, and is refused for its rules only when
// it adds some, so a team above a limit (from before it existed) can still shrink.
//
// Errors: LimitExceeded naming the limit.
func checkRoom(u usage, g oas.ParsingRuleGroup, old *oas.ParsingRuleGroup) error {
	if old == nil && u.groups+1 > MaxGroups {
		return apierror.LimitExceededf("a team may hold at most %d parsing rule groups and this would make it %d; delete some first", MaxGroups, u.groups+1)
	}
	n := u.rules + ruleCount(g)
	if n > MaxRules && (old == nil || ruleCount(g) > ruleCount(*old)) {
		return apierror.LimitExceededf("ruleSubgroups: a team may hold at most %d parsing rules over all its groups and this would make it %d; delete some first", MaxRules, n)
	}
	return nil
}

// GetParsingRuleUsageLimits answers the team's limits and what its stored groups hold. This
// server has no parsing themes, so both their numbers are 0. It only reads.
func (h *RuleGroupHandler) GetParsingRuleUsageLimits(ctx context.Context) (*oas.ParsingRuleUsageLimits, error) {
	caller := auth.PrincipalFrom(ctx)
	u, err := teamUsage(ctx, h.db.Read(), caller.TeamID, "")
	if err != nil {
		return nil, err
	}
	return &oas.ParsingRuleUsageLimits{
		CompanyId: strconv.FormatInt(caller.TeamID, 10),
		Limits:    oas.ParsingRuleCounts{Groups: MaxGroups, Rules: MaxRules},
		Usage:     oas.ParsingRuleCounts{Groups: int32(u.groups), Rules: int32(u.rules)},
	}, nil
}

// GetParsingRuleGroupModelMapping answers the group a create of req would store now, without
// storing it and without ids (they are assigned on store).
//
// Errors: Invalid, as the create (see checkGroup).
func (h *RuleGroupHandler) GetParsingRuleGroupModelMapping(ctx context.Context, req *oas.ParsingRuleGroup) (*oas.ParsingRuleGroupMapping, error) {
	caller := auth.PrincipalFrom(ctx)
	g, err := checkGroup(*req, caller.TeamID)
	if err != nil {
		return nil, err
	}
	if !g.Order.IsSet() {
		next, err := nextOrder(ctx, h.db.Read(), caller.TeamID)
		if err != nil {
			return nil, err
		}
		g.Order = oas.NewOptInt64(next)
	}
	return &oas.ParsingRuleGroupMapping{RuleDefinition: g}, nil
}
