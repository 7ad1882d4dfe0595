package retentions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	path      = "/mgmt/openapi/5/dataengine/retention-tags/v1"
	defaultID = "00000000-0000-4000-8000-000000000001"
	shortID   = "00000000-0000-4000-8000-000000000002"
	midID     = "00000000-0000-4000-8000-000000000003"
	longID    = "00000000-0000-4000-8000-000000000004"
)

type tag struct {
	ID       string
	Name     string
	Editable bool
	Order    int
}

func tags(t *testing.T, res apitest.Response) []tag {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", res.Status, res.Body)
	}
	var out struct{ Retentions []tag }
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatalf("decode %s: %v", res.Body, err)
	}
	return out.Retentions
}

func rename(id, name string) string {
	n, _ := json.Marshal(name)
	return `{"retentionUpdateElements":[{"id":"` + id + `","name":` + string(n) + `}]}`
}

func TestDefaultTags(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		want := []tag{{defaultID, "Default", false, 1}, {shortID, "Short", true, 2}, {midID, "Intermediate", true, 3}, {longID, "Long", true, 4}}
		got := tags(t, env.JSON(t, http.MethodGet, path, key, ""))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("tags %+v, want %+v", got, want)
		}
		// The answer of an empty update is the list too.
		if got := tags(t, env.JSON(t, http.MethodPost, path, key, `{"retentionUpdateElements":[]}`)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("empty update %+v", got)
		}
		// A team created later has them too.
		_, later := env.MustTeam(t, "later")
		if got := tags(t, env.JSON(t, http.MethodGet, path, later, "")); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("later team %+v", got)
		}
	})
}

func TestRename(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		body := `{"retentionUpdateElements":[{"id":"` + shortID + `","name":"Week"},{"id":"` + longID + `","name":"Year"}]}`
		got := tags(t, env.JSON(t, http.MethodPost, path, key, body))
		if len(got) != 4 || got[0].Name != "Default" || got[1].Name != "Week" || got[2].Name != "Intermediate" || got[3].Name != "Year" {
			t.Fatalf("after rename %+v", got)
		}
		// Renaming again replaces the name; it survives a restart.
		tags(t, env.JSON(t, http.MethodPost, path, key, rename(shortID, "Fortnight")))
		env.Restart(t)
		got = tags(t, env.JSON(t, http.MethodGet, path, key, ""))
		if got[1].Name != "Fortnight" || got[3].Name != "Year" {
			t.Fatalf("after restart %+v", got)
		}
		// Team isolation: the other team keeps the platform's names.
		if o := tags(t, env.JSON(t, http.MethodGet, path, other, "")); o[1].Name != "Short" || o[3].Name != "Long" {
			t.Fatalf("other team %+v", o)
		}
	})
}

func TestRenameRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		cases := []struct {
			body      string
			status    int
			fragments []string
		}{
			{rename("no-such-tag", "x"), 404, []string{"retentionUpdateElements[0].id", "no-such-tag"}},
			{rename(defaultID, "x"), 400, []string{"retentionUpdateElements[0].id", "not editable"}},
			{rename(shortID, ""), 400, []string{"retentionUpdateElements[0].name"}},
			{rename(shortID, strings.Repeat("é", 101)), 400, []string{"retentionUpdateElements[0].name", "100"}},
			{rename(shortID, "   "), 400, []string{"retentionUpdateElements[0].name", "non-whitespace"}},
			{`{"retentionUpdateElements":[{"id":"` + shortID + `","name":"a"},{"id":"` + shortID + `","name":"b"}]}`, 400,
				[]string{"retentionUpdateElements[1].id", "once"}},
			{`{"retentionUpdateElements":[{"id":"` + shortID + `"}]}`, 400, []string{"name"}},
			{`{}`, 400, []string{"retentionUpdateElements"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, path, key, c.body), c.status, c.fragments...)
		}
		// All or none: a batch with one bad element changes nothing.
		bad := `{"retentionUpdateElements":[{"id":"` + shortID + `","name":"ok"},{"id":"` + defaultID + `","name":"no"}]}`
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, path, key, bad), 400, "retentionUpdateElements[1].id")
		if got := tags(t, env.JSON(t, http.MethodGet, path, key, "")); got[1].Name != "Short" {
			t.Fatalf("partial change %+v", got)
		}
		// Bounds at both edges: 1 and 100 characters are accepted.
		for _, name := range []string{"a", strings.Repeat("é", 100)} {
			if got := tags(t, env.JSON(t, http.MethodPost, path, key, rename(midID, name))); got[2].Name != name {
				t.Fatalf("name of %d characters: %+v", len([]rune(name)), got[2])
			}
		}
	})
}

func TestRetentionPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		reader := env.MustKey(t, key, "logs.data-setup#low:ReadConfig")
		writer := env.MustKey(t, key, "logs.data-setup#low:UpdateConfig")
		none := env.MustKey(t, key, "case:Read")
		tags(t, env.JSON(t, http.MethodGet, path, reader, ""))
		tags(t, env.JSON(t, http.MethodPost, path, writer, rename(shortID, "w")))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, path, reader, rename(shortID, "r")), 403)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, path, writer, ""), 403)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, path, none, ""), 403)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, path, "nope", ""), 401)
	})
}

const (
	activatePath = path + "/activate"
	enabledPath  = path + "/enabled"
)

func enabled(t *testing.T, env *apitest.Env, key string) bool {
	t.Helper()
	got := apitest.Decode[struct{ EnableTags *bool }](t, env.JSON(t, http.MethodGet, enabledPath, key, "")).EnableTags
	if got == nil {
		t.Fatal("enableTags missing")
	}
	return *got
}

func TestActivate(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		// The field is present (false) before activation.
		if res := env.JSON(t, http.MethodGet, enabledPath, key, ""); res.Status != http.StatusOK || string(res.Body) != `{"enableTags":false}` {
			t.Fatalf("before activation: %d %s", res.Status, res.Body)
		}
		for i := 0; i < 2; i++ { // activating twice is the same as once
			res := env.JSON(t, http.MethodPost, activatePath, key, "")
			if res.Status != http.StatusOK || string(res.Body) != `{"activateRetentions":true}` {
				t.Fatalf("activate #%d: %d %s", i+1, res.Status, res.Body)
			}
		}
		// A body, if a client sends one, is not read.
		if res := env.JSON(t, http.MethodPost, activatePath, key, `{"ids":["x"]}`); res.Status != http.StatusOK {
			t.Fatalf("activate with a body: %d %s", res.Status, res.Body)
		}
		if !enabled(t, env, key) {
			t.Fatal("not enabled after activation")
		}
		env.Restart(t)
		if !enabled(t, env, key) {
			t.Fatal("activation lost on restart")
		}
		// Team isolation; the list of tags is unchanged by activation.
		if enabled(t, env, other) {
			t.Fatal("other team enabled")
		}
		if got := tags(t, env.JSON(t, http.MethodGet, path, key, "")); len(got) != 4 || got[0].ID != defaultID {
			t.Fatalf("tags after activation %+v", got)
		}
	})
}

func TestActivatePermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		reader := env.MustKey(t, key, "logs.data-setup#low:ReadConfig")
		writer := env.MustKey(t, key, "logs.data-setup#low:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, activatePath, reader, ""), 403)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, enabledPath, writer, ""), 403)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, activatePath, "nope", ""), 401)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, enabledPath, "nope", ""), 401)
		if enabled(t, env, reader) {
			t.Fatal("a refused activation changed the state")
		}
		if res := env.JSON(t, http.MethodPost, activatePath, writer, ""); res.Status != http.StatusOK {
			t.Fatalf("writer: %d %s", res.Status, res.Body)
		}
		if !enabled(t, env, reader) {
			t.Fatal("not enabled")
		}
	})
}

// TestReadModifyWrite: a client reads the tags and sends them all back with the second one
// renamed; the Default tag, not editable, is sent back unchanged and that is no change. It
// answered "400 retentionUpdateElements[0].id: retention tag … (Default) is not editable"
// before. Renaming Default is still refused, and nothing is changed then.
func TestReadModifyWrite(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		read := tags(t, env.JSON(t, http.MethodGet, path, key, ""))
		elements := make([]map[string]string, len(read))
		for i, tg := range read {
			elements[i] = map[string]string{"id": tg.ID, "name": tg.Name}
		}
		elements[1]["name"] = "Brief"
		body, _ := json.Marshal(map[string]any{"retentionUpdateElements": elements})
		got := tags(t, env.JSON(t, http.MethodPost, path, key, string(body)))
		want := []tag{{defaultID, "Default", false, 1}, {shortID, "Brief", true, 2}, {midID, "Intermediate", true, 3}, {longID, "Long", true, 4}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after writing the list back: %+v, want %+v", got, want)
		}
		elements[0]["name"], elements[1]["name"] = "Everything", "Briefer"
		body, _ = json.Marshal(map[string]any{"retentionUpdateElements": elements})
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, path, key, string(body)), 400,
			"retentionUpdateElements[0].id", "(Default) is not editable")
		if got := tags(t, env.JSON(t, http.MethodGet, path, key, "")); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after a refused rename: %+v", got)
		}
	})
}
