package dashboards_test

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/dashboards"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

const (
	pinnedPath = "/mgmt/openapi/5/dashboards/pinned/v1"
	slugPath   = basePath + "/slugs/lookup"
	checkPath  = "/mgmt/openapi/5/dashboards/check/v1"
)

// catalogItem is a catalog entry with the state the new operations change.
type catalogItem struct {
	ID, Name, SlugName  string
	IsLocked            bool
	IsDefault, IsPinned bool
	Folder              *struct {
		ID, Name string
		ParentID *string `json:"parentId"`
	}
	AuthorID       *string `json:"authorId"`
	LockerAuthorID *string `json:"lockerAuthorId"`
}

func catalog(t *testing.T, env *apitest.Env, key string) map[string]catalogItem {
	t.Helper()
	items := apitest.Decode[struct{ Items []catalogItem }](t, env.JSON(t, http.MethodGet, catalogPath, key, "")).Items
	out := map[string]catalogItem{}
	for _, it := range items {
		out[it.ID] = it
	}
	return out
}

// namedKey creates a key named name with the permissions and answers its id and value.
func namedKey(t *testing.T, env *apitest.Env, teamKey, name string, permissions ...string) (id, value string) {
	t.Helper()
	res, err := env.Client(t, teamKey).CreateApiKey(context.Background(), &oas.ApiKeyCreateInput{
		Name: name, KeyPermissions: oas.NewOptKeyPermissionsInput(oas.KeyPermissionsInput{Permissions: permissions}),
	})
	if err != nil {
		t.Fatalf("create key %s: %v", name, err)
	}
	return res.KeyId, res.Value
}

func emptyOK(t *testing.T, res apitest.Response) {
	t.Helper()
	if res.Status != http.StatusOK || string(res.Body) != "{}" {
		t.Fatalf("want 200 {}, got %d %s", res.Status, res.Body)
	}
}

func makeDefault(t *testing.T, env *apitest.Env, key, id string) apitest.Response {
	t.Helper()
	return env.JSON(t, http.MethodPut, basePath+"/"+id+"/default", key, `{"requestId":"d1"}`)
}

func moveTo(t *testing.T, env *apitest.Env, key, id, body string) apitest.Response {
	t.Helper()
	return env.JSON(t, http.MethodPost, basePath+"/"+id+"/folder", key, body)
}

func TestDashboardDefaultIsOnePerTeam(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		a := create(t, env, key, `{"name":"a","layout":{}}`)
		b := create(t, env, key, `{"name":"b","layout":{}}`)
		if c := catalog(t, env, key); c[a].IsDefault || c[b].IsDefault {
			t.Fatalf("a default before any was set: %+v", c)
		}
		emptyOK(t, makeDefault(t, env, key, a))
		emptyOK(t, makeDefault(t, env, key, a)) // again: nothing changes
		if c := catalog(t, env, key); !c[a].IsDefault || c[b].IsDefault {
			t.Fatalf("after default a: %+v", c)
		}
		emptyOK(t, makeDefault(t, env, key, b))
		env.Restart(t)
		if c := catalog(t, env, key); c[a].IsDefault || !c[b].IsDefault {
			t.Fatalf("after default b: %+v", c)
		}
		// Another team's dashboard is as missing as a missing one, and nothing changes.
		apitest.ExpectError(t, makeDefault(t, env, otherKey, a), 404, "dashboard_id", a)
		apitest.ExpectError(t, makeDefault(t, env, key, "ZZZZZZZZZZZZZZZZZZZZZ"), 404, "dashboard_id")
		if c := catalog(t, env, key); !c[b].IsDefault {
			t.Fatalf("a refused default changed the default: %+v", c)
		}
		// Deleting the default dashboard leaves the team without one.
		emptyOK(t, env.JSON(t, http.MethodDelete, basePath+"/"+b, key, ""))
		if c := catalog(t, env, key); len(c) != 1 || c[a].IsDefault {
			t.Fatalf("after deleting the default: %+v", c)
		}
		// Bounds: requestId is required, 1 to 128 characters; the id exactly 21.
		for _, body := range []string{`{}`, `{"requestId":""}`, `{"requestId":"` + strings.Repeat("r", 129) + `"}`, `{"requestId":5}`} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath+"/"+a+"/default", key, body), 400, "requestId")
		}
		emptyOK(t, env.JSON(t, http.MethodPut, basePath+"/"+a+"/default", key, `{"requestId":"`+strings.Repeat("é", 128)+`"}`))
		apitest.ExpectError(t, makeDefault(t, env, key, a[:20]), 400, "dashboard_id")
		apitest.ExpectError(t, makeDefault(t, env, key, a+"x"), 400, "dashboard_id")
		if c := catalog(t, env, key); !c[a].IsDefault {
			t.Fatalf("default a: %+v", c)
		}
	})
}

func TestDashboardPinsBelongToTheKey(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		_, reader := namedKey(t, env, key, "reader", "team-dashboards:Read")
		a := create(t, env, key, `{"name":"a","layout":{}}`)
		b := create(t, env, key, `{"name":"b","layout":{}}`)
		pin := func(k, id, query string) apitest.Response {
			return env.JSON(t, http.MethodPut, pinnedPath+"/"+id+query, k, "")
		}
		unpin := func(k, id, query string) apitest.Response {
			return env.JSON(t, http.MethodDelete, pinnedPath+"/"+id+query, k, "")
		}
		emptyOK(t, pin(reader, a, ""))
		emptyOK(t, pin(reader, a, "?request_id=again")) // again: nothing changes
		env.Restart(t)
		if c := catalog(t, env, reader); !c[a].IsPinned || c[b].IsPinned {
			t.Fatalf("reader's catalog: %+v", c)
		}
		// Another key of the team sees its own pins: none.
		if c := catalog(t, env, key); c[a].IsPinned || c[b].IsPinned {
			t.Fatalf("team key's catalog: %+v", c)
		}
		emptyOK(t, pin(key, b, "?request_id="+strings.Repeat("r", 128)))
		if c := catalog(t, env, key); c[a].IsPinned || !c[b].IsPinned {
			t.Fatalf("team key's catalog after pinning b: %+v", c)
		}
		emptyOK(t, unpin(reader, a, ""))
		emptyOK(t, unpin(reader, a, "")) // not pinned: nothing changes
		if c := catalog(t, env, reader); c[a].IsPinned || c[b].IsPinned {
			t.Fatalf("reader's catalog after unpinning: %+v", c)
		}
		// Missing, another team's, and bad ids and request ids.
		apitest.ExpectError(t, pin(otherKey, a, ""), 404, "dashboard_id")
		apitest.ExpectError(t, unpin(otherKey, b, ""), 404, "dashboard_id")
		apitest.ExpectError(t, pin(key, "ZZZZZZZZZZZZZZZZZZZZZ", ""), 404, "dashboard_id")
		apitest.ExpectError(t, pin(key, a[:20], ""), 400, "dashboard_id")
		apitest.ExpectError(t, pin(key, a, "?request_id="), 400, "request_id")
		apitest.ExpectError(t, unpin(key, b, "?request_id="+strings.Repeat("r", 129)), 400, "request_id")
		if c := catalog(t, env, key); !c[b].IsPinned || c[a].IsPinned {
			t.Fatalf("refused requests changed pins: %+v", c)
		}
		// Deleting a dashboard removes its pins; a new dashboard starts unpinned.
		emptyOK(t, env.JSON(t, http.MethodDelete, basePath+"/"+b, key, ""))
		c := create(t, env, key, `{"name":"c","layout":{}}`)
		if cat := catalog(t, env, key); len(cat) != 2 || cat[c].IsPinned {
			t.Fatalf("after delete: %+v", cat)
		}
	})
}

func TestDashboardAssignFolder(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		const folder = "1c9e8d7b-6a5f-4e3d-8c2b-1a0f9e8d7c6B"
		mustFolder(t, env, key, uuid, "ops")
		mustFolder(t, env, key, folder, "web")
		// A folder given in the document is the catalog's folder, by id or by the path of an
		// existing folder (TestDashboardPlacedByFolderPath).
		id := create(t, env, key, `{"name":"a","layout":{},"folderPath":{"segments":["ops"]}}`)
		inDoc := create(t, env, key, `{"name":"b","layout":{},"folderId":{"value":"`+uuid+`"}}`)
		before := get(t, env, key, id)
		if c := catalog(t, env, key); c[id].Folder == nil || c[id].Folder.ID != strings.ToLower(uuid) || c[inDoc].Folder == nil || c[inDoc].Folder.ID != uuid {
			t.Fatalf("catalog before: %+v", c)
		}
		emptyOK(t, moveTo(t, env, key, id, `{"requestId":"m1","folderId":"`+folder+`"}`))
		env.Restart(t)
		after := get(t, env, key, id)
		want := map[string]any{"value": folder}
		if got := after.Dashboard["folderId"]; !reflect.DeepEqual(got, want) || after.Dashboard["folderPath"] != nil || after.Dashboard["name"] != "a" {
			t.Fatalf("document after the move: %v", after.Dashboard)
		}
		if after.UpdatedAt <= before.UpdatedAt || after.CreatedAt != before.CreatedAt {
			t.Fatalf("times: before %+v after %+v", before, after)
		}
		if c := catalog(t, env, key); c[id].Folder == nil || c[id].Folder.ID != folder || c[id].Folder.Name != "web" {
			t.Fatalf("catalog after the move: %+v", c[id])
		}
		// null, or no folderId, is the root.
		emptyOK(t, moveTo(t, env, key, id, `{"requestId":"m2","folderId":null}`))
		emptyOK(t, moveTo(t, env, key, inDoc, `{"requestId":"m3"}`))
		for _, d := range []string{id, inDoc} {
			if g := get(t, env, key, d); g.Dashboard["folderId"] != nil || g.Dashboard["folderPath"] != nil {
				t.Fatalf("document at the root: %v", g.Dashboard)
			}
		}
		if c := catalog(t, env, key); c[id].Folder != nil || c[inDoc].Folder != nil {
			t.Fatalf("catalog at the root: %+v", c)
		}
		// Bounds and ownership; nothing changes.
		for _, bad := range []struct{ body, field string }{
			{`{"folderId":"` + folder + `"}`, "requestId"},
			{`{"requestId":"","folderId":"` + folder + `"}`, "requestId"},
			{`{"requestId":"` + strings.Repeat("r", 129) + `"}`, "requestId"},
			{`{"requestId":"m","folderId":"` + folder[:35] + `"}`, "folderId"},
			{`{"requestId":"m","folderId":"` + folder + `0"}`, "folderId"},
			{`{"requestId":"m","folderId":"` + strings.Repeat("g", 8) + folder[8:] + `"}`, "folderId"},
			{`{"requestId":"m","folderId":7}`, "folderId"},
		} {
			apitest.ExpectError(t, moveTo(t, env, key, id, bad.body), 400, bad.field)
		}
		apitest.ExpectError(t, moveTo(t, env, otherKey, id, `{"requestId":"m","folderId":"`+folder+`"}`), 404, "dashboard_id")
		apitest.ExpectError(t, moveTo(t, env, key, "ZZZZZZZZZZZZZZZZZZZZZ", `{"requestId":"m"}`), 404, "dashboard_id")
		if c := catalog(t, env, key); c[id].Folder != nil {
			t.Fatalf("a refused move changed the folder: %+v", c[id])
		}
	})
}

type authored struct {
	AuthorID          string `json:"authorId"`
	AuthorName        string `json:"authorName"`
	CreatedOriginType string `json:"createdOriginType"`
	UpdaterAuthorID   string `json:"updaterAuthorId"`
	UpdaterName       string `json:"updaterName"`
	UpdatedOriginType string `json:"updatedOriginType"`
	LockerAuthorID    string `json:"lockerAuthorId"`
	LockerName        string `json:"lockerName"`
	IsLocked          bool   `json:"isLocked"`
}

func TestDashboardAuthorUpdaterAndLocker(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		mustFolder(t, env, key, uuid, "ops")
		aliceID, alice := namedKey(t, env, key, "alice", "team-dashboards:Read", "team-dashboards:Update")
		bobID, bob := namedKey(t, env, key, "bob", "team-dashboards:Read", "team-dashboards:Update")
		read := func(id string) authored {
			return apitest.Decode[authored](t, env.JSON(t, http.MethodGet, basePath+"/"+id, alice, ""))
		}
		id := create(t, env, alice, `{"name":"a","layout":{}}`)
		want := authored{AuthorID: aliceID, AuthorName: "alice", CreatedOriginType: "TOKEN_ORIGIN_TYPE_API",
			UpdaterAuthorID: aliceID, UpdaterName: "alice", UpdatedOriginType: "TOKEN_ORIGIN_TYPE_API"}
		if got := read(id); got != want {
			t.Fatalf("after create\n got %+v\nwant %+v", got, want)
		}
		replace := func(k string, locked bool) {
			t.Helper()
			emptyOK(t, env.JSON(t, http.MethodPut, basePath, k,
				`{"requestId":"r","isLocked":`+strconv.FormatBool(locked)+`,"dashboard":{"id":"`+id+`","name":"a","layout":{}}}`))
		}
		// Bob locks it: he is the updater and the locker.
		replace(bob, true)
		want.UpdaterAuthorID, want.UpdaterName, want.LockerAuthorID, want.LockerName, want.IsLocked = bobID, "bob", bobID, "bob", true
		env.Restart(t)
		if got := read(id); got != want {
			t.Fatalf("after bob locks\n got %+v\nwant %+v", got, want)
		}
		if c := catalog(t, env, alice)[id]; c.AuthorID == nil || *c.AuthorID != aliceID || c.LockerAuthorID == nil || *c.LockerAuthorID != bobID {
			t.Fatalf("catalog while locked: %+v", c)
		}
		// Alice keeps it locked: the lock stays bob's. A folder move makes her the updater too.
		replace(alice, true)
		emptyOK(t, moveTo(t, env, bob, id, `{"requestId":"m","folderId":"`+uuid+`"}`))
		want.UpdaterAuthorID, want.UpdaterName = bobID, "bob"
		if got := read(id); got != want {
			t.Fatalf("after alice keeps the lock and bob moves it\n got %+v\nwant %+v", got, want)
		}
		// Unlocked: no locker.
		replace(alice, false)
		want.UpdaterAuthorID, want.UpdaterName, want.LockerAuthorID, want.LockerName, want.IsLocked = aliceID, "alice", "", "", false
		if got := read(id); got != want {
			t.Fatalf("after unlock\n got %+v\nwant %+v", got, want)
		}
		if c := catalog(t, env, alice)[id]; c.LockerAuthorID != nil {
			t.Fatalf("catalog after unlock: %+v", c)
		}
		// Created locked: the author is the locker.
		locked := apitest.Decode[struct{ DashboardID string }](t, env.JSON(t, http.MethodPost, basePath, bob,
			`{"requestId":"r","isLocked":true,"dashboard":{"name":"l","layout":{}}}`)).DashboardID
		if got := read(locked); got.LockerAuthorID != bobID || got.LockerName != "bob" || got.AuthorID != bobID {
			t.Fatalf("created locked: %+v", got)
		}
	})
}

func TestDashboardBySlug(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		lookup := func(k, slug string) apitest.Response {
			return env.JSON(t, http.MethodGet, slugPath+"/"+slug, k, "")
		}
		long := strings.Repeat("a", 255)
		id := create(t, env, key, `{"name":"Service health","slugName":"service-health","layout":{}}`)
		longID := create(t, env, key, `{"name":"long","slugName":"`+long+`","layout":{}}`)
		create(t, env, key, `{"name":"no slug","layout":{}}`)
		env.Restart(t)
		got := apitest.Decode[read](t, lookup(key, "service-health"))
		byID := get(t, env, key, id)
		if got.Dashboard["id"] != id || got.Dashboard["slugName"] != "service-health" || got.CreatedAt != byID.CreatedAt {
			t.Fatalf("by slug %+v, by id %+v", got, byID)
		}
		if g := apitest.Decode[read](t, lookup(key, long)); g.Dashboard["id"] != longID {
			t.Fatalf("255-character slug: %+v", g)
		}
		apitest.ExpectError(t, lookup(key, "unknown"), 404, "slug", "unknown")
		// Slugs are per team: another team may use the same one and sees only its own.
		apitest.ExpectError(t, lookup(otherKey, "service-health"), 404, "slug")
		other := create(t, env, otherKey, `{"name":"theirs","slugName":"service-health","layout":{}}`)
		if g := apitest.Decode[read](t, lookup(otherKey, "service-health")); g.Dashboard["id"] != other {
			t.Fatalf("other team's lookup: %+v", g)
		}
		// Within a team a slug names one dashboard: create and replace refuse a taken one.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, basePath, key, write(`{"name":"x","slugName":"service-health","layout":{}}`)),
			409, "dashboard.slugName", id)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"`+longID+`","name":"x","slugName":"service-health","layout":{}}`)),
			409, "dashboard.slugName")
		// Replacing a dashboard with its own slug is fine; giving it up frees the slug.
		emptyOK(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"`+id+`","name":"Renamed","slugName":"service-health","layout":{}}`)))
		emptyOK(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"`+id+`","name":"Renamed","layout":{}}`)))
		apitest.ExpectError(t, lookup(key, "service-health"), 404)
		emptyOK(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"`+longID+`","name":"x","slugName":"service-health","layout":{}}`)))
		if g := apitest.Decode[read](t, lookup(key, "service-health")); g.Dashboard["id"] != longID {
			t.Fatalf("slug moved: %+v", g)
		}
		// The slug's bounds.
		for _, bad := range []string{"Upper", "a--", "-a", "a%20b", strings.Repeat("a", 256)} {
			apitest.ExpectError(t, lookup(key, bad), 400, "slug")
		}
	})
}

type checkIssue struct{ Location, Message, Severity string }

func check(t *testing.T, env *apitest.Env, key, body string) []checkIssue {
	t.Helper()
	res := env.JSON(t, http.MethodPost, checkPath, key, body)
	out := apitest.Decode[struct{ Issues *[]checkIssue }](t, res)
	if out.Issues == nil {
		t.Fatalf("no issues array: %s", res.Body)
	}
	return *out.Issues
}

func TestDashboardCheck(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		reader := env.MustKey(t, key, "team-dashboards:Read")
		taken := create(t, env, key, `{"name":"taken","slugName":"taken","layout":{}}`)
		// A folder the team lacks is an error, as the create refuses it.
		if is := check(t, env, reader, `{"requestId":"c","dashboard":`+rich+`}`); len(is) != 2 || is[0].Location != "/folderId/value" ||
			is[0].Severity != "SEVERITY_ERROR" || !strings.Contains(is[0].Message, "no dashboard folder") {
			t.Fatalf("rich dashboard without its folder: %+v", is)
		}
		mustFolder(t, env, key, uuid, "ops")
		// A dashboard the create accepts has no errors (rich has one deprecated source); nothing
		// is stored.
		if is := check(t, env, reader, `{"requestId":"c","dashboard":`+rich+`}`); len(is) != 1 || is[0].Severity != "SEVERITY_WARNING" {
			t.Fatalf("rich dashboard: %+v", is)
		}
		if is := check(t, env, reader, `{"dashboard":{"name":"n","layout":{}}}`); len(is) != 0 {
			t.Fatalf("bare dashboard: %+v", is)
		}
		if c := catalog(t, env, key); len(c) != 1 {
			t.Fatalf("check stored something: %+v", c)
		}
		cases := []struct {
			dashboard string
			want      []checkIssue
		}{
			{`{"layout":{}}`, []checkIssue{{"/name", "dashboard.name: required", "SEVERITY_ERROR"}}},
			{`{"name":"n","layout":{"sections":[{"id":{"value":"00000000-0000-4000-8000-0000000000d2"},"rows":[{"id":{"value":"00000000-0000-4000-8000-0000000000e1"},"widgets":[{"definition":{"lineChart":{"queryDefinitions":[]}}}]}]}]}}`,
				[]checkIssue{{"/layout/sections/0/rows/0/widgets/0/definition/lineChart/queryDefinitions",
					"dashboard.layout.sections[0].rows[0].widgets[0].definition.lineChart.queryDefinitions: must have at least 1 item", "SEVERITY_ERROR"}}},
			{`{"name":"","slugName":"Upper","layout":[],"variables":[{"name":""},"x",{"displayName":"ok"}],"annotations":[{"id":"bad"}]}`,
				[]checkIssue{
					{"/name", "dashboard.name: length must be 1 to 100 characters (got 0)", "SEVERITY_ERROR"},
					{"/slugName", `dashboard.slugName: must be lowercase letters and digits joined by - or _ (got "Upper")`, "SEVERITY_ERROR"},
					{"/layout", "dashboard.layout: must be an object", "SEVERITY_ERROR"},
					{"/variables/0/name", "dashboard.variables[0].name: length must be 1 to 100 characters (got 0)", "SEVERITY_ERROR"},
					{"/variables/1", "dashboard.variables[1]: must be an object", "SEVERITY_ERROR"},
					{"/annotations/0/id", `dashboard.annotations[0].id: must be a UUID of 36 characters (got "bad")`, "SEVERITY_ERROR"},
				}},
			{`{"name":"n","layout":{"a":{"lineChart":{}},"b":{"lineChart":{"queryDefinitions":[{}]}},"c":[{"lineChart":{"queryDefinitions":"x"}}]}}`,
				[]checkIssue{
					{"/layout/a/lineChart/queryDefinitions", "dashboard.layout.a.lineChart.queryDefinitions: must have at least 1 item", "SEVERITY_ERROR"},
					{"/layout/c/0/lineChart/queryDefinitions", "dashboard.layout.c[0].lineChart.queryDefinitions: must be an array", "SEVERITY_ERROR"},
				}},
			{`{"name":"n","layout":{},"slugName":"taken"}`,
				[]checkIssue{{"/slugName", `slugName "taken" is already the slug of dashboard ` + taken + `; slugs are unique within a team`, "SEVERITY_ERROR"}}},
			{`{"name":"n","layout":{},"variables":[{"definition":{"multiSelect":{"source":{"query":{"query":{"spansQuery":{"type":{"fieldValue":{"value":{}}}}}}}}}}]}`,
				[]checkIssue{{"/variables/0/definition/multiSelect/source/query/query/spansQuery/type/fieldValue/value",
					"fieldValue.value is deprecated; use observationField", "SEVERITY_WARNING"}}},
		}
		for _, c := range cases {
			got := check(t, env, reader, `{"requestId":"c","dashboard":`+c.dashboard+`}`)
			if len(got) != len(c.want) {
				t.Fatalf("%s: issues %+v, want %+v", c.dashboard, got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("%s: issue %d\n got %+v\nwant %+v", c.dashboard, i, got[i], c.want[i])
				}
			}
		}
		// The slug of the dashboard being checked is its own when it carries its id.
		if is := check(t, env, reader, `{"dashboard":{"id":"`+taken+`","name":"n","slugName":"taken","layout":{}}}`); len(is) != 0 {
			t.Fatalf("own slug: %+v", is)
		}
		// A stored dashboard, by id.
		if is := check(t, env, reader, `{"dashboardId":"`+taken+`"}`); len(is) != 0 {
			t.Fatalf("stored dashboard: %+v", is)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, checkPath, otherKey, `{"dashboardId":"`+taken+`"}`), 404, "dashboardId")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, checkPath, key, `{"dashboardId":"nope"}`), 404, "dashboardId")
		// One of dashboard and dashboardId; the request's bounds.
		for _, bad := range []struct{ body, frag string }{
			{`{}`, "dashboardId"},
			{`{"requestId":"c"}`, "dashboardId"},
			{`{"dashboardId":"` + taken + `","dashboard":{"name":"n","layout":{}}}`, "not both"},
			{`{"dashboardId":""}`, "dashboardId"},
			{`{"dashboardId":"` + strings.Repeat("d", 129) + `"}`, "dashboardId"},
			{`{"requestId":"","dashboard":{"name":"n","layout":{}}}`, "requestId"},
			{`{"requestId":"` + strings.Repeat("r", 129) + `","dashboard":{"name":"n","layout":{}}}`, "requestId"},
			{`{"dashboard":"x"}`, "dashboard"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, checkPath, key, bad.body), 400, bad.frag)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, checkPath, key, `{"dashboardId":"`+strings.Repeat("d", 128)+`"}`), 404)
	})
}

func TestDashboardStatePermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		mustFolder(t, env, key, uuid, "ops")
		id := create(t, env, key, `{"name":"a","slugName":"a","layout":{}}`)
		reader := env.MustKey(t, key, "team-dashboards:Read")
		writer := env.MustKey(t, key, "team-dashboards:Update")
		none := env.MustKey(t, key, "team-saved-views:Read")
		readOps := []struct{ method, path, body string }{
			{http.MethodPut, pinnedPath + "/" + id, ""},
			{http.MethodDelete, pinnedPath + "/" + id, ""},
			{http.MethodGet, slugPath + "/a", ""},
			{http.MethodPost, checkPath, `{"dashboardId":"` + id + `"}`},
		}
		updateOps := []struct{ method, path, body string }{
			{http.MethodPut, basePath + "/" + id + "/default", `{"requestId":"r"}`},
			{http.MethodPost, basePath + "/" + id + "/folder", `{"requestId":"r","folderId":"` + uuid + `"}`},
		}
		for _, op := range readOps {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, writer, op.body), 403)
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, none, op.body), 403)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "application/json", op.body), 401)
			if r := env.JSON(t, op.method, op.path, reader, op.body); r.Status != 200 {
				t.Fatalf("%s %s with Read: %d %s", op.method, op.path, r.Status, r.Body)
			}
		}
		for _, op := range updateOps {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, reader, op.body), 403)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "application/json", op.body), 401)
		}
		if c := catalog(t, env, key)[id]; c.IsDefault || c.Folder != nil {
			t.Fatalf("a refused write changed the dashboard: %+v", c)
		}
		for _, op := range updateOps {
			emptyOK(t, env.JSON(t, op.method, op.path, writer, op.body))
		}
		if c := catalog(t, env, key)[id]; !c.IsDefault || c.Folder == nil {
			t.Fatalf("writes with Update: %+v", c)
		}
	})
}

// Concurrent creates with one slug: exactly one lands, the others are 409s; concurrent moves,
// pins and default changes of one dashboard all succeed.
func TestDashboardConcurrentSlugsAndState(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		mustFolder(t, env, key, uuid, "ops")
		const n = 8
		answers := make([]apitest.Response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				answers[i] = env.JSON(t, http.MethodPost, basePath, key, write(`{"name":"same","slugName":"same","layout":{}}`))
			})
		}
		wg.Wait()
		created := 0
		for _, a := range answers {
			switch a.Status {
			case http.StatusOK:
				created++
			case http.StatusConflict:
			default:
				t.Fatalf("create: %d %s", a.Status, a.Body)
			}
		}
		if cat := catalog(t, env, key); created != 1 || len(cat) != 1 {
			t.Fatalf("%d creates landed, catalog %+v", created, cat)
		}
		id := create(t, env, key, `{"name":"busy","layout":{}}`)
		for i := range n {
			wg.Go(func() {
				var res apitest.Response
				switch i % 3 {
				case 0:
					res = moveTo(t, env, key, id, `{"requestId":"m","folderId":"`+uuid+`"}`)
				case 1:
					res = env.JSON(t, http.MethodPut, pinnedPath+"/"+id, key, "")
				default:
					res = makeDefault(t, env, key, id)
				}
				answers[i] = res
			})
		}
		wg.Wait()
		for i, a := range answers {
			if a.Status != http.StatusOK {
				t.Fatalf("request %d: %d %s", i, a.Status, a.Body)
			}
		}
		if c := catalog(t, env, key)[id]; !c.IsDefault || !c.IsPinned || c.Folder == nil || c.Folder.ID != uuid {
			t.Fatalf("after concurrent changes: %+v", c)
		}
	})
}

// TestStreamedCatalogIsTheBufferedCatalog checks that the catalog, which the server streams, is
// byte for byte what the generated encoder writes for the same dashboards and calling key: empty,
// a few with a slug, a default and a pin of the calling key, and more than two streaming buffers.
func TestStreamedCatalogIsTheBufferedCatalog(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, teamKey := env.MustTeam(t, "streamed")
		keyID, key := namedKey(t, env, teamKey, "lister", "team-dashboards:Read")
		caller := &auth.Principal{TeamID: team, KeyID: keyID}
		h := dashboards.NewHandler(env.DB)
		buffered := func(ctx context.Context) (*oas.DashboardCatalog, error) { return h.ListDashboardCatalog(ctx) }
		if body := apitest.ExpectStreamedAsBufferedFor(t, env, catalogPath, key, caller, buffered); string(body) != `{"items":[]}` {
			t.Fatalf("empty catalog: %s", body)
		}
		a := create(t, env, teamKey, `{"name":"a \"é\" <&>","slugName":"a-slug","layout":{}}`)
		b := create(t, env, teamKey, `{"name":"b","layout":{}}`)
		create(t, env, teamKey, `{"name":"c","layout":{}}`)
		emptyOK(t, env.JSON(t, http.MethodPut, basePath+"/"+a+"/default", teamKey, `{"requestId":"d1"}`))
		emptyOK(t, env.JSON(t, http.MethodPut, pinnedPath+"/"+b, key, ""))
		apitest.ExpectStreamedAsBufferedFor(t, env, catalogPath, key, caller, buffered)

		for i := range 300 {
			create(t, env, teamKey, `{"name":"bulk `+strconv.Itoa(i)+`","layout":{}}`)
		}
		if body := apitest.ExpectStreamedAsBufferedFor(t, env, catalogPath, key, caller, buffered); len(body) <= 2*streaming.BufferBytes {
			t.Fatalf("the catalog is %d bytes, want more than two buffers", len(body))
		}
	})
}
