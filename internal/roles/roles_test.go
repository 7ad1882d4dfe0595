package roles_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

const (
	createPath = "/mgmt/openapi/3/aaa/team-roles/v1/custom-roles"
	rolesPath  = "/mgmt/openapi/5/aaa/team-roles/v1/custom-roles"
	systemPath = "/mgmt/openapi/5/aaa/team-roles/v1/system-roles"
)

type customRole struct {
	RoleID         int64
	TeamID         int64
	Name           string
	Description    string
	ParentRoleID   int64
	ParentRoleName string
	Permissions    []string
}

func create(t *testing.T, env *apitest.Env, key, body string) int64 {
	t.Helper()
	return apitest.Decode[struct{ ID int64 }](t, env.JSON(t, http.MethodPut, createPath, key, body)).ID
}

func get(t *testing.T, env *apitest.Env, key string, id int64) customRole {
	t.Helper()
	return apitest.Decode[struct{ Role customRole }](t, env.JSON(t, http.MethodGet, rolePath(id), key, "")).Role
}

func list(t *testing.T, env *apitest.Env, key, query string) []customRole {
	t.Helper()
	return apitest.Decode[struct{ Roles []customRole }](t, env.JSON(t, http.MethodGet, rolesPath+query, key, "")).Roles
}

func rolePath(id int64) string { return rolesPath + "/" + strconv.FormatInt(id, 10) }

func TestSystemRoles(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		got := apitest.Decode[struct {
			Roles []struct {
				RoleID      int64
				Name        string
				Description string
				Permissions []string
			}
		}](t, env.JSON(t, http.MethodGet, systemPath, key, "")).Roles
		names := []string{"Platform Admin", "Standard User", "Read-Only User", "Data Admin", "Observability Lead", "Security User", "No-Access User"}
		if len(got) != len(names) {
			t.Fatalf("system roles %+v", got)
		}
		for i, r := range got {
			if r.Name != names[i] || r.RoleID != int64(i+1) || r.Permissions == nil {
				t.Fatalf("system role %d: %+v, want %q", i+1, r, names[i])
			}
			for _, p := range r.Permissions {
				if c, ok := auth.Canonical(p); !ok || c != p {
					t.Fatalf("%s holds %q, not a public name", r.Name, p)
				}
			}
		}
		if !slices.Equal(got[0].Permissions, auth.PresetPermissions(auth.FullAccess)) || len(got[0].Permissions) != 293 {
			t.Fatalf("Platform Admin %v", got[0].Permissions)
		}
		standard := got[1].Permissions
		if slices.Contains(standard, "team-custom-api-keys:Manage") || slices.Contains(standard, "team-roles:Manage") ||
			!slices.Contains(standard, "case:Comment") || !slices.Contains(standard, "team-dashboards:Update") ||
			!slices.Contains(standard, "team-custom-api-keys:ReadConfig") {
			t.Fatalf("Standard User %v", standard)
		}
		if !slices.Equal(got[2].Permissions, auth.PresetPermissions(auth.ReadOnly)) || slices.Contains(got[2].Permissions, "case:Comment") ||
			!slices.Contains(got[2].Permissions, "incidents:Read") {
			t.Fatalf("Read-Only User %v", got[2].Permissions)
		}
		if !slices.Contains(got[3].Permissions, "logs.tco:UpdatePolicies") || slices.Contains(got[3].Permissions, "alerts:UpdateConfig") {
			t.Fatalf("Data Admin %v", got[3].Permissions)
		}
		if !slices.Contains(got[4].Permissions, "alerts:UpdateConfig") || slices.Contains(got[4].Permissions, "logs.tco:UpdatePolicies") {
			t.Fatalf("Observability Lead %v", got[4].Permissions)
		}
		if !slices.Contains(got[5].Permissions, "snowbit.setup:Manage") || slices.Contains(got[5].Permissions, "alerts:UpdateConfig") {
			t.Fatalf("Security User %v", got[5].Permissions)
		}
		if len(got[6].Permissions) != 0 {
			t.Fatalf("No-Access User %v", got[6].Permissions)
		}
	})
}

// A parent role is named by its public name in any case, or, for one release, by the name
// mgmtapi gave it before (admin, member, viewer).
func TestParentRoleNames(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for i, c := range []struct {
			name   string
			id     int64
			public string
		}{
			{"Standard User", 2, "Standard User"}, {"standard user", 2, "Standard User"}, {"OBSERVABILITY LEAD", 5, "Observability Lead"},
			{"admin", 1, "Platform Admin"}, {"member", 2, "Standard User"}, {"Viewer", 3, "Read-Only User"}, {"No-Access User", 7, "No-Access User"},
		} {
			id := create(t, env, key, fmt.Sprintf(`{"name":"r%d","parentRoleName":%q}`, i, c.name))
			if got := get(t, env, key, id); got.ParentRoleID != c.id || got.ParentRoleName != c.public {
				t.Fatalf("parent %q: %+v, want %d %q", c.name, got, c.id, c.public)
			}
		}
	})
}

// Custom roles take every public permission name, in any case, and a retired name as the public
// names it stands for; they answer the public spelling. Unknown names are a 400.
func TestRolePermissionNames(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		all := auth.PermissionNames()
		body := apitest.JSONOf(t, map[string]any{"name": "all", "parentRoleId": 1, "permissions": all})
		id := create(t, env, key, body)
		if got := get(t, env, key, id); !slices.Equal(got.Permissions, all) {
			t.Fatalf("every public name: got %d names, want %d", len(got.Permissions), len(all))
		}
		id = create(t, env, key, `{"name":"mixed","parentRoleId":2,"permissions":["ALERTS-MAP:READ","team-DASHBOARDS:update","policies:Manage","Incidents:read"]}`)
		want := []string{"alerts-map:Read", "incidents:Read", "logs.tco:UpdatePolicies", "metrics.tco:UpdatePolicies", "spans.tco:UpdatePolicies", "team-dashboards:Update"}
		if got := get(t, env, key, id); !slices.Equal(got.Permissions, want) {
			t.Fatalf("mixed: %v, want %v", got.Permissions, want)
		}
		res := env.JSON(t, http.MethodPost, rolePath(id), key, `{"newPermissions":{"permissions":["views:manage","SLO:READCONFIG"]}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if got := get(t, env, key, id); !slices.Equal(got.Permissions, []string{"slo:ReadConfig", "team-saved-views:Update"}) {
			t.Fatalf("updated: %v", got.Permissions)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, createPath, key, `{"name":"x","parentRoleId":1,"permissions":["alerts-map:Read","alerts-map:Write"]}`),
			400, "permissions[1]", "alerts-map:Write")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rolePath(id), key, `{"newPermissions":{"permissions":["recording-rules:Fly"]}}`),
			400, "newPermissions.permissions[0]", "recording-rules:Fly")
	})
}

func TestCreateGetUpdateDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		res := env.JSON(t, http.MethodPut, createPath, key,
			`{"name":"oncall","description":"d","parentRoleId":2,"permissions":["case:Read","case:Comment","case:Read"],"teamId":`+strconv.FormatInt(team, 10)+`}`)
		if res.Status != http.StatusOK {
			t.Fatalf("create status %d (want 200, never 201): %s", res.Status, res.Body)
		}
		id := apitest.Decode[struct{ ID int64 }](t, res).ID
		want := customRole{id, team, "oncall", "d", 2, "Standard User", []string{"case:Comment", "case:Read"}}
		if got := get(t, env, key, id); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("get %+v, want %+v", got, want)
		}
		// By parent name, without permissions or description.
		id2 := create(t, env, key, `{"name":"ro","parentRoleName":"Read-Only User"}`)
		if id2 <= id {
			t.Fatalf("ids %d then %d", id, id2)
		}
		if got := get(t, env, key, id2); got.ParentRoleID != 3 || got.ParentRoleName != "Read-Only User" || got.Permissions == nil || len(got.Permissions) != 0 || got.Description != "" {
			t.Fatalf("by name %+v", got)
		}
		env.Restart(t)
		if got := list(t, env, key, ""); len(got) != 2 || got[0].RoleID != id || got[1].RoleID != id2 {
			t.Fatalf("list %+v", got)
		}
		if got := list(t, env, key, "?team_id="+strconv.FormatInt(team, 10)); len(got) != 2 {
			t.Fatalf("list by team %+v", got)
		}
		// Update: only what is given changes.
		upd := env.JSON(t, http.MethodPost, rolePath(id), key, `{"newName":"pager","newPermissions":{"permissions":["incidents:Read"]}}`)
		if upd.Status != http.StatusOK || string(upd.Body) != "{}" {
			t.Fatalf("update %d %s", upd.Status, upd.Body)
		}
		want.Name, want.Permissions = "pager", []string{"incidents:Read"}
		if got := get(t, env, key, id); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after update %+v, want %+v", got, want)
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, rolePath(id), key, `{"newDescription":""}`))
		if got := get(t, env, key, id); got.Description != "" || got.Name != "pager" {
			t.Fatalf("after description %+v", got)
		}
		// Renaming to its own name is no conflict; to another role's is.
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, rolePath(id), key, `{"newName":"pager"}`))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rolePath(id), key, `{"newName":"ro"}`), 409, "newName", "ro")
		// Delete: 204 with no body, then 404.
		del := env.JSON(t, http.MethodDelete, rolePath(id), key, "")
		if del.Status != http.StatusNoContent || len(del.Body) != 0 {
			t.Fatalf("delete %d %q", del.Status, del.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, rolePath(id), key, ""), 404, "role_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rolePath(id), key, ""), 404, "role_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rolePath(id), key, `{}`), 404, "role_id")
		// The name is free again; ids are never reused.
		if id3 := create(t, env, key, `{"name":"pager","parentRoleName":"admin"}`); id3 <= id2 {
			t.Fatalf("id after delete %d", id3)
		}
	})
}

func TestCreateRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		other, _ := env.MustTeam(t, "other")
		long := func(n int) string { return strings.Repeat("é", n) }
		cases := []struct {
			body      string
			status    int
			fragments []string
		}{
			{`{"parentRoleId":1}`, 400, []string{"name"}},
			{`{"name":"","parentRoleId":1}`, 400, []string{"name"}},
			{`{"name":"` + long(101) + `","parentRoleId":1}`, 400, []string{"name", "100"}},
			{`{"name":"  ","parentRoleId":1}`, 400, []string{"name", "non-whitespace"}},
			{`{"name":"x","description":"` + long(1001) + `","parentRoleId":1}`, 400, []string{"description", "1000"}},
			{`{"name":"x","parentRoleId":1,"parentRoleName":"admin"}`, 400, []string{"parentRoleId", "parentRoleName", "not both"}},
			{`{"name":"x","parentRoleId":8}`, 400, []string{"parentRoleId", "system role"}},
			{`{"name":"x","parentRoleId":0}`, 400, []string{"parentRoleId", "system role"}},
			{`{"name":"x","parentRoleName":"owner"}`, 400, []string{"parentRoleName", "owner", "Platform Admin, Standard User"}},
			{`{"name":"x","parentRoleId":1,"permissions":["case:Read","case:Fly"]}`, 400, []string{"permissions[1]", "case:Fly"}},
			{`{"name":"x","parentRoleId":1,"teamId":` + strconv.FormatInt(other, 10) + `}`, 404, []string{"teamId"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, createPath, key, c.body), c.status, c.fragments...)
		}
		if got := list(t, env, key, ""); len(got) != 0 {
			t.Fatalf("refused creates stored %+v", got)
		}
		// Bounds at both edges are accepted.
		a := create(t, env, key, `{"name":"a","description":"","parentRoleId":1}`)
		b := create(t, env, key, `{"name":"`+long(100)+`","description":"`+long(1000)+`","parentRoleId":1}`)
		if got := get(t, env, key, b); got.Name != long(100) || got.Description != long(1000) {
			t.Fatalf("long role %+v", got)
		}
		// The update checks the same bounds.
		for _, c := range []struct{ body, field string }{
			{`{"newName":""}`, "newName"},
			{`{"newName":"` + long(101) + `"}`, "newName"},
			{`{"newName":" "}`, "newName"},
			{`{"newDescription":"` + long(1001) + `"}`, "newDescription"},
			{`{"newPermissions":{"permissions":["nope"]}}`, "newPermissions.permissions[0]"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, rolePath(a), key, c.body), 400, c.field)
		}
		for _, p := range []string{"0", "-1", "x"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, rolesPath+"/"+p, key, ""), 400, "role_id: must be")
		}
		// Duplicate name: 409.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, createPath, key, `{"name":"a","parentRoleId":2}`), 409, "name", `"a"`)
	})
}

func TestDuplicateNameUnderConcurrency(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				statuses[i] = env.JSON(t, http.MethodPut, createPath, key, `{"name":"same","parentRoleId":1}`).Status
			})
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			switch s {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
			default:
				t.Fatalf("status %d in %v", s, statuses)
			}
		}
		if ok != 1 {
			t.Fatalf("%d creates succeeded: %v", ok, statuses)
		}
		// Distinct names created concurrently get distinct ids.
		answers := make([]apitest.Response, n)
		for i := range n {
			wg.Go(func() {
				answers[i] = env.JSON(t, http.MethodPut, createPath, key, fmt.Sprintf(`{"name":"r%d","parentRoleId":1}`, i))
			})
		}
		wg.Wait()
		ids := make([]int64, n)
		for i, a := range answers {
			ids[i] = apitest.Decode[struct{ ID int64 }](t, a).ID
		}
		slices.Sort(ids)
		if len(slices.Compact(ids)) != n {
			t.Fatalf("ids %v", ids)
		}
		if got := list(t, env, key, ""); len(got) != n+1 {
			t.Fatalf("list %d", len(got))
		}
	})
}

func TestRoleIsolationAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		id := create(t, env, key, `{"name":"mine","parentRoleId":1}`)
		// Another team sees nothing of it and may use the same name.
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			apitest.ExpectError(t, env.JSON(t, m, rolePath(id), otherKey, ""), 404, "role_id")
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rolePath(id), otherKey, `{"newName":"x"}`), 404, "role_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rolesPath+"?team_id="+strconv.FormatInt(team, 10), otherKey, ""), 404, "team_id")
		if got := list(t, env, otherKey, ""); len(got) != 0 {
			t.Fatalf("other team lists %+v", got)
		}
		create(t, env, otherKey, `{"name":"mine","parentRoleId":1}`)
		if got := get(t, env, key, id); got.Name != "mine" || got.TeamID != team {
			t.Fatalf("own role %+v", got)
		}

		reader := env.MustKey(t, key, "team-roles:ReadConfig")
		writer := env.MustKey(t, key, "team-roles:Manage")
		for _, c := range []struct {
			method, path, body string
		}{
			{http.MethodPut, createPath, `{"name":"w","parentRoleId":1}`},
			{http.MethodPost, rolePath(id), `{}`},
			{http.MethodDelete, rolePath(id), ""},
		} {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, reader, c.body), 403)
		}
		for _, p := range []string{rolesPath, rolePath(id), systemPath} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p, writer, ""), 403)
			list := env.JSON(t, http.MethodGet, p, reader, "")
			if list.Status != http.StatusOK {
				t.Fatalf("reader GET %s: %d %s", p, list.Status, list.Body)
			}
		}
		create(t, env, writer, `{"name":"w","parentRoleId":1}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, systemPath, "nope", ""), 401)
	})
}

// The newest public documents let a custom role derive from no system role: it is created, and
// answered without either parent field.
func TestCreateWithoutParent(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		id := create(t, env, key, `{"name":"own","permissions":["case:Read"]}`)
		res := env.JSON(t, http.MethodGet, rolePath(id), key, "")
		if res.Status != http.StatusOK || strings.Contains(string(res.Body), "parentRole") {
			t.Fatalf("get: %d %s, want no parent fields", res.Status, res.Body)
		}
		if got := get(t, env, key, id); got.Name != "own" || fmt.Sprint(got.Permissions) != "[case:Read]" {
			t.Fatalf("get %+v", got)
		}
		if got := list(t, env, key, ""); len(got) != 1 || got[0].RoleID != id || got[0].ParentRoleID != 0 {
			t.Fatalf("list %+v", got)
		}
	})
}
