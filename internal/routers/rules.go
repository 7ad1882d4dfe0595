package routers

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	// MaxRouters is the most routers a team holds (the public lists answer at most 200).
	MaxRouters = 200
	// MaxMatcherLabels is the most labels an entity label matcher names.
	MaxMatcherLabels = 50
	// maxLabelLength bounds a matcher's label names and values.
	maxLabelLength = 256
	// AnyValue, as a matcher's value, matches every value of the label (the label must be set).
	AnyValue = "*"
)

var labelName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// CheckMatcher checks an entity label matcher (label name to expected value), the rules of a
// router's entityLabels: at most MaxMatcherLabels labels; a name of 1–256 characters, a letter or
// `_` first, then letters, digits, `_`, `.`, `-` or `/`; a value of 1–256 characters without
// leading or trailing white space (AnyValue matches any value). An empty matcher matches every
// entity. The error names the first offending label, in name order, and the rule.
func CheckMatcher(m map[string]string) error {
	if len(m) > MaxMatcherLabels {
		return fmt.Errorf("has %d labels; at most %d", len(m), MaxMatcherLabels)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := m[k]
		name := shortened(k)
		switch {
		case k == "" || len(k) > maxLabelLength:
			return fmt.Errorf("label %q: a name has 1–%d characters", name, maxLabelLength)
		case !labelName.MatchString(k):
			return fmt.Errorf("label %q: a name starts with a letter or _ and holds only letters, digits, _, ., - and /", name)
		case v == "":
			return fmt.Errorf("label %q: the value must not be empty; %s matches any value", name, AnyValue)
		case len(v) > maxLabelLength:
			return fmt.Errorf("label %q: the value has at most %d characters", name, maxLabelLength)
		case strings.TrimSpace(v) != v:
			return fmt.Errorf("label %q: the value must not start or end with white space", name)
		}
	}
	return nil
}

// shortened is s for a message: its first 64 bytes (whole runes) and "…" when it is longer.
func shortened(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Matches reports whether an entity's labels satisfy the matcher m: each label of m is set on the
// entity, to m's value or to anything when m's value is AnyValue.
func Matches(m map[string]string, labels map[string]string) bool {
	for k, want := range m {
		got, ok := labels[k]
		if !ok || (want != AnyValue && got != want) {
			return false
		}
	}
	return true
}

// RoutingLabelPrefix prefixes, on an entity, the labels a router's routingLabels are compared
// with: a router of routingLabels {"team": "db"} takes the entities labelled routing.team=db.
const RoutingLabelPrefix = "routing."

// Takes reports whether router r takes an entity of the labels: its entityLabels match them
// (Matches), and each of its routingLabels that is set (environment, service, team) is among
// them, prefixed by RoutingLabelPrefix, with the same value. A router of neither takes every
// entity.
func Takes(r oas.GlobalRouter, labels map[string]string) bool {
	if !Matches(r.EntityLabels.Or(nil), labels) {
		return false
	}
	rl := r.RoutingLabels.Or(oas.RoutingLabels{})
	for name, v := range map[string]oas.OptString{"environment": rl.Environment, "service": rl.Service, "team": rl.Team} {
		if want, set := v.Get(); set {
			if got, ok := labels[RoutingLabelPrefix+name]; !ok || got != want {
				return false
			}
		}
	}
	return true
}

// target is one routing target of a router with its path in the request, for messages, and the
// entity type its notifications are about (UNSPECIFIED when the router does not say).
type target struct {
	path   string
	entity oas.NotificationEntityType
	t      *oas.RoutingTarget
}

// targetsOf returns every target of r: its rules', its fallback's and its fallbackTargets'.
func targetsOf(r *oas.GlobalRouter) []target {
	var out []target
	routerEntity := r.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	for i := range r.Rules {
		e := r.Rules[i].EntityType.Or(routerEntity)
		for j := range r.Rules[i].Targets {
			out = append(out, target{fmt.Sprintf("router.rules[%d].targets[%d]", i, j), e, &r.Rules[i].Targets[j]})
		}
	}
	//lint:ignore SA1019 the deprecated fallback is still checked for routers that send one
	for j := range r.Fallback {
		//lint:ignore SA1019 as above
		out = append(out, target{fmt.Sprintf("router.fallback[%d]", j), routerEntity, &r.Fallback[j]})
	}
	for j := range r.FallbackTargets {
		if r.FallbackTargets[j].Target.Set {
			e := r.FallbackTargets[j].EntityType.Or(routerEntity)
			out = append(out, target{fmt.Sprintf("router.fallbackTargets[%d].target", j), e, &r.FallbackTargets[j].Target.Value})
		}
	}
	return out
}

// routedEntityTypes are the entity types routers route, with the variables their conditions read.
var routedEntityTypes = []oas.NotificationEntityType{oas.NotificationEntityTypeALERTS, oas.NotificationEntityTypeCASES}

// checkConditionVariables checks that each top-level variable the condition reads is one that
// notifications of an entity type the rule sees have: et's, or, for
// ENTITY_TYPE_UNSPECIFIED, those of alerts or those of cases (a rule on alertDef in a router of
// every entity type is then skipped for cases). The error names the variable and what the
// entity types offer.
func checkConditionVariables(condition string, et oas.NotificationEntityType) error {
	names, err := notifyexpr.ConditionVariables(condition)
	if err != nil {
		return err
	}
	seen := routedEntityTypes
	if et != oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED && et != "" {
		seen = []oas.NotificationEntityType{et}
	}
	var offered []string
	has := map[string]bool{}
	for _, t := range seen {
		sample, err := notifyexpr.SampleEntity(string(t), "")
		if err != nil {
			return nil // an entity type mgmtapi sends nothing of: nothing to check against
		}
		var vars []string
		for k := range sample {
			has[k] = true
			vars = append(vars, k)
		}
		sort.Strings(vars)
		offered = append(offered, string(t)+" notifications have "+strings.Join(vars, ", "))
	}
	for _, n := range names {
		if !has[n] {
			return fmt.Errorf("reads %s, which no notification the rule sees has (%s); see docs/areas/notification-routers.md", n, strings.Join(offered, "; "))
		}
	}
	return nil
}

// checkRouter applies the rules that need nothing stored: name required, each rule's condition
// set and not blank, each fallback target's target set and its entity type once, each target's
// connectorId set, entityLabels a valid matcher. It returns the router with the server's fields
// cleared and omitted fields filled.
//
// Errors: Invalid naming the field path under router and the rule.
//
// Each condition must be one the engine (internal/notifyexpr) evaluates.
func checkRouter(r oas.GlobalRouter) (oas.GlobalRouter, error) {
	if !r.Name.Set {
		return r, apierror.Invalidf("router.name: required")
	}
	for i, rule := range r.Rules {
		c, ok := rule.Condition.Get()
		if !ok {
			return r, apierror.Invalidf("router.rules[%d].condition: required; an expression such as alertDef.priority == 'P1'", i)
		}
		if strings.TrimSpace(c) == "" {
			return r, apierror.Invalidf("router.rules[%d].condition: must not be blank", i)
		}
		if err := notifyexpr.CheckCondition(c); err != nil {
			return r, apierror.Invalidf("router.rules[%d].condition: %v", i, err)
		}
		et := rule.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
		if et == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
			et = r.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
		}
		if err := checkConditionVariables(c, et); err != nil {
			return r, apierror.Invalidf("router.rules[%d].condition: %v", i, err)
		}
		if r.Rules[i].Targets == nil {
			r.Rules[i].Targets = []oas.RoutingTarget{}
		}
	}
	seen := map[oas.NotificationEntityType]bool{}
	for i, f := range r.FallbackTargets {
		if !f.Target.Set {
			return r, apierror.Invalidf("router.fallbackTargets[%d].target: required", i)
		}
		e := f.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
		if seen[e] {
			return r, apierror.Invalidf("router.fallbackTargets[%d].entityType: %s has a fallback target already; one per entity type", i, e)
		}
		seen[e] = true
	}
	for _, t := range targetsOf(&r) {
		if !t.t.ConnectorId.Set {
			return r, apierror.Invalidf("%s.connectorId: required; a target names one of the team's connectors", t.path)
		}
	}
	if err := CheckMatcher(r.EntityLabels.Or(nil)); err != nil {
		return r, apierror.Invalidf("router.entityLabels: %v", err)
	}
	r.Description = oas.NewOptString(r.Description.Or(""))
	r.Disabled = oas.NewOptBool(r.Disabled.Or(false))
	r.EntityLabels = oas.NewOptRouterEntityLabels(r.EntityLabels.Or(oas.RouterEntityLabels{}))
	if r.Rules == nil {
		r.Rules = []oas.RoutingRule{}
	}
	if r.FallbackTargets == nil {
		r.FallbackTargets = []oas.FallbackTarget{}
	}
	r.CreateTime.Reset()
	r.UpdateTime.Reset()
	return r, nil
}

// passes reports whether the stored router r passes the list filters: its entity type (when e is
// not UNSPECIFIED) and, for each label of labels, its entityLabels giving the label one of the
// listed values.
func passes(r oas.GlobalRouter, e oas.NotificationEntityType, labels map[string][]string) bool {
	if e != oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED && r.EntityType.Or("") != e {
		return false
	}
	have := r.EntityLabels.Or(nil)
	for k, values := range labels {
		v, ok := have[k]
		if !ok || !slices.Contains(values, v) {
			return false
		}
	}
	return true
}
