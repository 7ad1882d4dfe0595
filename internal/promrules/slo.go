package promrules

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/slos"
)

// SLOAlertName is the name of every burn-rate alert; the labels severity, burn_rate, long_window,
// short_window and slo_id tell the alerts apart.
const SLOAlertName = "SLOErrorBudgetBurn"

// sloWindow is one window the error ratio is recorded over.
type sloWindow struct {
	name     string // as Prometheus writes the duration, and as the recorded name ends
	duration time.Duration
}

// sloWindows are the windows of the multi-window, multi-burn-rate alerts (SRE workbook, ch. 5).
var sloWindows = []sloWindow{
	{"5m", 5 * time.Minute},
	{"30m", 30 * time.Minute},
	{"1h", time.Hour},
	{"2h", 2 * time.Hour},
	{"6h", 6 * time.Hour},
	{"1d", 24 * time.Hour},
	{"3d", 72 * time.Hour},
}

// burnAlert is one alerting condition: the error ratio over both windows is above factor times
// the error budget.
type burnAlert struct {
	severity    string
	factor      float64
	long, short string
}

// burnAlerts page on a fast burn and open a ticket on a slow one. Against a 30-day budget the
// four spend 2% of it in 1h, 5% in 6h, 10% in 1d and 10% in 3d.
var burnAlerts = []burnAlert{
	{"page", 14.4, "1h", "5m"},
	{"page", 6, "6h", "30m"},
	{"ticket", 3, "1d", "2h"},
	{"ticket", 1, "3d", "6h"},
}

// ourAlertLabels are the labels the generator sets on every alert; an SLO label of the same name
// is left out, as is one named like a grouping label (the alert carries the group's value).
var ourAlertLabels = map[string]bool{
	"severity": true, "burn_rate": true, "long_window": true, "short_window": true,
	"slo_id": true, "slo_name": true, "slo_target": true, "slo_time_frame": true,
}

// SLOGroupsAndSkips reads the team's SLOs (in the list operation's order) and answers one rule
// group per SLO whose indicator is PromQL, as SLOGroup builds it, and the SLOs left out, each with
// the reason (Kind "SLO"). It changes nothing and checks no permission; its signature is that of
// a part of the team's rule file (fileSources in rulefile.go).
//
// Errors: only those of reading the database.
func SLOGroupsAndSkips(ctx context.Context, q db.Querier, teamID int64) ([]Group, []LeftOut, error) {
	var groups []Group
	var skipped []LeftOut
	names := map[string]string{}
	err := slos.EachTeamSLO(ctx, q, teamID, func(s *oas.Slo) error {
		id := s.ID.Or("")
		g, err := SLOGroup(*s)
		if err != nil {
			skipped = append(skipped, LeftOut{Kind: "SLO", ID: id, Name: s.Name, Reason: err.Error()})
			return nil
		}
		if other, dup := names[g.Name]; dup {
			skipped = append(skipped, LeftOut{Kind: "SLO", ID: id, Name: s.Name,
				Reason: fmt.Sprintf("its rules would be named as those of SLO %s", other)})
			return nil
		}
		names[g.Name] = id
		groups = append(groups, g)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return groups, skipped, nil
}

// SLOGroup answers the recording and alerting rules of one SLO: its error ratio recorded over
// 5m, 30m, 1h, 2h, 6h, 1d and 3d as slo:<id>:error_ratio_<window> (the id's '-' written '_'),
// and four SLOErrorBudgetBurn alerts — severity page at 14.4× the error budget over 1h and 5m and
// at 6× over 6h and 30m, severity ticket at 3× over 1d and 2h and at 1× over 3d and 6h. Alerts
// carry the SLO's labels and slo_id, slo_name, slo_target, slo_time_frame, burn_rate, long_window
// and short_window; the group is named slo-<id>.
//
// A request-based SLI's error ratio is 1 - good/total, both summed by the grouping labels, with
// every range selector of both queries set to the window. A window-based SLI records
// slo:<id>:window_bad (1 for a bad window, 0 for a good one, by the grouping labels) in a group
// evaluated once per window, and its error ratio over a window is the share of bad windows in it.
// See docs/slo-alerts.md.
//
// Errors: an SLO without rules answers an error that says why (its reason in SLOGroupsAndSkips and in the rule file):
// an APM SLI, no SLI, a query that does not parse or does not answer an instant vector, a
// request-based query with no range selector to set the window on, a grouping label named like a
// label the rules set (severity, slo_id, …) or starting with "__", a target or time frame out of
// range, or an id that cannot name a series.
func SLOGroup(s oas.Slo) (Group, error) {
	id := s.ID.Or("")
	idPart, err := seriesNamePart(id)
	if err != nil {
		return Group{}, err
	}
	target := s.TargetThresholdPercentage
	if !(target > 0 && target <= 100) { // NaN too
		return Group{}, fmt.Errorf("targetThresholdPercentage %v is not above 0 and at most 100", target)
	}
	frame, err := timeFrame(s.SloTimeFrame)
	if err != nil {
		return Group{}, err
	}
	var grouping []string
	for _, l := range s.Grouping.Value.Labels {
		name := string(l)
		if ourAlertLabels[name] || strings.HasPrefix(name, "__") {
			// The alerts' own label would overwrite the group's, and merge the groups into one.
			return Group{}, fmt.Errorf("grouping label %q is one the rules set themselves or Prometheus reserves", name)
		}
		grouping = append(grouping, name)
	}
	g := Group{Name: "slo-" + id}
	ratioName := func(window string) string { return "slo:" + idPart + ":error_ratio_" + window }
	recordLabels := func() map[string]string { return map[string]string{"slo_id": id} } // a map per rule

	switch {
	case s.RequestBasedMetricSli.Set:
		sli := s.RequestBasedMetricSli.Value
		good, err := parseInstantVector("requestBasedMetricSli.goodEvents.query", sli.GoodEvents.Query)
		if err != nil {
			return Group{}, err
		}
		total, err := parseInstantVector("requestBasedMetricSli.totalEvents.query", sli.TotalEvents.Query)
		if err != nil {
			return Group{}, err
		}
		for _, q := range []struct {
			field string
			expr  parser.Expr
		}{{"goodEvents", good}, {"totalEvents", total}} {
			if !hasRangeSelector(q.expr) {
				return Group{}, fmt.Errorf("requestBasedMetricSli.%s.query has no range selector (such as [5m]) to set each window on", q.field)
			}
		}
		for _, w := range sloWindows {
			g.Rules = append(g.Rules, Rule{
				Record: ratioName(w.name),
				Expr: fmt.Sprintf("1 - (%s / %s)",
					sumBy(grouping, withRange(sli.GoodEvents.Query, w.duration)),
					sumBy(grouping, withRange(sli.TotalEvents.Query, w.duration))),
				Labels: recordLabels(),
			})
		}
	case s.WindowBasedMetricSli.Set:
		sli := s.WindowBasedMetricSli.Value
		query, err := parseInstantVector("windowBasedMetricSli.query.query", sli.Query.Query)
		if err != nil {
			return Group{}, err
		}
		interval, op, err := windowRule(sli)
		if err != nil {
			return Group{}, err
		}
		g.Interval = interval
		bad := fmt.Sprintf("1 - min%s ((%s) %s bool %s)", byClause(grouping), query, op, exactNumber(sli.Threshold))
		switch sli.MissingDataStrategy.Or(oas.SloMissingDataStrategyMISSINGDATASTRATEGYUNCOUNTED) {
		case oas.SloMissingDataStrategyMISSINGDATASTRATEGYGOOD:
			bad = "(" + bad + ") or on () vector(0)"
		case oas.SloMissingDataStrategyMISSINGDATASTRATEGYBAD:
			bad = "(" + bad + ") or on () vector(1)"
		}
		badName := "slo:" + idPart + ":window_bad"
		g.Rules = append(g.Rules, Rule{Record: badName, Expr: bad, Labels: recordLabels()})
		for _, w := range sloWindows {
			g.Rules = append(g.Rules, Rule{
				Record: ratioName(w.name),
				Expr:   fmt.Sprintf("avg_over_time(%s[%s])", badName, w.name),
				Labels: recordLabels(),
			})
		}
	case s.ApmSli.Set:
		return Group{}, fmt.Errorf("its SLI is apmSli, which is not PromQL")
	default:
		return Group{}, fmt.Errorf("it has no SLI")
	}

	budget := (100 - target) / 100
	for _, a := range burnAlerts {
		labels := sloAlertLabels(s, grouping)
		labels["severity"] = a.severity
		labels["burn_rate"] = exactNumber(a.factor)
		labels["long_window"] = a.long
		labels["short_window"] = a.short
		labels["slo_id"] = id
		labels["slo_name"] = escapeTemplate(s.Name)
		labels["slo_target"] = exactNumber(target)
		labels["slo_time_frame"] = frame.name
		threshold := fmt.Sprintf("(%s * %s)", exactNumber(a.factor), budgetNumber(budget))
		g.Rules = append(g.Rules, Rule{
			Alert:  SLOAlertName,
			Expr:   fmt.Sprintf("%s > %s and %s > %s", ratioName(a.long), threshold, ratioName(a.short), threshold),
			Labels: labels,
			Annotations: map[string]string{
				"summary": escapeTemplate(fmt.Sprintf("SLO %q is burning its error budget at %s× the sustainable rate",
					s.Name, exactNumber(a.factor))),
				"description": fmt.Sprintf("The error ratio is above %s%% (%s× the %s%% error budget) over the last %s "+
					"and the last %s. The SLO's target is %s%% over %s; at this rate the whole budget is spent in %s.",
					budgetNumber(a.factor*budget*100), exactNumber(a.factor), budgetNumber(budget*100), a.long,
					a.short, exactNumber(target), frame.name,
					roughDuration(time.Duration(float64(frame.duration)/a.factor))),
			},
		})
	}
	return g, nil
}

// seriesNamePart turns an SLO id (a lowercase UUID) into the part of a series name that tells the
// SLO's series apart: '-' becomes '_'.
func seriesNamePart(id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("it has no id")
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return "", fmt.Errorf("its id %q has a character other than letters, digits and '-'", id)
		}
	}
	return strings.ReplaceAll(id, "-", "_"), nil
}

type sloTimeFrame struct {
	name     string
	duration time.Duration
}

func timeFrame(f oas.SloTimeFrame) (sloTimeFrame, error) {
	day := 24 * time.Hour
	switch f {
	case oas.SloTimeFrameSLOTIMEFRAME7DAYS:
		return sloTimeFrame{"7d", 7 * day}, nil
	case oas.SloTimeFrameSLOTIMEFRAME14DAYS:
		return sloTimeFrame{"14d", 14 * day}, nil
	case oas.SloTimeFrameSLOTIMEFRAME21DAYS:
		return sloTimeFrame{"21d", 21 * day}, nil
	case oas.SloTimeFrameSLOTIMEFRAME28DAYS:
		return sloTimeFrame{"28d", 28 * day}, nil
	}
	return sloTimeFrame{}, fmt.Errorf("sloTimeFrame %q is not one of 7, 14, 21 and 28 days", f)
}

// windowRule answers the evaluation interval of a window-based SLI (its window) and the PromQL
// comparison that makes a window good.
func windowRule(sli oas.WindowBasedMetricSli) (string, string, error) {
	var interval string
	switch sli.Window {
	case oas.WindowSloWindowWINDOWSLOWINDOW1MINUTE:
		interval = "1m"
	case oas.WindowSloWindowWINDOWSLOWINDOW5MINUTES:
		interval = "5m"
	default:
		return "", "", fmt.Errorf("windowBasedMetricSli.window %q is not 1 or 5 minutes", sli.Window)
	}
	switch sli.ComparisonOperator {
	case oas.SloComparisonOperatorCOMPARISONOPERATORGREATERTHAN:
		return interval, ">", nil
	case oas.SloComparisonOperatorCOMPARISONOPERATORGREATERTHANOREQUALS:
		return interval, ">=", nil
	case oas.SloComparisonOperatorCOMPARISONOPERATORLESSTHAN:
		return interval, "<", nil
	case oas.SloComparisonOperatorCOMPARISONOPERATORLESSTHANOREQUALS:
		return interval, "<=", nil
	}
	return "", "", fmt.Errorf("windowBasedMetricSli.comparisonOperator %q is not a comparison", sli.ComparisonOperator)
}

// sloQueries parses SLI queries as internal/slos checks them: the default function set, as a
// Prometheus server with no feature flags.
var sloQueries = parser.NewParser(parser.Options{})

// parseInstantVector parses an SLI query that must answer an instant vector.
func parseInstantVector(field, query string) (parser.Expr, error) {
	expr, err := sloQueries.ParseExpr(query)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid PromQL: %s", field, strings.Join(strings.Fields(err.Error()), " "))
	}
	if expr.Type() != parser.ValueTypeVector {
		return nil, fmt.Errorf("%s answers a %s, not an instant vector", field, expr.Type())
	}
	return expr, nil
}

func hasRangeSelector(expr parser.Expr) bool {
	found := false
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if _, ok := n.(*parser.MatrixSelector); ok {
			found = true
		}
		return nil
	})
	return found
}

// withRange answers query, which parseInstantVector has accepted, as PromQL text with the range of
// every range selector set to d; subqueries keep their own range and step. It parses query again
// for a tree of its own to change (the parser's tree has no deep copy).
func withRange(query string, d time.Duration) string {
	expr, err := sloQueries.ParseExpr(query)
	if err != nil {
		return query // not reached: the query parsed a moment ago
	}
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if m, ok := n.(*parser.MatrixSelector); ok {
			m.Range = d
			m.RangeExpr = nil
		}
		return nil
	})
	return expr.String()
}

// sumBy answers the PromQL text of expr summed by the grouping labels; an expr that already is
// such a sum is answered as it is.
func sumBy(grouping []string, expr string) string {
	if parsed, err := sloQueries.ParseExpr(expr); err == nil {
		if agg, ok := parsed.(*parser.AggregateExpr); ok && agg.Op == parser.SUM && !agg.Without && sameSet(agg.Grouping, grouping) {
			return expr
		}
	}
	return "sum" + byClause(grouping) + " (" + expr + ")"
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	for _, x := range b {
		if !in[x] {
			return false
		}
	}
	return true
}

func byClause(grouping []string) string {
	if len(grouping) == 0 {
		return ""
	}
	return " by (" + strings.Join(grouping, ", ") + ")"
}

// sloAlertLabels answers the SLO's labels an alert may carry: not those named as ours, as a
// grouping label, or reserved by Prometheus (a leading "__"). Values are escaped for Prometheus's
// label templating.
func sloAlertLabels(s oas.Slo, grouping []string) map[string]string {
	skip := map[string]bool{}
	for _, l := range grouping {
		skip[l] = true
	}
	out := map[string]string{}
	for k, v := range s.Labels.Value {
		if ourAlertLabels[k] || skip[k] || strings.HasPrefix(k, "__") || !model.LegacyValidation.IsValidLabelName(k) {
			continue
		}
		out[k] = escapeTemplate(v)
	}
	return out
}

// escapeTemplate makes text safe inside an alert's labels and annotations, which Prometheus
// expands as Go templates: every "{{" is written as a template that prints "{{".
func escapeTemplate(text string) string {
	return strings.ReplaceAll(text, "{{", `{{ "{{" }}`)
}

// exactNumber writes f as PromQL reads it, in the fewest digits that read back as f.
func exactNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// budgetNumber writes an error budget computed from the target, to 12 significant digits so that
// float noise (1 - 0.999 = 0.0010000000000000009) does not show.
func budgetNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', 12, 64)
}

// roughDuration writes d in days and hours, rounded to the hour ("1d23h", "28d", "5h").
func roughDuration(d time.Duration) string {
	hours := int64(math.Round(d.Hours()))
	if hours < 1 {
		return "less than an hour"
	}
	days, rest := hours/24, hours%24
	switch {
	case days == 0:
		return fmt.Sprintf("%dh", rest)
	case rest == 0:
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, rest)
}
