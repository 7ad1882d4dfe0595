package main

import "mgmtapi-ci/publicclients/alertevents"

func init() {
	// The alert-event service reads the events of the feed: one firing of a new definition
	// (fireAlertDef), read by its id and counted per definition.
	register("alert_events_service", func(s *S) {
		c, err := alertevents.NewClientWithResponses(s.base, alertevents.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		f := s.fireAlertDef()

		r1, err := c.AlertEventServiceGetAlertEventWithResponse(s.ctx, f.event, nil)
		got := s.must("read", r1, err, 200)
		s.typed("read", r1.JSON200)
		s.equal("read", got, "id", f.event)
		s.equal("read", got, "singlePermutation.alertId", f.def)
		s.equal("read", got, "singlePermutation.status", "ALERT_STATUS_TRIGGERED")
		s.equal("read", got, "singlePermutation.permutationLabels.service", "checkout")
		s.present("read", got, "singlePermutation.incidentCorrelationKey")
		if p := r1.JSON200.SinglePermutation; p == nil || p.AlertId == nil || *p.AlertId != f.def {
			s.failf("read", "the generated type holds no single permutation of %s: %s", f.def, clip(r1.Body))
		}
		r2, err := c.AlertEventServiceGetAlertEventWithResponse(s.ctx, "00000000-0000-4000-8000-000000000000", nil)
		s.must("read a missing event", r2, err, 404)

		r3, err := c.AlertEventServiceGetAlertEventsStatsWithResponse(s.ctx, &alertevents.AlertEventServiceGetAlertEventsStatsParams{Ids: &[]string{f.def}})
		stats := s.must("stats", r3, err, 200)
		s.typed("stats", r3.JSON200)
		s.equal("stats", stats, "eventsStats."+f.def+".count", "1")
		s.equal("stats", stats, "eventsStats."+f.def+".triggeredCount", "1")
		if r3.JSON200.EventsStats == nil {
			s.failf("stats", "the generated type holds no eventsStats: %s", clip(r3.Body))
		}
		if st, ok := (*r3.JSON200.EventsStats)[f.def]; !ok || st.TriggeredCount == nil || *st.TriggeredCount != 1 {
			s.failf("stats", "the generated type holds no triggeredCount 1 for %s: %s", f.def, clip(r3.Body))
		}
		s.deleteAlertDef(f)
	})
}
