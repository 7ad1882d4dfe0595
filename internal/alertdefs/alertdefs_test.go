package alertdefs_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	defsPath     = "/mgmt/openapi/latest/alerts/alerts/v3"
	versionsPath = defsPath + "/version-ids/"
)

// alertDef is a definition as answered, its properties kept as JSON to compare with what was sent.
type alertDef struct {
	ID                 string          `json:"id"`
	AlertVersionID     string          `json:"alertVersionId"`
	CreatedTime        string          `json:"createdTime"`
	UpdatedTime        string          `json:"updatedTime"`
	Status             string          `json:"status"`
	AlertDefProperties json.RawMessage `json:"alertDefProperties"`
}

type written struct {
	AlertDef alertDef `json:"alertDef"`
}

const metricProps = `{"name":"Latency","priority":"ALERT_DEF_PRIORITY_P2","enabled":true,` +
	`"type":"ALERT_DEF_TYPE_METRIC_THRESHOLD","metricThreshold":{"metricFilter":{"promql":"sum(rate(http_requests_total[5m]))"},` +
	`"rules":[{"condition":{"threshold":1.5,"forOverPct":50,"ofTheLast":{"metricTimeWindowDynamicDuration":"15m"},` +
	`"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_LESS_THAN"},"override":{"priority":"ALERT_DEF_PRIORITY_P1"}}],` +
	`"missingValues":{"minNonNullValuesPct":10}}}`

func createDef(t *testing.T, env *apitest.Env, key, props string) alertDef {
	t.Helper()
	return apitest.Decode[written](t, env.JSON(t, http.MethodPost, defsPath, key, `{"alertDefProperties":`+props+`}`)).AlertDef
}

// sameJSON fails the test unless a and b are the same JSON value.
func sameJSON(t *testing.T, what string, a, b []byte) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v in %s", what, err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v in %s", what, err, b)
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("%s differ:\n got  %s\n want %s", what, a, b)
	}
}

func TestLifecycleAndVersions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "defs")
		d := createDef(t, env, key, metricProps)
		if d.ID == "" || d.AlertVersionID == "" || d.ID == d.AlertVersionID || d.CreatedTime == "" {
			t.Fatalf("server fields not set: %+v", d)
		}
		sameJSON(t, "created properties", d.AlertDefProperties, []byte(metricProps))

		got := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, key, ""))
		sameJSON(t, "read properties", got.AlertDef.AlertDefProperties, []byte(metricProps))
		if got.AlertDef.AlertVersionID != d.AlertVersionID {
			t.Fatalf("version %s, want %s", got.AlertDef.AlertVersionID, d.AlertVersionID)
		}

		replaced := `{"name":"Errors","priority":"ALERT_DEF_PRIORITY_P3","logsImmediate":{"logsFilter":{"simpleFilter":{"luceneQuery":"level:error"}}}}`
		r := apitest.Decode[written](t, env.JSON(t, http.MethodPut, defsPath, key, `{"id":"`+d.ID+`","alertDefProperties":`+replaced+`}`)).AlertDef
		if r.AlertVersionID == d.AlertVersionID || r.ID != d.ID || r.CreatedTime != d.CreatedTime {
			t.Fatalf("replace: %+v after %+v", r, d)
		}
		// type left out is the block's type, and answered.
		want := `{"name":"Errors","priority":"ALERT_DEF_PRIORITY_P3","type":"ALERT_DEF_TYPE_LOGS_IMMEDIATE_OR_UNSPECIFIED","logsImmediate":{"logsFilter":{"simpleFilter":{"luceneQuery":"level:error"}}}}`
		sameJSON(t, "replaced properties", r.AlertDefProperties, []byte(want))

		old := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, versionsPath+d.AlertVersionID, key, ""))
		sameJSON(t, "first version", old.AlertDef.AlertDefProperties, []byte(metricProps))
		cur := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, versionsPath+r.AlertVersionID, key, ""))
		sameJSON(t, "second version", cur.AlertDef.AlertDefProperties, []byte(want))

		list := apitest.Decode[struct {
			AlertDefs  []alertDef
			Pagination struct{ TotalSize int }
		}](t, env.JSON(t, http.MethodGet, defsPath, key, ""))
		if len(list.AlertDefs) != 1 || list.Pagination.TotalSize != 1 || list.AlertDefs[0].AlertVersionID != r.AlertVersionID {
			t.Fatalf("list: %+v", list)
		}

		if res := env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, key, ""), http.StatusNotFound, "id: no alert definition")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, key, ""), http.StatusNotFound)
		gone := apitest.Decode[struct {
			AlertDef struct {
				AlertDefProperties struct{ Deleted bool }
			}
		}](t, env.JSON(t, http.MethodGet, versionsPath+d.AlertVersionID, key, ""))
		if !gone.AlertDef.AlertDefProperties.Deleted {
			t.Fatalf("a version of a deleted definition is answered deleted")
		}
	})
}

func TestRefusals(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "refusals")
		for _, c := range []struct{ name, props, want string }{
			{"two blocks", `{"name":"x","logsImmediate":{},"tracingImmediate":{}}`, "alertDefProperties: holds logsImmediate and tracingImmediate"},
			{"type disagrees", `{"name":"x","type":"ALERT_DEF_TYPE_FLOW","tracingImmediate":{}}`, "alertDefProperties.type: is ALERT_DEF_TYPE_FLOW"},
			{"no name", `{"logsImmediate":{}}`, "alertDefProperties.name: required"},
			{"bad promql", `{"name":"x","metricThreshold":{"metricFilter":{"promql":"sum(rate(x[5m]"},"rules":[{"condition":{"threshold":1}}]}}`, "alertDefProperties.metricThreshold.metricFilter.promql: not valid PromQL"},
			{"empty block of type", `{"name":"x","type":"ALERT_DEF_TYPE_METRIC_THRESHOLD"}`, "alertDefProperties.metricThreshold.metricFilter.promql: required"},
			{"two windows", `{"name":"x","metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"ofTheLast":{"metricTimeWindowDynamicDuration":"5m","metricTimeWindowSpecificValue":"METRIC_TIME_WINDOW_VALUE_MINUTES_5"}}}]}}`, "rules[0].condition.ofTheLast: holds"},
			{"bad duration", `{"name":"x","metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"ofTheLast":{"metricTimeWindowDynamicDuration":"soon"}}}]}}`, "metricTimeWindowDynamicDuration: \"soon\" is not a positive duration"},
			{"missing slo", `{"name":"x","sloThreshold":{"sloDefinition":{"sloId":"00000000-0000-4000-8000-000000000001"},"errorBudget":{"rules":[{"condition":{"threshold":10}}]}}}`, "sloThreshold.sloDefinition.sloId: no SLO"},
			{"missing connector", `{"name":"x","logsImmediate":{},"notificationGroup":{"destinations":[{"connectorId":"nope"}]}}`, "notificationGroup.destinations[0].connectorId: no connector"},
			{"missing router", `{"name":"x","logsImmediate":{},"notificationGroup":{"router":{"id":"nope"}}}`, "notificationGroup.router.id: no router"},
			{"missing flow target", `{"name":"x","flow":{"stages":[{"flowStagesGroups":{"groups":[{"alertDefs":[{"id":"00000000-0000-4000-8000-000000000001"}]}]}}]}}`, "alertDefs[0].id: no alert definition"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath, key, `{"alertDefProperties":`+c.props+`}`), http.StatusBadRequest, c.want)
		}
		list := apitest.Decode[struct{ AlertDefs []alertDef }](t, env.JSON(t, http.MethodGet, defsPath, key, ""))
		if len(list.AlertDefs) != 0 {
			t.Fatalf("refused creates stored %d definitions", len(list.AlertDefs))
		}
	})
}

func TestPermissionsAndTeams(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "owner")
		_, other := env.MustTeam(t, "other")
		d := createDef(t, env, key, metricProps)
		reader := env.MustKey(t, key, "alerts:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath, reader, `{"alertDefProperties":`+metricProps+`}`), http.StatusForbidden)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, reader, ""), http.StatusForbidden)
		if res := env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, reader, ""); res.Status != http.StatusOK {
			t.Fatalf("reader get: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, other, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, versionsPath+d.AlertVersionID, other, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, other, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, defsPath, other, `{"id":"`+d.ID+`","alertDefProperties":`+metricProps+`}`), http.StatusNotFound)
		list := apitest.Decode[struct{ AlertDefs []alertDef }](t, env.JSON(t, http.MethodGet, defsPath, other, ""))
		if len(list.AlertDefs) != 0 {
			t.Fatalf("another team lists %d definitions", len(list.AlertDefs))
		}
	})
}

func TestTypeSettledByTheBlock(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "types")
		for _, c := range []struct{ sent, want string }{
			// The zero type says nothing: the block decides.
			{`{"name":"a","type":"ALERT_DEF_TYPE_LOGS_IMMEDIATE_OR_UNSPECIFIED","tracingImmediate":{}}`,
				`{"name":"a","type":"ALERT_DEF_TYPE_TRACING_IMMEDIATE","tracingImmediate":{}}`},
			// No block: the type's empty block, stored and answered.
			{`{"name":"b","type":"ALERT_DEF_TYPE_TRACING_IMMEDIATE"}`,
				`{"name":"b","type":"ALERT_DEF_TYPE_TRACING_IMMEDIATE","tracingImmediate":{}}`},
			{`{"name":"d","type":null,"logsImmediate":null,"analyticsImmediate":{"dataprimeQuery":{"query":"source logs"}}}`,
				`{"name":"d","type":"ALERT_DEF_TYPE_ANALYTICS_IMMEDIATE","analyticsImmediate":{"dataprimeQuery":{"query":"source logs"}}}`},
		} {
			d := createDef(t, env, key, c.sent)
			sameJSON(t, c.sent, d.AlertDefProperties, []byte(c.want))
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath, key, `{"alertDefProperties":{"name":"e","type":"ALERT_DEF_TYPE_LOGS_THRESHOLD"}}`),
			http.StatusBadRequest, "alertDefProperties.logsThreshold.rules: required")
		// Neither a block nor a type (or only the zero type, which says nothing): refused naming
		// the one-of, not stored as logs-immediate.
		for _, sent := range []string{`{"name":"c"}`, `{"name":"c","type":"ALERT_DEF_TYPE_LOGS_IMMEDIATE_OR_UNSPECIFIED"}`} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath, key, `{"alertDefProperties":`+sent+`}`), http.StatusBadRequest,
				"alertDefProperties: holds no type block; a definition holds exactly one of logsImmediate, logsThreshold,", "analyticsThreshold")
		}

		reader := env.MustKey(t, key, "alerts:ReadConfig")
		d := apitest.Decode[written](t, env.JSON(t, http.MethodPost, defsPath, key, `{"accessPolicy":"{\"rules\":[]}","alertDefProperties":{"name":"p","logsImmediate":{}}}`)).AlertDef
		got := apitest.Decode[struct {
			Access struct {
				AccessPolicy string
				Permissions  struct{ CanRead, CanManage bool }
			}
		}](t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID+"?include_access_permissions=true", reader, ""))
		if got.Access.AccessPolicy != `{"rules":[]}` || !got.Access.Permissions.CanRead || got.Access.Permissions.CanManage {
			t.Fatalf("access: %+v", got.Access)
		}
		env.JSON(t, http.MethodPut, defsPath, key, `{"id":"`+d.ID+`","accessPolicy":{"delete":{}},"alertDefProperties":{"name":"p","logsImmediate":{}}}`)
		list := apitest.Decode[struct {
			Access map[string]struct{ AccessPolicy *string }
		}](t, env.JSON(t, http.MethodGet, defsPath+"?include_access_permissions=true", key, ""))
		if a, ok := list.Access[d.ID]; !ok || a.AccessPolicy != nil {
			t.Fatalf("list access after the policy's delete: %+v", list.Access)
		}
	})
}
