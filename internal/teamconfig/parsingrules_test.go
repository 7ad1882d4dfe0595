package teamconfig_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

type ruleGroup struct {
	RuleGroup struct {
		RuleSubgroups []struct {
			ID    string
			Order int
			Rules []struct{ ID, Name string }
		}
	}
}

// TestParsingRuleIDs: the ids a document gives subgroups and rules are kept (also when the
// document lists them out of order), one without an id gets a fresh one, and a document that
// leaves the ids (or the group's order) out is unchanged when the group is otherwise the same.
func TestParsingRuleIDs(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const doc = `parsingRuleGroups:
- id: g1
  name: g
  ruleSubgroups:
  - id: sub-two
    order: 2
    rules:
    - {id: r-b, name: b, order: 2, parameters: {blockParameters: {rule: b}}}
    - {id: r-a, name: a, order: 1, parameters: {blockParameters: {rule: a}}}
  - id: sub-one
    order: 1
    rules:
    - {name: fresh, parameters: {blockParameters: {rule: c}}}
`
		if p := mustApply(t, env, env.RootKey, "", doc); changeOf(t, p, "parsingRuleGroups", "g1") != "create" {
			t.Fatalf("plan %+v", p.Changes)
		}
		got := apitest.Decode[ruleGroup](t, env.JSON(t, http.MethodGet, parsingRuleGroups+"/g1", env.RootKey, "")).RuleGroup.RuleSubgroups
		if len(got) != 2 || got[0].ID != "sub-one" || got[1].ID != "sub-two" || len(got[1].Rules) != 2 ||
			got[1].Rules[0].ID != "r-a" || got[1].Rules[0].Name != "a" || got[1].Rules[1].ID != "r-b" || got[1].Rules[1].Name != "b" {
			t.Fatalf("stored subgroups %+v", got)
		}
		fresh := got[0].Rules[0].ID
		if len(fresh) != 36 {
			t.Errorf("a rule without an id got %q, want a fresh UUID", fresh)
		}
		exported := mustExport(t, env, env.RootKey, false)
		for _, id := range []string{"sub-one", "sub-two", "r-a", "r-b", fresh} {
			if !strings.Contains(exported, "id: "+id+"\n") {
				t.Errorf("export lacks the id %s:\n%s", id, exported)
			}
		}
		// The same document (no id on "fresh") and the export are both unchanged.
		for _, again := range []string{doc, exported} {
			if p := mustApply(t, env, env.RootKey, "", again); p.Summary["unchanged"] != len(p.Changes) {
				t.Errorf("apply again: %+v", p)
			}
		}
		after := apitest.Decode[ruleGroup](t, env.JSON(t, http.MethodGet, parsingRuleGroups+"/g1", env.RootKey, "")).RuleGroup.RuleSubgroups
		if after[0].Rules[0].ID != fresh {
			t.Errorf("an unchanged apply drew a new id: %s, was %s", after[0].Rules[0].ID, fresh)
		}
		// A changed group without ids gets fresh ones where it gives none.
		changed := strings.Replace(doc, "rule: c", "rule: d", 1)
		if p := mustApply(t, env, env.RootKey, "", changed); changeOf(t, p, "parsingRuleGroups", "g1") != "update" {
			t.Errorf("plan %+v", p.Changes)
		}
		after = apitest.Decode[ruleGroup](t, env.JSON(t, http.MethodGet, parsingRuleGroups+"/g1", env.RootKey, "")).RuleGroup.RuleSubgroups
		if after[1].Rules[0].ID != "r-a" || after[0].Rules[0].ID == fresh {
			t.Errorf("after a replace: %+v", after)
		}
		before := mustExport(t, env, env.RootKey, false)
		for _, c := range []struct{ doc, fragment string }{
			{strings.Replace(doc, "id: r-b", "id: r-a", 1), `parsingRuleGroups[0] ("g"): ruleSubgroups[0].rules[0].id: "r-a" is the id of ruleSubgroups[0].rules[1] already`},
			{strings.Replace(doc, "id: sub-one", "id: a/b", 1), `parsingRuleGroups[0] ("g"): ruleSubgroups[1].id:`},
		} {
			apitest.ExpectError(t, apply(t, env, env.RootKey, "", "application/yaml", c.doc), 400, c.fragment)
		}
		if got := mustExport(t, env, env.RootKey, false); got != before {
			t.Errorf("a refused apply changed the team")
		}
	})
}
