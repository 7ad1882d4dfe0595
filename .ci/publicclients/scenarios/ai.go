package main

import (
	"crypto/rand"
	"fmt"

	"mgmtapi-ci/publicclients/aiapplications"
	"mgmtapi-ci/publicclients/aievaluations"
)

// newUUID is a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// aiApplications registers AI applications of the team through the configuration document (the
// way a team without the operator key does: mgmtapi ingests no spans) and returns their ids, by
// name. Each name gets the subsystem "prod".
func aiApplications(s *S, names ...string) map[string]string {
	step := "register AI applications with a configuration document"
	ids := map[string]string{}
	doc := "aiApplications:\n"
	for _, n := range names {
		ids[n] = newUUID()
		doc += fmt.Sprintf("- {id: %s, application: %s, subsystem: prod, guardrailsIntegrated: true}\n", ids[n], n)
	}
	s.post(step, "/config/v1/apply", "application/yaml", []byte(doc))
	return ids
}

// number fails the step when the answer's number at path is not want (str prints whole numbers
// only).
func number(s *S, step string, answer any, path string, want float64) {
	if got, ok := get(answer, path).(float64); !ok || got != want {
		s.failf(step, "%s is %v, want %v", path, get(answer, path), want)
	}
}

func init() {
	// Applications registered by a configuration document: listed (in pages, by evaluation
	// type), read, deleted; the model pricing set, read, replaced and deleted.
	register("ai_applications_service", func(s *S) {
		c, err := aiapplications.NewClientWithResponses(s.base, aiapplications.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("scenario-bot")
		ids := aiApplications(s, name)

		step := "list the AI applications"
		size := int32(1000)
		r1, err := c.AiApplicationsServiceListAiApplicationsWithResponse(s.ctx, &aiapplications.AiApplicationsServiceListAiApplicationsParams{PageSize: &size})
		list := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		s.contains(step, list, "aiApplications", "id", ids[name])

		step = "read the AI application"
		r2, err := c.AiApplicationsServiceGetAiApplicationByIdWithResponse(s.ctx, ids[name])
		got := s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.equal(step, got, "aiApplication.application", name)
		s.equal(step, got, "aiApplication.subsystem", "prod")
		s.equal(step, got, "aiApplication.guardrailsIntegrated", "true")
		s.present(step, got, "aiApplication.companyId")
		s.present(step, got, "aiApplication.createdAt")

		step = "list the AI applications a type covers"
		types := []aiapplications.EvaluationType{"SEXISM"}
		r3, err := c.AiApplicationsServiceListAiApplicationsWithResponse(s.ctx, &aiapplications.AiApplicationsServiceListAiApplicationsParams{EvaluationTypes: &types})
		covered := s.must(step, r3, err, 200)
		s.typed(step, r3.JSON200)
		s.lacks(step, covered, "aiApplications", "id", ids[name])

		step = "set the model pricing"
		r4, err := c.AiApplicationsServiceSetCompanyModelPricingWithResponse(s.ctx,
			body[aiapplications.AiApplicationsServiceSetCompanyModelPricingJSONRequestBody](s, step,
				`{"prices":{"gpt-4o":{"inputPricePerMillionTokens":2.5,"outputPricePerMillionTokens":10}}}`))
		set := s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		s.equal(step, set, "pricing.prices.gpt-4o.outputPricePerMillionTokens", "10")
		pricingID := str(set, "pricing.id")

		step = "replace the model pricing"
		r5, err := c.AiApplicationsServiceSetCompanyModelPricingWithResponse(s.ctx,
			body[aiapplications.AiApplicationsServiceSetCompanyModelPricingJSONRequestBody](s, step,
				`{"prices":{"claude":{"inputPricePerMillionTokens":3,"cacheReadPricePerMillionTokens":0.3}}}`))
		s.must(step, r5, err, 200)
		r6, err := c.AiApplicationsServiceGetCompanyModelPricingWithResponse(s.ctx)
		got = s.must(step, r6, err, 200)
		s.typed(step, r6.JSON200)
		s.equal(step, got, "pricing.id", pricingID)
		number(s, step, got, "pricing.prices.claude.cacheReadPricePerMillionTokens", 0.3)
		if get(got, "pricing.prices.gpt-4o") != nil {
			s.failf(step, "the replaced price of gpt-4o remains: %v", got)
		}

		step = "refuse a negative price"
		r7, err := c.AiApplicationsServiceSetCompanyModelPricingWithResponse(s.ctx,
			body[aiapplications.AiApplicationsServiceSetCompanyModelPricingJSONRequestBody](s, step,
				`{"prices":{"claude":{"inputPricePerMillionTokens":-3}}}`))
		s.must(step, r7, err, 400)

		step = "delete the model pricing"
		r8, err := c.AiApplicationsServiceDeleteCompanyModelPricingWithResponse(s.ctx)
		deleted := s.must(step, r8, err, 200)
		s.typed(step, r8.JSON200)
		s.equal(step, deleted, "id", pricingID)

		step = "delete the AI application"
		r9, err := c.AiApplicationsServiceDeleteAiApplicationWithResponse(s.ctx, ids[name])
		deleted = s.must(step, r9, err, 200)
		s.typed(step, r9.JSON200)
		s.equal(step, deleted, "id", ids[name])
		r10, err := c.AiApplicationsServiceGetAiApplicationByIdWithResponse(s.ctx, ids[name])
		s.must("read the deleted AI application", r10, err, 404)
	})

	// An AI evaluation created, read, listed, changed (by presence and by mask) and deleted; a
	// custom evaluation created, linked and unlinked (the last link too), listed per application,
	// counted per type, changed and deleted.
	register("ai_evaluations_service", func(s *S) {
		c, err := aievaluations.NewClientWithResponses(s.base, aievaluations.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("scenario-agent")
		ids := aiApplications(s, name)
		appID := ids[name]

		step := "create an AI evaluation"
		r1, err := c.AiEvaluationsServiceCreateAiEvaluationWithResponse(s.ctx,
			body[aievaluations.AiEvaluationsServiceCreateAiEvaluationJSONRequestBody](s, step,
				`{"application":"`+name+`","subsystem":"prod","target":"RESPONSE","threshold":0.8,"isEnabled":true,`+
					`"config":{"pii":{"categories":["EMAIL_ADDRESS","CREDIT_CARD"]}}}`))
		created := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		evalID := str(created, "aiEvaluation.id")
		s.equal(step, created, "aiEvaluation.config.pii.categories.0", "EMAIL_ADDRESS")

		step = "read the AI evaluation"
		r2, err := c.AiEvaluationsServiceGetAiEvaluationWithResponse(s.ctx, evalID)
		got := s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.equal(step, got, "aiEvaluation.application", name)
		number(s, step, got, "aiEvaluation.threshold", 0.8)

		step = "list the application's AI evaluations"
		r3, err := c.AiEvaluationsServiceListAiEvaluationsWithResponse(s.ctx, &aievaluations.AiEvaluationsServiceListAiEvaluationsParams{Application: &name})
		list := s.must(step, r3, err, 200)
		s.typed(step, r3.JSON200)
		s.contains(step, list, "aiEvaluations", "id", evalID)

		step = "change the AI evaluation"
		r4, err := c.AiEvaluationsServiceUpdateAiEvaluationWithResponse(s.ctx, evalID,
			body[aievaluations.AiEvaluationsServiceUpdateAiEvaluationJSONRequestBody](s, step,
				`{"threshold":0.5,"isEnabled":false,"updateMask":"threshold"}`))
		got = s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		number(s, step, got, "aiEvaluation.threshold", 0.5)
		s.equal(step, got, "aiEvaluation.isEnabled", "true")

		step = "refuse a config of two types"
		r5, err := c.AiEvaluationsServiceCreateAiEvaluationWithResponse(s.ctx,
			body[aievaluations.AiEvaluationsServiceCreateAiEvaluationJSONRequestBody](s, step,
				`{"application":"`+name+`","target":"PROMPT","config":{"toxicity":{},"sexism":{}}}`))
		s.must(step, r5, err, 400)

		step = "create a custom evaluation"
		r6, err := c.AiEvaluationsServiceCreateCustomEvaluationWithResponse(s.ctx,
			body[aievaluations.AiEvaluationsServiceCreateCustomEvaluationJSONRequestBody](s, step,
				`{"name":"`+unique("no-competitors")+`","policyType":"quality","instructions":"Does {response} recommend a competitor?",`+
					`"safe":"talks about us","violates":"recommends a competitor","shouldIncludeSystemPrompt":false,`+
					`"examples":[{"conversation":"A: ours fits","score":"0"},{"conversation":"A: try theirs","score":"1"}]}`))
		custom := s.must(step, r6, err, 200)
		s.typed(step, r6.JSON200)
		customID := str(custom, "item.id")
		s.equal(step, custom, "item.config.policyType", "quality")

		step = "refuse an unknown policy type"
		r7, err := c.AiEvaluationsServiceCreateCustomEvaluationWithResponse(s.ctx,
			body[aievaluations.AiEvaluationsServiceCreateCustomEvaluationJSONRequestBody](s, step,
				`{"name":"x","policyType":"style","instructions":"Is {response} fine?"}`))
		s.must(step, r7, err, 400)

		step = "link the custom evaluation"
		r8, err := c.AiEvaluationsServiceLinkCustomEvaluationWithResponse(s.ctx, customID, appID)
		linked := s.must(step, r8, err, 200)
		s.typed(step, r8.JSON200)
		s.equal(step, linked, "applicationId", appID)
		r9, err := c.AiEvaluationsServiceListCustomEvaluationsForApplicationWithResponse(s.ctx, appID)
		byApp := s.must(step, r9, err, 200)
		s.typed(step, r9.JSON200)
		s.contains(step, byApp, "items", "id", customID)

		step = "count the applications per type"
		r10, err := c.AiEvaluationsServiceCountAiAppsPerEvalTypeWithResponse(s.ctx)
		counts := s.must(step, r10, err, 200)
		s.typed(step, r10.JSON200)
		s.present(step, counts, "counts.CUSTOM_EVALUATION")
		s.present(step, counts, "counts.PII")
		s.present(step, counts, "counts.TOXICITY")

		step = "change the custom evaluation"
		r11, err := c.AiEvaluationsServiceUpdateCustomEvaluationWithResponse(s.ctx, customID,
			body[aievaluations.AiEvaluationsServiceUpdateCustomEvaluationJSONRequestBody](s, step, `{"policyType":"security"}`))
		changed := s.must(step, r11, err, 200)
		s.typed(step, r11.JSON200)
		s.equal(step, changed, "item.config.policyType", "security")
		s.equal(step, changed, "item.applicationIds.0", appID)

		step = "unlink the custom evaluation from its last application"
		r12, err := c.AiEvaluationsServiceUnlinkCustomEvaluationFromAppWithResponse(s.ctx, customID, appID)
		s.must(step, r12, err, 200)
		s.typed(step, r12.JSON200)
		r13, err := c.AiEvaluationsServiceGetCustomEvaluationsWithResponse(s.ctx)
		all := s.must(step, r13, err, 200)
		s.typed(step, r13.JSON200)
		s.contains(step, all, "items", "id", customID)

		step = "delete the custom evaluation"
		r14, err := c.AiEvaluationsServiceDeleteCustomEvaluationWithResponse(s.ctx, customID)
		s.must(step, r14, err, 200)
		s.typed(step, r14.JSON200)
		step = "delete the AI evaluation"
		r15, err := c.AiEvaluationsServiceDeleteAiEvaluationWithResponse(s.ctx, evalID)
		s.must(step, r15, err, 200)
		s.typed(step, r15.JSON200)
		r16, err := c.AiEvaluationsServiceGetAiEvaluationWithResponse(s.ctx, evalID)
		s.must("read the deleted AI evaluation", r16, err, 404)
	})
}
