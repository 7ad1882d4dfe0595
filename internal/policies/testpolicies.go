package policies

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

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
