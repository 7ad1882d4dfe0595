package main

import (
	"strconv"

	"mgmtapi-ci/publicclients/apikeys"
	"mgmtapi-ci/publicclients/rolemanagement"
)

func init() {
	register("api_keys_service", func(s *S) {
		c, err := apikeys.NewClientWithResponses(s.base, apikeys.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("key")
		r1, err := c.ApiKeysServiceCreateApiKeyWithResponse(s.ctx, body[apikeys.ApiKeysServiceCreateApiKeyJSONRequestBody](s, "create",
			`{"name":"`+name+`","keyPermissions":{"permissions":["data-usage:Read"]},"hashed":false}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "keyId")
		s.equal("create", out, "name", name)
		s.present("create", out, "value")

		r2, err := c.ApiKeysServiceGetApiKeyWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "keyInfo.name", name)
		s.equal("read", got, "keyInfo.keyPermissions.permissions.0", "data-usage:Read")

		r3, err := c.ApiKeysServiceUpdateApiKeyWithResponse(s.ctx, id, body[apikeys.ApiKeysServiceUpdateApiKeyJSONRequestBody](s, "update",
			`{"newName":"`+name+`-2","isActive":false}`))
		s.must("update", r3, err, 200)
		r4, err := c.ApiKeysServiceGetApiKeyWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "keyInfo.name", name+"-2")
		s.equal("read after update", got, "keyInfo.active", "false")

		r5, err := c.ApiKeysServiceGetApiKeysWithResponse(s.ctx)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "keys", "id", id)

		r6, err := c.ApiKeysServiceGetSendDataApiKeysWithResponse(s.ctx)
		s.must("list send-data keys", r6, err, 200)

		r7, err := c.ApiKeysServiceDeleteApiKeyWithResponse(s.ctx, id)
		s.must("delete", r7, err, 200)
		r8, err := c.ApiKeysServiceGetApiKeyWithResponse(s.ctx, id)
		s.must("read after delete", r8, err, 404)
	})

	// The public permission names, written the way clients write them (issue 24 §3).
	register("api_keys_service:public-permissions", func(s *S) {
		c, err := apikeys.NewClientWithResponses(s.base, apikeys.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		for _, perm := range []string{"alerts-map:Read", "ALERTS-MAP:READ"} {
			step := "create with " + perm
			r1, err := c.ApiKeysServiceCreateApiKeyWithResponse(s.ctx, body[apikeys.ApiKeysServiceCreateApiKeyJSONRequestBody](s, step,
				`{"name":"`+unique("key")+`","keyPermissions":{"permissions":["`+perm+`"]},"hashed":false}`))
			out := s.must(step, r1, err, 200)
			r2, err := c.ApiKeysServiceDeleteApiKeyWithResponse(s.ctx, str(out, "keyId"))
			s.must("delete", r2, err, 200)
		}
	})

	register("role_management_service", func(s *S) {
		c, err := rolemanagement.NewClientWithResponses(s.base, rolemanagement.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r0, err := c.RoleManagementServiceListSystemRolesWithResponse(s.ctx)
		system := s.must("list system roles", r0, err, 200)
		s.typed("list system roles", r0.JSON200)
		parent := str(system, "roles.0.roleId")
		if parent == "" {
			s.failf("list system roles", "no system role: %v", system)
		}
		name := unique("role")
		r1, err := c.RoleManagementServiceCreateRoleWithResponse(s.ctx, body[rolemanagement.RoleManagementServiceCreateRoleJSONRequestBody](s, "create",
			`{"name":"`+name+`","description":"scenario","parentRoleId":`+parent+`,"permissions":["data-usage:Read"]}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		idText := str(out, "id")
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			s.failf("create", "id %q is not an int64", idText)
		}

		r2, err := c.RoleManagementServiceGetCustomRoleWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "role.name", name)
		s.equal("read", got, "role.description", "scenario")
		s.equal("read", got, "role.permissions.0", "data-usage:Read")

		r3, err := c.RoleManagementServiceUpdateRoleWithResponse(s.ctx, id, body[rolemanagement.RoleManagementServiceUpdateRoleJSONRequestBody](s, "update",
			`{"newName":"`+name+`-2","newDescription":"scenario 2","newPermissions":{"permissions":["data-usage:Read","data-usage:Manage"]}}`))
		s.must("update", r3, err, 200)
		r4, err := c.RoleManagementServiceGetCustomRoleWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "role.name", name+"-2")
		s.equal("read after update", got, "role.description", "scenario 2")
		if n := len(s.array("read after update", got, "role.permissions")); n != 2 {
			s.failf("read after update", "role.permissions has %d names, want 2: %v", n, got)
		}

		r5, err := c.RoleManagementServiceListCustomRolesWithResponse(s.ctx, nil)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "roles", "roleId", idText)

		r6, err := c.RoleManagementServiceDeleteRoleWithResponse(s.ctx, id)
		s.mustOneOf("delete", r6, err, 200, 204) // the document names both
		r7, err := c.RoleManagementServiceGetCustomRoleWithResponse(s.ctx, id)
		s.must("read after delete", r7, err, 404)
	})

	// The newest document lets a custom role be created without a parent role (issue 24 §2).
	register("role_management_service:without-parent", func(s *S) {
		c, err := rolemanagement.NewClientWithResponses(s.base, rolemanagement.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.RoleManagementServiceCreateRoleWithResponse(s.ctx, body[rolemanagement.RoleManagementServiceCreateRoleJSONRequestBody](s, "create",
			`{"name":"`+unique("role")+`","description":"no parent","permissions":["data-usage:Read"]}`))
		out := s.must("create", r1, err, 200)
		id, err := strconv.ParseInt(str(out, "id"), 10, 64)
		if err != nil {
			s.failf("create", "id %q is not an int64", str(out, "id"))
		}
		r2, err := c.RoleManagementServiceDeleteRoleWithResponse(s.ctx, id)
		s.mustOneOf("delete", r2, err, 200, 204)
	})
}
