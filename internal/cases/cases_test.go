package cases_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const fileRef = `{"fileId":"0b8e3c1a-6a0e-4d4e-9a43-0c5b8e0d1f22","fileName":"a.png","isDeleted":false}`

func attachments(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"file":` + fileRef + `}`
	}
	return "[" + strings.Join(items, ",") + "]"
}

func commentBody(text, attachments string) string {
	b, _ := json.Marshal(text)
	if attachments == "" {
		return `{"text":` + string(b) + `}`
	}
	return `{"text":` + string(b) + `,"attachments":` + attachments + `}`
}

func TestCreateComment(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "Disk full")
		max := strings.Repeat("é", 9999) + "x" // 10000 code points, 19999 bytes

		t.Run("text bounds", func(t *testing.T) {
			for _, tc := range []struct {
				name, text, stored string
				status             int
				fragment           string
			}{
				{"one character", "x", "x", 200, ""},
				{"10000 code points, multi-byte", max, max, 200, ""},
				{"10000 after trimming", "  \n\t" + max + " \n", max, 200, ""},
				{"trimmed", "  hello world \n", "hello world", 200, ""},
				{"10001 code points", max + "y", "", 400, "text: "},
				{"empty", "", "", 400, "text: must contain a non-whitespace character"},
				{"only whitespace", " \t\n\u00a0\u2003 ", "", 400, "text: must contain a non-whitespace character"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := h.comment(h.RootKey, ref.ID, commentBody(tc.text, ""))
					if tc.status != 200 {
						apitest.ExpectError(t, res, tc.status, tc.fragment)
						return
					}
					ev := decodeEvent(t, h.ok(res, "comment"))
					if got := ev.EventData.Comment.Value.UnsafeText.Value; got != tc.stored {
						t.Fatalf("stored text %d code points %q…, want %d", len([]rune(got)), cutString(got), len([]rune(tc.stored)))
					}
					got := decodeEvent(t, h.ok(h.do("GET", eventsPath+ev.EventId, h.RootKey, ""), "get event"))
					if got.EventData.Comment.Value.UnsafeText.Value != tc.stored {
						t.Fatalf("read back %q", cutString(got.EventData.Comment.Value.UnsafeText.Value))
					}
				})
			}
		})

		t.Run("attachments", func(t *testing.T) {
			log := `{"logContent":"boom","logId":"0B8E3C1A-6A0E-4D4E-9A43-0C5B8E0D1F22","logTimestamp":"2024-05-01T12:00:00Z"}`
			widget := `{"customDashboardId":"d1","widgetId":"w1","widgetScreenshot":` + fileRef + `}`
			for _, tc := range []struct {
				name, attachments string
				status            int
				fragment          string
			}{
				{"none", `[]`, 200, ""},
				{"100", attachments(100), 200, ""},
				{"each kind", `[{"log":` + log + `},{"customWidget":` + widget + `},{"file":` + fileRef + `}]`, 200, ""},
				{"101", attachments(101), 400, "attachments"},
				{"empty item", `[{"file":` + fileRef + `},{}]`, 400, "attachments[1]: must set exactly one of log, customWidget, file"},
				{"log and file", `[{"log":` + log + `,"file":` + fileRef + `}]`, 400, "attachments[0]: must set exactly one of log, customWidget, file"},
				{"log and widget", `[{"file":` + fileRef + `},{"file":` + fileRef + `},{"log":` + log + `,"customWidget":` + widget + `}]`, 400, "attachments[2]: must set exactly one"},
				{"widget and file", `[{"customWidget":` + widget + `,"file":` + fileRef + `}]`, 400, "attachments[0]: must set exactly one"},
				{"all three", `[{"log":` + log + `,"customWidget":` + widget + `,"file":` + fileRef + `}]`, 400, "attachments[0]: must set exactly one"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := h.comment(h.RootKey, ref.ID, commentBody("see attached", tc.attachments))
					if tc.status != 200 {
						apitest.ExpectError(t, res, tc.status, tc.fragment)
						return
					}
					ev := decodeEvent(t, h.ok(res, "comment"))
					var want []any
					_ = json.Unmarshal([]byte(tc.attachments), &want)
					if n := len(ev.EventData.Comment.Value.Attachments); n != len(want) {
						t.Fatalf("%d attachments stored, want %d", n, len(want))
					}
				})
			}
		})

		t.Run("actor is the calling key", func(t *testing.T) {
			key := h.key(h.RootKey, "case:Comment", "case:Read")
			res := h.ok(h.do("GET", "/mgmt/openapi/5/aaa/api-keys/v3/list/all", h.RootKey, ""), "list keys")
			var keys oas.ApiKeyList
			if err := keys.UnmarshalJSON(res.Body); err != nil {
				t.Fatal(err)
			}
			ev := decodeEvent(t, h.ok(h.comment(key, ref.ReadableID, `{"text":"by the second key"}`), "comment"))
			actor := ev.Actor.ApiKey.Value
			if !ev.Actor.ApiKey.Set || ev.Actor.System != nil || ev.Actor.PrometheusAlertManager.Set {
				t.Fatalf("actor %+v, want apiKey only", ev.Actor)
			}
			found := false
			for _, k := range keys.Keys {
				if k.ID == string(actor.ID.Value) && k.Name == string(actor.Name.Value) && k.Name == "test key" {
					found = true
				}
			}
			if !found {
				t.Fatalf("actor apiKey %+v is not the calling key", actor)
			}
		})
	})
}

func cutString(s string) string {
	if r := []rune(s); len(r) > 20 {
		return string(r[:20])
	}
	return s
}

func TestCaseIdentifiers(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "first")
		otherTeam, otherKey := h.team("other")
		other := h.open(otherTeam, "g1", "theirs")
		if ref.ReadableID != "CASE-1" || other.ReadableID != "CASE-1" {
			t.Fatalf("readable ids %s and %s, want CASE-1 in each team", ref.ReadableID, other.ReadableID)
		}
		for _, tc := range []struct {
			name, ident string
			status      int
		}{
			{"uuid", ref.ID, 200},
			{"readable id", "CASE-1", 200},
			{"uppercase uuid", strings.ToUpper(ref.ID), 400},
			{"65 characters", "CASE-" + strings.Repeat("1", 60), 400},
			{"64 characters unknown", "CASE-" + strings.Repeat("9", 59), 404},
			{"unknown number", "CASE-2", 404},
			{"leading zero", "CASE-01", 404},
			{"other prefix", "INC-1", 404},
			{"unknown uuid", "00000000-0000-4000-8000-000000000000", 404},
			{"other team's uuid", other.ID, 404},
			{"lowercase readable id", "case-1", 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, op := range []struct{ method, suffix, body string }{
					{"GET", "", ""}, {"GET", "/events", ""}, {"POST", "/comments", `{"text":"x"}`},
					{"POST", "/sync-external-thread-comments", ""},
				} {
					res := h.do(op.method, casesPath+"/"+tc.ident+op.suffix, h.RootKey, op.body)
					if tc.status == 200 {
						h.ok(res, op.method+" "+op.suffix)
						continue
					}
					apitest.ExpectError(t, res, tc.status)
				}
			})
		}
		// The other team sees its own CASE-1, not ours.
		if got := h.getCase(otherKey, "CASE-1"); got.ID != other.ID || got.Title != "theirs" {
			t.Fatalf("other team's CASE-1 is %s %q", got.ID, got.Title)
		}
	})
}

func TestSyncExternalThread(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "first")
		sync := func(id string) bool {
			t.Helper()
			res := h.ok(h.do("POST", casesPath+"/"+id+"/sync-external-thread-comments", h.RootKey, ""), "sync")
			var out oas.SyncExternalThreadResponse
			if err := out.UnmarshalJSON(res.Body); err != nil {
				t.Fatal(err)
			}
			return out.SyncRegistered
		}
		before := len(h.events(h.RootKey, ref.ID))
		if !sync(ref.ID) {
			t.Fatal("first sync not registered")
		}
		h.Clock.Advance(59 * time.Second)
		if sync(ref.ReadableID) {
			t.Fatal("second sync within 60s registered")
		}
		h.Clock.Advance(time.Second)
		if !sync(ref.ID) {
			t.Fatal("sync 60s later not registered")
		}
		// Any status, even closed.
		h.ok(h.close(h.RootKey, ref.ID), "close")
		h.Clock.Advance(2 * time.Minute)
		if !sync(ref.ID) {
			t.Fatal("sync of a closed case not registered")
		}
		if got := len(h.events(h.RootKey, ref.ID)); got != before+1 { // the close only
			t.Fatalf("%d events, want %d: sync writes none", got, before+1)
		}
	})
}

type opCase struct {
	name string
	do   func(h *harness, id string) apitest.Response
}

var ops = map[string]opCase{
	"acknowledge":   {"acknowledge", func(h *harness, id string) apitest.Response { return h.ack(h.RootKey, id) }},
	"unacknowledge": {"unacknowledge", func(h *harness, id string) apitest.Response { return h.unack(h.RootKey, id) }},
	"resolve":       {"resolve", func(h *harness, id string) apitest.Response { return h.resolve(h.RootKey, id, "") }},
	"resolveReason": {"resolve with reason", func(h *harness, id string) apitest.Response {
		return h.resolve(h.RootKey, id, `{"reason":"fixed the disk"}`)
	}},
	"close": {"close", func(h *harness, id string) apitest.Response { return h.close(h.RootKey, id) }},
	"assign": {"assign", func(h *harness, id string) apitest.Response {
		return h.assign(h.RootKey, id, "11111111-2222-4333-8444-555555555555")
	}},
	"unassign": {"unassign", func(h *harness, id string) apitest.Response { return h.unassign(h.RootKey, id) }},
	"update":   {"update", func(h *harness, id string) apitest.Response { return h.update(h.RootKey, id, `{"title":"new title"}`) }},
	"comment":  {"comment", func(h *harness, id string) apitest.Response { return h.comment(h.RootKey, id, `{"text":"hi"}`) }},
}

func TestStateMachine(t *testing.T) {
	const (
		A  = oas.CaseStatusCASESTATUSACTIVE
		K  = oas.CaseStatusCASESTATUSACKNOWLEDGED
		R  = oas.CaseStatusCASESTATUSRESOLVED
		C  = oas.CaseStatusCASESTATUSCLOSED
		sc = "statusChanged"
	)
	type cell struct {
		from   oas.CaseStatus
		op     string
		status int            // answer
		to     oas.CaseStatus // status after
		events []string       // events written
		msg    string         // 409 fragment
	}
	cells := []cell{
		{A, "acknowledge", 200, K, []string{sc}, ""},
		{K, "acknowledge", 200, K, nil, ""},
		{R, "acknowledge", 409, R, nil, "is resolved; only an active case can be acknowledged"},
		{C, "acknowledge", 409, C, nil, "is closed; only an active case can be acknowledged"},
		{A, "unacknowledge", 200, A, nil, ""},
		{K, "unacknowledge", 200, A, []string{sc}, ""},
		{R, "unacknowledge", 409, R, nil, "is resolved"},
		{C, "unacknowledge", 409, C, nil, "is closed"},
		{A, "resolve", 200, R, []string{sc}, ""},
		{K, "resolve", 200, R, []string{sc}, ""},
		{R, "resolve", 200, R, nil, ""},
		{C, "resolve", 409, C, nil, "is closed"},
		{A, "resolveReason", 200, R, []string{sc, "resolutionReasonChangedEvent"}, ""},
		{R, "resolveReason", 200, R, []string{"resolutionReasonChangedEvent"}, ""},
		{C, "resolveReason", 409, C, nil, "is closed"},
		{A, "close", 200, C, []string{sc}, ""},
		{K, "close", 200, C, []string{sc}, ""},
		{R, "close", 200, C, []string{sc}, ""},
		{C, "close", 200, C, nil, ""},
		{A, "assign", 200, A, []string{"assigned"}, ""},
		{K, "assign", 200, K, []string{"assigned"}, ""},
		{R, "assign", 200, R, []string{"assigned"}, ""},
		{C, "assign", 409, C, nil, "is closed"},
		{A, "unassign", 200, A, nil, ""}, // nobody assigned: nothing to do
		{C, "unassign", 409, C, nil, "is closed"},
		{A, "update", 200, A, []string{"titleChangedEvent"}, ""},
		{K, "update", 200, K, []string{"titleChangedEvent"}, ""},
		{R, "update", 200, R, []string{"titleChangedEvent"}, ""},
		{C, "update", 409, C, nil, "is closed"},
		{A, "comment", 200, A, []string{"comment"}, ""},
		{K, "comment", 200, K, []string{"comment"}, ""},
		{R, "comment", 200, R, []string{"comment"}, ""},
		{C, "comment", 200, C, []string{"comment"}, ""},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		for i, c := range cells {
			t.Run(fmt.Sprintf("%s from %s", ops[c.op].name, c.from), func(t *testing.T) {
				ref := h.open(1, fmt.Sprintf("sm-%d", i), "state machine")
				switch c.from {
				case K:
					h.ok(h.ack(h.RootKey, ref.ID), "ack")
				case R:
					h.ok(h.resolve(h.RootKey, ref.ID, ""), "resolve")
				case C:
					h.ok(h.close(h.RootKey, ref.ID), "close")
				}
				before := h.getCase(h.RootKey, ref.ID)
				if before.Status != c.from {
					t.Fatalf("set-up status %s", before.Status)
				}
				nBefore := len(h.events(h.RootKey, ref.ID))
				h.Clock.Advance(time.Minute)
				res := ops[c.op].do(h, ref.ID)
				if c.status != 200 {
					apitest.ExpectError(t, res, c.status, "case "+ref.ReadableID+" ", c.msg)
				} else if c.op == "comment" {
					decodeEvent(t, h.ok(res, c.op))
				} else {
					if got := decodeCase(t, h.ok(res, c.op)); got.Status != c.to {
						t.Fatalf("answer status %s, want %s", got.Status, c.to)
					}
				}
				after := h.getCase(h.RootKey, ref.ID)
				if after.Status != c.to {
					t.Fatalf("status %s, want %s", after.Status, c.to)
				}
				evs := h.events(h.RootKey, ref.ID)
				got := kinds(evs[nBefore:])
				if len(got) == 0 {
					got = nil
				}
				if !reflect.DeepEqual(got, c.events) {
					t.Fatalf("events %v, want %v", got, c.events)
				}
				for _, e := range evs[nBefore:] {
					if !e.Actor.ApiKey.Set {
						t.Fatalf("event actor %+v, want the api key", e.Actor)
					}
					if d := e.EventData.StatusChanged; d.Set && (d.Value.OldStatus.Value != c.from || d.Value.NewStatus.Value != c.to) {
						t.Fatalf("statusChanged %s → %s, want %s → %s", d.Value.OldStatus.Value, d.Value.NewStatus.Value, c.from, c.to)
					}
				}
				// A change moves updateTime; a no-op or a refusal leaves the case as it was.
				if moved := after.UpdateTime.After(before.UpdateTime); moved != (len(c.events) > 0) {
					t.Fatalf("updateTime moved %v with events %v", moved, c.events)
				}
			})
		}
	})
}

func TestChangesAndEvents(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "  Disk full  ")
		c := h.getCase(h.RootKey, ref.ID)
		if c.Title != "Disk full" || c.Status != oas.CaseStatusCASESTATUSACTIVE || c.Priority != oas.CasePriorityCASEPRIORITYP5 {
			t.Fatalf("new case %q %s %s", c.Title, c.Status, c.Priority)
		}
		u1, u2 := "11111111-2222-4333-8444-555555555555", "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"

		h.ok(h.update(h.RootKey, ref.ID, `{"title":"  Disk almost full "}`), "title")
		h.ok(h.update(h.RootKey, ref.ID, `{"priorityOverride":"CASE_PRIORITY_P2"}`), "override")
		c = h.getCase(h.RootKey, ref.ID)
		if c.Title != "Disk almost full" || c.Priority != oas.CasePriorityCASEPRIORITYP2 ||
			c.PriorityDetails.Override.Value != oas.CasePriorityCASEPRIORITYP2 || c.PriorityDetails.System.Value != oas.CasePriorityCASEPRIORITYP5 {
			t.Fatalf("after update: %q %s %+v", c.Title, c.Priority, c.PriorityDetails)
		}
		h.ok(h.update(h.RootKey, ref.ID, `{"priorityOverride":"CASE_PRIORITY_UNSPECIFIED"}`), "clear override")
		h.ok(h.update(h.RootKey, ref.ID, `{"resolutionReason":"first reason"}`), "reason")
		h.ok(h.assign(h.RootKey, ref.ID, u1), "assign")
		h.ok(h.assign(h.RootKey, ref.ID, u2), "reassign")
		h.ok(h.unassign(h.RootKey, ref.ID), "unassign")
		h.ok(h.ack(h.RootKey, ref.ID), "ack")
		h.ok(h.resolve(h.RootKey, ref.ID, `{"reason":"second reason"}`), "resolve")

		apitest.ExpectError(t, h.update(h.RootKey, ref.ID, `{}`), 400, "nothing to change")
		apitest.ExpectError(t, h.update(h.RootKey, ref.ID, `{"title":"`+strings.Repeat("x", 513)+`"}`), 400, "title")
		apitest.ExpectError(t, h.update(h.RootKey, ref.ID, `{"title":"   "}`), 400, "title")

		c = h.getCase(h.RootKey, ref.ID)
		if c.Priority != oas.CasePriorityCASEPRIORITYP5 || c.PriorityDetails.Override.Set || c.Assignee.Set {
			t.Fatalf("after changes: %s %+v assignee %+v", c.Priority, c.PriorityDetails, c.Assignee)
		}
		rd := c.ResolutionDetails.Value
		if rd.Reason.Value != "second reason" || !rd.ResolveTime.Set || rd.ResolvedBy.Value.ApiKey == nil {
			t.Fatalf("resolution details %+v", rd)
		}
		if !c.AcknowledgeTime.Set {
			t.Fatal("acknowledgeTime missing")
		}

		evs := h.events(h.RootKey, ref.ReadableID)
		want := []string{"created", "titleChangedEvent", "priorityDetailsChanged", "priorityDetailsChanged",
			"resolutionReasonChangedEvent", "assigned", "assigned", "unassigned", "statusChanged", "statusChanged",
			"resolutionReasonChangedEvent"}
		if got := kinds(evs); !reflect.DeepEqual(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		d := evs
		check := func(ok bool, what string, v any) {
			t.Helper()
			if !ok {
				t.Fatalf("%s: %+v", what, v)
			}
		}
		check(d[0].Actor.PrometheusAlertManager.Value.ReceiverName.Value == "team-receiver", "created actor", d[0].Actor)
		check(d[0].EventData.Created.Value.Priority.Value == oas.CasePriorityCASEPRIORITYP5, "created", d[0].EventData)
		tc := d[1].EventData.TitleChangedEvent.Value
		check(tc.From.Value == "Disk full" && tc.To.Value == "Disk almost full", "title", tc)
		p := d[2].EventData.PriorityDetailsChanged.Value
		check(!p.From.Value.Override.Set && p.To.Value.Override.Value == oas.CasePriorityCASEPRIORITYP2 &&
			p.To.Value.System.Value == oas.CasePriorityCASEPRIORITYP5, "override set", p)
		p = d[3].EventData.PriorityDetailsChanged.Value
		check(p.From.Value.Override.Value == oas.CasePriorityCASEPRIORITYP2 && !p.To.Value.Override.Set, "override cleared", p)
		r := d[4].EventData.ResolutionReasonChangedEvent.Value
		check(!r.From.Set && r.To.Value == "first reason", "first reason", r)
		a := d[5].EventData.Assigned.Value
		check(a.AssigneeUserId.Value == u1 && !a.PreviousAssigneeUserId.Set, "assigned", a)
		a = d[6].EventData.Assigned.Value
		check(a.AssigneeUserId.Value == u2 && a.PreviousAssigneeUserId.Value == u1, "reassigned", a)
		check(d[7].EventData.Unassigned.Value.PreviousAssigneeUserId.Value == u2, "unassigned", d[7].EventData)
		s := d[8].EventData.StatusChanged.Value
		check(s.OldStatus.Value == oas.CaseStatusCASESTATUSACTIVE && s.NewStatus.Value == oas.CaseStatusCASESTATUSACKNOWLEDGED, "ack", s)
		s = d[9].EventData.StatusChanged.Value
		check(s.OldStatus.Value == oas.CaseStatusCASESTATUSACKNOWLEDGED && s.NewStatus.Value == oas.CaseStatusCASESTATUSRESOLVED, "resolve", s)
		r = d[10].EventData.ResolutionReasonChangedEvent.Value
		check(r.From.Value == "first reason" && r.To.Value == "second reason", "second reason", r)
		for _, e := range d[1:] {
			check(e.Actor.ApiKey.Value.Name.Value == "bootstrap", "actor", e.Actor)
		}
	})
}

func TestCommentEditAndDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "first")
		otherTeam, otherKey := h.team("other")
		_ = otherTeam
		ev := decodeEvent(t, h.ok(h.comment(h.RootKey, ref.ID, `{"text":"before"}`), "comment"))
		h.Clock.Advance(time.Hour)
		path := eventsPath + ev.EventId + "/comments"

		apitest.ExpectError(t, h.do("PUT", path, otherKey, `{"text":"x"}`), 404)
		apitest.ExpectError(t, h.do("DELETE", path, otherKey, ""), 404)
		apitest.ExpectError(t, h.do("GET", eventsPath+ev.EventId, otherKey, ""), 404)
		apitest.ExpectError(t, h.do("PUT", path, h.RootKey, `{"text":"  "}`), 400, "text: must contain a non-whitespace character")
		apitest.ExpectError(t, h.do("PUT", path, h.RootKey, `{"text":"x","attachments":[{}]}`), 400, "attachments[0]")

		edited := decodeEvent(t, h.ok(h.do("PUT", eventsPath+strings.ToUpper(ev.EventId)+"/comments", h.RootKey,
			`{"text":" after ","attachments":[{"file":`+fileRef+`}]}`), "edit"))
		if edited.EventData.Comment.Value.UnsafeText.Value != "after" || len(edited.EventData.Comment.Value.Attachments) != 1 {
			t.Fatalf("edited %+v", edited.EventData.Comment.Value)
		}
		if !edited.UpdateTime.Value.After(ev.CreateTime) || !edited.CreateTime.Equal(ev.CreateTime) {
			t.Fatalf("times: created %v, updated %v", edited.CreateTime, edited.UpdateTime.Value)
		}
		got := decodeEvent(t, h.ok(h.do("GET", eventsPath+ev.EventId, h.RootKey, ""), "get"))
		if got.EventData.Comment.Value.UnsafeText.Value != "after" || !got.UpdateTime.Value.Equal(edited.UpdateTime.Value) {
			t.Fatalf("read back %+v", got)
		}

		created := h.events(h.RootKey, ref.ID)[0]
		apitest.ExpectError(t, h.do("PUT", eventsPath+created.EventId+"/comments", h.RootKey, `{"text":"x"}`), 400, "not a comment")
		apitest.ExpectError(t, h.do("DELETE", eventsPath+created.EventId+"/comments", h.RootKey, ""), 400, "not a comment")

		res := h.ok(h.do("DELETE", path, h.RootKey, ""), "delete")
		if strings.TrimSpace(string(res.Body)) != "{}" {
			t.Fatalf("delete answered %s", res.Body)
		}
		apitest.ExpectError(t, h.do("GET", eventsPath+ev.EventId, h.RootKey, ""), 404)
		apitest.ExpectError(t, h.do("DELETE", path, h.RootKey, ""), 404)
		if got := kinds(h.events(h.RootKey, ref.ID)); !reflect.DeepEqual(got, []string{"created"}) {
			t.Fatalf("events after delete %v", got)
		}
	})
}

func TestPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "first")
		user := "11111111-2222-4333-8444-555555555555"
		type call struct {
			perm, method, path, body string
		}
		calls := []call{
			{"case:Read", "GET", casesPath + "/" + ref.ID, ""},
			{"case:Read", "POST", casesPath, `{}`},
			{"case:Read", "GET", casesPath + "/" + ref.ID + "/events", ""},
			{"case:Comment", "POST", casesPath + "/" + ref.ID + "/comments", `{"text":"x"}`},
			{"case:Comment", "POST", casesPath + "/" + ref.ID + "/sync-external-thread-comments", ""},
			{"case:Update", "PUT", casesPath + "/" + ref.ID, `{"title":"t"}`},
			{"case:Assign", "POST", "/mgmt/openapi/5/cases/assigned/v1/" + ref.ID, `{"assignee":{"userId":"` + user + `"}}`},
			{"case:Assign", "DELETE", "/mgmt/openapi/5/cases/assigned/v1/" + ref.ID, ""},
			{"case:Acknowledge", "PUT", "/mgmt/openapi/5/cases/acknowledged/v1/" + ref.ID, ""},
			{"case:Acknowledge", "DELETE", "/mgmt/openapi/5/cases/acknowledged/v1/" + ref.ID, ""},
			{"case:Close", "PUT", "/mgmt/openapi/5/cases/resolved/v1/" + ref.ID, ""},
			{"case:Close", "POST", "/mgmt/openapi/5/cases/closed/v1/" + ref.ID, ""},
		}
		_, otherKey := h.team("other")
		for _, c := range calls {
			t.Run(c.method+" "+c.path+" needs "+c.perm, func(t *testing.T) {
				var others []string
				for _, p := range []string{"case:Read", "case:Comment", "case:Update", "case:Assign", "case:Acknowledge", "case:Close"} {
					if p != c.perm {
						others = append(others, p)
					}
				}
				apitest.ExpectError(t, h.do(c.method, c.path, h.key(h.RootKey, others...), c.body), 403, c.perm)
				apitest.ExpectError(t, h.do(c.method, c.path, "", c.body), 401)
				if c.path != casesPath {
					apitest.ExpectError(t, h.do(c.method, c.path, otherKey, c.body), 404, "case_id")
				}
			})
		}
		// The other team's list is empty; the case did not change.
		res := h.ok(h.do("POST", casesPath, otherKey, `{}`), "list")
		var list oas.CasePage
		if err := list.UnmarshalJSON(res.Body); err != nil || len(list.Cases) != 0 {
			t.Fatalf("other team lists %d cases (%v)", len(list.Cases), err)
		}
		if got := kinds(h.events(h.RootKey, ref.ID)); !reflect.DeepEqual(got, []string{"created"}) {
			t.Fatalf("refused calls wrote events %v", got)
		}
	})
}

func TestNumberingUnderConcurrency(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		const n = 50
		var wg sync.WaitGroup
		refs := make([]cases.CaseRef, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				refs[i], _, errs[i] = openCase(h.DB, cases.AlertGroup{TeamID: 1, GroupKey: fmt.Sprintf("group-%d", i), Receiver: "r"})
			}()
		}
		// Concurrent openings of one group make one case.
		same := make([]cases.CaseRef, 10)
		sameOpened := make([]bool, 10)
		sameErrs := make([]error, 10)
		for i := range same {
			wg.Add(1)
			go func() {
				defer wg.Done()
				same[i], sameOpened[i], sameErrs[i] = openCase(h.DB, cases.AlertGroup{TeamID: 1, GroupKey: "shared", Receiver: "r"})
			}()
		}
		wg.Wait()
		var ids []string
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("open %d: %v", i, errs[i])
			}
			ids = append(ids, refs[i].ReadableID)
		}
		opened := 0
		for i := range same {
			if sameErrs[i] != nil {
				t.Fatalf("open shared: %v", sameErrs[i])
			}
			if same[i] != same[0] {
				t.Fatalf("shared group answered %v and %v", same[i], same[0])
			}
			if sameOpened[i] {
				opened++
			}
		}
		if opened != 1 {
			t.Fatalf("shared group opened %d times", opened)
		}
		ids = append(ids, same[0].ReadableID)
		var want []string
		for i := 1; i <= n+1; i++ {
			want = append(want, fmt.Sprintf("CASE-%d", i))
		}
		sort.Strings(ids)
		sort.Strings(want)
		if !reflect.DeepEqual(ids, want) {
			t.Fatalf("numbers %v, want CASE-1..CASE-%d", ids, n+1)
		}
		if c := h.getCase(h.RootKey, fmt.Sprintf("CASE-%d", n+1)); c.ReadableId != fmt.Sprintf("CASE-%d", n+1) {
			t.Fatalf("last case %s", c.ReadableId)
		}
	})
}

func TestIngestedAlerts(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		long := strings.Repeat("ü", 600)
		ref := h.open(1, "g1", long)
		if c := h.getCase(h.RootKey, ref.ID); len([]rune(c.Title)) != 512 {
			t.Fatalf("title of %d characters", len([]rune(c.Title)))
		}
		blank := h.open(1, "group-key-2", "   ")
		if c := h.getCase(h.RootKey, blank.ID); c.Title != "Alertmanager group group-key-2" {
			t.Fatalf("title %q", c.Title)
		}
		again, opened, err := openCase(h.DB, cases.AlertGroup{TeamID: 1, GroupKey: "g1"})
		if err != nil || opened || again != ref {
			t.Fatalf("second open of g1: %v %v %v", again, opened, err)
		}

		a1 := cases.IndicatorAlert{AlertName: "DiskFull", Fingerprint: "fp1", Labels: map[string]string{"host": "a"},
			Priority: oas.CasePriorityCASEPRIORITYP3, Firing: true, StartsAt: t0}
		a2 := cases.IndicatorAlert{AlertName: "DiskFull", Fingerprint: "fp2", Labels: map[string]string{"host": "b"},
			Priority: oas.CasePriorityCASEPRIORITYP2, Firing: true, StartsAt: t0.Add(time.Minute)}
		b1 := cases.IndicatorAlert{AlertName: "CPU", Fingerprint: "fp3", Labels: map[string]string{"host": "a"},
			Priority: oas.CasePriorityCASEPRIORITYP4, Firing: true, StartsAt: t0.Add(2 * time.Minute)}
		h.record(1, ref.ID, a1, b1)
		// A case whose first alerts come with its opening is created with their priority.
		p3 := h.openWith(1, "opened-with-alerts", a1, b1)
		if evs := h.events(h.RootKey, p3.ID); len(evs) != 1 || evs[0].EventData.Created.Value.Priority.Value != oas.CasePriorityCASEPRIORITYP3 {
			t.Fatalf("events of a case opened with a P3 alert: %v", kinds(evs))
		} else if c := h.getCase(h.RootKey, p3.ID); c.Priority != oas.CasePriorityCASEPRIORITYP3 {
			t.Fatalf("priority %s", c.Priority)
		}
		h.record(1, ref.ID, a2)
		h.record(1, ref.ID, a2) // already recorded: nothing changes

		c := h.getCase(h.RootKey, ref.ID)
		if c.Priority != oas.CasePriorityCASEPRIORITYP2 || c.PriorityDetails.System.Value != oas.CasePriorityCASEPRIORITYP2 {
			t.Fatalf("priority %s", c.Priority)
		}
		inds := c.CaseIndicators.AlertIndicators
		if len(inds) != 2 {
			t.Fatalf("%d indicators", len(inds))
		}
		disk := inds[0]
		if disk.AlertName.Value != "DiskFull" || disk.State != oas.IndicatorStateINDICATORSTATETRIGGERED ||
			disk.Priority != oas.IndicatorPriorityINDICATORPRIORITYP2 || !disk.TriggerTime.Equal(t0) ||
			disk.LatestAlertVersion != "fp2" || !reflect.DeepEqual(disk.AlertVersions, []string{"fp1", "fp2"}) ||
			len(disk.Permutations) != 2 {
			t.Fatalf("DiskFull indicator %+v", disk)
		}
		if len(disk.AlertId) != 36 || disk.AlertId != strings.ToLower(disk.AlertId) || disk.AlertId == inds[1].AlertId {
			t.Fatalf("alert ids %q %q", disk.AlertId, inds[1].AlertId)
		}
		// The same alert name in another case of the team has the same id.
		// Alerts that come after the opening instant raise the priority with an event.
		h.Clock.Advance(time.Second)
		h.record(1, blank.ID, a1)
		if id := h.getCase(h.RootKey, blank.ID).CaseIndicators.AlertIndicators[0].AlertId; id != disk.AlertId {
			t.Fatalf("alert id %s in another case, want %s", id, disk.AlertId)
		}
		if evs := h.events(h.RootKey, blank.ID); len(evs) != 2 ||
			evs[0].EventData.Created.Value.Priority.Value != oas.CasePriorityCASEPRIORITYP5 ||
			evs[1].EventData.PriorityDetailsChanged.Value.From.Value.System.Value != oas.CasePriorityCASEPRIORITYP5 ||
			evs[1].EventData.PriorityDetailsChanged.Value.To.Value.System.Value != oas.CasePriorityCASEPRIORITYP3 {
			t.Fatalf("events of a case raised later: %v", kinds(evs))
		}
		// Priority events: P5 → P3 (first batch), P3 → P2.
		var changes [][2]oas.CasePriority
		for _, e := range h.events(h.RootKey, ref.ID) {
			if p := e.EventData.PriorityDetailsChanged; p.Set {
				changes = append(changes, [2]oas.CasePriority{p.Value.From.Value.System.Value, p.Value.To.Value.System.Value})
				if e.Actor.PrometheusAlertManager.Value.ReceiverName.Value != "team-receiver" {
					t.Fatalf("actor %+v", e.Actor)
				}
			}
		}
		if want := [][2]oas.CasePriority{{"CASE_PRIORITY_P5", "CASE_PRIORITY_P3"}, {"CASE_PRIORITY_P3", "CASE_PRIORITY_P2"}}; !reflect.DeepEqual(changes, want) {
			t.Fatalf("priority changes %v, want %v", changes, want)
		}

		// Resolve one DiskFull alert: still triggered; resolve both: resolved at the last end.
		a1.Firing, a1.EndsAt = false, t0.Add(time.Hour)
		h.record(1, ref.ID, a1)
		if s := h.getCase(h.RootKey, ref.ID).CaseIndicators.AlertIndicators[0].State; s != oas.IndicatorStateINDICATORSTATETRIGGERED {
			t.Fatalf("state %s with one alert firing", s)
		}
		a2.Firing, a2.EndsAt = false, t0.Add(2*time.Hour)
		h.record(1, ref.ID, a2)
		disk = h.getCase(h.RootKey, ref.ID).CaseIndicators.AlertIndicators[0]
		if disk.State != oas.IndicatorStateINDICATORSTATERESOLVED || !disk.ResolveTime.Value.Equal(t0.Add(2*time.Hour)) {
			t.Fatalf("resolved indicator %+v", disk)
		}

		err = h.DB.InTx(context.Background(), func(tx *db.Tx) error {
			return cases.ResolveByAlerts(context.Background(), tx, 1, ref.ID, "team-receiver")
		})
		if err != nil {
			t.Fatal(err)
		}
		c = h.getCase(h.RootKey, ref.ID)
		if c.Status != oas.CaseStatusCASESTATUSRESOLVED || c.ResolutionDetails.Value.ResolvedBy.Value.PrometheusAlertManager == nil {
			t.Fatalf("after ResolveByAlerts: %s %+v", c.Status, c.ResolutionDetails)
		}
		evs := h.events(h.RootKey, ref.ID)
		last := evs[len(evs)-1]
		if !last.EventData.StatusChanged.Set || last.Actor.PrometheusAlertManager.Value.ReceiverName.Value != "team-receiver" {
			t.Fatalf("last event %v", kinds(evs[len(evs)-1:]))
		}
		// The group's next notification opens a new case.
		next, opened, err := openCase(h.DB, cases.AlertGroup{TeamID: 1, GroupKey: "g1"})
		if err != nil || !opened || next.ReadableID != "CASE-4" {
			t.Fatalf("reopen: %v %v %v", next, opened, err)
		}
		// Another team's case is not found.
		err = h.DB.InTx(context.Background(), func(tx *db.Tx) error {
			return cases.RecordAlerts(context.Background(), tx, 2, ref.ID, "r", []cases.IndicatorAlert{a1})
		})
		if !db.IsNotFound(err) {
			t.Fatalf("RecordAlerts on another team's case: %v", err)
		}
	})
}

// TestIndicatorsOfAlertDefinitions: alerts that carry alert_def_id (those of mgmtapi's exported
// alert definitions) make one indicator per definition whatever their alert names, whose id is
// the definition's id and whose versions are the definitions' versions, oldest first; an alert
// without the label keeps its name's indicator.
func TestIndicatorsOfAlertDefinitions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g-def", "definition alerts")
		const def = "0f6c2a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a"
		labels := func(version, host string) map[string]string {
			return map[string]string{"alert_def_id": def, "alert_def_version_id": version, "host": host}
		}
		v1 := cases.IndicatorAlert{AlertName: "Error rate", Fingerprint: "fp1", Labels: labels("v-1", "a"),
			Priority: oas.CasePriorityCASEPRIORITYP2, Firing: true, StartsAt: t0}
		v2 := cases.IndicatorAlert{AlertName: "Error rate (renamed)", Fingerprint: "fp2", Labels: labels("v-2", "b"),
			Priority: oas.CasePriorityCASEPRIORITYP2, Firing: true, StartsAt: t0.Add(time.Minute)}
		plain := cases.IndicatorAlert{AlertName: "Error rate", Fingerprint: "fp3", Labels: map[string]string{"host": "a"},
			Priority: oas.CasePriorityCASEPRIORITYP4, Firing: true, StartsAt: t0.Add(2 * time.Minute)}
		h.record(1, ref.ID, v1, v2, plain)
		inds := h.getCase(h.RootKey, ref.ID).CaseIndicators.AlertIndicators
		if len(inds) != 2 {
			t.Fatalf("%d indicators, want the definition's and the plain alert's: %+v", len(inds), inds)
		}
		d := inds[0]
		if d.AlertId != def || d.LatestAlertVersion != "v-2" || !reflect.DeepEqual(d.AlertVersions, []string{"v-1", "v-2"}) ||
			d.AlertName.Value != "Error rate (renamed)" || len(d.Permutations) != 2 {
			t.Fatalf("definition indicator %+v", d)
		}
		if p := inds[1]; p.AlertId == def || len(p.AlertId) != 36 || p.LatestAlertVersion != "fp3" {
			t.Fatalf("plain indicator %+v", p)
		}
	})
}

// TestCommentWritesOnlyItsChange checks E1 as it writes without reading the case: by id or
// readable id the case's updateTime becomes the comment's time and nothing else of the case
// changes; events keep their order; a bad body answers 404 for a missing case (another team's
// included) and 400 for an existing one, which it leaves untouched.
func TestCommentWritesOnlyItsChange(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "Disk full", oas.KeyValue{Key: "env", Value: "prod"})
		otherTeam, _ := h.team("other")
		theirs := h.open(otherTeam, "g1", "theirs")
		before := h.getCase(h.RootKey, ref.ID)

		var texts []string
		for i, ident := range []string{ref.ID, before.ReadableId, ref.ID, before.ReadableId} {
			h.Clock.Advance(time.Minute)
			text := fmt.Sprint("note ", i)
			texts = append(texts, text)
			ev := decodeEvent(t, h.ok(h.comment(h.RootKey, ident, `{"text":" `+text+` "}`), "comment"))
			after := h.getCase(h.RootKey, ref.ID)
			if !after.UpdateTime.Equal(ev.CreateTime) || !ev.CreateTime.After(before.UpdateTime) {
				t.Fatalf("comment %d at %v, case updateTime %v", i, ev.CreateTime, after.UpdateTime)
			}
			after.UpdateTime, after.Duration = before.UpdateTime, before.Duration
			if !reflect.DeepEqual(after, before) {
				t.Fatalf("the comment changed more than updateTime:\n%+v\n%+v", after, before)
			}
		}
		var got []string
		for _, e := range h.events(h.RootKey, ref.ID) {
			if e.EventData.Comment.Set {
				got = append(got, e.EventData.Comment.Value.UnsafeText.Value)
			}
		}
		if !reflect.DeepEqual(got, texts) {
			t.Fatalf("comments %v, want %v", got, texts)
		}

		stamp := h.getCase(h.RootKey, ref.ID).UpdateTime
		h.Clock.Advance(time.Minute)
		for _, ident := range []string{"CASE-99", theirs.ID, "00000000-0000-4000-8000-000000000000"} {
			apitest.ExpectError(t, h.comment(h.RootKey, ident, `{"text":"  "}`), 404, "case_id")
		}
		apitest.ExpectError(t, h.comment(h.RootKey, ref.ID, `{"text":"  "}`), 400, "text")
		apitest.ExpectError(t, h.comment(h.RootKey, "CASE-1", `{"text":"x","attachments":[{}]}`), 400, "attachments[0]")
		if after := h.getCase(h.RootKey, ref.ID); !after.UpdateTime.Equal(stamp) {
			t.Fatalf("a refused comment moved updateTime to %v", after.UpdateTime)
		}
		if n := len(h.events(h.RootKey, ref.ID)); n != len(texts)+1 {
			t.Fatalf("%d events after refused comments", n)
		}
	})
}

// TestEventNumberBackfill runs the backfill of migration 0023 over cases whose last event number
// was lost, and expects each case's number to be its last event's, so that the next event goes
// last in its history.
func TestEventNumberBackfill(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		refs := []cases.CaseRef{h.open(1, "g1", "one"), h.open(1, "g2", "two")}
		for i := range 3 {
			h.ok(h.comment(h.RootKey, refs[0].ID, fmt.Sprintf(`{"text":"c%d"}`, i)), "comment")
		}
		migration, err := os.ReadFile(filepath.Join("..", "db", "migrations", string(env.DB.Engine), "0023_write_counts.sql"))
		if err != nil {
			t.Fatal(err)
		}
		_, backfill, ok := strings.Cut(string(migration), "UPDATE cases SET last_event_seq")
		if !ok {
			t.Fatal("the migration has no last_event_seq backfill")
		}
		backfill, _, _ = strings.Cut(backfill, ";")
		ctx := context.Background()
		err = env.DB.InTx(ctx, func(tx *db.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE cases SET last_event_seq = 0`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "UPDATE cases SET last_event_seq"+backfill)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []int{4, 1} { // created and three comments; created
			var got int
			err := env.DB.Read().QueryRowContext(ctx, `SELECT last_event_seq FROM cases WHERE id = $1`, refs[i].ID).Scan(&got)
			if err != nil || got != want {
				t.Fatalf("case %d: last_event_seq %d (%v), want %d", i, got, err, want)
			}
			h.ok(h.comment(h.RootKey, refs[i].ID, `{"text":"after"}`), "comment")
			evs := h.events(h.RootKey, refs[i].ID)
			if len(evs) != want+1 || evs[want].EventData.Comment.Value.UnsafeText.Value != "after" {
				t.Fatalf("case %d: events %v", i, kinds(evs))
			}
		}
	})
}

// TestConcurrentCommentsOnOneCase posts 40 comments on one case at once, queued behind a held
// write transaction so that they share batches: on PostgreSQL each comment's UPDATE of the case
// then runs in the message that ends the comment before it, and its row is read from there. The
// team has a router, so each comment's event takes a snapshot of the case from that row. Every
// comment is answered and listed once, after the case's earlier events and with its own text, the
// case's updateTime is the last comment's, and each routed event's snapshot is the case it was
// written on.
func TestConcurrentCommentsOnOneCase(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "Disk full", oas.KeyValue{Key: "env", Value: "prod"})
		ctx := context.Background()
		if err := env.DB.InTx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO notification_routers (team_id, id, name, document, created_at, updated_at)
				VALUES (1, 'router-1', 'all', '{}', 0, 0)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		earlier := len(h.events(h.RootKey, ref.ID))
		before := env.DB.GroupCommitStats()

		const n = 40
		release, held := apitest.HoldWriter(t, env.DB, nil)
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = h.comment(h.RootKey, ref.ID, fmt.Sprintf(`{"text":"note %d"}`, i)).Status
			}()
		}
		apitest.WhenQueued(t, n)
		release()
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		wg.Wait()

		for i, status := range statuses {
			if status != 200 {
				t.Errorf("comment %d: status %d", i, status)
			}
		}
		events := h.events(h.RootKey, ref.ID)
		texts := map[string]int{}
		var last time.Time
		for _, e := range events[earlier:] {
			if e.EventData.Comment.Set {
				texts[e.EventData.Comment.Value.UnsafeText.Value]++
			}
			if e.CreateTime.After(last) {
				last = e.CreateTime
			}
		}
		for i := range n {
			if text := fmt.Sprint("note ", i); texts[text] != 1 {
				t.Errorf("%q is listed %d times after the case's earlier events", text, texts[text])
			}
		}
		if len(events) != earlier+n {
			t.Errorf("%d events, want %d", len(events), earlier+n)
		}
		if c := h.getCase(h.RootKey, ref.ID); !c.UpdateTime.Equal(last) {
			t.Errorf("the case's updateTime is %v, want the last comment's %v", c.UpdateTime, last)
		}
		rows, err := env.DB.Read().QueryContext(ctx, `SELECT snapshot FROM notification_events WHERE team_id = 1 AND entity_id = $1`, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		routed := 0
		for rows.Next() {
			var snapshot string
			if err := rows.Scan(&snapshot); err != nil {
				t.Fatal(err)
			}
			var c struct{ ID, Title string }
			if err := json.Unmarshal([]byte(snapshot), &c); err != nil || c.ID != ref.ID || c.Title != "Disk full" {
				t.Errorf("snapshot %s: %v, want the case %s titled Disk full", snapshot, err, ref.ID)
			}
			routed++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if routed != n {
			t.Errorf("%d events recorded for routing, want one per comment (%d)", routed, n)
		}
		if ahead := env.DB.GroupCommitStats().OpeningsAhead - before.OpeningsAhead; env.DB.Engine == db.Postgres && ahead == 0 {
			t.Error("no comment's UPDATE ran in the message of the comment before it")
		}
	})
}
