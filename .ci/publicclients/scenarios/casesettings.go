package main

import "mgmtapi-ci/publicclients/casesettings"

func init() {
	register("case_settings_service", func(s *S) {
		c, err := casesettings.NewClientWithResponses(s.base, casesettings.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r0, err := c.CaseSettingsServiceGetSystemDefaultCaseSettingsWithResponse(s.ctx)
		defaults := s.must("system defaults", r0, err, 200)
		s.typed("system defaults", r0.JSON200)
		if n := len(s.array("system defaults", defaults, "caseLifecycle.kpi.thresholds")); n != 15 {
			s.failf("system defaults", "%d KPI thresholds, want one per KPI type and priority (15)", n)
		}

		name := unique("case settings")
		create := `{"name":"` + name + `","globalIndicatorSettings":{"enabled":true},"caseLifecycle":{"kpi":{"thresholds":[` +
			`{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P1","threshold":"300s","enabled":true}]}}}`
		r1, err := c.CaseSettingsServiceCreateCaseSettingsWithResponse(s.ctx,
			body[casesettings.CaseSettingsServiceCreateCaseSettingsJSONRequestBody](s, "create", create))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "caseSettings.id")
		s.equal("create", out, "caseSettings.name", name)

		r2, err := c.CaseSettingsServiceCreateCaseSettingsWithResponse(s.ctx,
			body[casesettings.CaseSettingsServiceCreateCaseSettingsJSONRequestBody](s, "create a second", `{"globalIndicatorSettings":{}}`))
		s.must("create a second (one per team)", r2, err, 409)

		r3, err := c.CaseSettingsServiceGetCaseSettingsWithResponse(s.ctx, id)
		got := s.must("read", r3, err, 200)
		s.typed("read", r3.JSON200)
		s.equal("read", got, "caseSettings.name", name)
		r4, err := c.CaseSettingsServiceGetActiveCaseSettingsWithResponse(s.ctx)
		s.equal("read the active one", s.must("read the active one", r4, err, 200), "caseSettings.id", id)

		r5, err := c.CaseSettingsServiceUpdateCaseSettingsWithResponse(s.ctx, id,
			body[casesettings.CaseSettingsServiceUpdateCaseSettingsJSONRequestBody](s, "update", `{"name":"`+name+`-2"}`))
		s.must("update", r5, err, 200)
		s.typed("update", r5.JSON200)
		r6, err := c.CaseSettingsServiceGetCaseSettingsWithResponse(s.ctx, id)
		got = s.must("read after update", r6, err, 200)
		s.equal("read after update", got, "caseSettings.name", name+"-2")
		s.equal("read after update (the thresholds stay)", got, "caseSettings.caseLifecycle.kpi.thresholds.0.threshold", "300s")

		r7, err := c.CaseSettingsServiceDeleteCaseSettingsWithResponse(s.ctx, id)
		s.must("delete", r7, err, 200)
		r8, err := c.CaseSettingsServiceGetCaseSettingsWithResponse(s.ctx, id)
		s.must("read after delete", r8, err, 404)
		r9, err := c.CaseSettingsServiceGetActiveCaseSettingsWithResponse(s.ctx)
		s.must("read the active one after delete", r9, err, 404)
	})
}
