package main

import "mgmtapi-ci/publicclients/recordingrules"

func init() {
	register("recording_rules_service", func(s *S) {
		c, err := recordingrules.NewClientWithResponses(s.base, recordingrules.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("publicclients")
		create := body[recordingrules.RuleGroupSetsCreateJSONRequestBody](s, "create", `{"name":"`+name+`",
			"groups":[{"name":"latency","interval":60,"rules":[{"record":"job:up:sum","expr":"sum by (job) (up)"}]}]}`)
		r1, err := c.RuleGroupSetsCreateWithResponse(s.ctx, create)
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "id")
		if id == "" {
			s.failf("create", "no id: %v", out)
		}

		r2, err := c.RuleGroupSetsFetchWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "name", name)
		s.equal("read", got, "groups.0.name", "latency")
		s.equal("read", got, "groups.0.rules.0.record", "job:up:sum")

		update := body[recordingrules.RuleGroupSetsUpdateJSONRequestBody](s, "update", `{"name":"`+name+`-2",
			"groups":[{"name":"latency","interval":120,"rules":[{"record":"job:up:sum","expr":"sum by (job) (up)"},
			{"record":"job:up:count","expr":"count by (job) (up)"}]}]}`)
		r3, err := c.RuleGroupSetsUpdateWithResponse(s.ctx, id, update)
		s.must("update", r3, err, 200)
		r4, err := c.RuleGroupSetsFetchWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "name", name+"-2")
		s.equal("read after update", got, "groups.0.interval", "120")
		s.equal("read after update", got, "groups.0.rules.1.record", "job:up:count")

		r5, err := c.RuleGroupSetsListWithResponse(s.ctx)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "sets", "id", id)

		r6, err := c.RuleGroupSetsDeleteWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.RuleGroupSetsFetchWithResponse(s.ctx, id)
		s.must("read after delete", r7, err, 404)
		r8, err := c.RuleGroupSetsListWithResponse(s.ctx)
		list = s.must("list after delete", r8, err, 200)
		s.lacks("list after delete", list, "sets", "id", id)
	})
}
