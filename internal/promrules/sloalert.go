package promrules

import (
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// sloErrorRatio answers the PromQL of s's error ratio over window, by its grouping labels: for a
// request-based SLI 1 - good/total with every range selector of both queries set to the window,
// for a window-based SLI the share of bad windows in it, read from the slo:<id>:window_bad
// series that s's own group (SLOGroup) records — so it answers something only where that group
// is loaded too.
//
// Errors: s has no rules of its own (SLOGroup's errors).
func sloErrorRatio(s oas.Slo, window time.Duration) (string, error) {
	if _, err := SLOGroup(s); err != nil {
		return "", err
	}
	idPart, _ := seriesNamePart(s.ID.Or(""))
	var grouping []string
	for _, l := range s.Grouping.Value.Labels {
		grouping = append(grouping, string(l))
	}
	switch {
	case s.RequestBasedMetricSli.Set:
		sli := s.RequestBasedMetricSli.Value
		return fmt.Sprintf("1 - (%s / %s)",
			sumBy(grouping, withRange(sli.GoodEvents.Query, window)),
			sumBy(grouping, withRange(sli.TotalEvents.Query, window))), nil
	case s.WindowBasedMetricSli.Set:
		return fmt.Sprintf("avg_over_time(slo:%s:window_bad[%s])", idPart, promDuration(window)), nil
	}
	return "", fmt.Errorf("it has no PromQL SLI") // not reached: SLOGroup refused it
}

// sloBudget answers the share of s's events or windows that may be bad: 1 - target/100.
func sloBudget(s oas.Slo) string {
	return budgetNumber((100 - s.TargetThresholdPercentage) / 100)
}

// sloBurnRateExpr answers the PromQL of an alert that fires while s burns its error budget more
// than threshold times faster than the sustainable rate over window, and — when dual — over a
// twelfth of it too (the short window of the SRE workbook's multi-window alerts, which lets the
// alert resolve soon after the burning stops). Its value is the burn rate over window.
//
// Errors: those of sloErrorRatio; a window under 12 minutes for a dual alert (its short window
// would be under a minute).
func sloBurnRateExpr(s oas.Slo, window time.Duration, dual bool, threshold float64) (string, error) {
	long, err := sloErrorRatio(s, window)
	if err != nil {
		return "", err
	}
	budget := sloBudget(s)
	expr := fmt.Sprintf("(%s) / %s > %s", long, budget, exactNumber(threshold))
	if dual {
		if window < 12*time.Minute {
			return "", fmt.Errorf("a dual burn-rate window of %s has a short window under a minute", promDuration(window))
		}
		short, err := sloErrorRatio(s, window/12)
		if err != nil {
			return "", err
		}
		expr = fmt.Sprintf("(%s) and ((%s) / %s > %s)", expr, short, budget, exactNumber(threshold))
	}
	return expr, nil
}

// sloErrorBudgetExpr answers the PromQL of an alert that fires while the share of s's error
// budget left over its time frame, in percent, is under threshold. Its value is that share (0 or
// less once the budget is spent).
//
// Errors: those of sloErrorRatio.
func sloErrorBudgetExpr(s oas.Slo, threshold float64) (string, error) {
	frame, err := timeFrame(s.SloTimeFrame)
	if err != nil {
		return "", err
	}
	ratio, err := sloErrorRatio(s, frame.duration)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("100 * (1 - (%s) / %s) < %s", ratio, sloBudget(s), exactNumber(threshold)), nil
}
