package quotarules_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	v5Path = "/mgmt/openapi/5/dataplan/quota-rules/v1"
	v4Path = "/mgmt/openapi/4/dataplan/quota-rules/v1"
)

// ruleSet is a response's set, rules kept raw so that the presence of fields can be checked.
type ruleSet struct {
	RuleSet struct {
		ID    string                       `json:"id"`
		Rules []map[string]json.RawMessage `json:"rules"`
	} `json:"ruleSet"`
}

const twoRules = `{"ruleSet":{"rules":[
	{"entityType":"logs","allocation":60,"enabled":true,"canOverflow":false},
	{"entityType":"spans","allocation":5.5,"allocationType":"QUOTA_ALLOCATION_TYPE_LOCKED_UNITS","enabled":false,"canOverflow":true,"platformManaged":true}]}}`

func TestShapesPerVersion(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		created := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, key, twoRules))
		if len(created.RuleSet.ID) != 36 || len(created.RuleSet.Rules) != 2 {
			t.Fatalf("created %+v", created)
		}
		for _, r := range created.RuleSet.Rules {
			if _, ok := r["allocationType"]; ok {
				t.Fatalf("v4 rule has allocationType: %v", r)
			}
			if _, ok := r["platformManaged"]; ok {
				t.Fatalf("v4 rule has platformManaged: %v", r)
			}
		}
		if string(created.RuleSet.Rules[1]["allocation"]) != "5.5" || string(created.RuleSet.Rules[1]["canOverflow"]) != "true" {
			t.Fatalf("v4 rule %v", created.RuleSet.Rules[1])
		}
		got := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, key, ""))
		if got.RuleSet.ID != created.RuleSet.ID || len(got.RuleSet.Rules) != 2 {
			t.Fatalf("get %+v", got)
		}
		r0, r1 := got.RuleSet.Rules[0], got.RuleSet.Rules[1]
		if string(r0["allocationType"]) != `"QUOTA_ALLOCATION_TYPE_UNSPECIFIED"` || string(r0["platformManaged"]) != "false" ||
			string(r0["entityType"]) != `"logs"` || string(r0["allocation"]) != "60" || string(r0["enabled"]) != "true" {
			t.Fatalf("v5 rule 0 %v", r0)
		}
		// platformManaged is the server's: a client's true is ignored.
		if string(r1["allocationType"]) != `"QUOTA_ALLOCATION_TYPE_LOCKED_UNITS"` || string(r1["platformManaged"]) != "false" {
			t.Fatalf("v5 rule 1 %v", r1)
		}
		// Lookup by id: the set's id, in either case of absence; another id is 404.
		apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path+"?id="+created.RuleSet.ID, key, ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path+"?id=other", key, ""), 404, "ruleSet")

		// Replace keeps the id and answers the v5 shape.
		replaced := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPut, v5Path, key,
			`{"ruleSet":{"id":"`+created.RuleSet.ID+`","rules":[{"entityType":"logs","allocation":100,"allocationType":"QUOTA_ALLOCATION_TYPE_PERCENTAGE","enabled":true,"canOverflow":true}]}}`))
		if replaced.RuleSet.ID != created.RuleSet.ID || len(replaced.RuleSet.Rules) != 1 ||
			string(replaced.RuleSet.Rules[0]["allocationType"]) != `"QUOTA_ALLOCATION_TYPE_PERCENTAGE"` || string(replaced.RuleSet.Rules[0]["platformManaged"]) != "false" {
			t.Fatalf("replaced %+v", replaced)
		}
		// A replace naming another set's id is 404 and changes nothing.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, v5Path, key, `{"ruleSet":{"id":"nope","rules":[]}}`), 404)
		// An empty rule list is a valid set.
		empty := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPut, v5Path, key, `{"ruleSet":{"rules":[]}}`))
		if empty.RuleSet.Rules == nil || len(empty.RuleSet.Rules) != 0 {
			t.Fatalf("empty %s", env.JSON(t, http.MethodGet, v5Path, key, "").Body)
		}
		env.Restart(t)
		if got := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, key, "")); got.RuleSet.ID != created.RuleSet.ID || len(got.RuleSet.Rules) != 0 {
			t.Fatalf("after restart %+v", got)
		}
	})
}

func TestLifecycleConflictsAndMissing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		// No set yet: replace, get and delete are 404.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, v5Path, key, twoRules), 404, "no such quota allocation rule set")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path, key, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, v5Path, key, ""), 404)

		first := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, key, twoRules))
		// A second create is 409 and leaves the first set alone; the client's id is ignored.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, v4Path, key, `{"ruleSet":{"id":"mine","rules":[]}}`), 409, "already has")
		if got := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, key, "")); got.RuleSet.ID != first.RuleSet.ID || len(got.RuleSet.Rules) != 2 {
			t.Fatalf("after 409 %+v", got)
		}
		deleted := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, v5Path, key, ""))
		if deleted.ID != first.RuleSet.ID {
			t.Fatalf("deleted %q, want %q", deleted.ID, first.RuleSet.ID)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path, key, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, v5Path, key, ""), 404)
		// After a delete, create works again with a new id.
		again := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, key, `{"ruleSet":{"id":"mine","rules":[]}}`))
		if again.RuleSet.ID == first.RuleSet.ID || again.RuleSet.ID == "mine" {
			t.Fatalf("again %+v", again)
		}
		// Every segment reaches every operation: the create under 5 is the same create (a second
		// one conflicts), the replace and the read answer under 4 and 3.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, v5Path, key, twoRules), 409, "already has a quota allocation rule set")
		if res := env.JSON(t, http.MethodPut, v4Path, key, twoRules); res.Status != http.StatusOK {
			t.Fatalf("replace under 4: %d %s", res.Status, res.Body)
		}
		read := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/3/dataplan/quota-rules/v1", key, ""))
		if read.RuleSet.ID != again.RuleSet.ID || len(read.RuleSet.Rules) != 2 {
			t.Fatalf("read under 3: %+v, want the replaced set %s", read, again.RuleSet.ID)
		}
	})
}

func rule(entity, alloc, typ string) string {
	t := ""
	if typ != "" {
		t = `,"allocationType":"` + typ + `"`
	}
	return `{"entityType":"` + entity + `","allocation":` + alloc + t + `,"enabled":true,"canOverflow":false}`
}

func set(rules ...string) string {
	return `{"ruleSet":{"rules":[` + strings.Join(rules, ",") + `]}}`
}

func TestValidation(t *testing.T) {
	const pct, units = "QUOTA_ALLOCATION_TYPE_PERCENTAGE", "QUOTA_ALLOCATION_TYPE_LOCKED_UNITS"
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, key, set()))
		ok := []string{
			set(rule("logs", "0", "")),
			set(rule("logs", "100", pct)),
			set(rule("logs", "40", ""), rule("logs", "60", pct), rule("spans", "100", "")),
			set(rule("logs", "33.3", ""), rule("logs", "33.3", ""), rule("logs", "33.4", "")),
			set(rule("logs", "100", ""), rule("logs", "1000000", units)),
			set(rule("logs", "0", units)),
		}
		for _, body := range ok {
			for _, m := range []string{http.MethodPut} {
				apitest.Decode[ruleSet](t, env.JSON(t, m, v5Path, key, body))
			}
		}
		bad := []struct{ body, msg string }{
			{set(rule("logs", "100.001", "")), "ruleSet.rules[0].allocation: a percentage must be at most 100"},
			{set(rule("logs", "-0.5", units)), "ruleSet.rules[0].allocation: must be a number of at least 0"},
			{set(rule("logs", "-1", "")), "ruleSet.rules[0].allocation: must be a number of at least 0"},
			{set(rule("spans", "1", ""), rule("logs", "60", ""), rule("logs", "40.5", pct)), `entity type "logs" add up to 100.5, more than 100, so they cannot all be satisfied`},
			{set(rule("  ", "1", "")), "ruleSet.rules[0].entityType: must contain a non-whitespace character"},
			{set(rule("logs", "1", "QUOTA_ALLOCATION_TYPE_BOGUS")), "allocationType"},
			{`{"ruleSet":{"rules":[{"entityType":"logs","allocation":1,"enabled":true}]}}`, "canOverflow"},
			{`{"ruleSet":{}}`, "rules"},
			{`{}`, "ruleSet"},
			{`{"ruleSet":{"id":"` + strings.Repeat("a", 37) + `","rules":[]}}`, "ruleSet.id"},
		}
		for _, m := range []struct{ method, path string }{{http.MethodPut, v5Path}, {http.MethodPost, v4Path}} {
			for _, c := range bad {
				apitest.ExpectError(t, env.JSON(t, m.method, m.path, key, c.body), 400, c.msg)
			}
		}
		// The id query bound: 36 characters pass to the lookup (404), 37 are a 400.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path+"?id="+strings.Repeat("a", 36), key, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path+"?id="+strings.Repeat("a", 37), key, ""), 400, "id")
		// Nothing invalid was stored: the last good replace stands.
		got := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, key, ""))
		if len(got.RuleSet.Rules) != 1 || string(got.RuleSet.Rules[0]["allocationType"]) != `"`+units+`"` {
			t.Fatalf("stored %+v", got)
		}
	})
}

func TestPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, key, twoRules))

		reader := env.MustKey(t, key, "team-quota-rules:Read")
		manager := env.MustKey(t, key, "team-quota-rules:Manage")
		apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, reader, ""))
		for _, c := range []struct{ method, path, body string }{
			{http.MethodPut, v5Path, twoRules}, {http.MethodPost, v4Path, twoRules}, {http.MethodDelete, v5Path, ""},
		} {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, reader, c.body), 403, "team-quota-rules:Manage")
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path, manager, ""), 403, "team-quota-rules:Read")
		apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPut, v5Path, manager, twoRules))
		apitest.ExpectError(t, env.Do(t, http.MethodGet, v5Path, "", "", ""), 401)

		// Another team sees no set, cannot replace or delete this one, and has its own.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path, otherKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, v5Path, otherKey, twoRules), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, v5Path, otherKey, ""), 404)
		theirs := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, otherKey, set(rule("rum", "10", ""))))
		mine := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, key, ""))
		if theirs.RuleSet.ID == mine.RuleSet.ID || len(mine.RuleSet.Rules) != 2 {
			t.Fatalf("mine %+v theirs %+v", mine, theirs)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v5Path+"?id="+mine.RuleSet.ID, otherKey, ""), 404)
	})
}

// TestReadModifyWrite: a client reads the rule set and writes it back whole, as read (the
// server's platformManaged and allocationType included), with one allocation changed.
func TestReadModifyWrite(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		apitest.Decode[ruleSet](t, env.JSON(t, http.MethodPost, v4Path, key, twoRules))
		var read map[string]map[string]any
		res := env.JSON(t, http.MethodGet, v5Path, key, "")
		if err := json.Unmarshal(res.Body, &read); err != nil {
			t.Fatalf("read %d %s: %v", res.Status, res.Body, err)
		}
		read["ruleSet"]["rules"].([]any)[0].(map[string]any)["allocation"] = 40
		res = env.JSON(t, http.MethodPut, v5Path, key, apitest.JSONOf(t, read))
		if res.Status != http.StatusOK {
			t.Fatalf("writing the set back: %d %s", res.Status, res.Body)
		}
		got := apitest.Decode[ruleSet](t, env.JSON(t, http.MethodGet, v5Path, key, ""))
		if len(got.RuleSet.Rules) != 2 || string(got.RuleSet.Rules[0]["allocation"]) != "40" ||
			string(got.RuleSet.Rules[1]["allocationType"]) != `"QUOTA_ALLOCATION_TYPE_LOCKED_UNITS"` {
			t.Fatalf("after writing back: %v", got.RuleSet.Rules)
		}
	})
}
