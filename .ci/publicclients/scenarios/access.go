package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"mgmtapi-ci/publicclients/apikeys"
	"mgmtapi-ci/publicclients/rolemanagement"
	"mgmtapi-ci/publicclients/scopes"
	"mgmtapi-ci/publicclients/teamgroupsmanagement"
	"mgmtapi-ci/publicclients/teams"
	"mgmtapi-ci/publicclients/usersmanagement"
)

// callerTeam answers the id of the key's team (the teams service's default team for a team key).
func callerTeam(s *S) int64 {
	c, err := teams.NewClientWithResponses(s.base, teams.WithRequestEditorFn(s.auth))
	if err != nil {
		s.failf("client", "%v", err)
	}
	r, err := c.TeamServiceListTeamsWithResponse(s.ctx)
	out := s.must("the caller's team", r, err, 200)
	id, err := strconv.ParseInt(str(out, "defaultTeam.teamId.id"), 10, 64)
	if err != nil {
		s.failf("the caller's team", "defaultTeam.teamId.id is not a number: %v", out)
	}
	return id
}

// addMember adds a member to the key's team and finds them by the search (the create answers {}).
func addMember(s *S, team int64, email string) (userID string, accountID int64) {
	c, err := usersmanagement.NewClientWithResponses(s.base, usersmanagement.WithRequestEditorFn(s.auth))
	if err != nil {
		s.failf("client", "%v", err)
	}
	r1, err := c.UsersMgmtServiceCreateUsersWithResponse(s.ctx, team, body[usersmanagement.UsersMgmtServiceCreateUsersJSONRequestBody](s, "create member",
		`{"onboardingMode":"ONBOARDING_MODE_NO_INVITE","userTemplate":{"username":"`+email+`","firstName":"Dana","lastName":"Levi"}}`))
	s.must("create member", r1, err, 200)
	r2, err := c.UsersMgmtServiceSearchUsersWithResponse(s.ctx, team, &usersmanagement.UsersMgmtServiceSearchUsersParams{Username: ptr(email)})
	found := s.must("search member", r2, err, 200)
	s.typed("search member", r2.JSON200)
	s.equal("search member", found, "users.0.username", email)
	s.equal("search member", found, "users.0.status", "USER_STATUS_ACTIVE")
	accountID, err = strconv.ParseInt(str(found, "users.0.userAccountId"), 10, 64)
	if err != nil {
		s.failf("search member", "userAccountId is not a number: %v", found)
	}
	return str(found, "users.0.userId"), accountID
}

func init() {
	register("teams_service", func(s *S) {
		c, err := teams.NewClientWithResponses(s.base, teams.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		own := callerTeam(s)
		name := unique("team")
		r1, err := c.TeamServiceCreateTeamInOrgWithResponse(s.ctx, body[teams.TeamServiceCreateTeamInOrgJSONRequestBody](s, "create",
			`{"teamName":"`+name+`","dailyQuota":3,"teamAdminsEmail":["lead@example.com"]}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id, err := strconv.ParseInt(str(out, "teamId.id"), 10, 64)
		if err != nil {
			s.failf("create", "teamId.id is not a number: %v", out)
		}
		// A team key reaches its own team only.
		r2, err := c.TeamServiceGetTeamWithResponse(s.ctx, own)
		got := s.must("read own team", r2, err, 200)
		s.typed("read own team", r2.JSON200)
		s.equal("read own team", got, "teamId.id", strconv.FormatInt(own, 10))
		r3, err := c.TeamServiceGetTeamWithResponse(s.ctx, id)
		s.must("read another team", r3, err, 404)
		r4, err := c.TeamServiceUpdateTeamWithResponse(s.ctx, own, body[teams.TeamServiceUpdateTeamJSONRequestBody](s, "update",
			`{"dailyQuota":7}`))
		s.must("update", r4, err, 200)
		r5, err := c.TeamServiceGetTeamWithResponse(s.ctx, own)
		got = s.must("read after update", r5, err, 200)
		s.equal("read after update", got, "dailyQuota", "7")
		r6, err := c.TeamServiceListTeamsWithResponse(s.ctx)
		list := s.must("list", r6, err, 200)
		s.typed("list", r6.JSON200)
		if n := len(s.array("list", list, "teams")); n != 1 {
			s.failf("list", "a team key lists %d teams, want its own: %v", n, list)
		}
		r7, err := c.TeamServiceDeleteTeamWithResponse(s.ctx, id)
		s.must("delete another team", r7, err, 404)
	})

	register("users_management_service", func(s *S) {
		c, err := usersmanagement.NewClientWithResponses(s.base, usersmanagement.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		team := callerTeam(s)
		email := unique("member") + "@example.com"
		userID, account := addMember(s, team, email)
		if len(userID) != 36 {
			s.failf("search member", "userId %q is not a UUID", userID)
		}
		r1, err := c.UsersMgmtServiceUpdateUsersWithResponse(s.ctx, team, body[usersmanagement.UsersMgmtServiceUpdateUsersJSONRequestBody](s, "update",
			fmt.Sprintf(`{"userAccountId":%d,"userTemplate":{"lastName":"Cohen"}}`, account)))
		s.must("update", r1, err, 200)
		s.typed("update", r1.JSON200)
		r2, err := c.UsersMgmtServiceGetUserWithResponse(s.ctx, team, account)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "user.lastName", "Cohen")
		s.equal("read", got, "user.firstName", "Dana")
		r3, err := c.UsersMgmtServiceUpdateUsersStatusesWithResponse(s.ctx, team, body[usersmanagement.UsersMgmtServiceUpdateUsersStatusesJSONRequestBody](s, "revoke",
			fmt.Sprintf(`{"status":"USER_STATUS_INACTIVE","userAccountIds":[%d]}`, account)))
		s.must("revoke", r3, err, 200)
		inactive := usersmanagement.UserStatus("USER_STATUS_INACTIVE")
		r4, err := c.UsersMgmtServiceSearchUsersWithResponse(s.ctx, team, &usersmanagement.UsersMgmtServiceSearchUsersParams{Username: ptr(email), Status: &inactive})
		found := s.must("search revoked", r4, err, 200)
		s.equal("search revoked", found, "users.0.userAccountId", strconv.FormatInt(account, 10))
		r5, err := c.UsersMgmtServiceGetUserWithResponse(s.ctx, team, 999999999)
		s.must("read a missing member", r5, err, 404)
	})

	register("scopes_service", func(s *S) {
		c, err := scopes.NewClientWithResponses(s.base, scopes.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("scope")
		r1, err := c.ScopesServiceCreateScopeWithResponse(s.ctx, body[scopes.ScopesServiceCreateScopeJSONRequestBody](s, "create",
			`{"displayName":"`+name+`","defaultExpression":"<v1>true","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"<v1>(subsystemName == 'purchases') || (subsystemName == 'signups')"}]}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "scope.id")
		s.equal("create", out, "scope.filters.0.entityType", "ENTITY_TYPE_LOGS")
		r2, err := c.ScopesServiceGetTeamScopesByIdsWithResponse(s.ctx, &scopes.ScopesServiceGetTeamScopesByIdsParams{Ids: []string{id}})
		got := s.must("read by ids", r2, err, 200)
		s.typed("read by ids", r2.JSON200)
		s.equal("read by ids", got, "scopes.0.displayName", name)
		r3, err := c.ScopesServiceUpdateScopeWithResponse(s.ctx, body[scopes.ScopesServiceUpdateScopeJSONRequestBody](s, "update",
			`{"id":"`+id+`","displayName":"`+name+`-2","defaultExpression":"<v1>false","filters":[{"entityType":"ENTITY_TYPE_SPANS","expression":"<v1>applicationName == 'shop'"}]}`))
		got = s.must("update", r3, err, 200)
		s.equal("update", got, "scope.displayName", name+"-2")
		r4, err := c.ScopesServiceGetTeamScopesWithResponse(s.ctx)
		list := s.must("list", r4, err, 200)
		s.typed("list", r4.JSON200)
		s.contains("list", list, "scopes", "id", id)
		r5, err := c.ScopesServiceCreateScopeWithResponse(s.ctx, body[scopes.ScopesServiceCreateScopeJSONRequestBody](s, "create with a bad expression",
			`{"displayName":"`+name+`-bad","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"subsystemName == 'x'"}]}`))
		s.must("create with a bad expression", r5, err, 400)
		r6, err := c.ScopesServiceDeleteScopeWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.ScopesServiceGetTeamScopesByIdsWithResponse(s.ctx, &scopes.ScopesServiceGetTeamScopesByIdsParams{Ids: []string{id}})
		got = s.must("read after delete", r7, err, 200)
		if n := len(s.array("read after delete", got, "scopes")); n != 0 {
			s.failf("read after delete", "%d scopes answered: %v", n, got)
		}
	})

	// The story: a group with a custom role and a scope, a member in it, the member's
	// personal key allowed, then refused once the member leaves the group.
	register("team_groups_management_service", func(s *S) {
		c, err := teamgroupsmanagement.NewClientWithResponses(s.base, teamgroupsmanagement.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		roles, err := rolemanagement.NewClientWithResponses(s.base, rolemanagement.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		sc, err := scopes.NewClientWithResponses(s.base, scopes.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		keys, err := apikeys.NewClientWithResponses(s.base, apikeys.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		team := callerTeam(s)
		r0, err := roles.RoleManagementServiceCreateRoleWithResponse(s.ctx, body[rolemanagement.RoleManagementServiceCreateRoleJSONRequestBody](s, "create role",
			`{"name":"`+unique("group-reader")+`","description":"reads groups","permissions":["team-groups:ReadConfig"]}`))
		role := str(s.must("create role", r0, err, 200), "id")
		r1, err := sc.ScopesServiceCreateScopeWithResponse(s.ctx, body[scopes.ScopesServiceCreateScopeJSONRequestBody](s, "create scope",
			`{"displayName":"`+unique("scope")+`","filters":[{"entityType":"ENTITY_TYPE_LOGS","expression":"<v1>subsystemName == 'purchases'"}]}`))
		scope := str(s.must("create scope", r1, err, 200), "scope.id")
		userID, _ := addMember(s, team, unique("responder")+"@example.com")

		name := unique("group")
		r2, err := c.GroupsMgmtServiceCreateTeamGroupWithResponse(s.ctx, body[teamgroupsmanagement.GroupsMgmtServiceCreateTeamGroupJSONRequestBody](s, "create",
			`{"name":"`+name+`","description":"responders","groupType":"GROUP_TYPE_OPEN","roleId":`+role+`,"scope":{"scopeId":"`+scope+`"},"userIds":["`+userID+`"]}`))
		out := s.must("create", r2, err, 200)
		s.typed("create", r2.JSON200)
		s.equal("create", out, "group.role.roleId", role)
		s.equal("create", out, "group.scope.scopeId", scope)
		groupID, err := strconv.ParseInt(str(out, "group.groupId"), 10, 64)
		if err != nil {
			s.failf("create", "groupId is not a number: %v", out)
		}

		r3, err := keys.ApiKeysServiceCreateApiKeyWithResponse(s.ctx, body[apikeys.ApiKeysServiceCreateApiKeyJSONRequestBody](s, "personal key",
			`{"name":"`+unique("personal")+`","owner":{"userId":"`+userID+`"},"keyPermissions":{"permissions":["team-groups:ReadConfig","team-members:ReadConfig"]},"hashed":false}`))
		personal := str(s.must("personal key", r3, err, 200), "value")
		asMember := teamgroupsmanagement.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+personal)
			return nil
		})
		member, err := teamgroupsmanagement.NewClientWithResponses(s.base, asMember)
		if err != nil {
			s.failf("client", "%v", err)
		}
		r4, err := member.GroupsMgmtServiceGetTeamGroupWithResponse(s.ctx, groupID)
		got := s.must("the member's key reads the group", r4, err, 200)
		s.typed("the member's key reads the group", r4.JSON200)
		s.equal("the member's key reads the group", got, "group.name", name)

		r5, err := c.GroupsMgmtServiceGetGroupUsersWithResponse(s.ctx, groupID, &teamgroupsmanagement.GroupsMgmtServiceGetGroupUsersParams{})
		users := s.must("group users", r5, err, 200)
		s.typed("group users", r5.JSON200)
		s.equal("group users", users, "users.0.userId", userID)
		r6, err := c.GroupsMgmtServiceGetTeamGroupByNameWithResponse(s.ctx, name)
		got = s.must("read by name", r6, err, 200)
		s.equal("read by name", got, "group.groupId", strconv.FormatInt(groupID, 10))
		r7, err := c.GroupsMgmtServiceGetTeamGroupsWithResponse(s.ctx, &teamgroupsmanagement.GroupsMgmtServiceGetTeamGroupsParams{})
		list := s.must("list", r7, err, 200)
		s.typed("list", r7.JSON200)
		s.contains("list", list, "groups", "name", name)

		// The member leaves the group: their key is refused at its next request.
		r8, err := c.GroupsMgmtServiceUpdateTeamGroupWithResponse(s.ctx, groupID, body[teamgroupsmanagement.GroupsMgmtServiceUpdateTeamGroupJSONRequestBody](s, "remove member",
			`{"userUpdates":{"operation":{"remove":{"userIds":["`+userID+`"]}}}}`))
		s.must("remove member", r8, err, 200)
		r9, err := member.GroupsMgmtServiceGetTeamGroupWithResponse(s.ctx, groupID)
		s.must("the member's key after leaving the group", r9, err, 403)

		r10, err := c.GroupsMgmtServiceDeleteTeamGroupWithResponse(s.ctx, groupID)
		got = s.must("delete", r10, err, 200)
		s.equal("delete", got, "groupId", strconv.FormatInt(groupID, 10))
		r11, err := c.GroupsMgmtServiceGetTeamGroupWithResponse(s.ctx, groupID)
		s.must("read after delete", r11, err, 404)
	})
}
