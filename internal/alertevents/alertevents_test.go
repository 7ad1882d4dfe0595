package alertevents_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	ingestPath = "/ingest/alertmanager/v1"
	feedPath   = "/mgmt/openapi/latest/alerts/events/v3"
	defsPath   = "/mgmt/openapi/latest/alerts/alerts/v3/all/events"
	statsPath  = "/mgmt/openapi/latest/v3/alert-event-stats"
	byIDPath   = "/mgmt/openapi/latest/v3/alert-event/"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

type amAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Fingerprint string            `json:"fingerprint"`
}

// defAlert is a firing alert of the definition def (version def-v1, priority P1) on service.
func defAlert(def, service string, startsAt time.Time) amAlert {
	return amAlert{
		Status: "firing",
		Labels: map[string]string{
			"alertname": "HighLatency", "service": service, "severity": "critical",
			"alert_def_id": def, "alert_def_version_id": def + "-v1", "alert_def_name": "High latency " + def,
			"alert_def_priority": "P1",
		},
		Annotations: map[string]string{"summary": "latency of " + service},
		StartsAt:    startsAt,
		Fingerprint: fmt.Sprintf("%x", def+"/"+service),
	}
}

func resolvedAt(a amAlert, endsAt time.Time) amAlert {
	a.Status = "resolved"
	a.EndsAt = endsAt
	return a
}

type ingestResult struct {
	IncidentsOpened   int `json:"incidentsOpened"`
	IncidentsResolved int `json:"incidentsResolved"`
	Unchanged         int `json:"unchanged"`
}

func send(t *testing.T, env *apitest.Env, key, groupKey string, alerts ...amAlert) ingestResult {
	t.Helper()
	status := "resolved"
	for _, a := range alerts {
		if a.Status == "firing" {
			status = "firing"
		}
	}
	body := apitest.JSONOf(t, map[string]any{
		"version": "4", "groupKey": groupKey, "status": status, "receiver": "pager",
		"groupLabels": map[string]string{"alertname": "HighLatency"}, "commonLabels": map[string]string{},
		"commonAnnotations": map[string]string{}, "externalURL": "http://alertmanager.example:9093", "alerts": alerts,
	})
	return apitest.Decode[ingestResult](t, env.JSON(t, http.MethodPost, ingestPath, key, body))
}

type feedEvent struct {
	CompanyID   int64             `json:"companyId"`
	Key         string            `json:"platformEventKey"`
	Type        string            `json:"platformEventType"`
	DedupKey    string            `json:"platformEventDedupKey"`
	Labels      map[string]string `json:"platformEventLabels"`
	Metadata    map[string]string `json:"platformEventMetadata"`
	Timestamp   time.Time         `json:"platformEventTimestamp"`
	PayloadType string            `json:"platformEventPayloadType"`
	Payload     map[string]any    `json:"platformEventPayload"`
}

type feedPage struct {
	Events     []feedEvent `json:"events"`
	Pagination struct {
		NextPageToken string `json:"nextPageToken"`
		TotalSize     int64  `json:"totalSize"`
	} `json:"pagination"`
}

// day is the query of a filter over 2026-11-20.
func day(extra ...string) url.Values {
	q := url.Values{
		"filter[timestamp][from]": {"2026-11-20T00:00:00Z"},
		"filter[timestamp][to]":   {"2026-11-20T23:59:59Z"},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Add(extra[i], extra[i+1])
	}
	return q
}

func get(t *testing.T, env *apitest.Env, key, path string, q url.Values) apitest.Response {
	t.Helper()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return env.Get(t, path, key, nil)
}

func list(t *testing.T, env *apitest.Env, key string, q url.Values) feedPage {
	t.Helper()
	return apitest.Decode[feedPage](t, get(t, env, key, feedPath, q))
}

func TestFiringThenResolutionMakeTwoEvents(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "events")
		a := defAlert("def-1", "checkout", t0)
		if r := send(t, env, key, "g1", a); r.IncidentsOpened != 1 {
			t.Fatalf("firing: %+v", r)
		}
		// Alertmanager sends the same firing alert again (repeat interval, a new alert of the
		// group): no second event.
		if r := send(t, env, key, "g1", a); r.Unchanged != 1 {
			t.Fatalf("re-sent firing: %+v", r)
		}
		page := list(t, env, key, day())
		if len(page.Events) != 1 || page.Pagination.TotalSize != 1 {
			t.Fatalf("after the firing and its repeat: %+v", page)
		}
		firing := page.Events[0]
		if firing.CompanyID != teamID || firing.Type != "alert" || firing.PayloadType != "alertmanager-alert" ||
			!firing.Timestamp.Equal(t0) || firing.Metadata["status"] != "firing" || firing.Metadata["alertDefId"] != "def-1" ||
			firing.Metadata["alertVersionId"] != "def-1-v1" || firing.Metadata["alertDefPriority"] != "P1" ||
			firing.Metadata["alertDefName"] != "High latency def-1" || firing.Metadata["incidentId"] == "" ||
			firing.DedupKey != firing.Metadata["incidentId"]+":firing" {
			t.Errorf("firing event: %+v", firing)
		}
		if _, ok := firing.Labels["alert_def_id"]; ok || firing.Labels["service"] != "checkout" || firing.Labels["alertname"] != "HighLatency" {
			t.Errorf("labels: %v", firing.Labels)
		}

		// The resolution: a second event; sent again, nothing more.
		end := t0.Add(10 * time.Minute)
		if r := send(t, env, key, "g1", resolvedAt(a, end)); r.IncidentsResolved != 1 {
			t.Fatalf("resolution: %+v", r)
		}
		send(t, env, key, "g1", resolvedAt(a, end))
		page = list(t, env, key, day())
		if len(page.Events) != 2 {
			t.Fatalf("after the resolution: %d events", len(page.Events))
		}
		res := page.Events[0] // newest first
		if res.Metadata["status"] != "resolved" || !res.Timestamp.Equal(end) || res.Metadata["incidentId"] != firing.Metadata["incidentId"] ||
			res.Payload["endsAt"] == nil || page.Events[1].Key != firing.Key {
			t.Errorf("events: %+v", page.Events)
		}

		// Read by id, in both services.
		one := apitest.Decode[struct {
			Event struct {
				SingleEvent feedEvent `json:"singleEvent"`
			} `json:"event"`
		}](t, get(t, env, key, feedPath+"/"+firing.Key, nil))
		if one.Event.SingleEvent.Key != firing.Key || one.Event.SingleEvent.Metadata["status"] != "firing" {
			t.Errorf("by id: %+v", one)
		}
		type occurrence struct {
			ID                string `json:"id"`
			SinglePermutation struct {
				AlertID                string            `json:"alertId"`
				Status                 string            `json:"status"`
				Timestamp              time.Time         `json:"timestamp"`
				GroupLabels            map[string]string `json:"groupLabels"`
				PermutationLabels      map[string]string `json:"permutationLabels"`
				PermutationID          string            `json:"permutationId"`
				IncidentCorrelationKey string            `json:"incidentCorrelationKey"`
			} `json:"singlePermutation"`
		}
		occ := apitest.Decode[occurrence](t, get(t, env, key, byIDPath+res.Key, nil))
		p := occ.SinglePermutation
		if occ.ID != res.Key || p.AlertID != "def-1" || p.Status != "ALERT_STATUS_RESOLVED_OR_UNSPECIFIED" || !p.Timestamp.Equal(end) ||
			p.GroupLabels["alertname"] != "HighLatency" || p.PermutationLabels["service"] != "checkout" ||
			p.PermutationID != a.Fingerprint || p.IncidentCorrelationKey != firing.Metadata["incidentId"] {
			t.Errorf("alert event: %+v", occ)
		}
		occ = apitest.Decode[occurrence](t, get(t, env, key, byIDPath+firing.Key, nil))
		if occ.SinglePermutation.Status != "ALERT_STATUS_TRIGGERED" {
			t.Errorf("firing status: %+v", occ)
		}

		// The same alert firing again later is a new incident: a new firing.
		send(t, env, key, "g1", defAlert("def-1", "checkout", t0.Add(time.Hour)))
		if n := len(list(t, env, key, day()).Events); n != 3 {
			t.Errorf("after a new firing: %d events, want 3", n)
		}
	})
}

func TestAlertsWithoutDefinitionRecordNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "plain")
		a := defAlert("x", "checkout", t0)
		delete(a.Labels, "alert_def_id")
		long := defAlert(strings.Repeat("d", 37), "api", t0) // longer than any definition id
		long.Fingerprint = "long-definition"
		if r := send(t, env, key, "g", a, long); r.IncidentsOpened != 2 {
			t.Fatalf("ingest: %+v", r)
		}
		send(t, env, key, "g", resolvedAt(a, t0.Add(time.Minute)), resolvedAt(long, t0.Add(time.Minute)))
		if page := list(t, env, key, day()); len(page.Events) != 0 {
			t.Errorf("events of alerts without a definition: %+v", page.Events)
		}
	})
}

// seed ingests 5 firings: def-a on s0..s2 at t0, +1m, +2m; def-b on s0, s1 at +3m, +4m; and
// resolves def-a's s0 at +5m.
func seed(t *testing.T, env *apitest.Env, key string) {
	t.Helper()
	var alerts []amAlert
	for i := range 3 {
		alerts = append(alerts, defAlert("def-a", fmt.Sprintf("s%d", i), t0.Add(time.Duration(i)*time.Minute)))
	}
	for i := range 2 {
		alerts = append(alerts, defAlert("def-b", fmt.Sprintf("s%d", i), t0.Add(time.Duration(3+i)*time.Minute)))
	}
	send(t, env, key, "g-seed", alerts...)
	send(t, env, key, "g-seed", resolvedAt(alerts[0], t0.Add(5*time.Minute)))
}

func TestListFiltersOrderAndPages(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "lists")
		seed(t, env, key)

		// Pages of 2, newest first, walked by token; then oldest first.
		for _, asc := range []bool{false, true} {
			var times []time.Time
			q := day("pagination[pageSize]", "2")
			if asc {
				q.Set("order_bys[0][direction]", "ORDER_BY_DIRECTION_ASC")
				q.Set("order_bys[0][fieldName]", "ORDER_BY_FIELDS_TIMESTAMP")
			}
			for range 10 {
				page := list(t, env, key, q)
				if page.Pagination.TotalSize != 6 || len(page.Events) > 2 {
					t.Fatalf("page: %+v", page)
				}
				for _, e := range page.Events {
					times = append(times, e.Timestamp)
				}
				if page.Pagination.NextPageToken == "" {
					break
				}
				q.Set("pagination[pageToken]", page.Pagination.NextPageToken)
			}
			if len(times) != 6 {
				t.Fatalf("asc=%v: %d events over the pages", asc, len(times))
			}
			for i := 1; i < len(times); i++ {
				if asc && times[i].Before(times[i-1]) || !asc && times[i].After(times[i-1]) {
					t.Errorf("asc=%v: out of order: %v", asc, times)
				}
			}
			// A token of one order is refused with the other.
			q.Del("order_bys[0][direction]")
			q.Del("order_bys[0][fieldName]")
			if asc {
				apitest.ExpectError(t, get(t, env, key, feedPath, q), http.StatusBadRequest, "pagination.pageToken")
			}
		}

		cases := []struct {
			name string
			path string
			q    url.Values
			want int
		}{
			{"time range", feedPath, url.Values{"filter[timestamp][from]": {t0.Add(time.Minute).Format(time.RFC3339)},
				"filter[timestamp][to]": {t0.Add(3 * time.Minute).Format(time.RFC3339)}}, 3},
			{"range ends are included", feedPath, url.Values{"filter[timestamp][from]": {t0.Format(time.RFC3339)},
				"filter[timestamp][to]": {t0.Format(time.RFC3339)}}, 1},
			{"type alert", feedPath, day("filter[platformEventTypes]", "alert"), 6},
			{"another type", feedPath, day("filter[platformEventTypes]", "log"), 0},
			{"metadata status", feedPath, day("filter[platformEventMetadataFilters][pathAndValues][0][path]", "status",
				"filter[platformEventMetadataFilters][pathAndValues][0][multipleValues][values]", "resolved"), 1},
			{"metadata definition", feedPath, day("filter[platformEventMetadataFilters][pathAndValues][0][path]", "alertDefId",
				"filter[platformEventMetadataFilters][pathAndValues][0][multipleValues][values]", "def-b"), 2},
			{"labels, and", feedPath, day(
				"filter[platformEventLabelsFilters][pathAndValues][0][path]", "service",
				"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "s1",
				"filter[platformEventLabelsFilters][pathAndValues][1][path]", "alertname",
				"filter[platformEventLabelsFilters][pathAndValues][1][multipleValues][values]", "HighLatency"), 2},
			{"labels, or", feedPath, day(
				"filter[platformEventLabelsFilters][operator]", "FILTER_OPERATOR_OR",
				"filter[platformEventLabelsFilters][pathAndValues][0][path]", "service",
				"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "s2",
				"filter[platformEventLabelsFilters][pathAndValues][1][path]", "service",
				"filter[platformEventLabelsFilters][pathAndValues][1][multipleValues][values]", "s1"), 3},
			{"labels, regexp", feedPath, day(
				"filter[platformEventLabelsFilters][pathAndValues][0][path]", "service",
				"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][matcher]", "FILTER_MATCHER_REGEXP",
				"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "s[12]"), 3},
			{"regexp matches whole values", feedPath, day(
				"filter[platformEventLabelsFilters][pathAndValues][0][path]", "service",
				"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][matcher]", "FILTER_MATCHER_REGEXP",
				"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "s"), 0},
			{"nested filters", feedPath, day(
				"filter[platformEventMetadataFilters][pathAndValues][0][path]", "alertDefId",
				"filter[platformEventMetadataFilters][pathAndValues][0][multipleValues][values]", "def-a",
				"filter[platformEventMetadataFilters][pathAndValues][1][path]", "any",
				"filter[platformEventMetadataFilters][pathAndValues][1][filters][operator]", "FILTER_OPERATOR_OR",
				"filter[platformEventMetadataFilters][pathAndValues][1][filters][pathAndValues][0][path]", "status",
				"filter[platformEventMetadataFilters][pathAndValues][1][filters][pathAndValues][0][multipleValues][values]", "resolved",
				"filter[platformEventMetadataFilters][pathAndValues][1][filters][pathAndValues][1][path]", "alertDefName",
				"filter[platformEventMetadataFilters][pathAndValues][1][filters][pathAndValues][1][multipleValues][values]", "nothing"), 1},
			{"definitions' events by definition", defsPath, url.Values{"alert_ids": {"def-b"},
				"timestamp_range[from]": {"2026-11-20T00:00:00Z"}, "timestamp_range[to]": {"2026-11-21T00:00:00Z"}}, 2},
			{"definitions' events by version", defsPath, url.Values{"alert_ids": {"def-a-v1", "unknown"},
				"timestamp_range.from": {"2026-11-20T00:00:00Z"}, "timestamp_range.to": {"2026-11-21T00:00:00Z"}}, 4},
			{"definitions' events by label", defsPath, url.Values{"platform_event_labels[service]": {"s0"},
				"timestamp_range[from]": {"2026-11-20T00:00:00Z"}, "timestamp_range[to]": {"2026-11-21T00:00:00Z"}}, 3},
			{"definitions' events, other day", defsPath, url.Values{
				"timestamp_range[from]": {"2026-11-21T00:00:00Z"}, "timestamp_range[to]": {"2026-11-22T00:00:00Z"}}, 0},
		}
		for _, c := range cases {
			page := apitest.Decode[feedPage](t, get(t, env, key, c.path, c.q))
			if len(page.Events) != c.want || page.Pagination.TotalSize != int64(c.want) {
				t.Errorf("%s: %d events (total %d), want %d", c.name, len(page.Events), page.Pagination.TotalSize, c.want)
			}
			// The count agrees with the list.
			if c.path == feedPath {
				count := apitest.Decode[struct {
					Count        string `json:"count"`
					ReachedLimit bool   `json:"reachedLimit"`
				}](t, get(t, env, key, feedPath+"/all/count", c.q))
				if count.Count != fmt.Sprint(c.want) || count.ReachedLimit {
					t.Errorf("%s: count %+v, want %d", c.name, count, c.want)
				}
			}
		}
	})
}

func TestStatistics(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "stats")
		seed(t, env, key)
		type counts map[string]struct {
			FieldStatistics map[string]string `json:"fieldStatistics"`
		}
		st := apitest.Decode[struct {
			Labels counts `json:"platformEventLabelsFieldStatistics"`
			Meta   counts `json:"platformEventMetadataFieldStatistics"`
		}](t, get(t, env, key, feedPath+"/all/statistics", day()))
		want := map[string]string{"s0": "3", "s1": "2", "s2": "1"}
		if got := st.Labels["service"].FieldStatistics; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("service counts %v, want %v", got, want)
		}
		if got := st.Meta["status"].FieldStatistics; got["firing"] != "5" || got["resolved"] != "1" {
			t.Errorf("status counts %v", got)
		}
		if got := st.Meta["alertDefId"].FieldStatistics; got["def-a"] != "4" || got["def-b"] != "2" {
			t.Errorf("definition counts %v", got)
		}
		// The filter applies to the statistics.
		st2 := apitest.Decode[struct {
			Labels counts `json:"platformEventLabelsFieldStatistics"`
		}](t, get(t, env, key, feedPath+"/all/statistics", day(
			"filter[platformEventMetadataFilters][pathAndValues][0][path]", "alertDefId",
			"filter[platformEventMetadataFilters][pathAndValues][0][multipleValues][values]", "def-b")))
		if got := st2.Labels["service"].FieldStatistics; len(got) != 2 || got["s0"] != "1" || got["s1"] != "1" {
			t.Errorf("filtered service counts %v", got)
		}

		type defStats struct {
			Count     int64 `json:"count"`
			Triggered int64 `json:"triggeredCount"`
			Resolved  int64 `json:"resolvedCount"`
			TSamples  []struct {
				PermutationLabels map[string]string `json:"permutationLabels"`
			} `json:"triggeredPermutationsSamples"`
			RSamples []struct {
				PermutationLabels map[string]string `json:"permutationLabels"`
			} `json:"resolvedPermutationsSamples"`
		}
		type statsList struct {
			EventsStats map[string]defStats `json:"eventsStats"`
		}
		all := apitest.Decode[statsList](t, get(t, env, key, statsPath, nil))
		a, b := all.EventsStats["def-a"], all.EventsStats["def-b"]
		if len(all.EventsStats) != 2 || a.Count != 4 || a.Triggered != 3 || a.Resolved != 1 || b.Count != 2 || b.Triggered != 2 || b.Resolved != 0 {
			t.Fatalf("stats: %+v", all)
		}
		if len(a.TSamples) != 3 || a.TSamples[0].PermutationLabels["service"] != "s2" || len(a.RSamples) != 1 ||
			a.RSamples[0].PermutationLabels["service"] != "s0" {
			t.Errorf("def-a samples: %+v", a)
		}
		q := url.Values{"ids": {"def-a", "nothing"}, "order_bys[0][direction]": {"ORDER_BY_ALERT_EVENT_DIRECTION_ASC"}}
		some := apitest.Decode[statsList](t, get(t, env, key, statsPath, q))
		if len(some.EventsStats) != 2 || some.EventsStats["nothing"].Count != 0 || some.EventsStats["def-a"].TSamples[0].PermutationLabels["service"] != "s0" {
			t.Errorf("stats of def-a and an unknown id (oldest first): %+v", some)
		}
	})
}

func TestBatchGet(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "batch")
		seed(t, env, key)
		page := list(t, env, key, day())
		ids := []string{page.Events[0].Key, page.Events[5].Key}
		type batch struct {
			Events map[string]struct {
				SingleEvent *feedEvent `json:"singleEvent"`
			} `json:"events"`
			NotFoundIDs []string `json:"notFoundIds"`
		}
		got := apitest.Decode[batch](t, get(t, env, key, feedPath+"/all/list", url.Values{"ids": {ids[0], "missing", ids[1], ids[0]}}))
		if len(got.Events) != 2 || got.Events[ids[0]].SingleEvent == nil || got.Events[ids[1]].SingleEvent.Key != ids[1] ||
			strings.Join(got.NotFoundIDs, ",") != "missing" {
			t.Errorf("batch: %+v", got)
		}
		// The time filter keeps the events of its range; the others are not "not found".
		got = apitest.Decode[batch](t, get(t, env, key, feedPath+"/all/list", url.Values{"ids": ids,
			"filter[timestamp][from]": {page.Events[0].Timestamp.Format(time.RFC3339Nano)},
			"filter[timestamp][to]":   {page.Events[0].Timestamp.Format(time.RFC3339Nano)}}))
		if len(got.Events) != 1 || len(got.NotFoundIDs) != 0 {
			t.Errorf("batch in a range: %+v", got)
		}
	})
}

func TestBadRequestsAreRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "bounds")
		seed(t, env, key)
		many := url.Values{}
		for i := range 21 {
			many.Set(fmt.Sprintf("order_bys[%d][direction]", i), "ORDER_BY_DIRECTION_ASC")
		}
		for k, v := range day() {
			many[k] = v
		}
		regexp := day("filter[platformEventLabelsFilters][pathAndValues][0][path]", "service",
			"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][matcher]", "FILTER_MATCHER_REGEXP",
			"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "(")
		both := day("filter[platformEventLabelsFilters][pathAndValues][0][path]", "service",
			"filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "a",
			"filter[platformEventLabelsFilters][pathAndValues][0][filters][pathAndValues][0][path]", "b",
			"filter[platformEventLabelsFilters][pathAndValues][0][filters][pathAndValues][0][multipleValues][values]", "c")
		deep := day()
		prefix := "filter[platformEventLabelsFilters]"
		for range 4 {
			deep.Set(prefix+"[pathAndValues][0][path]", "p")
			prefix += "[pathAndValues][0][filters]"
		}
		deep.Set(prefix+"[pathAndValues][0][path]", "p")
		deep.Set(prefix+"[pathAndValues][0][multipleValues][values]", "v")
		wide := day()
		for i := range 5 {
			p := fmt.Sprintf("filter[platformEventMetadataFilters][pathAndValues][%d]", i)
			wide.Set(p+"[path]", "p")
			for j := range 50 {
				wide.Set(fmt.Sprintf("%s[filters][pathAndValues][%d][path]", p, j), "status")
				wide.Set(fmt.Sprintf("%s[filters][pathAndValues][%d][multipleValues][values]", p, j), "firing")
			}
		}
		longIDs := url.Values{}
		for i := range 1001 {
			longIDs.Add("ids", fmt.Sprint(i))
		}
		cases := []struct {
			name, path string
			q          url.Values
			status     int
			fragment   string
		}{
			{"no filter", feedPath, nil, 400, "filter: is required"},
			{"no timestamp", feedPath, url.Values{"filter[platformEventTypes]": {"alert"}}, 400, "filter.timestamp: is required"},
			{"no to", feedPath, url.Values{"filter[timestamp][from]": {"2026-11-20T00:00:00Z"}}, 400, "filter.timestamp.to: is required"},
			{"reversed", feedPath, url.Values{"filter[timestamp][from]": {"2026-11-21T00:00:00Z"}, "filter[timestamp][to]": {"2026-11-20T00:00:00Z"}}, 400, "filter.timestamp.to: must not be before"},
			{"not a time", feedPath, url.Values{"filter[timestamp][from]": {"yesterday"}, "filter[timestamp][to]": {"2026-11-20T00:00:00Z"}}, 400, "filter.timestamp.from"},
			{"page size above", feedPath, day("pagination[pageSize]", "1001"), 400, "pagination.pageSize: must be at most 1000"},
			{"page size below", feedPath, day("pagination[pageSize]", "-1"), 400, "pagination.pageSize: must be at least 0"},
			{"page token", feedPath, day("pagination[pageToken]", "not-a-token"), 400, "pagination.pageToken"},
			{"order direction", feedPath, day("order_bys[0][direction]", "UP"), 400, "order_bys[0].direction"},
			{"too many orders", feedPath, many, 400, "order_bys: must have at most 20"},
			{"bad regexp", feedPath, regexp, 400, "is not a valid regular expression"},
			{"values and filters", feedPath, both, 400, "exactly one of multipleValues and filters"},
			{"too deep", feedPath, deep, 400, "at most 4 levels"},
			{"too many entries", feedPath, wide, 400, "at most 200 entries"},
			{"no path", feedPath, day("filter[platformEventLabelsFilters][pathAndValues][0][multipleValues][values]", "v"), 400, "path: is required"},
			{"operator", feedPath, day("filter[platformEventLabelsFilters][operator]", "XOR"), 400, "operator"},
			{"count without filter", feedPath + "/all/count", nil, 400, "filter: is required"},
			{"statistics without range", feedPath + "/all/statistics", url.Values{"filter[platformEventKeys]": {"x"}}, 400, "filter.timestamp"},
			{"definitions without range", defsPath, nil, 400, "timestamp_range: is required"},
			{"label match too long", defsPath, url.Values{"timestamp_range[from]": {"2026-11-20T00:00:00Z"}, "timestamp_range[to]": {"2026-11-21T00:00:00Z"},
				"platform_event_labels[service]": {strings.Repeat("x", 1025)}}, 400, "platform_event_labels[service]"},
			{"batch ids", feedPath + "/all/list", longIDs, 400, "ids"},
			{"batch range", feedPath + "/all/list", url.Values{"filter[timestamp][from]": {"2026-11-21T00:00:00Z"}, "filter[timestamp][to]": {"2026-11-20T00:00:00Z"}}, 400, "filter.timestamp.to"},
			{"stats ids", statsPath, longIDs, 400, "ids"},
			{"stats id length", statsPath, url.Values{"ids": {strings.Repeat("d", 37)}}, 400, "ids"},
			{"stats order", statsPath, url.Values{"order_bys[0][direction]": {"ORDER_BY_DIRECTION_ASC"}}, 400, "order_bys[0].direction"},
			{"alert event id length", byIDPath + strings.Repeat("e", 37), nil, 400, "id"},
			{"alert event page", byIDPath + "x", url.Values{"pagination[pageSize]": {"1001"}}, 400, "pagination.pageSize"},
			{"unknown alert event", byIDPath + "00000000-0000-4000-8000-000000000001", nil, 404, "no alert event"},
			{"unknown event", feedPath + "/00000000-0000-4000-8000-000000000001", nil, 404, "no alert event"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, get(t, env, key, c.path, c.q), c.status, c.fragment)
			})
		}
		// Nothing a refused request sent changed the feed.
		if n := len(list(t, env, key, day()).Events); n != 6 {
			t.Errorf("%d events after the refusals, want 6", n)
		}
	})
}

func TestPermissionsAndTeams(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, keyA := env.MustTeam(t, "team a")
		_, keyB := env.MustTeam(t, "team b")
		seed(t, env, keyA)
		id := list(t, env, keyA, day()).Events[0].Key
		reader := env.MustKey(t, keyA, "alerts:ReadConfig")
		other := env.MustKey(t, keyA, "incidents:Read", "alerts:UpdateConfig")
		reads := []struct {
			path string
			q    url.Values
		}{
			{feedPath, day()},
			{feedPath + "/all/count", day()},
			{feedPath + "/all/statistics", day()},
			{feedPath + "/all/list", url.Values{"ids": {id}}},
			{feedPath + "/" + id, nil},
			{defsPath, url.Values{"timestamp_range[from]": {"2026-11-20T00:00:00Z"}, "timestamp_range[to]": {"2026-11-21T00:00:00Z"}}},
			{statsPath, nil},
			{byIDPath + id, nil},
		}
		for _, r := range reads {
			if res := get(t, env, reader, r.path, r.q); res.Status != http.StatusOK {
				t.Errorf("%s with alerts:ReadConfig: %d %s", r.path, res.Status, res.Body)
			}
			apitest.ExpectError(t, get(t, env, other, r.path, r.q), http.StatusForbidden, "alerts:ReadConfig")
			if res := get(t, env, "", r.path, r.q); res.Status != http.StatusUnauthorized {
				t.Errorf("%s without a key: %d", r.path, res.Status)
			}
		}

		// Team B sees none of team A's events.
		if page := list(t, env, keyB, day()); len(page.Events) != 0 || page.Pagination.TotalSize != 0 {
			t.Errorf("team b lists %+v", page)
		}
		apitest.ExpectError(t, get(t, env, keyB, feedPath+"/"+id, nil), http.StatusNotFound, "no alert event")
		apitest.ExpectError(t, get(t, env, keyB, byIDPath+id, nil), http.StatusNotFound, "no alert event")
		batch := apitest.Decode[struct {
			Events      map[string]any `json:"events"`
			NotFoundIDs []string       `json:"notFoundIds"`
		}](t, get(t, env, keyB, feedPath+"/all/list", url.Values{"ids": {id}}))
		if len(batch.Events) != 0 || len(batch.NotFoundIDs) != 1 {
			t.Errorf("team b batch: %+v", batch)
		}
		stats := apitest.Decode[struct {
			EventsStats map[string]json.RawMessage `json:"eventsStats"`
		}](t, get(t, env, keyB, statsPath, nil))
		if len(stats.EventsStats) != 0 {
			t.Errorf("team b stats: %s", stats.EventsStats)
		}
		count := apitest.Decode[struct {
			Count string `json:"count"`
		}](t, get(t, env, keyB, feedPath+"/all/count", day()))
		if count.Count != "0" {
			t.Errorf("team b count %s", count.Count)
		}
		st := apitest.Decode[struct {
			Labels map[string]any `json:"platformEventLabelsFieldStatistics"`
		}](t, get(t, env, keyB, feedPath+"/all/statistics", day()))
		if len(st.Labels) != 0 {
			t.Errorf("team b statistics %v", st.Labels)
		}
	})
}

// TestFiringsSetTheDefinitionsStatus: a firing sets its definition's lastTriggeredTime (the
// latest firing's start) and status ALERTING; the definition stays ALERTING while one of its
// alerts fires, and is OK once every one has resolved.
func TestFiringsSetTheDefinitionsStatus(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "status")
		const defs = "/mgmt/openapi/latest/alerts/alerts/v3"
		type answer struct {
			AlertDef struct {
				Status            string     `json:"status"`
				LastTriggeredTime *time.Time `json:"lastTriggeredTime"`
			} `json:"alertDef"`
		}
		created := apitest.Decode[struct{ AlertDef struct{ ID string } }](t, env.JSON(t, http.MethodPost, defs, key,
			`{"alertDefProperties":{"name":"d","metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]}}}`))
		id := created.AlertDef.ID
		state := func() answer { return apitest.Decode[answer](t, env.JSON(t, http.MethodGet, defs+"/"+id, key, "")) }
		if s := state(); s.AlertDef.LastTriggeredTime != nil || s.AlertDef.Status == "ALERT_DEF_STATUS_ALERTING" {
			t.Fatalf("a new definition: %+v", s)
		}
		a, b := defAlert(id, "a", t0), defAlert(id, "b", t0.Add(time.Minute))
		a.Fingerprint, b.Fingerprint = "fp-a", "fp-b"
		send(t, env, key, "g", a, b)
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_ALERTING" || s.AlertDef.LastTriggeredTime == nil ||
			!s.AlertDef.LastTriggeredTime.Equal(t0.Add(time.Minute)) {
			t.Fatalf("after two firings: %+v", s)
		}
		send(t, env, key, "g", resolvedAt(a, t0.Add(2*time.Minute)))
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_ALERTING" {
			t.Fatalf("one of two resolved: %+v", s)
		}
		send(t, env, key, "g", resolvedAt(b, t0.Add(3*time.Minute)))
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_OK" || !s.AlertDef.LastTriggeredTime.Equal(t0.Add(time.Minute)) {
			t.Fatalf("both resolved: %+v", s)
		}
	})
}

// TestNoDataSetsTheDefinitionsStatus (issue 37): the firing of a definition's no-data alert (the
// label alert_def_no_data) makes its status NO_DATA without touching lastTriggeredTime; while
// some alerts fire the status is ALERTING if one is a condition's, else NO_DATA; OK once all
// have resolved.
func TestNoDataSetsTheDefinitionsStatus(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "nodata")
		const defs = "/mgmt/openapi/latest/alerts/alerts/v3"
		type answer struct {
			AlertDef struct {
				Status            string     `json:"status"`
				LastTriggeredTime *time.Time `json:"lastTriggeredTime"`
			} `json:"alertDef"`
		}
		created := apitest.Decode[struct{ AlertDef struct{ ID string } }](t, env.JSON(t, http.MethodPost, defs, key,
			`{"alertDefProperties":{"name":"d","metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}],
			"noDataPolicy":{"state":"NO_DATA_POLICY_STATE_ALERTING"}}}}`))
		id := created.AlertDef.ID
		state := func() answer { return apitest.Decode[answer](t, env.JSON(t, http.MethodGet, defs+"/"+id, key, "")) }
		absent := defAlert(id, "a", t0)
		absent.Labels["alert_def_no_data"] = "true"
		absent.Fingerprint = "fp-nodata"
		send(t, env, key, "g", absent)
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_NO_DATA" || s.AlertDef.LastTriggeredTime != nil {
			t.Fatalf("while no data: %+v", s)
		}
		// A condition fires on another service, then the absence retires: ALERTING.
		over := defAlert(id, "b", t0.Add(time.Minute))
		over.Fingerprint = "fp-over"
		send(t, env, key, "g", over)
		send(t, env, key, "g", resolvedAt(absent, t0.Add(5*time.Minute)))
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_ALERTING" {
			t.Fatalf("no data retired while a condition fires: %+v", s)
		}
		// Absent again while the condition fires: NO_DATA; the condition resolves: still NO_DATA.
		again := defAlert(id, "c", t0.Add(6*time.Minute))
		again.Labels["alert_def_no_data"] = "true"
		again.Fingerprint = "fp-nodata-c"
		send(t, env, key, "g", again)
		send(t, env, key, "g", resolvedAt(over, t0.Add(7*time.Minute)))
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_NO_DATA" {
			t.Fatalf("the condition resolved while no data: %+v", s)
		}
		send(t, env, key, "g", resolvedAt(again, t0.Add(8*time.Minute)))
		if s := state(); s.AlertDef.Status != "ALERT_DEF_STATUS_OK" {
			t.Fatalf("after everything resolved: %+v", s)
		}
	})
}
