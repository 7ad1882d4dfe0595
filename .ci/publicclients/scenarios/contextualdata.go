package main

import (
	"strings"

	"mgmtapi-ci/publicclients/contextualdataintegration"
)

func init() {
	// A contextual data integration with a secret: the catalog, the definition, the save, the
	// details (the secret answered as the placeholder), an update that sends the placeholder back,
	// a test of the stored instance, the delete.
	register("contextual_data_integration_service", func(s *S) {
		c, err := contextualdataintegration.NewClientWithResponses(s.base, contextualdataintegration.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		step := "list the catalog"
		r1, err := c.ContextualDataIntegrationServiceGetContextualDataIntegrationsWithResponse(s.ctx,
			&contextualdataintegration.ContextualDataIntegrationServiceGetContextualDataIntegrationsParams{})
		got := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		s.contains(step, got, "integrations", "integration.id", "github-contextual-data")

		step = "read a definition"
		r2, err := c.ContextualDataIntegrationServiceGetContextualDataIntegrationDefinitionWithResponse(s.ctx, "github-contextual-data",
			&contextualdataintegration.ContextualDataIntegrationServiceGetContextualDataIntegrationDefinitionParams{})
		got = s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.equal(step, got, "integrationDefinition.key", "github-contextual-data")

		name := unique("github-events")
		metadata := func(token string) string {
			return `{"integrationKey":"github-contextual-data","version":"1.0.0","integrationParameters":{"parameters":[` +
				`{"key":"IntegrationName","stringValue":"` + name + `"},{"key":"ApplicationName","stringValue":"github"},` +
				`{"key":"SubsystemName","stringValue":"events"},{"key":"GithubToken",` + token + `}]}}`
		}
		step = "register"
		r3, err := c.ContextualDataIntegrationServiceSaveContextualDataIntegrationWithResponse(s.ctx,
			body[contextualdataintegration.ContextualDataIntegrationServiceSaveContextualDataIntegrationJSONRequestBody](s, step,
				`{"metadata":`+metadata(`"stringValue":"ghp_scenario_secret"`)+`}`))
		got = s.must(step, r3, err, 200)
		s.typed(step, r3.JSON200)
		id := str(got, "integrationId")
		if id == "" {
			s.failf(step, "no integrationId: %v", got)
		}

		step = "read the details"
		r4, err := c.ContextualDataIntegrationServiceGetContextualDataIntegrationDetailsWithResponse(s.ctx, "github-contextual-data",
			&contextualdataintegration.ContextualDataIntegrationServiceGetContextualDataIntegrationDetailsParams{})
		got = s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		s.contains(step, got, "integrationDetail.default.registered", "id", id)
		if strings.Contains(string(r4.Body), "ghp_scenario_secret") {
			s.failf(step, "the secret is answered")
		}

		step = "update, the secret sent back as the placeholder"
		r5, err := c.ContextualDataIntegrationServiceUpdateContextualDataIntegrationWithResponse(s.ctx,
			body[contextualdataintegration.ContextualDataIntegrationServiceUpdateContextualDataIntegrationJSONRequestBody](s, step,
				`{"integrationId":"`+id+`","metadata":`+metadata(`"sensitiveData":{}`)+`}`))
		s.must(step, r5, err, 200)

		step = "test the stored instance"
		r6, err := c.ContextualDataIntegrationServiceTestContextualDataIntegrationWithResponse(s.ctx, id,
			body[contextualdataintegration.ContextualDataIntegrationServiceTestContextualDataIntegrationJSONRequestBody](s, step,
				`{"integrationData":`+metadata(`"sensitiveData":{}`)+`}`))
		got = s.must(step, r6, err, 200)
		s.typed(step, r6.JSON200)
		s.present(step, got, "result.success")

		step = "delete"
		r7, err := c.ContextualDataIntegrationServiceDeleteContextualDataIntegrationWithResponse(s.ctx, id)
		s.must(step, r7, err, 200)
		r8, err := c.ContextualDataIntegrationServiceGetContextualDataIntegrationDetailsWithResponse(s.ctx, "github-contextual-data",
			&contextualdataintegration.ContextualDataIntegrationServiceGetContextualDataIntegrationDetailsParams{})
		got = s.must(step, r8, err, 200)
		s.lacks(step, got, "integrationDetail.default.registered", "id", id)
	})
}
