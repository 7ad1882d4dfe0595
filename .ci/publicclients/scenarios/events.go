package main

import (
	"time"

	"mgmtapi-ci/publicclients/alertdefinitions"
	"mgmtapi-ci/publicclients/events"
)

// firedAlert is an alert definition one Alertmanager alert fired for, and that firing's event.
type firedAlert struct {
	def, version, name string
	event              string // the event's id (platformEventKey)
	from, to           time.Time
}

// fireAlertDef creates an enabled metric threshold definition, sends one firing alert naming it
// (the labels a Prometheus rule mgmtapi writes for it carries: alert_def_id, alert_def_version_id,
// alert_def_name, alert_def_priority) to /ingest/alertmanager/v1 (raw HTTP, no public operation
// sends alerts), and finds its event in the feed of the definition through the generated events
// client: exactly one, firing.
func (s *S) fireAlertDef() firedAlert {
	defs, err := alertdefinitions.NewClientWithResponses(s.base, alertdefinitions.WithRequestEditorFn(s.auth))
	if err != nil {
		s.failf("client", "%v", err)
	}
	c, err := events.NewClientWithResponses(s.base, events.WithRequestEditorFn(s.auth))
	if err != nil {
		s.failf("client", "%v", err)
	}
	f := firedAlert{name: unique("alertdef-events")}
	f.def, f.version = s.createAlertDef(defs, "create an alert definition", f.name)
	f.from, f.to = time.Now().UTC().Add(-time.Hour), time.Now().UTC().Add(time.Hour)
	s.ingestAlert(unique("PublicClientsAlertDef"), map[string]string{
		"service": "checkout", "alert_def_id": f.def, "alert_def_version_id": f.version,
		"alert_def_name": f.name, "alert_def_priority": "P2",
	})

	const step = "list the definition's events"
	p := &events.EventsServiceListAlertEventsParams{AlertIds: []string{f.def}}
	p.TimestampRange.From, p.TimestampRange.To = f.from, f.to
	r, err := c.EventsServiceListAlertEventsWithResponse(s.ctx, p)
	out := s.must(step, r, err, 200)
	s.typed(step, r.JSON200)
	if n := len(r.JSON200.Events); n != 1 {
		s.failf(step, "%d events, want the one firing: %s", n, clip(r.Body))
	}
	e := r.JSON200.Events[0]
	f.event = e.PlatformEventKey
	if f.event == "" {
		s.failf(step, "the event has no platformEventKey: %s", clip(r.Body))
	}
	s.equal(step, out, "events.0.platformEventType", "alert")
	s.equal(step, out, "events.0.platformEventMetadata.status", "firing")
	s.equal(step, out, "events.0.platformEventMetadata.alertDefId", f.def)
	s.equal(step, out, "events.0.platformEventMetadata.alertVersionId", f.version)
	s.equal(step, out, "events.0.platformEventMetadata.alertDefName", f.name)
	s.equal(step, out, "events.0.platformEventLabels.service", "checkout")
	if e.PlatformEventTimestamp.Before(f.from) || e.PlatformEventTimestamp.After(f.to) {
		s.failf(step, "the event's time %s is outside %s–%s", e.PlatformEventTimestamp, f.from, f.to)
	}

	// By its version id, and a label it does not carry.
	p.AlertIds = []string{f.version}
	r2, err := c.EventsServiceListAlertEventsWithResponse(s.ctx, p)
	s.must("list the version's events", r2, err, 200)
	if n := len(r2.JSON200.Events); n != 1 || r2.JSON200.Events[0].PlatformEventKey != f.event {
		s.failf("list the version's events", "%d events, want the firing %s: %s", n, f.event, clip(r2.Body))
	}
	p.AlertIds = []string{f.def}
	p.PlatformEventLabels = &map[string]string{"service": "billing"}
	r3, err := c.EventsServiceListAlertEventsWithResponse(s.ctx, p)
	s.must("list the definition's events of another service", r3, err, 200)
	if n := len(r3.JSON200.Events); n != 0 {
		s.failf("list the definition's events of another service", "%d events, want none: %s", n, clip(r3.Body))
	}
	return f
}

// deleteAlertDef deletes f's definition (its events stay in the feed).
func (s *S) deleteAlertDef(f firedAlert) {
	defs, err := alertdefinitions.NewClientWithResponses(s.base, alertdefinitions.WithRequestEditorFn(s.auth))
	if err != nil {
		s.failf("client", "%v", err)
	}
	r, err := defs.AlertDefsServiceDeleteAlertDefWithResponse(s.ctx, f.def)
	s.must("delete the alert definition", r, err, 200)
}

// feedFilter is the events filter of f's definition: its metadata alertDefId, type alert.
func feedFilter(f firedAlert) string {
	return `{"timestamp":{"from":"` + f.from.Format(time.RFC3339) + `","to":"` + f.to.Format(time.RFC3339) + `"},
		"platformEventTypes":["alert"],"platformEventKeys":[],
		"platformEventMetadataFilters":{"pathAndValues":[{"path":"alertDefId","multipleValues":{"values":["` + f.def + `"]}}]}}`
}

func init() {
	register("events_service", func(s *S) {
		c, err := events.NewClientWithResponses(s.base, events.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		f := s.fireAlertDef()

		r1, err := c.EventsServiceListEventsWithResponse(s.ctx, ptr(body[events.EventsServiceListEventsParams](s, "list events",
			`{"filter":`+feedFilter(f)+`,"pagination":{"pageSize":10},"order_bys":[{"fieldName":"ORDER_BY_FIELDS_TIMESTAMP","direction":"ORDER_BY_DIRECTION_DESC"}]}`)))
		list := s.must("list events", r1, err, 200)
		s.typed("list events", r1.JSON200)
		if n := len(r1.JSON200.Events); n != 1 {
			s.failf("list events", "%d events, want the one firing: %s", n, clip(r1.Body))
		}
		s.equal("list events", list, "events.0.platformEventKey", f.event)
		s.equal("list events", list, "events.0.platformEventMetadata.status", "firing")
		s.equal("list events", list, "pagination.totalSize", "1")

		r2, err := c.EventsServiceListEventsCountWithResponse(s.ctx, ptr(body[events.EventsServiceListEventsCountParams](s, "count",
			`{"filter":`+feedFilter(f)+`}`)))
		s.must("count", r2, err, 200)
		s.typed("count", r2.JSON200)
		if r2.JSON200.Count != "1" || r2.JSON200.ReachedLimit {
			s.failf("count", "count %q (reached the limit: %v), want 1: %s", r2.JSON200.Count, r2.JSON200.ReachedLimit, clip(r2.Body))
		}
		keyed := `{"filter":{"timestamp":{"from":"` + f.from.Format(time.RFC3339) + `","to":"` + f.to.Format(time.RFC3339) + `"},` +
			`"platformEventTypes":[],"platformEventKeys":["` + f.event + `"]}}`
		r3, err := c.EventsServiceListEventsCountWithResponse(s.ctx, ptr(body[events.EventsServiceListEventsCountParams](s, "count by key", keyed)))
		s.must("count by key", r3, err, 200)
		if r3.JSON200.Count != "1" {
			s.failf("count by key", "count %q, want 1: %s", r3.JSON200.Count, clip(r3.Body))
		}

		r4, err := c.EventsServiceGetEventWithResponse(s.ctx, f.event, nil)
		got := s.must("read", r4, err, 200)
		s.typed("read", r4.JSON200)
		s.equal("read", got, "event.singleEvent.platformEventKey", f.event)
		s.equal("read", got, "event.singleEvent.platformEventMetadata.alertDefId", f.def)
		s.equal("read", got, "event.singleEvent.platformEventMetadata.status", "firing")
		if e := r4.JSON200.Event; e == nil || e.SingleEvent == nil || e.SingleEvent.PlatformEventKey != f.event {
			s.failf("read", "the generated type holds no single event %s: %s", f.event, clip(r4.Body))
		}

		missing := "00000000-0000-4000-8000-000000000000"
		r5, err := c.EventsServiceBatchGetEventWithResponse(s.ctx, &events.EventsServiceBatchGetEventParams{Ids: &[]string{f.event, missing}})
		batch := s.must("batch get", r5, err, 200)
		s.typed("batch get", r5.JSON200)
		s.equal("batch get", batch, "events."+f.event+".singleEvent.platformEventKey", f.event)
		if ids := s.array("batch get", batch, "notFoundIds"); len(ids) != 1 || ids[0] != missing {
			s.failf("batch get", "notFoundIds %v, want [%s]", ids, missing)
		}

		r6, err := c.EventsServiceGetEventsStatisticsWithResponse(s.ctx, ptr(body[events.EventsServiceGetEventsStatisticsParams](s, "statistics",
			`{"filter":`+feedFilter(f)+`}`)))
		stats := s.must("statistics", r6, err, 200)
		s.typed("statistics", r6.JSON200)
		s.equal("statistics", stats, "platformEventMetadataFieldStatistics.status.fieldStatistics.firing", "1")
		s.equal("statistics", stats, "platformEventMetadataFieldStatistics.alertDefId.fieldStatistics."+f.def, "1")
		s.equal("statistics", stats, "platformEventLabelsFieldStatistics.service.fieldStatistics.checkout", "1")

		s.deleteAlertDef(f)
		r7, err := c.EventsServiceGetEventWithResponse(s.ctx, f.event, nil)
		s.equal("read after the definition's delete", s.must("read after the definition's delete", r7, err, 200),
			"event.singleEvent.platformEventKey", f.event)
	})
}
