package policies_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

const (
	createPath   = "/mgmt/openapi/3/dataplans/policies/v1"
	policiesPath = "/mgmt/openapi/5/dataplans/policies/v1"
	spanPath     = "/mgmt/openapi/4/dataplans/span-policies/v1"
	logPath      = "/mgmt/openapi/5/dataplans/log-policies/v1"
	rumPath      = "/mgmt/openapi/5/dataplans/rum-policies/v1"
	reorderPath  = "/mgmt/openapi/5/dataplans/policies/v1/all/reorder"
	settingsPut  = "/mgmt/openapi/5/dataplans/policiy-settings/v1"
	settingsGet  = "/mgmt/openapi/5/dataplans/policy-settings/v1"
	forecastPath = "/mgmt/openapi/5/dataplans/policies/v1/all/forecast-usage"
	testPath     = "/mgmt/openapi/5/dataplans/policies/v1/all/test-policies"
)

type policyOut struct {
	ID          string          `json:"id"`
	CompanyID   int64           `json:"companyId"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Priority    string          `json:"priority"`
	Order       int             `json:"order"`
	Enabled     bool            `json:"enabled"`
	Deleted     bool            `json:"deleted"`
	LogRules    json.RawMessage `json:"logRules"`
	SpanRules   json.RawMessage `json:"spanRules"`
	RumRules    json.RawMessage `json:"rumRules"`
	CreatedAt   string          `json:"createdAt"`
	UpdatedAt   string          `json:"updatedAt"`
}

func logBody(name string, extra string) string {
	return fmt.Sprintf(`{"name":%q,"priority":"PRIORITY_TYPE_LOW","logRules":{"severities":["SEVERITY_ERROR"]}%s}`, name, extra)
}

func create(t *testing.T, env *apitest.Env, key, body string) policyOut {
	t.Helper()
	return apitest.Decode[struct{ Policy policyOut }](t, env.JSON(t, http.MethodPost, createPath, key, body)).Policy
}

func list(t *testing.T, env *apitest.Env, key, query string) []policyOut {
	t.Helper()
	return apitest.Decode[struct{ Policies []policyOut }](t, env.JSON(t, http.MethodGet, policiesPath+query, key, "")).Policies
}

func names(ps []policyOut) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s@%d", p.Name, p.Order)
	}
	return strings.Join(out, ",")
}

func TestCreateAndRead(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		p := create(t, env, key, logBody("a", `,"description":"d","disabled":true,"applicationRule":{"name":"app","ruleTypeId":"RULE_TYPE_ID_IS"}`))
		if p.CompanyID != teamID || p.Order != 1 || p.Enabled || p.Deleted || p.Priority != "PRIORITY_TYPE_LOW" || p.Description != "d" {
			t.Fatalf("policy %+v", p)
		}
		if string(p.LogRules) != `{"severities":["SEVERITY_ERROR"]}` || p.SpanRules != nil || p.CreatedAt == "" || p.UpdatedAt == "" {
			t.Fatalf("rules/timestamps %+v", p)
		}
		got := apitest.Decode[struct{ Policy policyOut }](t, env.JSON(t, http.MethodGet, policiesPath+"/"+strings.ToUpper(p.ID), key, "")).Policy
		if got.ID != p.ID || got.Name != "a" || got.CreatedAt != p.CreatedAt {
			t.Fatalf("get %+v, want %+v", got, p)
		}
		// Placement: last by default, first on request; orders per data type.
		create(t, env, key, logBody("b", ""))
		create(t, env, key, logBody("c", `,"placement":{"first":{}}`))
		create(t, env, key, `{"name":"s","priority":"PRIORITY_TYPE_HIGH","spanRules":{"tagRules":[{"ruleTypeId":"RULE_TYPE_ID_IS","tagName":"tags.env","tagValue":"prod"}],"dpxlExpression":"x"}}`)
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "c@1,a@2,b@3" {
			t.Fatalf("logs %s", got)
		}
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_SPANS")); got != "s@1" {
			t.Fatalf("spans %s", got)
		}
		if got := names(list(t, env, key, "?enabled_only=true&source_type=SOURCE_TYPE_LOGS")); got != "c@1,b@3" {
			t.Fatalf("enabled logs %s", got)
		}
		if got := len(list(t, env, key, "")); got != 4 {
			t.Fatalf("all: %d", got)
		}
		// Survives a restart.
		env.Restart(t)
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "c@1,a@2,b@3" {
			t.Fatalf("after restart %s", got)
		}
	})
}

func TestUpdateDeleteReorder(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, logBody("a", ""))
		b := create(t, env, key, logBody("b", ""))
		c := create(t, env, key, logBody("c", ""))

		env.Clock.Advance(1e9)
		up := apitest.Decode[struct{ Policy policyOut }](t, env.JSON(t, http.MethodPut, policiesPath, key,
			fmt.Sprintf(`{"id":%q,"name":"b2","enabled":false,"logRules":{"severities":["SEVERITY_INFO","SEVERITY_DEBUG"]}}`, b.ID))).Policy
		if up.Name != "b2" || up.Enabled || up.Priority != "PRIORITY_TYPE_LOW" || up.Order != 2 || up.UpdatedAt == b.UpdatedAt || up.CreatedAt != b.CreatedAt {
			t.Fatalf("updated %+v", up)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, policiesPath, key,
			fmt.Sprintf(`{"id":%q,"spanRules":{}}`, b.ID)), 400, "spanRules", "cannot change")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, policiesPath, key,
			`{"id":"00000000-0000-0000-0000-000000000000","name":"x"}`), 404, "id")

		res := apitest.Decode[struct {
			Orders []struct {
				ID    string
				Order int
			}
		}](t, env.JSON(t, http.MethodPost, reorderPath, key,
			fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":10},{"id":%q,"order":5},{"id":%q,"order":7}]}`, a.ID, b.ID, c.ID)))
		if len(res.Orders) != 3 || res.Orders[0].ID != b.ID || res.Orders[0].Order != 1 || res.Orders[2].ID != a.ID {
			t.Fatalf("orders %+v", res)
		}
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "b2@1,c@2,a@3" {
			t.Fatalf("after reorder %s", got)
		}
		for _, tc := range []struct{ body, frag string }{
			{fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":1},{"id":%q,"order":2}]}`, a.ID, b.ID), "orders: must name every log policy"},
			{fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":1},{"id":%q,"order":2}]}`, a.ID, a.ID), "orders[1].id"},
			{fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":1},{"id":%q,"order":1}]}`, a.ID, b.ID), "orders[1].order"},
			{fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_SPANS","orders":[{"id":%q,"order":1}]}`, a.ID), "orders[0].id: the team has no span policy"},
			{fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_UNSPECIFIED","orders":[{"id":%q,"order":1}]}`, a.ID), "sourceType"},
			{fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":0}]}`, a.ID), "orders[0].order"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, reorderPath, key, tc.body), 400, tc.frag)
		}

		del := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, policiesPath+"/"+b.ID, key, ""))
		if del.ID != b.ID {
			t.Fatalf("delete answered %+v", del)
		}
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "c@1,a@2" {
			t.Fatalf("after delete %s", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, policiesPath+"/"+b.ID, key, ""), 404, b.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, policiesPath+"/"+b.ID, key, ""), 404, b.ID)
	})
}

func TestCreateBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		long := func(n int) string { return strings.Repeat("é", n) }
		tag := func(name, value string) string {
			return fmt.Sprintf(`{"name":"s","priority":"PRIORITY_TYPE_LOW","spanRules":{"tagRules":[{"ruleTypeId":"RULE_TYPE_ID_IS","tagName":%q,"tagValue":%q}]}}`, name, value)
		}
		tags := func(n int) string {
			rs := make([]string, n)
			for i := range rs {
				rs[i] = `{"ruleTypeId":"RULE_TYPE_ID_INCLUDES","tagName":"tags.a","tagValue":"v"}`
			}
			return `{"name":"s","priority":"PRIORITY_TYPE_LOW","spanRules":{"tagRules":[` + strings.Join(rs, ",") + `]}}`
		}
		severities := func(list string) string {
			return `{"name":"s","priority":"PRIORITY_TYPE_LOW","rumRules":{"severities":[` + list + `]}}`
		}
		ok := []string{
			logBody(long(255), ""),
			logBody("x", ""),
			logBody("ÿ~ \t", ""),
			tag("tags.x", "v"),
			tag("tags."+strings.Repeat("a", 250), strings.Repeat("v", 65535)),
			tags(100),
			tags(0),
			severities(`"SEVERITY_DEBUG","SEVERITY_VERBOSE","SEVERITY_INFO","SEVERITY_WARNING","SEVERITY_ERROR","SEVERITY_CRITICAL"`),
			severities(``),
			logBody("x", `,"applicationRule":{"name":"`+strings.Repeat("a", 65535)+`"}`),
			logBody("x", `,"placement":{"last":{}}`),
			logBody("x", `,"archiveRetention":{"id":"ABCDEF00-0000-0000-0000-000000000000"}`),
		}
		for i, body := range ok {
			if res := env.JSON(t, http.MethodPost, createPath, key, body); res.Status != 200 {
				t.Fatalf("ok[%d]: status %d %s", i, res.Status, res.Body)
			}
		}
		bad := []struct{ body, frag string }{
			{logBody("", ""), "name"},
			{logBody(long(256), ""), "name"},
			{logBody("ā", ""), "name"},
			{`{"priority":"PRIORITY_TYPE_LOW","logRules":{"severities":[]}}`, "name"},
			{`{"name":"x","logRules":{"severities":[]}}`, "priority"},
			{`{"name":"x","priority":"PRIORITY_TYPE_NONE","logRules":{"severities":[]}}`, "priority"},
			{`{"name":"x","priority":"PRIORITY_TYPE_LOW","logRules":{"severities":[]},"spanRules":{}}`, "must set only one"},
			{logBody("x", `,"placement":{"first":{},"last":{}}`), "placement"},
			{tag("env", "v"), "tagName"},
			{tag("", "v"), "tagName"},
			{tag("tags."+strings.Repeat("a", 251), "v"), "tagName"},
			{tag("tags.x", ""), "tagValue"},
			{tag("tags.x", strings.Repeat("v", 65536)), "tagValue"},
			{tags(101), "tagRules"},
			{severities(`"SEVERITY_DEBUG","SEVERITY_VERBOSE","SEVERITY_INFO","SEVERITY_WARNING","SEVERITY_ERROR","SEVERITY_CRITICAL","SEVERITY_UNSPECIFIED"`), "severities"},
			{severities(`"SEVERITY_DEBUG","SEVERITY_DEBUG"`), "rumRules.severities[1]"},
			{`{"name":"s","priority":"PRIORITY_TYPE_LOW","logRules":{}}`, "severities"},
			{`{"name":"s","priority":"PRIORITY_TYPE_LOW","logRules":{"severities":[],"dpxlExpression":""}}`, "dpxlExpression"},
			{logBody("x", `,"applicationRule":{"name":""}`), "applicationRule.name"},
			{logBody("x", `,"applicationRule":{"name":"`+strings.Repeat("a", 65536)+`"}`), "applicationRule.name"},
			{logBody("x", `,"archiveRetention":{"id":"abc"}`), "archiveRetention.id"},
		}
		// No rules object is not set: the policy is a log policy over every severity.
		none := env.JSON(t, http.MethodPost, createPath, key, `{"name":"no rules","priority":"PRIORITY_TYPE_LOW"}`)
		if none.Status != 200 || !strings.Contains(string(none.Body), `"logRules":{"severities":[]}`) ||
			strings.Contains(string(none.Body), "spanRules") || strings.Contains(string(none.Body), "rumRules") {
			t.Fatalf("a create without rules: status %d %s, want a log policy with logRules {severities: []}", none.Status, none.Body)
		}
		before := len(list(t, env, key, ""))
		for i, tc := range bad {
			res := env.JSON(t, http.MethodPost, createPath, key, tc.body)
			if res.Status != 400 || !strings.Contains(string(res.Body), tc.frag) {
				t.Fatalf("bad[%d]: status %d %s, want 400 naming %q", i, res.Status, res.Body, tc.frag)
			}
		}
		if after := len(list(t, env, key, "")); after != before {
			t.Fatalf("rejected creates stored policies: %d → %d", before, after)
		}
	})
}

func entries(kind string, n int, bad int) string {
	rules := map[string]string{
		"span": `"spanRules":{}`, "log": `"logRules":{"severities":[]}`, "rum": `"rumRules":{"severities":[]}`,
	}[kind]
	es := make([]string, n)
	for i := range es {
		name := fmt.Sprintf("%s%d", kind, i)
		if i == bad {
			name = ""
		}
		es[i] = fmt.Sprintf(`{"policy":{"name":%q,"description":"","priority":"PRIORITY_TYPE_MEDIUM"},%s}`, name, rules)
	}
	return `{"policies":[` + strings.Join(es, ",") + `]}`
}

func TestOverwriteAtomic(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 5}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, tc := range []struct{ kind, path, source string }{
			{"span", spanPath, "SOURCE_TYPE_SPANS"},
			{"log", logPath, "SOURCE_TYPE_LOGS"},
			{"rum", rumPath, "SOURCE_TYPE_RUM"},
		} {
			q := "?source_type=" + tc.source
			res := apitest.Decode[struct{ CreateResponses []struct{ Policy policyOut } }](t, env.JSON(t, http.MethodPut, tc.path, key, entries(tc.kind, 3, -1)))
			if len(res.CreateResponses) != 3 || res.CreateResponses[2].Policy.Order != 3 {
				t.Fatalf("%s overwrite: %+v", tc.kind, res)
			}
			want := fmt.Sprintf("%[1]s0@1,%[1]s1@2,%[1]s2@3", tc.kind)
			if got := names(list(t, env, key, q)); got != want {
				t.Fatalf("%s: %s", tc.kind, got)
			}
			// One bad entry: 400 naming it, nothing changes.
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, tc.path, key, entries(tc.kind, 4, 3)), 400, "policies[3].policy.name")
			// Beyond the cap (5): 429, nothing changes; at the cap: fine.
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, tc.path, key, entries(tc.kind, 6, -1)), 429,
				"at most 5", "request a limit increase or reduce the number of policies")
			if got := names(list(t, env, key, q)); got != want {
				t.Fatalf("%s after rejected overwrites: %s", tc.kind, got)
			}
			if got := len(apitest.Decode[struct{ CreateResponses []any }](t, env.JSON(t, http.MethodPut, tc.path, key, entries(tc.kind, 5, -1))).CreateResponses); got != 5 {
				t.Fatalf("%s at the cap: %d", tc.kind, got)
			}
			if got := len(apitest.Decode[struct{ CreateResponses []any }](t, env.JSON(t, http.MethodPut, tc.path, key, `{"policies":[]}`)).CreateResponses); got != 0 {
				t.Fatalf("%s empty: %d", tc.kind, got)
			}
			if got := len(list(t, env, key, q)); got != 0 {
				t.Fatalf("%s after empty overwrite: %d", tc.kind, got)
			}
		}
		// A span overwrite leaves log policies alone.
		create(t, env, key, logBody("keep", ""))
		apitest.Decode[any](t, env.JSON(t, http.MethodPut, spanPath, key, entries("span", 2, -1)))
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "keep@1" {
			t.Fatalf("logs after span overwrite: %s", got)
		}
	})
}

func TestOverwriteEntryBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		if res := env.JSON(t, http.MethodPut, spanPath, key, entries("span", 200, -1)); res.Status != 200 {
			t.Fatalf("200 entries: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, spanPath, key, entries("span", 201, -1)), 400, "policies")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, logPath, key, entries("log", 201, -1)), 400, "policies")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, spanPath, key, `{"policies":[{"policy":{"name":"x","description":"","priority":"PRIORITY_TYPE_LOW"}}]}`), 400, "spanRules")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, spanPath, key, `{}`), 400, "policies")
		if got := len(list(t, env, key, "?source_type=SOURCE_TYPE_SPANS")); got != 200 {
			t.Fatalf("spans: %d", got)
		}
	})
}

func TestCreateCap(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 3}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		for i := range 3 {
			create(t, env, key, logBody(fmt.Sprint(i), ""))
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, logBody("x", `,"placement":{"first":{}}`)), 429,
			"at most 3 log policies", "request a limit increase or reduce the number of policies")
		if got := names(list(t, env, key, "")); got != "0@1,1@2,2@3" {
			t.Fatalf("after 429: %s", got)
		}
		// Per data type and per team.
		create(t, env, key, `{"name":"s","priority":"PRIORITY_TYPE_LOW","spanRules":{}}`)
		create(t, env, other, logBody("o", ""))
		// Deleting makes room.
		p := list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")[0]
		apitest.Decode[any](t, env.JSON(t, http.MethodDelete, policiesPath+"/"+p.ID, key, ""))
		create(t, env, key, logBody("again", ""))
	})
}

// TestCapAcrossReplicas fires 100 concurrent creates at two servers, each over its own
// connection pool to one database, with limit 20: exactly 20 succeed.
func TestCapAcrossReplicas(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 20}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		otherDB := env.OpenDB(t)
		replica := apitest.Serve(t, env.Handler(t, otherDB, auth.NewAuthenticator(otherDB, env.Clock.Now)))
		var wg sync.WaitGroup
		statuses := make([]int, 100)
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"name":"p%d","priority":"PRIORITY_TYPE_LOW","spanRules":{}%s}`, i,
					map[bool]string{true: `,"placement":{"first":{}}`}[i%3 == 0])
				var res apitest.Response
				if i%2 == 0 {
					res = env.JSON(t, http.MethodPost, createPath, key, body)
				} else {
					res = replica.Do(t, http.MethodPost, createPath, "Bearer "+key, "application/json", body)
				}
				statuses[i] = res.Status
			}()
		}
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[200] != 20 || count[429] != 80 {
			t.Fatalf("statuses %v, want 20×200 and 80×429", count)
		}
		ps := list(t, env, key, "?source_type=SOURCE_TYPE_SPANS")
		if len(ps) != 20 {
			t.Fatalf("%d policies stored, want 20", len(ps))
		}
		for i, p := range ps {
			if p.Order != i+1 {
				t.Fatalf("orders not 1..20: %s", names(ps))
			}
		}
	})
}

func TestSettings(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		const unset = `{"logsPolicySettings":{"defaultPriority":"PRIORITY_TYPE_UNSPECIFIED"},"spansPolicySettings":{"defaultPriority":"PRIORITY_TYPE_UNSPECIFIED"}}`
		if res := env.JSON(t, http.MethodGet, settingsGet, key, ""); string(res.Body) != unset {
			t.Fatalf("initial %d %s", res.Status, res.Body)
		}
		res := env.JSON(t, http.MethodPost, settingsPut, key,
			`{"logsPolicySettings":{"defaultPriority":"PRIORITY_TYPE_HIGH","created_at":"2000-01-01T00:00:00Z"},"created_at":"2000-01-01T00:00:00Z","updated_at":"x","createdAt":"y"}`)
		const logsHigh = `{"logsPolicySettings":{"defaultPriority":"PRIORITY_TYPE_HIGH"},"spansPolicySettings":{"defaultPriority":"PRIORITY_TYPE_UNSPECIFIED"}}`
		if res.Status != 200 || string(res.Body) != logsHigh {
			t.Fatalf("replace %d %s", res.Status, res.Body)
		}
		res = env.JSON(t, http.MethodPost, settingsPut, key, `{"spansPolicySettings":{"defaultPriority":"PRIORITY_TYPE_BLOCK"}}`)
		const both = `{"logsPolicySettings":{"defaultPriority":"PRIORITY_TYPE_HIGH"},"spansPolicySettings":{"defaultPriority":"PRIORITY_TYPE_BLOCK"}}`
		if res.Status != 200 || string(res.Body) != both {
			t.Fatalf("replace spans %d %s", res.Status, res.Body)
		}
		env.Restart(t)
		if res := env.JSON(t, http.MethodGet, settingsGet, key, ""); string(res.Body) != both {
			t.Fatalf("after restart %s", res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, settingsPut, key, `{"logsPolicySettings":{"defaultPriority":"HIGH"}}`), 400, "defaultPriority")
		_, other := env.MustTeam(t, "other")
		if res := env.JSON(t, http.MethodGet, settingsGet, other, ""); string(res.Body) != unset {
			t.Fatalf("other team sees %s", res.Body)
		}
	})
}

func TestPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		p := create(t, env, key, logBody("a", ""))
		ops := []struct {
			method, path, body, perm string
		}{
			{http.MethodPost, createPath, logBody("b", ""), "logs.tco:UpdatePolicies"},
			{http.MethodPut, spanPath, `{"policies":[]}`, "spans.tco:UpdatePolicies"},
			{http.MethodPut, logPath, `{"policies":[]}`, "logs.tco:UpdatePolicies"},
			{http.MethodPut, rumPath, `{"policies":[]}`, "logs.tco:UpdatePolicies"},
			{http.MethodGet, policiesPath, "", "logs.tco:ReadPolicies"},
			{http.MethodGet, policiesPath + "/" + p.ID, "", "logs.tco:ReadPolicies"},
			{http.MethodPut, policiesPath, fmt.Sprintf(`{"id":%q}`, p.ID), "logs.tco:UpdatePolicies"},
			{http.MethodDelete, policiesPath + "/" + p.ID, "", "logs.tco:UpdatePolicies"},
			{http.MethodPost, reorderPath, `{"sourceType":"SOURCE_TYPE_RUM","orders":[]}`, "logs.tco:UpdatePolicies"},
			{http.MethodPost, forecastPath, `{}`, "logs.tco:ReadPolicies"},
			{http.MethodPost, testPath, `{"metaFieldsValuesList":[]}`, "logs.tco:ReadPolicies"},
			{http.MethodPost, settingsPut, `{}`, "logs.tco:UpdatePolicies"},
			{http.MethodGet, settingsGet, "", "logs.tco:ReadPolicies"},
		}
		wrong := env.MustKey(t, key, "case:Read")
		for _, op := range ops {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, wrong, op.body), 403, op.perm)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "application/json", op.body), 401)
		}
		// Each permission alone is enough (reads first, the delete last).
		for _, op := range ops {
			if op.method == http.MethodDelete || op.path == logPath {
				continue
			}
			k := env.MustKey(t, key, op.perm)
			if res := env.JSON(t, op.method, op.path, k, op.body); res.Status != 200 {
				t.Fatalf("%s %s with %s: %d %s", op.method, op.path, op.perm, res.Status, res.Body)
			}
		}
		// The data-plans preset holds all four.
		preset := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", key,
			`{"name":"dp","keyPermissions":{"presets":["data-plans"]}}`)).Value
		if res := env.JSON(t, http.MethodGet, settingsGet, preset, ""); res.Status != 200 {
			t.Fatalf("preset key: %d %s", res.Status, res.Body)
		}
		// Another team's policy is missing.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, policiesPath+"/"+p.ID, otherKey, ""), 404, p.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, policiesPath, otherKey, fmt.Sprintf(`{"id":%q,"name":"x"}`, p.ID)), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, policiesPath+"/"+p.ID, otherKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, reorderPath, otherKey,
			fmt.Sprintf(`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":1}]}`, p.ID)), 400, "no log policy")
		if got := len(list(t, env, otherKey, "")); got != 0 {
			t.Fatalf("other team lists %d", got)
		}
		if got := apitest.Decode[struct{ Policy policyOut }](t, env.JSON(t, http.MethodGet, policiesPath+"/"+p.ID, key, "")).Policy; got.Name != "a" {
			t.Fatalf("policy changed by the other team: %+v", got)
		}
	})
}

// storedTotal is the number of the team's policies of one type that the database keeps for the
// limit check (policy_type_counts), read through a pool of its own.
func storedTotal(t *testing.T, env *apitest.Env, teamID int64, src string) int {
	t.Helper()
	var n int
	err := env.OpenDB(t).Read().QueryRowContext(context.Background(),
		`SELECT total FROM policy_type_counts WHERE team_id = $1 AND source_type = $2`, teamID, src).Scan(&n)
	if err != nil {
		t.Fatalf("read the stored total: %v", err)
	}
	return n
}

// TestCapAfterEveryKindOfWrite checks the limit after each write that changes how many policies
// a team holds (create, overwrite, delete) or renumbers them (reorder), and after writes that
// fail: the cap is reached exactly, never before and never after.
func TestCapAfterEveryKindOfWrite(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 3}, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		full := func(when string) {
			t.Helper()
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, logBody("over", "")), 429, "at most 3 log policies")
			if got := len(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != 3 {
				t.Fatalf("%s: %d log policies", when, got)
			}
			if got := storedTotal(t, env, teamID, "logs"); got != 3 {
				t.Fatalf("%s: stored total %d", when, got)
			}
		}
		// An overwrite sets the number: two, then one create fits, at position 3.
		apitest.Decode[any](t, env.JSON(t, http.MethodPut, logPath, key, entries("log", 2, -1)))
		if p := create(t, env, key, logBody("third", "")); p.Order != 3 {
			t.Fatalf("after an overwrite of two, created at %d", p.Order)
		}
		full("overwrite of two and a create")
		// Rejected writes change nothing: an overwrite beyond the cap, a bad one, a missing delete.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, logPath, key, entries("log", 4, -1)), 429, "at most 3")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, logPath, key, entries("log", 2, 1)), 400, "policies[1].policy.name")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, policiesPath+"/00000000-0000-0000-0000-000000000000", key, ""), 404, "id")
		full("rejected writes")
		// A reorder keeps the number; a delete frees one place, at the end.
		ps := list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")
		apitest.Decode[any](t, env.JSON(t, http.MethodPost, reorderPath, key, fmt.Sprintf(
			`{"sourceType":"SOURCE_TYPE_LOGS","orders":[{"id":%q,"order":1},{"id":%q,"order":2},{"id":%q,"order":3}]}`,
			ps[2].ID, ps[0].ID, ps[1].ID)))
		full("reorder")
		apitest.Decode[any](t, env.JSON(t, http.MethodDelete, policiesPath+"/"+ps[1].ID, key, ""))
		if p := create(t, env, key, logBody("after delete", `,"placement":{"first":{}}`)); p.Order != 1 {
			t.Fatalf("created first at %d", p.Order)
		}
		full("delete and a create")
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "after delete@1,third@2,log0@3" {
			t.Fatalf("order %s", got)
		}
		// An empty overwrite frees every place.
		apitest.Decode[any](t, env.JSON(t, http.MethodPut, logPath, key, `{"policies":[]}`))
		if got := storedTotal(t, env, teamID, "logs"); got != 0 {
			t.Fatalf("after an empty overwrite: stored total %d", got)
		}
		for i := range 3 {
			if p := create(t, env, key, logBody(fmt.Sprint(i), "")); p.Order != i+1 {
				t.Fatalf("create %d at %d", i, p.Order)
			}
		}
		full("empty overwrite and three creates")
	})
}

// TestConcurrentWritesAcrossReplicas runs creates, deletes, overwrites and reorders of one team's
// span policies at the same time on two servers over one database, then checks that the number
// kept for the limit is the number stored, that positions run 1..n, and that exactly the places
// left under the limit can still be filled.
func TestConcurrentWritesAcrossReplicas(t *testing.T) {
	const limit = 12
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: limit}, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		otherDB := env.OpenDB(t)
		replica := apitest.Serve(t, env.Handler(t, otherDB, auth.NewAuthenticator(otherDB, env.Clock.Now)))
		send := func(i int, method, path, body string) apitest.Response {
			if i%2 == 0 {
				return env.JSON(t, method, path, key, body)
			}
			return replica.Do(t, method, path, "Bearer "+key, "application/json", body)
		}
		spanBody := func(name string, first bool) string {
			return fmt.Sprintf(`{"name":%q,"priority":"PRIORITY_TYPE_LOW","spanRules":{}%s}`, name,
				map[bool]string{true: `,"placement":{"first":{}}`}[first])
		}
		for i := range 6 {
			create(t, env, key, spanBody(fmt.Sprint("seed", i), false))
		}
		seeded := list(t, env, key, "?source_type=SOURCE_TYPE_SPANS")

		var wg sync.WaitGroup
		for i := range 60 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch {
				case i%10 == 0:
					send(i, http.MethodPut, spanPath, entries("span", 1+i%4, -1))
				case i%10 == 1 && i/10 < len(seeded):
					send(i, http.MethodDelete, policiesPath+"/"+seeded[i/10].ID, "")
				case i%10 == 2:
					// A reorder naming policies that may be gone answers 400; either way it
					// must not change the number.
					ps := list(t, env, key, "?source_type=SOURCE_TYPE_SPANS")
					orders := make([]string, len(ps))
					for j, p := range ps {
						orders[j] = fmt.Sprintf(`{"id":%q,"order":%d}`, p.ID, len(ps)-j)
					}
					send(i, http.MethodPost, reorderPath, `{"sourceType":"SOURCE_TYPE_SPANS","orders":[`+strings.Join(orders, ",")+`]}`)
				default:
					send(i, http.MethodPost, createPath, spanBody(fmt.Sprint("p", i), i%3 == 0))
				}
			}()
		}
		wg.Wait()

		ps := list(t, env, key, "?source_type=SOURCE_TYPE_SPANS")
		if len(ps) > limit {
			t.Fatalf("%d span policies stored, limit %d", len(ps), limit)
		}
		for i, p := range ps {
			if p.Order != i+1 {
				t.Fatalf("orders not 1..%d: %s", len(ps), names(ps))
			}
		}
		if got := storedTotal(t, env, teamID, "spans"); got != len(ps) {
			t.Fatalf("stored total %d, %d policies stored", got, len(ps))
		}
		for i := len(ps); i < limit; i++ {
			if p := create(t, env, key, spanBody(fmt.Sprint("fill", i), false)); p.Order != i+1 {
				t.Fatalf("fill %d created at %d", i, p.Order)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, spanBody("over", false)), 429, "at most 12 span policies")
	})
}

// TestOverwriteReadModifyWrite: a client reads the span, log and RUM policies and writes them all
// back through the overwrite with the second one renamed. A policy created without a
// description is read back without one, and written back so ("policies[0].policy.description:
// is required" before).
func TestOverwriteReadModifyWrite(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, tc := range []struct{ kind, path, source, rules, value string }{
			{"span", spanPath, "SOURCE_TYPE_SPANS", "spanRules", `{}`},
			{"log", logPath, "SOURCE_TYPE_LOGS", "logRules", `{"severities":["SEVERITY_ERROR"]}`},
			{"rum", rumPath, "SOURCE_TYPE_RUM", "rumRules", `{"severities":null}`},
		} {
			first := fmt.Sprintf(`{"policies":[{"policy":{"name":"a","priority":"PRIORITY_TYPE_HIGH"},%[1]q:%[2]s},`+
				`{"policy":{"name":"b","description":"kept","priority":"PRIORITY_TYPE_LOW"},%[1]q:%[2]s}]}`, tc.rules, tc.value)
			if res := env.JSON(t, http.MethodPut, tc.path, key, first); res.Status != http.StatusOK {
				t.Fatalf("%s overwrite: %d %s", tc.kind, res.Status, res.Body)
			}
			read := apitest.Decode[struct{ Policies []map[string]any }](t,
				env.JSON(t, http.MethodGet, policiesPath+"?source_type="+tc.source, key, "")).Policies
			if len(read) != 2 {
				t.Fatalf("%s: read %d policies", tc.kind, len(read))
			}
			var back []map[string]any
			for _, p := range read {
				fields := map[string]any{}
				for _, f := range []string{"name", "description", "priority", "priorityOverride", "targets", "applicationRule", "subsystemRule", "archiveRetention"} {
					if v, ok := p[f]; ok {
						fields[f] = v
					}
				}
				fields["disabled"] = p["enabled"] == false
				back = append(back, map[string]any{"policy": fields, tc.rules: p[tc.rules]})
			}
			back[1]["policy"].(map[string]any)["name"] = "b renamed"
			body := apitest.JSONOf(t, map[string]any{"policies": back})
			if res := env.JSON(t, http.MethodPut, tc.path, key, body); res.Status != http.StatusOK {
				t.Fatalf("%s: writing the read policies back: %d %s\nbody %s", tc.kind, res.Status, res.Body, body)
			}
			if got := names(list(t, env, key, "?source_type="+tc.source)); got != "a@1,b renamed@2" {
				t.Fatalf("%s after writing back: %s", tc.kind, got)
			}
		}
	})
}

// TestReorderReadModifyWrite: the orders read from the list, sent back as read, change nothing;
// sent back with two swapped, swap them.
func TestReorderReadModifyWrite(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, n := range []string{"a", "b", "c"} {
			create(t, env, key, logBody(n, ""))
		}
		read := list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")
		orders := make([]map[string]any, len(read))
		for i, p := range read {
			orders[i] = map[string]any{"id": p.ID, "order": p.Order}
		}
		send := func() {
			t.Helper()
			body := apitest.JSONOf(t, map[string]any{"sourceType": "SOURCE_TYPE_LOGS", "orders": orders})
			if res := env.JSON(t, http.MethodPost, reorderPath, key, body); res.Status != http.StatusOK {
				t.Fatalf("reorder %s: %d %s", body, res.Status, res.Body)
			}
		}
		send()
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "a@1,b@2,c@3" {
			t.Fatalf("after sending the orders back: %s", got)
		}
		orders[0]["order"], orders[1]["order"] = orders[1]["order"], orders[0]["order"]
		send()
		if got := names(list(t, env, key, "?source_type=SOURCE_TYPE_LOGS")); got != "b@1,a@2,c@3" {
			t.Fatalf("after swapping: %s", got)
		}
	})
}
