package parsingrules_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	e7Path   = "/mgmt/openapi/3/parsing-rules/rule-groups/v1/"
	collPath = "/mgmt/openapi/5/parsing-rules/rule-groups/v1"
	itemPath = "/mgmt/openapi/5/parsing-rules/rule-groups/v1/"
)

type ruleOut struct {
	ID          string
	Name        string
	Description *string
	Enabled     *bool
	Order       int64
	SourceField *string
	Parameters  map[string]map[string]any
}

type groupOut struct {
	ID            string
	Name          string
	Description   *string
	Creator       *string
	Enabled       *bool
	Hidden        *bool
	Order         int64
	TeamID        json.RawMessage `json:"teamId"`
	RuleMatchers  []map[string]map[string]any
	RuleSubgroups []struct {
		ID      string
		Enabled *bool
		Order   int64
		Rules   []ruleOut
	}
}

func create(t *testing.T, env *apitest.Env, key, body string) groupOut {
	t.Helper()
	return apitest.Decode[struct{ RuleGroup groupOut }](t, env.JSON(t, http.MethodPost, collPath, key, body)).RuleGroup
}

func list(t *testing.T, env *apitest.Env, key string) []groupOut {
	t.Helper()
	return apitest.Decode[struct{ RuleGroups []groupOut }](t, env.JSON(t, http.MethodGet, collPath, key, "")).RuleGroups
}

// allKinds is one rule of each parameter kind, in a group with each matcher kind.
const allKinds = `{"name":"g","description":"d","creator":"c","enabled":true,"hidden":true,
 "ruleMatchers":[{"applicationName":{"value":"app"}},{"subsystemName":{"value":"sub"}},{"severity":{"value":"VALUE_ERROR"}},{"severity":{}}],
 "ruleSubgroups":[{"enabled":true,"rules":[
  {"name":"ex","sourceField":"text","parameters":{"extractParameters":{"rule":"(?P<level>\\w+) (?<msg>.*)"}}},
  {"name":"je","parameters":{"jsonExtractParameters":{"rule":"level","destinationFieldType":"DESTINATION_FIELD_SEVERITY"}}},
  {"name":"re","parameters":{"replaceParameters":{"rule":"a+","destinationField":"text","replaceNewVal":"b"}}},
  {"name":"pa","parameters":{"parseParameters":{"rule":"(?P<x>\\d+)","destinationField":"text"}}},
  {"name":"al","parameters":{"allowParameters":{"rule":"keep","keepBlockedLogs":true}}},
  {"name":"bl","parameters":{"blockParameters":{"rule":"drop"}}},
  {"name":"ts","parameters":{"extractTimestampParameters":{"format":"%Y","standard":"FORMAT_STANDARD_GOLANG"}}},
  {"name":"rf","parameters":{"removeFieldsParameters":{"fields":["a","b"]}}},
  {"name":"js","parameters":{"jsonStringifyParameters":{"destinationField":"s","deleteSource":true}}},
  {"name":"jp","parameters":{"jsonParseParameters":{"destinationField":"p","escapedValue":true,"overrideDest":true}}}
 ]}],"teamId":{"id":TEAM}}`

func TestCreateEveryKindAndDefaults(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		g := create(t, env, key, strings.Replace(allKinds, "TEAM", fmt.Sprint(team), 1))
		if g.ID == "" || g.Name != "g" || *g.Description != "d" || *g.Creator != "c" || !*g.Enabled || !*g.Hidden || g.Order != 1 || g.TeamID != nil {
			t.Fatalf("group %+v", g)
		}
		if len(g.RuleMatchers) != 4 || g.RuleMatchers[0]["applicationName"]["value"] != "app" || g.RuleMatchers[1]["subsystemName"]["value"] != "sub" ||
			g.RuleMatchers[2]["severity"]["value"] != "VALUE_ERROR" || g.RuleMatchers[3]["severity"]["value"] != "VALUE_DEBUG_OR_UNSPECIFIED" {
			t.Fatalf("matchers %+v", g.RuleMatchers)
		}
		if len(g.RuleSubgroups) != 1 || g.RuleSubgroups[0].ID == "" || g.RuleSubgroups[0].Order != 1 || len(g.RuleSubgroups[0].Rules) != 10 {
			t.Fatalf("subgroups %+v", g.RuleSubgroups)
		}
		ids := map[string]bool{g.ID: true, g.RuleSubgroups[0].ID: true}
		for i, r := range g.RuleSubgroups[0].Rules {
			if r.ID == "" || ids[r.ID] || r.Order != int64(i+1) || *r.Description != "" || *r.Enabled || len(r.Parameters) != 1 {
				t.Fatalf("rule %d %+v", i, r)
			}
			ids[r.ID] = true
		}
		rules := g.RuleSubgroups[0].Rules
		// destinationFieldText, not sent, is not answered (it came back "" before, and a client
		// saw its state change after apply).
		if p := rules[1].Parameters["jsonExtractParameters"]; p["destinationFieldType"] != "DESTINATION_FIELD_SEVERITY" {
			t.Fatalf("jsonExtract %+v", p)
		} else if v, present := p["destinationFieldText"]; present {
			t.Fatalf("jsonExtract answers destinationFieldText %#v, which was not sent", v)
		}
		if p := rules[5].Parameters["blockParameters"]; p["keepBlockedLogs"] != false || p["rule"] != "drop" {
			t.Fatalf("block %+v", p)
		}
		if p := rules[6].Parameters["extractTimestampParameters"]; p["standard"] != "FORMAT_STANDARD_GOLANG" || p["format"] != "%Y" {
			t.Fatalf("timestamp %+v", p)
		}
		if p := rules[9].Parameters["jsonParseParameters"]; p["deleteSource"] != false || p["escapedValue"] != true || p["overrideDest"] != true {
			t.Fatalf("jsonParse %+v", p)
		}
		// Minimal group: everything filled.
		m := create(t, env, key, `{"name":"m","ruleSubgroups":[{"rules":[{"parameters":{"extractTimestampParameters":{}}}]}]}`)
		if m.Order != 2 || *m.Description != "" || *m.Creator != "" || *m.Enabled || *m.Hidden || len(m.RuleMatchers) != 0 ||
			*m.RuleSubgroups[0].Enabled || m.RuleSubgroups[0].Rules[0].Name != "" || *m.RuleSubgroups[0].Rules[0].SourceField != "" ||
			m.RuleSubgroups[0].Rules[0].Parameters["extractTimestampParameters"]["standard"] != "FORMAT_STANDARD_STRFTIME_OR_UNSPECIFIED" {
			t.Fatalf("minimal %+v", m)
		}
		env.Restart(t)
		got := apitest.Decode[struct{ RuleGroup groupOut }](t, env.JSON(t, http.MethodGet, itemPath+g.ID, key, "")).RuleGroup
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(g)
		if string(a) != string(b) {
			t.Fatalf("get %s\nwant %s", a, b)
		}
	})
}

func TestUpdateAndOrdering(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, `{"name":"a","order":5}`)
		b := create(t, env, key, `{"name":"b"}`)
		c := create(t, env, key, `{"name":"c","order":0}`)
		if b.Order != 6 {
			t.Fatalf("b order %d", b.Order)
		}
		names := func() string {
			var s []string
			for _, g := range list(t, env, key) {
				s = append(s, g.Name)
			}
			return strings.Join(s, ",")
		}
		if got := names(); got != "c,a,b" {
			t.Fatalf("list %s", got)
		}
		// E7 replaces the whole group; subgroups and rules sort by order and get fresh ids.
		body := `{"name":"a2","ruleSubgroups":[
		  {"order":2,"rules":[{"name":"y","order":9,"parameters":{"blockParameters":{"rule":"y"}}},{"name":"x","order":1,"parameters":{"allowParameters":{"rule":"x"}}}]},
		  {"order":1,"rules":[]}]}`
		u := apitest.Decode[struct{ RuleGroup groupOut }](t, env.JSON(t, http.MethodPut, e7Path+a.ID, key, body)).RuleGroup
		if u.ID != a.ID || u.Name != "a2" || u.Order != 5 || len(u.RuleSubgroups) != 2 || u.RuleSubgroups[0].Order != 1 ||
			u.RuleSubgroups[1].Rules[0].Name != "x" || u.RuleSubgroups[1].Rules[1].Name != "y" ||
			u.RuleSubgroups[0].ID == "" || u.RuleSubgroups[1].Rules[0].ID == "" {
			t.Fatalf("update %+v", u)
		}
		u2 := apitest.Decode[struct{ RuleGroup groupOut }](t, env.JSON(t, http.MethodPut, e7Path+a.ID, key, body)).RuleGroup
		if u2.RuleSubgroups[0].ID == u.RuleSubgroups[0].ID {
			t.Fatalf("subgroup id kept: %s", u2.RuleSubgroups[0].ID)
		}
		u3 := apitest.Decode[struct{ RuleGroup groupOut }](t, env.JSON(t, http.MethodPut, e7Path+a.ID, key, `{"name":"a3","order":100}`)).RuleGroup
		if u3.Order != 100 || len(u3.RuleSubgroups) != 0 {
			t.Fatalf("update order %+v", u3)
		}
		if got := names(); got != "c,b,a3" {
			t.Fatalf("list after update %s", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, e7Path+"nope", key, `{"name":"x"}`), 404, "group_id", "nope")
		// Delete and bulk delete.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, itemPath+"nope", key, ""), 404, "nope")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, collPath+"?group_ids="+b.ID+"&group_ids=nope", key, ""), 404, "group_ids[1]", "nope")
		if got := names(); got != "c,b,a3" {
			t.Fatalf("failed bulk delete removed something: %s", got)
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodDelete, collPath, key, ""))
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodDelete, collPath+"?group_ids="+b.ID+"&group_ids="+c.ID+"&group_ids="+b.ID, key, ""))
		if got := names(); got != "a3" {
			t.Fatalf("after bulk delete %s", got)
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodDelete, itemPath+a.ID, key, ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, itemPath+a.ID, key, ""), 404, a.ID)
		if got := names(); got != "" {
			t.Fatalf("after delete %s", got)
		}
	})
}

// rule wraps parameters in a group whose second subgroup's first rule is named "r1".
func rule(params string) string {
	return `{"name":"g","ruleSubgroups":[{"rules":[]},{"rules":[{"name":"r1","parameters":` + params + `}]}]}`
}

func TestValidation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		bad := []struct {
			name, body string
			status     int
			fragments  []string
		}{
			{"name missing", `{"description":"x"}`, 400, []string{"name: required"}},
			{"name blank", `{"name":"  "}`, 400, []string{"name: required"}},
			{"group order -1", `{"name":"g","order":-1}`, 400, []string{"order"}},
			{"subgroup order -1", `{"name":"g","ruleSubgroups":[{"order":-1}]}`, 400, []string{"order"}},
			{"rule order -1", `{"name":"g","ruleSubgroups":[{"rules":[{"order":-1,"parameters":{"jsonParseParameters":{}}}]}]}`, 400, []string{"order"}},
			{"team id -1", `{"name":"g","teamId":{"id":-1}}`, 400, []string{"teamId.id"}},
			{"other team", fmt.Sprintf(`{"name":"g","teamId":{"id":%d}}`, team+1), 400, []string{"teamId.id", "caller's team"}},
			{"two kinds", rule(`{"jsonParseParameters":{},"removeFieldsParameters":{}}`), 400, []string{"ruleSubgroups[1].rules[0].parameters: must set only one of", "2 set", `"r1"`}},
			{"matcher two", `{"name":"g","ruleMatchers":[{"applicationName":{},"severity":{}}]}`, 400, []string{"ruleMatchers[0]: must set only one of applicationName, subsystemName, severity; 2 set"}},
			{"severity unknown", `{"name":"g","ruleMatchers":[{"severity":{"value":"LOUD"}}]}`, 400, []string{"LOUD"}},
			{"destination unknown", rule(`{"jsonExtractParameters":{"destinationFieldType":"X"}}`), 400, nil},
			{"standard unknown", rule(`{"extractTimestampParameters":{"standard":"X"}}`), 400, nil},
		}
		for _, kind := range []string{"extractParameters", "replaceParameters", "parseParameters", "allowParameters", "blockParameters"} {
			bad = append(bad, struct {
				name, body string
				status     int
				fragments  []string
			}{"bad regex " + kind, rule(`{"` + kind + `":{"rule":"(unclosed"}}`), 400,
				[]string{"ruleSubgroups[1].rules[0].parameters." + kind + ".rule", `rule "r1"`, "RE2", "missing closing )"}},
				struct {
					name, body string
					status     int
					fragments  []string
				}{"perl-only regex " + kind, rule(`{"` + kind + `":{"rule":"a(?=b)"}}`), 400,
					[]string{"ruleSubgroups[1].rules[0].parameters." + kind + ".rule", `rule "r1"`}})
		}
		for _, c := range bad {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, env.JSON(t, http.MethodPost, collPath, key, c.body), c.status, c.fragments...)
			})
		}
		if n := len(list(t, env, key)); n != 0 {
			t.Fatalf("rejected groups stored: %d", n)
		}
		// E7 validates the same way and leaves the group as it was.
		g := create(t, env, key, `{"name":"g"}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, e7Path+g.ID, key, rule(`{"parseParameters":{"rule":"[z-a]"}}`)), 400,
			"ruleSubgroups[1].rules[0].parameters.parseParameters.rule", `rule "r1"`)
		// The lower edges are accepted; a regex that is not RE2-only is fine in either named-group form.
		ok := []string{
			`{"name":"x","order":0,"teamId":{"id":` + fmt.Sprint(team) + `},"ruleSubgroups":[{"order":0,"rules":[{"order":0,"parameters":{"removeFieldsParameters":{}}}]}]}`,
			rule(`{"extractParameters":{"rule":""}}`),
			rule(`{"parseParameters":{"rule":"(?P<a>x)(?<b>y)"}}`),
			`{"name":"x","order":9223372036854775807}`,
		}
		for _, body := range ok {
			create(t, env, key, body)
		}
		// An empty one-of is not set: a matcher with no constraint is kept as `{}` and constrains
		// nothing; a rule with `parameters: {}` is kept so and does nothing; a rule without
		// parameters is answered without them. A group read back and sent again is unchanged.
		empty := create(t, env, key, `{"name":"empty one-ofs","ruleMatchers":[{},{"severity":{"value":"VALUE_ERROR"}}],
			"ruleSubgroups":[{"rules":[{"name":"r0","parameters":{}},{"name":"r1"}]}]}`)
		if len(empty.RuleMatchers) != 2 || len(empty.RuleMatchers[0]) != 0 || len(empty.RuleMatchers[1]) != 1 {
			t.Fatalf("matchers answered %v", empty.RuleMatchers)
		}
		rules := empty.RuleSubgroups[0].Rules
		if len(rules) != 2 || rules[0].Parameters == nil || len(rules[0].Parameters) != 0 || rules[1].Parameters != nil {
			t.Fatalf("rules answered %+v", rules)
		}
		read := apitest.Decode[struct{ RuleGroup json.RawMessage }](t, env.JSON(t, http.MethodGet, itemPath+empty.ID, key, ""))
		sent := read.RuleGroup
		again := apitest.Decode[struct{ RuleGroup groupOut }](t, env.JSON(t, http.MethodPut, e7Path+empty.ID, key, string(sent))).RuleGroup
		if fmt.Sprint(again.RuleMatchers, again.RuleSubgroups[0].Rules[0].Parameters, again.RuleSubgroups[0].Rules[1].Parameters) !=
			fmt.Sprint(empty.RuleMatchers, rules[0].Parameters, rules[1].Parameters) {
			t.Fatalf("written back, the group changed: %+v", again)
		}
		// After a group at the largest order, a new one without order takes that order too.
		if last := create(t, env, key, `{"name":"y"}`); last.Order != 9223372036854775807 {
			t.Fatalf("order after the largest: %d", last.Order)
		}
	})
}

func TestPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		g := create(t, env, key, `{"name":"a"}`)
		ops := []struct {
			method, path, body, perm string
		}{
			{http.MethodPost, collPath, `{"name":"b"}`, "parsing-rules:UpdateConfig"},
			{http.MethodPut, e7Path + g.ID, `{"name":"a"}`, "parsing-rules:UpdateConfig"},
			{http.MethodGet, itemPath + g.ID, "", "parsing-rules:ReadConfig"},
			{http.MethodGet, collPath, "", "parsing-rules:ReadConfig"},
			{http.MethodDelete, collPath, "", "parsing-rules:UpdateConfig"},
			{http.MethodDelete, itemPath + g.ID, "", "parsing-rules:UpdateConfig"},
		}
		wrong := env.MustKey(t, key, "case:Read")
		for _, op := range ops {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, wrong, op.body), 403, op.perm)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "application/json", op.body), 401)
		}
		// Another team's group is missing, and its writes leave the group alone.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, itemPath+g.ID, otherKey, ""), 404, g.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, e7Path+g.ID, otherKey, `{"name":"x"}`), 404, g.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, itemPath+g.ID, otherKey, ""), 404, g.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, collPath+"?group_ids="+g.ID, otherKey, ""), 404, g.ID)
		if n := len(list(t, env, otherKey)); n != 0 {
			t.Fatalf("other team lists %d", n)
		}
		if got := list(t, env, key); len(got) != 1 || got[0].Name != "a" {
			t.Fatalf("own list %+v", got)
		}
		// Each permission alone is enough (the delete last).
		for _, op := range ops {
			k := env.MustKey(t, key, op.perm)
			if res := env.JSON(t, op.method, op.path, k, op.body); res.Status != 200 {
				t.Fatalf("%s %s with %s: %d %s", op.method, op.path, op.perm, res.Status, res.Body)
			}
		}
		// The parsing-rules preset holds both; read-only holds only the read.
		for _, c := range []struct {
			preset string
			want   int
		}{{"parsing-rules", 200}, {"read-only", 403}} {
			k := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", key,
				`{"name":"pr","keyPermissions":{"presets":["`+c.preset+`"]}}`)).Value
			if res := env.JSON(t, http.MethodPost, collPath, k, `{"name":"c"}`); res.Status != c.want {
				t.Fatalf("%s key create: %d %s", c.preset, res.Status, res.Body)
			}
			if res := env.JSON(t, http.MethodGet, collPath, k, ""); res.Status != 200 {
				t.Fatalf("%s key list: %d %s", c.preset, res.Status, res.Body)
			}
		}
	})
}

// TestReadModifyWrite: a client reads a group of every kind of rule and writes it back, as read,
// with one rule renamed: the answer is the group as sent (ids aside), orders included.
func TestReadModifyWrite(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		g := create(t, env, key, strings.Replace(allKinds, "TEAM", fmt.Sprint(team), 1))
		res := env.JSON(t, http.MethodGet, itemPath+g.ID, key, "")
		var read struct{ RuleGroup map[string]any }
		if err := json.Unmarshal(res.Body, &read); err != nil {
			t.Fatalf("read %d %s: %v", res.Status, res.Body, err)
		}
		rules := read.RuleGroup["ruleSubgroups"].([]any)[0].(map[string]any)["rules"].([]any)
		rules[1].(map[string]any)["name"] = "je renamed"
		body := apitest.JSONOf(t, read.RuleGroup)
		res = env.JSON(t, http.MethodPut, e7Path+g.ID, key, body)
		if res.Status != http.StatusOK {
			t.Fatalf("writing the group back: %d %s", res.Status, res.Body)
		}
		after := list(t, env, key)
		if len(after) != 1 || after[0].Order != g.Order || after[0].RuleSubgroups[0].Rules[1].Name != "je renamed" {
			t.Fatalf("after writing back: %+v", after)
		}
		for i, r := range after[0].RuleSubgroups[0].Rules {
			if was := g.RuleSubgroups[0].Rules[i]; r.Order != was.Order || fmt.Sprint(r.Parameters) != fmt.Sprint(was.Parameters) {
				t.Fatalf("rule %d changed: %+v, was %+v", i, r, was)
			}
		}
	})
}
