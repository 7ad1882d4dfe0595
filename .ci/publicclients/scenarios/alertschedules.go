package main

import "mgmtapi-ci/publicclients/alertschedulerrule"

func init() {
	// A one-time rule and a recurring (daily) one: create, read, replace, list, delete. Both pick
	// only alerts with a label no other scenario sends, so they silence nothing else.
	register("alert_scheduler_rule_service", func(s *S) {
		c, err := alertschedulerrule.NewClientWithResponses(s.base, alertschedulerrule.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		label := unique("maintenance")
		filter := `"filter":{"alertMetaLabels":{"value":[{"key":"publicclients","value":"` + label + `"}]}}`
		oneTimeName, dailyName := unique("one-time"), unique("daily")

		r1, err := c.AlertSchedulerRuleServiceCreateAlertSchedulerRuleWithResponse(s.ctx,
			body[alertschedulerrule.AlertSchedulerRuleServiceCreateAlertSchedulerRuleJSONRequestBody](s, "create a one-time rule",
				`{"alertSchedulerRule":{"name":"`+oneTimeName+`","description":"scenario","enabled":true,`+filter+`,
				"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","oneTime":{"timeframe":
				{"startTime":"2030-06-01T22:00:00","endTime":"2030-06-02T02:00:00","timezone":"Europe/Berlin"}}}}}`))
		out := s.must("create a one-time rule", r1, err, 200)
		s.typed("create a one-time rule", r1.JSON200)
		oneTime := str(out, "alertSchedulerRule.uniqueIdentifier")
		oneTimeVersion := str(out, "alertSchedulerRule.id")
		if oneTime == "" || oneTimeVersion == "" {
			s.failf("create a one-time rule", "no uniqueIdentifier or id: %v", out)
		}
		s.equal("create a one-time rule", out, "alertSchedulerRule.name", oneTimeName)
		s.equal("create a one-time rule", out, "alertSchedulerRule.enabled", "true")
		s.equal("create a one-time rule", out, "alertSchedulerRule.schedule.oneTime.timeframe.submittedStartTime", "2030-06-01T22:00:00")

		r2, err := c.AlertSchedulerRuleServiceCreateAlertSchedulerRuleWithResponse(s.ctx,
			body[alertschedulerrule.AlertSchedulerRuleServiceCreateAlertSchedulerRuleJSONRequestBody](s, "create a daily rule",
				`{"alertSchedulerRule":{"name":"`+dailyName+`","enabled":true,`+filter+`,
				"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","recurring":{"schedule":{"repeatEvery":1,"daily":{},
				"timeframe":{"startTime":"2030-01-01T02:30:00","duration":{"forOver":1,"frequency":"DURATION_FREQUENCY_HOUR"},"timezone":"UTC"}}}}}}`))
		out = s.must("create a daily rule", r2, err, 200)
		s.typed("create a daily rule", r2.JSON200)
		daily := str(out, "alertSchedulerRule.uniqueIdentifier")
		if daily == "" || daily == oneTime {
			s.failf("create a daily rule", "uniqueIdentifier %q (the one-time rule's is %q): %v", daily, oneTime, out)
		}

		r3, err := c.AlertSchedulerRuleServiceGetAlertSchedulerRuleWithResponse(s.ctx, oneTime)
		got := s.must("read the one-time rule", r3, err, 200)
		s.typed("read the one-time rule", r3.JSON200)
		s.equal("read the one-time rule", got, "alertSchedulerRule.uniqueIdentifier", oneTime)
		s.equal("read the one-time rule", got, "alertSchedulerRule.id", oneTimeVersion)
		s.equal("read the one-time rule", got, "alertSchedulerRule.name", oneTimeName)
		s.equal("read the one-time rule", got, "alertSchedulerRule.description", "scenario")
		s.equal("read the one-time rule", got, "alertSchedulerRule.schedule.scheduleOperation", "SCHEDULE_OPERATION_MUTE")
		s.equal("read the one-time rule", got, "alertSchedulerRule.schedule.oneTime.timeframe.endTime", "2030-06-02T02:00:00")
		s.equal("read the one-time rule", got, "alertSchedulerRule.schedule.oneTime.timeframe.timezone", "Europe/Berlin")
		s.equal("read the one-time rule", got, "alertSchedulerRule.filter.alertMetaLabels.value.0.value", label)
		if n := r3.JSON200.AlertSchedulerRule.Name; n == nil || *n != oneTimeName {
			s.failf("read the one-time rule", "the generated type does not hold the name %q", oneTimeName)
		}
		r4, err := c.AlertSchedulerRuleServiceGetAlertSchedulerRuleWithResponse(s.ctx, daily)
		got = s.must("read the daily rule", r4, err, 200)
		s.equal("read the daily rule", got, "alertSchedulerRule.name", dailyName)
		dailyVersion := str(got, "alertSchedulerRule.id")
		s.present("read the daily rule", got, "alertSchedulerRule.schedule.recurring.schedule.daily")
		s.equal("read the daily rule", got, "alertSchedulerRule.schedule.recurring.schedule.timeframe.startTime", "2030-01-01T02:30:00")
		s.equal("read the daily rule", got, "alertSchedulerRule.schedule.recurring.schedule.timeframe.duration.frequency", "DURATION_FREQUENCY_HOUR")

		r5, err := c.AlertSchedulerRuleServiceUpdateAlertSchedulerRuleWithResponse(s.ctx,
			body[alertschedulerrule.AlertSchedulerRuleServiceUpdateAlertSchedulerRuleJSONRequestBody](s, "update the daily rule",
				`{"alertSchedulerRule":{"uniqueIdentifier":"`+daily+`","name":"`+dailyName+`-2","description":"every other day","enabled":false,`+filter+`,
				"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_ACTIVATE","recurring":{"schedule":{"repeatEvery":2,"daily":{},
				"timeframe":{"startTime":"2030-01-01T03:00:00","endTime":"2030-01-01T05:00:00","timezone":"UTC"}}}}}}`))
		updated := s.must("update the daily rule", r5, err, 200)
		s.typed("update the daily rule", r5.JSON200)
		s.equal("update the daily rule", updated, "alertSchedulerRule.uniqueIdentifier", daily)
		r6, err := c.AlertSchedulerRuleServiceGetAlertSchedulerRuleWithResponse(s.ctx, daily)
		got = s.must("read after update", r6, err, 200)
		s.equal("read after update", got, "alertSchedulerRule.name", dailyName+"-2")
		s.equal("read after update", got, "alertSchedulerRule.description", "every other day")
		s.equal("read after update", got, "alertSchedulerRule.enabled", "false")
		s.equal("read after update", got, "alertSchedulerRule.schedule.scheduleOperation", "SCHEDULE_OPERATION_ACTIVATE")
		s.equal("read after update", got, "alertSchedulerRule.schedule.recurring.schedule.repeatEvery", "2")
		s.equal("read after update", got, "alertSchedulerRule.schedule.recurring.schedule.timeframe.endTime", "2030-01-01T05:00:00")
		if v := str(got, "alertSchedulerRule.id"); v == "" || v == dailyVersion || v != str(updated, "alertSchedulerRule.id") {
			s.failf("read after update", "the version id is %q, want the update's new one %q (was %q)", v, str(updated, "alertSchedulerRule.id"), dailyVersion)
		}

		r7, err := c.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleWithResponse(s.ctx, nil)
		list := s.must("list (get bulk)", r7, err, 200)
		s.typed("list (get bulk)", r7.JSON200)
		s.contains("list (get bulk)", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", oneTime)
		s.contains("list (get bulk)", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", daily)
		s.contains("list (get bulk)", list, "alertSchedulerRules", "alertSchedulerRule.name", dailyName+"-2")
		// Filtered (the query objects in deepObject form: overlays/alert_scheduler_rule_service.yaml).
		r7b, err := c.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleWithResponse(s.ctx, ptr(body[alertschedulerrule.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleParams](s,
			"list by id", `{"alert_scheduler_rules_ids":{"alertSchedulerIds":{"alertSchedulerRuleIds":["`+oneTime+`"]}}}`)))
		list = s.must("list by id", r7b, err, 200)
		if n := len(r7b.JSON200.AlertSchedulerRules); n != 1 {
			s.failf("list by id", "%d rules, want the one-time rule %s: %s", n, oneTime, clip(r7b.Body))
		}
		s.equal("list by id", list, "alertSchedulerRules.0.alertSchedulerRule.uniqueIdentifier", oneTime)
		r7c, err := c.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleWithResponse(s.ctx, ptr(body[alertschedulerrule.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleParams](s,
			"list active in a window", `{"active_timeframe":{"startTime":"2030-06-01T00:00:00Z","endTime":"2030-06-03T00:00:00Z","timezone":"UTC"}}`)))
		list = s.must("list active in a window", r7c, err, 200)
		s.contains("list active in a window", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", oneTime)
		enabled := true
		r8, err := c.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleWithResponse(s.ctx,
			&alertschedulerrule.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleParams{Enabled: &enabled})
		list = s.must("list the enabled rules", r8, err, 200)
		s.contains("list the enabled rules", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", oneTime)
		s.lacks("list the enabled rules", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", daily)

		for _, id := range []string{oneTime, daily} {
			r, err := c.AlertSchedulerRuleServiceDeleteAlertSchedulerRuleWithResponse(s.ctx, id)
			s.must("delete", r, err, 200)
			r2, err := c.AlertSchedulerRuleServiceGetAlertSchedulerRuleWithResponse(s.ctx, id)
			s.must("read after delete", r2, err, 404)
		}
		r9, err := c.AlertSchedulerRuleServiceGetBulkAlertSchedulerRuleWithResponse(s.ctx, nil)
		list = s.must("list after delete", r9, err, 200)
		s.lacks("list after delete", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", oneTime)
		s.lacks("list after delete", list, "alertSchedulerRules", "alertSchedulerRule.uniqueIdentifier", daily)
	})
}
