package dashboards_test

import (
	"net/http"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// latestBase is the dashboards' base under the newest public documents' prefix, which clients in
// the field are generated from.
const latestBase = "/mgmt/openapi/latest/dashboards/dashboards/v1"

// TestDashboardPlacedByFolderPath: a dashboard placed by folderPath alone, naming an existing
// folder (a top-level one, or one inside another), answers that folder's folderId as well as the
// path, and the catalog shows it in the folder; a path that names no folder, or two, is stored and
// answered as sent. It answered only the path before (issue 38).
func TestDashboardPlacedByFolderPath(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ops := newFolder(t, env, key, `{"name":"rc-folder"}`)
		web := newFolder(t, env, key, `{"name":"web","parentId":"`+ops+`"}`)
		newFolder(t, env, key, `{"name":"twice"}`)
		newFolder(t, env, key, `{"name":"twice"}`)
		layout := `"layout":{"sections":[{"id":{"value":"` + uuid + `"},"rows":[]}]}`

		for _, c := range []struct{ path, folder string }{
			{`["rc-folder"]`, ops},
			{`["rc-folder","web"]`, web},
			{`["no such folder"]`, ""},
			{`["rc-folder","nothing"]`, ""},
			{`["twice"]`, ""}, // two folders of that name: which one is not known
		} {
			res := env.JSON(t, http.MethodPost, latestBase, key,
				write(`{"name":"placed","folderPath":{"segments":`+c.path+`},`+layout+`}`))
			id := apitest.Decode[struct{ DashboardID string }](t, res).DashboardID
			got := apitest.Decode[read](t, env.JSON(t, http.MethodGet, latestBase+"/"+id, key, "")).Dashboard
			if apitest.JSONOf(t, got["folderPath"]) != `{"segments":`+c.path+`}` {
				t.Fatalf("%s: folderPath answered %v", c.path, got["folderPath"])
			}
			item := catalog(t, env, key)[id]
			if c.folder == "" {
				if got["folderId"] != nil || item.Folder != nil {
					t.Fatalf("%s names no one folder, yet the dashboard is in %v (catalog %+v)", c.path, got["folderId"], item.Folder)
				}
				continue
			}
			if apitest.JSONOf(t, got["folderId"]) != `{"value":"`+c.folder+`"}` {
				t.Fatalf("%s: folderId answered %v, want %s", c.path, got["folderId"], c.folder)
			}
			if item.Folder == nil || item.Folder.ID != c.folder {
				t.Fatalf("%s: catalog folder %+v, want %s", c.path, item.Folder, c.folder)
			}

			// The replace places it the same way.
			emptyOK(t, env.JSON(t, http.MethodPut, latestBase, key,
				write(`{"id":"`+id+`","name":"placed again","folderPath":{"segments":`+c.path+`},`+layout+`}`)))
			again := apitest.Decode[read](t, env.JSON(t, http.MethodGet, latestBase+"/"+id, key, "")).Dashboard
			if again["name"] != "placed again" || apitest.JSONOf(t, again["folderId"]) != `{"value":"`+c.folder+`"}` {
				t.Fatalf("%s: replaced dashboard %v", c.path, again)
			}
		}

		// A folderId sent with a path wins: the path is not looked at.
		res := env.JSON(t, http.MethodPost, latestBase, key,
			write(`{"name":"by id","folderId":{"value":"`+web+`"},"folderPath":{"segments":["rc-folder"]},`+layout+`}`))
		id := apitest.Decode[struct{ DashboardID string }](t, res).DashboardID
		if item := catalog(t, env, key)[id]; item.Folder == nil || item.Folder.ID != web {
			t.Fatalf("folderId with a path: catalog folder %+v, want %s", item.Folder, web)
		}
	})
}

// TestDashboardRowWithoutID: a layout row without an id is a 400 naming it, as a section without
// one is, through /mgmt/openapi/latest, and nothing is stored (issue 38).
func TestDashboardRowWithoutID(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		section := `{"id":{"value":"` + uuid + `"},"rows":`
		row := `{"id":{"value":"00000000-0000-4000-8000-0000000000e1"},"widgets":[]}`
		for _, c := range []struct{ rows, want string }{
			{`[{"widgets":[]}]`, "dashboard.layout.sections[0].rows[0].id: required"},
			{`[` + row + `,{"id":null,"widgets":[]}]`, "dashboard.layout.sections[0].rows[1].id: required"},
		} {
			doc := `{"name":"n","layout":{"sections":[` + section + c.rows + `}]}}`
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestBase, key, write(doc)), 400, c.want)
		}
		if items := catalog(t, env, key); len(items) != 0 {
			t.Fatalf("refused dashboards were stored: %v", items)
		}
		create(t, env, key, `{"name":"n","layout":{"sections":[`+section+`[`+row+`]}]}}`)
	})
}
