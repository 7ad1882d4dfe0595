package quotarules

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// maxPercent is the most that the percentage allocations of one entity type may add up to.
const maxPercent = 100

// percentage reports whether a rule's allocation is a share of the quota (unspecified included).
func percentage(t oas.QuotaAllocationType) bool {
	return t != oas.QuotaAllocationTypeQUOTAALLOCATIONTYPELOCKEDUNITS
}

// fromInput checks a requested set and returns its rules as stored: allocationType filled in as
// sent (unspecified when absent) and platformManaged false.
//
// Errors: Invalid naming ruleSet.rules[i] and the field when an entity type is blank or an
// allocation is negative or not finite; Invalid naming the entity type when its percentage
// allocations add up to more than 100 and so cannot all be satisfied.
func fromInput(in oas.QuotaRuleSetInput) ([]oas.QuotaRule, error) {
	out := make([]oas.QuotaRule, 0, len(in.Rules))
	sums := map[string]float64{}
	var order []string
	for i, r := range in.Rules {
		where := fmt.Sprintf("ruleSet.rules[%d]", i)
		if strings.TrimSpace(r.EntityType) == "" {
			return nil, apierror.Invalidf("%s.entityType: must contain a non-whitespace character", where)
		}
		if math.IsNaN(r.Allocation) || math.IsInf(r.Allocation, 0) || r.Allocation < 0 {
			return nil, apierror.Invalidf("%s.allocation: must be a number of at least 0 (got %s)", where, format(r.Allocation))
		}
		t := r.AllocationType.Or(oas.QuotaAllocationTypeQUOTAALLOCATIONTYPEUNSPECIFIED)
		if percentage(t) {
			if r.Allocation > maxPercent {
				return nil, apierror.Invalidf("%s.allocation: a percentage must be at most 100 (got %s)", where, format(r.Allocation))
			}
			if _, seen := sums[r.EntityType]; !seen {
				order = append(order, r.EntityType)
			}
			sums[r.EntityType] += r.Allocation
		}
		out = append(out, oas.QuotaRule{
			EntityType:      r.EntityType,
			Allocation:      r.Allocation,
			AllocationType:  t,
			Enabled:         r.Enabled,
			CanOverflow:     r.CanOverflow,
			PlatformManaged: false,
		})
	}
	for _, e := range order {
		// A small tolerance so that 33.3 + 33.3 + 33.4 is 100, as the caller meant.
		if sums[e] > maxPercent+1e-9 {
			return nil, apierror.Invalidf("ruleSet.rules: the percentage allocations for entity type %q add up to %s, more than 100, so they cannot all be satisfied", e, format(sums[e]))
		}
	}
	return out, nil
}

func format(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// v4 is a set in the version 4 shape, without allocationType and platformManaged.
func v4(s oas.QuotaRuleSet) oas.QuotaRuleSetV4 {
	rules := make([]oas.QuotaRuleV4, len(s.Rules))
	for i, r := range s.Rules {
		rules[i] = oas.QuotaRuleV4{EntityType: r.EntityType, Allocation: r.Allocation, Enabled: r.Enabled, CanOverflow: r.CanOverflow}
	}
	return oas.QuotaRuleSetV4{ID: s.ID, Rules: rules}
}
