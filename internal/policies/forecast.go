package policies

import (
	"context"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/datausage"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The usage-record labels a forecast matches policy rules against.
const (
	pillarLabel      = "pillar"
	applicationLabel = "applicationName"
	subsystemLabel   = "subsystemName"
	severityLabel    = "severity"
	serviceLabel     = "serviceName"
	actionLabel      = "action"
	processedBytes   = string(oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDDATASIZE)
)

// pillars is the record pillar each data type's policies apply to.
var pillars = map[sourceType]string{logs: "PILLAR_LOGS", spans: "PILLAR_SPANS", rum: "PILLAR_RUM"}

const hourMs = int64(time.Hour / time.Millisecond)

// ForecastPolicyUsage sums the bytes of the team's usage records over the last day or week that
// a draft policy's rules match, and splits them into buckets when timeBucketMs is given.
//
// Errors: Invalid naming the field: more than one rules object or window, a dpxlExpression
// (records hold no content to evaluate it on), a repeated severity, an IS rule with more than 50
// values, a timeBucketMs that is not a positive multiple of an hour up to the window's length.
func (h *PolicyHandler) ForecastPolicyUsage(ctx context.Context, req *oas.PolicyForecastRequest) (*oas.PolicyForecast, error) {
	caller := auth.PrincipalFrom(ctx)
	src, err := rulesOf("", req.LogRules.Set, req.SpanRules.Set, req.RumRules.Set, false)
	if err != nil {
		return nil, err
	}
	if req.Day != nil && req.Week != nil {
		return nil, apierror.Invalidf("day, week: must set only one of them")
	}
	hours := int64(24)
	if req.Week != nil {
		hours = 7 * 24
	}
	var draft oas.Policy
	draft.ApplicationRule, draft.SubsystemRule = req.ApplicationRule, req.SubsystemRule
	if src != "" {
		if err := setRules(&draft, "", src, req.LogRules.Value, req.SpanRules.Value, req.RumRules.Value); err != nil {
			return nil, err
		}
	}
	if err := checkPolicyRules("", "", draft.ApplicationRule, draft.SubsystemRule, draft.SpanRules); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		path string
		expr oas.OptString
	}{{"logRules.dpxlExpression", req.LogRules.Value.DpxlExpression}, {"spanRules.dpxlExpression", req.SpanRules.Value.DpxlExpression},
		{"rumRules.dpxlExpression", req.RumRules.Value.DpxlExpression}} {
		if d.expr.Set {
			return nil, apierror.Invalidf("%s: cannot be forecast: usage records hold no event content to evaluate it on; leave it out", d.path)
		}
	}
	var bucketMs int64
	if v, ok := req.TimeBucketMs.Get(); ok {
		bucketMs, err = strconv.ParseInt(v, 10, 64)
		if err != nil || bucketMs <= 0 || bucketMs%hourMs != 0 || bucketMs > hours*hourMs {
			return nil, apierror.Invalidf("timeBucketMs: must be a positive multiple of %d (usage is recorded per hour) and at most the window's %d, got %s",
				hourMs, hours*hourMs, v)
		}
	}

	end := h.db.Now().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-time.Duration(hours) * time.Hour)
	recs, err := datausage.Records(ctx, h.db.Read(), caller.TeamID, start, end)
	if err != nil {
		return nil, err
	}
	var firstBucket int64
	var sums []big.Int
	if bucketMs > 0 {
		firstBucket = floorDiv(start.UnixMilli(), bucketMs) * bucketMs
		sums = make([]big.Int, (end.UnixMilli()-firstBucket+bucketMs-1)/bucketMs)
	}
	var total big.Int
	for _, r := range recs {
		if r.Kind != processedBytes || !draftMatches(draft, src, r.Labels) {
			continue
		}
		v := big.NewInt(r.Value)
		total.Add(&total, v)
		if bucketMs > 0 {
			i := (r.Hour.UnixMilli() - firstBucket) / bucketMs
			sums[i].Add(&sums[i], v)
		}
	}
	out := &oas.PolicyForecast{EstimatedBytes: total.String()}
	for i := range sums {
		out.UsageBuckets = append(out.UsageBuckets, oas.PolicyUsageBucket{
			BucketStartMs: strconv.FormatInt(firstBucket+int64(i)*bucketMs, 10),
			Bytes:         sums[i].String(),
		})
	}
	return out, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// draftMatches tells whether a usage record with these labels is data the policy p (of data type
// src, "" for none) applies to.
func draftMatches(p oas.Policy, src sourceType, labels map[string]string) bool {
	if src != "" && labels[pillarLabel] != pillars[src] {
		return false
	}
	if !matchRule(p.ApplicationRule, labels[applicationLabel]) || !matchRule(p.SubsystemRule, labels[subsystemLabel]) {
		return false
	}
	switch src {
	case logs:
		return matchSeverity(p.LogRules.Value.Severities, oas.PolicySeverity(labels[severityLabel]))
	case rum:
		return matchSeverity(p.RumRules.Value.Severities, oas.PolicySeverity(labels[severityLabel]))
	case spans:
		r := p.SpanRules.Value
		if !matchRule(r.ServiceRule, labels[serviceLabel]) || !matchRule(r.ActionRule, labels[actionLabel]) {
			return false
		}
		for _, t := range r.TagRules {
			if !matchValue(t.RuleTypeId, t.TagValue, true, labels[strings.TrimPrefix(t.TagName, "tags.")]) {
				return false
			}
		}
	}
	return true
}

// BulkTestLogPolicies answers, for each sample entry and each of the team's log policies in
// order, whether the policy would apply to a log with the entry's application, subsystem and
// severity. Nothing is stored.
//
// Errors: Invalid naming metaFieldsValuesList[i].severityValues when it names no severity.
func (h *PolicyHandler) BulkTestLogPolicies(ctx context.Context, req *oas.PolicyTestRequest) (*oas.PolicyTestResults, error) {
	caller := auth.PrincipalFrom(ctx)
	severities := make([]oas.PolicySeverity, len(req.MetaFieldsValuesList))
	for i, e := range req.MetaFieldsValuesList {
		s, ok := parseSeverity(e.SeverityValues)
		if !ok {
			return nil, apierror.Invalidf("metaFieldsValuesList[%d].severityValues: must name a severity: debug, verbose, info, warning, error or critical (also as SEVERITY_ERROR etc.), got %q",
				i, e.SeverityValues)
		}
		severities[i] = s
	}
	policies, err := listPolicies(ctx, h.db.Read(), caller.TeamID, logs, false)
	if err != nil {
		return nil, err
	}
	out := make([]oas.PolicyTestResult, 0, len(req.MetaFieldsValuesList)*len(policies))
	for i, e := range req.MetaFieldsValuesList {
		for _, p := range policies {
			out = append(out, oas.PolicyTestResult{MetaFieldsValues: e, Matched: logPolicyMatches(p, e, severities[i]), Policy: p})
		}
	}
	return &oas.PolicyTestResults{TestPoliciesBulkResult: out}, nil
}

// logPolicyMatches tells whether the enabled log policy p applies to a log with the entry's
// names and severity. A policy with a DPXL expression never does: the entry has no content to
// evaluate it on.
func logPolicyMatches(p oas.Policy, e oas.PolicyLogMetaFields, severity oas.PolicySeverity) bool {
	if !p.Enabled || p.LogRules.Value.DpxlExpression.Set {
		return false
	}
	return matchRule(p.ApplicationRule, e.ApplicationNameValues) && matchRule(p.SubsystemRule, e.SubsystemNameValues) &&
		matchSeverity(p.LogRules.Value.Severities, severity)
}

// parseSeverity reads "error" or "SEVERITY_ERROR" (any case) as a severity other than unspecified.
func parseSeverity(s string) (oas.PolicySeverity, bool) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(name, "SEVERITY_") {
		name = "SEVERITY_" + name
	}
	sev := oas.PolicySeverity(name)
	if sev == oas.PolicySeveritySEVERITYUNSPECIFIED || sev.Validate() != nil {
		return "", false
	}
	return sev, true
}
