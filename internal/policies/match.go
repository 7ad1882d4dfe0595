package policies

import (
	"fmt"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// maxRuleValues is the most comma-separated values an IS or IS_NOT rule may list.
const maxRuleValues = 50

// ruleValues splits an IS / IS_NOT rule's name into its comma-separated values, each trimmed.
func ruleValues(name string) []string {
	parts := strings.Split(name, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// matchValue tells whether value satisfies a rule of the given type and name. A rule without a
// type (or RULE_TYPE_ID_UNSPECIFIED) or without a name matches every value.
func matchValue(typ oas.PolicyRuleTypeId, name string, hasName bool, value string) bool {
	if !hasName {
		return true
	}
	switch typ {
	case oas.PolicyRuleTypeIdRULETYPEIDIS, oas.PolicyRuleTypeIdRULETYPEIDISNOT:
		in := false
		for _, v := range ruleValues(name) {
			if v == value {
				in = true
				break
			}
		}
		return in == (typ == oas.PolicyRuleTypeIdRULETYPEIDIS)
	case oas.PolicyRuleTypeIdRULETYPEIDSTARTWITH:
		return strings.HasPrefix(value, name)
	case oas.PolicyRuleTypeIdRULETYPEIDINCLUDES:
		return strings.Contains(value, name)
	}
	return true
}

// matchRule is matchValue for an optional rule object; an absent rule matches everything.
func matchRule(r oas.OptPolicyRule, value string) bool {
	if !r.Set {
		return true
	}
	return matchValue(r.Value.RuleTypeId.Or(oas.PolicyRuleTypeIdRULETYPEIDUNSPECIFIED), r.Value.Name.Value, r.Value.Name.Set, value)
}

// matchSeverity tells whether a severity is among those listed; an empty list holds them all.
func matchSeverity(list []oas.PolicySeverity, severity oas.PolicySeverity) bool {
	if len(list) == 0 {
		return true
	}
	for _, s := range list {
		if s == severity {
			return true
		}
	}
	return false
}

// checkRuleValues refuses an IS or IS_NOT rule listing more than maxRuleValues values.
//
// Errors: Invalid naming path.name.
func checkRuleValues(path string, typ oas.PolicyRuleTypeId, name string) error {
	if typ != oas.PolicyRuleTypeIdRULETYPEIDIS && typ != oas.PolicyRuleTypeIdRULETYPEIDISNOT {
		return nil
	}
	if n := len(ruleValues(name)); n > maxRuleValues {
		return apierror.Invalidf("%s: an %s rule lists at most %d comma-separated values (got %d)", path, typ, maxRuleValues, n)
	}
	return nil
}

// checkPolicyRules applies checkRuleValues to every rule of a policy: where prefixes the paths of
// the application and subsystem rules, rulesWhere those of the span rules.
func checkPolicyRules(where, rulesWhere string, app, sub oas.OptPolicyRule, span oas.OptPolicySpanRules) error {
	for _, r := range []struct {
		path string
		rule oas.OptPolicyRule
	}{
		{where + "applicationRule.name", app}, {where + "subsystemRule.name", sub},
		{rulesWhere + "spanRules.serviceRule.name", span.Value.ServiceRule}, {rulesWhere + "spanRules.actionRule.name", span.Value.ActionRule},
	} {
		if !r.rule.Set {
			continue
		}
		if err := checkRuleValues(r.path, r.rule.Value.RuleTypeId.Or(""), r.rule.Value.Name.Value); err != nil {
			return err
		}
	}
	for i, t := range span.Value.TagRules {
		if err := checkRuleValues(fmt.Sprintf("%sspanRules.tagRules[%d].tagValue", rulesWhere, i), t.RuleTypeId, t.TagValue); err != nil {
			return err
		}
	}
	return nil
}
