package access_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

const (
	groupsPath = "/mgmt/openapi/latest/aaa/team-groups/v2"
	scopesPath = "/mgmt/openapi/latest/aaa/team-scopes/v1"
	rolesPath  = "/mgmt/openapi/latest/aaa/team-roles/v1/custom-roles"
	keysPath   = "/mgmt/openapi/latest/aaa/api-keys/v3"
)

func membersPath(team int64) string {
	return "/mgmt/openapi/latest/aaa/teams/v2/" + strconv.FormatInt(team, 10) + "/members"
}

type teamMember struct {
	UserID        string
	UserAccountID int64
	Username      string
	FirstName     string
	LastName      string
	Status        string
}

// addMember creates a member and finds it by the search, as clients must (the create answers {}).
func addMember(t *testing.T, env *apitest.Env, key string, team int64, email string) teamMember {
	t.Helper()
	res := env.JSON(t, http.MethodPost, membersPath(team), key,
		`{"onboardingMode":"ONBOARDING_MODE_NO_INVITE","userTemplate":{"username":"`+email+`","firstName":"F","lastName":"L"}}`)
	if res.Status != http.StatusOK || string(res.Body) != "{}" {
		t.Fatalf("create member %s: %d %s", email, res.Status, res.Body)
	}
	found := apitest.Decode[struct {
		Users      []teamMember
		TotalCount int64
	}](t, env.JSON(t, http.MethodGet, fmt.Sprintf("/mgmt/openapi/5/aaa/teams/v2/%d/search?username=%s", team, email), key, ""))
	if len(found.Users) != 1 || found.Users[0].Username != email {
		t.Fatalf("search %s: %+v", email, found)
	}
	return found.Users[0]
}

type teamGroup struct {
	GroupID     int64
	TeamID      int64
	Name        string
	GroupType   string
	GroupOrigin string
	Role        struct {
		RoleID int64
		Name   string
	}
	Scope struct{ ScopeID string }
}

func createGroup(t *testing.T, env *apitest.Env, key, body string) teamGroup {
	t.Helper()
	return apitest.Decode[struct{ Group teamGroup }](t, env.JSON(t, http.MethodPost, groupsPath, key, body)).Group
}

func createScope(t *testing.T, env *apitest.Env, key, name string) string {
	t.Helper()
	out := apitest.Decode[struct{ Scope struct{ ID string } }](t, env.JSON(t, http.MethodPost, scopesPath, key,
		`{"displayName":"`+name+`","defaultExpression":"<v1>false","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"<v1>(subsystemName == 'purchases') || (subsystemName == 'signups')"}]}`))
	if out.Scope.ID == "" {
		t.Fatalf("scope %s has no id", name)
	}
	return out.Scope.ID
}

// The brief's story: a group with a custom role and a scope, a member in it, the member's personal
// key allowed, then narrowed when the member leaves the group, and stopped when revoked.
func TestPersonalKeyFollowsItsOwner(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		role := apitest.Decode[struct{ ID int64 }](t, env.JSON(t, http.MethodPut, "/mgmt/openapi/3/aaa/team-roles/v1/custom-roles", key,
			`{"name":"usage reader","description":"reads usage","permissions":["data-usage:Read","team-groups:ReadConfig"]}`)).ID
		scope := createScope(t, env, key, "purchases")
		dana := addMember(t, env, key, team, "dana@example.com")
		if dana.Status != "USER_STATUS_ACTIVE" || len(dana.UserID) != 36 || dana.UserAccountID != 1 {
			t.Fatalf("member %+v", dana)
		}
		g := createGroup(t, env, key, fmt.Sprintf(`{"name":"usage","roleId":%d,"scope":{"scopeId":%q},"userIds":[%q]}`, role, scope, dana.UserID))
		if g.Role.RoleID != role || g.Role.Name != "usage reader" || g.Scope.ScopeID != scope || g.TeamID != team ||
			g.GroupOrigin != "GROUP_ORIGIN_USER_DEFINED" || g.GroupType != "GROUP_TYPE_OPEN" {
			t.Fatalf("group %+v", g)
		}
		personal := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, keysPath, key,
			`{"name":"dana's key","owner":{"userId":"`+dana.UserID+`"},"keyPermissions":{"presets":["`+auth.FullAccess+`"]}}`)).Value

		usage := "/mgmt/openapi/latest/aaa/teams/v2/" + strconv.FormatInt(team, 10) + "/search"
		groupRead := groupsPath + "/id/" + strconv.FormatInt(g.GroupID, 10)
		// The key holds every permission, its owner only the role's two.
		if res := env.JSON(t, http.MethodGet, groupRead, personal, ""); res.Status != http.StatusOK {
			t.Fatalf("the owner's role allows reading groups: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, usage, personal, ""), http.StatusForbidden, "team-members:ReadConfig")

		// The member leaves the group: the key is refused at its next request.
		res := env.JSON(t, http.MethodPut, groupsPath+"/"+strconv.FormatInt(g.GroupID, 10), key,
			`{"userUpdates":{"operation":{"remove":{"userIds":["`+dana.UserID+`"]}}}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("remove member: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, groupRead, personal, ""), http.StatusForbidden, "team-groups:ReadConfig")
		users := apitest.Decode[struct{ Users []teamMember }](t, env.JSON(t, http.MethodGet, groupRead[:len(groupsPath)]+"/"+strconv.FormatInt(g.GroupID, 10)+"/users/list", key, ""))
		if len(users.Users) != 0 {
			t.Fatalf("the group still lists %+v", users.Users)
		}

		// Back in the group, then revoked: the key stops; activated again, it works.
		env.JSON(t, http.MethodPut, groupsPath+"/"+strconv.FormatInt(g.GroupID, 10), key,
			`{"userUpdates":{"operation":{"add":{"userIds":["`+dana.UserID+`"]}}}}`)
		if res := env.JSON(t, http.MethodGet, groupRead, personal, ""); res.Status != http.StatusOK {
			t.Fatalf("back in the group: %d %s", res.Status, res.Body)
		}
		status := func(s string) {
			t.Helper()
			res := env.JSON(t, http.MethodPatch, membersPath(team)+":updateStatuses", key,
				fmt.Sprintf(`{"status":%q,"userAccountIds":[%d]}`, s, dana.UserAccountID))
			if res.Status != http.StatusOK {
				t.Fatalf("status %s: %d %s", s, res.Status, res.Body)
			}
		}
		status("USER_STATUS_INACTIVE")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, groupRead, personal, ""), http.StatusUnauthorized, "owner is not an active member")
		status("USER_STATUS_ACTIVE")
		if res := env.JSON(t, http.MethodGet, groupRead, personal, ""); res.Status != http.StatusOK {
			t.Fatalf("activated again: %d %s", res.Status, res.Body)
		}

		// A temporary access ends by itself.
		env.JSON(t, http.MethodPut, membersPath(team), key, fmt.Sprintf(
			`{"userAccountId":%d,"userTemplate":{"accessType":{"temporaryAccess":{"expireAt":%q}}}}`,
			dana.UserAccountID, env.Clock.Now().Add(time.Hour).Format(time.RFC3339)))
		env.Clock.Advance(2 * time.Hour)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, groupRead, personal, ""), http.StatusUnauthorized, "owner is not an active member")
		got := apitest.Decode[struct{ User teamMember }](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", membersPath(team), dana.UserAccountID), key, ""))
		if got.User.Status != "USER_STATUS_INACTIVE" {
			t.Fatalf("expired member answers %+v", got.User)
		}

		// A group's role cannot be deleted; the scope it holds neither.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, rolesPath+"/"+strconv.FormatInt(role, 10), key, ""), http.StatusConflict, "group usage")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, scopesPath+"/"+scope, key, ""), http.StatusConflict, "group usage")
	})
}

func TestMembersRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		other, otherKey := env.MustTeam(t, "other")
		dana := addMember(t, env, key, team, "dana@example.com")
		for _, c := range []struct {
			body, want string
		}{
			{`{}`, "userTemplate: is required"},
			{`{"userTemplate":{"firstName":"x"}}`, "userTemplate.username"},
			{`{"userTemplate":{"username":"not-an-email"}}`, "userTemplate.username: must be an email address"},
			{`{"userTemplate":{"username":"a@b","accessType":{"temporaryAccess":{}}}}`, "expireAt: is required"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, membersPath(team), key, c.body), http.StatusBadRequest, c.want)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, membersPath(team), key, `{"userTemplate":{"username":"DANA@example.com"}}`),
			http.StatusConflict, `member "DANA@example.com" already`)
		// Another team's id, and another team's key, reach nothing.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, membersPath(other), key, `{"userTemplate":{"username":"x@y"}}`), http.StatusNotFound, "team_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", membersPath(team), dana.UserAccountID), otherKey, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", membersPath(other), dana.UserAccountID), otherKey, ""), http.StatusNotFound, "no member")
		// All or nothing: one unknown id changes no status.
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, membersPath(team)+":updateStatuses", key,
			fmt.Sprintf(`{"status":"USER_STATUS_INACTIVE","userAccountIds":[%d, 99]}`, dana.UserAccountID)), http.StatusNotFound, "99")
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, membersPath(team)+":updateStatuses", key,
			fmt.Sprintf(`{"status":"USER_STATUS_UNSPECIFIED","userAccountIds":[%d]}`, dana.UserAccountID)), http.StatusBadRequest, "status")
		got := apitest.Decode[struct{ User teamMember }](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", membersPath(team), dana.UserAccountID), key, ""))
		if got.User.Status != "USER_STATUS_ACTIVE" || got.User.FirstName != "F" {
			t.Fatalf("member after refused changes: %+v", got.User)
		}
		// The update changes what it gives only.
		res := apitest.Decode[struct{ UserAccountIDs []int64 }](t, env.JSON(t, http.MethodPut, membersPath(team), key,
			fmt.Sprintf(`{"userAccountId":%d,"userTemplate":{"lastName":"Levi"}}`, dana.UserAccountID)))
		if len(res.UserAccountIDs) != 1 || res.UserAccountIDs[0] != dana.UserAccountID {
			t.Fatalf("update answered %+v", res)
		}
		got = apitest.Decode[struct{ User teamMember }](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", membersPath(team), dana.UserAccountID), key, ""))
		if got.User.LastName != "Levi" || got.User.FirstName != "F" || got.User.Username != "dana@example.com" {
			t.Fatalf("member after update: %+v", got.User)
		}
		// Paging of the search.
		addMember(t, env, key, team, "eli@example.com")
		addMember(t, env, key, team, "fay@example.com")
		page := apitest.Decode[struct {
			Users         []teamMember
			TotalCount    int64
			NextPageToken int64
		}](t, env.JSON(t, http.MethodGet, fmt.Sprintf("/mgmt/openapi/5/aaa/teams/v2/%d/search?page_size=2", team), key, ""))
		if len(page.Users) != 2 || page.TotalCount != 3 || page.NextPageToken != 2 {
			t.Fatalf("first page %+v", page)
		}
		page2 := apitest.Decode[struct {
			Users         []teamMember
			NextPageToken int64
		}](t, env.JSON(t, http.MethodGet, fmt.Sprintf("/mgmt/openapi/5/aaa/teams/v2/%d/search?page_size=2&page_token=2", team), key, ""))
		if len(page2.Users) != 1 || page2.Users[0].Username != "fay@example.com" || page2.NextPageToken != 0 {
			t.Fatalf("second page %+v", page2)
		}
	})
}

func TestGroupsAndScopesRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		dana := addMember(t, env, key, team, "dana@example.com")
		for _, c := range []struct{ body, want string }{
			{`{"roleId":3}`, "name: is required"},
			{`{"name":"g","roleId":999}`, "roleId: 999 is neither"},
			{`{"name":"g","scope":{"scopeId":"nope"}}`, `scope.scopeId: the team has no scope "nope"`},
			{`{"name":"g","userIds":["nobody"]}`, `userIds[0]: "nobody" is not a member`},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, groupsPath, key, c.body), http.StatusBadRequest, c.want)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, groupsPath, key, `{"name":"g","teamId":999}`), http.StatusNotFound, "teamId")
		g := createGroup(t, env, key, `{"name":"on-call","roleId":3,"userIds":["`+dana.UserID+`"]}`)
		if g.Role.Name != "Read-Only User" {
			t.Fatalf("group %+v", g)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, groupsPath, key, `{"name":"on-call"}`), http.StatusConflict, "on-call")
		byName := apitest.Decode[struct{ Group teamGroup }](t, env.JSON(t, http.MethodGet, groupsPath+"/name/on-call", key, "")).Group
		if byName.GroupID != g.GroupID {
			t.Fatalf("by name %+v", byName)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, groupsPath+"/name/on-call", otherKey, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/id/%d", groupsPath, g.GroupID), otherKey, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, fmt.Sprintf("%s/%d", groupsPath, g.GroupID), key,
			`{"roleUpdate":{"action":{"setRoleId":{"value":1},"clear":{"clear":true}}}}`), http.StatusBadRequest, "roleUpdate.action: give one")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, fmt.Sprintf("%s/%d", groupsPath, g.GroupID), key,
			`{"userUpdates":{"operation":{"add":{"userIds":[]},"set":{"userIds":[]}}}}`), http.StatusBadRequest, "userUpdates.operation")
		// Clear the role: the answer has none.
		res := apitest.Decode[struct{ Group map[string]any }](t, env.JSON(t, http.MethodPut, fmt.Sprintf("%s/%d", groupsPath, g.GroupID), key,
			`{"roleUpdate":{"action":{"clear":{"clear":true}}},"name":"pagers"}`))
		if _, has := res.Group["role"]; has || res.Group["name"] != "pagers" {
			t.Fatalf("after clearing the role: %v", res.Group)
		}
		list := apitest.Decode[struct {
			Groups     []teamGroup
			TotalCount int64
		}](t, env.JSON(t, http.MethodGet, groupsPath, key, ""))
		if len(list.Groups) != 1 || list.TotalCount != 1 {
			t.Fatalf("list %+v", list)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, groupsPath+"?page_token=x", key, ""), http.StatusBadRequest, "page_token")
		del := apitest.Decode[struct{ GroupID int64 }](t, env.JSON(t, http.MethodDelete, fmt.Sprintf("%s/%d", groupsPath, g.GroupID), key, ""))
		if del.GroupID != g.GroupID {
			t.Fatalf("delete answered %+v", del)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/id/%d", groupsPath, g.GroupID), key, ""), http.StatusNotFound)

		// Scopes.
		for _, c := range []struct{ body, want string }{
			{`{"displayName":"s","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"subsystemName == 'x'"}]}`, "filters[0].expression: must begin with the version tag <v1>"},
			{`{"displayName":"s","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"<v1>(a == 'x'"}]}`, "filters[0].expression: 1 '(' not closed"},
			{`{"displayName":"s","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"<v1>a == 'x"}]}`, "quote is not closed"},
			{`{"displayName":"s","filters":[{"expression":"<v1>true"}]}`, "filters[0].entityType"},
			{`{"displayName":" ","filters":[]}`, "displayName"},
			{`{"displayName":"s","filters":[],"defaultExpression":"<v1>"}`, "defaultExpression: must hold a condition"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, scopesPath, key, c.body), http.StatusBadRequest, c.want)
		}
		id := createScope(t, env, key, "purchases")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, scopesPath, key, `{"displayName":"purchases","filters":[]}`), http.StatusConflict, "purchases")
		upd := apitest.Decode[struct {
			Scope struct {
				ID, DisplayName, DefaultExpression string
				TeamID                             int64
				Filters                            []struct{ EntityType, Expression string }
			}
		}](t, env.JSON(t, http.MethodPut, scopesPath, key,
			`{"id":"`+id+`","displayName":"spans","defaultExpression":"<v1>true","filters":[{"entityType":"ENTITY_TYPE_SPANS","expression":"<v1>applicationName == 'shop'"}]}`))
		if upd.Scope.ID != id || upd.Scope.DisplayName != "spans" || upd.Scope.TeamID != team || len(upd.Scope.Filters) != 1 || upd.Scope.Filters[0].EntityType != "ENTITY_TYPE_SPANS" {
			t.Fatalf("updated scope %+v", upd.Scope)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, scopesPath, otherKey,
			`{"id":"`+id+`","displayName":"x","defaultExpression":"<v1>true","filters":[]}`), http.StatusNotFound, id)
		byIDs := apitest.Decode[struct{ Scopes []struct{ ID string } }](t, env.JSON(t, http.MethodGet, scopesPath+"?ids="+id+"&ids=missing", key, ""))
		if len(byIDs.Scopes) != 1 || byIDs.Scopes[0].ID != id {
			t.Fatalf("by ids %+v", byIDs)
		}
		if other := apitest.Decode[struct{ Scopes []struct{ ID string } }](t, env.JSON(t, http.MethodGet, scopesPath+"?ids="+id, otherKey, "")); len(other.Scopes) != 0 {
			t.Fatalf("another team reads the scope: %+v", other)
		}
		all := apitest.Decode[struct{ Scopes []struct{ ID string } }](t, env.JSON(t, http.MethodGet, scopesPath+"/all/list", key, ""))
		if len(all.Scopes) != 1 {
			t.Fatalf("all %+v", all)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, scopesPath+"/"+id, otherKey, ""), http.StatusNotFound)
		if res := env.JSON(t, http.MethodDelete, scopesPath+"/"+id, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete scope: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, scopesPath+"/"+id, key, ""), http.StatusNotFound)
	})
}

// Case assignees and personal keys' owners are members once a team has members; a member's
// personal key writes case events as {user: {id}}. A team without members keeps the rules from
// before members existed.
func TestAssigneesOwnersAndActorsAreMembers(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		stranger := "3f2b8c4e-9a1d-4e7b-8c5f-2d6a1b0e9f47"
		caseID := apitest.Decode[struct{ CaseID string }](t, env.Do(t, http.MethodPost, "/ingest/alertmanager/v1", "Bearer "+key, "application/json", apitest.FiringAlert)).CaseID
		assign := func(k, user string) apitest.Response {
			return env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/cases/assigned/v1/"+caseID, k, `{"assignee":{"userId":"`+user+`"}}`)
		}
		// No member yet: any user id, any owner.
		if res := assign(key, stranger); res.Status != http.StatusOK {
			t.Fatalf("assign without members: %d %s", res.Status, res.Body)
		}
		bobKey := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, keysPath, key,
			`{"name":"k","owner":{"userId":"bob"},"keyPermissions":{"presets":["`+auth.FullAccess+`"]}}`)).Value
		if res := env.JSON(t, http.MethodGet, scopesPath+"/all/list", bobKey, ""); res.Status != http.StatusOK {
			t.Fatalf("a personal key while the team has no member: %d %s", res.Status, res.Body)
		}
		dana := addMember(t, env, key, team, "dana@example.com")
		apitest.ExpectError(t, assign(key, stranger), http.StatusBadRequest, "assignee.userId", "is not a member of the team")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, keysPath, key, `{"name":"k","owner":{"userId":"bob"}}`), http.StatusBadRequest,
			"owner.userId", "not a member")
		createGroup(t, env, key, `{"name":"responders","roleId":2,"userIds":["`+dana.UserID+`"]}`)
		personal := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, keysPath, key,
			`{"name":"dana","owner":{"userId":"`+dana.UserID+`"},"keyPermissions":{"presets":["`+auth.FullAccess+`"]}}`)).Value
		if res := assign(personal, dana.UserID); res.Status != http.StatusOK {
			t.Fatalf("assign a member: %d %s", res.Status, res.Body)
		}
		events := apitest.Decode[struct {
			Events []struct {
				Actor map[string]map[string]any
				Data  map[string]any
			}
		}](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+caseID+"/events", key, "")).Events
		last := events[len(events)-1]
		if last.Actor["user"]["id"] != dana.UserID {
			t.Fatalf("the member's change has the actor %v", last.Actor)
		}
		// A revoked member cannot be assigned.
		env.JSON(t, http.MethodPatch, membersPath(team)+":updateStatuses", key, fmt.Sprintf(`{"status":"USER_STATUS_INACTIVE","userAccountIds":[%d]}`, dana.UserAccountID))
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, "/mgmt/openapi/5/cases/assigned/v1", key,
			`{"ids":["`+caseID+`"],"assignee":{"userId":"`+dana.UserID+`"}}`), http.StatusBadRequest, "not active")
		// A key owned by someone who is not a member (made before members existed) holds nothing now.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, scopesPath+"/all/list", bobKey, ""), http.StatusForbidden, "team-scopes:ReadConfig")
	})
}
