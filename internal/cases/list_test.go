package cases_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func (h *harness) list(key, body string) oas.ListCasesResponse {
	h.t.Helper()
	res := h.ok(h.do("POST", casesPath, key, body), "list "+body)
	var out oas.ListCasesResponse
	if err := out.UnmarshalJSON(res.Body); err != nil {
		h.t.Fatalf("decode list: %v", err)
	}
	return out
}

func readableIDs(l oas.ListCasesResponse) []string {
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
			{"assignee and unassigned", `{"filters":{"assignees":[{"assignee":"x","unassigned":{}}]}}`, "filters.assignees[0]: must set exactly one of assignee, unassigned"},
			{"neither", `{"filters":{"assignees":[{"unassigned":{}},{}]}}`, "filters.assignees[1]"},
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
