package promrules

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/mgmtapi/mgmtapi/internal/alertdefs"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/slos"
)

// The labels every alert of an alert definition carries, which tie its firings back to the
// definition: ingestion (internal/ingest, internal/cases, internal/alertevents) reads them.
const (
	AlertDefIDLabel = "alert_def_id"
	// AlertDefVersionAnnotation is the annotation naming the definition's version the rule was
	// written from. It is not a label (issue 37): a label that changes with every edit would give
	// the alert a new identity, so Prometheus would drop the firing alert of the old version
	// without a resolution; as an annotation the alert keeps its state across an edit, and
	// resolves at the next evaluation when the new version no longer fires. Alerts written before
	// carry it as a label; ingestion reads either.
	AlertDefVersionAnnotation = "alert_def_version_id"
	// AlertDefVersionLabel is AlertDefVersionAnnotation's name when older rule files set it as a
	// label; no rule sets it any more, and an entity label of that name is still left out.
	AlertDefVersionLabel  = AlertDefVersionAnnotation
	AlertDefNameLabel     = "alert_def_name"
	AlertDefPriorityLabel = "alert_def_priority"
	AlertDefTypeLabel     = "alert_def_type"
	// AlertDefTeamLabel is the id of the team whose definition it is (an Alertmanager shared by
	// several teams routes on it to each team's receiver and key).
	AlertDefTeamLabel = "alert_def_team_id"
	// AlertDefRuleLabel is the index of the definition's rule (condition) that fired, from 0.
	AlertDefRuleLabel = "alert_def_rule"
	// AlertDefNoDataLabel is "true" on the alert of a definition's no-data rule (noDataOf): the
	// definition's status is NO_DATA while it fires.
	AlertDefNoDataLabel = "alert_def_no_data"
)

// alertDefLabels are the labels the generator sets on a definition's alerts; an entity label of
// the same name is left out.
var alertDefLabels = map[string]bool{
	AlertDefIDLabel: true, AlertDefVersionLabel: true, AlertDefNameLabel: true, AlertDefPriorityLabel: true,
	AlertDefTypeLabel: true, AlertDefRuleLabel: true, AlertDefTeamLabel: true, AlertDefNoDataLabel: true, "severity": true, "alertname": true,
}

// AlertDefGroupsAndSkips reads the team's alert definitions (oldest first) and answers one rule
// group per enabled metric threshold, metric anomaly and SLO threshold definition, as
// AlertDefGroup builds it, and the enabled definitions of those types it left out, each with the
// reason (Kind "alert definition": an SLO without PromQL rules, say); the other types are not
// evaluated by mgmtapi and have none. It changes nothing and checks no permission; its signature
// is that of a part of the team's rule file (fileSources in rulefile.go).
//
// Errors: only those of reading the database.
func AlertDefGroupsAndSkips(ctx context.Context, q db.Querier, teamID int64) ([]Group, []LeftOut, error) {
	defs, err := alertdefs.List(ctx, q, teamID)
	if err != nil {
		return nil, nil, err
	}
	var sloByID map[string]oas.Slo // read once, when a definition needs it
	sloOf := func(id string) (oas.Slo, bool, error) {
		if sloByID == nil {
			sloByID = map[string]oas.Slo{}
			if err := slos.EachTeamSLO(ctx, q, teamID, func(s *oas.Slo) error {
				sloByID[s.ID.Or("")] = *s
				return nil
			}); err != nil {
				return oas.Slo{}, false, err
			}
		}
		s, ok := sloByID[id]
		return s, ok, nil
	}
	var groups []Group
	var skipped []LeftOut
	for _, d := range defs {
		p := d.AlertDefProperties.Value
		if !p.Enabled.Or(false) || !alertdefs.Evaluated(p.Type.Or("")) { // unset is false (proto3), as the list's filter reads it
			continue
		}
		var slo *oas.Slo
		if p.SloThreshold.Set {
			s, ok, err := sloOf(p.SloThreshold.Value.SloDefinition.Value.SloId.Or(""))
			if err != nil {
				return nil, nil, err
			}
			if ok {
				slo = &s
			}
		}
		g, err := AlertDefGroup(teamID, d, slo)
		if err != nil {
			skipped = append(skipped, LeftOut{Kind: "alert definition", ID: d.ID.Or(""), Name: p.Name.Or(""), Reason: err.Error()})
			continue
		}
		older, err := alertdefs.VersionsWhileFiring(ctx, q, teamID, d)
		if err != nil {
			return nil, nil, err
		}
		for _, o := range older {
			var oldSLO *oas.Slo
			if op := o.AlertDefProperties.Value; op.SloThreshold.Set {
				s, ok, err := sloOf(op.SloThreshold.Value.SloDefinition.Value.SloId.Or(""))
				if err != nil {
					return nil, nil, err
				}
				if ok {
					oldSLO = &s
				}
			}
			o.ID = d.ID
			if og, err := AlertDefGroup(teamID, o, oldSLO); err == nil {
				g.Rules = retireRules(g.Rules, og.Rules)
			}
		}
		groups = append(groups, g)
	}
	return groups, skipped, nil
}

// retiredExpr is the expression of a retired rule: it answers nothing, ever.
const retiredExpr = "vector(0) > 0"

// retireRules appends to rules, the current version's, each alerting rule of an older version
// (older) whose name and labels no current rule has, retired: the same name, labels and
// annotations, and an expression that answers nothing (retiredExpr). Prometheus carries a rule's
// firing alerts over a reload only to a rule of the same name and labels (rules.Group.CopyState);
// an edit that renames the definition or changes its priority makes other rules, so the old
// version's firing alert would vanish without a resolution, and Alertmanager would resolve it only
// when it times out. The retired rule takes the alert over, and at its next evaluation Prometheus
// resolves it (issue 37). AlertDefGroupsAndSkips keeps an older version's rules while the
// definition has an incident that its source has not resolved (alertdefs.VersionsWhileFiring).
func retireRules(rules, older []Rule) []Rule {
	have := map[string]bool{}
	for _, r := range rules {
		if r.Alert != "" {
			have[ruleIdentity(r)] = true
		}
	}
	for _, r := range older {
		if r.Alert == "" || have[ruleIdentity(r)] {
			continue
		}
		have[ruleIdentity(r)] = true
		rules = append(rules, Rule{Alert: r.Alert, Expr: retiredExpr, Labels: r.Labels, Annotations: r.Annotations})
	}
	return rules
}

// ruleIdentity is what Prometheus matches a rule by across a reload: its name and its labels.
func ruleIdentity(r Rule) string {
	keys := slices.Sorted(maps.Keys(r.Labels))
	var b strings.Builder
	b.WriteString(r.Alert)
	for _, k := range keys {
		b.WriteString("\x00" + k + "\x00" + r.Labels[k])
	}
	return b.String()
}

// AlertDefGroup answers the rules of one metric threshold, metric anomaly or SLO threshold alert
// definition, in a group named alertdef-<id>: one alerting rule per rule (condition) of the
// definition, named as the definition, whose PromQL docs/decisions.md explains (i26-promalerts,
// i37-windows); an anomaly rule adds two recording rules, alertdef:<id>:<rule>:usual_mean and
// _stddev. Each alert carries the labels alert_def_id, alert_def_name,
// alert_def_priority (P1…P5, the rule's override or the definition's), alert_def_type,
// alert_def_rule (the rule's index), alert_def_team_id (the team's id), severity (p1…p5, which
// ingestion turns into the incident's
// severity and the case's priority), and the definition's entity labels; its annotations are
// a summary, the definition's description and alert_def_version_id (the version, which is not a
// label so that an edit keeps the alert's identity). An activity schedule (activeOn) limits the alerts
// to its days and times of day, in UTC. slo is the SLO an SLO threshold definition names (nil
// when the team has none of that id).
//
// Errors: why the definition has no rules: a type mgmtapi does not evaluate, a query that does
// not parse or answers no instant vector, an SLO that is gone or has no PromQL rules, a window
// or duration that cannot be read, an id that cannot name a series.
func AlertDefGroup(teamID int64, d oas.AlertDef, slo *oas.Slo) (Group, error) {
	id := d.ID.Or("")
	idPart, err := seriesNamePart(id)
	if err != nil {
		return Group{}, err
	}
	p := d.AlertDefProperties.Value
	g := Group{Name: "alertdef-" + id}
	labelsOf := func(rule int, override oas.OptAlertDefOverride) map[string]string {
		priority := p.Priority.Or(oas.AlertDefPriorityALERTDEFPRIORITYP5ORUNSPECIFIED)
		if override.Set && override.Value.Priority.Set {
			priority = override.Value.Priority.Value
		}
		short := priorityName(priority)
		labels := map[string]string{}
		for k, v := range p.EntityLabels.Value {
			if alertDefLabels[k] || strings.HasPrefix(k, "__") || !model.LegacyValidation.IsValidLabelName(k) {
				continue
			}
			labels[k] = escapeTemplate(v)
		}
		labels[AlertDefIDLabel] = id
		labels[AlertDefNameLabel] = escapeTemplate(p.Name.Or(""))
		labels[AlertDefPriorityLabel] = short
		labels[AlertDefTypeLabel] = strings.TrimPrefix(string(p.Type.Or("")), "ALERT_DEF_TYPE_")
		labels[AlertDefRuleLabel] = strconv.Itoa(rule)
		labels[AlertDefTeamLabel] = strconv.FormatInt(teamID, 10)
		labels["severity"] = strings.ToLower(short)
		return labels
	}
	annotations := func(summary string) map[string]string {
		out := map[string]string{"summary": escapeTemplate(summary), AlertDefVersionAnnotation: d.AlertVersionId.Or("")}
		if text := p.Description.Or(""); text != "" {
			out["description"] = escapeTemplate(text)
		}
		return out
	}
	active, err := activeOn(p.ActiveOn)
	if err != nil {
		return Group{}, err
	}
	alert := func(expr string, rule int, override oas.OptAlertDefOverride, summary string) Rule {
		if active != "" {
			expr = fmt.Sprintf("(%s) and on () (%s)", expr, active)
		}
		return Rule{Alert: p.Name.Or(""), Expr: expr, Labels: labelsOf(rule, override), Annotations: annotations(summary)}
	}

	switch {
	case p.MetricThreshold.Set:
		m := p.MetricThreshold.Value
		query, err := metricQuery("metricThreshold", m.MetricFilter, m.EvaluationDelayMs)
		if err != nil {
			return Group{}, err
		}
		for i, r := range m.Rules {
			c := r.Condition.Value
			window, err := metricWindow(fmt.Sprintf("metricThreshold.rules[%d].condition.ofTheLast", i), c.OfTheLast)
			if err != nil {
				return Group{}, err
			}
			cond := metricCondition{
				op:         thresholdOps[c.ConditionType.Or(oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEMORETHANORUNSPECIFIED)],
				threshold:  c.Threshold.Or(0),
				window:     window,
				step:       conditionStep(window),
				forOverPct: c.ForOverPct.Or(0),
				groupBy:    p.GroupByKeys,
			}
			if cond.op == "" {
				return Group{}, fmt.Errorf("metricThreshold.rules[%d].condition.conditionType %q is not a comparison", i, c.ConditionType.Value)
			}
			if mv := m.MissingValues.Value; m.MissingValues.Set {
				cond.replaceWithZero = mv.ReplaceWithZero.Or(false)
				cond.minNonNullPct = mv.MinNonNullValuesPct.Or(0)
				cond.goneMemory = retireOf(m)
			}
			g.Rules = append(g.Rules, alert(cond.expr(query), i, r.Override,
				fmt.Sprintf("%s: the value is %s %s for %s of the last %s", p.Name.Or(""), opWords[cond.op],
					exactNumber(cond.threshold), shareWords(cond.forOverPct), promDuration(window))))
		}
		if absence, ok := noDataOf(m); ok && len(m.Rules) > 0 {
			window, err := metricWindow("metricThreshold.rules[0].condition.ofTheLast", m.Rules[0].Condition.Value.OfTheLast)
			if err != nil {
				return Group{}, err
			}
			absence.window, absence.groupBy = window, p.GroupByKeys
			g.Rules = append(g.Rules, noDataRule(alert(absence.expr(query), len(m.Rules), oas.OptAlertDefOverride{},
				fmt.Sprintf("%s: no data for the last %s%s", p.Name.Or(""), promDuration(window), absence.retireWords()))))
		}
	case p.MetricAnomaly.Set:
		m := p.MetricAnomaly.Value
		query, err := metricQuery("metricAnomaly", m.MetricFilter, m.EvaluationDelayMs)
		if err != nil {
			return Group{}, err
		}
		for i, r := range m.Rules {
			c := r.Condition.Value
			window, err := metricWindow(fmt.Sprintf("metricAnomaly.rules[%d].condition.ofTheLast", i), c.OfTheLast)
			if err != nil {
				return Group{}, err
			}
			cond := anomalyCondition{
				metricCondition: metricCondition{
					threshold: c.Threshold.Or(0), window: window, step: conditionStep(window),
					forOverPct: c.ForOverPct.Or(0), minNonNullPct: c.MinNonNullValuesPct.Or(0), groupBy: p.GroupByKeys,
				},
				lessThanUsual: c.ConditionType.Or("") == oas.AlertDefMetricAnomalyConditionTypeMETRICANOMALYCONDITIONTYPELESSTHANUSUAL,
				deviationPct:  float64(m.AnomalyAlertSettings.Value.PercentageOfDeviation.Or(0)),
			}
			prefix := fmt.Sprintf("alertdef:%s:r%d:", idPart, i)
			g.Rules = append(g.Rules, cond.usualRules(query, prefix+"usual_mean", prefix+"usual_stddev")...)
			direction := "more"
			if cond.lessThanUsual {
				direction = "less"
			}
			g.Rules = append(g.Rules, alert(cond.expr(query, prefix+"usual_mean", prefix+"usual_stddev"), i, oas.OptAlertDefOverride{},
				fmt.Sprintf("%s: the value is %s than usual for %s of the last %s", p.Name.Or(""), direction,
					shareWords(cond.forOverPct), promDuration(window))))
		}
		if len(m.Rules) > 0 {
			// No data (issue 37): the anomaly shape has no policy, so every anomaly definition
			// watches its series' absence, over its first rule's window, remembered a day.
			window, err := metricWindow("metricAnomaly.rules[0].condition.ofTheLast", m.Rules[0].Condition.Value.OfTheLast)
			if err != nil {
				return Group{}, err
			}
			absence := noDataCondition{window: window, groupBy: p.GroupByKeys}
			g.Rules = append(g.Rules, noDataRule(alert(absence.expr(query), len(m.Rules), oas.OptAlertDefOverride{},
				fmt.Sprintf("%s: no data for the last %s", p.Name.Or(""), promDuration(window)))))
		}
	case p.SloThreshold.Set:
		t := p.SloThreshold.Value
		if slo == nil {
			return Group{}, fmt.Errorf("sloThreshold.sloDefinition.sloId %q names no SLO of the team", t.SloDefinition.Value.SloId.Or(""))
		}
		noDataWindow := sloNoDataWindow
		switch {
		case t.BurnRate.Set:
			b := t.BurnRate.Value
			duration, dual := b.Single.Value.TimeDuration, false
			if b.Dual.Set {
				duration, dual = b.Dual.Value.TimeDuration, true
			}
			window, err := sloDuration(duration)
			if err != nil {
				return Group{}, err
			}
			noDataWindow = window
			for i, r := range b.Rules {
				threshold := r.Condition.Value.Threshold.Or(0)
				expr, err := sloBurnRateExpr(*slo, window, dual, threshold)
				if err != nil {
					return Group{}, fmt.Errorf("SLO %s: %w", slo.ID.Or(""), err)
				}
				g.Rules = append(g.Rules, alert(expr, i, r.Override,
					fmt.Sprintf("%s: SLO %q burns its error budget more than %s× the sustainable rate over %s", p.Name.Or(""),
						slo.Name, exactNumber(threshold), promDuration(window))))
			}
		case t.ErrorBudget.Set:
			for i, r := range t.ErrorBudget.Value.Rules {
				threshold := r.Condition.Value.Threshold.Or(0)
				expr, err := sloErrorBudgetExpr(*slo, threshold)
				if err != nil {
					return Group{}, fmt.Errorf("SLO %s: %w", slo.ID.Or(""), err)
				}
				g.Rules = append(g.Rules, alert(expr, i, r.Override,
					fmt.Sprintf("%s: SLO %q has less than %s%% of its error budget left", p.Name.Or(""), slo.Name, exactNumber(threshold))))
			}
		default:
			return Group{}, fmt.Errorf("sloThreshold has neither burnRate nor errorBudget")
		}
		if events, ok := sloEvents(*slo); ok && len(g.Rules) > 0 {
			// No data (issue 37): the SLO threshold shape has no policy, so every SLO definition
			// watches its SLO's events for the burn rate's window (an hour for an error budget),
			// remembered a day.
			absence := noDataCondition{window: noDataWindow}
			g.Rules = append(g.Rules, noDataRule(alert(absence.expr(events), len(g.Rules), oas.OptAlertDefOverride{},
				fmt.Sprintf("%s: no data of SLO %q for the last %s", p.Name.Or(""), slo.Name, promDuration(noDataWindow)))))
		}
	default:
		return Group{}, fmt.Errorf("its type %s is not evaluated by mgmtapi", p.Type.Or(""))
	}
	if len(g.Rules) == 0 {
		return Group{}, fmt.Errorf("it has no rules")
	}
	return g, nil
}

// noDataRule marks rule as a definition's no-data rule (AlertDefNoDataLabel): its alert sets the
// definition's status NO_DATA while it fires.
func noDataRule(rule Rule) Rule {
	rule.Labels[AlertDefNoDataLabel] = "true"
	return rule
}

// sloNoDataWindow is how long an SLO threshold definition's SLO must have no events for its
// no-data alert when the definition has no burn-rate window (an error budget: its SLO's time
// frame is days long).
const sloNoDataWindow = time.Hour

// sloEvents answers the PromQL whose series an SLO threshold definition's no-data rule watches:
// the events of s by its grouping labels (a request-based SLI's total events query, a
// window-based SLI's query); false for an SLI that is not PromQL.
func sloEvents(s oas.Slo) (string, bool) {
	var grouping []string
	for _, l := range s.Grouping.Value.Labels {
		grouping = append(grouping, string(l))
	}
	switch {
	case s.RequestBasedMetricSli.Set:
		return sumBy(grouping, s.RequestBasedMetricSli.Value.TotalEvents.Query), true
	case s.WindowBasedMetricSli.Set:
		return sumBy(grouping, s.WindowBasedMetricSli.Value.Query.Query), true
	}
	return "", false
}

var thresholdOps = map[oas.AlertDefMetricThresholdConditionType]string{
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEMORETHANORUNSPECIFIED: ">",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPELESSTHAN:              "<",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEMORETHANOREQUALS:      ">=",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPELESSTHANOREQUALS:      "<=",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPEEQUALS:                "==",
	oas.AlertDefMetricThresholdConditionTypeMETRICTHRESHOLDCONDITIONTYPENOTEQUALS:             "!=",
}

var opWords = map[string]string{
	">": "more than", "<": "less than", ">=": "at least", "<=": "at most", "==": "equal to", "!=": "not equal to",
}

func shareWords(pct int64) string {
	if pct <= 0 {
		return "a moment"
	}
	return strconv.FormatInt(pct, 10) + "%"
}

// priorityName answers P1…P5 for a definition priority.
func priorityName(p oas.AlertDefPriority) string {
	switch p {
	case oas.AlertDefPriorityALERTDEFPRIORITYP1:
		return "P1"
	case oas.AlertDefPriorityALERTDEFPRIORITYP2:
		return "P2"
	case oas.AlertDefPriorityALERTDEFPRIORITYP3:
		return "P3"
	case oas.AlertDefPriorityALERTDEFPRIORITYP4:
		return "P4"
	}
	return "P5"
}

// metricQuery answers a metric definition's PromQL with its evaluation delay applied.
func metricQuery(field string, filter oas.OptAlertDefMetricFilter, delayMs oas.OptInt32) (string, error) {
	query := filter.Value.Promql.Or("")
	if _, err := parseInstantVector(field+".metricFilter.promql", query); err != nil {
		return "", err
	}
	delayed, err := withOffset(query, time.Duration(delayMs.Or(0))*time.Millisecond)
	if err != nil {
		return "", fmt.Errorf("%s.metricFilter.promql is %w", field, err)
	}
	return delayed, nil
}

var metricWindows = map[oas.AlertDefMetricTimeWindowValue]time.Duration{
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES1ORUNSPECIFIED: time.Minute,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES5:              5 * time.Minute,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES10:             10 * time.Minute,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES15:             15 * time.Minute,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES20:             20 * time.Minute,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES30:             30 * time.Minute,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOUR1:                 time.Hour,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOURS2:                2 * time.Hour,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOURS4:                4 * time.Hour,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOURS6:                6 * time.Hour,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOURS12:               12 * time.Hour,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOURS24:               24 * time.Hour,
	oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEHOURS36:               36 * time.Hour,
}

// metricWindow answers the span of an "of the last" window: a named one, or a dynamic duration
// in Prometheus's notation ("7m", "1h30m"); unset is one minute.
func metricWindow(field string, w oas.OptAlertDefMetricTimeWindow) (time.Duration, error) {
	if w.Value.MetricTimeWindowDynamicDuration.Set {
		text := w.Value.MetricTimeWindowDynamicDuration.Value
		d, err := model.ParseDuration(text)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%s.metricTimeWindowDynamicDuration %q is not a positive duration such as 7m or 1h30m", field, text)
		}
		return time.Duration(d), nil
	}
	d, ok := metricWindows[w.Value.MetricTimeWindowSpecificValue.Or(oas.AlertDefMetricTimeWindowValueMETRICTIMEWINDOWVALUEMINUTES1ORUNSPECIFIED)]
	if !ok {
		return 0, fmt.Errorf("%s.metricTimeWindowSpecificValue %q is not a window", field, w.Value.MetricTimeWindowSpecificValue.Value)
	}
	return d, nil
}

// sloDuration answers a burn-rate window: a whole number of hours ("1", or "1h").
func sloDuration(d oas.OptAlertDefTimeDuration) (time.Duration, error) {
	text := strings.TrimSuffix(strings.TrimSpace(d.Value.Duration.Or("")), "h")
	hours, err := strconv.Atoi(text)
	if err != nil || hours < 1 || hours > 24*28 {
		return 0, fmt.Errorf("sloThreshold.burnRate timeDuration.duration %q is not a whole number of hours from 1 to 672", d.Value.Duration.Or(""))
	}
	return time.Duration(hours) * time.Hour, nil
}

// weekdays are PromQL's day_of_week() numbers (Sunday 0).
var weekdays = map[oas.AlertDefDayOfWeek]int{
	oas.AlertDefDayOfWeekDAYOFWEEKSUNDAY: 0, oas.AlertDefDayOfWeekDAYOFWEEKMONDAYORUNSPECIFIED: 1,
	oas.AlertDefDayOfWeekDAYOFWEEKTUESDAY: 2, oas.AlertDefDayOfWeekDAYOFWEEKWEDNESDAY: 3,
	oas.AlertDefDayOfWeekDAYOFWEEKTHURSDAY: 4, oas.AlertDefDayOfWeekDAYOFWEEKFRIDAY: 5,
	oas.AlertDefDayOfWeekDAYOFWEEKSATURDAY: 6,
}

// activeOn answers the PromQL (a scalar-free instant vector that is empty outside the schedule)
// of a definition's activity schedule: its days of the week and, within them, its times of day
// from start (included) to end (excluded), in UTC; an end before the start wraps past midnight.
// Each instant is judged by its own weekday and time of day. No schedule, or one with no days and
// equal start and end times, answers "" (always active).
//
// Errors: a day that is not a weekday.
func activeOn(s oas.OptAlertDefActivitySchedule) (string, error) {
	if !s.Set {
		return "", nil
	}
	var parts []string
	if len(s.Value.DayOfWeek) > 0 {
		var days []string
		for _, d := range s.Value.DayOfWeek {
			n, ok := weekdays[d]
			if !ok {
				return "", fmt.Errorf("activeOn.dayOfWeek %q is not a weekday", d)
			}
			days = append(days, fmt.Sprintf("day_of_week() == %d", n))
		}
		parts = append(parts, "("+strings.Join(days, " or ")+")")
	}
	if s.Value.StartTime.Set || s.Value.EndTime.Set {
		minute := func(t oas.OptAlertDefTimeOfDay) int {
			return int(t.Value.Hours.Or(0))*60 + int(t.Value.Minutes.Or(0))
		}
		start, end := minute(s.Value.StartTime), minute(s.Value.EndTime)
		now := "(hour() * 60 + minute())"
		switch {
		case start < end:
			parts = append(parts, fmt.Sprintf("(%s >= %d and %s < %d)", now, start, now, end))
		case start > end:
			parts = append(parts, fmt.Sprintf("(%s >= %d or %s < %d)", now, start, now, end))
		}
	}
	if len(parts) == 0 {
		return "", nil
	}
	return strings.Join(parts, " and "), nil
}
