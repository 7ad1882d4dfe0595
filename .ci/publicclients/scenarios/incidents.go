package main

import (
	"mgmtapi-ci/publicclients/incidents"
)

func init() {
	// No create (incidents come from alerts): list, read, its events, the state changes.
	register("incidents_service", func(s *S) {
		c, err := incidents.NewClientWithResponses(s.base, incidents.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		alert := unique("PublicClientsIncident")
		s.ingest(alert, "payments")

		r1, err := c.IncidentsServiceListIncidentsWithResponse(s.ctx, incidents.IncidentsServiceListIncidentsJSONRequestBody{})
		list := s.must("list", r1, err, 200)
		s.typed("list", r1.JSON200)
		s.contains("list", list, "incidents", "name", alert)
		var id string
		for _, i := range s.array("list", list, "incidents") {
			if str(i, "name") == alert {
				id = str(i, "id")
			}
		}

		r2, err := c.IncidentsServiceGetIncidentWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "incident.id", id)
		s.equal("read", got, "incident.name", alert)
		s.equal("read", got, "incident.contextualLabels.service", "payments")

		r3, err := c.IncidentsServiceBatchGetIncidentWithResponse(s.ctx, &incidents.IncidentsServiceBatchGetIncidentParams{Ids: &[]string{id}})
		batch := s.must("batch get", r3, err, 200)
		s.typed("batch get", r3.JSON200)
		s.present("batch get", batch, "incidents."+id)

		r4, err := c.IncidentsServiceGetIncidentEventsWithResponse(s.ctx, id)
		events := s.must("events of the incident", r4, err, 200)
		s.typed("events of the incident", r4.JSON200)
		eventID := str(events, "incidentEvents.0.id")
		if eventID == "" {
			s.failf("events of the incident", "no event: %v", events)
		}
		r5, err := c.IncidentsServiceGetIncidentByEventIdWithResponse(s.ctx, eventID)
		byEvent := s.must("read by event", r5, err, 200)
		s.typed("read by event", r5.JSON200)
		s.equal("read by event", byEvent, "incident.id", id)

		r6, err := c.IncidentsServiceAcknowledgeIncidentsWithResponse(s.ctx, incidents.IncidentsServiceAcknowledgeIncidentsJSONRequestBody{IncidentIds: []string{id}})
		s.must("acknowledge", r6, err, 200)
		r7, err := c.IncidentsServiceGetIncidentWithResponse(s.ctx, id)
		got = s.must("read after acknowledge", r7, err, 200)
		s.equal("read after acknowledge", got, "incident.status", "INCIDENT_STATUS_ACKNOWLEDGED")

		r8, err := c.IncidentsServiceAssignIncidentsWithResponse(s.ctx, body[incidents.IncidentsServiceAssignIncidentsJSONRequestBody](s, "assign",
			`{"incidentIds":["`+id+`"],"assignedTo":{"userId":"scenario@example.com"}}`))
		s.must("assign", r8, err, 200)
		r9, err := c.IncidentsServiceGetIncidentWithResponse(s.ctx, id)
		got = s.must("read after assign", r9, err, 200)
		s.equal("read after assign", got, "incident.assignments.0.assignedTo.userId", "scenario@example.com")
		r10, err := c.IncidentsServiceUnassignIncidentsWithResponse(s.ctx, &incidents.IncidentsServiceUnassignIncidentsParams{IncidentIds: []string{id}})
		s.must("unassign", r10, err, 200)

		r11, err := c.IncidentsServiceListIncidentEventsWithResponse(s.ctx, nil)
		s.must("list events", r11, err, 200)
		s.typed("list events", r11.JSON200)
		r12, err := c.IncidentsServiceListIncidentEventsTotalCountWithResponse(s.ctx, nil)
		s.must("count events", r12, err, 200)
		s.typed("count events", r12.JSON200)
		r13, err := c.IncidentsServiceListIncidentAggregationsWithResponse(s.ctx, nil)
		s.must("aggregations", r13, err, 200)
		s.typed("aggregations", r13.JSON200)
		r14, err := c.IncidentsServiceGetFilterValuesWithResponse(s.ctx, incidents.IncidentsServiceGetFilterValuesJSONRequestBody{})
		s.must("filter values", r14, err, 200)
		s.typed("filter values", r14.JSON200)

		r15, err := c.IncidentsServiceResolveIncidentsWithResponse(s.ctx, incidents.IncidentsServiceResolveIncidentsJSONRequestBody{IncidentIds: []string{id}})
		s.must("resolve", r15, err, 200)
		r16, err := c.IncidentsServiceGetIncidentWithResponse(s.ctx, id)
		got = s.must("read after resolve", r16, err, 200)
		s.equal("read after resolve", got, "incident.status", "INCIDENT_STATUS_RESOLVED")

		r17, err := c.IncidentsServiceCloseIncidentsWithResponse(s.ctx, incidents.IncidentsServiceCloseIncidentsJSONRequestBody{IncidentIds: []string{id}})
		s.must("close", r17, err, 200)
	})
}
