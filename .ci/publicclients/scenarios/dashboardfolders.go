package main

import "mgmtapi-ci/publicclients/dashboardfolders"

func init() {
	register("dashboard_folders_service", func(s *S) {
		c, err := dashboardfolders.NewClientWithResponses(s.base, dashboardfolders.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		parentName, childName := unique("folder"), unique("subfolder")
		r1, err := c.DashboardFoldersServiceCreateDashboardFolderWithResponse(s.ctx,
			body[dashboardfolders.DashboardFoldersServiceCreateDashboardFolderJSONRequestBody](s, "create", `{"folder":{"name":"`+parentName+`"}}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		parent := str(out, "folderId")
		r2, err := c.DashboardFoldersServiceCreateDashboardFolderWithResponse(s.ctx,
			body[dashboardfolders.DashboardFoldersServiceCreateDashboardFolderJSONRequestBody](s, "create inside",
				`{"folder":{"name":"`+childName+`","parentId":"`+parent+`"}}`))
		child := str(s.must("create inside", r2, err, 200), "folderId")

		r3, err := c.DashboardFoldersServiceGetDashboardFolderWithResponse(s.ctx, child, nil)
		got := s.must("read", r3, err, 200)
		s.typed("read", r3.JSON200)
		s.equal("read", got, "folder.name", childName)
		s.equal("read", got, "folder.parentId", parent)

		r4, err := c.DashboardFoldersServiceReplaceDashboardFolderWithResponse(s.ctx,
			body[dashboardfolders.DashboardFoldersServiceReplaceDashboardFolderJSONRequestBody](s, "update",
				`{"folder":{"id":"`+child+`","name":"`+childName+`-2","parentId":"`+parent+`"}}`))
		s.must("update", r4, err, 200)
		r5, err := c.DashboardFoldersServiceGetDashboardFolderWithResponse(s.ctx, child, nil)
		got = s.must("read after update", r5, err, 200)
		s.equal("read after update", got, "folder.name", childName+"-2")

		r6, err := c.DashboardFoldersServiceListDashboardFoldersWithResponse(s.ctx)
		list := s.must("list", r6, err, 200)
		s.typed("list", r6.JSON200)
		s.contains("list", list, "folder", "id", parent)
		s.contains("list", list, "folder", "id", child)

		r7, err := c.DashboardFoldersServiceDeleteDashboardFolderWithResponse(s.ctx, child, nil)
		s.must("delete", r7, err, 200)
		r8, err := c.DashboardFoldersServiceGetDashboardFolderWithResponse(s.ctx, child, nil)
		s.must("read after delete", r8, err, 404)
		r9, err := c.DashboardFoldersServiceDeleteDashboardFolderWithResponse(s.ctx, parent, nil)
		s.must("delete the parent", r9, err, 200)
		r10, err := c.DashboardFoldersServiceListDashboardFoldersWithResponse(s.ctx)
		s.lacks("list after delete", s.must("list after delete", r10, err, 200), "folder", "id", parent)
	})
}
