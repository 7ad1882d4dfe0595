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

// processedBytes is the measurement kind a forecast sums.
const processedBytes = string(oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDDATASIZE)

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
	src, err := rulesOf("", req.LogRules.Set, req.SpanRules.Set, req.RumRules.Set)
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
	if src != "" && labels[datausage.PillarLabel] != pillars[src] {
		return false
	}
	if !matchRule(p.ApplicationRule, labels[datausage.ApplicationLabel]) || !matchRule(p.SubsystemRule, labels[datausage.SubsystemLabel]) {
		return false
	}
	switch src {
	case logs:
		return matchSeverity(p.LogRules.Value.Severities, oas.PolicySeverity(labels[datausage.SeverityLabel]))
	case rum:
		return matchSeverity(p.RumRules.Value.Severities, oas.PolicySeverity(labels[datausage.SeverityLabel]))
	case spans:
		r := p.SpanRules.Value
		if !matchRule(r.ServiceRule, labels[datausage.ServiceLabel]) || !matchRule(r.ActionRule, labels[datausage.ActionLabel]) {
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
