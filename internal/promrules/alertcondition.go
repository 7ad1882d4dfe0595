package promrules

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
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
// The comparison is evaluated at every step of the window by a subquery. The share counts the
// points at which the query answered a value, except when missing values are replaced with zero:
// then it counts every point of the window, a point without a value meeting the comparison
// exactly when 0 does. The window's number of points is counted by the same subquery over
// vector(1), so that it is right whether a Prometheus version includes the window's first point
// (2.x) or not (3.x).
func (c metricCondition) expr(query string) string {
	subquery := func(inner string) string {
		return fmt.Sprintf("(%s)[%s:%s]", inner, promDuration(c.window), promDuration(c.step))
	}
	meets := subquery(fmt.Sprintf("(%s) %s bool %s", query, c.op, exactNumber(c.threshold)))
	all := "scalar(count_over_time(" + subquery("vector(1)") + "))"
	var share string
	if c.replaceWithZero {
		met := "sum_over_time(" + meets + ")"
		if c.zeroMeets() {
			met = fmt.Sprintf("(%s + (%s - count_over_time(%s)))", met, all, meets)
		}
		share = fmt.Sprintf("%s / %s", met, all)
	} else {
		share = "avg_over_time(" + meets + ")"
	}
	var fires string
	if c.forOverPct <= 0 {
		fires = fmt.Sprintf("(100 * %s) > 0", share)
	} else {
		fires = fmt.Sprintf("(100 * %s) >= %d", share, c.forOverPct)
	}
	if c.minNonNullPct > 0 {
		fires = fmt.Sprintf("(%s) and ((100 * count_over_time(%s) / %s) >= %d)", fires, meets, all, c.minNonNullPct)
	}
	if len(c.groupBy) > 0 {
		fires = fmt.Sprintf("max by (%s) (%s)", strings.Join(c.groupBy, ", "), fires)
	}
	return fires
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
