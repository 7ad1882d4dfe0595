package cases_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func (h *harness) list(key, body string) oas.CasePage {
	h.t.Helper()
	res := h.ok(h.do("POST", casesPath, key, body), "list "+body)
	var out oas.CasePage
	if err := out.UnmarshalJSON(res.Body); err != nil {
		h.t.Fatalf("decode list: %v", err)
	}
	return out
}

func readableIDs(l oas.CasePage) []string {
	out := []string{}
	for _, c := range l.Cases {
		out = append(out, c.ReadableId)
	}
	return out
}

func TestListCases(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		start := h.DB.Now()
		prod := oas.KeyValue{Key: "env", Value: "prod"}
		dev := oas.KeyValue{Key: "env", Value: "dev"}
		titles := []string{"Disk FULL on db-1", "CPU hot", "Memory leak", "Disk slow", "100%_done"}
		labels := [][]oas.KeyValue{{prod}, {dev}, {prod, {Key: "team", Value: "core"}}, nil, {dev}}
		var ids []string
		for i, title := range titles {
			ref := h.open(1, fmt.Sprintf("group-%d", i+1), title, labels[i]...)
			ids = append(ids, ref.ID)
			h.Clock.Advance(time.Minute)
		}
		// CASE-1 is P1, CASE-2 P3; CASE-2 acknowledged and assigned, CASE-3 resolved, CASE-4 closed.
		h.record(1, ids[0], p1Alert("A"))
		a := p1Alert("B")
		a.Priority = oas.CasePriorityCASEPRIORITYP3
		h.record(1, ids[1], a)
		u1 := "11111111-2222-4333-8444-555555555555"
		h.ok(h.ack(h.RootKey, "CASE-2"), "ack")
		h.ok(h.assign(h.RootKey, "CASE-2", u1), "assign")
		h.ok(h.resolve(h.RootKey, "CASE-3", ""), "resolve")
		h.ok(h.close(h.RootKey, "CASE-4"), "close")
		_, otherKey := h.team("other")

		for _, tc := range []struct {
			name, body string
			want       []string
		}{
			{"all, newest first", `{}`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"empty filters", `{"filters":{}}`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"statuses", `{"filters":{"statuses":["CASE_STATUS_ACTIVE","CASE_STATUS_CLOSED"]}}`, []string{"CASE-5", "CASE-4", "CASE-1"}},
			{"unspecified status ignored", `{"filters":{"statuses":["CASE_STATUS_UNSPECIFIED"]}}`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"priorities", `{"filters":{"priorities":["CASE_PRIORITY_P1","CASE_PRIORITY_P3"]}}`, []string{"CASE-2", "CASE-1"}},
			{"categories", `{"filters":{"categories":["CASE_CATEGORY_SECURITY"]}}`, []string{}},
			{"assignee", `{"filters":{"assignees":[{"assignee":"` + u1 + `"}]}}`, []string{"CASE-2"}},
			{"unassigned", `{"filters":{"assignees":[{"unassigned":{}}]}}`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-1"}},
			{"assignee or unassigned", `{"filters":{"assignees":[{"unassigned":{}},{"assignee":"` + u1 + `"}]}}`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			// An option with neither alternative is not set: it adds no alternative, and options
			// that are all empty filter nothing.
			{"assignee or an empty option", `{"filters":{"assignees":[{},{"assignee":"` + u1 + `"}]}}`, []string{"CASE-2"}},
			{"only empty options", `{"filters":{"assignees":[{},{}]}}`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"labels", `{"filters":{"labels":[{"key":"env","values":["prod"]}]}}`, []string{"CASE-3", "CASE-1"}},
			{"labels any value", `{"filters":{"labels":[{"key":"env","values":["prod","dev"]}]}}`, []string{"CASE-5", "CASE-3", "CASE-2", "CASE-1"}},
			{"two label filters", `{"filters":{"labels":[{"key":"env","values":["prod"]},{"key":"team","values":["core"]}]}}`, []string{"CASE-3"}},
			{"groupings", `{"filters":{"groupings":[{"key":"alertname","values":["group-2","group-4"]}]}}`, []string{"CASE-4", "CASE-2"}},
			{"text in title, any case", `{"filters":{"textSearch":"disk"}}`, []string{"CASE-4", "CASE-1"}},
			{"text in readable id", `{"filters":{"textSearch":"case-2"}}`, []string{"CASE-2"}},
			{"like characters are literal", `{"filters":{"textSearch":"%_"}}`, []string{"CASE-5"}},
			{"date range", fmt.Sprintf(`{"filters":{"dateRange":{"from":%q,"to":%q}}}`,
				start.Add(time.Minute).Format(time.RFC3339Nano), start.Add(3*time.Minute).Format(time.RFC3339Nano)), []string{"CASE-3", "CASE-2"}},
			{"created ascending", `{"orderBy":{"field":"CASE_ORDER_BY_FIELD_CREATED_AT","direction":"CASE_ORDER_BY_DIRECTION_ASCENDING"}}`, []string{"CASE-1", "CASE-2", "CASE-3", "CASE-4", "CASE-5"}},
			{"priority ascending", `{"orderBy":{"field":"CASE_ORDER_BY_FIELD_PRIORITY","direction":"CASE_ORDER_BY_DIRECTION_ASCENDING"}}`, []string{"CASE-1", "CASE-2", "CASE-3", "CASE-4", "CASE-5"}},
			{"status descending", `{"orderBy":{"field":"CASE_ORDER_BY_FIELD_STATUS"}}`, []string{"CASE-4", "CASE-3", "CASE-2", "CASE-5", "CASE-1"}},
			{"updated descending", `{"orderBy":{"field":"CASE_ORDER_BY_FIELD_UPDATED_AT","direction":"CASE_ORDER_BY_DIRECTION_DESCENDING"}}`, []string{"CASE-4", "CASE-3", "CASE-2", "CASE-1", "CASE-5"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				l := h.list(h.RootKey, tc.body)
				if got := readableIDs(l); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				if l.Pagination.TotalSize.Value != int64(len(tc.want)) || l.Pagination.NextPageToken.Set {
					t.Fatalf("pagination %+v", l.Pagination)
				}
			})
		}
		if got := readableIDs(h.list(otherKey, `{}`)); len(got) != 0 {
			t.Fatalf("other team sees %v", got)
		}

		t.Run("pages", func(t *testing.T) {
			var got []string
			body := `{"pagination":{"pageSize":2}}`
			for page := 0; ; page++ {
				l := h.list(h.RootKey, body)
				if l.Pagination.TotalSize.Value != 5 || len(l.Cases) > 2 {
					t.Fatalf("page %d: %d cases, total %d", page, len(l.Cases), l.Pagination.TotalSize.Value)
				}
				got = append(got, readableIDs(l)...)
				if !l.Pagination.NextPageToken.Set {
					break
				}
				if page > 3 {
					t.Fatal("too many pages")
				}
				body = `{"pagination":{"pageSize":2,"pageToken":"` + l.Pagination.NextPageToken.Value + `"}}`
			}
			if want := []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("pages gave %v", got)
			}
		})

		for _, tc := range []struct{ name, body, fragment string }{
			{"bad token", `{"pagination":{"pageToken":"bm9wZQ"}}`, "pagination.pageToken"},
			{"garbage token", `{"pagination":{"pageToken":"!!!"}}`, "pagination.pageToken"},
			{"page size 0", `{"pagination":{"pageSize":0}}`, "pageSize"},
			{"page size 1001", `{"pagination":{"pageSize":1001}}`, "pageSize"},
			{"assignee and unassigned", `{"filters":{"assignees":[{"assignee":"x","unassigned":{}}]}}`, "filters.assignees[0]: must set only one of assignee, unassigned"},
			{"reversed range", `{"filters":{"dateRange":{"from":"2024-05-02T00:00:00Z","to":"2024-05-01T00:00:00Z"}}}`, "filters.dateRange"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				apitest.ExpectError(t, h.do("POST", casesPath, h.RootKey, tc.body), 400, tc.fragment)
			})
		}

		t.Run("breached", func(t *testing.T) {
			// CASE-1 (P1, active) breaches time to acknowledge at 900s; CASE-2 (P3, acknowledged)
			// breaches time to update 14400s after its last update (as CASE-1 does, with time to
			// resolve); CASE-5 (P5) none yet; resolved and closed cases never.
			h.Clock.Advance(14401 * time.Second)
			if n := h.evaluate(); n < 2 {
				t.Fatalf("%d breaches", n)
			}
			for _, tc := range []struct {
				filter string
				want   []string
			}{
				{`"KPI_FILTER_TIME_TO_ACKNOWLEDGE_BREACHED"`, []string{"CASE-1"}},
				{`"KPI_FILTER_TIME_TO_UPDATE_BREACHED"`, []string{"CASE-2", "CASE-1"}},
				{`"KPI_FILTER_TIME_TO_RESOLVE_BREACHED"`, []string{"CASE-1"}},
				{`"KPI_FILTER_NOT_BREACHED"`, []string{"CASE-5", "CASE-4", "CASE-3"}},
				{`"KPI_FILTER_NOT_BREACHED","KPI_FILTER_TIME_TO_ACKNOWLEDGE_BREACHED"`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-1"}},
				{`"KPI_FILTER_UNSPECIFIED"`, []string{"CASE-5", "CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			} {
				got := readableIDs(h.list(h.RootKey, `{"filters":{"breached":[`+tc.filter+`]}}`))
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("breached %s: got %v, want %v", tc.filter, got, tc.want)
				}
			}
		})
	})
}

func TestListSkipAndPublicFilters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		start := h.DB.Now()
		prod := oas.KeyValue{Key: "env", Value: "prod"}
		var ids []string
		for i := 1; i <= 4; i++ {
			var labels []oas.KeyValue
			if i%2 == 1 {
				labels = append(labels, prod)
			}
			ids = append(ids, h.open(1, fmt.Sprintf("skip-%d", i), fmt.Sprintf("case %d", i), labels...).ID)
			h.Clock.Advance(time.Minute)
		}
		// CASE-2 has alert Disk (fingerprint fp-Disk), CASE-3 alert Cpu; CASE-1 is resolved at
		// start+10m; CASE-4 is closed at start+10m.
		h.record(1, ids[1], p1Alert("Disk"))
		h.record(1, ids[2], p1Alert("Cpu"))
		h.Clock.Advance(6 * time.Minute)
		h.ok(h.resolve(h.RootKey, "CASE-1", ""), "resolve")
		h.ok(h.close(h.RootKey, "CASE-4"), "close")
		diskID := h.getCase(h.RootKey, "CASE-2").CaseIndicators.AlertIndicators[0].AlertId
		at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339Nano) }

		t.Run("skip", func(t *testing.T) {
			for _, tc := range []struct {
				body string
				want []string
				next bool
			}{
				{`{"pagination":{"skip":0,"pageSize":2}}`, []string{"CASE-4", "CASE-3"}, true},
				{`{"pagination":{"skip":1,"pageSize":2}}`, []string{"CASE-3", "CASE-2"}, true},
				{`{"pagination":{"skip":2,"pageSize":2}}`, []string{"CASE-2", "CASE-1"}, false},
				{`{"pagination":{"skip":3}}`, []string{"CASE-1"}, false},
				{`{"pagination":{"skip":4}}`, []string{}, false},
				{`{"pagination":{"skip":1000000}}`, []string{}, false},
				{`{"pagination":{"skip":1,"pageToken":"` + h.list(h.RootKey, `{"pagination":{"pageSize":1}}`).Pagination.NextPageToken.Value + `"}}`,
					[]string{"CASE-2", "CASE-1"}, false},
			} {
				l := h.list(h.RootKey, tc.body)
				if got := readableIDs(l); !reflect.DeepEqual(got, tc.want) || l.Pagination.NextPageToken.Set != tc.next || l.Pagination.TotalSize.Value != 4 {
					t.Fatalf("%s: got %v next %v, want %v next %v", tc.body, got, l.Pagination.NextPageToken.Set, tc.want, tc.next)
				}
			}
			// The next token of a skipped page continues after it.
			l := h.list(h.RootKey, `{"pagination":{"skip":1,"pageSize":1}}`)
			l = h.list(h.RootKey, `{"pagination":{"pageSize":1,"pageToken":"`+l.Pagination.NextPageToken.Value+`"}}`)
			if got := readableIDs(l); !reflect.DeepEqual(got, []string{"CASE-2"}) {
				t.Fatalf("after a skipped page: %v", got)
			}
			apitest.ExpectError(t, h.do("POST", casesPath, h.RootKey, `{"pagination":{"skip":-1}}`), 400, "pagination.skip")
			apitest.ExpectError(t, h.do("POST", casesPath, h.RootKey, `{"pagination":{"skip":1000001}}`), 400, "pagination.skip")
		})

		for _, tc := range []struct {
			name, filters string
			want          []string
		}{
			{"alert id", `{"alertFilters":{"alertIds":["` + diskID + `"]}}`, []string{"CASE-2"}},
			{"unknown alert id", `{"alertFilters":{"alertIds":["00000000-0000-4000-8000-000000000000"]}}`, []string{}},
			{"alert version", `{"alertFilters":{"alertVersions":["fp-Cpu"]}}`, []string{"CASE-3"}},
			{"alert id or version", `{"alertFilters":{"alertIds":["` + diskID + `"],"alertVersions":["fp-Cpu"]}}`, []string{"CASE-3", "CASE-2"}},
			{"empty alert filters", `{"alertFilters":{}}`, []string{"CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"flat labels", `{"caseLabelsFilter":{"flatLabels":[{"key":"env","value":"prod"}]}}`, []string{"CASE-3", "CASE-1"}},
			{"flat labels, value differs", `{"caseLabelsFilter":{"flatLabels":[{"key":"env","value":"dev"}]}}`, []string{}},
			{"no connector", `{"connectorTypeFilters":[{"noConnector":{}}]}`, []string{"CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"a connector", `{"connectorTypeFilters":[{"connectorType":"CONNECTOR_TYPE_SLACK"}]}`, []string{}},
			{"a connector or none", `{"connectorTypeFilters":[{"connectorType":"CONNECTOR_TYPE_SLACK"},{"noConnector":{}}]}`, []string{"CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"impacted entity", `{"impactedEntities":[{"apmService":{"name":"checkout"}}]}`, []string{}},
			{"alert indicators", `{"indicatorTypes":["INDICATOR_TYPE_ALERT"]}`, []string{"CASE-3", "CASE-2"}},
			{"alertmanager indicators", `{"indicatorTypes":["INDICATOR_TYPE_PROMETHEUS_ALERTMANAGER"]}`, []string{"CASE-3", "CASE-2"}},
			{"error tracking", `{"indicatorTypes":["INDICATOR_TYPE_ERROR_TRACKING"]}`, []string{}},
			{"unspecified indicator type", `{"indicatorTypes":["INDICATOR_TYPE_UNSPECIFIED"]}`, []string{"CASE-4", "CASE-3", "CASE-2", "CASE-1"}},
			{"created in window", `{"dateRange":{"from":"` + at(30*time.Second) + `","to":"` + at(150*time.Second) + `","mode":"DATE_RANGE_MODE_CREATED_AT"}}`, []string{"CASE-3", "CASE-2"}},
			{"active in window", `{"dateRange":{"from":"` + at(30*time.Second) + `","to":"` + at(150*time.Second) + `","mode":"DATE_RANGE_MODE_ACTIVE_WINDOW"}}`, []string{"CASE-3", "CASE-2", "CASE-1"}},
			{"active after the ends", `{"dateRange":{"from":"` + at(11*time.Minute) + `","to":"` + at(20*time.Minute) + `","mode":"DATE_RANGE_MODE_ACTIVE_WINDOW"}}`, []string{"CASE-3", "CASE-2"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := readableIDs(h.list(h.RootKey, `{"filters":`+tc.filters+`}`)); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}

		for _, tc := range []struct{ name, filters, fragment string }{
			{"entity with both", `{"impactedEntities":[{"apmService":{"name":"a"},"apmDatabase":{"name":"b"}}]}`, "filters.impactedEntities[0]: must set exactly one of apmService, apmDatabase"},
			{"entity with neither", `{"impactedEntities":[{}]}`, "filters.impactedEntities[0]"},
			{"entity without name", `{"impactedEntities":[{"apmService":{}}]}`, "filters.impactedEntities[0].apmService.name"},
			{"bad alert id", `{"alertFilters":{"alertIds":["DISK"]}}`, "filters.alertFilters.alertIds[0]"},
			{"long alert version", `{"alertFilters":{"alertVersions":["` + strings.Repeat("v", 65) + `"]}}`, "filters.alertFilters.alertVersions[0]"},
			{"empty flat label value", `{"caseLabelsFilter":{"flatLabels":[{"key":"env","value":""}]}}`, "filters.caseLabelsFilter.flatLabels[0].value"},
			{"unknown connector", `{"connectorTypeFilters":[{"connectorType":"CONNECTOR_TYPE_FAX"}]}`, "filters.connectorTypeFilters[0].connectorType"},
			{"unknown indicator type", `{"indicatorTypes":["INDICATOR_TYPE_LOG"]}`, "filters.indicatorTypes[0]"},
			{"unknown mode", `{"dateRange":{"from":"` + at(0) + `","to":"` + at(time.Minute) + `","mode":"DATE_RANGE_MODE_SOMETIME"}}`, "filters.dateRange.mode"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				apitest.ExpectError(t, h.do("POST", casesPath, h.RootKey, `{"filters":`+tc.filters+`}`), 400, tc.fragment)
			})
		}
	})
}
