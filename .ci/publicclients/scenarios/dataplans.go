package main

import (
	"encoding/json"

	"mgmtapi-ci/publicclients/policies"
	"mgmtapi-ci/publicclients/quotaallocationruleset"
	"mgmtapi-ci/publicclients/retentions"
	"mgmtapi-ci/publicclients/slos"
)

func init() {
	register("policies_service", func(s *S) {
		c, err := policies.NewClientWithResponses(s.base, policies.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("policy")
		policy := func(idField, name, description, severity string) string {
			return `{` + idField + `"name":"` + name + `","description":"` + description + `","priority":"PRIORITY_TYPE_HIGH",
				"applicationRule":{"name":"checkout","ruleTypeId":"RULE_TYPE_ID_IS"},"logRules":{"severities":["` + severity + `"]}}`
		}
		r1, err := c.PoliciesServiceCreatePolicyWithResponse(s.ctx, body[policies.PoliciesServiceCreatePolicyJSONRequestBody](s, "create",
			policy("", name, "scenario", "SEVERITY_ERROR")))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "policy.id")
		s.equal("create", out, "policy.name", name)

		r2, err := c.PoliciesServiceGetPolicyWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "policy.name", name)
		s.equal("read", got, "policy.priority", "PRIORITY_TYPE_HIGH")
		s.equal("read", got, "policy.applicationRule.name", "checkout")
		s.equal("read", got, "policy.logRules.severities.0", "SEVERITY_ERROR")

		r3, err := c.PoliciesServiceUpdatePolicyWithResponse(s.ctx, body[policies.PoliciesServiceUpdatePolicyJSONRequestBody](s, "update",
			policy(`"id":"`+id+`",`, name+"-2", "scenario 2", "SEVERITY_CRITICAL")))
		s.must("update", r3, err, 200)
		r4, err := c.PoliciesServiceGetPolicyWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "policy.name", name+"-2")
		s.equal("read after update", got, "policy.description", "scenario 2")
		s.equal("read after update", got, "policy.logRules.severities.0", "SEVERITY_CRITICAL")

		r5, err := c.PoliciesServiceGetCompanyPoliciesWithResponse(s.ctx, nil)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "policies", "id", id)

		r6, err := c.PoliciesServiceGetPolicySettingsWithResponse(s.ctx)
		s.must("read settings", r6, err, 200)

		r7, err := c.PoliciesServiceDeletePolicyWithResponse(s.ctx, id)
		s.must("delete", r7, err, 200)
		r8, err := c.PoliciesServiceGetPolicyWithResponse(s.ctx, id)
		s.must("read after delete", r8, err, 404)
	})

	register("slos_service", func(s *S) {
		c, err := slos.NewClientWithResponses(s.base, slos.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("slo")
		slo := func(idField, name string, target string) string {
			return `{` + idField + `"name":"` + name + `","targetThresholdPercentage":` + target + `,"sloTimeFrame":"SLO_TIME_FRAME_28_DAYS",
				"requestBasedMetricSli":{"goodEvents":{"query":"sum(rate(http_requests_total{code!~\"5..\"}[5m]))"},
				"totalEvents":{"query":"sum(rate(http_requests_total[5m]))"}}}`
		}
		r1, err := c.SlosServiceCreateSloWithResponse(s.ctx, nil, body[slos.SlosServiceCreateSloJSONRequestBody](s, "create", slo("", name, "99.9")))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "slo.id")
		s.equal("create", out, "slo.name", name)

		r2, err := c.SlosServiceGetSloWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "slo.name", name)
		s.equal("read", got, "slo.sloTimeFrame", "SLO_TIME_FRAME_28_DAYS")
		s.present("read", got, "slo.requestBasedMetricSli.goodEvents.query")

		r3, err := c.SlosServiceReplaceSloWithResponse(s.ctx, nil, body[slos.SlosServiceReplaceSloJSONRequestBody](s, "update", slo(`"id":"`+id+`",`, name+"-2", "99.5")))
		s.must("update", r3, err, 200)
		r4, err := c.SlosServiceGetSloWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "slo.name", name+"-2")
		if v, _ := get(got, "slo.targetThresholdPercentage").(float64); v != 99.5 {
			s.failf("read after update", "slo.targetThresholdPercentage is %v, want 99.5", get(got, "slo.targetThresholdPercentage"))
		}

		r5, err := c.SlosServiceListSlosWithResponse(s.ctx, nil)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "slos", "id", id)

		r6, err := c.SlosServiceBatchGetSlosWithResponse(s.ctx, &slos.SlosServiceBatchGetSlosParams{Ids: []string{id}})
		s.must("batch get", r6, err, 200)

		r7, err := c.SlosServiceDeleteSloWithResponse(s.ctx, id)
		s.must("delete", r7, err, 200)
		r8, err := c.SlosServiceGetSloWithResponse(s.ctx, id)
		s.must("read after delete", r8, err, 404)
	})

	register("quota_allocation_rule_set_service", func(s *S) {
		c, err := quotaallocationruleset.NewClientWithResponses(s.base, quotaallocationruleset.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		// The rule set is one per team: a left-over one goes first.
		r0, err := c.QuotaAllocationRuleSetServiceDeleteQuotaAllocationRuleSetWithResponse(s.ctx)
		s.mustOneOf("delete a left-over set", r0, err, 200, 404)

		r1, err := c.QuotaAllocationRuleSetServiceCreateQuotaAllocationRuleSetWithResponse(s.ctx,
			body[quotaallocationruleset.QuotaAllocationRuleSetServiceCreateQuotaAllocationRuleSetJSONRequestBody](s, "create",
				`{"ruleSet":{"rules":[{"entityType":"logs","allocation":60,"allocationType":"QUOTA_ALLOCATION_TYPE_PERCENTAGE","enabled":true,"canOverflow":false}]}}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "ruleSet.id")

		r2, err := c.QuotaAllocationRuleSetServiceGetQuotaAllocationRuleSetWithResponse(s.ctx, &quotaallocationruleset.QuotaAllocationRuleSetServiceGetQuotaAllocationRuleSetParams{Id: &id})
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "ruleSet.id", id)
		s.equal("read", got, "ruleSet.rules.0.entityType", "logs")
		s.equal("read", got, "ruleSet.rules.0.allocation", "60")

		r3, err := c.QuotaAllocationRuleSetServiceReplaceQuotaAllocationRuleSetWithResponse(s.ctx,
			body[quotaallocationruleset.QuotaAllocationRuleSetServiceReplaceQuotaAllocationRuleSetJSONRequestBody](s, "update",
				`{"ruleSet":{"id":"`+id+`","rules":[{"entityType":"logs","allocation":40,"allocationType":"QUOTA_ALLOCATION_TYPE_PERCENTAGE","enabled":true,"canOverflow":true}]}}`))
		s.must("update", r3, err, 200)
		r4, err := c.QuotaAllocationRuleSetServiceGetQuotaAllocationRuleSetWithResponse(s.ctx, &quotaallocationruleset.QuotaAllocationRuleSetServiceGetQuotaAllocationRuleSetParams{Id: &id})
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "ruleSet.rules.0.allocation", "40")
		s.equal("read after update", got, "ruleSet.rules.0.canOverflow", "true")

		r5, err := c.QuotaAllocationRuleSetServiceDeleteQuotaAllocationRuleSetWithResponse(s.ctx)
		s.must("delete", r5, err, 200)
		r6, err := c.QuotaAllocationRuleSetServiceGetQuotaAllocationRuleSetWithResponse(s.ctx, &quotaallocationruleset.QuotaAllocationRuleSetServiceGetQuotaAllocationRuleSetParams{Id: &id})
		s.must("read after delete", r6, err, 404)
	})

	register("retentions_service", func(s *S) {
		c, err := retentions.NewClientWithResponses(s.base, retentions.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.RetentionsServiceGetRetentionsWithResponse(s.ctx)
		list := s.must("list", r1, err, 200)
		s.typed("list", r1.JSON200)
		var id, was string
		for _, t := range s.array("list", list, "retentions") {
			if str(t, "editable") == "true" {
				id, was = str(t, "id"), str(t, "name")
				break
			}
		}
		if id == "" {
			s.failf("list", "no editable retention tag: %v", list)
		}
		rename := func(step, name string) {
			r, err := c.RetentionsServiceUpdateRetentionsWithResponse(s.ctx, body[retentions.RetentionsServiceUpdateRetentionsJSONRequestBody](s, step,
				`{"retentionUpdateElements":[{"id":"`+id+`","name":"`+name+`"}]}`))
			s.must(step, r, err, 200)
			r2, err := c.RetentionsServiceGetRetentionsWithResponse(s.ctx)
			after := s.must("list after "+step, r2, err, 200)
			s.contains("list after "+step, after, "retentions", "name", name)
		}
		rename("update", "scenario")
		rename("update back", was)

		r3, err := c.RetentionsServiceGetRetentionsEnabledWithResponse(s.ctx)
		s.must("enabled", r3, err, 200)
		s.typed("enabled", r3.JSON200)
	})

	// A client reads the whole list and writes it back with one change (issue 24 §4).
	register("retentions_service:read-modify-write", func(s *S) {
		c, err := retentions.NewClientWithResponses(s.base, retentions.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		r1, err := c.RetentionsServiceGetRetentionsWithResponse(s.ctx)
		list := s.must("list", r1, err, 200)
		type element struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		var all []element
		changed := -1
		for i, t := range s.array("list", list, "retentions") {
			all = append(all, element{ID: str(t, "id"), Name: str(t, "name")})
			if changed < 0 && str(t, "editable") == "true" {
				changed = i
			}
		}
		if changed < 0 {
			s.failf("list", "no editable retention tag: %v", list)
		}
		was := all[changed].Name
		all[changed].Name = "scenario-rmw"
		send := func(step string) {
			text, _ := json.Marshal(map[string]any{"retentionUpdateElements": all})
			r, err := c.RetentionsServiceUpdateRetentionsWithResponse(s.ctx, body[retentions.RetentionsServiceUpdateRetentionsJSONRequestBody](s, step, string(text)))
			s.must(step, r, err, 200)
		}
		send("write all back with one renamed")
		all[changed].Name = was
		send("write all back restored")
	})
}
