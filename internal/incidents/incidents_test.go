package incidents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	getPath    = "/mgmt/openapi/3/incidents/incidents/v1/"
	aggPath    = "/mgmt/openapi/4/incidents/aggregations/v1"
	listPath   = "/mgmt/openapi/5/incidents/incidents/v1"
	ackPath    = listPath + "/all/acknowledge"
	resolvePth = listPath + "/all/resolve"
	closePath  = listPath + "/all/closed"
	assignPath = listPath + "/all/by-user"
)

// ------------------------------------------------------------------------------ answer bodies

type user struct {
	UserID string `json:"userId"`
}

type assignment struct {
	AssignedTo user `json:"assignedTo"`
	AssignedBy user `json:"assignedBy"`
}

type event struct {
	ID                  string `json:"id"`
	IncidentEventType   string `json:"incidentEventType"`
	OriginatorType      string `json:"originatorType"`
	AdministrativeEvent *struct {
		UserID string `json:"userId"`
	} `json:"administrativeEvent"`
	OperationalEvent *struct {
		SystemName string `json:"systemName"`
	} `json:"operationalEvent"`
	Acknowledge *struct {
		AcknowledgedBy user `json:"acknowledgedBy"`
	} `json:"acknowledge"`
	Assignment *struct {
		Assignment assignment `json:"assignment"`
	} `json:"assignment"`
	Unassign *struct{} `json:"unassign"`
	Close    *struct {
		ClosedBy user `json:"closedBy"`
	} `json:"close"`
	UpsertState *struct {
		StateType string `json:"stateType"`
		IsMuted   *bool  `json:"isMuted"`
		Payload   struct {
			PlatformEventKey string `json:"platformEventKey"`
		} `json:"payload"`
	} `json:"upsertState"`
}

type metaLabel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type incident struct {
	ID                  string            `json:"id"`
	Name                string            `json:"name"`
	Description         string            `json:"description"`
	State               string            `json:"state"`
	Status              string            `json:"status"`
	Severity            string            `json:"severity"`
	IsMuted             *bool             `json:"isMuted"`
	Assignments         []assignment      `json:"assignments"`
	ContextualLabels    map[string]string `json:"contextualLabels"`
	DisplayLabels       map[string]string `json:"displayLabels"`
	MetaLabels          []metaLabel       `json:"metaLabels"`
	Events              []event           `json:"events"`
	CreatedAt           time.Time         `json:"createdAt"`
	ClosedAt            *time.Time        `json:"closedAt"`
	LastStateUpdateTime time.Time         `json:"lastStateUpdateTime"`
	LastStateUpdateKey  string            `json:"lastStateUpdateKey"`
	Duration            string            `json:"duration"`
}

type incidentsOut struct {
	Incidents []incident `json:"incidents"`
}

type pageOut struct {
	TotalSize     int64  `json:"totalSize"`
	NextPageToken string `json:"nextPageToken"`
}

type listOut struct {
	Incidents  []incident `json:"incidents"`
	Pagination pageOut    `json:"pagination"`
}

type count struct {
	Count      int64      `json:"count"`
	Severity   string     `json:"severity"`
	State      string     `json:"state"`
	Status     string     `json:"status"`
	AssignedTo *user      `json:"assignedTo"`
	MetaLabel  *metaLabel `json:"metaLabel"`
}

type groupByValue struct {
	IncidentField    map[string]string `json:"incidentField"`
	ContextualLabels *struct {
		FieldName  string `json:"fieldName"`
		FieldValue string `json:"fieldValue"`
	} `json:"contextualLabels"`
}

type agg struct {
	GroupBysValue       []groupByValue `json:"groupBysValue"`
	AggSeverityCount    []count        `json:"aggSeverityCount"`
	AggStateCount       []count        `json:"aggStateCount"`
	AggStatusCount      []count        `json:"aggStatusCount"`
	AggAssignmentsCount []count        `json:"aggAssignmentsCount"`
	AggMetaLabelsCount  []count        `json:"aggMetaLabelsCount"`
	AllValuesCount      int64          `json:"allValuesCount"`
	FirstCreatedAt      *time.Time     `json:"firstCreatedAt"`
	LastClosedAt        *time.Time     `json:"lastClosedAt"`
	LastStateUpdateTime *time.Time     `json:"lastStateUpdateTime"`
	ListIncidentsID     []string       `json:"listIncidentsId"`
}

type aggOut struct {
	IncidentAggs []agg   `json:"incidentAggs"`
	Pagination   pageOut `json:"pagination"`
}

// ------------------------------------------------------------------------------------ helpers

func decode(t *testing.T, res apitest.Response, out any) {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("status %d, want 200; body %s", res.Status, res.Body)
	}
	reflect.ValueOf(out).Elem().SetZero() // fields absent from the answer must not keep old values
	if err := json.Unmarshal(res.Body, out); err != nil {
		t.Fatalf("decode %s: %v", res.Body, err)
	}
}

// alert is a firing alert of team 1 with sensible defaults.
func alert(fp string) incidents.Alert {
	return incidents.Alert{
		TeamID:      1,
		CaseID:      "case-1",
		Fingerprint: fp,
		StartsAt:    time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
		Name:        "HighLatency",
		Description: "p99 above 1s",
		Severity:    oas.IncidentSeverityINCIDENTSEVERITYERROR,
		Labels:      map[string]string{"alertname": "HighLatency", "service": "api"},
		Annotations: map[string]string{"summary": "slow"},
		MetaLabels: []oas.MetaLabel{
			{Key: oas.NewOptString("team"), Value: oas.NewOptString("core")},
			{Key: oas.NewOptString("env"), Value: oas.NewOptString("prod")},
		},
		ApplicationName: "shop",
		SubsystemName:   "checkout",
		SystemName:      "receiver-1",
	}
}

func trigger(t *testing.T, env *apitest.Env, a incidents.Alert) (string, bool) {
	t.Helper()
	var id string
	var created bool
	err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
		var err error
		id, created, err = incidents.Trigger(context.Background(), tx, a)
		return err
	})
	if err != nil {
		t.Fatalf("trigger %s: %v", a.Fingerprint, err)
	}
	return id, created
}

func resolveFromSource(t *testing.T, env *apitest.Env, a incidents.Alert, endsAt time.Time) (string, bool, bool) {
	t.Helper()
	var id string
	var found, changed bool
	err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
		var err error
		id, found, changed, err = incidents.ResolveFromSource(context.Background(), tx, a.TeamID, a.Fingerprint, a.StartsAt, endsAt, a.SystemName)
		return err
	})
	if err != nil {
		t.Fatalf("resolve %s: %v", a.Fingerprint, err)
	}
	return id, found, changed
}

func get(t *testing.T, env *apitest.Env, key, id string) incident {
	t.Helper()
	var out struct {
		Incident incident `json:"incident"`
	}
	decode(t, env.JSON(t, "GET", getPath+id, key, ""), &out)
	return out.Incident
}

func ids(in ...string) string {
	b, _ := json.Marshal(map[string]any{"incidentIds": in})
	return string(b)
}

func eventTypes(inc incident) []string {
	var out []string
	for _, e := range inc.Events {
		out = append(out, strings.TrimPrefix(e.IncidentEventType, "INCIDENT_EVENT_TYPE_"))
	}
	return out
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// -------------------------------------------------------------------------------------- tests

func TestTriggerAndGet(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := alert("fp-1")
		id, created := trigger(t, env, a)
		equal(t, "created", created, true)
		if !uuidPattern.MatchString(id) {
			t.Fatalf("id %q is not a lowercase UUID", id)
		}
		again, created := trigger(t, env, a)
		equal(t, "created again", created, false)
		equal(t, "id again", again, id)

		inc := get(t, env, env.RootKey, id)
		equal(t, "id", inc.ID, id)
		equal(t, "name", inc.Name, "HighLatency")
		equal(t, "description", inc.Description, "p99 above 1s")
		equal(t, "state", inc.State, "INCIDENT_STATE_TRIGGERED")
		equal(t, "status", inc.Status, "INCIDENT_STATUS_TRIGGERED")
		equal(t, "severity", inc.Severity, "INCIDENT_SEVERITY_ERROR")
		if inc.IsMuted == nil || *inc.IsMuted {
			t.Fatalf("isMuted = %v, want false", inc.IsMuted)
		}
		equal(t, "assignments", len(inc.Assignments), 0)
		equal(t, "contextual service", inc.ContextualLabels["service"], "api")
		equal(t, "display summary", inc.DisplayLabels["summary"], "slow")
		equal(t, "meta labels", fmt.Sprint(inc.MetaLabels), "[{env prod} {team core}]")
		equal(t, "closedAt", inc.ClosedAt == nil, true)
		equal(t, "lastStateUpdateKey", inc.LastStateUpdateKey, "alertmanager:fp-1:firing")
		if !regexp.MustCompile(`^\d+s$`).MatchString(inc.Duration) {
			t.Fatalf("duration %q", inc.Duration)
		}
		equal(t, "events", strings.Join(eventTypes(inc), ","), "OPEN,UPSERT_STATE")
		for _, e := range inc.Events {
			equal(t, "originator", e.OriginatorType, "ORIGINATOR_TYPE_OPERATIONAL")
			equal(t, "system name", e.OperationalEvent.SystemName, "receiver-1")
			if e.ID == "" {
				t.Fatal("event without id")
			}
		}
		equal(t, "upsert state", inc.Events[1].UpsertState.StateType, "UPSERT_INCIDENT_STATE_TYPE_TRIGGERED")
		equal(t, "event key", inc.Events[1].UpsertState.Payload.PlatformEventKey, "fp-1")

		// uppercase hex is the same incident
		equal(t, "uppercase", get(t, env, env.RootKey, strings.ToUpper(id)).ID, id)

		// a nameless alert is named by its fingerprint
		b := alert("fp-nameless")
		b.Name = ""
		nid, _ := trigger(t, env, b)
		equal(t, "nameless", get(t, env, env.RootKey, nid).Name, "fp-nameless")

		// names are at most 500 characters: a longer alert name is cut
		long := alert("fp-long-name")
		long.Name = strings.Repeat("é", 501)
		lid, _ := trigger(t, env, long)
		equal(t, "long name", get(t, env, env.RootKey, lid).Name, strings.Repeat("é", 500))
		long500 := alert("fp-500-name")
		long500.Name = strings.Repeat("n", 500)
		lid, _ = trigger(t, env, long500)
		equal(t, "500-character name", get(t, env, env.RootKey, lid).Name, long500.Name)

		// the events operation answers the same events
		var evs struct {
			IncidentEvents []event `json:"incidentEvents"`
		}
		decode(t, env.JSON(t, "GET", listPath+"/"+strings.ToUpper(id)+"/events", env.RootKey, ""), &evs)
		equal(t, "events op", len(evs.IncidentEvents), 2)
		apitest.ExpectError(t, env.JSON(t, "GET", listPath+"/00000000-0000-0000-0000-000000000000/events", env.RootKey, ""), 404, "no incident")
	})
}

func TestGetIncidentErrors(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id, _ := trigger(t, env, alert("fp-1"))
		apitest.ExpectError(t, env.JSON(t, "GET", getPath+"00000000-0000-0000-0000-000000000000", env.RootKey, ""), 404, "no incident")
		apitest.ExpectError(t, env.JSON(t, "GET", getPath+id[:35], env.RootKey, ""), 400, "id")
		apitest.ExpectError(t, env.JSON(t, "GET", getPath+id+"0", env.RootKey, ""), 400, "id")
		apitest.ExpectError(t, env.JSON(t, "GET", getPath+"zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", env.RootKey, ""), 400, "id")

		// another team sees nothing
		_, otherKey := env.MustTeam(t, "other")
		apitest.ExpectError(t, env.JSON(t, "GET", getPath+id, otherKey, ""), 404, "no incident")
		apitest.ExpectError(t, env.JSON(t, "GET", listPath+"/"+id+"/events", otherKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, "POST", ackPath, otherKey, ids(id)), 404, id)
		var batch struct {
			Incidents   map[string]incident `json:"incidents"`
			NotFoundIds []string            `json:"notFoundIds"`
		}
		decode(t, env.JSON(t, "GET", listPath+"?ids="+id, otherKey, ""), &batch)
		equal(t, "other team batch", len(batch.Incidents), 0)
		var list listOut
		decode(t, env.JSON(t, "POST", listPath, otherKey, `{}`), &list)
		equal(t, "other team list", len(list.Incidents), 0)
		var aggs aggOut
		decode(t, env.JSON(t, "GET", aggPath, otherKey, ""), &aggs)
		equal(t, "other team aggs", len(aggs.IncidentAggs), 0)

		// permissions
		noRead := env.MustKey(t, env.RootKey, "incidents:Acknowledge")
		apitest.ExpectError(t, env.JSON(t, "GET", getPath+id, noRead, ""), 403)
		apitest.ExpectError(t, env.JSON(t, "GET", aggPath, noRead, ""), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", listPath, noRead, `{}`), 403)
		readOnly := env.MustKey(t, env.RootKey, "incidents:Read")
		get(t, env, readOnly, id)
		apitest.ExpectError(t, env.JSON(t, "POST", ackPath, readOnly, ids(id)), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", closePath, readOnly, ids(id)), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", resolvePth, readOnly, ids(id)), 403)
		apitest.ExpectError(t, env.JSON(t, "POST", assignPath, readOnly, `{"incidentIds":["`+id+`"],"assignedTo":{"userId":"u"}}`), 403)
		apitest.ExpectError(t, env.JSON(t, "DELETE", assignPath+"?incident_ids="+id, readOnly, ""), 403)
		ack := env.MustKey(t, env.RootKey, "incidents:Acknowledge")
		var out incidentsOut
		decode(t, env.JSON(t, "POST", ackPath, ack, ids(id)), &out)
		closer := env.MustKey(t, env.RootKey, "incidents:Close")
		decode(t, env.JSON(t, "POST", resolvePth, closer, ids(id)), &out)
		assigner := env.MustKey(t, env.RootKey, "incidents:Assign")
		decode(t, env.JSON(t, "DELETE", assignPath+"?incident_ids="+id, assigner, ""), &out)
	})
}

func TestLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a, _ := trigger(t, env, alert("fp-a"))
		b, _ := trigger(t, env, alert("fp-b"))
		c, _ := trigger(t, env, alert("fp-c"))
		me := "apikey:"

		// acknowledge, twice: one event
		var out incidentsOut
		decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(strings.ToUpper(a), a)), &out)
		equal(t, "ack answers", len(out.Incidents), 1)
		equal(t, "ack status", out.Incidents[0].Status, "INCIDENT_STATUS_ACKNOWLEDGED")
		equal(t, "ack state", out.Incidents[0].State, "INCIDENT_STATE_TRIGGERED")
		decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(a)), &out)
		inc := get(t, env, env.RootKey, a)
		equal(t, "events after ack", strings.Join(eventTypes(inc), ","), "OPEN,UPSERT_STATE,ACKNOWLEDGE")
		ev := inc.Events[2]
		equal(t, "ack originator", ev.OriginatorType, "ORIGINATOR_TYPE_ADMINISTRATIVE")
		if !strings.HasPrefix(ev.AdministrativeEvent.UserID, me) || ev.Acknowledge.AcknowledgedBy.UserID != ev.AdministrativeEvent.UserID {
			t.Fatalf("ack event users: %+v", ev)
		}

		// resolve b: status only; then acknowledging [a, b] is a 409 that changes nothing
		decode(t, env.JSON(t, "POST", resolvePth, env.RootKey, ids(b)), &out)
		equal(t, "resolve status", out.Incidents[0].Status, "INCIDENT_STATUS_RESOLVED")
		equal(t, "resolve state", out.Incidents[0].State, "INCIDENT_STATE_TRIGGERED")
		equal(t, "resolve closedAt", out.Incidents[0].ClosedAt == nil, true)
		equal(t, "resolve event", out.Incidents[0].Events[2].UpsertState.StateType, "UPSERT_INCIDENT_STATE_TYPE_RESOLVED")
		decode(t, env.JSON(t, "POST", resolvePth, env.RootKey, ids(b)), &out)
		equal(t, "resolve twice events", len(out.Incidents[0].Events), 3)
		apitest.ExpectError(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(c, b)), 409, b, "resolved")
		equal(t, "c untouched by failed batch", get(t, env, env.RootKey, c).Status, "INCIDENT_STATUS_TRIGGERED")

		// unknown id: 404 naming it, nothing changes
		missing := "0000000a-0000-0000-0000-000000000000"
		apitest.ExpectError(t, env.JSON(t, "POST", closePath, env.RootKey, ids(c, missing)), 404, missing)
		equal(t, "c not closed", get(t, env, env.RootKey, c).ClosedAt == nil, true)
		apitest.ExpectError(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+c+`","`+missing+`"],"assignedTo":{"userId":"bob"}}`), 404, missing)
		equal(t, "c not assigned", len(get(t, env, env.RootKey, c).Assignments), 0)

		// close c, twice: one CLOSE event
		decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(c)), &out)
		closed := out.Incidents[0]
		equal(t, "close state", closed.State, "INCIDENT_STATE_RESOLVED")
		equal(t, "close status", closed.Status, "INCIDENT_STATUS_RESOLVED")
		if closed.ClosedAt == nil {
			t.Fatal("closedAt not set")
		}
		decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(c)), &out)
		equal(t, "close twice", strings.Join(eventTypes(out.Incidents[0]), ","), "OPEN,UPSERT_STATE,CLOSE")
		equal(t, "closedAt kept", out.Incidents[0].ClosedAt.Equal(*closed.ClosedAt), true)
		equal(t, "closedBy", out.Incidents[0].Events[2].Close.ClosedBy.UserID, out.Incidents[0].Events[2].AdministrativeEvent.UserID)

		// assign in any state, then unassign (twice: one event)
		decode(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+c+`","`+a+`"],"assignedTo":{"userId":"bob"}}`), &out)
		equal(t, "assigned", len(out.Incidents), 2)
		for _, inc := range out.Incidents {
			equal(t, "assignee", inc.Assignments[0].AssignedTo.UserID, "bob")
			if !strings.HasPrefix(inc.Assignments[0].AssignedBy.UserID, me) {
				t.Fatalf("assignedBy %q", inc.Assignments[0].AssignedBy.UserID)
			}
			last := inc.Events[len(inc.Events)-1]
			equal(t, "assign event", last.IncidentEventType, "INCIDENT_EVENT_TYPE_ASSIGN")
			equal(t, "assign event to", last.Assignment.Assignment.AssignedTo.UserID, "bob")
		}
		decode(t, env.JSON(t, "DELETE", assignPath+"?incident_ids="+c+"&incident_ids="+a, env.RootKey, ""), &out)
		decode(t, env.JSON(t, "DELETE", assignPath+"?incident_ids="+c, env.RootKey, ""), &out)
		inc = out.Incidents[0]
		equal(t, "unassigned", len(inc.Assignments), 0)
		equal(t, "unassign events", strings.Join(eventTypes(inc), ","), "OPEN,UPSERT_STATE,CLOSE,ASSIGN,UNASSIGN")
		if inc.Events[4].Unassign == nil {
			t.Fatal("unassign event without its unassign object")
		}
		apitest.ExpectError(t, env.JSON(t, "DELETE", assignPath+"?incident_ids="+missing, env.RootKey, ""), 404, missing)

		// bounds of the id lists
		apitest.ExpectError(t, env.JSON(t, "POST", ackPath, env.RootKey, `{"incidentIds":[]}`), 400, "incidentIds")
		apitest.ExpectError(t, env.JSON(t, "POST", ackPath, env.RootKey, `{"incidentIds":["abc"]}`), 400, "incidentIds")
	})
}

func TestResolveFromSource(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := alert("fp-r")
		id, _ := trigger(t, env, a)
		var open int
		_ = env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			var err error
			open, err = incidents.OpenInCase(context.Background(), tx, 1, "case-1")
			return err
		})
		equal(t, "open in case", open, 1)
		ends := time.Now().UTC().Truncate(time.Second)
		gotID, found, changed := resolveFromSource(t, env, a, ends)
		equal(t, "id", gotID, id)
		equal(t, "found", found, true)
		equal(t, "changed", changed, true)
		_, _, changed = resolveFromSource(t, env, a, ends)
		equal(t, "changed again", changed, false)
		b := alert("fp-none")
		_, found, _ = resolveFromSource(t, env, b, ends)
		equal(t, "found unknown", found, false)
		inc := get(t, env, env.RootKey, id)
		equal(t, "state", inc.State, "INCIDENT_STATE_RESOLVED")
		equal(t, "status", inc.Status, "INCIDENT_STATUS_RESOLVED")
		equal(t, "closedAt", inc.ClosedAt.Equal(ends), true)
		equal(t, "events", strings.Join(eventTypes(inc), ","), "OPEN,UPSERT_STATE,UPSERT_STATE")
		equal(t, "resolved event", inc.Events[2].UpsertState.StateType, "UPSERT_INCIDENT_STATE_TYPE_RESOLVED")
		equal(t, "resolved originator", inc.Events[2].OriginatorType, "ORIGINATOR_TYPE_OPERATIONAL")
		_ = env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			var err error
			open, err = incidents.OpenInCase(context.Background(), tx, 1, "case-1")
			return err
		})
		equal(t, "open in case after", open, 0)
		// closed by its source: acknowledge is refused, close changes nothing
		apitest.ExpectError(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(id)), 409, "resolved")
		var out incidentsOut
		decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(id)), &out)
		equal(t, "no close event", len(out.Incidents[0].Events), 3)
	})
}

func TestBatchGetAndList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var all []string
		for i := 0; i < 5; i++ {
			id, _ := trigger(t, env, alert(fmt.Sprintf("fp-%d", i)))
			all = append(all, id)
		}
		missing := "0000000b-0000-0000-0000-000000000000"
		var batch struct {
			Incidents   map[string]incident `json:"incidents"`
			NotFoundIds []string            `json:"notFoundIds"`
		}
		decode(t, env.JSON(t, "GET", listPath+"?ids="+all[0]+"&ids="+strings.ToUpper(all[1])+"&ids="+all[0]+"&ids="+missing, env.RootKey, ""), &batch)
		equal(t, "found", len(batch.Incidents), 2)
		equal(t, "found 0", batch.Incidents[all[0]].ID, all[0])
		equal(t, "found 1", batch.Incidents[all[1]].ID, all[1])
		equal(t, "not found", fmt.Sprint(batch.NotFoundIds), "["+missing+"]")
		batch.Incidents = nil
		decode(t, env.JSON(t, "GET", listPath+"?ids="+all[2], env.RootKey, ""), &batch)
		equal(t, "one id", len(batch.Incidents), 1)
		apitest.ExpectError(t, env.JSON(t, "GET", listPath, env.RootKey, ""), 400, "ids")
		many := url.Values{}
		for i := 0; i < 10001; i++ {
			many.Add("ids", missing)
		}
		// Go's URL parser refuses more than 10000 query parameters before ogen sees them.
		apitest.ExpectError(t, env.JSON(t, "GET", listPath+"?"+many.Encode(), env.RootKey, ""), 400)
		many.Del("ids")
		for i := 0; i < 10000; i++ {
			many.Add("ids", fmt.Sprintf("%08x-0000-0000-0000-000000000000", i))
		}
		many.Set("ids", all[3])
		for i := 1; i < 10000; i++ {
			many.Add("ids", fmt.Sprintf("%08x-0000-0000-0000-000000000000", i))
		}
		batch.Incidents = nil
		decode(t, env.JSON(t, "GET", listPath+"?"+many.Encode(), env.RootKey, ""), &batch)
		equal(t, "10000 ids found", len(batch.Incidents), 1)
		equal(t, "10000 ids not found", len(batch.NotFoundIds), 9999)

		// list: newest first by default (same created time → id descending), paged
		var list listOut
		decode(t, env.JSON(t, "POST", listPath, env.RootKey, `{"pagination":{"pageSize":2}}`), &list)
		equal(t, "total", list.Pagination.TotalSize, int64(5))
		equal(t, "page size", len(list.Incidents), 2)
		var seen []string
		token := list.Pagination.NextPageToken
		for _, inc := range list.Incidents {
			seen = append(seen, inc.ID)
		}
		for token != "" {
			decode(t, env.JSON(t, "POST", listPath, env.RootKey, `{"pagination":{"pageSize":2,"pageToken":"`+token+`"}}`), &list)
			for _, inc := range list.Incidents {
				seen = append(seen, inc.ID)
			}
			token = list.Pagination.NextPageToken
		}
		equal(t, "all listed", len(seen), 5)
		apitest.ExpectError(t, env.JSON(t, "POST", listPath, env.RootKey, `{"pagination":{"pageSize":2,"pageToken":"bm9wZQ"}}`), 400, "pagination.pageToken")
		// filter and order
		decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(all[1])), &incidentsOut{})
		decode(t, env.JSON(t, "POST", listPath, env.RootKey, `{"filter":{"state":["INCIDENT_STATE_RESOLVED"]}}`), &list)
		equal(t, "filtered", len(list.Incidents), 1)
		equal(t, "filtered id", list.Incidents[0].ID, all[1])
		decode(t, env.JSON(t, "POST", listPath, env.RootKey, `{"orderBys":[{"incidentField":"INCIDENTS_FIELDS_ID","direction":"ORDER_BY_DIRECTION_ASC"}]}`), &list)
		sorted := append([]string(nil), all...)
		sort.Strings(sorted)
		for i, inc := range list.Incidents {
			equal(t, "ordered", inc.ID, sorted[i])
		}
		apitest.ExpectError(t, env.JSON(t, "POST", listPath, env.RootKey, `{"orderBys":[{"direction":"ORDER_BY_DIRECTION_ASC"}]}`), 400, "orderBys[0]", "exactly one")
		// Order-bys that carry a statement argument (a label key, the current time) leave the count's
		// arguments alone (PostgreSQL refused the count with a 500).
		for _, ob := range []string{`{"contextualLabel":"nosuchlabel","direction":"ORDER_BY_DIRECTION_ASC"}`, `{"incidentField":"INCIDENTS_FIELDS_DURATION","direction":"ORDER_BY_DIRECTION_DESC"}`} {
			decode(t, env.JSON(t, "POST", listPath, env.RootKey, `{"orderBys":[`+ob+`],"filter":{"state":["INCIDENT_STATE_RESOLVED"]}}`), &list)
			equal(t, "ordered by "+ob, len(list.Incidents), 1)
			equal(t, "ordered by "+ob+" id", list.Incidents[0].ID, all[1])
		}
		// more values than one statement can carry: a 400, not a failure of the database
		labels := map[string]any{}
		for k := 0; k < 31; k++ {
			vals := make([]string, 1000)
			for i := range vals {
				vals[i] = fmt.Sprint(i)
			}
			labels[fmt.Sprintf("k%d", k)] = map[string]any{"contextualLabelValues": vals}
		}
		huge, _ := json.Marshal(map[string]any{"filter": map[string]any{"contextualLabels": labels}})
		apitest.ExpectError(t, env.JSON(t, "POST", listPath, env.RootKey, string(huge)), 400, "filter", "at most 30000")
	})
}
