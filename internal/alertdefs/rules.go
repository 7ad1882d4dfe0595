package alertdefs

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// promql parses metric alerts' queries with the default function set, as a Prometheus server
// with no feature flags does (the same parser the SLO and recording-rule areas use).
var promql = parser.NewParser(parser.Options{})

// zeroType is the proto3 zero of AlertDefType: sent or not, it says nothing about the block.
const zeroType = oas.AlertDefTypeALERTDEFTYPELOGSIMMEDIATEORUNSPECIFIED

// block is one type block of AlertDefProperties: its member name, its type, whether it is set,
// and how to fill it with its empty value.
type block struct {
	member string
	typ    oas.AlertDefType
	set    bool
	fill   func()
}

// blocksOf lists the 15 type blocks of p in the order of the type enumeration.
func blocksOf(p *oas.AlertDefProperties) []block {
	return []block{
		{"logsImmediate", oas.AlertDefTypeALERTDEFTYPELOGSIMMEDIATEORUNSPECIFIED, p.LogsImmediate.Set, func() { p.LogsImmediate.SetTo(oas.AlertDefLogsImmediateType{}) }},
		{"logsThreshold", oas.AlertDefTypeALERTDEFTYPELOGSTHRESHOLD, p.LogsThreshold.Set, func() { p.LogsThreshold.SetTo(oas.AlertDefLogsThresholdType{}) }},
		{"logsAnomaly", oas.AlertDefTypeALERTDEFTYPELOGSANOMALY, p.LogsAnomaly.Set, func() { p.LogsAnomaly.SetTo(oas.AlertDefLogsAnomalyType{}) }},
		{"logsRatioThreshold", oas.AlertDefTypeALERTDEFTYPELOGSRATIOTHRESHOLD, p.LogsRatioThreshold.Set, func() { p.LogsRatioThreshold.SetTo(oas.AlertDefLogsRatioThresholdType{}) }},
		{"logsNewValue", oas.AlertDefTypeALERTDEFTYPELOGSNEWVALUE, p.LogsNewValue.Set, func() { p.LogsNewValue.SetTo(oas.AlertDefLogsNewValueType{}) }},
		{"logsUniqueCount", oas.AlertDefTypeALERTDEFTYPELOGSUNIQUECOUNT, p.LogsUniqueCount.Set, func() { p.LogsUniqueCount.SetTo(oas.AlertDefLogsUniqueCountType{}) }},
		{"logsTimeRelativeThreshold", oas.AlertDefTypeALERTDEFTYPELOGSTIMERELATIVETHRESHOLD, p.LogsTimeRelativeThreshold.Set, func() { p.LogsTimeRelativeThreshold.SetTo(oas.AlertDefLogsTimeRelativeThresholdType{}) }},
		{"metricThreshold", oas.AlertDefTypeALERTDEFTYPEMETRICTHRESHOLD, p.MetricThreshold.Set, func() { p.MetricThreshold.SetTo(oas.AlertDefMetricThresholdType{}) }},
		{"metricAnomaly", oas.AlertDefTypeALERTDEFTYPEMETRICANOMALY, p.MetricAnomaly.Set, func() { p.MetricAnomaly.SetTo(oas.AlertDefMetricAnomalyType{}) }},
		{"tracingImmediate", oas.AlertDefTypeALERTDEFTYPETRACINGIMMEDIATE, p.TracingImmediate.Set, func() { p.TracingImmediate.SetTo(oas.AlertDefTracingImmediateType{}) }},
		{"tracingThreshold", oas.AlertDefTypeALERTDEFTYPETRACINGTHRESHOLD, p.TracingThreshold.Set, func() { p.TracingThreshold.SetTo(oas.AlertDefTracingThresholdType{}) }},
		{"flow", oas.AlertDefTypeALERTDEFTYPEFLOW, p.Flow.Set, func() { p.Flow.SetTo(oas.AlertDefFlowType{}) }},
		{"sloThreshold", oas.AlertDefTypeALERTDEFTYPESLOTHRESHOLD, p.SloThreshold.Set, func() { p.SloThreshold.SetTo(oas.AlertDefSloThresholdType{}) }},
		{"analyticsImmediate", oas.AlertDefTypeALERTDEFTYPEANALYTICSIMMEDIATE, p.AnalyticsImmediate.Set, func() { p.AnalyticsImmediate.SetTo(oas.AlertDefAnalyticsImmediateType{}) }},
		{"analyticsThreshold", oas.AlertDefTypeALERTDEFTYPEANALYTICSTHRESHOLD, p.AnalyticsThreshold.Set, func() { p.AnalyticsThreshold.SetTo(oas.AlertDefAnalyticsThresholdType{}) }},
	}
}

// Evaluated reports whether mgmtapi can evaluate definitions of type t over what it holds
// (metrics and SLOs); the others are stored and checked only.
func Evaluated(t oas.AlertDefType) bool {
	switch t {
	case oas.AlertDefTypeALERTDEFTYPEMETRICTHRESHOLD, oas.AlertDefTypeALERTDEFTYPEMETRICANOMALY, oas.AlertDefTypeALERTDEFTYPESLOTHRESHOLD:
		return true
	}
	return false
}

// checkProperties checks what can be checked of p without the database and settles its type:
// exactly one type block, which `type` (when sent and not its zero) must name; with no block,
// `type` chooses one, filled with its empty value, which must then pass its type's checks; with
// neither (or the zero type, which says nothing), it is refused naming the one-of. It sets p.Type to the block's type. path is where p is in the request
// (e.g. "alertDefProperties" or "alertDefsToCreate[2].alertDefProperties").
//
// Errors: Invalid naming the field and the rule.
func checkProperties(path string, p *oas.AlertDefProperties) error {
	if strings.TrimSpace(p.Name.Or("")) == "" {
		return apierror.Invalidf("%s.name: required, 1–512 characters, not only white space", path)
	}
	var set []block
	blocks := blocksOf(p)
	for _, b := range blocks {
		if b.set {
			set = append(set, b)
		}
	}
	sent, hasType := p.Type.Get()
	switch len(set) {
	case 0:
		if !hasType || sent == zeroType {
			// Storing it as logs-immediate (the zero type) would pass a forgotten block off as
			// a choice.
			names := make([]string, len(blocks))
			for i, b := range blocks {
				names[i] = b.member
			}
			return apierror.Invalidf("%s: holds no type block; a definition holds exactly one of %s (or names a type other than %s in type, which gets its empty block)",
				path, strings.Join(names, ", "), zeroType)
		}
		t := sent
		for _, b := range blocks {
			if b.typ == t {
				b.fill()
			}
		}
		p.Type.SetTo(t)
	case 1:
		if hasType && sent != zeroType && sent != set[0].typ {
			return apierror.Invalidf("%s.type: is %s, but the definition's type block is %s (%s); leave type out or make them agree", path, sent, set[0].member, set[0].typ)
		}
		p.Type.SetTo(set[0].typ)
	default:
		names := make([]string, len(set))
		for i, b := range set {
			names[i] = b.member
		}
		return apierror.Invalidf("%s: holds %s; a definition holds exactly one type block", path, strings.Join(names, " and "))
	}
	if err := checkCommon(path, p); err != nil {
		return err
	}
	return checkBlock(path, p)
}

// labelName is the form of an entity label or group-by key that becomes a label elsewhere: a
// letter or _ first, then letters, digits, _, ., -, /.
var labelName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

func checkCommon(path string, p *oas.AlertDefProperties) error {
	if len(p.EntityLabels.Value) > 100 {
		return apierror.Invalidf("%s.entityLabels: must have at most 100 labels (got %d)", path, len(p.EntityLabels.Value))
	}
	for _, k := range sortedKeys(p.EntityLabels.Value) {
		if len(k) > 256 || !labelName.MatchString(k) {
			return apierror.Invalidf("%s.entityLabels[%s]: a label name has 1–256 characters, a letter or _ first, then letters, digits, _, ., -, /", path, k)
		}
		if len(p.EntityLabels.Value[k]) > 1024 {
			return apierror.Invalidf("%s.entityLabels[%s]: a value has at most 1024 characters", path, k)
		}
	}
	if a, ok := p.ActiveOn.Get(); ok {
		seen := map[oas.AlertDefDayOfWeek]bool{}
		for i, d := range a.DayOfWeek {
			if seen[d] {
				return apierror.Invalidf("%s.activeOn.dayOfWeek[%d]: %s is given twice", path, i, d)
			}
			seen[d] = true
		}
	}
	if g, ok := p.NotificationGroup.Get(); ok {
		if err := checkNotificationGroup(path+".notificationGroup", g); err != nil {
			return err
		}
	}
	//lint:ignore SA1019 the deprecated groups are still stored and checked for older clients
	for i, g := range p.NotificationGroupExcess {
		if err := checkNotificationGroup(fmt.Sprintf("%s.notificationGroupExcess[%d]", path, i), g); err != nil {
			return err
		}
	}
	return nil
}

func checkNotificationGroup(path string, g oas.AlertDefNotificationGroup) error {
	for i, w := range g.Webhooks {
		if in, ok := w.Integration.Get(); ok && in.IntegrationId.Set && in.Recipients.Set {
			return apierror.Invalidf("%s.webhooks[%d].integration: holds integrationId and recipients; give at most one", path, i)
		}
	}
	for i, d := range g.Destinations {
		if d.ConnectorId.Or("") == "" {
			return apierror.Invalidf("%s.destinations[%d].connectorId: required; it names one of the team's connectors", path, i)
		}
	}
	return nil
}

// checkBlock runs the checks of p's type block (the one set).
func checkBlock(path string, p *oas.AlertDefProperties) error {
	switch {
	case p.MetricThreshold.Set:
		b := p.MetricThreshold.Value
		at := path + ".metricThreshold"
		if err := checkPromQL(at+".metricFilter", b.MetricFilter); err != nil {
			return err
		}
		if len(b.Rules) == 0 {
			return apierror.Invalidf("%s.rules: required, 1–5 rules", at)
		}
		for i, r := range b.Rules {
			c, ok := r.Condition.Get()
			if !ok {
				return apierror.Invalidf("%s.rules[%d].condition: required", at, i)
			}
			if err := checkMetricWindow(fmt.Sprintf("%s.rules[%d].condition.ofTheLast", at, i), c.OfTheLast); err != nil {
				return err
			}
		}
		if m, ok := b.MissingValues.Get(); ok && m.ReplaceWithZero.Set && m.MinNonNullValuesPct.Set {
			return apierror.Invalidf("%s.missingValues: holds replaceWithZero and minNonNullValuesPct; give at most one", at)
		}
	case p.MetricAnomaly.Set:
		b := p.MetricAnomaly.Value
		at := path + ".metricAnomaly"
		if err := checkPromQL(at+".metricFilter", b.MetricFilter); err != nil {
			return err
		}
		if len(b.Rules) == 0 {
			return apierror.Invalidf("%s.rules: required, at least one rule", at)
		}
		for i, r := range b.Rules {
			c, ok := r.Condition.Get()
			if !ok {
				return apierror.Invalidf("%s.rules[%d].condition: required", at, i)
			}
			if err := checkMetricWindow(fmt.Sprintf("%s.rules[%d].condition.ofTheLast", at, i), c.OfTheLast); err != nil {
				return err
			}
		}
	case p.SloThreshold.Set:
		b := p.SloThreshold.Value
		at := path + ".sloThreshold"
		if d, ok := b.SloDefinition.Get(); !ok || d.SloId.Or("") == "" {
			return apierror.Invalidf("%s.sloDefinition.sloId: required; it names one of the team's SLOs", at)
		}
		switch {
		case b.ErrorBudget.Set && b.BurnRate.Set:
			return apierror.Invalidf("%s: holds errorBudget and burnRate; give at most one", at)
		case b.BurnRate.Set:
			br := b.BurnRate.Value
			if br.Single.Set && br.Dual.Set {
				return apierror.Invalidf("%s.burnRate: holds single and dual; give at most one", at)
			}
			if len(br.Rules) == 0 {
				return apierror.Invalidf("%s.burnRate.rules: required, 1–5 rules", at)
			}
		case b.ErrorBudget.Set:
			if len(b.ErrorBudget.Value.Rules) == 0 {
				return apierror.Invalidf("%s.errorBudget.rules: required, 1–5 rules", at)
			}
		default:
			return apierror.Invalidf("%s: give errorBudget or burnRate; an SLO alert without either has nothing to compare", at)
		}
	case p.Flow.Set:
		at := path + ".flow"
		if len(p.Flow.Value.Stages) == 0 {
			return apierror.Invalidf("%s.stages: required, at least one stage", at)
		}
		for i, s := range p.Flow.Value.Stages {
			g, ok := s.FlowStagesGroups.Get()
			if !ok || len(g.Groups) == 0 {
				return apierror.Invalidf("%s.stages[%d].flowStagesGroups.groups: required, at least one group", at, i)
			}
			for j, grp := range g.Groups {
				if len(grp.AlertDefs) == 0 {
					return apierror.Invalidf("%s.stages[%d].flowStagesGroups.groups[%d].alertDefs: required, at least one definition", at, i, j)
				}
				for k, a := range grp.AlertDefs {
					if a.ID.Or("") == "" {
						return apierror.Invalidf("%s.stages[%d].flowStagesGroups.groups[%d].alertDefs[%d].id: required; it names one of the team's definitions", at, i, j, k)
					}
				}
			}
		}
	case p.AnalyticsImmediate.Set:
		if q, ok := p.AnalyticsImmediate.Value.DataprimeQuery.Get(); !ok || strings.TrimSpace(q.Query.Or("")) == "" {
			return apierror.Invalidf("%s.analyticsImmediate.dataprimeQuery.query: required", path)
		}
	case p.AnalyticsThreshold.Set:
		b := p.AnalyticsThreshold.Value
		if q, ok := b.DataprimeQuery.Get(); !ok || strings.TrimSpace(q.Query.Or("")) == "" {
			return apierror.Invalidf("%s.analyticsThreshold.dataprimeQuery.query: required", path)
		}
		if len(b.Rules) == 0 {
			return apierror.Invalidf("%s.analyticsThreshold.rules: required, 1–5 rules", path)
		}
	case p.LogsThreshold.Set:
		if len(p.LogsThreshold.Value.Rules) == 0 {
			return apierror.Invalidf("%s.logsThreshold.rules: required, at least one rule", path)
		}
	case p.LogsRatioThreshold.Set:
		if len(p.LogsRatioThreshold.Value.Rules) == 0 {
			return apierror.Invalidf("%s.logsRatioThreshold.rules: required, at least one rule", path)
		}
	case p.LogsTimeRelativeThreshold.Set:
		if len(p.LogsTimeRelativeThreshold.Value.Rules) == 0 {
			return apierror.Invalidf("%s.logsTimeRelativeThreshold.rules: required, at least one rule", path)
		}
	case p.LogsAnomaly.Set:
		if len(p.LogsAnomaly.Value.Rules) == 0 {
			return apierror.Invalidf("%s.logsAnomaly.rules: required, at least one rule", path)
		}
	case p.LogsNewValue.Set:
		if len(p.LogsNewValue.Value.Rules) == 0 {
			return apierror.Invalidf("%s.logsNewValue.rules: required, at least one rule", path)
		}
		for i, r := range p.LogsNewValue.Value.Rules {
			if c, ok := r.Condition.Get(); !ok || strings.TrimSpace(c.KeypathToTrack.Or("")) == "" {
				return apierror.Invalidf("%s.logsNewValue.rules[%d].condition.keypathToTrack: required", path, i)
			}
		}
	case p.LogsUniqueCount.Set:
		if len(p.LogsUniqueCount.Value.Rules) == 0 {
			return apierror.Invalidf("%s.logsUniqueCount.rules: required, at least one rule", path)
		}
		if strings.TrimSpace(p.LogsUniqueCount.Value.UniqueCountKeypath.Or("")) == "" {
			return apierror.Invalidf("%s.logsUniqueCount.uniqueCountKeypath: required", path)
		}
	case p.TracingThreshold.Set:
		if len(p.TracingThreshold.Value.Rules) == 0 {
			return apierror.Invalidf("%s.tracingThreshold.rules: required, at least one rule", path)
		}
	}
	return nil
}

// checkPromQL requires a metric filter whose promql parses.
func checkPromQL(path string, f oas.OptAlertDefMetricFilter) error {
	q := f.Value.Promql.Or("")
	if !f.Set || strings.TrimSpace(q) == "" {
		return apierror.Invalidf("%s.promql: required, a PromQL expression", path)
	}
	if _, err := promql.ParseExpr(q); err != nil {
		return apierror.Invalidf("%s.promql: not valid PromQL: %s", path, strings.Join(strings.Fields(err.Error()), " "))
	}
	return nil
}

// checkMetricWindow requires at most one of a window's forms, and a dynamic duration that is a
// positive Prometheus duration.
func checkMetricWindow(path string, w oas.OptAlertDefMetricTimeWindow) error {
	if !w.Set {
		return nil
	}
	if w.Value.MetricTimeWindowSpecificValue.Set && w.Value.MetricTimeWindowDynamicDuration.Set {
		return apierror.Invalidf("%s: holds metricTimeWindowSpecificValue and metricTimeWindowDynamicDuration; give at most one", path)
	}
	if s, ok := w.Value.MetricTimeWindowDynamicDuration.Get(); ok {
		d, err := model.ParseDuration(s)
		if err != nil || d <= 0 {
			return apierror.Invalidf("%s.metricTimeWindowDynamicDuration: %q is not a positive duration such as 1h30m", path, s)
		}
	}
	return nil
}

// checkAccessPolicyAction requires at most one of upsert and delete.
func checkAccessPolicyAction(path string, a oas.OptAlertDefAccessPolicyAction) error {
	if a.Set && a.Value.Upsert.Set && a.Value.Delete != nil {
		return apierror.Invalidf("%s: holds upsert and delete; give at most one", path)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
