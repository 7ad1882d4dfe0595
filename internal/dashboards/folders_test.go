package dashboards_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/dashboards"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

const foldersPath = "/mgmt/openapi/5/dashboards/folders/v1"

type folderBody struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	ParentID *string `json:"parentId"`
}

// mustFolder creates the team's folder id (any case) named name at the top level.
func mustFolder(t *testing.T, env *apitest.Env, key, id, name string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, foldersPath, key, `{"requestId":"f","folder":{"id":"`+id+`","name":"`+name+`"}}`)
	if got := apitest.Decode[struct{ FolderID string }](t, res).FolderID; got != strings.ToLower(id) {
		t.Fatalf("created folder %q, want %q", got, strings.ToLower(id))
	}
}

func newFolder(t *testing.T, env *apitest.Env, key, folder string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, foldersPath, key, `{"requestId":"f","folder":`+folder+`}`)
	id := apitest.Decode[struct{ FolderID string }](t, res).FolderID
	if len(id) != 36 || id != strings.ToLower(id) {
		t.Fatalf("folder id %q is not a lowercase UUID", id)
	}
	return id
}

func getFolder(t *testing.T, env *apitest.Env, key, id string) folderBody {
	t.Helper()
	return apitest.Decode[struct{ Folder folderBody }](t, env.JSON(t, http.MethodGet, foldersPath+"/"+id, key, "")).Folder
}

func listFolders(t *testing.T, env *apitest.Env, key string) []folderBody {
	t.Helper()
	res := env.JSON(t, http.MethodGet, foldersPath, key, "")
	out := apitest.Decode[struct{ Folder []folderBody }](t, res)
	if out.Folder == nil {
		t.Fatalf("list has no folder array: %s", res.Body)
	}
	return out.Folder
}

func TestDashboardFolderLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ops := newFolder(t, env, key, `{"name":"Ops"}`)
		web := newFolder(t, env, key, `{"name":"Web","parentId":"`+strings.ToUpper(ops)+`"}`)
		// A given id is kept (in lowercase) and answered in either case.
		mustFolder(t, env, key, uuid, "Apps")
		apps := strings.ToLower(uuid)
		env.Restart(t)
		if got, want := getFolder(t, env, key, web), (folderBody{ID: web, Name: "Web", ParentID: &ops}); !reflect.DeepEqual(got, want) {
			t.Fatalf("get %+v, want %+v", got, want)
		}
		if got := getFolder(t, env, key, uuid+"?request_id=g"); got.ID != apps || got.ParentID != nil {
			t.Fatalf("get by an uppercase id: %+v", got)
		}
		want := []folderBody{{ID: apps, Name: "Apps"}, {ID: ops, Name: "Ops"}, {ID: web, Name: "Web", ParentID: &ops}}
		if got := listFolders(t, env, key); !reflect.DeepEqual(got, want) {
			t.Fatalf("list %+v, want %+v", got, want)
		}
		// A folder with the id of another is refused.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, foldersPath, key, `{"folder":{"id":"`+ops+`","name":"x"}}`), 409, "folder.id", ops)

		// The replace renames and moves; without parentId the folder goes to the top level.
		emptyOK(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"requestId":"r","folder":{"id":"`+web+`","name":"Web shop","parentId":"`+apps+`"}}`))
		if got := getFolder(t, env, key, web); got.Name != "Web shop" || got.ParentID == nil || *got.ParentID != apps {
			t.Fatalf("after the replace: %+v", got)
		}
		emptyOK(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"folder":{"id":"`+web+`","name":"Web shop"}}`))
		if got := getFolder(t, env, key, web); got.ParentID != nil {
			t.Fatalf("a replace without parentId kept the parent: %+v", got)
		}

		// Delete, then a repeat with the same request_id answers {} again, any other repeat 404.
		emptyOK(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+web+"?request_id=d1", key, ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, foldersPath+"/"+web, key, ""), 404, "folder_id")
		emptyOK(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+web+"?request_id=d1", key, ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+web+"?request_id=d2", key, ""), 404, "folder_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+web, key, ""), 404, "folder_id")
		if got := listFolders(t, env, key); len(got) != 2 {
			t.Fatalf("after the delete: %+v", got)
		}
	})
}

func TestDashboardFolderBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := newFolder(t, env, key, `{"name":"a"}`)
		b := newFolder(t, env, key, `{"name":"b","parentId":"`+a+`"}`)
		c := newFolder(t, env, key, `{"name":"c","parentId":"`+b+`"}`)
		newFolder(t, env, key, `{"name":"`+strings.Repeat("é", 100)+`"}`) // characters are code points
		const missing = "7d1f0c2e-5b4a-4c3d-9e8f-0a1b2c3d4e5f"
		for _, tc := range []struct {
			method, body string
			status       int
			frags        []string
		}{
			{http.MethodPost, `{"requestId":"r"}`, 400, []string{"folder"}},
			{http.MethodPost, `{"folder":{}}`, 400, []string{"folder.name", "required"}},
			{http.MethodPost, `{"folder":{"name":""}}`, 400, []string{"name"}},
			{http.MethodPost, `{"folder":{"name":"` + strings.Repeat("é", 101) + `"}}`, 400, []string{"name"}},
			{http.MethodPost, `{"folder":{"name":"x","id":"` + a[:35] + `"}}`, 400, []string{"id"}},
			{http.MethodPost, `{"folder":{"name":"x","id":"` + strings.Repeat("g", 8) + a[8:] + `"}}`, 400, []string{"id"}},
			{http.MethodPost, `{"folder":{"name":"x","parentId":"` + a + `0"}}`, 400, []string{"parentId"}},
			{http.MethodPost, `{"folder":{"name":"x","parentId":"` + missing + `"}}`, 400, []string{"folder.parentId", missing}},
			{http.MethodPost, `{"folder":{"id":"` + missing + `","name":"x","parentId":"` + strings.ToUpper(missing) + `"}}`, 400, []string{"folder.parentId", "differ"}},
			{http.MethodPost, `{"requestId":"","folder":{"name":"x"}}`, 400, []string{"requestId"}},
			{http.MethodPost, `{"requestId":"` + strings.Repeat("r", 129) + `","folder":{"name":"x"}}`, 400, []string{"requestId"}},
			{http.MethodPut, `{"folder":{"name":"x"}}`, 400, []string{"folder.id", "required"}},
			{http.MethodPut, `{"folder":{"id":"` + a + `"}}`, 400, []string{"folder.name", "required"}},
			{http.MethodPut, `{"folder":{"id":"` + missing + `","name":"x"}}`, 404, []string{"folder.id", missing}},
			{http.MethodPut, `{"folder":{"id":"` + a + `","name":"a","parentId":"` + a + `"}}`, 400, []string{"folder.parentId", "differ"}},
			// No cycles: a folder cannot move into a folder inside it.
			{http.MethodPut, `{"folder":{"id":"` + a + `","name":"a","parentId":"` + c + `"}}`, 400, []string{"folder.parentId", "inside"}},
			{http.MethodPut, `{"folder":{"id":"` + b + `","name":"b","parentId":"` + c + `"}}`, 400, []string{"folder.parentId", "inside"}},
			{http.MethodPut, `{"folder":{"id":"` + a + `","name":"a","parentId":"` + missing + `"}}`, 400, []string{"folder.parentId", missing}},
		} {
			apitest.ExpectError(t, env.JSON(t, tc.method, foldersPath, key, tc.body), tc.status, tc.frags...)
		}
		for _, path := range []string{foldersPath + "/" + a[:35], foldersPath + "/" + a + "0", foldersPath + "/" + a + "?request_id=",
			foldersPath + "/" + a + "?request_id=" + strings.Repeat("r", 129)} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, path, key, ""), 400)
			apitest.ExpectError(t, env.JSON(t, http.MethodDelete, path, key, ""), 400)
		}
		// Refusals changed nothing: the tree is as created.
		if got := getFolder(t, env, key, a); got.ParentID != nil || got.Name != "a" {
			t.Fatalf("a: %+v", got)
		}
		if got := getFolder(t, env, key, b); got.ParentID == nil || *got.ParentID != a {
			t.Fatalf("b: %+v", got)
		}
		if got := listFolders(t, env, key); len(got) != 4 {
			t.Fatalf("list: %+v", got)
		}
		// Moving a folder up and sideways is fine: c to the top, then a under c.
		emptyOK(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"folder":{"id":"`+c+`","name":"c"}}`))
		emptyOK(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"folder":{"id":"`+a+`","name":"a","parentId":"`+c+`"}}`))
	})
}

func TestDashboardFolderTeamIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		mine := newFolder(t, env, key, `{"name":"mine"}`)
		dash := create(t, env, key, `{"name":"d","layout":{}}`)
		theirs := create(t, env, otherKey, `{"name":"d","layout":{}}`)
		// Another team's folder answers as a missing one does.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, foldersPath+"/"+mine, otherKey, ""), 404, "folder_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+mine, otherKey, ""), 404, "folder_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, foldersPath, otherKey, `{"folder":{"id":"`+mine+`","name":"x"}}`), 404, "folder.id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, foldersPath, otherKey, `{"folder":{"name":"x","parentId":"`+mine+`"}}`), 400, "folder.parentId")
		apitest.ExpectError(t, moveTo(t, env, otherKey, theirs, `{"requestId":"m","folderId":"`+mine+`"}`), 400, "folderId", mine)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, basePath, otherKey,
			write(`{"name":"e","layout":{},"folderId":{"value":"`+mine+`"}}`)), 400, "dashboard.folderId.value", mine)
		if got := listFolders(t, env, otherKey); len(got) != 0 {
			t.Fatalf("the other team lists %+v", got)
		}
		// Each team has its own ids: the other team may use the same one.
		mustFolder(t, env, otherKey, mine, "theirs")
		emptyOK(t, moveTo(t, env, otherKey, theirs, `{"requestId":"m","folderId":"`+mine+`"}`))
		emptyOK(t, moveTo(t, env, key, dash, `{"requestId":"m","folderId":"`+mine+`"}`))
		if c := catalog(t, env, otherKey)[theirs]; c.Folder == nil || c.Folder.Name != "theirs" {
			t.Fatalf("the other team's catalog: %+v", c)
		}
		if c := catalog(t, env, key)[dash]; c.Folder == nil || c.Folder.Name != "mine" {
			t.Fatalf("the catalog: %+v", c)
		}
		// Its folder holds its dashboard only: emptying it lets the other team delete it.
		emptyOK(t, moveTo(t, env, otherKey, theirs, `{"requestId":"m"}`))
		emptyOK(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+mine, otherKey, ""))
		if got := getFolder(t, env, key, mine); got.Name != "mine" {
			t.Fatalf("the team's folder after the other team deleted theirs: %+v", got)
		}
	})
}

func TestDashboardFolderMustExist(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		const missing = "7d1f0c2e-5b4a-4c3d-9e8f-0a1b2c3d4e5f"
		id := create(t, env, key, `{"name":"d","layout":{}}`)
		apitest.ExpectError(t, moveTo(t, env, key, id, `{"requestId":"m","folderId":"`+missing+`"}`), 400, "folderId", missing)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, basePath, key,
			write(`{"name":"e","layout":{},"folderId":{"value":"`+missing+`"}}`)), 400, "dashboard.folderId.value", missing)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, basePath, key,
			write(`{"id":"`+id+`","name":"d","layout":{},"folderId":{"value":"`+missing+`"}}`)), 400, "dashboard.folderId.value", missing)
		// The dashboard an unknown dashboard id names is a 404 before its folder is looked at.
		apitest.ExpectError(t, moveTo(t, env, key, strings.Repeat("A", 21), `{"requestId":"m","folderId":"`+missing+`"}`), 404, "dashboard_id")
		if g := get(t, env, key, id); g.Dashboard["folderId"] != nil {
			t.Fatalf("a refused write moved the dashboard: %+v", g.Dashboard)
		}
		if n := len(catalog(t, env, key)); n != 1 {
			t.Fatalf("a refused create stored a dashboard: %d in the catalog", n)
		}
		// Once the folder exists, each of them works, in either case of its id.
		mustFolder(t, env, key, missing, "now here")
		emptyOK(t, moveTo(t, env, key, id, `{"requestId":"m","folderId":"`+strings.ToUpper(missing)+`"}`))
		create(t, env, key, `{"name":"e","layout":{},"folderId":{"value":"`+missing+`"}}`)
		emptyOK(t, env.JSON(t, http.MethodPut, basePath, key, write(`{"id":"`+id+`","name":"d","layout":{},"folderId":{"value":"`+missing+`"}}`)))
	})
}

func TestDashboardFolderDeleteHoldingThings(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		parent := newFolder(t, env, key, `{"name":"parent"}`)
		child := newFolder(t, env, key, `{"name":"child","parentId":"`+parent+`"}`)
		d1 := create(t, env, key, `{"name":"d1","layout":{},"folderId":{"value":"`+strings.ToUpper(child)+`"}}`)
		d2 := create(t, env, key, `{"name":"d2","layout":{}}`)
		emptyOK(t, moveTo(t, env, key, d2, `{"requestId":"m","folderId":"`+child+`"}`))

		// The catalog names each dashboard's folder with its name and parent.
		c := catalog(t, env, key)
		if f := c[d1].Folder; f == nil || !strings.EqualFold(f.ID, child) || f.Name != "child" || f.ParentID == nil || *f.ParentID != parent {
			t.Fatalf("catalog folder of d1: %+v", f)
		}
		emptyOK(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"folder":{"id":"`+child+`","name":"renamed"}}`))
		if f := catalog(t, env, key)[d2].Folder; f == nil || f.ID != child || f.Name != "renamed" || f.ParentID != nil {
			t.Fatalf("catalog folder of d2 after the rename: %+v", f)
		}
		emptyOK(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"folder":{"id":"`+child+`","name":"child","parentId":"`+parent+`"}}`))

		// A folder holding dashboards or folders is not deleted, and nothing changes.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+parent, key, ""), 409, "0 dashboards and 1 folders")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+child+"?request_id=d", key, ""), 409, "2 dashboards and 0 folders")
		if got := listFolders(t, env, key); len(got) != 2 {
			t.Fatalf("a refused delete deleted: %+v", got)
		}
		if f := catalog(t, env, key)[d1].Folder; f == nil || f.Name != "child" {
			t.Fatalf("a refused delete moved a dashboard: %+v", f)
		}
		// Emptied, they go: the dashboards moved out or deleted, then the child, then the parent.
		emptyOK(t, moveTo(t, env, key, d1, `{"requestId":"m"}`))
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+child, key, ""), 409, "1 dashboards")
		emptyOK(t, env.JSON(t, http.MethodDelete, basePath+"/"+d2, key, ""))
		emptyOK(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+child+"?request_id=d", key, ""))
		emptyOK(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+parent, key, ""))
		if got := listFolders(t, env, key); len(got) != 0 {
			t.Fatalf("folders left: %+v", got)
		}
		if c := catalog(t, env, key); len(c) != 1 || c[d1].Folder != nil {
			t.Fatalf("catalog: %+v", c)
		}
	})
}

// A dashboard entering a folder and the folder's delete, run together, never leave a dashboard in
// a folder that does not exist: either the move wins (and the delete is refused) or the delete does
// (and the move is refused).
func TestDashboardFolderDeleteRacesAMove(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for round := range 8 {
			f := newFolder(t, env, key, `{"name":"f"}`)
			id := create(t, env, key, `{"name":"d","layout":{}}`)
			var move, del apitest.Response
			var wg sync.WaitGroup
			wg.Go(func() { move = moveTo(t, env, key, id, `{"requestId":"m","folderId":"`+f+`"}`) })
			wg.Go(func() { del = env.JSON(t, http.MethodDelete, foldersPath+"/"+f, key, "") })
			wg.Wait()
			switch {
			case move.Status == 200 && del.Status == 409:
				if c := catalog(t, env, key)[id]; c.Folder == nil || c.Folder.Name != "f" {
					t.Fatalf("round %d: the move won but the catalog says %+v", round, c.Folder)
				}
			case move.Status == 400 && del.Status == 200:
				if c := catalog(t, env, key)[id]; c.Folder != nil {
					t.Fatalf("round %d: the delete won but the dashboard is in %+v", round, c.Folder)
				}
			default:
				t.Fatalf("round %d: move %d %s, delete %d %s", round, move.Status, move.Body, del.Status, del.Body)
			}
			emptyOK(t, env.JSON(t, http.MethodDelete, basePath+"/"+id, key, ""))
		}
	})
}

func TestDashboardFolderPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		f := newFolder(t, env, key, `{"name":"f"}`)
		reader := env.MustKey(t, key, "team-dashboards:Read")
		writer := env.MustKey(t, key, "team-dashboards:Update")
		none := env.MustKey(t, key, "views:ReadConfig")
		reads := []struct{ method, path, body string }{
			{http.MethodGet, foldersPath, ""},
			{http.MethodGet, foldersPath + "/" + f, ""},
		}
		writes := []struct{ method, path, body string }{
			{http.MethodPost, foldersPath, `{"folder":{"name":"g"}}`},
			{http.MethodPut, foldersPath, `{"folder":{"id":"` + f + `","name":"h"}}`},
			{http.MethodDelete, foldersPath + "/" + f, ""},
		}
		for _, op := range append(reads, writes...) {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, none, op.body), 403)
		}
		for _, op := range writes {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, reader, op.body), 403)
		}
		for _, op := range reads {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, writer, op.body), 403)
			if res := env.JSON(t, op.method, op.path, reader, op.body); res.Status != 200 {
				t.Fatalf("%s %s with read: %d %s", op.method, op.path, res.Status, res.Body)
			}
		}
		if got := getFolder(t, env, key, f); got.Name != "f" {
			t.Fatalf("a refused write changed the folder: %+v", got)
		}
		for _, op := range writes {
			if res := env.JSON(t, op.method, op.path, writer, op.body); res.Status != 200 {
				t.Fatalf("%s %s with update: %d %s", op.method, op.path, res.Status, res.Body)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, foldersPath, "", ""), 401)
	})
}

func TestDashboardFolderLimit(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		// The team holds one folder less than the most it may (written directly: 9999 creates
		// through the API would make a slow test).
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			for i := range dashboards.MaxFolders - 1 {
				if _, err := tx.ExecContext(context.Background(),
					`INSERT INTO dashboard_folders (team_id, id, name, created_at, updated_at) VALUES ($1, $2, 'f', 0, 0)`,
					team, fmt.Sprintf("00000000-0000-4000-8000-%012d", i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last := newFolder(t, env, key, `{"name":"last"}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, foldersPath, key, `{"folder":{"name":"one more"}}`), 429, "10000")
		newFolder(t, env, otherKey, `{"name":"another team's"}`) // the bound is per team
		if n := len(listFolders(t, env, key)); n != dashboards.MaxFolders {
			t.Fatalf("the list has %d folders, want %d", n, dashboards.MaxFolders)
		}
		emptyOK(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+last, key, ""))
		newFolder(t, env, key, `{"name":"instead"}`)
	})
}

// The configuration document's dashboardFolders: an apply stores a child listed before its
// parent, refuses a cycle (changing nothing), and does not prune a folder that keeps a dashboard.
func TestDashboardFolderConfiguration(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const applyPath = "/config/v1/apply"
		const exportPath = "/config/v1/export"
		_, key := env.MustTeam(t, "acme")
		const parent, child = "00000000-0000-4000-8000-00000000000f", "00000000-0000-4000-8000-000000000001"
		apply := func(query, doc string) apitest.Response {
			return env.Do(t, http.MethodPost, applyPath+query, "Bearer "+key, "application/yaml", doc)
		}
		res := apply("", "dashboardFolders:\n- {id: "+child+", name: child, parentId: "+parent+"}\n- {id: "+parent+", name: parent}\n")
		if res.Status != 200 {
			t.Fatalf("apply: %d %s", res.Status, res.Body)
		}
		if got := getFolder(t, env, key, child); got.ParentID == nil || *got.ParentID != parent {
			t.Fatalf("child: %+v", got)
		}
		// The export gives them back, and applying it again changes nothing.
		export := env.Do(t, http.MethodGet, exportPath, "Bearer "+key, "", "")
		if export.Status != 200 || !strings.Contains(string(export.Body), "parentId: "+parent) {
			t.Fatalf("export: %d %s", export.Status, export.Body)
		}
		res = apply("", string(export.Body))
		if res.Status != 200 || strings.Contains(string(res.Body), `"action":"create"`) || strings.Contains(string(res.Body), `"action":"update"`) {
			t.Fatalf("re-apply of the export: %d %s", res.Status, res.Body)
		}
		// A cycle is refused and nothing changes.
		apitest.ExpectError(t, apply("", "dashboardFolders:\n- {id: "+child+", name: child, parentId: "+parent+"}\n- {id: "+parent+", name: parent, parentId: "+child+"}\n"),
			400, "inside")
		if got := getFolder(t, env, key, parent); got.ParentID != nil {
			t.Fatalf("a refused apply moved the parent: %+v", got)
		}
		// A pruned folder that keeps a dashboard is not deleted.
		d := create(t, env, key, `{"name":"d","layout":{},"folderId":{"value":"`+child+`"}}`)
		apitest.ExpectError(t, apply("?prune=true", "dashboardFolders: []\n"), 409, "1 dashboards")
		if n := len(listFolders(t, env, key)); n != 2 {
			t.Fatalf("a refused prune deleted folders: %d left", n)
		}
		// Moving the dashboard out in the same document lets the prune go through.
		res = apply("?prune=true", "dashboardFolders: []\ndashboards:\n- {dashboard: {id: "+d+", name: d, layout: {}}}\n")
		if res.Status != 200 {
			t.Fatalf("prune: %d %s", res.Status, res.Body)
		}
		if n := len(listFolders(t, env, key)); n != 0 {
			t.Fatalf("%d folders left after the prune", n)
		}
	})
}

// Migration 0034 makes each folder id that stored dashboards name a top-level folder named by its
// id: run again on a database whose dashboards name folders the table lacks, it adopts them.
func TestDashboardFolderMigrationAdoptsNamedFolders(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		mustFolder(t, env, key, uuid, "ops")
		d := create(t, env, key, `{"name":"d","layout":{},"folderId":{"value":"`+uuid+`"}}`)
		plain := create(t, env, key, `{"name":"plain","layout":{}}`)
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			for _, q := range []string{`DROP INDEX dashboards_by_folder`, `DROP TABLE dashboard_folder_deletions`,
				`DROP TABLE dashboard_folder_writes`, `DROP TABLE dashboard_folders`, `DELETE FROM schema_migrations WHERE version = 34`} {
				if _, err := tx.ExecContext(context.Background(), q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		env.Restart(t)
		id := strings.ToLower(uuid)
		if got := listFolders(t, env, key); !reflect.DeepEqual(got, []folderBody{{ID: id, Name: id}}) {
			t.Fatalf("folders after the migration: %+v", got)
		}
		c := catalog(t, env, key)
		if f := c[d].Folder; f == nil || f.ID != uuid || f.Name != id || c[plain].Folder != nil {
			t.Fatalf("catalog after the migration: %+v", c)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+id, key, ""), 409, "1 dashboards")
	})
}
