package main

import (
	"mgmtapi-ci/publicclients/caseevents"
	"mgmtapi-ci/publicclients/cases"
)

func init() {
	// No create (cases come from alerts): list, read, update, the state changes, close.
	register("cases_service", func(s *S) {
		c, err := cases.NewClientWithResponses(s.base, cases.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		alert := unique("PublicClientsCase")
		id := s.ingest(alert, "checkout")

		r1, err := c.CasesServiceListCasesWithResponse(s.ctx, cases.CasesServiceListCasesJSONRequestBody{})
		list := s.must("list", r1, err, 200)
		s.typed("list", r1.JSON200)
		s.contains("list", list, "cases", "id", id)

		r2, err := c.CasesServiceGetCaseWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "case.id", id)
		s.equal("read", got, "case.status", "CASE_STATUS_ACTIVE")

		r3, err := c.CasesServiceUpdateCaseWithResponse(s.ctx, id, body[cases.CasesServiceUpdateCaseJSONRequestBody](s, "update", `{"title":"`+alert+` (scenario)"}`))
		s.must("update", r3, err, 200)
		r4, err := c.CasesServiceGetCaseWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "case.title", alert+" (scenario)")

		r5, err := c.CasesServiceAcknowledgeCaseWithResponse(s.ctx, id)
		s.must("acknowledge", r5, err, 200)
		r6, err := c.CasesServiceGetCaseWithResponse(s.ctx, id)
		got = s.must("read after acknowledge", r6, err, 200)
		s.equal("read after acknowledge", got, "case.status", "CASE_STATUS_ACKNOWLEDGED")
		r7, err := c.CasesServiceUnacknowledgeCaseWithResponse(s.ctx, id)
		s.must("unacknowledge", r7, err, 200)

		r8, err := c.CasesServiceSetPriorityOverrideWithResponse(s.ctx, id, body[cases.CasesServiceSetPriorityOverrideJSONRequestBody](s, "set priority", `{"priority":"CASE_PRIORITY_P3"}`))
		s.must("set priority", r8, err, 200)
		r9, err := c.CasesServiceGetCaseWithResponse(s.ctx, id)
		got = s.must("read after set priority", r9, err, 200)
		s.equal("read after set priority", got, "case.priority", "CASE_PRIORITY_P3")
		r10, err := c.CasesServiceClearPriorityOverrideWithResponse(s.ctx, id)
		s.must("clear priority", r10, err, 200)

		r11, err := c.CasesServiceGetCaseDeepLinksWithResponse(s.ctx, id)
		s.must("deep links", r11, err, 200)
		r12, err := c.CasesServiceGetGroupingKeysWithResponse(s.ctx)
		s.must("grouping keys", r12, err, 200)

		r13, err := c.CasesServiceResolveCaseWithResponse(s.ctx, id, body[cases.CasesServiceResolveCaseJSONRequestBody](s, "resolve", `{"reason":"fixed by the scenario"}`))
		s.must("resolve", r13, err, 200)
		r14, err := c.CasesServiceGetCaseWithResponse(s.ctx, id)
		got = s.must("read after resolve", r14, err, 200)
		s.equal("read after resolve", got, "case.status", "CASE_STATUS_RESOLVED")

		r15, err := c.CasesServiceCloseCaseWithResponse(s.ctx, id)
		s.must("close", r15, err, 200)
		r16, err := c.CasesServiceGetCaseWithResponse(s.ctx, id)
		got = s.must("read after close", r16, err, 200)
		s.equal("read after close", got, "case.status", "CASE_STATUS_CLOSED")
	})

	// Comments: create, read, update, list, delete, on a case that an alert opened.
	register("case_events_service", func(s *S) {
		c, err := caseevents.NewClientWithResponses(s.base, caseevents.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		caseID := s.ingest(unique("PublicClientsComment"), "billing")

		r1, err := c.CaseEventsServiceCreateCommentWithResponse(s.ctx, caseID, caseevents.CaseEventsServiceCreateCommentJSONRequestBody{Text: "first look"})
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "event.eventId")
		if id == "" {
			s.failf("create", "no event.eventId: %v", out)
		}

		r2, err := c.CaseEventsServiceGetEventWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "event.eventId", id)
		s.equal("read", got, "event.eventData.comment.unsafeText", "first look")

		r3, err := c.CaseEventsServiceUpdateCommentWithResponse(s.ctx, id, caseevents.CaseEventsServiceUpdateCommentJSONRequestBody{Text: "second look"})
		s.must("update", r3, err, 200)
		r4, err := c.CaseEventsServiceGetEventWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "event.eventData.comment.unsafeText", "second look")

		r5, err := c.CaseEventsServiceListEventsWithResponse(s.ctx, caseID)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "events", "eventId", id)

		r6, err := c.CaseEventsServiceDeleteCommentWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.CaseEventsServiceGetEventWithResponse(s.ctx, id)
		if status := s.mustOneOf("read after delete", r7, err, 404, 200); status == 200 {
			// A deleted comment may stay in the history, marked deleted; its text must be gone.
			if gone := s.must("read after delete", r7, nil, 200); str(gone, "event.eventData.comment.unsafeText") == "second look" {
				s.failf("read after delete", "the deleted comment still reads: %v", gone)
			}
		}
	})
}
