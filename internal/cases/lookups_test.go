package cases_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	filterValuesPath = "/mgmt/openapi/5/cases/filter-values/v1"
	groupingKeysPath = "/mgmt/openapi/5/cases/grouping-keys/v1"
	indicatorPath    = "/mgmt/openapi/5/cases/indicators/v1/get"
)

func (h *harness) filterValues(key, body string) oas.CaseFilterValues {
	h.t.Helper()
	res := h.ok(h.do("POST", filterValuesPath, key, body), "filter values "+body)
	var out oas.CaseFilterValues
	if err := out.UnmarshalJSON(res.Body); err != nil {
		h.t.Fatalf("decode filter values: %v", err)
	}
	return out
}

func TestFilterValuesAndGroupingKeys(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		prod := oas.KeyValue{Key: "env", Value: "prod"}
		dev := oas.KeyValue{Key: "env", Value: "dev"}
		core := oas.KeyValue{Key: "team", Value: "core"}
		h.open(1, "fv-1", "one", prod, core)
		h.open(1, "fv-2", "two", prod)
		h.open(1, "fv-3", "three", dev)
		h.record(1, h.getCase(h.RootKey, "CASE-1").ID, p1Alert("Disk"))
		h.ok(h.ack(h.RootKey, "CASE-2"), "ack")
		h.ok(h.assign(h.RootKey, "CASE-2", someUser), "assign")
		otherTeam, otherKey := h.team("other")
		h.open(otherTeam, "fv-other", "foreign", dev)

		all := h.filterValues(h.RootKey, ``)
		if got := all.StatusAggregations; !reflect.DeepEqual(got, []oas.CaseFilterValuesStatusAggregationsItem{
			{Status: oas.CaseStatusCASESTATUSACTIVE, Count: 2}, {Status: oas.CaseStatusCASESTATUSACKNOWLEDGED, Count: 1}}) {
			t.Fatalf("statuses %+v", got)
		}
		if got := all.PriorityAggregations; !reflect.DeepEqual(got, []oas.CaseFilterValuesPriorityAggregationsItem{
			{Priority: oas.CasePriorityCASEPRIORITYP5, Count: 2}, {Priority: oas.CasePriorityCASEPRIORITYP1, Count: 1}}) {
			t.Fatalf("priorities %+v", got)
		}
		if got := all.CategoryAggregations; len(got) != 1 || got[0].Count != 3 {
			t.Fatalf("categories %+v", got)
		}
		if a := all.AssigneeAggregations; a.UnassignedCount != 2 || !reflect.DeepEqual(a.AssignedCounts,
			[]oas.CaseFilterValuesAssigneeAggregationsAssignedCountsItem{{Assignee: someUser, Count: 1}}) {
			t.Fatalf("assignees %+v", a)
		}
		wantLabels := []oas.CaseFilterGroupAggregation{
			{Key: "env", ValueCounts: []oas.CaseFilterGroupAggregationValueCountsItem{{Value: "prod", Count: 2}, {Value: "dev", Count: 1}}},
			{Key: "team", ValueCounts: []oas.CaseFilterGroupAggregationValueCountsItem{{Value: "core", Count: 1}}},
		}
		if !reflect.DeepEqual(all.LabelAggregations, wantLabels) {
			t.Fatalf("labels %+v", all.LabelAggregations)
		}
		if len(all.GroupingAggregations) != 1 || all.GroupingAggregations[0].Key != "alertname" || len(all.GroupingAggregations[0].ValueCounts) != 3 {
			t.Fatalf("groupings %+v", all.GroupingAggregations)
		}
		if got := all.FlatLabelsAggregation; len(got) != 3 || got[0].Filter != prod || got[0].Count != 2 {
			t.Fatalf("flat labels %+v", got)
		}
		disk := h.getCase(h.RootKey, "CASE-1").CaseIndicators.AlertIndicators[0].AlertId
		if got := all.AlertIdAggregations; len(got) != 1 || got[0].AlertId != disk || got[0].Count != 1 {
			t.Fatalf("alert ids %+v", got)
		}

		// Filters narrow the counts, with the list's rules.
		active := h.filterValues(h.RootKey, `{"filters":{"statuses":["CASE_STATUS_ACTIVE"],"labels":[{"key":"env","values":["prod"]}]}}`)
		if len(active.StatusAggregations) != 1 || active.StatusAggregations[0].Count != 1 || active.AssigneeAggregations.UnassignedCount != 1 ||
			len(active.AssigneeAggregations.AssignedCounts) != 0 {
			t.Fatalf("filtered %+v", active)
		}
		// An empty assignee option is not set (the public document lets that one-of be empty);
		// an empty impacted entity is not (its one-of is required there).
		if got := h.filterValues(h.RootKey, `{"filters":{"assignees":[{}]}}`); !reflect.DeepEqual(got, all) {
			t.Fatalf("an empty assignee option narrowed the counts: %+v", got)
		}
		apitest.ExpectError(t, h.do("POST", filterValuesPath, h.RootKey, `{"filters":{"assignees":[{"assignee":"x","unassigned":{}}]}}`), 400, "filters.assignees[0]")
		apitest.ExpectError(t, h.do("POST", filterValuesPath, h.RootKey, `{"filters":{"impactedEntities":[{}]}}`), 400, "filters.impactedEntities[0]")

		// Another team counts only its own case; a team without cases has empty lists.
		other := h.filterValues(otherKey, `{}`)
		if len(other.StatusAggregations) != 1 || other.StatusAggregations[0].Count != 1 || len(other.LabelAggregations) != 1 ||
			other.LabelAggregations[0].ValueCounts[0] != (oas.CaseFilterGroupAggregationValueCountsItem{Value: "dev", Count: 1}) {
			t.Fatalf("other team %+v", other)
		}
		_, emptyKey := h.team("empty")
		empty := h.filterValues(emptyKey, `{}`)
		if len(empty.StatusAggregations) != 0 || empty.AssigneeAggregations.AssignedCounts == nil || empty.AlertIdAggregations == nil {
			t.Fatalf("empty team %+v", empty)
		}

		keys := func(key string) []string {
			res := h.ok(h.do("GET", groupingKeysPath, key, ""), "grouping keys")
			var out oas.CaseGroupingKeys
			if err := out.UnmarshalJSON(res.Body); err != nil {
				t.Fatal(err)
			}
			return out.GroupingKeys
		}
		if got := keys(h.RootKey); !reflect.DeepEqual(got, []string{"alertname"}) {
			t.Fatalf("grouping keys %v", got)
		}
		if _, _, err := openCase(h.DB, cases.AlertGroup{TeamID: 1, GroupKey: "fv-4", Groupings: []oas.KeyValue{
			{Key: "cluster", Value: "eu-1"}, {Key: "service", Value: "checkout"}}}); err != nil {
			t.Fatal(err)
		}
		if got := keys(h.RootKey); !reflect.DeepEqual(got, []string{"alertname", "cluster", "service"}) {
			t.Fatalf("grouping keys %v", got)
		}
		if got := keys(emptyKey); len(got) != 0 {
			t.Fatalf("empty team's grouping keys %v", got)
		}

		none := h.key(h.RootKey, "case:Update")
		apitest.ExpectError(t, h.do("POST", filterValuesPath, none, `{}`), 403, "")
		apitest.ExpectError(t, h.do("GET", groupingKeysPath, none, ""), 403, "")
		apitest.ExpectError(t, h.do("GET", groupingKeysPath, "", ""), 401, "")
	})
}

func TestDeepLinksAndCaseByIndicator(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		started := time.Date(2026, 3, 1, 10, 0, 0, 123456000, time.UTC)
		first := h.openWith(1, "ind-1", cases.IndicatorAlert{AlertName: "Disk", Fingerprint: "4f3a9c1e2b7d8a60",
			Priority: oas.CasePriorityCASEPRIORITYP2, Firing: true, StartsAt: started})
		h.openWith(1, "ind-2", cases.IndicatorAlert{AlertName: "Disk", Fingerprint: "4f3a9c1e2b7d8a60",
			Priority: oas.CasePriorityCASEPRIORITYP2, Firing: true, StartsAt: started.Add(time.Hour)})
		_, otherKey := h.team("other")

		t.Run("deep links", func(t *testing.T) {
			res := h.ok(h.do("GET", casesPath+"/"+first.ReadableID+"/deep-links", h.RootKey, ""), "deep links")
			var out oas.CaseDeepLinks
			if err := out.UnmarshalJSON(res.Body); err != nil {
				t.Fatal(err)
			}
			links := out.DeepLinks
			if links.Detail != casesPath+"/"+first.ID || len(links.AlertIndicators) != 0 || links.ImpactedEntities == nil {
				t.Fatalf("links %s", res.Body)
			}
			if c := h.getCase(h.RootKey, links.Detail[len(casesPath)+1:]); c.ID != first.ID {
				t.Fatalf("detail leads to %s", c.ReadableId)
			}
			apitest.ExpectError(t, h.do("GET", casesPath+"/CASE-99/deep-links", h.RootKey, ""), 404, "CASE-99")
			apitest.ExpectError(t, h.do("GET", casesPath+"/"+first.ID+"/deep-links", otherKey, ""), 404, "")
			apitest.ExpectError(t, h.do("GET", casesPath+"/"+first.ID+"/deep-links", h.key(h.RootKey, "case:Update"), ""), 403, "")
		})

		t.Run("case by indicator", func(t *testing.T) {
			find := func(key, fingerprint, startedAt string) apitest.Response {
				return h.do("POST", indicatorPath, key,
					`{"prometheusAlert":{"fingerprint":"`+fingerprint+`","startedAt":"`+startedAt+`"}}`)
			}
			c := decodeCase(t, h.ok(find(h.RootKey, "4f3a9c1e2b7d8a60", "2026-03-01T10:00:00.123456Z"), "find"))
			if c.ID != first.ID {
				t.Fatalf("found %s, want %s", c.ReadableId, first.ReadableID)
			}
			// The same instant in another zone, with nanoseconds beyond the stored microseconds.
			c = decodeCase(t, h.ok(find(h.RootKey, "4f3a9c1e2b7d8a60", "2026-03-01T12:00:00.123456789+02:00"), "find in +02:00"))
			if c.ID != first.ID {
				t.Fatalf("found %s, want %s", c.ReadableId, first.ReadableID)
			}
			c = decodeCase(t, h.ok(find(h.RootKey, "4f3a9c1e2b7d8a60", "2026-03-01T11:00:00.123456Z"), "find second"))
			if c.ReadableId != "CASE-2" {
				t.Fatalf("found %s, want CASE-2", c.ReadableId)
			}
			apitest.ExpectError(t, find(h.RootKey, "4f3a9c1e2b7d8a60", "2026-03-01T10:00:00Z"), 404, "prometheusAlert")
			apitest.ExpectError(t, find(h.RootKey, "4f3a9c1e2b7d8a6", "2026-03-01T10:00:00.123456Z"), 404, "prometheusAlert")
			apitest.ExpectError(t, find(otherKey, "4f3a9c1e2b7d8a60", "2026-03-01T10:00:00.123456Z"), 404, "prometheusAlert")
			apitest.ExpectError(t, find(h.RootKey, "", "2026-03-01T10:00:00Z"), 400, "fingerprint")
			apitest.ExpectError(t, find(h.RootKey, "   ", "2026-03-01T10:00:00Z"), 400, "fingerprint")
			apitest.ExpectError(t, find(h.RootKey, "4f3a9c1e2b7d8a60", "yesterday"), 400, "startedAt")
			apitest.ExpectError(t, h.do("POST", indicatorPath, h.RootKey, `{}`), 400, "prometheusAlert")
			apitest.ExpectError(t, find(h.key(h.RootKey, "case:Update"), "4f3a9c1e2b7d8a60", "2026-03-01T10:00:00.123456Z"), 403, "")
		})
	})
}
