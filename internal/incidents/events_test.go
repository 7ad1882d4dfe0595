package incidents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	feedPath         = "/mgmt/openapi/5/incidents/events/v1"
	feedCountPath    = feedPath + "/all/count"
	filterValuesPath = "/mgmt/openapi/5/incidents/filter-values/v1"
	eventValuesPath  = filterValuesPath + "/events"
)

type feedItem struct {
	PlatformEventKey       string          `json:"platformEventKey"`
	PlatformEventTimestamp time.Time       `json:"platformEventTimestamp"`
	IncidentEvent          json.RawMessage `json:"incidentEvent"`
	Metadata               *struct {
		AlertName           string            `json:"alertName"`
		IncidentPermutation map[string]string `json:"incidentPermutation"`
		IncidentSeverity    string            `json:"incidentSeverity"`
		IncidentState       string            `json:"incidentState"`
		IncidentStatus      string            `json:"incidentStatus"`
		IsMuted             *bool             `json:"isMuted"`
	} `json:"incidentEventExtendedMetadata"`
}

type feedOut struct {
	Items      []feedItem `json:"items"`
	Pagination pageOut    `json:"pagination"`
}

func (it feedItem) event(t *testing.T) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(it.IncidentEvent, &e); err != nil {
		t.Fatalf("decode event %s: %v", it.IncidentEvent, err)
	}
	return e
}

func feed(t *testing.T, env *apitest.Env, key, query string) feedOut {
	t.Helper()
	var out feedOut
	path := feedPath
	if query != "" {
		path += "?" + query
	}
	decode(t, env.JSON(t, "GET", path, key, ""), &out)
	return out
}

func feedKeys(out feedOut) string {
	var keys []string
	for _, it := range out.Items {
		keys = append(keys, it.PlatformEventKey)
	}
	return strings.Join(keys, ",")
}

func eventCount(t *testing.T, env *apitest.Env, key, query string) string {
	t.Helper()
	var out struct {
		Count        string `json:"count"`
		ReachedLimit *bool  `json:"reachedLimit"`
	}
	path := feedCountPath
	if query != "" {
		path += "?" + query
	}
	decode(t, env.JSON(t, "GET", path, key, ""), &out)
	if out.ReachedLimit == nil || *out.ReachedLimit {
		t.Fatalf("reachedLimit = %v, want false", out.ReachedLimit)
	}
	return out.Count
}

// eventFixture triggers three incidents a minute apart and changes them: a (ERROR, service api,
// env prod) is acknowledged, b (CRITICAL, service db, env staging) closed, c (INFO, service
// api, env prod, named DiskFull) left alone.
type eventFixture struct {
	a, b, c string
	start   time.Time // the clock when a was triggered
}

func loadEventFixture(t *testing.T, env *apitest.Env) eventFixture {
	t.Helper()
	var f eventFixture
	f.start = env.Clock.Now()
	a := alert("ev-a")
	f.a, _ = trigger(t, env, a)
	env.Clock.Advance(time.Minute)
	b := alert("ev-b")
	b.Severity = oas.IncidentSeverityINCIDENTSEVERITYCRITICAL
	b.Labels = map[string]string{"alertname": "HighLatency", "service": "db"}
	b.Annotations = map[string]string{"summary": "very slow"}
	b.MetaLabels = []oas.MetaLabel{{Key: oas.NewOptString("env"), Value: oas.NewOptString("staging")}}
	f.b, _ = trigger(t, env, b)
	env.Clock.Advance(time.Minute)
	c := alert("ev-c")
	c.Name = "DiskFull"
	c.Severity = oas.IncidentSeverityINCIDENTSEVERITYINFO
	f.c, _ = trigger(t, env, c)
	env.Clock.Advance(time.Minute)
	decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(f.a)), &incidentsOut{})
	env.Clock.Advance(time.Minute)
	decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(f.b)), &incidentsOut{})
	env.Clock.Advance(time.Minute)
	return f
}

// TestEventsFeed lists the events of every incident, newest first, each with exactly one event
// body and one originator, and its incident's current fields; ascending order reverses it.
func TestEventsFeed(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := loadEventFixture(t, env)
		all := feed(t, env, env.RootKey, "")
		// a: OPEN, UPSERT_STATE, ACKNOWLEDGE; b: OPEN, UPSERT_STATE, CLOSE; c: OPEN, UPSERT_STATE
		equal(t, "total", all.Pagination.TotalSize, int64(8))
		equal(t, "items", len(all.Items), 8)
		equal(t, "no next page", all.Pagination.NextPageToken, "")
		equal(t, "newest first", all.Items[0].event(t).IncidentEventType, "INCIDENT_EVENT_TYPE_CLOSE")
		equal(t, "then", all.Items[1].event(t).IncidentEventType, "INCIDENT_EVENT_TYPE_ACKNOWLEDGE")
		for i, it := range all.Items {
			e := it.event(t)
			equal(t, "key is the event id", it.PlatformEventKey, e.ID)
			if i > 0 && it.PlatformEventTimestamp.After(all.Items[i-1].PlatformEventTimestamp) {
				t.Fatalf("item %d is newer than item %d", i, i-1)
			}
			var doc map[string]json.RawMessage
			_ = json.Unmarshal(it.IncidentEvent, &doc)
			bodies, originators := 0, 0
			for _, k := range []string{"snoozeIndicator", "assignment", "unassign", "upsertState", "acknowledge", "close"} {
				if _, ok := doc[k]; ok {
					bodies++
				}
			}
			for _, k := range []string{"administrativeEvent", "operationalEvent"} {
				if _, ok := doc[k]; ok {
					originators++
				}
			}
			if bodies != 1 || originators != 1 {
				t.Fatalf("event %s has %d bodies and %d originators, want 1 and 1", it.IncidentEvent, bodies, originators)
			}
			if e.IncidentEventType == "INCIDENT_EVENT_TYPE_OPEN" {
				equal(t, "OPEN state", e.UpsertState.StateType, "UPSERT_INCIDENT_STATE_TYPE_TRIGGERED")
			}
			if it.Metadata == nil {
				t.Fatalf("item %d has no metadata", i)
			}
		}
		// the metadata is the incident as it is now
		var ack feedItem
		for _, it := range all.Items {
			if it.event(t).IncidentEventType == "INCIDENT_EVENT_TYPE_ACKNOWLEDGE" {
				ack = it
			}
		}
		equal(t, "ack status", ack.Metadata.IncidentStatus, "INCIDENT_STATUS_ACKNOWLEDGED")
		equal(t, "ack state", ack.Metadata.IncidentState, "INCIDENT_STATE_TRIGGERED")
		equal(t, "ack severity", ack.Metadata.IncidentSeverity, "INCIDENT_SEVERITY_ERROR")
		equal(t, "ack name", ack.Metadata.AlertName, "HighLatency")
		equal(t, "ack labels", ack.Metadata.IncidentPermutation["service"], "api")
		equal(t, "ack muted", ack.Metadata.IsMuted != nil && !*ack.Metadata.IsMuted, true)

		asc := feed(t, env, env.RootKey, "order_by[direction]=ORDER_BY_DIRECTION_ASC&order_by[field]=INCIDENT_EVENT_ORDER_BY_FIELD_TYPE_TIMESTAMP_OR_UNSPECIFIED")
		equal(t, "ascending", len(asc.Items), 8)
		for i := range asc.Items {
			equal(t, fmt.Sprintf("ascending item %d", i), asc.Items[i].PlatformEventKey, all.Items[7-i].PlatformEventKey)
		}
		equal(t, "ascending starts with OPEN", asc.Items[0].event(t).IncidentEventType, "INCIDENT_EVENT_TYPE_OPEN")
		equal(t, "dot form", feedKeys(feed(t, env, env.RootKey, "order_by.direction=ORDER_BY_DIRECTION_ASC")), feedKeys(asc))
		equal(t, "count", eventCount(t, env, env.RootKey, ""), "8")
		_ = f
	})
}

// TestEventsFeedFilters applies every field of the filter, to the feed and to its count.
func TestEventsFeedFilters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := loadEventFixture(t, env)
		owner := map[string]string{} // event id → a, b or c
		for name, id := range map[string]string{"a": f.a, "b": f.b, "c": f.c} {
			for _, e := range get(t, env, env.RootKey, id).Events {
				owner[e.ID] = name
			}
		}
		incidentsOf := func(out feedOut) string {
			seen := map[string]bool{}
			var list []string
			for _, it := range out.Items {
				if name := owner[it.PlatformEventKey]; !seen[name] {
					seen[name] = true
					list = append(list, name)
				}
			}
			return strings.Join(sorted(list), "")
		}
		at := func(d time.Duration) string { return url.QueryEscape(f.start.Add(d).Format(time.RFC3339Nano)) }
		for _, tc := range []struct {
			query     string
			incidents string
			events    int
		}{
			{"filter[severity]=INCIDENT_SEVERITY_CRITICAL", "b", 3},
			{"filter[severity]=INCIDENT_SEVERITY_CRITICAL&filter[severity]=INCIDENT_SEVERITY_INFO", "bc", 5},
			{"filter[status]=INCIDENT_STATUS_ACKNOWLEDGED", "a", 3},
			{"filter.status=INCIDENT_STATUS_TRIGGERED", "c", 2},
			{"filter[name]=diskf", "c", 2},
			{"filter[name]=latency", "ab", 6},
			{"filter[contextualLabels][service][contextualLabelValues]=db", "b", 3},
			{"filter[displayLabels][summary][displayLabelValues]=slow", "ac", 5},
			{"filter[labels][metaLabels][0][key]=env&filter[labels][metaLabels][0][value]=staging", "b", 3},
			{"filter[labels][metaLabels][0][key]=env&filter[labels][metaLabels][0][value]=staging&filter[labels][metaLabels][1][key]=team&filter[labels][operator]=FILTER_OPERATOR_AND", "", 0},
			{"filter[labels][metaLabels][0][key]=env&filter[labels][metaLabels][0][value]=staging&filter[labels][metaLabels][1][key]=team", "abc", 8},
			{"filter[isMuted]=true", "", 0},
			{"filter[isMuted]=false", "abc", 8},
			// events written in the first two minutes: the OPEN and UPSERT_STATE of a and b
			{"filter[timestamp][startTime]=" + at(0) + "&filter[timestamp][endTime]=" + at(2*time.Minute), "ab", 4},
			// the acknowledgement alone (written at minute 3)
			{"filter[timestamp][startTime]=" + at(3*time.Minute) + "&filter[timestamp][endTime]=" + at(4*time.Minute), "a", 1},
			{"filter[severity]=INCIDENT_SEVERITY_ERROR&filter[timestamp][startTime]=" + at(4*time.Minute) + "&filter[timestamp][endTime]=" + at(time.Hour), "", 0},
			{`filter={"severity":["INCIDENT_SEVERITY_INFO"]}`, "c", 2},
		} {
			out := feed(t, env, env.RootKey, tc.query)
			equal(t, tc.query+": events", len(out.Items), tc.events)
			equal(t, tc.query+": totalSize", out.Pagination.TotalSize, int64(tc.events))
			equal(t, tc.query+": incidents", incidentsOf(out), tc.incidents)
			equal(t, tc.query+": count", eventCount(t, env, env.RootKey, tc.query), fmt.Sprint(tc.events))
		}
	})
}

func sorted(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestEventsFeedPages walks the feed page by page and checks the page-size bounds (1–1000).
func TestEventsFeedPages(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		loadEventFixture(t, env)
		all := feedKeys(feed(t, env, env.RootKey, ""))
		var walked []string
		query := "pagination[pageSize]=3"
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("too many pages")
			}
			out := feed(t, env, env.RootKey, query)
			equal(t, "totalSize", out.Pagination.TotalSize, int64(8))
			walked = append(walked, feedKeys(out))
			if out.Pagination.NextPageToken == "" {
				break
			}
			query = "pagination[pageSize]=3&pagination[pageToken]=" + url.QueryEscape(out.Pagination.NextPageToken)
		}
		equal(t, "pages", len(walked), 3)
		equal(t, "walked", strings.Join(walked, ","), all)

		equal(t, "largest page", len(feed(t, env, env.RootKey, "pagination.pageSize=1000").Items), 8)
		equal(t, "smallest page", len(feed(t, env, env.RootKey, "pagination.pageSize=1").Items), 1)
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?pagination[pageSize]=1001", env.RootKey, ""), 400, "pagination.pageSize", "1000")
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?pagination[pageSize]=0", env.RootKey, ""), 400, "pagination.pageSize")
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?pagination[pageToken]=abc", env.RootKey, ""), 400, "pagination.pageSize")
		// a token belongs to its query
		first := feed(t, env, env.RootKey, "pagination[pageSize]=3")
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?order_by[direction]=ORDER_BY_DIRECTION_ASC&pagination[pageSize]=3&pagination[pageToken]="+
			url.QueryEscape(first.Pagination.NextPageToken), env.RootKey, ""), 400, "pagination.pageToken")
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?filter[isMuted]=false&pagination[pageSize]=3&pagination[pageToken]="+
			url.QueryEscape(first.Pagination.NextPageToken), env.RootKey, ""), 400, "pagination.pageToken")
	})
}

// TestEventsFeedRefusals names the field and the rule of every refused query value, on the
// feed, its count and the events' filter values.
func TestEventsFeedRefusals(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		loadEventFixture(t, env)
		for _, tc := range []struct{ query, fragment string }{
			{"filter[severity]=NOPE", "filter.severity"},
			{"filter[status]=INCIDENT_STATE_RESOLVED", "filter.status"},
			{"filter[name]=" + strings.Repeat("n", 501), "filter.name"},
			{"filter[isMuted]=maybe", "filter.isMuted"},
			{"filter[labels][operator]=FILTER_OPERATOR_AND", "filter.labels.metaLabels: is required"},
			{"filter[labels][metaLabels][0][key]=k&filter[labels][operator]=XOR", "filter.labels.operator"},
			{"filter[labels][metaLabels][0][key]=" + strings.Repeat("k", 256), "filter.labels.metaLabels[0].key"},
			{"filter[timestamp][startTime]=2024-01-01T00:00:00Z", "filter.timestamp.endTime: is required"},
			{"filter[timestamp][startTime]=yesterday&filter[timestamp][endTime]=2024-01-01T00:00:00Z", "filter.timestamp.startTime"},
			{"filter[contextualLabels][service][contextualLabelValues]=" + strings.Repeat("v", 4097), "filter.contextualLabels"},
			{`filter={"severity":"INCIDENT_SEVERITY_INFO"}`, "filter.severity: must be an array"},
			{`filter={"name":5}`, "filter.name: must be a string"},
		} {
			for _, path := range []string{feedPath, feedCountPath, eventValuesPath} {
				apitest.ExpectError(t, env.JSON(t, "GET", path+"?"+tc.query, env.RootKey, ""), 400, tc.fragment)
			}
		}
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?order_by[field]=NAME", env.RootKey, ""), 400, "order_by.field")
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"?order_by[direction]=UP", env.RootKey, ""), 400, "order_by.direction")
		// bounds at their edges are accepted
		equal(t, "500-character name", len(feed(t, env, env.RootKey, "filter[name]="+strings.Repeat("n", 500)).Items), 0)
		equal(t, "255-character label key", len(feed(t, env, env.RootKey, "filter[labels][metaLabels][0][key]="+strings.Repeat("k", 255)).Items), 0)
	})
}

// TestIncidentByEvent finds, acknowledges and resolves an incident by any of its events, with
// the rules and events of the operations by incident id.
func TestIncidentByEvent(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id, _ := trigger(t, env, alert("by-event"))
		inc := get(t, env, env.RootKey, id)
		openEvent := inc.Events[0].ID
		var out struct {
			Incident incident `json:"incident"`
		}
		decode(t, env.JSON(t, "GET", feedPath+"/"+openEvent, env.RootKey, ""), &out)
		equal(t, "by event", out.Incident.ID, id)
		equal(t, "events", len(out.Incident.Events), 2)
		decode(t, env.JSON(t, "GET", feedPath+"/"+strings.ToUpper(inc.Events[1].ID), env.RootKey, ""), &out)
		equal(t, "by uppercase event id", out.Incident.ID, id)

		decode(t, env.JSON(t, "POST", feedPath+"/"+openEvent+"/acknowledge", env.RootKey, ""), &out)
		equal(t, "acknowledged", out.Incident.Status, "INCIDENT_STATUS_ACKNOWLEDGED")
		equal(t, "ack events", strings.Join(eventTypes(out.Incident), ","), "OPEN,UPSERT_STATE,ACKNOWLEDGE")
		equal(t, "ack actor", out.Incident.Events[2].AdministrativeEvent != nil && strings.HasPrefix(out.Incident.Events[2].AdministrativeEvent.UserID, "apikey:"), true)
		// acknowledging again changes nothing; the new event names the same incident
		ackEvent := out.Incident.Events[2].ID
		decode(t, env.JSON(t, "POST", feedPath+"/"+ackEvent+"/acknowledge", env.RootKey, ""), &out)
		equal(t, "ack twice events", len(out.Incident.Events), 3)

		decode(t, env.JSON(t, "POST", feedPath+"/"+ackEvent+"/resolve", env.RootKey, ""), &out)
		equal(t, "resolved", out.Incident.Status, "INCIDENT_STATUS_RESOLVED")
		equal(t, "resolve events", strings.Join(eventTypes(out.Incident), ","), "OPEN,UPSERT_STATE,ACKNOWLEDGE,UPSERT_STATE")
		equal(t, "resolve body", out.Incident.Events[3].UpsertState.StateType, "UPSERT_INCIDENT_STATE_TYPE_RESOLVED")
		decode(t, env.JSON(t, "POST", feedPath+"/"+openEvent+"/resolve", env.RootKey, ""), &out)
		equal(t, "resolve twice events", len(out.Incident.Events), 4)

		// a resolved incident cannot be acknowledged, and nothing changes
		apitest.ExpectError(t, env.JSON(t, "POST", feedPath+"/"+openEvent+"/acknowledge", env.RootKey, ""), 409, "event_id", id)
		equal(t, "after refusal", len(get(t, env, env.RootKey, id).Events), 4)

		// unknown events, bounds, other teams, permissions
		for _, method := range []string{"GET", "POST acknowledge", "POST resolve"} {
			m, suffix, _ := strings.Cut(method, " ")
			if suffix != "" {
				suffix = "/" + suffix
			}
			apitest.ExpectError(t, env.JSON(t, m, feedPath+"/00000000-0000-4000-8000-000000000000"+suffix, env.RootKey, ""), 404, "event_id")
			apitest.ExpectError(t, env.JSON(t, m, feedPath+"/"+strings.Repeat("e", 64)+suffix, env.RootKey, ""), 404, "event_id")
			apitest.ExpectError(t, env.JSON(t, m, feedPath+"/"+strings.Repeat("e", 65)+suffix, env.RootKey, ""), 400, "event_id")
		}
		_, otherKey := env.MustTeam(t, "other")
		apitest.ExpectError(t, env.JSON(t, "GET", feedPath+"/"+openEvent, otherKey, ""), 404, "event_id")
		apitest.ExpectError(t, env.JSON(t, "POST", feedPath+"/"+openEvent+"/resolve", otherKey, ""), 404, "event_id")
		equal(t, "other team feed", len(feed(t, env, otherKey, "").Items), 0)
		equal(t, "other team count", eventCount(t, env, otherKey, ""), "0")

		second, _ := trigger(t, env, alert("by-event-2"))
		secondOpen := get(t, env, env.RootKey, second).Events[0].ID
		readOnly := env.MustKey(t, env.RootKey, "incidents:Read")
		ackOnly := env.MustKey(t, env.RootKey, "incidents:Acknowledge")
		closeOnly := env.MustKey(t, env.RootKey, "incidents:Close")
		apitest.ExpectError(t, env.JSON(t, "POST", feedPath+"/"+secondOpen+"/acknowledge", readOnly, ""), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", feedPath+"/"+secondOpen+"/resolve", readOnly, ""), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", feedPath+"/"+secondOpen+"/resolve", ackOnly, ""), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", feedPath+"/"+secondOpen+"/acknowledge", closeOnly, ""), 403)
		for _, path := range []string{feedPath + "/" + secondOpen, feedPath, feedCountPath, eventValuesPath} {
			apitest.ExpectError(t, env.JSON(t, "GET", path, ackOnly, ""), 403)
			apitest.ExpectError(t, env.Do(t, "GET", path, "", "", ""), 401)
		}
		apitest.ExpectError(t, env.JSON(t, "POST", filterValuesPath, ackOnly, `{}`), 403)
		equal(t, "refused writes changed nothing", get(t, env, env.RootKey, second).Status, "INCIDENT_STATUS_TRIGGERED")
		decode(t, env.JSON(t, "POST", feedPath+"/"+secondOpen+"/acknowledge", ackOnly, ""), &out)
		equal(t, "ack-only key acknowledges", out.Incident.Status, "INCIDENT_STATUS_ACKNOWLEDGED")
		decode(t, env.JSON(t, "POST", feedPath+"/"+secondOpen+"/resolve", closeOnly, ""), &out)
		equal(t, "close-only key resolves", out.Incident.Status, "INCIDENT_STATUS_RESOLVED")
	})
}

type withCount struct {
	Count int64 `json:"count"`
}

type filterValuesOut struct {
	FiltersValues struct {
		AssigneeWithCount []struct {
			Assignee string `json:"assignee"`
			withCount
		} `json:"assigneeWithCount"`
		StatusWithCount []struct {
			Status string `json:"status"`
			withCount
		} `json:"statusWithCount"`
		StateWithCount []struct {
			State string `json:"state"`
			withCount
		} `json:"stateWithCount"`
		SeverityWithCount []struct {
			Severity string `json:"severity"`
			withCount
		} `json:"severityWithCount"`
		ContextualLabels map[string]struct {
			ValuesWithCount []struct {
				ContextualLabelValue string `json:"contextualLabelValue"`
				withCount
			} `json:"valuesWithCount"`
		} `json:"contextualLabels"`
		DisplayLabels map[string]struct {
			ValuesWithCount []struct {
				DisplayLabelValue string `json:"displayLabelValue"`
				withCount
			} `json:"valuesWithCount"`
		} `json:"displayLabels"`
		MetaLabelsWithCount []struct {
			MetaLabel metaLabel `json:"metaLabel"`
			withCount
		} `json:"metaLabelsWithCount"`
		MetaLabelsOp string `json:"metaLabelsOp"`
	} `json:"filtersValues"`
}

// summary writes a filter-values answer on one line: field=value:count, in the answer's order
// (labels by key).
func (o filterValuesOut) summary() string {
	v := o.FiltersValues
	var parts []string
	for _, x := range v.SeverityWithCount {
		parts = append(parts, fmt.Sprintf("sev=%s:%d", strings.TrimPrefix(x.Severity, "INCIDENT_SEVERITY_"), x.Count))
	}
	for _, x := range v.StateWithCount {
		parts = append(parts, fmt.Sprintf("state=%s:%d", strings.TrimPrefix(x.State, "INCIDENT_STATE_"), x.Count))
	}
	for _, x := range v.StatusWithCount {
		parts = append(parts, fmt.Sprintf("status=%s:%d", strings.TrimPrefix(x.Status, "INCIDENT_STATUS_"), x.Count))
	}
	for _, x := range v.AssigneeWithCount {
		parts = append(parts, fmt.Sprintf("assignee=%s:%d", x.Assignee, x.Count))
	}
	for _, x := range v.MetaLabelsWithCount {
		parts = append(parts, fmt.Sprintf("meta=%s/%s:%d", x.MetaLabel.Key, x.MetaLabel.Value, x.Count))
	}
	var keys []string
	for k := range v.ContextualLabels {
		keys = append(keys, k)
	}
	for _, k := range sorted(keys) {
		for _, x := range v.ContextualLabels[k].ValuesWithCount {
			parts = append(parts, fmt.Sprintf("ctx.%s=%s:%d", k, x.ContextualLabelValue, x.Count))
		}
	}
	keys = nil
	for k := range v.DisplayLabels {
		keys = append(keys, k)
	}
	for _, k := range sorted(keys) {
		for _, x := range v.DisplayLabels[k].ValuesWithCount {
			parts = append(parts, fmt.Sprintf("disp.%s=%s:%d", k, x.DisplayLabelValue, x.Count))
		}
	}
	return strings.Join(parts, " ") + " op=" + v.MetaLabelsOp
}

// TestFilterValues counts the incidents per value of each field, for the incident filter and
// for the events filter.
func TestFilterValues(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := loadEventFixture(t, env)
		decode(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+f.a+`","`+f.c+`"],"assignedTo":{"userId":"amy"}}`), &incidentsOut{})
		values := func(body string) string {
			t.Helper()
			var out filterValuesOut
			decode(t, env.JSON(t, "POST", filterValuesPath, env.RootKey, body), &out)
			return out.summary()
		}
		everything := "sev=INFO:1 sev=ERROR:1 sev=CRITICAL:1 state=TRIGGERED:2 state=RESOLVED:1 " +
			"status=TRIGGERED:1 status=ACKNOWLEDGED:1 status=RESOLVED:1 assignee=amy:2 " +
			"meta=env/prod:2 meta=team/core:2 meta=env/staging:1 " +
			"ctx.alertname=HighLatency:3 ctx.service=api:2 ctx.service=db:1 disp.summary=slow:2 disp.summary=very slow:1 op=FILTER_OPERATOR_OR_OR_UNSPECIFIED"
		equal(t, "all", values(`{}`), everything)
		equal(t, "no body", values(``), everything)
		equal(t, "open ones", values(`{"filter":{"state":["INCIDENT_STATE_TRIGGERED"],"metaLabelsOp":"FILTER_OPERATOR_AND"}}`),
			"sev=INFO:1 sev=ERROR:1 state=TRIGGERED:2 status=TRIGGERED:1 status=ACKNOWLEDGED:1 assignee=amy:2 "+
				"meta=env/prod:2 meta=team/core:2 ctx.alertname=HighLatency:2 ctx.service=api:2 disp.summary=slow:2 op=FILTER_OPERATOR_AND")
		equal(t, "nothing", values(`{"filter":{"applicationName":["nope"]}}`), " op=FILTER_OPERATOR_OR_OR_UNSPECIFIED")
		apitest.ExpectError(t, env.JSON(t, "POST", filterValuesPath, env.RootKey, `{"filter":{"severity":["NOPE"]}}`), 400, "filter.severity")
		apitest.ExpectError(t, env.JSON(t, "POST", filterValuesPath, env.RootKey, `{"filter":{"searchQuery":{"query":"x"}}}`), 400, "filter.searchQuery")

		events := func(query string) string {
			t.Helper()
			var out filterValuesOut
			path := eventValuesPath
			if query != "" {
				path += "?" + query
			}
			decode(t, env.JSON(t, "GET", path, env.RootKey, ""), &out)
			return out.summary()
		}
		equal(t, "events: all", events(""), everything)
		at := func(d time.Duration) string { return url.QueryEscape(f.start.Add(d).Format(time.RFC3339Nano)) }
		// the close of b was written at minute 4
		equal(t, "events: in a range", events("filter[timestamp][startTime]="+at(4*time.Minute)+"&filter[timestamp][endTime]="+at(5*time.Minute)),
			"sev=CRITICAL:1 state=RESOLVED:1 status=RESOLVED:1 meta=env/staging:1 ctx.alertname=HighLatency:1 ctx.service=db:1 disp.summary=very slow:1 op=FILTER_OPERATOR_OR_OR_UNSPECIFIED")
		equal(t, "events: labels operator", events("filter[labels][metaLabels][0][key]=team&filter[labels][operator]=FILTER_OPERATOR_AND&filter[name]=disk"),
			"sev=INFO:1 state=TRIGGERED:1 status=TRIGGERED:1 assignee=amy:1 meta=env/prod:1 meta=team/core:1 ctx.alertname=HighLatency:1 ctx.service=api:1 disp.summary=slow:1 op=FILTER_OPERATOR_AND")

		_, otherKey := env.MustTeam(t, "other")
		var other filterValuesOut
		decode(t, env.JSON(t, "POST", filterValuesPath, otherKey, `{}`), &other)
		equal(t, "other team", other.summary(), " op=FILTER_OPERATOR_OR_OR_UNSPECIFIED")
		raw := env.JSON(t, "POST", filterValuesPath, otherKey, `{}`)
		equal(t, "empty lists are present", strings.Contains(string(raw.Body), `"assigneeWithCount":[]`) && strings.Contains(string(raw.Body), `"contextualLabels":{}`), true)
	})
}

// TestOpenEventMigration: migration 0018 gives OPEN events stored without an event body the
// state the incident opened in, and leaves every other event as it was.
func TestOpenEventMigration(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id, _ := trigger(t, env, alert("legacy"))
		decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(id)), &incidentsOut{})
		before := get(t, env, env.RootKey, id)
		strip := `UPDATE incident_events SET document = json_remove(document, '$.upsertState') WHERE id = $1`
		if env.Engine == "postgres" {
			strip = `UPDATE incident_events SET document = (document::jsonb - 'upsertState')::text WHERE id = $1`
		}
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			if _, err := tx.ExecContext(context.Background(), strip, before.Events[0].ID); err != nil {
				return err
			}
			_, err := tx.ExecContext(context.Background(), `DELETE FROM schema_migrations WHERE version = 18`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// Read the stripped row directly: served, it would break the public event one-of.
		var stored string
		if err := env.DB.Read().QueryRowContext(context.Background(),
			`SELECT document FROM incident_events WHERE id = $1`, before.Events[0].ID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		equal(t, "stripped", strings.Contains(stored, "upsertState"), false)
		env.Restart(t)
		after := get(t, env, env.RootKey, id)
		equal(t, "events", strings.Join(eventTypes(after), ","), "OPEN,UPSERT_STATE,ACKNOWLEDGE")
		equal(t, "OPEN body", after.Events[0].UpsertState != nil && after.Events[0].UpsertState.StateType == "UPSERT_INCIDENT_STATE_TYPE_TRIGGERED", true)
		equal(t, "OPEN originator", after.Events[0].OperationalEvent.SystemName, "receiver-1")
		equal(t, "OPEN id", after.Events[0].ID, before.Events[0].ID)
		for i := 1; i < 3; i++ {
			a, _ := json.Marshal(after.Events[i])
			b, _ := json.Marshal(before.Events[i])
			equal(t, fmt.Sprintf("event %d unchanged", i), string(a), string(b))
		}
	})
}
