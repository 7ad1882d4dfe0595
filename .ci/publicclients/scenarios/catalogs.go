package main

import (
	"mgmtapi-ci/publicclients/datausage"
	"mgmtapi-ci/publicclients/datausagequery"
	"mgmtapi-ci/publicclients/entities"
	"mgmtapi-ci/publicclients/extension"
	"mgmtapi-ci/publicclients/extensiondeployment"
)

func init() {
	// No create: the catalog is the server's. List, then read one entry of the list.
	register("extension_service", func(s *S) {
		c, err := extension.NewClientWithResponses(s.base, extension.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.ExtensionServiceGetAllExtensionsWithResponse(s.ctx, body[extension.ExtensionServiceGetAllExtensionsJSONRequestBody](s, "list", `{}`))
		list := s.must("list", r1, err, 200)
		s.typed("list", r1.JSON200)
		id := str(list, "extensions.0.id")
		if id == "" {
			s.failf("list", "no extension: %v", list)
		}
		r2, err := c.ExtensionServiceGetExtensionWithResponse(s.ctx, id, nil)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "id", id)
		s.present("read", got, "revisions.0.version")
		r3, err := c.ExtensionServiceGetExtensionWithResponse(s.ctx, "no-such-extension", nil)
		s.must("read an unknown id", r3, err, 404)
	})

	// Deploy (create), list, update, undeploy (delete).
	register("extension_deployment_service", func(s *S) {
		c, err := extensiondeployment.NewClientWithResponses(s.base, extensiondeployment.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		cat, err := extension.NewClientWithResponses(s.base, extension.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		// An extension of the catalog with a revision that has items.
		r0, err := cat.ExtensionServiceGetAllExtensionsWithResponse(s.ctx, extension.ExtensionServiceGetAllExtensionsJSONRequestBody{})
		catalog := s.must("catalog", r0, err, 200)
		var id, version, item string
		for _, e := range s.array("catalog", catalog, "extensions") {
			r, err := cat.ExtensionServiceGetExtensionWithResponse(s.ctx, str(e, "id"), nil)
			full := s.must("catalog entry", r, err, 200)
			if v, it := str(full, "revisions.0.version"), str(full, "revisions.0.items.0.id"); v != "" && it != "" {
				id, version, item = str(e, "id"), v, it
				break
			}
		}
		if id == "" {
			s.failf("catalog", "no extension with a revision that has items")
		}
		// A left-over deployment goes first.
		r1, err := c.ExtensionDeploymentServiceGetDeployedExtensionsWithResponse(s.ctx)
		deployed := s.must("list", r1, err, 200)
		for _, d := range s.array("list", deployed, "deployedExtensions") {
			if str(d, "id") == id {
				r, err := c.ExtensionDeploymentServiceUndeployExtensionWithResponse(s.ctx, extensiondeployment.ExtensionDeploymentServiceUndeployExtensionJSONRequestBody{Id: &id})
				s.must("undeploy a left-over", r, err, 200)
			}
		}

		r2, err := c.ExtensionDeploymentServiceDeployExtensionWithResponse(s.ctx, &extensiondeployment.ExtensionDeploymentServiceDeployExtensionParams{
			Id: &id, Version: &version, ItemIds: &[]string{item}, Applications: &[]string{"shop"}})
		out := s.must("deploy", r2, err, 200)
		s.typed("deploy", r2.JSON200)
		s.equal("deploy", out, "extensionDeployment.id", id)

		r3, err := c.ExtensionDeploymentServiceGetDeployedExtensionsWithResponse(s.ctx)
		deployed = s.must("list", r3, err, 200)
		s.typed("list", r3.JSON200)
		s.contains("list", deployed, "deployedExtensions", "id", id)

		r4, err := c.ExtensionDeploymentServiceUpdateExtensionWithResponse(s.ctx, &extensiondeployment.ExtensionDeploymentServiceUpdateExtensionParams{
			Id: &id, Version: &version, ItemIds: &[]string{item}, Applications: &[]string{"shop", "billing"}})
		s.must("update", r4, err, 200)
		r5, err := c.ExtensionDeploymentServiceGetDeployedExtensionsWithResponse(s.ctx)
		deployed = s.must("list after update", r5, err, 200)
		found := false
		for _, d := range s.array("list after update", deployed, "deployedExtensions") {
			if str(d, "id") == id {
				found = true
				if n := len(s.array("list after update", d, "applications")); n != 2 {
					s.failf("list after update", "the deployment has %d applications, want 2: %v", n, d)
				}
			}
		}
		if !found {
			s.failf("list after update", "%s is not deployed: %v", id, deployed)
		}

		r6, err := c.ExtensionDeploymentServiceUndeployExtensionWithResponse(s.ctx, extensiondeployment.ExtensionDeploymentServiceUndeployExtensionJSONRequestBody{Id: &id})
		s.must("undeploy", r6, err, 200)
		r7, err := c.ExtensionDeploymentServiceGetDeployedExtensionsWithResponse(s.ctx)
		deployed = s.must("list after undeploy", r7, err, 200)
		s.lacks("list after undeploy", deployed, "deployedExtensions", "id", id)
	})

	// No create: reads, and the one setting (export status) written and read back.
	register("data_usage_service", func(s *S) {
		c, err := datausage.NewClientWithResponses(s.base, datausage.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.DataUsageServiceGetDataUsageWithResponse(s.ctx, nil)
		got := s.must("read usage", r1, err, 200)
		s.typed("read usage", r1.JSON200)
		s.array("read usage", got, "entries")

		for _, daily := range []struct {
			step string
			call func(string) (any, any, error)
		}{
			{"daily units", func(text string) (any, any, error) {
				r, err := c.DataUsageServiceGetDailyUsageUnitsWithResponse(s.ctx, body[datausage.DataUsageServiceGetDailyUsageUnitsJSONRequestBody](s, "daily units", text))
				if r == nil {
					return nil, nil, err
				}
				return r, r.JSON200, err
			}},
			{"daily processed GBs", func(text string) (any, any, error) {
				r, err := c.DataUsageServiceGetDailyUsageProcessedGbsWithResponse(s.ctx, body[datausage.DataUsageServiceGetDailyUsageProcessedGbsJSONRequestBody](s, "daily processed GBs", text))
				if r == nil {
					return nil, nil, err
				}
				return r, r.JSON200, err
			}},
			{"daily evaluation tokens", func(text string) (any, any, error) {
				r, err := c.DataUsageServiceGetDailyUsageEvaluationTokensWithResponse(s.ctx, body[datausage.DataUsageServiceGetDailyUsageEvaluationTokensJSONRequestBody](s, "daily evaluation tokens", text))
				if r == nil {
					return nil, nil, err
				}
				return r, r.JSON200, err
			}},
		} {
			r, typed, err := daily.call(`{"range":"RANGE_CURRENT_MONTH"}`)
			s.must(daily.step, r, err, 200)
			s.typed(daily.step, typed)
		}

		r2, err := c.DataUsageServiceGetLogsCountWithResponse(s.ctx, nil)
		s.must("logs count", r2, err, 200)
		s.typed("logs count", r2.JSON200)
		r3, err := c.DataUsageServiceGetSpansCountWithResponse(s.ctx, nil)
		s.must("spans count", r3, err, 200)
		s.typed("spans count", r3.JSON200)

		r4, err := c.DataUsageServiceGetDataUsageMetricsExportStatusWithResponse(s.ctx)
		was := s.must("read export status", r4, err, 200)
		s.typed("read export status", r4.JSON200)
		enabled := str(was, "enabled") == "true"
		for _, want := range []bool{!enabled, enabled} {
			r5, err := c.DataUsageServiceUpdateDataUsageMetricsExportStatusWithResponse(s.ctx, datausage.DataUsageServiceUpdateDataUsageMetricsExportStatusJSONRequestBody{Enabled: ptr(want)})
			s.must("update export status", r5, err, 200)
			r6, err := c.DataUsageServiceGetDataUsageMetricsExportStatusWithResponse(s.ctx)
			got := s.must("read export status after update", r6, err, 200)
			// proto3 JSON may leave a false out.
			if (str(got, "enabled") == "true") != want {
				s.failf("read export status after update", "enabled is %v, want %v", get(got, "enabled"), want)
			}
		}
	})

	register("data_usage_query_service", func(s *S) {
		c, err := datausagequery.NewClientWithResponses(s.base, datausagequery.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.DataUsageQueryServiceGetDataUsageCapabilitiesWithResponse(s.ctx)
		got := s.must("capabilities", r1, err, 200)
		s.typed("capabilities", r1.JSON200)
		s.present("capabilities", got, "supportedMeasurements")

		r2, err := c.DataUsageQueryServiceDataUsageWithResponse(s.ctx, body[datausagequery.DataUsageQueryServiceDataUsageJSONRequestBody](s, "query",
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":3}}}}`))
		got = s.must("query", r2, err, 200)
		s.typed("query", r2.JSON200)
		if n := len(s.array("query", got, "buckets")); n != 3 {
			s.failf("query", "%d buckets for 3 days, want 3: %v", n, got)
		}
	})

	register("entities_service", func(s *S) {
		c, err := entities.NewClientWithResponses(s.base, entities.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.EntitiesServiceListEntityTypesWithResponse(s.ctx)
		got := s.must("list entity types", r1, err, 200)
		s.typed("list entity types", r1.JSON200)
		types := s.array("list entity types", got, "entityTypes")
		if len(types) == 0 {
			s.failf("list entity types", "no entity type: %v", got)
		}
		for _, t := range types {
			et := entities.NotificationCenterEntityType(t.(string))
			r2, err := c.EntitiesServiceListEntitySubTypesWithResponse(s.ctx, et)
			s.must("list subtypes of "+string(et), r2, err, 200)
			s.typed("list subtypes of "+string(et), r2.JSON200)
			r3, err := c.EntitiesServiceListEntityTypeAttachmentTypesWithResponse(s.ctx, et)
			s.must("list attachment types of "+string(et), r3, err, 200)
			s.typed("list attachment types of "+string(et), r3.JSON200)
		}
	})
}
