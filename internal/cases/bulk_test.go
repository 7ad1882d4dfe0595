package cases_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	bulkAckPath      = "/mgmt/openapi/5/cases/acknowledged/v1"
	bulkAssignPath   = "/mgmt/openapi/5/cases/assigned/v1"
	bulkClosePath    = "/mgmt/openapi/5/cases/closed/v1"
	bulkResolvePath  = "/mgmt/openapi/5/cases/resolved/v1"
	overridePath     = "/mgmt/openapi/5/cases/priority-override/v1"
	someUser         = "3f2b8c4e-9a1d-4e7b-8c5f-2d6a1b0e9f47"
	anotherUser      = "11111111-2222-4333-8444-555555555555"
	ackActorFragment = `"actor":{"userId":"` + someUser + `"}`
)

// idsJSON is a JSON array of the ids.
func idsJSON(ids ...string) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

// idsQuery is the ids as repeated query parameters.
func idsQuery(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "ids=" + id
	}
	return "?" + strings.Join(parts, "&")
}

func decodeBulk(t *testing.T, res apitest.Response) []oas.Case {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("status %d, want 200; body %s", res.Status, res.Body)
	}
	var out oas.BulkCasesResponse
	if err := out.UnmarshalJSON(res.Body); err != nil {
		t.Fatalf("decode bulk answer: %v; body %s", err, res.Body)
	}
	return out.Cases
}

func caseIDs(cs []oas.Case) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ReadableId)
	}
	return out
}

// lastKinds is the kinds of the case's last n events.
func (h *harness) lastKinds(ident string, n int) []string {
	h.t.Helper()
	k := kinds(h.events(h.RootKey, ident))
	if len(k) < n {
		return k
	}
	return k[len(k)-n:]
}

func TestBulkOperations(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		one := h.open(1, "bulk-1", "first")
		h.open(1, "bulk-2", "second")
		h.open(1, "bulk-3", "third")
		otherTeam, otherKey := h.team("other")
		foreign := h.open(otherTeam, "foreign", "not yours")

		t.Run("acknowledge, in the order of ids, a case named twice changed once", func(t *testing.T) {
			before := len(h.events(h.RootKey, "CASE-1"))
			got := decodeBulk(t, h.do("POST", bulkAckPath, h.RootKey,
				`{"ids":`+idsJSON("CASE-2", one.ID, "CASE-1")+`,`+ackActorFragment+`}`))
			if !reflect.DeepEqual(caseIDs(got), []string{"CASE-2", "CASE-1"}) {
				t.Fatalf("answered %v", caseIDs(got))
			}
			for _, c := range got {
				if c.Status != oas.CaseStatusCASESTATUSACKNOWLEDGED || !c.AcknowledgeTime.Set {
					t.Fatalf("%s: %s", c.ReadableId, c.Status)
				}
			}
			evs := h.events(h.RootKey, "CASE-1")
			if len(evs) != before+1 || !evs[before].EventData.StatusChanged.Set || !evs[before].Actor.ApiKey.Set {
				t.Fatalf("events %v", kinds(evs))
			}
			if h.getCase(h.RootKey, "CASE-3").Status != oas.CaseStatusCASESTATUSACTIVE {
				t.Fatal("CASE-3 changed")
			}
		})

		t.Run("assign, then unassign through query ids", func(t *testing.T) {
			got := decodeBulk(t, h.do("PUT", bulkAssignPath, h.RootKey,
				`{"ids":["CASE-1","CASE-3"],"assignee":{"userId":"`+someUser+`"}}`))
			for _, c := range got {
				if string(c.Assignee.Value.UserId) != someUser {
					t.Fatalf("%s assignee %+v", c.ReadableId, c.Assignee)
				}
			}
			if k := h.lastKinds("CASE-3", 1); k[0] != "assigned" {
				t.Fatalf("CASE-3 last event %v", k)
			}
			got = decodeBulk(t, h.do("DELETE", bulkAssignPath+idsQuery("CASE-1", "CASE-2"), h.RootKey, ""))
			for _, c := range got {
				if c.Assignee.Set {
					t.Fatalf("%s still assigned", c.ReadableId)
				}
			}
			if k := h.lastKinds("CASE-1", 1); k[0] != "unassigned" {
				t.Fatalf("CASE-1 last event %v", k)
			}
			if !h.getCase(h.RootKey, "CASE-3").Assignee.Set {
				t.Fatal("CASE-3 lost its assignee")
			}
		})

		t.Run("priority override set and cleared", func(t *testing.T) {
			got := decodeBulk(t, h.do("POST", overridePath, h.RootKey, `{"ids":["CASE-1","CASE-2"],"priority":"CASE_PRIORITY_P2"}`))
			for _, c := range got {
				if c.Priority != oas.CasePriorityCASEPRIORITYP2 || c.PriorityDetails.Override.Value != oas.CasePriorityCASEPRIORITYP2 ||
					c.PriorityDetails.System.Value != oas.CasePriorityCASEPRIORITYP5 {
					t.Fatalf("%s: %s %+v", c.ReadableId, c.Priority, c.PriorityDetails)
				}
			}
			if k := h.lastKinds("CASE-2", 1); k[0] != "priorityDetailsChanged" {
				t.Fatalf("CASE-2 last event %v", k)
			}
			listed := readableIDs(h.list(h.RootKey, `{"filters":{"priorities":["CASE_PRIORITY_P2"]}}`))
			if !reflect.DeepEqual(listed, []string{"CASE-2", "CASE-1"}) {
				t.Fatalf("listed by P2: %v", listed)
			}
			got = decodeBulk(t, h.do("DELETE", overridePath+idsQuery("CASE-1", "CASE-2", "CASE-3"), h.RootKey, ""))
			for _, c := range got {
				if c.Priority != oas.CasePriorityCASEPRIORITYP5 || c.PriorityDetails.Override.Set {
					t.Fatalf("%s: %s %+v", c.ReadableId, c.Priority, c.PriorityDetails)
				}
			}
			if k := h.lastKinds("CASE-3", 1); k[0] == "priorityDetailsChanged" {
				t.Fatal("clearing a case without override wrote an event")
			}
		})

		t.Run("resolve with a reason, then close", func(t *testing.T) {
			got := decodeBulk(t, h.do("POST", bulkResolvePath, h.RootKey, `{"ids":["CASE-2"],"reason":"  rolled back  "}`))
			rd := got[0].ResolutionDetails.Value
			if got[0].Status != oas.CaseStatusCASESTATUSRESOLVED || rd.Reason.Value != "rolled back" || rd.ResolvedBy.Value.ApiKey == nil {
				t.Fatalf("resolved %s %+v", got[0].Status, rd)
			}
			if k := h.lastKinds("CASE-2", 2); !reflect.DeepEqual(k, []string{"statusChanged", "resolutionReasonChangedEvent"}) {
				t.Fatalf("CASE-2 last events %v", k)
			}
			got = decodeBulk(t, h.do("POST", bulkClosePath, h.RootKey, `{"ids":["CASE-2","CASE-3"]}`))
			if got[0].Status != oas.CaseStatusCASESTATUSCLOSED || got[1].Status != oas.CaseStatusCASESTATUSCLOSED {
				t.Fatalf("closed: %s %s", got[0].Status, got[1].Status)
			}
		})

		t.Run("all or nothing", func(t *testing.T) {
			// CASE-3 is closed: assigning it with CASE-1 changes neither.
			before := h.getCase(h.RootKey, "CASE-1")
			events := len(h.events(h.RootKey, "CASE-1"))
			apitest.ExpectError(t, h.do("PUT", bulkAssignPath, h.RootKey,
				`{"ids":["CASE-1","CASE-3"],"assignee":{"userId":"`+anotherUser+`"}}`), 409, "ids[1]: case CASE-3 is closed")
			apitest.ExpectError(t, h.do("POST", bulkAckPath, h.RootKey, `{"ids":["CASE-1","CASE-2"],`+ackActorFragment+`}`),
				409, "ids[1]: case CASE-2 is closed")
			apitest.ExpectError(t, h.do("POST", bulkClosePath, h.RootKey, `{"ids":["CASE-1","CASE-9"]}`), 404, `ids[1]: no case "CASE-9"`)
			apitest.ExpectError(t, h.do("POST", overridePath, h.RootKey, `{"ids":["CASE-1","CASE-3"],"priority":"CASE_PRIORITY_P1"}`),
				409, "ids[1]: case CASE-3 is closed")
			// Another team's case answers as a missing one.
			apitest.ExpectError(t, h.do("POST", bulkResolvePath, h.RootKey, `{"ids":["CASE-1","`+foreign.ID+`"]}`), 404, "ids[1]: no case")
			apitest.ExpectError(t, h.do("DELETE", bulkAssignPath+idsQuery("CASE-1", foreign.ID), h.RootKey, ""), 404, "ids[1]: no case")
			after := h.getCase(h.RootKey, "CASE-1")
			if after.Status != before.Status || after.Assignee.Set || after.Priority != before.Priority ||
				!after.UpdateTime.Equal(before.UpdateTime) || len(h.events(h.RootKey, "CASE-1")) != events {
				t.Fatalf("CASE-1 changed: %+v", after)
			}
			if h.getCase(otherKey, foreign.ID).Status != oas.CaseStatusCASESTATUSACTIVE {
				t.Fatal("the other team's case changed")
			}
		})

		t.Run("bounds", func(t *testing.T) {
			thousand := make([]string, 1000)
			for i := range thousand {
				thousand[i] = "CASE-1"
			}
			got := decodeBulk(t, h.do("POST", overridePath, h.RootKey, `{"ids":`+idsJSON(thousand...)+`,"priority":"CASE_PRIORITY_P4"}`))
			if len(got) != 1 || got[0].Priority != oas.CasePriorityCASEPRIORITYP4 {
				t.Fatalf("1000 ids: %v", caseIDs(got))
			}
			tooMany := idsJSON(append(thousand, "CASE-1")...)
			for _, tc := range []struct{ method, path, body, fragment string }{
				{"POST", bulkClosePath, `{"ids":[]}`, "ids"},
				{"POST", bulkClosePath, `{"ids":` + tooMany + `}`, "ids"},
				{"POST", bulkClosePath, `{}`, "ids"},
				{"POST", bulkClosePath, `{"ids":["case-1"]}`, "ids[0]"},
				{"POST", bulkAckPath, `{"ids":["CASE-1"]}`, "actor"},
				{"POST", bulkAckPath, `{"ids":["CASE-1"],"actor":{"userId":"nope"}}`, "actor.userId"},
				{"PUT", bulkAssignPath, `{"ids":["CASE-1"]}`, "assignee"},
				{"POST", overridePath, `{"ids":["CASE-1"],"priority":"CASE_PRIORITY_UNSPECIFIED"}`, "priority"},
				{"POST", overridePath, `{"ids":["CASE-1"]}`, "priority"},
				{"POST", bulkResolvePath, `{"ids":["CASE-1"],"reason":""}`, "reason"},
				{"POST", bulkResolvePath, `{"ids":["CASE-1"],"reason":"   "}`, "reason"},
				{"POST", bulkResolvePath, `{"ids":["CASE-1"],"reason":"` + strings.Repeat("r", 501) + `"}`, "reason"},
				{"DELETE", bulkAssignPath, "", "ids"},
				{"DELETE", overridePath + idsQuery(thousand...) + "&ids=CASE-1", "", "ids"},
			} {
				apitest.ExpectError(t, h.do(tc.method, tc.path, h.RootKey, tc.body), 400, tc.fragment)
			}
			if c := h.getCase(h.RootKey, "CASE-1"); c.Status != oas.CaseStatusCASESTATUSACKNOWLEDGED || c.Priority != oas.CasePriorityCASEPRIORITYP4 {
				t.Fatalf("refused calls changed CASE-1: %s %s", c.Status, c.Priority)
			}
			got = decodeBulk(t, h.do("POST", bulkResolvePath, h.RootKey, `{"ids":["CASE-1"],"reason":"`+strings.Repeat("r", 500)+`"}`))
			if got[0].ResolutionDetails.Value.Reason.Value != strings.Repeat("r", 500) {
				t.Fatal("a 500-character reason was not kept")
			}
		})

		t.Run("permissions", func(t *testing.T) {
			reader := h.key(h.RootKey, "case:Read")
			for _, tc := range []struct{ method, path, body string }{
				{"POST", bulkAckPath, `{"ids":["CASE-1"],` + ackActorFragment + `}`},
				{"PUT", bulkAssignPath, `{"ids":["CASE-1"],"assignee":{"userId":"` + someUser + `"}}`},
				{"DELETE", bulkAssignPath + idsQuery("CASE-1"), ""},
				{"POST", bulkClosePath, `{"ids":["CASE-1"]}`},
				{"POST", bulkResolvePath, `{"ids":["CASE-1"]}`},
				{"POST", overridePath, `{"ids":["CASE-1"],"priority":"CASE_PRIORITY_P1"}`},
				{"DELETE", overridePath + idsQuery("CASE-1"), ""},
				{"PUT", overridePath + "/CASE-1", `{"priority":"CASE_PRIORITY_P1"}`},
				{"DELETE", overridePath + "/CASE-1", ""},
			} {
				apitest.ExpectError(t, h.do(tc.method, tc.path, reader, tc.body), 403, "")
				apitest.ExpectError(t, h.do(tc.method, tc.path, "", tc.body), 401, "")
			}
		})
	})
}

func TestPriorityOverride(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "override", "override me")
		disk := p1Alert("Disk")
		disk.Priority = oas.CasePriorityCASEPRIORITYP3
		h.record(1, ref.ID, disk)
		updater := h.key(h.RootKey, "case:Update", "case:Read")

		set := func(priority string) apitest.Response {
			return h.do("PUT", overridePath+"/"+ref.ReadableID, updater, `{"priority":"`+priority+`"}`)
		}
		c := decodeCase(t, h.ok(set("CASE_PRIORITY_P1"), "set"))
		if c.Priority != oas.CasePriorityCASEPRIORITYP1 || c.PriorityDetails.System.Value != oas.CasePriorityCASEPRIORITYP3 ||
			c.PriorityDetails.Override.Value != oas.CasePriorityCASEPRIORITYP1 {
			t.Fatalf("after set: %s %+v", c.Priority, c.PriorityDetails)
		}
		evs := h.events(h.RootKey, ref.ID)
		last := evs[len(evs)-1].EventData.PriorityDetailsChanged
		if !last.Set || last.Value.From.Value.Override.Set || last.Value.To.Value.Override.Value != oas.CasePriorityCASEPRIORITYP1 {
			t.Fatalf("event %+v", last)
		}
		if n := len(h.events(h.RootKey, ref.ID)); decodeCase(t, h.ok(set("CASE_PRIORITY_P1"), "set again")).Priority !=
			oas.CasePriorityCASEPRIORITYP1 || len(h.events(h.RootKey, ref.ID)) != n {
			t.Fatal("setting the same override wrote an event")
		}
		// The single update sees the same override.
		c = decodeCase(t, h.ok(h.update(h.RootKey, ref.ID, `{"priorityOverride":"CASE_PRIORITY_P2"}`), "update"))
		if c.PriorityDetails.Override.Value != oas.CasePriorityCASEPRIORITYP2 {
			t.Fatalf("update: %+v", c.PriorityDetails)
		}

		clear := func() apitest.Response { return h.do("DELETE", overridePath+"/"+ref.ID, updater, "") }
		c = decodeCase(t, h.ok(clear(), "clear"))
		if c.Priority != oas.CasePriorityCASEPRIORITYP3 || c.PriorityDetails.Override.Set {
			t.Fatalf("after clear: %s %+v", c.Priority, c.PriorityDetails)
		}
		n := len(h.events(h.RootKey, ref.ID))
		h.ok(clear(), "clear again")
		if len(h.events(h.RootKey, ref.ID)) != n {
			t.Fatal("clearing twice wrote an event")
		}

		apitest.ExpectError(t, set("CASE_PRIORITY_UNSPECIFIED"), 400, "priority")
		apitest.ExpectError(t, set("P1"), 400, "priority")
		apitest.ExpectError(t, h.do("PUT", overridePath+"/CASE-77", updater, `{"priority":"CASE_PRIORITY_P1"}`), 404, "CASE-77")
		_, otherKey := h.team("other")
		apitest.ExpectError(t, h.do("PUT", overridePath+"/"+ref.ID, otherKey, `{"priority":"CASE_PRIORITY_P1"}`), 404, "")
		apitest.ExpectError(t, h.do("DELETE", overridePath+"/"+ref.ID, otherKey, ""), 404, "")
		h.ok(h.close(h.RootKey, ref.ID), "close")
		apitest.ExpectError(t, set("CASE_PRIORITY_P4"), 409, "closed")
		apitest.ExpectError(t, clear(), 409, "closed")
		if c := h.getCase(h.RootKey, ref.ID); c.Priority != oas.CasePriorityCASEPRIORITYP3 {
			t.Fatalf("refused calls changed the priority: %s", c.Priority)
		}
	})
}
