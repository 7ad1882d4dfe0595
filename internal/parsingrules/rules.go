package parsingrules

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// parameterKinds names the properties of a rule's parameters, in the order messages list them.
var parameterKinds = []string{
	"extractParameters", "jsonExtractParameters", "replaceParameters", "parseParameters",
	"allowParameters", "blockParameters", "extractTimestampParameters", "removeFieldsParameters",
	"jsonStringifyParameters", "jsonParseParameters",
}

// checkGroup validates a create or replace request and returns the group to store: every omitted
// field filled (strings empty, booleans false, enums their UNSPECIFIED value, arrays empty),
// subgroups and rules sorted by order, ids cleared (the caller assigns them), teamId dropped.
// An omitted group order stays unset: the caller decides it.
//
// Errors: Invalid naming the field path (and the rule, for its parameters) of the first problem.
func checkGroup(in oas.ParsingRuleGroup, teamID int64) (oas.ParsingRuleGroup, error) {
	g := in
	if t, ok := in.TeamId.Get(); ok {
		if id, ok := t.ID.Get(); ok && id != teamID {
			return g, apierror.Invalidf("teamId.id: must be the caller's team (%d) when given, not %d", teamID, id)
		}
	}
	g.TeamId = oas.OptParsingRuleTeamID{}
	g.ID = oas.OptString{}
	if strings.TrimSpace(g.Name.Or("")) == "" {
		return g, apierror.Invalidf("name: required; must contain a non-whitespace character")
	}
	g.Description = oas.NewOptString(g.Description.Or(""))
	g.Creator = oas.NewOptString(g.Creator.Or(""))
	g.Enabled = oas.NewOptBool(g.Enabled.Or(false))
	g.Hidden = oas.NewOptBool(g.Hidden.Or(false))
	if o, ok := g.Order.Get(); ok && o < 0 {
		return g, apierror.Invalidf("order: must be at least 0, not %d", o)
	}
	g.RuleMatchers = slices.Clone(in.RuleMatchers)
	if g.RuleMatchers == nil {
		g.RuleMatchers = []oas.ParsingRuleMatcher{}
	}
	for i := range g.RuleMatchers {
		if err := checkMatcher(&g.RuleMatchers[i], fmt.Sprintf("ruleMatchers[%d]", i)); err != nil {
			return g, err
		}
	}
	g.RuleSubgroups = make([]oas.ParsingRuleSubgroup, 0, len(in.RuleSubgroups))
	for i, sg := range in.RuleSubgroups {
		path := fmt.Sprintf("ruleSubgroups[%d]", i)
		sg.ID = oas.OptString{}
		sg.Enabled = oas.NewOptBool(sg.Enabled.Or(false))
		o := sg.Order.Or(int64(i + 1))
		if o < 0 {
			return g, apierror.Invalidf("%s.order: must be at least 0, not %d", path, o)
		}
		sg.Order = oas.NewOptInt64(o)
		rules := make([]oas.ParsingRule, 0, len(sg.Rules))
		for j, r := range sg.Rules {
			if err := checkRule(&r, j, fmt.Sprintf("%s.rules[%d]", path, j)); err != nil {
				return g, err
			}
			rules = append(rules, r)
		}
		slices.SortStableFunc(rules, func(a, b oas.ParsingRule) int { return cmp.Compare(a.Order.Or(0), b.Order.Or(0)) })
		sg.Rules = rules
		g.RuleSubgroups = append(g.RuleSubgroups, sg)
	}
	slices.SortStableFunc(g.RuleSubgroups, func(a, b oas.ParsingRuleSubgroup) int {
		return cmp.Compare(a.Order.Or(0), b.Order.Or(0))
	})
	return g, nil
}

// checkMatcher allows at most one constraint and fills its value. A matcher with none is not set
// (the public document lets the one-of be empty): it is kept as sent, `{}`, and constrains
// nothing.
func checkMatcher(m *oas.ParsingRuleMatcher, path string) error {
	set := 0
	if c, ok := m.ApplicationName.Get(); ok {
		set++
		m.ApplicationName = oas.NewOptParsingRuleNameConstraint(oas.ParsingRuleNameConstraint{Value: oas.NewOptString(c.Value.Or(""))})
	}
	if c, ok := m.SubsystemName.Get(); ok {
		set++
		m.SubsystemName = oas.NewOptParsingRuleNameConstraint(oas.ParsingRuleNameConstraint{Value: oas.NewOptString(c.Value.Or(""))})
	}
	if c, ok := m.Severity.Get(); ok {
		set++
		m.Severity = oas.NewOptParsingRuleSeverityConstraint(oas.ParsingRuleSeverityConstraint{
			Value: oas.NewOptParsingRuleSeverity(c.Value.Or(oas.ParsingRuleSeverityVALUEDEBUGORUNSPECIFIED))})
	}
	if set > 1 {
		return apierror.Invalidf("%s: must set only one of applicationName, subsystemName, severity; %d set", path, set)
	}
	return nil
}

// checkRule fills the rule's omitted fields and checks its parameters: exactly one kind, and
// every regular expression compiles.
func checkRule(r *oas.ParsingRule, index int, path string) error {
	r.ID = oas.OptString{}
	r.Name = oas.NewOptString(r.Name.Or(""))
	r.Description = oas.NewOptString(r.Description.Or(""))
	r.Enabled = oas.NewOptBool(r.Enabled.Or(false))
	r.SourceField = oas.NewOptString(r.SourceField.Or(""))
	o := r.Order.Or(int64(index + 1))
	if o < 0 {
		return apierror.Invalidf("%s.order: must be at least 0, not %d", path, o)
	}
	r.Order = oas.NewOptInt64(o)
	// A rule without parameters is not set (answered without them) and does nothing.
	p, sent := r.Parameters.Get()
	kind, err := fillParameters(&p)
	if err != nil {
		return apierror.Invalidf("%s.parameters: %v (rule %q)", path, err, r.Name.Or(""))
	}
	if sent {
		r.Parameters = oas.NewOptParsingRuleParameters(p)
	}
	if kind.regex {
		if _, err := regexp.Compile(kind.rule); err != nil {
			return apierror.Invalidf("%s.parameters.%s.rule: rule %q: not a valid regular expression (Go RE2 syntax): %v",
				path, kind.name, r.Name.Or(""), err)
		}
	}
	return nil
}

// kindOf is what fillParameters found: the kind's property name and, for the kinds whose rule is
// a regular expression, that expression.
type kindOf struct {
	name  string
	regex bool
	rule  string
}

// fillParameters fills the omitted fields of the one kind set and reports it.
func fillParameters(p *oas.ParsingRuleParameters) (kindOf, error) {
	var found []kindOf
	s := oas.NewOptString
	b := oas.NewOptBool
	if v, ok := p.ExtractParameters.Get(); ok {
		v.Rule = s(v.Rule.Or(""))
		p.ExtractParameters.SetTo(v)
		found = append(found, kindOf{"extractParameters", true, v.Rule.Value})
	}
	if v, ok := p.JsonExtractParameters.Get(); ok {
		v.Rule = s(v.Rule.Or(""))
		// destinationFieldText is optional and has no default: not sent, it is not answered.
		v.DestinationFieldType = oas.NewOptParsingRuleDestinationField(
			v.DestinationFieldType.Or(oas.ParsingRuleDestinationFieldDESTINATIONFIELDCATEGORYORUNSPECIFIED))
		p.JsonExtractParameters.SetTo(v)
		found = append(found, kindOf{name: "jsonExtractParameters"})
	}
	if v, ok := p.ReplaceParameters.Get(); ok {
		v.Rule = s(v.Rule.Or(""))
		v.DestinationField = s(v.DestinationField.Or(""))
		v.ReplaceNewVal = s(v.ReplaceNewVal.Or(""))
		p.ReplaceParameters.SetTo(v)
		found = append(found, kindOf{"replaceParameters", true, v.Rule.Value})
	}
	if v, ok := p.ParseParameters.Get(); ok {
		v.Rule = s(v.Rule.Or(""))
		v.DestinationField = s(v.DestinationField.Or(""))
		p.ParseParameters.SetTo(v)
		found = append(found, kindOf{"parseParameters", true, v.Rule.Value})
	}
	if v, ok := p.AllowParameters.Get(); ok {
		v.Rule = s(v.Rule.Or(""))
		v.KeepBlockedLogs = b(v.KeepBlockedLogs.Or(false))
		p.AllowParameters.SetTo(v)
		found = append(found, kindOf{"allowParameters", true, v.Rule.Value})
	}
	if v, ok := p.BlockParameters.Get(); ok {
		v.Rule = s(v.Rule.Or(""))
		v.KeepBlockedLogs = b(v.KeepBlockedLogs.Or(false))
		p.BlockParameters.SetTo(v)
		found = append(found, kindOf{"blockParameters", true, v.Rule.Value})
	}
	if v, ok := p.ExtractTimestampParameters.Get(); ok {
		v.Format = s(v.Format.Or(""))
		v.Standard = oas.NewOptParsingRuleFormatStandard(v.Standard.Or(oas.ParsingRuleFormatStandardFORMATSTANDARDSTRFTIMEORUNSPECIFIED))
		p.ExtractTimestampParameters.SetTo(v)
		found = append(found, kindOf{name: "extractTimestampParameters"})
	}
	if v, ok := p.RemoveFieldsParameters.Get(); ok {
		if v.Fields == nil {
			v.Fields = []string{}
		}
		p.RemoveFieldsParameters.SetTo(v)
		found = append(found, kindOf{name: "removeFieldsParameters"})
	}
	if v, ok := p.JsonStringifyParameters.Get(); ok {
		v.DestinationField = s(v.DestinationField.Or(""))
		v.DeleteSource = b(v.DeleteSource.Or(false))
		p.JsonStringifyParameters.SetTo(v)
		found = append(found, kindOf{name: "jsonStringifyParameters"})
	}
	if v, ok := p.JsonParseParameters.Get(); ok {
		v.DestinationField = s(v.DestinationField.Or(""))
		v.DeleteSource = b(v.DeleteSource.Or(false))
		v.EscapedValue = b(v.EscapedValue.Or(false))
		v.OverrideDest = b(v.OverrideDest.Or(false))
		p.JsonParseParameters.SetTo(v)
		found = append(found, kindOf{name: "jsonParseParameters"})
	}
	switch len(found) {
	case 0:
		// None set is not set (the public document lets the one-of be empty): the rule is kept
		// with `parameters: {}` and does nothing.
		return kindOf{}, nil
	case 1:
		return found[0], nil
	}
	return kindOf{}, fmt.Errorf("must set only one of %s; %d set", strings.Join(parameterKinds, ", "), len(found))
}

// assignIDs gives the group its id, and its subgroups and their rules fresh ids where they have
// none: checkGroup clears them, so over HTTP every one is drawn afresh; a configuration document
// keeps the ids it gives.
func assignIDs(g *oas.ParsingRuleGroup, id string, newID func() string) {
	g.ID = oas.NewOptString(id)
	for i := range g.RuleSubgroups {
		if !g.RuleSubgroups[i].ID.IsSet() {
			g.RuleSubgroups[i].ID = oas.NewOptString(newID())
		}
		for j := range g.RuleSubgroups[i].Rules {
			if !g.RuleSubgroups[i].Rules[j].ID.IsSet() {
				g.RuleSubgroups[i].Rules[j].ID = oas.NewOptString(newID())
			}
		}
	}
}
