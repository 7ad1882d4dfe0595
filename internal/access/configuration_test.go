package access_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

type configDoc struct {
	CustomRoles []map[string]any `json:"customRoles"`
	Scopes      []map[string]any `json:"scopes"`
	Groups      []map[string]any `json:"groups"`
}

func exportDoc(t *testing.T, env *apitest.Env, key string) (string, configDoc) {
	t.Helper()
	res := env.Get(t, "/config/v1/export", key, map[string]string{"Accept": "application/json"})
	if res.Status != http.StatusOK {
		t.Fatalf("export: %d %s", res.Status, res.Body)
	}
	var doc configDoc
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("export: %v", err)
	}
	return string(res.Body), doc
}

// Scopes and groups are configuration as code: exported, applied to another team as they were,
// and pruned; members are not configuration, so a group applied keeps its members.
func TestScopesAndGroupsAsConfiguration(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "source")
		role := apitest.Decode[struct{ ID int64 }](t, env.JSON(t, http.MethodPut, "/mgmt/openapi/3/aaa/team-roles/v1/custom-roles", key,
			`{"name":"usage reader","permissions":["data-usage:Read"]}`)).ID
		scope := createScope(t, env, key, "purchases")
		dana := addMember(t, env, key, team, "dana@example.com")
		createGroup(t, env, key, fmt.Sprintf(`{"name":"usage","externalId":"ext-1","roleId":%d,"scope":{"scopeId":%q},"userIds":[%q]}`, role, scope, dana.UserID))
		createGroup(t, env, key, `{"name":"viewers","roleId":3}`)
		text, doc := exportDoc(t, env, key)
		if len(doc.Scopes) != 1 || doc.Scopes[0]["id"] != scope || len(doc.Groups) != 2 {
			t.Fatalf("exported %s", text)
		}
		g := doc.Groups[0]
		if g["name"] != "usage" || g["scope"].(map[string]any)["scopeId"] != scope || g["role"].(map[string]any)["roleId"] != float64(role) {
			t.Fatalf("exported group %v", g)
		}
		for _, field := range []string{"teamId", "createdAt", "updatedAt", "groupOrigin", "userIds"} {
			if _, has := g[field]; has {
				t.Errorf("the exported group holds %s: %v", field, g)
			}
		}

		// A copy: the same scopes and groups, same ids.
		_, copyKey := env.MustTeam(t, "copy")
		if res := env.Do(t, http.MethodPost, "/config/v1/apply", "Bearer "+copyKey, "application/json", text); res.Status != http.StatusOK {
			t.Fatalf("apply: %d %s", res.Status, res.Body)
		}
		copied, copyDoc := exportDoc(t, env, copyKey)
		if copied != text {
			t.Fatalf("the copy exports differently:\n%s\n%s", text, copied)
		}
		if copyDoc.Groups[0]["groupId"] != g["groupId"] {
			t.Fatalf("ids differ: %v %v", copyDoc.Groups[0], g)
		}

		// Applying the document again to the source keeps the members.
		if res := env.Do(t, http.MethodPost, "/config/v1/apply", "Bearer "+key, "application/json", text); res.Status != http.StatusOK {
			t.Fatalf("apply again: %d %s", res.Status, res.Body)
		}
		users := apitest.Decode[struct{ Users []teamMember }](t, env.JSON(t, http.MethodGet,
			fmt.Sprintf("%s/%v/users/list", groupsPath, g["groupId"]), key, ""))
		if len(users.Users) != 1 || users.Users[0].UserID != dana.UserID {
			t.Fatalf("members after the apply: %+v", users)
		}

		// A group naming a scope the team lacks is refused, and nothing changes.
		bad := `{"groups":[{"name":"x","scope":{"scopeId":"missing"}}]}`
		apitest.ExpectError(t, env.Do(t, http.MethodPost, "/config/v1/apply", "Bearer "+copyKey, "application/json", bad),
			http.StatusBadRequest, "scope.scopeId", "missing")

		// Prune: the groups go, and then the scope a group no longer holds.
		res := env.Do(t, http.MethodPost, "/config/v1/apply?prune=true", "Bearer "+copyKey, "application/json", `{"groups":[],"scopes":[]}`)
		if res.Status != http.StatusOK {
			t.Fatalf("prune: %d %s", res.Status, res.Body)
		}
		if _, left := exportDoc(t, env, copyKey); len(left.Groups)+len(left.Scopes) != 0 {
			t.Fatalf("left after prune: %+v", left)
		}
		// A scope still held by a group cannot be pruned.
		apitest.ExpectError(t, env.Do(t, http.MethodPost, "/config/v1/apply?prune=true", "Bearer "+key, "application/json", `{"scopes":[]}`),
			http.StatusConflict, "group usage")
	})
}
