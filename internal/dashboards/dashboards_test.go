package dashboards_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	basePath    = "/mgmt/openapi/5/dashboards/dashboards/v1"
	catalogPath = basePath + "/catalog/list"
	uuid        = "0b7e8c1a-3f2d-4e5f-9a6b-7c8d9e0f1a2B"
)

func write(dashboard string) string {
	return `{"requestId":"r1","dashboard":` + dashboard + `}`
}

func create(t *testing.T, env *apitest.Env, key, dashboard string) string {
	t.Helper()
	out := apitest.Decode[struct{ DashboardID string }](t, env.JSON(t, http.MethodPost, basePath, key, write(dashboard)))
	if len(out.DashboardID) != 21 {
		t.Fatalf("id %q is not 21 characters", out.DashboardID)
	}
	return out.DashboardID
}

type read struct {
	Dashboard            map[string]any
	AccessPolicy         *string
	IsLocked             bool
	CreatedAt, UpdatedAt string
}

func get(t *testing.T, env *apitest.Env, key, id string) read {
	t.Helper()
	return apitest.Decode[read](t, env.JSON(t, http.MethodGet, basePath+"/"+id, key, ""))
}

func asMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// rich has every checked part plus fields the server does not interpret.
const rich = `{"name":"Service health","description":"d","slugName":"service-health","relativeTimeFrame":"900s","fiveMinutes":{},
 "folderId":{"value":"` + uuid + `"},"folderPath":{"segments":["ops","web"]},
 "layout":{"sections":[{"id":{"value":"` + uuid + `"},"rows":[{"id":{"value":"00000000-0000-4000-8000-0000000000e1"},"appearance":{"height":19},"widgets":[
   {"id":{"value":"` + uuid + `"},"title":"cpu","definition":{"lineChart":{"queryDefinitions":[{"id":"q","query":{"metrics":{"promqlQuery":{"value":"up"}}},"seriesCountLimit":"20"}],"legend":{"isVisible":true}}}}]}]}]},
 "variablesV2":[{"id":{"value":"` + uuid + `"},"name":"svc","displayName":"Service","displayType":"VARIABLE_DISPLAY_TYPE_V2_LABEL_VALUE","source":{"query":{"spansQuery":{"type":{"fieldValue":{"observationField":{"keypath":["service"],"scope":"DATASET_SCOPE_METADATA"}}}},"valuesOrderDirection":"ORDER_DIRECTION_ASC","allOption":{"includeAll":false}}},"value":{"multiString":{}}}],
 "variables":[{"name":"env","displayName":"Env","definition":{"multiSelect":{"source":{"query":{"query":{"spansQuery":{"type":{"fieldValue":{"value":{"metadataField":"METADATA_FIELD_SERVICE_NAME"}}}}}}}}}}],
 "annotations":[{"id":"` + uuid + `","name":"deploys","enabled":true,"source":{"logs":{"messageTemplate":"","labelFields":[],"luceneQuery":{"value":"deploy"}}}}],
 "filters":[{"source":{"logs":{"operator":{"equals":{"selection":{"all":{}}}}}},"enabled":true}],
 "futureField":{"nested":[1,2.50,{"x":null}]}}`

func TestDashboardLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		mustFolder(t, env, key, uuid, "ops")
		// The server owns the id: one in the body is replaced.
		withID := strings.Replace(rich, `{"name"`, `{"id":"AAAAAAAAAAAAAAAAAAAAA","name"`, 1)
		res := env.JSON(t, http.MethodPost, basePath, key,
			`{"requestId":"r1","accessPolicy":"","isLocked":true,"dashboard":`+withID+`}`)
		id := apitest.Decode[struct{ DashboardID string }](t, res).DashboardID
		if len(id) != 21 || id == "AAAAAAAAAAAAAAAAAAAAA" {
			t.Fatalf("id %q", id)
		}
		env.Restart(t)
		got := get(t, env, key, id)
		want := asMap(t, rich)
		want["id"] = id
		if !reflect.DeepEqual(got.Dashboard, want) {
			t.Fatalf("stored\n%v\nwant\n%v", got.Dashboard, want)
		}
		if got.AccessPolicy == nil || *got.AccessPolicy != "" || !got.IsLocked || got.CreatedAt == "" || got.UpdatedAt != got.CreatedAt {
			t.Fatalf("get %+v", got)
		}
		other := create(t, env, key, `{"name":"Another","layout":{}}`)
		if o := get(t, env, key, other); o.AccessPolicy != nil || o.IsLocked || len(o.Dashboard) != 3 {
			t.Fatalf("bare %+v", o)
		}
		type item struct {
			ID, Name, SlugName     string
			IsLocked               bool
			CreateTime, UpdateTime string
		}
		cat := apitest.Decode[struct{ Items []item }](t, env.JSON(t, http.MethodGet, catalogPath, key, "")).Items
		if len(cat) != 2 || cat[0].ID != other || cat[0].Name != "Another" || cat[0].SlugName != "" ||
			cat[1].ID != id || cat[1].SlugName != "service-health" || !cat[1].IsLocked || cat[1].CreateTime == "" {
			t.Fatalf("catalog %+v", cat)
		}
		// Replace: the body becomes the dashboard; the lock follows the body; the access policy,
		// not sent, stays (TestAccessPolicySurvivesReplace).
		repl := `{"id":"` + id + `","name":"Renamed","layout":{"sections":[]}}`
		if r := env.JSON(t, http.MethodPut, basePath, key, write(repl)); r.Status != 200 || string(r.Body) != "{}" {
			t.Fatalf("replace %d %s", r.Status, r.Body)
		}
		if g := get(t, env, key, id); !reflect.DeepEqual(g.Dashboard, asMap(t, repl)) || g.AccessPolicy == nil || *g.AccessPolicy != "" || g.IsLocked {
			t.Fatalf("after replace %+v", g)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"name":"x","layout":{}}`)), 400, "dashboard.id", "required")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"short","name":"x","layout":{}}`)), 400, "dashboard.id", "21")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"ZZZZZZZZZZZZZZZZZZZZZ","name":"x","layout":{}}`)), 404, "ZZZZZZZZZZZZZZZZZZZZZ")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, basePath+"/ZZZZZZZZZZZZZZZZZZZZZ", key, ""), 404, "dashboard_id")
	})
}

func TestDashboardDeleteIsIdempotent(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		del := func(id, requestID string) apitest.Response {
			p := basePath + "/" + id
			if requestID != "" {
				p += "?request_id=" + url.QueryEscape(requestID)
			}
			return env.JSON(t, http.MethodDelete, p, key, "")
		}
		ok := func(res apitest.Response) {
			t.Helper()
			if res.Status != 200 || string(res.Body) != "{}" {
				t.Fatalf("delete %d %s", res.Status, res.Body)
			}
		}
		a := create(t, env, key, `{"name":"a","layout":{}}`)
		req := strings.Repeat("r", 128)
		ok(del(a, req))
		env.Restart(t)
		ok(del(a, req)) // the same request id answers as the first time
		apitest.ExpectError(t, del(a, "other"), 404, "dashboard_id", a)
		apitest.ExpectError(t, del(a, ""), 404, "dashboard_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, basePath+"/"+a, key, ""), 404)
		// Without a request id, a repeat is a 404.
		b := create(t, env, key, `{"name":"b","layout":{}}`)
		ok(del(b, ""))
		apitest.ExpectError(t, del(b, ""), 404)
		// A request id remembers only the dashboard it deleted.
		c := create(t, env, key, `{"name":"c","layout":{}}`)
		ok(del(c, "x"))
		apitest.ExpectError(t, del(b, "x"), 404)
		// request_id is 1 to 128 characters; the id exactly 21.
		d := create(t, env, key, `{"name":"d","layout":{}}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, basePath+"/"+d+"?request_id=", key, ""), 400, "request_id")
		apitest.ExpectError(t, del(d, strings.Repeat("r", 129)), 400, "request_id")
		ok(del(d, "é"))
		for _, bad := range []string{d[:20], d + "x"} {
			apitest.ExpectError(t, del(bad, ""), 400, "dashboard_id")
		}
	})
}

func TestDashboardBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		mustFolder(t, env, key, uuid, "ops")
		s := func(n int) string { return strconv.Quote(strings.Repeat("é", n)) }
		list := func(n int, item string) string {
			return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
		}
		dash := func(extra string) string { return `{"name":"n","layout":{}` + extra + `}` }
		ann := func(src string) string {
			return dash(`,"annotations":[{"id":"` + uuid + `","name":"a","source":` + src + `}]`)
		}
		line := func(defs string) string {
			return dash(`,"layout":{"sections":[{"id":{"value":"` + uuid + `"},"rows":[{"id":{"value":"00000000-0000-4000-8000-0000000000e1"}},{"id":{"value":"00000000-0000-4000-8000-0000000000e2"},"widgets":[{},{},{"definition":{"lineChart":{"queryDefinitions":` + defs + `}}}]}]}]}`)
		}
		fieldValue := func(fv string) string {
			return dash(`,"variablesV2":[{"id":{"value":"` + uuid + `"},"name":"v","displayName":"V","source":{"query":{"spansQuery":{"type":{"fieldValue":` + fv + `}}}}}]`)
		}
		const obs = `"observationField":{"keypath":["a"]}`
		const val = `"value":{"metadataField":"METADATA_FIELD_SERVICE_NAME"}`
		good := []string{
			`{"name":` + s(1) + `,"layout":{}}`,
			`{"name":` + s(100) + `,"layout":{},"description":` + s(4096) + `}`,
			dash(`,"slugName":"a"`), dash(`,"slugName":"` + strings.Repeat("a", 255) + `"`), dash(`,"slugName":"a-b_c1"`),
			dash(`,"folderId":{"value":"` + uuid + `"}`),
			dash(`,"folderPath":{"segments":[` + s(1) + `]}`), dash(`,"folderPath":{"segments":[` + s(100) + `,"b"]}`),
			dash(`,"variables":[{"name":` + s(1) + `,"displayName":` + s(100) + `}]`),
			dash(`,"variablesV2":[{"id":{"value":"` + uuid + `"},"name":` + s(100) + `,"displayName":` + s(1) + `}]`),
			ann(`{"logs":{"messageTemplate":` + s(1000) + `,"labelFields":` + list(10, `{"keypath":["k"]}`) + `}}`),
			ann(`{"metrics":{"messageTemplate":"","labels":` + list(10, `"l"`) + `}}`),
			dash(`,"annotations":[{"id":"` + uuid + `","name":` + s(100) + `}]`),
			line(`[{"id":"q","query":{}}]`),
			fieldValue(`{` + obs + `}`), fieldValue(`{` + val + `}`),
		}
		for _, d := range good {
			create(t, env, key, d)
		}
		// An empty access policy is accepted.
		apitest.Decode[struct{ DashboardID string }](t, env.JSON(t, http.MethodPost, basePath, key, `{"requestId":"r","accessPolicy":"","dashboard":`+dash("")+`}`))
		bad := []struct {
			body  string
			frags []string
		}{
			{`{"layout":{}}`, []string{"dashboard.name: required"}},
			{`{"name":"","layout":{}}`, []string{"dashboard.name", "1 to 100"}},
			{`{"name":` + s(101) + `,"layout":{}}`, []string{"dashboard.name", "got 101"}},
			{`{"name":"n"}`, []string{"dashboard.layout: required"}},
			{dash(`,"description":` + s(4097)), []string{"dashboard.description", "got 4097"}},
			{dash(`,"slugName":""`), []string{"dashboard.slugName", "got 0"}},
			{dash(`,"slugName":"` + strings.Repeat("a", 256) + `"`), []string{"dashboard.slugName", "got 256"}},
			{dash(`,"slugName":"Upper"`), []string{"dashboard.slugName", "lowercase"}},
			{dash(`,"folderId":{"value":"` + uuid[:35] + `"}`), []string{"dashboard.folderId.value", "UUID"}},
			{dash(`,"folderId":{"value":"` + uuid + `0"}`), []string{"dashboard.folderId.value", "UUID"}},
			{dash(`,"folderPath":{"segments":[]}`), []string{"dashboard.folderPath.segments", "1 to 2 items (got 0)"}},
			{dash(`,"folderPath":{}`), []string{"dashboard.folderPath.segments", "got 0"}},
			{dash(`,"folderPath":{"segments":["a","b","c"]}`), []string{"dashboard.folderPath.segments", "got 3"}},
			{dash(`,"folderPath":{"segments":["a",""]}`), []string{"dashboard.folderPath.segments[1]", "got 0"}},
			{dash(`,"folderPath":{"segments":[` + s(101) + `]}`), []string{"dashboard.folderPath.segments[0]", "got 101"}},
			{dash(`,"variables":[{"name":""}]`), []string{"dashboard.variables[0].name", "got 0"}},
			{dash(`,"variables":[{"displayName":` + s(101) + `}]`), []string{"dashboard.variables[0].displayName", "got 101"}},
			{dash(`,"variablesV2":[{"id":{"value":"x"}}]`), []string{"dashboard.variablesV2[0].id.value", "UUID"}},
			{dash(`,"variablesV2":[{"name":` + s(101) + `}]`), []string{"dashboard.variablesV2[0].name", "got 101"}},
			{dash(`,"annotations":[{"id":"` + uuid[1:] + `"}]`), []string{"dashboard.annotations[0].id", "UUID"}},
			{dash(`,"annotations":[{"id":"` + uuid + `x"}]`), []string{"dashboard.annotations[0].id", "UUID"}},
			{dash(`,"annotations":[{"name":""}]`), []string{"dashboard.annotations[0].name", "got 0"}},
			{dash(`,"annotations":[{"name":` + s(101) + `}]`), []string{"dashboard.annotations[0].name", "got 101"}},
			{ann(`{"spans":{"messageTemplate":` + s(1001) + `}}`), []string{"dashboard.annotations[0].source.spans.messageTemplate", "got 1001"}},
			{ann(`{"dataprime":{"labelFields":` + list(11, `{}`) + `}}`), []string{"dashboard.annotations[0].source.dataprime.labelFields", "at most 10 items (got 11)"}},
			{ann(`{"metrics":{"labels":` + list(11, `"l"`) + `}}`), []string{"dashboard.annotations[0].source.metrics.labels", "got 11"}},
			{line(`[]`), []string{"dashboard.layout.sections[0].rows[1].widgets[2].definition.lineChart.queryDefinitions: must have at least 1 item"}},
			{dash(`,"layout":{"sections":[{"id":{"value":"` + uuid + `"},"rows":[{"id":{"value":"00000000-0000-4000-8000-0000000000e1"},"widgets":[{"definition":{"lineChart":{}}}]}]}]}`), []string{"lineChart.queryDefinitions", "at least 1"}},
			{fieldValue(`{` + obs + `,` + val + `}`), []string{"dashboard.variablesV2[0].source.query.spansQuery.type.fieldValue", "not both"}},
			{fieldValue(`{}`), []string{"dashboard.variablesV2[0].source.query.spansQuery.type.fieldValue", "exactly one"}},
			{dash(`,"variables":[{"definition":{"multiSelect":{"source":{"query":{"query":{"spansQuery":{"type":{"fieldValue":{` + obs + `,` + val + `}}}}}}}}}]`),
				[]string{"dashboard.variables[0].definition.multiSelect.source.query.query.spansQuery.type.fieldValue", "not both"}},
		}
		for _, b := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, basePath, key, write(b.body)), 400, b.frags...)
		}
		// The replace checks alike.
		id := create(t, env, key, dash(""))
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, key,
			write(strings.Replace(fieldValue(`{`+obs+`,`+val+`}`), `{"name"`, `{"id":"`+id+`","name"`, 1))), 400, "not both")
		// Request envelope bounds.
		for _, b := range []string{
			`{"dashboard":` + dash("") + `}`,
			`{"requestId":"","dashboard":` + dash("") + `}`,
			`{"requestId":` + s(129) + `,"dashboard":` + dash("") + `}`,
			`{"requestId":"r"}`,
			`{"requestId":"r","accessPolicy":` + s(65537) + `,"dashboard":` + dash("") + `}`,
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, basePath, key, b), 400)
		}
		apitest.Decode[struct{ DashboardID string }](t, env.JSON(t, http.MethodPost, basePath, key, `{"requestId":`+s(128)+`,"accessPolicy":`+s(65536)+`,"dashboard":`+dash("")+`}`))
	})
}

func TestDashboardTeamsAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		id := create(t, env, key, `{"name":"mine","layout":{}}`)
		// Another team's dashboard is as missing as a missing one.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, basePath+"/"+id, otherKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, otherKey, write(`{"id":"`+id+`","name":"x","layout":{}}`)), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, basePath+"/"+id+"?request_id=r", otherKey, ""), 404)
		if cat := apitest.Decode[struct{ Items []any }](t, env.JSON(t, http.MethodGet, catalogPath, otherKey, "")).Items; len(cat) != 0 {
			t.Fatalf("other team's catalog %v", cat)
		}
		get(t, env, key, id)

		reader := env.MustKey(t, key, "team-dashboards:Read")
		writer := env.MustKey(t, key, "team-dashboards:Update")
		for _, c := range []struct{ method, path, body string }{
			{http.MethodPost, basePath, write(`{"name":"x","layout":{}}`)},
			{http.MethodPut, basePath, write(`{"id":"` + id + `","name":"x","layout":{}}`)},
			{http.MethodDelete, basePath + "/" + id, ""},
		} {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, reader, c.body), 403)
		}
		for _, p := range []string{basePath + "/" + id, catalogPath} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p, writer, ""), 403)
			apitest.Decode[map[string]any](t, env.JSON(t, http.MethodGet, p, reader, ""))
		}
		if r := env.JSON(t, http.MethodDelete, basePath+"/"+id, writer, ""); r.Status != 200 {
			t.Fatalf("delete with Update: %d %s", r.Status, r.Body)
		}
	})
}

func TestDashboardConcurrentRepeatedDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		id := create(t, env, key, `{"name":"a","layout":{}}`)
		const n = 8
		answers := make([]apitest.Response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				answers[i] = env.JSON(t, http.MethodDelete, basePath+"/"+id+"?request_id=same", key, "")
			})
		}
		wg.Wait()
		for i, a := range answers {
			if a.Status != http.StatusOK || string(a.Body) != "{}" {
				t.Fatalf("delete %d: %d %s", i, a.Status, a.Body)
			}
		}
		// Concurrent creates all land, with distinct ids.
		ids := make([]string, n)
		for i := range n {
			wg.Go(func() {
				ids[i] = create(t, env, key, `{"name":"c","layout":{}}`)
			})
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		if cat := apitest.Decode[struct{ Items []any }](t, env.JSON(t, http.MethodGet, catalogPath, key, "")).Items; len(cat) != n || len(seen) != n {
			t.Fatalf("catalog %d items, %d distinct ids", len(cat), len(seen))
		}
	})
}

// TestAccessPolicySurvivesReplace: a replace that does not send the access policy (or sends it
// null) keeps the stored one; one that sends it replaces it. It came back null after a replace
// before.
func TestAccessPolicySurvivesReplace(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		const policy = `{"default":{"permissions":{"team-dashboards:Read":"grant"}}}`
		p, _ := json.Marshal(policy)
		id := apitest.Decode[struct{ DashboardID string }](t, env.JSON(t, http.MethodPost, basePath, key,
			`{"requestId":"r1","accessPolicy":`+string(p)+`,"dashboard":{"name":"Kept","layout":{}}}`)).DashboardID
		for _, body := range []string{
			`{"requestId":"r2","dashboard":{"id":"` + id + `","name":"Renamed","layout":{}}}`,
			`{"requestId":"r3","accessPolicy":null,"dashboard":{"id":"` + id + `","name":"Renamed again","layout":{}}}`,
		} {
			if r := env.JSON(t, http.MethodPut, basePath, key, body); r.Status != 200 {
				t.Fatalf("replace %d %s", r.Status, r.Body)
			}
			if g := get(t, env, key, id); g.AccessPolicy == nil || *g.AccessPolicy != policy {
				t.Fatalf("after %s: access policy %v, want the stored %s", body, g.AccessPolicy, policy)
			}
		}
		if r := env.JSON(t, http.MethodPut, basePath, key, `{"requestId":"r4","accessPolicy":"","dashboard":{"id":"`+id+`","name":"Open","layout":{}}}`); r.Status != 200 {
			t.Fatalf("replace %d %s", r.Status, r.Body)
		}
		if g := get(t, env, key, id); g.AccessPolicy == nil || *g.AccessPolicy != "" {
			t.Fatalf("after a replace sending an empty policy: %v", g.AccessPolicy)
		}
	})
}

// TestMissingPubliclyRequiredMember: a dashboard without a member its public schema requires (a
// section's id; a query definition's id and query) is a 400 naming it, and is not stored; it
// was stored before.
func TestMissingPubliclyRequiredMember(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		sectionID := `{"value":"` + uuid + `"}`
		for _, c := range []struct{ dashboard, want string }{
			{`{"name":"n","layout":{"sections":[{"id":` + sectionID + `},{"rows":[]}]}}`, "dashboard.layout.sections[1].id: required"},
			{`{"name":"n","layout":{"sections":[{"id":null,"rows":[]}]}}`, "dashboard.layout.sections[0].id: required"},
			{`{"name":"n","layout":{"sections":[{"id":` + sectionID + `,"rows":[{"id":{"value":"00000000-0000-4000-8000-0000000000e1"},"widgets":[{"definition":{"lineChart":{"queryDefinitions":[{"id":"q"}]}}}]}]}]}}`,
				"dashboard.layout.sections[0].rows[0].widgets[0].definition.lineChart.queryDefinitions[0].query: required"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, basePath, key, write(c.dashboard)), 400, c.want)
		}
		if items := apitest.Decode[struct{ Items []any }](t, env.JSON(t, http.MethodGet, catalogPath, key, "")).Items; len(items) != 0 {
			t.Fatalf("refused dashboards were stored: %v", items)
		}
		create(t, env, key, `{"name":"n","layout":{"sections":[{"id":`+sectionID+`,"rows":[]}]}}`)
	})
}
