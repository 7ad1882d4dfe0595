package main

import (
	"mgmtapi-ci/publicclients/events2metrics"
	"mgmtapi-ci/publicclients/rulegroups"
)

func init() {
	register("rule_groups_service", func(s *S) {
		c, err := rulegroups.NewClientWithResponses(s.base, rulegroups.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("parsing")
		group := func(name, rule string) string {
			return `{"name":"` + name + `","enabled":true,"ruleSubgroups":[{"enabled":true,"order":1,"rules":[{"name":"block-debug",
				"enabled":true,"order":1,"sourceField":"text","parameters":{"blockParameters":{"keepBlockedLogs":false,"rule":"` + rule + `"}}}]}]}`
		}
		r1, err := c.RuleGroupsServiceCreateRuleGroupWithResponse(s.ctx, body[rulegroups.RuleGroupsServiceCreateRuleGroupJSONRequestBody](s, "create", group(name, "debug")))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "ruleGroup.id")
		s.equal("create", out, "ruleGroup.name", name)

		r2, err := c.RuleGroupsServiceGetRuleGroupWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "ruleGroup.name", name)
		s.equal("read", got, "ruleGroup.ruleSubgroups.0.rules.0.parameters.blockParameters.rule", "debug")

		r3, err := c.RuleGroupsServiceUpdateRuleGroupWithResponse(s.ctx, id, body[rulegroups.RuleGroupsServiceUpdateRuleGroupJSONRequestBody](s, "update", group(name+"-2", "trace")))
		s.must("update", r3, err, 200)
		r4, err := c.RuleGroupsServiceGetRuleGroupWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "ruleGroup.name", name+"-2")
		s.equal("read after update", got, "ruleGroup.ruleSubgroups.0.rules.0.parameters.blockParameters.rule", "trace")

		r5, err := c.RuleGroupsServiceListRuleGroupsWithResponse(s.ctx)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "ruleGroups", "id", id)

		r6, err := c.RuleGroupsServiceDeleteRuleGroupWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.RuleGroupsServiceGetRuleGroupWithResponse(s.ctx, id)
		s.must("read after delete", r7, err, 404)
	})

	register("events2metrics_service", func(s *S) {
		c, err := events2metrics.NewClientWithResponses(s.base, events2metrics.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("e2m")
		e2m := func(id, name, query string) string {
			idField := ""
			if id != "" {
				idField = `"id":"` + id + `",`
			}
			return `{` + idField + `"name":"` + name + `","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{"lucene":"` + query + `"},
				"metricLabels":[{"targetLabel":"app","sourceField":"applicationName"}]}`
		}
		r1, err := c.Events2MetricServiceCreateE2MWithResponse(s.ctx, body[events2metrics.Events2MetricServiceCreateE2MJSONRequestBody](s, "create", e2m("", name, "level:error")))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "e2m.id")
		s.equal("create", out, "e2m.name", name)

		r2, err := c.Events2MetricServiceGetE2MWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "e2m.name", name)
		s.equal("read", got, "e2m.logsQuery.lucene", "level:error")
		s.equal("read", got, "e2m.metricLabels.0.targetLabel", "app")

		r3, err := c.Events2MetricServiceReplaceE2MWithResponse(s.ctx, body[events2metrics.Events2MetricServiceReplaceE2MJSONRequestBody](s, "update", e2m(id, name+"-2", "level:warn")))
		s.must("update", r3, err, 200)
		r4, err := c.Events2MetricServiceGetE2MWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "e2m.name", name+"-2")
		s.equal("read after update", got, "e2m.logsQuery.lucene", "level:warn")

		r5, err := c.Events2MetricServiceListE2MWithResponse(s.ctx)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "e2m", "id", id)

		r6, err := c.Events2MetricServiceGetLimitsWithResponse(s.ctx)
		s.must("limits", r6, err, 200)

		// A field sent with some aggregations, as the vendor's Terraform provider sends them, and a
		// disabled histogram without buckets: answered with the whole set (issue 38).
		partial := `{"name":"` + name + `-set","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{"lucene":"level:info"},
			"metricFields":[{"sourceField":"location_geopoint","targetBaseMetricName":"geo_point","aggregations":[
			{"aggType":"AGG_TYPE_MIN","enabled":false,"targetMetricName":"min"},
			{"aggType":"AGG_TYPE_MAX","enabled":false,"targetMetricName":"max"},
			{"aggType":"AGG_TYPE_AVG","enabled":true,"targetMetricName":"avg"},
			{"aggType":"AGG_TYPE_HISTOGRAM","enabled":false,"targetMetricName":"h","histogram":{"buckets":[]}}]}]}`
		r9, err := c.Events2MetricServiceCreateE2MWithResponse(s.ctx, body[events2metrics.Events2MetricServiceCreateE2MJSONRequestBody](s, "create with some aggregations", partial))
		set := s.must("create with some aggregations", r9, err, 200)
		s.typed("create with some aggregations", r9.JSON200)
		s.equal("create with some aggregations", set, "e2m.metricFields.0.aggregations.2.targetMetricName", "avg")
		s.equal("create with some aggregations", set, "e2m.metricFields.0.aggregations.4.targetMetricName", "cx_count")
		s.equal("create with some aggregations", set, "e2m.metricFields.0.aggregations.5.targetMetricName", "cx_sum")
		r10, err := c.Events2MetricServiceDeleteE2MWithResponse(s.ctx, str(set, "e2m.id"))
		s.must("delete the one with some aggregations", r10, err, 200)

		r7, err := c.Events2MetricServiceDeleteE2MWithResponse(s.ctx, id)
		s.must("delete", r7, err, 200)
		r8, err := c.Events2MetricServiceGetE2MWithResponse(s.ctx, id)
		s.must("read after delete", r8, err, 404)
	})
}
