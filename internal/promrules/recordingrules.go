package promrules

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/recordingrules"
)

// RecordingRuleGroups reads the team's recording-rule sets (through the recordingrules area) and
// returns them as rule groups: see GroupsOfSets.
func RecordingRuleGroups(ctx context.Context, q db.Querier, teamID int64) ([]Group, error) {
	var sets []oas.RecordingRuleSet
	err := recordingrules.EachSet(ctx, q, teamID, func(set *oas.RecordingRuleSet) error {
		sets = append(sets, *set)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return GroupsOfSets(sets)
}

// GroupsOfSets returns one rule group per group of each set, in the order of sets and of their
// groups:
//   - the name is "<set name>/<group name>"; when an earlier group already has that name (two sets
//     with one name and a group name in common), " [<set id>]" is appended, since Prometheus
//     refuses a file that repeats a group name;
//   - the interval (seconds) is written as a Prometheus duration ("1m"), none when the group has
//     none, so that the server's global evaluation interval applies;
//   - the limit is kept (0, no limit, is left out); a limit beyond the largest int, which no
//     group can reach, is written as the largest int;
//   - the rules are the stored ones, record, expression and labels. evaluationDelayMs is left out:
//     a Prometheus rule file has no per-rule delay.
//
// It fails only on a stored limit that is not a decimal number, which the area never stores.
func GroupsOfSets(sets []oas.RecordingRuleSet) ([]Group, error) {
	groups := []Group{}
	taken := map[string]bool{}
	for _, set := range sets {
		for _, g := range set.Groups {
			group := Group{Name: set.Name + "/" + g.Name, Rules: make([]Rule, 0, len(g.Rules))}
			if taken[group.Name] {
				group.Name += " [" + set.ID + "]"
			}
			taken[group.Name] = true
			if seconds := g.Interval.Or(0); seconds > 0 {
				group.Interval = model.Duration(time.Duration(seconds) * time.Second).String()
			}
			if limit, ok := g.Limit.Get(); ok {
				n, err := strconv.ParseUint(limit, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("recording rule set %s, group %q: stored limit %q: %w", set.ID, g.Name, limit, err)
				}
				group.Limit = int(min(n, math.MaxInt))
			}
			for _, r := range g.Rules {
				rule := Rule{Record: r.Record, Expr: r.Expr}
				if len(r.Labels) > 0 {
					rule.Labels = make(map[string]string, len(r.Labels))
					for k, v := range r.Labels {
						rule.Labels[k] = v
					}
				}
				group.Rules = append(group.Rules, rule)
			}
			groups = append(groups, group)
		}
	}
	return groups, nil
}
