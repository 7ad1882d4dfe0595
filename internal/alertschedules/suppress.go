package alertschedules

import (
	"context"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Suppressing reports whether one of the team's enabled scheduler rules silences the alert of
// definition alertDefID with labels at the instant at, and names the first such rule (oldest
// first) by its uniqueIdentifier. A rule silences when its filter picks the alert (Matches) and
// its schedule silences at at (Schedule.Silences: inside a window for MUTE, outside every window
// for ACTIVATE; windows include their start and exclude their end). q may be the routing's
// transaction.
//
// Errors: only the database's; a stored rule that no longer compiles is skipped, not fatal.
func Suppressing(ctx context.Context, q db.Querier, teamID int64, alertDefID string, labels map[string]string, at time.Time) (ruleID string, ok bool, err error) {
	err = eachRule(ctx, q, teamID, true, func(rec record) error {
		if Silences(rec.rule, alertDefID, labels, at) {
			ruleID, ok = rec.rule.UniqueIdentifier.Or(""), true
			return errStop
		}
		return nil
	})
	if err == errStop {
		err = nil
	}
	if err != nil {
		return "", false, fmt.Errorf("alert scheduler rules: %w", err)
	}
	return ruleID, ok, nil
}

// Silences reports whether the rule, if enabled, silences the alert at at: its filter picks the
// alert and its schedule silences then. A rule whose schedule does not compile silences nothing.
func Silences(r oas.AlertSchedulerRule, alertDefID string, labels map[string]string, at time.Time) bool {
	if !r.Enabled.Or(false) || !Matches(r, alertDefID, labels) {
		return false
	}
	s, err := Compile("schedule", r.Schedule.Or(oas.AlertSchedulerSchedule{}))
	if err != nil {
		return false
	}
	return s.Silences(at)
}
