package views_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
	"github.com/mgmtapi/mgmtapi/internal/views"
)

const (
	viewsPath   = "/mgmt/openapi/5/data-exploration/views/v1/views"
	foldersPath = "/mgmt/openapi/5/data-exploration/views/v1/folders"
)

type viewDoc struct {
	ID            int64
	Name          string
	FolderID      string `json:"folderId"`
	IsCompactMode *bool
	ViewType      string
	SearchQuery   *struct{ Query, SyntaxType string }
	Filters       *struct {
		Filters []struct {
			Name           string
			SelectedValues map[string]bool
		}
	}
	TimeSelection struct {
		QuickSelection *struct {
			Caption string
			Seconds int64
		}
		CustomSelection *struct{ FromTime, ToTime string }
	}
}

type folder struct{ ID, Name string }

func viewPath(id int64) string { return viewsPath + "/" + strconv.FormatInt(id, 10) }

func createView(t *testing.T, env *apitest.Env, key, body string) viewDoc {
	t.Helper()
	return apitest.Decode[viewDoc](t, env.JSON(t, http.MethodPost, viewsPath, key, body))
}

func createFolder(t *testing.T, env *apitest.Env, key, name string) folder {
	t.Helper()
	return apitest.Decode[folder](t, env.JSON(t, http.MethodPost, foldersPath, key, `{"name":`+strconv.Quote(name)+`}`))
}

func listViews(t *testing.T, env *apitest.Env, key string) []viewDoc {
	t.Helper()
	return apitest.Decode[struct{ Views []viewDoc }](t, env.JSON(t, http.MethodGet, viewsPath, key, "")).Views
}

func listFolders(t *testing.T, env *apitest.Env, key string) []folder {
	t.Helper()
	return apitest.Decode[struct{ Folders []folder }](t, env.JSON(t, http.MethodGet, foldersPath, key, "")).Folders
}

const quick = `"timeSelection":{"quickSelection":{"caption":"Last hour","seconds":3600}}`

func TestViewCRUD(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		f := createFolder(t, env, key, "ops")
		if len(f.ID) != 36 || f.Name != "ops" {
			t.Fatalf("folder %+v", f)
		}
		body := `{"name":"errors","folderId":"` + f.ID + `","isCompactMode":true,"viewType":"VIEW_TYPE_LOGS",
			"searchQuery":{"query":"level:error","syntaxType":"SYNTAX_TYPE_LUCENE"},
			"filters":{"filters":[{"name":"applicationName","selectedValues":{"api":true,"web":false}}]},` + quick + `}`
		v := createView(t, env, key, body)
		if v.ID != 1 || v.Name != "errors" || v.FolderID != f.ID || v.IsCompactMode == nil || !*v.IsCompactMode ||
			v.ViewType != "VIEW_TYPE_LOGS" || v.SearchQuery.Query != "level:error" || v.SearchQuery.SyntaxType != "SYNTAX_TYPE_LUCENE" ||
			len(v.Filters.Filters) != 1 || !v.Filters.Filters[0].SelectedValues["api"] || v.Filters.Filters[0].SelectedValues["web"] ||
			v.TimeSelection.QuickSelection.Seconds != 3600 || v.TimeSelection.QuickSelection.Caption != "Last hour" {
			t.Fatalf("created %+v", v)
		}
		// Only what is given is stored: no folder, no filters, no time window.
		v2 := createView(t, env, key, `{"name":"bare","timeSelection":{}}`)
		if v2.ID != 2 || v2.FolderID != "" || v2.Filters != nil || v2.SearchQuery != nil || v2.IsCompactMode != nil ||
			v2.TimeSelection.QuickSelection != nil || v2.TimeSelection.CustomSelection != nil {
			t.Fatalf("bare %+v", v2)
		}
		env.Restart(t)
		got := apitest.Decode[viewDoc](t, env.JSON(t, http.MethodGet, viewPath(1), key, ""))
		if got.Name != "errors" || got.FolderID != f.ID || got.Filters == nil {
			t.Fatalf("get %+v", got)
		}
		if l := listViews(t, env, key); len(l) != 2 || l[0].ID != 1 || l[1].ID != 2 {
			t.Fatalf("list %+v", l)
		}
		// Replace: the body becomes the view, the id stays; the folder can be dropped.
		r := apitest.Decode[viewDoc](t, env.JSON(t, http.MethodPut, viewPath(1), key,
			`{"name":"renamed","timeSelection":{"customSelection":{"fromTime":"2026-01-01T00:00:00Z","toTime":"2026-01-02T00:00:00.5+02:00"}}}`))
		if r.ID != 1 || r.Name != "renamed" || r.FolderID != "" || r.Filters != nil || r.TimeSelection.CustomSelection.ToTime != "2026-01-02T00:00:00.5+02:00" {
			t.Fatalf("replace %+v", r)
		}
		if g := apitest.Decode[viewDoc](t, env.JSON(t, http.MethodGet, viewPath(1), key, "")); apitest.JSONOf(t, g) != apitest.JSONOf(t, r) {
			t.Fatalf("after replace %+v, want %+v", g, r)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, viewPath(9), key, `{"name":"x","timeSelection":{}}`), 404, "id", "9")
		// Delete: 200 {}, then 404; ids are never reused.
		del := env.JSON(t, http.MethodDelete, viewPath(2), key, "")
		if del.Status != http.StatusOK || string(del.Body) != "{}" {
			t.Fatalf("delete %d %s", del.Status, del.Body)
		}
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			apitest.ExpectError(t, env.JSON(t, m, viewPath(2), key, ""), 404, "id: no view 2")
		}
		if v3 := createView(t, env, key, `{"name":"third","timeSelection":{}}`); v3.ID != 3 {
			t.Fatalf("id after delete %d", v3.ID)
		}
	})
}

func TestFolderCRUD(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		b := createFolder(t, env, key, "b")
		a := createFolder(t, env, key, "a")
		if l := listFolders(t, env, key); len(l) != 2 || l[0] != a || l[1] != b {
			t.Fatalf("list %+v", l)
		}
		r := apitest.Decode[folder](t, env.JSON(t, http.MethodPut, foldersPath, key, `{"id":"`+a.ID+`","name":"z"}`))
		if r.ID != a.ID || r.Name != "z" {
			t.Fatalf("rename %+v", r)
		}
		if g := apitest.Decode[folder](t, env.JSON(t, http.MethodGet, foldersPath+"/"+a.ID, key, "")); g != r {
			t.Fatalf("get %+v", g)
		}
		missing := "00000000-0000-4000-8000-000000000000"
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"id":"`+missing+`","name":"z"}`), 404, "id", missing)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"name":"z"}`), 400, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, foldersPath+"/"+missing, key, ""), 404, "id", missing)
		// A folder holding views is refused; empty, it goes.
		v := createView(t, env, key, `{"name":"v","folderId":"`+b.ID+`","timeSelection":{}}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+b.ID, key, ""), 409, "id", "holds 1 views")
		apitest.Decode[viewDoc](t, env.JSON(t, http.MethodPut, viewPath(v.ID), key, `{"name":"v","folderId":"`+a.ID+`","timeSelection":{}}`))
		del := env.JSON(t, http.MethodDelete, foldersPath+"/"+b.ID, key, "")
		if del.Status != http.StatusOK || string(del.Body) != "{}" {
			t.Fatalf("delete %d %s", del.Status, del.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, foldersPath+"/"+b.ID, key, ""), 404, "id")
		// A view's folderId must name a folder of the team.
		for _, m := range []struct{ method, path string }{{http.MethodPost, viewsPath}, {http.MethodPut, viewPath(v.ID)}} {
			apitest.ExpectError(t, env.JSON(t, m.method, m.path, key, `{"name":"v","folderId":"`+b.ID+`","timeSelection":{}}`), 400, "folderId", b.ID)
		}
		if l := listFolders(t, env, key); len(l) != 1 || l[0].ID != a.ID {
			t.Fatalf("after delete %+v", l)
		}
	})
}

func TestViewBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		long := func(n int) string { return strings.Repeat("é", n) }
		filters := func(n int) string {
			fs := make([]string, n)
			for i := range fs {
				fs[i] = fmt.Sprintf(`{"name":"f%d","selectedValues":{}}`, i)
			}
			return `"filters":{"filters":[` + strings.Join(fs, ",") + `]}`
		}
		custom := func(from, to string) string {
			return `"timeSelection":{"customSelection":{"fromTime":` + strconv.Quote(from) + `,"toTime":` + strconv.Quote(to) + `}}`
		}
		ts := "2026-01-01T00:00:00Z"
		ts35 := "2026-01-01T00:00:00.000000000+00:00" // 35 characters
		if len(ts35) != 35 {
			t.Fatalf("ts35 is %d", len(ts35))
		}
		refused := []struct {
			body  string
			frags []string
		}{
			{`{` + quick + `}`, []string{"name"}},
			{`{"name":"",` + quick + `}`, []string{"name"}},
			{`{"name":"` + long(251) + `",` + quick + `}`, []string{"name", "250"}},
			{`{"name":"x"}`, []string{"timeSelection"}},
			{`{"name":"x","searchQuery":{"query":""},` + quick + `}`, []string{"searchQuery.query"}},
			{`{"name":"x","searchQuery":{"query":"` + long(65536) + `"},` + quick + `}`, []string{"searchQuery.query", "65535"}},
			{`{"name":"x","searchQuery":{"query":"q","syntaxType":"SQL"},` + quick + `}`, []string{"searchQuery.syntaxType"}},
			{`{"name":"x","filters":{"filters":[]},` + quick + `}`, []string{"filters.filters"}},
			{`{"name":"x",` + filters(1001) + `,` + quick + `}`, []string{"filters.filters", "1000"}},
			{`{"name":"x","filters":{"filters":[{"name":"","selectedValues":{}}]},` + quick + `}`, []string{"filters.filters[0].name"}},
			{`{"name":"x","filters":{"filters":[{"name":"` + long(65536) + `","selectedValues":{}}]},` + quick + `}`, []string{"filters.filters[0].name", "65535"}},
			{`{"name":"x","filters":{"filters":[{"name":"a"}]},` + quick + `}`, []string{"selectedValues"}},
			{`{"name":"x","timeSelection":{"quickSelection":{"caption":"","seconds":1}}}`, []string{"timeSelection.quickSelection.caption"}},
			{`{"name":"x","timeSelection":{"quickSelection":{"caption":"` + long(101) + `","seconds":1}}}`, []string{"timeSelection.quickSelection.caption", "100"}},
			{`{"name":"x","timeSelection":{"quickSelection":{"seconds":-1}}}`, []string{"timeSelection.quickSelection.seconds"}},
			{`{"name":"x","timeSelection":{"quickSelection":{"seconds":4294967296}}}`, []string{"timeSelection.quickSelection.seconds"}},
			{`{"name":"x","timeSelection":{"quickSelection":{}}}`, []string{"timeSelection.quickSelection.seconds"}},
			{`{"name":"x",` + custom("", ts) + `}`, []string{"timeSelection.customSelection.fromTime"}},
			{`{"name":"x",` + custom(ts, ts35+"0") + `}`, []string{"timeSelection.customSelection.toTime", "35"}},
			{`{"name":"x",` + custom("yesterday", ts) + `}`, []string{"timeSelection.customSelection.fromTime", "RFC 3339"}},
			{`{"name":"x",` + custom(ts, "2026-13-01T00:00:00Z") + `}`, []string{"timeSelection.customSelection.toTime", "RFC 3339"}},
			{`{"name":"x","timeSelection":{"quickSelection":{"seconds":1},"customSelection":{"fromTime":"` + ts + `","toTime":"` + ts + `"}}}`, []string{"timeSelection", "not both"}},
			{`{"name":"x","folderId":"not-a-uuid",` + quick + `}`, []string{"folderId"}},
			{`{"name":"x","folderId":"0000000A-0000-4000-8000-000000000000",` + quick + `}`, []string{"folderId"}},
			{`{"name":"x","viewType":"VIEW_TYPE_MOVIES",` + quick + `}`, []string{"viewType"}},
		}
		for _, c := range refused {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, viewsPath, key, c.body), 400, c.frags...)
		}
		if l := listViews(t, env, key); len(l) != 0 {
			t.Fatalf("refused creates stored %d views", len(l))
		}
		v := createView(t, env, key, `{"name":"a",`+quick+`}`)
		// The replace checks the same bounds.
		for _, c := range refused {
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, viewPath(v.ID), key, c.body), 400, c.frags...)
		}
		// Every bound at its accepted edges.
		accepted := []string{
			`{"name":"` + long(250) + `","searchQuery":{"query":"q"},` + filters(1) + `,"timeSelection":{"quickSelection":{"caption":"c","seconds":0}}}`,
			`{"name":"b","searchQuery":{"query":"` + long(65535) + `"},` + filters(1000) + `,"timeSelection":{"quickSelection":{"caption":"` + long(100) + `","seconds":4294967295}}}`,
			`{"name":"c","filters":{"filters":[{"name":"` + long(65535) + `","selectedValues":{"v":true}}]},` + custom(ts35, ts35) + `}`,
			`{"name":"d",` + custom("2026-01-01T00:00:00+01:00", ts) + `}`,
		}
		for _, body := range accepted {
			created := createView(t, env, key, body)
			got := apitest.Decode[viewDoc](t, env.JSON(t, http.MethodGet, viewPath(created.ID), key, ""))
			if apitest.JSONOf(t, got) != apitest.JSONOf(t, created) {
				t.Fatalf("stored %.200v, answered %.200v", got, created)
			}
			apitest.Decode[viewDoc](t, env.JSON(t, http.MethodPut, viewPath(v.ID), key, body))
		}
		l := listViews(t, env, key)
		if len(l) != 5 || l[1].Name != long(250) || len(l[2].Filters.Filters) != 1000 || l[2].TimeSelection.QuickSelection.Seconds != 4294967295 ||
			l[3].TimeSelection.CustomSelection.FromTime != ts35 {
			t.Fatalf("list %d", len(l))
		}
		// View id path parameter: 1–2147483647.
		for _, p := range []string{"0", "-1", "2147483648", "x"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, viewsPath+"/"+p, key, ""), 400, "id")
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, viewsPath+"/2147483647", key, ""), 404, "id")
	})
}

func TestViewLimits(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		createView(t, env, key, `{"name":"first",`+quick+`}`)
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE view_ids SET last_id = 2147483646 WHERE team_id = $1`, team)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if v := createView(t, env, key, `{"name":"last",`+quick+`}`); v.ID != 2147483647 {
			t.Fatalf("id %d", v.ID)
		}
		if g := apitest.Decode[viewDoc](t, env.JSON(t, http.MethodGet, viewPath(2147483647), key, "")); g.Name != "last" {
			t.Fatalf("get %+v", g)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, viewsPath, key, `{"name":"more",`+quick+`}`), 429, "id", "2147483647")
		// At most 100000 views per team: fill up to 99999 in one statement, then one more fits.
		err = env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(),
				`WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 100006)
				 INSERT INTO views (team_id, id, folder_id, document, created_at, updated_at)
				 SELECT $1, i, NULL, '{"name":"bulk","timeSelection":{}}', 0, 0 FROM n`, team)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(context.Background(), `UPDATE view_ids SET last_id = 200000 WHERE team_id = $1`, team)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(listViews(t, env, key)); n != 99999 {
			t.Fatalf("%d views", n)
		}
		createView(t, env, key, `{"name":"the 100000th",`+quick+`}`)
		if n := len(listViews(t, env, key)); n != 100000 {
			t.Fatalf("%d views", n)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, viewsPath, key, `{"name":"one too many",`+quick+`}`), 429, "views", "100000")
		// Another team numbers its own views.
		_, other := env.MustTeam(t, "other")
		if v := createView(t, env, other, `{"name":"x",`+quick+`}`); v.ID != 1 {
			t.Fatalf("other team id %d", v.ID)
		}
	})
}

func TestFolderBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		long := strings.Repeat("é", 100)
		f := createFolder(t, env, key, long)
		createFolder(t, env, key, "x")
		for _, field := range []string{``, `,"name":""`, `,"name":"` + long + `é"`} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, foldersPath, key, `{"x":1`+field+`}`), 400, "name")
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"id":"`+f.ID+`"`+field+`}`), 400, "name")
		}
		for _, id := range []string{"x", strings.ToUpper(f.ID), f.ID + "0"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, foldersPath+"/"+id, key, ""), 400, "id")
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, foldersPath, key, `{"id":"`+id+`","name":"n"}`), 400, "id")
		}
		if g := apitest.Decode[folder](t, env.JSON(t, http.MethodGet, foldersPath+"/"+f.ID, key, "")); g.Name != long {
			t.Fatalf("get %+v", g)
		}
	})
}

func TestConcurrentCreatesAndFolderDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		const n = 8
		f := createFolder(t, env, key, "busy")
		answers := make([]apitest.Response, n)
		var del apitest.Response
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				answers[i] = env.JSON(t, http.MethodPost, viewsPath, key, fmt.Sprintf(`{"name":"v%d","folderId":"%s",%s}`, i, f.ID, quick))
			})
		}
		wg.Go(func() { del = env.JSON(t, http.MethodDelete, foldersPath+"/"+f.ID, key, "") })
		wg.Wait()
		var ids []int64
		for _, a := range answers {
			switch a.Status {
			case http.StatusOK:
				ids = append(ids, apitest.Decode[viewDoc](t, a).ID)
			case http.StatusBadRequest: // the folder was deleted first
			default:
				t.Fatalf("create %d %s", a.Status, a.Body)
			}
		}
		slices.Sort(ids)
		if len(slices.Compact(ids)) != len(ids) {
			t.Fatalf("ids %v", ids)
		}
		// Either the delete won and no view points at the folder, or it was refused and the folder stays.
		folders := listFolders(t, env, key)
		switch del.Status {
		case http.StatusOK:
			if len(folders) != 0 {
				t.Fatalf("folder survived its delete")
			}
			for _, v := range listViews(t, env, key) {
				if v.FolderID == f.ID {
					t.Fatalf("view %d in deleted folder", v.ID)
				}
			}
		case http.StatusConflict:
			if len(folders) != 1 || len(ids) == 0 {
				t.Fatalf("refused delete: folders %v, views %v", folders, ids)
			}
		default:
			t.Fatalf("delete %d %s", del.Status, del.Body)
		}
	})
}

func TestViewIsolationAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		f := createFolder(t, env, key, "mine")
		v := createView(t, env, key, `{"name":"mine","folderId":"`+f.ID+`",`+quick+`}`)
		// Another team sees nothing, cannot touch them, and cannot file views in the folder.
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			apitest.ExpectError(t, env.JSON(t, m, viewPath(v.ID), otherKey, ""), 404, "id")
			apitest.ExpectError(t, env.JSON(t, m, foldersPath+"/"+f.ID, otherKey, ""), 404, "id")
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, viewPath(v.ID), otherKey, `{"name":"x",`+quick+`}`), 404, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, foldersPath, otherKey, `{"id":"`+f.ID+`","name":"x"}`), 404, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, viewsPath, otherKey, `{"name":"x","folderId":"`+f.ID+`",`+quick+`}`), 400, "folderId")
		if len(listViews(t, env, otherKey)) != 0 || len(listFolders(t, env, otherKey)) != 0 {
			t.Fatalf("other team lists something")
		}
		if g := apitest.Decode[viewDoc](t, env.JSON(t, http.MethodGet, viewPath(v.ID), key, "")); g.Name != "mine" {
			t.Fatalf("own view %+v", g)
		}

		reader := env.MustKey(t, key, "team-saved-views:Read")
		writer := env.MustKey(t, key, "team-saved-views:Update")
		writes := []struct{ method, path, body string }{
			{http.MethodPost, viewsPath, `{"name":"w",` + quick + `}`},
			{http.MethodPut, viewPath(v.ID), `{"name":"w",` + quick + `}`},
			{http.MethodDelete, viewPath(v.ID), ""},
			{http.MethodPost, foldersPath, `{"name":"w"}`},
			{http.MethodPut, foldersPath, `{"id":"` + f.ID + `","name":"w"}`},
			{http.MethodDelete, foldersPath + "/" + f.ID, ""},
		}
		for _, c := range writes {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, reader, c.body), 403)
		}
		for _, p := range []string{viewsPath, viewPath(v.ID), foldersPath, foldersPath + "/" + f.ID} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p, writer, ""), 403)
			if res := env.JSON(t, http.MethodGet, p, reader, ""); res.Status != http.StatusOK {
				t.Fatalf("reader GET %s: %d %s", p, res.Status, res.Body)
			}
		}
		for _, c := range writes {
			if res := env.JSON(t, c.method, c.path, writer, c.body); res.Status != http.StatusOK {
				t.Fatalf("writer %s %s: %d %s", c.method, c.path, res.Status, res.Body)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, viewsPath, "nope", ""), 401)
	})
}

// TestStreamedListsAreTheBufferedLists checks that the view and folder lists, which the server
// streams, are byte for byte what the generated encoder writes for the same rows: empty, a few,
// and more than two streaming buffers.
func TestStreamedListsAreTheBufferedLists(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "streamed")
		h := views.NewHandler(env.DB)
		bufferedViews := func(ctx context.Context) (*oas.ViewList, error) { return h.ListViews(ctx) }
		bufferedFolders := func(ctx context.Context) (*oas.ViewFolderList, error) { return h.ListViewFolders(ctx) }
		if body := apitest.ExpectStreamedAsBuffered(t, env, viewsPath, key, team, bufferedViews); string(body) != `{"views":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		if body := apitest.ExpectStreamedAsBuffered(t, env, foldersPath, key, team, bufferedFolders); string(body) != `{"folders":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		f := createFolder(t, env, key, "ops \"é\" <&>")
		full := `{"name":"errors NAME","folderId":"` + f.ID + `","isCompactMode":true,"viewType":"VIEW_TYPE_LOGS",
			"searchQuery":{"query":"level:error","syntaxType":"SYNTAX_TYPE_LUCENE"},
			"filters":{"filters":[{"name":"applicationName","selectedValues":{"api":true,"web":false}}]},` + quick + `}`
		createView(t, env, key, full)
		createView(t, env, key, `{"name":"bare","timeSelection":{}}`)
		createView(t, env, key, `{"name":"custom","timeSelection":{"customSelection":{"fromTime":"2026-01-02T03:04:05.123456Z","toTime":"2026-01-03T00:00:00Z"}}}`)
		apitest.ExpectStreamedAsBuffered(t, env, viewsPath, key, team, bufferedViews)
		apitest.ExpectStreamedAsBuffered(t, env, foldersPath, key, team, bufferedFolders)

		for i := range 250 {
			createView(t, env, key, strings.Replace(full, "NAME", strconv.Itoa(i), 1))
		}
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			for i := range 2000 {
				_, err := tx.ExecContext(context.Background(),
					`INSERT INTO view_folders (team_id, id, name, created_at, updated_at) VALUES ($1, $2, $3, 0, 0)`,
					team, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("folder %d", i))
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if body := apitest.ExpectStreamedAsBuffered(t, env, viewsPath, key, team, bufferedViews); len(body) <= 2*streaming.BufferBytes {
			t.Fatalf("the view list is %d bytes, want more than two buffers", len(body))
		}
		if body := apitest.ExpectStreamedAsBuffered(t, env, foldersPath, key, team, bufferedFolders); len(body) <= 2*streaming.BufferBytes {
			t.Fatalf("the folder list is %d bytes, want more than two buffers", len(body))
		}
	})
}
