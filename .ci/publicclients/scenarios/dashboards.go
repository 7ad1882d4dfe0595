package main

import (
	"mgmtapi-ci/publicclients/dashboard"
	"mgmtapi-ci/publicclients/dashboardfolders"
	"mgmtapi-ci/publicclients/presets"
)

func init() {
	register("dashboard_service", func(s *S) {
		c, err := dashboard.NewClientWithResponses(s.base, dashboard.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("dashboard")
		const section = "0b7e8c1a-3f2d-4e5f-9a6b-7c8d9e0f1a2b"
		dash := func(idField, name, description string) string {
			return `{` + idField + `"name":"` + name + `","description":"` + description + `","relativeTimeFrame":"900s",
				"layout":{"sections":[{"id":{"value":"` + section + `"},"rows":[]}]},"variables":[],"filters":[]}`
		}
		r1, err := c.DashboardsServiceCreateDashboardWithResponse(s.ctx, body[dashboard.DashboardsServiceCreateDashboardJSONRequestBody](s, "create",
			`{"requestId":"`+unique("r")+`","dashboard":`+dash("", name, "scenario")+`}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "dashboardId")
		if id == "" {
			s.failf("create", "no dashboardId: %v", out)
		}

		r2, err := c.DashboardsServiceGetDashboardWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "dashboard.name", name)
		s.equal("read", got, "dashboard.description", "scenario")
		s.equal("read", got, "dashboard.layout.sections.0.id.value", section)

		r3, err := c.DashboardsServiceReplaceDashboardWithResponse(s.ctx, body[dashboard.DashboardsServiceReplaceDashboardJSONRequestBody](s, "update",
			`{"requestId":"`+unique("r")+`","dashboard":`+dash(`"id":"`+id+`",`, name+"-2", "scenario 2")+`}`))
		s.must("update", r3, err, 200)
		r4, err := c.DashboardsServiceGetDashboardWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "dashboard.name", name+"-2")
		s.equal("read after update", got, "dashboard.description", "scenario 2")

		r5, err := c.DashboardCatalogServiceGetDashboardCatalogWithResponse(s.ctx)
		list := s.must("list (catalog)", r5, err, 200)
		s.typed("list (catalog)", r5.JSON200)
		s.contains("list (catalog)", list, "items", "id", id)

		r6, err := c.DashboardsServicePinDashboardWithResponse(s.ctx, id, nil)
		s.must("pin", r6, err, 200)
		r7, err := c.DashboardsServiceUnpinDashboardWithResponse(s.ctx, id, nil)
		s.must("unpin", r7, err, 200)

		r8, err := c.DashboardsServiceDeleteDashboardWithResponse(s.ctx, id, nil)
		s.must("delete", r8, err, 200)
		r9, err := c.DashboardsServiceGetDashboardWithResponse(s.ctx, id)
		s.must("read after delete", r9, err, 404)
		r10, err := c.DashboardCatalogServiceGetDashboardCatalogWithResponse(s.ctx)
		list = s.must("list after delete", r10, err, 200)
		s.lacks("list after delete", list, "items", "id", id)

		// Placed by the folderPath of an existing folder, a dashboard answers that folder's folderId
		// too; a layout row without an id is a 400, as a section without one is (issue 38).
		fc, err := dashboardfolders.NewClientWithResponses(s.base, dashboardfolders.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("folders client", "%v", err)
		}
		folderName := unique("rc-folder")
		r11, err := fc.DashboardFoldersServiceCreateDashboardFolderWithResponse(s.ctx,
			body[dashboardfolders.DashboardFoldersServiceCreateDashboardFolderJSONRequestBody](s, "create a folder", `{"folder":{"name":"`+folderName+`"}}`))
		folder := str(s.must("create a folder", r11, err, 200), "folderId")
		r12, err := c.DashboardsServiceCreateDashboardWithResponse(s.ctx, body[dashboard.DashboardsServiceCreateDashboardJSONRequestBody](s, "create by folderPath",
			`{"requestId":"`+unique("r")+`","dashboard":{"name":"`+name+`-placed","folderPath":{"segments":["`+folderName+`"]},
				"layout":{"sections":[{"id":{"value":"`+section+`"},"rows":[]}]},"variables":[],"filters":[]}}`))
		placed := str(s.must("create by folderPath", r12, err, 200), "dashboardId")
		r13, err := c.DashboardsServiceGetDashboardWithResponse(s.ctx, placed)
		got = s.must("read the placed one", r13, err, 200)
		s.equal("read the placed one", got, "dashboard.folderId.value", folder)
		s.equal("read the placed one", got, "dashboard.folderPath.segments.0", folderName)
		r14, err := c.DashboardsServiceCreateDashboardWithResponse(s.ctx, body[dashboard.DashboardsServiceCreateDashboardJSONRequestBody](s, "create with a row without id",
			`{"requestId":"`+unique("r")+`","dashboard":{"name":"`+name+`-rows",
				"layout":{"sections":[{"id":{"value":"`+section+`"},"rows":[{"widgets":[]}]}]},"variables":[],"filters":[]}}`))
		s.must("create with a row without id", r14, err, 400)
		r15, err := c.DashboardsServiceDeleteDashboardWithResponse(s.ctx, placed, nil)
		s.must("delete the placed one", r15, err, 200)
		r16, err := fc.DashboardFoldersServiceDeleteDashboardFolderWithResponse(s.ctx, folder, nil)
		s.must("delete the folder", r16, err, 200)
	})

	register("presets_service", func(s *S) {
		c, err := presets.NewClientWithResponses(s.base, presets.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("preset")
		r1, err := c.PresetsServiceCreateCustomPresetWithResponse(s.ctx, body[presets.PresetsServiceCreateCustomPresetJSONRequestBody](s, "create",
			`{"preset":{"name":"`+name+`","description":"scenario","connectorType":"SLACK","entityType":"CASES"}}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "preset.id")
		s.equal("create", out, "preset.name", name)

		r2, err := c.PresetsServiceGetPresetWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "preset.name", name)
		s.equal("read", got, "preset.connectorType", "SLACK")
		s.equal("read", got, "preset.entityType", "CASES")

		r3, err := c.PresetsServiceReplaceCustomPresetWithResponse(s.ctx, body[presets.PresetsServiceReplaceCustomPresetJSONRequestBody](s, "update",
			`{"preset":{"id":"`+id+`","name":"`+name+`-2","description":"scenario 2","connectorType":"SLACK","entityType":"CASES"}}`))
		s.must("update", r3, err, 200)
		r4, err := c.PresetsServiceGetPresetWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "preset.name", name+"-2")
		s.equal("read after update", got, "preset.description", "scenario 2")

		slack, cases := presets.NotificationCenterConnectorType("SLACK"), presets.NotificationCenterEntityType("CASES")
		r5, err := c.PresetsServiceListPresetSummariesWithResponse(s.ctx, &presets.PresetsServiceListPresetSummariesParams{ConnectorType: &slack, EntityType: &cases})
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "presetSummaries", "id", id)

		r6, err := c.PresetsServiceBatchGetPresetsWithResponse(s.ctx, &presets.PresetsServiceBatchGetPresetsParams{PresetIds: &[]string{id}})
		s.must("batch get", r6, err, 200)

		r7, err := c.PresetsServiceDeleteCustomPresetWithResponse(s.ctx, id)
		s.must("delete", r7, err, 200)
		r8, err := c.PresetsServiceGetPresetWithResponse(s.ctx, id)
		s.must("read after delete", r8, err, 404)
	})
}
