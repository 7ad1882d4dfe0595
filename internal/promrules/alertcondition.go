package promrules

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// metricCondition is one rule of a metric threshold alert definition, in the terms its PromQL is
// written in: the query's value compared with a threshold at each point of a window, and the share
// of the window's points that must meet the comparison.
type metricCondition struct {
	// op is the PromQL comparison: ">", "<", ">=", "<=", "==" or "!=".
	op        string
	threshold float64
	// window is the span looked back over ("of the last"); step is the distance between its points.
	window, step time.Duration
	// forOverPct is the share of the window's points, in percent, that must meet the comparison;
	// 0 means at least one point.
	forOverPct int64
	// replaceWithZero counts a point where the query answers no value as the value 0.
	replaceWithZero bool
	// goneMemory is, with replaceWithZero, how long before the window a series that has no
	// point in it at all is remembered: every point of its window is then a 0 (issue 37: a
	// series that stopped meets "less than 10"). 0 is noDataMemory.
	goneMemory time.Duration
	// minNonNullPct is the share of the window's points, in percent, at which the query must answer
	// a value for the condition to be judged at all (0: no minimum).
	minNonNullPct int64
	// groupBy, when not empty, judges the condition once per group of these labels: a group
	// meets it when one of its series does.
	groupBy []string
}

// conditionStep answers the distance between the points a window is judged at: a sixtieth of the
// window, at least 15 seconds and in whole seconds, so a window holds at most 60 points (4 for one
// minute, 60 for an hour or 36 hours).
func conditionStep(window time.Duration) time.Duration {
	step := (window / 60).Truncate(time.Second)
	if step < 15*time.Second {
		step = 15 * time.Second
	}
	return step
}

// zeroMeets says whether the value 0 meets the comparison: whether a point the query answers
// nothing at counts for the condition when missing values are replaced with zero.
func (c metricCondition) zeroMeets() bool {
	t := c.threshold
	switch c.op {
	case ">":
		return 0 > t
	case "<":
		return 0 < t
	case ">=":
		return 0 >= t
	case "<=":
		return 0 <= t
	case "==":
		return t == 0
	case "!=":
		return t != 0
	}
	return false
}

// expr answers the PromQL of an alert that fires while the condition holds, for query (PromQL
// text that answers an instant vector). The alert's value is the share, in percent, of the
// window's points that meet the comparison.
//
// The comparison is evaluated at every step of the window by a subquery. The share is of every
// point of the window: a point without a value does not meet the comparison, except when missing
// values are replaced with zero and 0 meets it. The window's number of points is counted by the same subquery over
// vector(1), so that it is right whether a Prometheus version includes the window's first point
// (2.x) or not (3.x).
func (c metricCondition) expr(query string) string {
	meets := fmt.Sprintf("(%s) %s bool %s", query, c.op, exactNumber(c.threshold))
	return c.firesOn(meets, c.replaceWithZero && c.zeroMeets(), query)
}

// firesOn answers the PromQL of an alert that fires while the share of the window's points at
// which meets (PromQL answering 1 where a point meets the condition and 0 where it does not) is
// 1 reaches forOverPct. The share is of every point of the window: a point at which meets answers
// nothing does not meet the condition, unless missingMeet says it does (a missing value replaced
// with zero, which meets the comparison). minNonNullPct further needs that share of the window's
// points to have a value. With missingMeet (and no minNonNullPct), a series that has no point in
// the window at all, but answered within goneMemory before it, fires too: its share is 100%.
//
// A share of 100% also needs query to answer a value at the window's start (query with every
// selector shifted back by the window): the window's points are a step apart, so a series whose
// first sample came up to a step after the window's start would otherwise meet "100% of the last
// minute" with less than a minute of samples (seen on a real Prometheus at 57 s).
func (c metricCondition) firesOn(meets string, missingMeet bool, query string) string {
	subquery := func(inner string) string {
		return fmt.Sprintf("(%s)[%s:%s]", inner, promDuration(c.window), promDuration(c.step))
	}
	met := subquery(meets)
	all := "scalar(count_over_time(" + subquery("vector(1)") + "))"
	// The share is always of the window's expected points, never of the points that happen to
	// have a value: a series that is new, or back after a gap, has not met the condition for the
	// points it was missing (issue 37: avg_over_time over the points that exist made a fresh
	// series meet "100% of 5 minutes" at its first sample).
	share := fmt.Sprintf("sum_over_time(%s) / %s", met, all)
	if missingMeet {
		share = fmt.Sprintf("(sum_over_time(%s) + (%s - count_over_time(%s))) / %s", met, all, met, all)
	}
	var fires string
	if c.forOverPct <= 0 {
		fires = fmt.Sprintf("(100 * %s) > 0", share)
	} else {
		fires = fmt.Sprintf("(100 * %s) >= %d", share, c.forOverPct)
	}
	if c.minNonNullPct > 0 {
		fires = fmt.Sprintf("(%s) and ((100 * count_over_time(%s) / %s) >= %d)", fires, met, all, c.minNonNullPct)
	}
	if missingMeet && c.minNonNullPct <= 0 {
		// A series with no point in the window has no share above: all its points are missing, so
		// all meet (100%). It is one that answered within goneMemory before the window and not
		// within it, as the no-data rule finds them.
		gone := noDataCondition{window: c.window, retire: c.goneMemory}.expr(query)
		fires = fmt.Sprintf("(%s) or (100 * ((%s) > bool 0))", fires, gone)
	}
	if c.forOverPct >= 100 && !missingMeet {
		if start, err := withOffset(query, c.window); err == nil {
			fires = fmt.Sprintf("(%s) and ((%s) * 1)", fires, start) // * 1 drops the metric name, as the share has
		}
	}
	if len(c.groupBy) > 0 {
		fires = fmt.Sprintf("max by (%s) (%s)", strings.Join(c.groupBy, ", "), fires)
	}
	return fires
}

// usualWindow is the span an anomaly condition learns a series' usual value from: the day before
// the condition's window, sampled every usualStep.
const (
	usualWindow = 24 * time.Hour
	usualStep   = 5 * time.Minute
	// usualDeviations is how many standard deviations from its usual mean a value must be to be
	// an anomaly (a z-score of 3).
	usualDeviations = 3
)

// anomalyCondition is one rule of a metric anomaly definition: a value is unusual when it is
// more than 3 standard deviations away from its mean over the day before the window (above it
// for "more than usual", below it for "less than usual") and, when percentageOfDeviation is set,
// also at least that many percent away from the mean. threshold is a floor for "more than
// usual" (an unusually high value under it is not an anomaly) and, for "less than usual", the
// least usual mean worth watching (a drop of a series that is usually under it is not one).
type anomalyCondition struct {
	metricCondition
	lessThanUsual bool
	deviationPct  float64
}

// usualRules answers the two recording rules an anomaly alert reads, for query: the mean and the
// standard deviation of its value over the day before the window, recorded as mean and deviation
// (series names, which tell the definition's rules apart). Recording them keeps the alert cheap: it compares
// each point of its window with the recorded values instead of computing a day's statistics at
// every point.
func (c anomalyCondition) usualRules(query, mean, deviation string) []Rule {
	past := fmt.Sprintf("((%s) * 1)[%s:%s] offset %s", query, promDuration(usualWindow), promDuration(usualStep), promDuration(c.window))
	return []Rule{
		{Record: mean, Expr: "avg_over_time(" + past + ")"},
		{Record: deviation, Expr: "stddev_over_time(" + past + ")"},
	}
}

// expr answers the PromQL of an alert that fires while the share of the window's points that are
// unusual reaches forOverPct (see metricCondition.firesOn), reading the mean and deviation that
// usualRules records (the metric name aside, their series have the labels of the query's). It
// approximates anomaly detection with a z-score; docs/decisions.md says what it is and is not.
func (c anomalyCondition) expr(query, mean, deviation string) string {
	value := fmt.Sprintf("((%s) * 1)", query) // * 1 drops the metric name, so the value matches its mean
	cmp := func(left, op, right string) string { return fmt.Sprintf("(%s %s bool %s)", left, op, right) }
	meanValue := fmt.Sprintf("(%s)", mean)
	var meets string
	if c.lessThanUsual {
		meets = cmp(value, "<", fmt.Sprintf("(%s - %d * %s)", mean, usualDeviations, deviation)) +
			" * " + fmt.Sprintf("(%s > bool %s)", meanValue, exactNumber(c.threshold))
		if c.deviationPct > 0 {
			meets += " * " + cmp(value, "<", fmt.Sprintf("(%s * %s)", mean, exactNumber(1-c.deviationPct/100)))
		}
	} else {
		meets = cmp(value, ">", fmt.Sprintf("(%s + %d * %s)", mean, usualDeviations, deviation)) +
			" * " + fmt.Sprintf("(%s > bool %s)", value, exactNumber(c.threshold))
		if c.deviationPct > 0 {
			meets += " * " + cmp(value, ">", fmt.Sprintf("(%s * %s)", mean, exactNumber(1+c.deviationPct/100)))
		}
	}
	return c.firesOn(meets, false, query)
}

// promDuration writes d as Prometheus reads a duration, in its largest whole units ("90s" is
// "1m30s", "36h" stays "1d12h").
func promDuration(d time.Duration) string {
	return model.Duration(d).String()
}

// withOffset answers query, PromQL text that answers an instant vector, with every selector of
// it looking back d further than it did: the evaluation delay of a definition, for data that
// arrives late. d of zero answers query unchanged. An `@` modifier pins a selector to a time and
// is left as it is.
//
// Errors: query is not valid PromQL.
func withOffset(query string, d time.Duration) (string, error) {
	expr, err := sloQueries.ParseExpr(query)
	if err != nil {
		return "", fmt.Errorf("not valid PromQL: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if d == 0 {
		return query, nil
	}
	shiftSelectors(expr, d)
	return expr.String(), nil
}

// shiftSelectors adds d to the offset of every selector and subquery of node that no `@` pins; the
// selectors inside a subquery are evaluated at its own points, which its offset already shifts.
func shiftSelectors(node parser.Node, d time.Duration) {
	switch s := node.(type) {
	case *parser.VectorSelector:
		if s.Timestamp == nil && s.StartOrEnd == 0 {
			s.OriginalOffset += d
		}
		return
	case *parser.SubqueryExpr:
		if s.Timestamp == nil && s.StartOrEnd == 0 {
			s.OriginalOffset += d
			return
		}
	}
	for _, child := range parser.Children(node) {
		shiftSelectors(child, d)
	}
}

// noDataCondition is the absence rule of a metric threshold definition (issue 37): a series (or,
// with groupBy, a group of those labels) that had data within the memory but has none within
// the window is "no data" until it has been missing for retire, when it is forgotten (the alert
// resolves). A retire of 0 is "never": the memory is then noDataMemory, a day.
type noDataCondition struct {
	window, retire time.Duration
	groupBy        []string
}

// noDataMemory is how long a series that stopped is remembered when its no-data alert never
// retires: longer memories make every evaluation read more.
const noDataMemory = 24 * time.Hour

// noDataOf answers the absence rule a metric threshold definition asks for, if any: its
// noDataPolicy state ALERTING or NO_DATA, or undetectedValuesManagement.triggerUndetectedValues;
// it retires after noDataPolicy.autoRetireSeconds, else undetectedValuesManagement's
// autoRetireTimeframe, else never.
func noDataOf(m oas.AlertDefMetricThresholdType) (noDataCondition, bool) {
	state := m.NoDataPolicy.Value.State.Or("")
	wanted := state == oas.AlertDefNoDataPolicyStateNODATAPOLICYSTATEALERTING || state == oas.AlertDefNoDataPolicyStateNODATAPOLICYSTATENODATA ||
		m.UndetectedValuesManagement.Value.TriggerUndetectedValues.Or(false)
	if !wanted {
		return noDataCondition{}, false
	}
	return noDataCondition{retire: retireOf(m)}, true
}

// retireOf is how long a metric threshold definition remembers a series that stopped:
// noDataPolicy.autoRetireSeconds, else undetectedValuesManagement's autoRetireTimeframe, else 0
// (never).
func retireOf(m oas.AlertDefMetricThresholdType) time.Duration {
	if s := m.NoDataPolicy.Value.AutoRetireSeconds.Or(0); s > 0 {
		return time.Duration(s) * time.Second
	}
	return retireTimeframes[m.UndetectedValuesManagement.Value.AutoRetireTimeframe.Or("")]
}

var retireTimeframes = map[oas.AlertDefAutoRetireTimeframe]time.Duration{
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEMINUTES5:  5 * time.Minute,
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEMINUTES10: 10 * time.Minute,
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEHOUR1:     time.Hour,
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEHOURS2:    2 * time.Hour,
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEHOURS6:    6 * time.Hour,
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEHOURS12:   12 * time.Hour,
	oas.AlertDefAutoRetireTimeframeAUTORETIRETIMEFRAMEHOURS24:   24 * time.Hour,
}

// expr answers the PromQL of the absence alert for query: the series (or groups) that answered
// within the window and the retire time before it, less those that answered within the window.
// Both sides are subqueries judged at the window's step (the memory's at a sixtieth of it, at
// least the window's step), and count_over_time keeps each series' labels but its name, so the
// two sides match series by series.
func (c noDataCondition) expr(query string) string {
	memory := c.retire
	if memory <= 0 {
		memory = noDataMemory
	}
	memory += c.window
	step := conditionStep(c.window)
	memoryStep := max(conditionStep(memory), step)
	seen := fmt.Sprintf("count_over_time((%s)[%s:%s])", query, promDuration(memory), promDuration(memoryStep))
	recent := fmt.Sprintf("count_over_time((%s)[%s:%s])", query, promDuration(c.window), promDuration(step))
	if len(c.groupBy) > 0 {
		by := strings.Join(c.groupBy, ", ")
		return fmt.Sprintf("count by (%s) (%s) unless on (%s) count by (%s) (%s)", by, seen, by, by, recent)
	}
	return fmt.Sprintf("(%s) unless (%s)", seen, recent)
}

// retireWords says when the absence alert retires, for its summary.
func (c noDataCondition) retireWords() string {
	if c.retire <= 0 {
		return ""
	}
	return "; retired after " + promDuration(c.retire)
}
