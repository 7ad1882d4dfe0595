package main

import "mgmtapi-ci/publicclients/integration"

func init() {
	// The registration the vendor's Terraform provider makes (its example: aws-metrics-collector
	// 0.1.0, parameters by name): the catalog, the definition, a test, the save, the read of the
	// deployed instance, the details, an update, the managed status and keys, a template, the RUM
	// versions of a registered RUM application and the sync, the delete.
	register("integration_service", func(s *S) {
		c, err := integration.NewClientWithResponses(s.base, integration.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		step := "list the catalog"
		r1, err := c.IntegrationServiceGetIntegrationsWithResponse(s.ctx, &integration.IntegrationServiceGetIntegrationsParams{})
		got := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		s.contains(step, got, "integrations", "integration.id", "aws-metrics-collector")

		step = "read a definition"
		r2, err := c.IntegrationServiceGetIntegrationDefinitionWithResponse(s.ctx, "aws-metrics-collector", &integration.IntegrationServiceGetIntegrationDefinitionParams{})
		got = s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.equal(step, got, "integrationDefinition.key", "aws-metrics-collector")
		s.contains(step, got, "integrationDefinition.revisions", "id", "0.1.0")

		name := unique("sdk-integration")
		metadata := func(region string) string {
			return `{"integrationKey":"aws-metrics-collector","version":"0.1.0","integrationParameters":{"parameters":[` +
				`{"key":"ApplicationName","stringValue":"cxsdk"},{"key":"SubsystemName","stringValue":"aws-metrics-collector"},` +
				`{"key":"MetricNamespaces","stringList":{"values":["AWS/S3"]}},{"key":"AwsRoleArn","stringValue":"arn:aws:iam::123456789012:role/example-role"},` +
				`{"key":"IntegrationName","stringValue":"` + name + `"},{"key":"AwsRegion","stringValue":"` + region + `"},` +
				`{"key":"WithAggregations","booleanValue":false},{"key":"EnrichWithTags","booleanValue":true}]}}`
		}
		step = "test the registration"
		r3, err := c.IntegrationServiceTestIntegrationWithResponse(s.ctx,
			body[integration.IntegrationServiceTestIntegrationJSONRequestBody](s, step, `{"integrationData":`+metadata("eu-north-1")+`}`))
		got = s.must(step, r3, err, 200)
		s.typed(step, r3.JSON200)
		s.present(step, got, "result.success")

		step = "register"
		r4, err := c.IntegrationServiceSaveIntegrationWithResponse(s.ctx,
			body[integration.IntegrationServiceSaveIntegrationJSONRequestBody](s, step, `{"metadata":`+metadata("eu-north-1")+`}`))
		got = s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		id := str(got, "integrationId")
		if id == "" {
			s.failf(step, "no integrationId: %v", got)
		}

		step = "read the deployed instance"
		r5, err := c.IntegrationServiceGetDeployedIntegrationWithResponse(s.ctx, id)
		got = s.must(step, r5, err, 200)
		s.typed(step, r5.JSON200)
		s.equal(step, got, "integration.id", id)
		s.equal(step, got, "integration.definitionKey", "aws-metrics-collector")
		s.equal(step, got, "integration.definitionVersion", "0.1.0")
		s.contains(step, got, "integration.parameters", "stringValue", name)

		step = "read the details"
		r6, err := c.IntegrationServiceGetIntegrationDetailsWithResponse(s.ctx, "aws-metrics-collector", &integration.IntegrationServiceGetIntegrationDetailsParams{})
		got = s.must(step, r6, err, 200)
		s.typed(step, r6.JSON200)
		s.contains(step, got, "integrationDetail.default.registered", "id", id)

		step = "update"
		r7, err := c.IntegrationServiceUpdateIntegrationWithResponse(s.ctx,
			body[integration.IntegrationServiceUpdateIntegrationJSONRequestBody](s, step, `{"id":"`+id+`","metadata":`+metadata("us-east-1")+`}`))
		s.must(step, r7, err, 200)
		r8, err := c.IntegrationServiceGetDeployedIntegrationWithResponse(s.ctx, id)
		got = s.must(step, r8, err, 200)
		s.contains(step, got, "integration.parameters", "stringValue", "us-east-1")

		step = "read the managed status"
		r9, err := c.IntegrationServiceGetManagedIntegrationStatusWithResponse(s.ctx, id)
		got = s.must(step, r9, err, 200)
		s.typed(step, r9.JSON200)
		s.equal(step, got, "integrationId", id)
		s.equal(step, got, "status.connectionStatus", "ACTIVE")
		step = "list the managed integration keys"
		r10, err := c.IntegrationServiceListManagedIntegrationKeysWithResponse(s.ctx)
		s.must(step, r10, err, 200)
		s.typed(step, r10.JSON200)

		step = "read a template"
		r11, err := c.IntegrationServiceGetTemplateWithResponse(s.ctx, &integration.IntegrationServiceGetTemplateParams{IntegrationId: ptr("aws-sqs")})
		got = s.must(step, r11, err, 200)
		s.typed(step, r11.JSON200)
		s.present(step, got, "templateUrl")

		step = "register a RUM application version"
		app := unique("shop")
		r12, err := c.IntegrationServiceSaveIntegrationWithResponse(s.ctx, body[integration.IntegrationServiceSaveIntegrationJSONRequestBody](s, step,
			`{"metadata":{"integrationKey":"rum-browser","version":"1.0.0","integrationParameters":{"parameters":[`+
				`{"key":"ApplicationName","stringValue":"`+app+`"},{"key":"Version","stringValue":"1.2.3"}]}}}`))
		rum := str(s.must(step, r12, err, 200), "integrationId")
		step = "read the RUM versions"
		r13, err := c.IntegrationServiceGetRumApplicationVersionDataWithResponse(s.ctx, &integration.IntegrationServiceGetRumApplicationVersionDataParams{ApplicationName: ptr(app)})
		got = s.must(step, r13, err, 200)
		s.typed(step, r13.JSON200)
		s.equal(step, got, "versionData.versions.0.version", "1.2.3")
		step = "sync the RUM data"
		r14, err := c.IntegrationServiceSyncRumDataWithResponse(s.ctx, body[integration.IntegrationServiceSyncRumDataJSONRequestBody](s, step, `{"force":true}`))
		got = s.must(step, r14, err, 200)
		s.typed(step, r14.JSON200)
		s.equal(step, got, "syncExecuted", "false")

		for _, x := range []string{id, rum} {
			step = "delete"
			r15, err := c.IntegrationServiceDeleteIntegrationWithResponse(s.ctx, x)
			s.must(step, r15, err, 200)
			r16, err := c.IntegrationServiceGetDeployedIntegrationWithResponse(s.ctx, x)
			s.must(step, r16, err, 404)
		}
	})
}
