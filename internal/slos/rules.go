package slos

import (
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Bounds of ours that the document states but the generated decoder cannot enforce.
const (
	maxLabels         = 64
	maxLabelNameChars = 63
)

// promql parses SLI queries with the default function set, as a Prometheus server with no feature
// flags does (the parser internal/recordingrules uses).
var promql = parser.NewParser(parser.Options{})

// field joins a path prefix ("" for a body that is the SLO itself, or e.g.
// "requests[2].createSloRequest.slo") and a field name.
func field(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// checkSlo applies the SLO rules the decoder cannot (the schema's bounds it has already checked)
// and returns the SLO to store: the server's fields (id, creator, times, revision) cleared, and
// the omitted optional fields, sloType and type filled in.
//
// Rules: exactly one SLI, requestBasedMetricSli, windowBasedMetricSli or apmSli; every query valid
// PromQL; a window SLI's window and comparisonOperator not UNSPECIFIED; an APM SLI (and
// apmSliMetadata) as checkApm says, apmSliMetadata only beside a metric SLI of the same type;
// productType, when sent, SLO_PRODUCT_TYPE_APM for an APM SLO; sloTimeFrame not UNSPECIFIED;
// sloType and type, when sent, match the SLI; labels at most 64, keys Prometheus label names of
// 1–63 characters; grouping labels unique.
//
// Errors: Invalid naming the full field path under prefix.
func checkSlo(prefix string, s oas.Slo) (oas.Slo, error) {
	at := func(name string) string { return field(prefix, name) }
	var kind oas.SloType
	switch {
	case s.RequestBasedMetricSli.Set && s.WindowBasedMetricSli.Set:
		return s, apierror.Invalidf("%s: only one SLI may be set, and requestBasedMetricSli is set too", at("windowBasedMetricSli"))
	case s.ApmSli.Set && (s.RequestBasedMetricSli.Set || s.WindowBasedMetricSli.Set):
		return s, apierror.Invalidf("%s: only one SLI may be set, and a metric SLI is set too", at("apmSli"))
	case s.ApmSli.Set:
		apm, apmKind, err := checkApm(at("apmSli"), s.ApmSli.Value)
		if err != nil {
			return s, err
		}
		kind = apmKind
		s.ApmSli = oas.NewOptSloApmSli(apm)
	case s.RequestBasedMetricSli.Set:
		kind = oas.SloTypeSLOTYPEREQUEST
		sli := s.RequestBasedMetricSli.Value
		if err := checkQuery(at("requestBasedMetricSli.goodEvents.query"), sli.GoodEvents.Query); err != nil {
			return s, err
		}
		if err := checkQuery(at("requestBasedMetricSli.totalEvents.query"), sli.TotalEvents.Query); err != nil {
			return s, err
		}
	case s.WindowBasedMetricSli.Set:
		kind = oas.SloTypeSLOTYPEWINDOW
		sli := s.WindowBasedMetricSli.Value
		if err := checkQuery(at("windowBasedMetricSli.query.query"), sli.Query.Query); err != nil {
			return s, err
		}
		if sli.Window == oas.WindowSloWindowWINDOWSLOWINDOWUNSPECIFIED {
			return s, apierror.Invalidf("%s: must be WINDOW_SLO_WINDOW_1_MINUTE or WINDOW_SLO_WINDOW_5_MINUTES", at("windowBasedMetricSli.window"))
		}
		if sli.ComparisonOperator == oas.SloComparisonOperatorCOMPARISONOPERATORUNSPECIFIED {
			return s, apierror.Invalidf("%s: must be one of COMPARISON_OPERATOR_GREATER_THAN, COMPARISON_OPERATOR_GREATER_THAN_OR_EQUALS, COMPARISON_OPERATOR_LESS_THAN and COMPARISON_OPERATOR_LESS_THAN_OR_EQUALS", at("windowBasedMetricSli.comparisonOperator"))
		}
		sli.MissingDataStrategy = oas.NewOptSloMissingDataStrategy(sli.MissingDataStrategy.Or(oas.SloMissingDataStrategyMISSINGDATASTRATEGYUNCOUNTED))
		s.WindowBasedMetricSli = oas.NewOptWindowBasedMetricSli(sli)
	default:
		return s, apierror.Invalidf("%s: an SLI is required: set requestBasedMetricSli, windowBasedMetricSli or apmSli", at("requestBasedMetricSli"))
	}
	apmProduct := s.ApmSli.Set
	if s.ApmSliMetadata.Set {
		if s.ApmSli.Set {
			return s, apierror.Invalidf("%s: describes the APM origin of metric queries; an SLO with apmSli has none", at("apmSliMetadata"))
		}
		meta, metaKind, err := checkApm(at("apmSliMetadata"), s.ApmSliMetadata.Value)
		if err != nil {
			return s, err
		}
		if metaKind != kind {
			return s, apierror.Invalidf("%s: describes an SLI of type %s, but the SLO's SLI makes it %s", at("apmSliMetadata"), metaKind, kind)
		}
		s.ApmSliMetadata = oas.NewOptSloApmSli(meta)
		apmProduct = true
	}
	if p, ok := s.ProductType.Get(); ok && apmProduct && p != oas.SloProductTypeSLOPRODUCTTYPEAPM {
		return s, apierror.Invalidf("%s: must be SLO_PRODUCT_TYPE_APM (or omitted) for an SLO with apmSli or apmSliMetadata", at("productType"))
	}
	if apmProduct {
		s.ProductType = oas.NewOptSloProductType(oas.SloProductTypeSLOPRODUCTTYPEAPM)
	}
	if o, ok := s.OwnershipTags.Get(); ok {
		s.OwnershipTags = oas.NewOptSloOwnershipTags(resolveOwnership(o))
	}
	legacy := oas.SloLegacyTypeRequest
	if kind == oas.SloTypeSLOTYPEWINDOW {
		legacy = oas.SloLegacyTypeWindow
	}
	if t, ok := s.SloType.Get(); ok && t != kind {
		return s, apierror.Invalidf("%s: %s does not match the SLI, which makes the SLO %s", at("sloType"), t, kind)
	}
	//lint:ignore SA1019 the deprecated type is still read and answered for older clients
	if t, ok := s.Type.Get(); ok && t != legacy {
		return s, apierror.Invalidf("%s: %q does not match the SLI, which makes the SLO %q", at("type"), t, legacy)
	}
	if s.SloTimeFrame == oas.SloTimeFrameSLOTIMEFRAMEUNSPECIFIED {
		return s, apierror.Invalidf("%s: must be one of SLO_TIME_FRAME_7_DAYS, SLO_TIME_FRAME_14_DAYS, SLO_TIME_FRAME_21_DAYS and SLO_TIME_FRAME_28_DAYS", at("sloTimeFrame"))
	}
	if err := checkLabels(at("labels"), s.Labels.Value); err != nil {
		return s, err
	}
	seen := map[oas.SloLabelName]int{}
	for i, l := range s.Grouping.Value.Labels {
		if prev, dup := seen[l]; dup {
			return s, apierror.Invalidf("%s[%d]: %q repeats item %d; grouping labels must be unique", at("grouping.labels"), i, l, prev)
		}
		seen[l] = i
	}

	s.SloType = oas.NewOptSloType(kind)
	//lint:ignore SA1019 the deprecated type is still read and answered for older clients
	s.Type = oas.NewOptSloLegacyType(legacy)
	s.Description = oas.NewOptString(s.Description.Or(""))
	s.ProductType = oas.NewOptSloProductType(s.ProductType.Or(oas.SloProductTypeSLOPRODUCTTYPEUNSPECIFIED))
	grouping := s.Grouping.Or(oas.SloGrouping{})
	if grouping.Labels == nil {
		grouping.Labels = []oas.SloLabelName{}
	}
	s.Grouping = oas.NewOptSloGrouping(grouping)
	if s.Labels.Value == nil {
		s.Labels = oas.NewOptSloLabels(oas.SloLabels{})
	}
	s.Creator.Reset()
	s.CreateTime.Reset()
	s.UpdateTime.Reset()
	s.Revision.Reset()
	return s, nil
}

// checkApm applies the rules of an APM SLI at where and returns it with its empty lists filled, and
// the SLO type it makes: SLO_TYPE_REQUEST for errorConfig, SLO_TYPE_WINDOW for latencyConfig.
//
// Rules (the schema has checked sizes and lengths): services unique and not blank; each filter
// has values or the deprecated value; groupingKeys unique; exactly one of errorConfig and
// latencyConfig; a latency SLI has exactly one of quantile and average, a percentile below 1 (the
// schema has checked above 0) and a timeWindow that is not UNSPECIFIED.
//
// Errors: Invalid naming the full field path.
func checkApm(where string, a oas.SloApmSli) (oas.SloApmSli, oas.SloType, error) {
	at := func(name string) string { return field(where, name) }
	seen := map[string]int{}
	for i, svc := range a.Services {
		if strings.TrimSpace(svc) == "" {
			return a, "", apierror.Invalidf("%s[%d]: must contain a non-whitespace character", at("services"), i)
		}
		if prev, dup := seen[svc]; dup {
			return a, "", apierror.Invalidf("%s[%d]: %q repeats item %d; services must be unique", at("services"), i, svc, prev)
		}
		seen[svc] = i
	}
	if a.Filters == nil {
		a.Filters = []oas.SloApmFilter{}
	}
	for i, f := range a.Filters {
		if strings.TrimSpace(f.Key) == "" {
			return a, "", apierror.Invalidf("%s[%d].key: must contain a non-whitespace character", at("filters"), i)
		}
		//lint:ignore SA1019 the deprecated single value is still accepted from older clients
		if len(f.Values) == 0 && !f.Value.Set {
			return a, "", apierror.Invalidf("%s[%d].values: at least one value is required (or the deprecated value)", at("filters"), i)
		}
		if f.Values == nil {
			a.Filters[i].Values = []string{}
		}
	}
	if a.GroupingKeys == nil {
		a.GroupingKeys = []oas.SloLabelName{}
	}
	keys := map[oas.SloLabelName]int{}
	for i, k := range a.GroupingKeys {
		if prev, dup := keys[k]; dup {
			return a, "", apierror.Invalidf("%s[%d]: %q repeats item %d; grouping keys must be unique", at("groupingKeys"), i, k, prev)
		}
		keys[k] = i
	}
	switch {
	case a.ErrorConfig != nil && a.LatencyConfig.Set:
		return a, "", apierror.Invalidf("%s: only one of errorConfig and latencyConfig may be set", at("latencyConfig"))
	case a.ErrorConfig != nil:
		return a, oas.SloTypeSLOTYPEREQUEST, nil
	case a.LatencyConfig.Set:
		l := a.LatencyConfig.Value
		switch {
		case l.Quantile.Set && l.Average != nil:
			return a, "", apierror.Invalidf("%s: must set only one of quantile and average, both are set", at("latencyConfig"))
		case !l.Quantile.Set && l.Average == nil:
			// Not set, and nothing stands in for it: the latency held against the threshold is a
			// quantile or the average, and the public document names no default.
			return a, "", apierror.Invalidf("%s: needs quantile or average, the latency statistic held against threshold; it has no default", at("latencyConfig"))
		}
		if p, ok := l.Quantile.Get(); ok && p.Percentile >= 1 {
			return a, "", apierror.Invalidf("%s: must be less than 1 (got %v)", at("latencyConfig.quantile.percentile"), p.Percentile)
		}
		if l.TimeWindow == oas.WindowSloWindowWINDOWSLOWINDOWUNSPECIFIED {
			return a, "", apierror.Invalidf("%s: must be WINDOW_SLO_WINDOW_1_MINUTE or WINDOW_SLO_WINDOW_5_MINUTES", at("latencyConfig.timeWindow"))
		}
		return a, oas.SloTypeSLOTYPEWINDOW, nil
	default:
		return a, "", apierror.Invalidf("%s: an APM SLI needs errorConfig or latencyConfig", at("errorConfig"))
	}
}

// resolveOwnership fills each set dimension's server-computed resolvedValues (its static values,
// each once, in order) and its empty lists. Values behind labelKeys would come from series this
// server does not observe, so they are never resolved.
func resolveOwnership(o oas.SloOwnershipTags) oas.SloOwnershipTags {
	for _, tag := range []*oas.OptSloOwnershipTag{&o.Service, &o.Environment, &o.Team} {
		if !tag.Set {
			continue
		}
		t := &tag.Value
		if t.StaticValues == nil {
			t.StaticValues = []string{}
		}
		if t.LabelKeys == nil {
			t.LabelKeys = []oas.SloLabelName{}
		}
		t.ResolvedValues = []string{}
		seen := map[string]bool{}
		for _, v := range t.StaticValues {
			if !seen[v] {
				seen[v] = true
				t.ResolvedValues = append(t.ResolvedValues, v)
			}
		}
	}
	return o
}

func checkQuery(where, query string) error {
	if _, err := promql.ParseExpr(query); err != nil {
		return apierror.Invalidf("%s: not valid PromQL: %s", where, strings.Join(strings.Fields(err.Error()), " "))
	}
	return nil
}

// checkLabels requires at most maxLabels labels whose keys are Prometheus label names of 1–63
// characters; keys are checked in sorted order so that the message is the same on every call.
func checkLabels(where string, labels oas.SloLabels) error {
	if len(labels) > maxLabels {
		return apierror.Invalidf("%s: must have at most %d entries (got %d)", where, maxLabels, len(labels))
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if n := len([]rune(k)); n < 1 || n > maxLabelNameChars {
			return apierror.Invalidf("%s: key %q must have 1 to %d characters (got %d)", where, k, maxLabelNameChars, n)
		}
		if !model.LegacyValidation.IsValidLabelName(k) {
			return apierror.Invalidf("%s: key %q is not a Prometheus label name (letters, digits and '_', not starting with a digit)", where, k)
		}
	}
	return nil
}
