package policies

import (
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// sourceType is the data type a policy applies to; the policy limit counts per team and type.
type sourceType string

const (
	logs  sourceType = "logs"
	spans sourceType = "spans"
	rum   sourceType = "rum"
)

var sourceTypes = map[oas.PolicySourceType]sourceType{
	oas.PolicySourceTypeSOURCETYPELOGS:  logs,
	oas.PolicySourceTypeSOURCETYPESPANS: spans,
	oas.PolicySourceTypeSOURCETYPERUM:   rum,
}

// label is how messages name the type ("log policies").
func (s sourceType) label() string {
	switch s {
	case logs:
		return "log"
	case spans:
		return "span"
	}
	return "RUM"
}

// draft is a policy to create, whatever operation carries it.
type draft struct {
	source sourceType
	policy oas.Policy // without id, companyId, order and timestamps
}

// rulesOf returns the data type a request's rules object selects: at most one of logRules,
// spanRules and rumRules may be set; none set answers "".
//
// Errors: Invalid naming the fields.
func rulesOf(where string, log, span, rumRules bool) (sourceType, error) {
	set := 0
	var s sourceType
	for _, c := range []struct {
		ok bool
		s  sourceType
	}{{log, logs}, {span, spans}, {rumRules, rum}} {
		if c.ok {
			set++
			s = c.s
		}
	}
	if set > 1 {
		return "", apierror.Invalidf("%slogRules, spanRules, rumRules: must set only one of them, %d are set", where, set)
	}
	return s, nil
}

// checkLogRules rejects a severity listed twice; the decoder enforces the other bounds.
func checkLogRules(where string, r oas.PolicyLogRules) error {
	seen := make(map[oas.PolicySeverity]int, len(r.Severities))
	for i, s := range r.Severities {
		if prev, dup := seen[s]; dup {
			return apierror.Invalidf("%s.severities[%d]: %s is already severities[%d]; list each severity once", where, i, s, prev)
		}
		seen[s] = i
	}
	return nil
}

func normaliseLogRules(r oas.PolicyLogRules) oas.PolicyLogRules {
	if r.Severities == nil {
		r.Severities = []oas.PolicySeverity{}
	}
	return r
}

func normaliseSpanRules(r oas.PolicySpanRules) oas.PolicySpanRules {
	if r.TagRules == nil {
		r.TagRules = []oas.PolicyTagRule{}
	}
	return r
}

// fromCreate turns an E8 request into a draft and the requested placement (first or not).
//
// A create without a rules object is a log policy with empty log rules (every severity): the
// public document lets that one-of be empty, and logs were the one data type policies had before
// the rules objects chose among types.
//
// Errors: Invalid naming the field: more than one rules object, both placements, a repeated
// severity.
func fromCreate(req *oas.PolicyCreateInput) (draft, bool, error) {
	src, err := rulesOf("", req.LogRules.Set, req.SpanRules.Set, req.RumRules.Set)
	if err != nil {
		return draft{}, false, err
	}
	if src == "" {
		src = logs
	}
	first := false
	if pl, ok := req.Placement.Get(); ok {
		if pl.First != nil && pl.Last != nil {
			return draft{}, false, apierror.Invalidf("placement: must set only one of first, last")
		}
		first = pl.First != nil
	}
	p := oas.Policy{
		Name:             string(req.Name),
		Description:      req.Description,
		Priority:         req.Priority,
		PriorityOverride: req.PriorityOverride,
		Targets:          req.Targets,
		Enabled:          !req.Disabled.Or(false),
		ApplicationRule:  req.ApplicationRule,
		SubsystemRule:    req.SubsystemRule,
		ArchiveRetention: req.ArchiveRetention,
	}
	if err := checkOverrides("", &p); err != nil {
		return draft{}, false, err
	}
	if err := setRules(&p, "", src, req.LogRules.Value, req.SpanRules.Value, req.RumRules.Value); err != nil {
		return draft{}, false, err
	}
	if err := checkPolicyRules("", "", p.ApplicationRule, p.SubsystemRule, p.SpanRules); err != nil {
		return draft{}, false, err
	}
	return draft{source: src, policy: p}, first, nil
}

// fromFields builds a draft of an overwrite entry.
func fromFields(where string, src sourceType, f oas.PolicyFields, log oas.PolicyLogRules, span oas.PolicySpanRules, rumRules oas.PolicyLogRules) (draft, error) {
	p := oas.Policy{
		Name:             string(f.Name),
		Description:      f.Description, // not sent: not set, and not answered
		Priority:         f.Priority,
		PriorityOverride: f.PriorityOverride,
		Targets:          f.Targets,
		Enabled:          !f.Disabled.Or(false),
		ApplicationRule:  f.ApplicationRule,
		SubsystemRule:    f.SubsystemRule,
		ArchiveRetention: f.ArchiveRetention,
	}
	if err := checkOverrides(where+"policy.", &p); err != nil {
		return draft{}, err
	}
	if err := setRules(&p, where, src, log, span, rumRules); err != nil {
		return draft{}, err
	}
	if err := checkPolicyRules(where+"policy.", where, p.ApplicationRule, p.SubsystemRule, p.SpanRules); err != nil {
		return draft{}, err
	}
	return draft{source: src, policy: p}, nil
}

// setRules puts the rules object of type src on p, checked.
func setRules(p *oas.Policy, where string, src sourceType, log oas.PolicyLogRules, span oas.PolicySpanRules, rumRules oas.PolicyLogRules) error {
	p.LogRules, p.SpanRules, p.RumRules = oas.OptPolicyLogRules{}, oas.OptPolicySpanRules{}, oas.OptPolicyLogRules{}
	switch src {
	case logs:
		if err := checkLogRules(where+"logRules", log); err != nil {
			return err
		}
		p.LogRules = oas.NewOptPolicyLogRules(normaliseLogRules(log))
	case spans:
		p.SpanRules = oas.NewOptPolicySpanRules(normaliseSpanRules(span))
	case rum:
		if err := checkLogRules(where+"rumRules", rumRules); err != nil {
			return err
		}
		p.RumRules = oas.NewOptPolicyLogRules(normaliseLogRules(rumRules))
	}
	return nil
}

// applyUpdate changes p by the fields req sets.
//
// Errors: Invalid when req sets a rules object of another data type than the policy's, or more
// than one, or repeats a severity.
func applyUpdate(p *oas.Policy, src sourceType, req *oas.PolicyUpdateInput) error {
	got, err := rulesOf("", req.LogRules.Set, req.SpanRules.Set, req.RumRules.Set)
	if err != nil {
		return err
	}
	if got != "" && got != src {
		return apierror.Invalidf("%s: the policy is a %s policy; its data type cannot change (send %s or none)",
			rulesField(got), src.label(), rulesField(src))
	}
	if v, ok := req.Name.Get(); ok {
		p.Name = string(v)
	}
	if req.Description.Set {
		p.Description = req.Description
	}
	if v, ok := req.Enabled.Get(); ok {
		p.Enabled = v
	}
	if v, ok := req.Priority.Get(); ok {
		p.Priority = v
	}
	if req.PriorityOverride.Set {
		p.PriorityOverride = req.PriorityOverride
	}
	if req.Targets != nil {
		p.Targets = req.Targets
	}
	if err := checkOverrides("", p); err != nil {
		return err
	}
	if req.ApplicationRule.Set {
		p.ApplicationRule = req.ApplicationRule
	}
	if req.SubsystemRule.Set {
		p.SubsystemRule = req.SubsystemRule
	}
	if req.ArchiveRetention.Set {
		p.ArchiveRetention = req.ArchiveRetention
	}
	if got != "" {
		if err := setRules(p, "", got, req.LogRules.Value, req.SpanRules.Value, req.RumRules.Value); err != nil {
			return err
		}
	}
	return checkPolicyRules("", "", p.ApplicationRule, p.SubsystemRule, p.SpanRules)
}

func rulesField(s sourceType) string {
	switch s {
	case logs:
		return "logRules"
	case spans:
		return "spanRules"
	}
	return "rumRules"
}

// limitError is the 429 of a request that would leave more than limit policies of a type.
func limitError(src sourceType, limit, would int) error {
	return apierror.LimitExceededf(
		"policy limit reached: a team may hold at most %d %s policies and this request would make it %d; request a limit increase or reduce the number of policies",
		limit, src.label(), would)
}

// checkOrders checks a reorder request against the ids of the type's policies.
//
// Errors: Invalid naming orders[i] when an id repeats, an order repeats, an id is not a policy
// of the type, or a policy of the type is missing.
func checkOrders(src sourceType, orders []oas.PolicyOrder, have map[string]bool) error {
	ids := map[string]int{}
	places := map[int32]int{}
	for i, o := range orders {
		id := normaliseID(string(o.ID))
		if prev, dup := ids[id]; dup {
			return apierror.Invalidf("orders[%d].id: %s is already orders[%d].id; name each policy once", i, o.ID, prev)
		}
		ids[id] = i
		if prev, dup := places[o.Order]; dup {
			return apierror.Invalidf("orders[%d].order: %d is already orders[%d].order; orders must be distinct", i, o.Order, prev)
		}
		places[o.Order] = i
		if !have[id] {
			return apierror.Invalidf("orders[%d].id: the team has no %s policy %s", i, src.label(), o.ID)
		}
	}
	if len(ids) != len(have) {
		return apierror.Invalidf("orders: must name every %s policy of the team (%d), names %d", src.label(), len(have), len(ids))
	}
	return nil
}

func entryPath(i int) string { return fmt.Sprintf("policies[%d].", i) }

// tierPriorities ranks the priorities a usage tier may name, highest first.
var tierPriorities = map[oas.PolicyPriority]int{
	oas.PolicyPriorityPRIORITYTYPEHIGH:   3,
	oas.PolicyPriorityPRIORITYTYPEMEDIUM: 2,
	oas.PolicyPriorityPRIORITYTYPELOW:    1,
}

// checkOverrides checks the quota-based priority overrides of p and of its targets, and makes
// an absent targets list empty. where prefixes the paths in messages.
//
// Errors: Invalid naming the tier: a priority other than LOW, MEDIUM or HIGH, a percentage not
// above the one before it, or a priority not below the one before it.
func checkOverrides(where string, p *oas.Policy) error {
	if p.Targets == nil {
		p.Targets = oas.PolicyTargets{}
	}
	if err := checkTiers(where+"priorityOverride", p.PriorityOverride); err != nil {
		return err
	}
	for i, t := range p.Targets {
		if err := checkTiers(fmt.Sprintf("%stargets[%d].priorityOverride", where, i), t.PriorityOverride); err != nil {
			return err
		}
	}
	return nil
}

func checkTiers(path string, o oas.OptPolicyPriorityOverride) error {
	tiers := o.Value.QuotaBased.Value.UsageTiers
	for i, t := range tiers {
		at := fmt.Sprintf("%s.quotaBased.usageTiers[%d]", path, i)
		rank, ok := tierPriorities[t.Priority.Value]
		if !t.Priority.Set || !ok {
			return apierror.Invalidf("%s.priority: must be PRIORITY_TYPE_LOW, PRIORITY_TYPE_MEDIUM or PRIORITY_TYPE_HIGH (got %s)", at, orNothing(t.Priority))
		}
		if i == 0 {
			continue
		}
		prev := tiers[i-1]
		if t.DailyQuotaPercentage.Or(0) <= prev.DailyQuotaPercentage.Or(0) {
			return apierror.Invalidf("%s.dailyQuotaPercentage: must be greater than the tier before it (%g), got %g",
				at, prev.DailyQuotaPercentage.Or(0), t.DailyQuotaPercentage.Or(0))
		}
		if rank >= tierPriorities[prev.Priority.Value] {
			return apierror.Invalidf("%s.priority: must be lower than the tier before it (%s), got %s", at, prev.Priority.Value, t.Priority.Value)
		}
	}
	return nil
}

func orNothing(p oas.OptPolicyPriority) string {
	if !p.Set {
		return "nothing"
	}
	return string(p.Value)
}
