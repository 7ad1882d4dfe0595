package apikeys_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// Migration 0033 rewrites the retired names a database stores (keys' permissions and access
// policies, custom roles' permissions) as their public names, on both engines: the rows are
// written with old names as an earlier version stored them, the migration runs again, and the
// stored text and the answers name public permissions only, with the same rights as before.
func TestMigrationRewritesStoredOldNames(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		keyed := create(t, env, env.RootKey, `{"name":"old","keyPermissions":{"permissions":["case:Read"]}}`)
		denied := create(t, env, env.RootKey, `{"name":"denied","keyPermissions":{"presets":["full-access"]}}`)
		untouched := create(t, env, env.RootKey, `{"name":"new","keyPermissions":{"permissions":["alerts-map:Read"]}}`)

		// As an earlier version stored them: every retired name, one of them twice, and the
		// lower-case incident names that are now spelled with a capital.
		var old []string
		for _, o := range auth.OldNames() {
			old = append(old, o.Name)
		}
		old = append(old, "incidents:read", "incidents:acknowledge", "incidents:close", "incidents:assign", "case:Read", "slos:Manage")
		oldJSON, _ := json.Marshal(old)
		apitest.MustExec(t, env.DB, `UPDATE api_keys SET permissions = $1 WHERE id = $2`, string(oldJSON), keyed.KeyID)
		apitest.MustExec(t, env.DB, `UPDATE api_keys SET access_policy = $1 WHERE id = $2`,
			`{"version": "2025-01-01", "default": {"permissions": {"policies:Manage": "deny", "logs.tco:UpdatePolicies": "grant", "views:ReadConfig": "grant"}}, "rules": []}`,
			denied.KeyID)
		apitest.MustExec(t, env.DB, `INSERT INTO custom_roles (team_id, id, name, description, parent_role_id, permissions, created_at, updated_at)
			VALUES (1, 1500, 'legacy', '', 2, $1, 0, 0)`, `["case:Read","events2metrics:Manage","incidents:read","retention-tags:ReadConfig"]`)
		untouchedBefore := apitest.MustQueryString(t, env.DB, `SELECT permissions FROM api_keys WHERE id = $1`, untouched.KeyID)
		apitest.MustExec(t, env.DB, `DELETE FROM schema_migrations WHERE version = 33`)
		env.Restart(t) // opening the database applies 0033 again

		// The key: every old name became its public names, in order, without repeats.
		var want []string
		for _, n := range old {
			for _, p := range auth.Resolve(n) {
				if !slices.Contains(want, p) {
					want = append(want, p)
				}
			}
		}
		var stored []string
		if err := json.Unmarshal([]byte(apitest.MustQueryString(t, env.DB, `SELECT permissions FROM api_keys WHERE id = $1`, keyed.KeyID)), &stored); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(stored, want) {
			t.Fatalf("stored permissions after 0033:\n %v\nwant\n %v", stored, want)
		}
		for _, p := range stored {
			if c, ok := auth.Canonical(p); !ok || c != p {
				t.Fatalf("stored %q is not a public name", p)
			}
		}
		if got := keyInfo(t, env, keyed.KeyID).KeyPermissions.Permissions; !slices.Equal(got, want) {
			t.Fatalf("answered permissions %v", got)
		}
		if res := env.JSON(t, "POST", rulesPath, keyed.Value, `{"name":"after migration"}`); res.Status != 200 {
			t.Fatalf("the migrated key lost a right: %d %s", res.Status, res.Body)
		}

		// The access policy: the old deny covers each public name it stands for and wins over the
		// grant of one of them; the old grant became its public name.
		var policy auth.AccessPolicy
		text := apitest.MustQueryString(t, env.DB, `SELECT access_policy FROM api_keys WHERE id = $1`, denied.KeyID)
		if err := json.Unmarshal([]byte(text), &policy); err != nil {
			t.Fatalf("migrated policy %q: %v", text, err)
		}
		wantPolicy := map[string]string{"logs.tco:UpdatePolicies": "deny", "spans.tco:UpdatePolicies": "deny",
			"metrics.tco:UpdatePolicies": "deny", "team-saved-views:Read": "grant"}
		if policy.Version != "2025-01-01" || len(policy.Default.Permissions) != len(wantPolicy) {
			t.Fatalf("migrated policy %s", text)
		}
		for k, v := range wantPolicy {
			if policy.Default.Permissions[k] != v {
				t.Fatalf("migrated policy %s: %s is %q, want %q", text, k, policy.Default.Permissions[k], v)
			}
		}
		apitest.ExpectError(t, env.JSON(t, "PUT", "/mgmt/openapi/5/dataplans/log-policies/v1", denied.Value, `{}`), 403, "logs.tco:UpdatePolicies")

		// The custom role: public names, sorted, without repeats.
		var role []string
		if err := json.Unmarshal([]byte(apitest.MustQueryString(t, env.DB, `SELECT permissions FROM custom_roles WHERE team_id = 1 AND id = 1500`)), &role); err != nil {
			t.Fatal(err)
		}
		wantRole := []string{"case:Read", "incidents:Read", "logs.data-setup#low:ReadConfig", "logs.events2metrics:UpdateConfig", "spans.events2metrics:UpdateConfig"}
		if !slices.Equal(role, wantRole) {
			t.Fatalf("migrated role %v, want %v", role, wantRole)
		}
		res := env.JSON(t, "GET", "/mgmt/openapi/5/aaa/team-roles/v1/custom-roles/1500", env.RootKey, "")
		if res.Status != 200 || !strings.Contains(string(res.Body), `"logs.events2metrics:UpdateConfig"`) || strings.Contains(string(res.Body), "events2metrics:Manage") {
			t.Fatalf("role answer %d %s", res.Status, res.Body)
		}

		// A row holding public names only is left as it was.
		if after := apitest.MustQueryString(t, env.DB, `SELECT permissions FROM api_keys WHERE id = $1`, untouched.KeyID); after != untouchedBefore {
			t.Fatalf("untouched key rewritten: %s, was %s", after, untouchedBefore)
		}
	})
}

// The migration's table of renames is the one the server resolves old names with.
func TestMigrationRenamesAreTheAliases(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		text := string(mustRead(t, "../db/migrations/"+engine+"/0033_public_permission_names.sql"))
		rows := 0
		for _, o := range auth.OldNames() {
			for i, p := range o.Public {
				row := "('" + o.Name + "', '" + p + "', " + string(rune('0'+i)) + ")"
				if !strings.Contains(text, row) {
					t.Errorf("%s 0033 lacks %s", engine, row)
				}
				rows++
			}
		}
		if got := strings.Count(text, "', '"); got != rows+4 { // + the four incident names that change case
			t.Errorf("%s 0033 has %d renames, want %d", engine, got, rows+4)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
