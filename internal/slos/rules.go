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
// Rules: exactly one SLI, requestBasedMetricSli or windowBasedMetricSli (apmSli is not
// supported); every query valid PromQL; a window SLI's window and comparisonOperator not
// UNSPECIFIED; sloTimeFrame not UNSPECIFIED; sloType and type, when sent, match the SLI; labels at
// most 64, keys Prometheus label names of 1–63 characters; grouping labels unique.
//
// Errors: Invalid naming the full field path under prefix.
func checkSlo(prefix string, s oas.Slo) (oas.Slo, error) {
	at := func(name string) string { return field(prefix, name) }
	if s.ApmSli.Set {
		return s, apierror.Invalidf("%s: APM SLIs are not supported by this server; use requestBasedMetricSli or windowBasedMetricSli", at("apmSli"))
	}
	var kind oas.SloType
	switch {
	case s.RequestBasedMetricSli.Set && s.WindowBasedMetricSli.Set:
		return s, apierror.Invalidf("%s: only one SLI may be set, and requestBasedMetricSli is set too", at("windowBasedMetricSli"))
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
		return s, apierror.Invalidf("%s: an SLI is required: set requestBasedMetricSli or windowBasedMetricSli", at("requestBasedMetricSli"))
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
