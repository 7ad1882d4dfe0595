package alertschedules

import (
	"context"
	"errors"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// GetSchedulerRulesForAlertmanager answers the caller's team's enabled rules in Alertmanager's
// terms as of now (ToAlertmanager): the one-time muting windows as silences, the recurring ones
// as one YAML document of time_intervals and routes, and every other rule with the reason it
// does not map. Rules in creation order.
//
// Errors: only the database's.
func (h *SchedulerRuleHandler) GetSchedulerRulesForAlertmanager(ctx context.Context) (*oas.SchedulerRulesForAlertmanager, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	now := time.Now().UTC()
	out := &oas.SchedulerRulesForAlertmanager{Silences: []oas.AlertmanagerSilence{}, Unmapped: []oas.SchedulerRuleUnmapped{}}
	var config struct {
		TimeIntervals []TimeInterval `yaml:"time_intervals"`
		Routes        []Route        `yaml:"routes"`
	}
	err := eachRule(ctx, h.db.Read(), teamID, true, func(rec record) error {
		id := rec.rule.UniqueIdentifier.Or("")
		am, err := ToAlertmanager(rec.rule, now)
		if errors.Is(err, ErrNoExactMapping) {
			out.Unmapped = append(out.Unmapped, oas.SchedulerRuleUnmapped{RuleId: id, Name: rec.rule.Name.Or(""), Reason: err.Error()})
			return nil
		}
		if err != nil {
			return err
		}
		if s := am.Silence; s != nil {
			matchers := make([]oas.AlertmanagerMatcher, len(s.Matchers))
			for i, m := range s.Matchers {
				matchers[i] = oas.AlertmanagerMatcher{Name: m.Name, Value: m.Value, IsRegex: m.IsRegex, IsEqual: m.IsEqual}
			}
			out.Silences = append(out.Silences, oas.AlertmanagerSilence{RuleId: id, Matchers: matchers,
				StartsAt: s.StartsAt, EndsAt: s.EndsAt, CreatedBy: s.CreatedBy, Comment: s.Comment})
		}
		if am.TimeInterval != nil && am.Route != nil {
			config.TimeIntervals = append(config.TimeIntervals, *am.TimeInterval)
			config.Routes = append(config.Routes, *am.Route)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(config.TimeIntervals) > 0 {
		text, err := yaml.Marshal(config)
		if err != nil {
			return nil, err
		}
		out.Configuration = string(text)
	}
	return out, nil
}
