package alertdefs_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

func props(name, priority, labels, block string) string {
	return `{"name":"` + name + `","priority":"` + priority + `","enabled":true,"entityLabels":` + labels + `,` + block + `}`
}

const (
	logsBlock   = `"logsImmediate":{}`
	metricBlock = `"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]}`
)

func list(t *testing.T, env *apitest.Env, key, query string) (names []string, total int, next string) {
	t.Helper()
	out := apitest.Decode[struct {
		AlertDefs []struct {
			AlertDefProperties struct{ Name string }
		}
		Pagination struct {
			TotalSize     int
			NextPageToken string
		}
	}](t, env.JSON(t, http.MethodGet, defsPath+"?"+query, key, ""))
	for _, d := range out.AlertDefs {
		names = append(names, d.AlertDefProperties.Name)
	}
	return names, out.Pagination.TotalSize, out.Pagination.NextPageToken
}

func TestBulkIsAllOrNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "bulk")
		good := `{"alertDefProperties":` + props("a", "ALERT_DEF_PRIORITY_P1", `{}`, logsBlock) + `}`
		bad := `{"alertDefProperties":` + props("b", "ALERT_DEF_PRIORITY_P1", `{}`, `"metricThreshold":{"metricFilter":{"promql":"("}}`) + `}`
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath+"/all/create", key, `{"alertDefsToCreate":[`+good+`,`+bad+`]}`),
			http.StatusBadRequest, "alertDefsToCreate[1].alertDefProperties.metricThreshold.metricFilter.promql")
		// A reference that is checked in the transaction fails it whole too.
		missing := `{"alertDefProperties":` + props("c", "ALERT_DEF_PRIORITY_P1", `{}`, `"logsImmediate":{},"notificationGroup":{"router":{"id":"nope"}}`) + `}`
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath+"/all/create", key, `{"alertDefsToCreate":[`+good+`,`+missing+`]}`),
			http.StatusBadRequest, "alertDefsToCreate[1].alertDefProperties.notificationGroup.router.id: no router")
		if names, _, _ := list(t, env, key, ""); len(names) != 0 {
			t.Fatalf("a refused bulk create stored %v", names)
		}
		created := apitest.Decode[struct {
			AlertDefs []alertDef
			Failed    []any `json:"failedToCreateAlertDefs"`
		}](t, env.JSON(t, http.MethodPost, defsPath+"/all/create", key, `{"alertDefsToCreate":[`+good+`,`+good+`]}`))
		if len(created.AlertDefs) != 2 || created.Failed == nil || len(created.Failed) != 0 {
			t.Fatalf("bulk create: %+v", created)
		}
		a, b := created.AlertDefs[0], created.AlertDefs[1]

		rep := func(id, name string) string {
			return `{"id":"` + id + `","alertDefProperties":` + props(name, "ALERT_DEF_PRIORITY_P2", `{}`, logsBlock) + `}`
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, defsPath+"/all/replace", key,
			`{"alertDefsToReplace":[`+rep(a.ID, "a2")+`,`+rep("00000000-0000-4000-8000-000000000009", "x")+`]}`),
			http.StatusNotFound, "alertDefsToReplace[1].id: no alert definition")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, defsPath+"/all/replace", key,
			`{"alertDefsToReplace":[`+rep(a.ID, "a2")+`,`+rep(strings.ToUpper(a.ID), "a3")+`]}`),
			http.StatusBadRequest, "alertDefsToReplace[1].id")
		if names, _, _ := list(t, env, key, ""); strings.Join(names, ",") != "a,a" {
			t.Fatalf("a refused bulk replace changed the names: %v", names)
		}
		replaced := apitest.Decode[struct{ AlertDefs []alertDef }](t, env.JSON(t, http.MethodPut, defsPath+"/all/replace", key,
			`{"alertDefsToReplace":[`+rep(a.ID, "a2")+`,`+rep(b.ID, "b2")+`]}`))
		if len(replaced.AlertDefs) != 2 || replaced.AlertDefs[0].AlertVersionID == a.AlertVersionID {
			t.Fatalf("bulk replace: %+v", replaced)
		}

		deleted := apitest.Decode[struct {
			DeletedIds  []string
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodPost, defsPath+"/all/delete", key,
			`{"ids":["`+a.ID+`","00000000-0000-4000-8000-000000000009","`+a.ID+`"]}`))
		if strings.Join(deleted.DeletedIds, ",") != a.ID || len(deleted.NotFoundIds) != 1 {
			t.Fatalf("bulk delete: %+v", deleted)
		}
		if names, _, _ := list(t, env, key, ""); strings.Join(names, ",") != "b2" {
			t.Fatalf("after the bulk delete: %v", names)
		}
	})
}

func TestListFiltersOrderAndPages(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "list")
		createDef(t, env, key, props("Disk full", "ALERT_DEF_PRIORITY_P1", `{"team":"infra","env":"prod"}`, metricBlock))
		createDef(t, env, key, props("Error logs", "ALERT_DEF_PRIORITY_P3", `{"team":"apps"}`, logsBlock))
		third := createDef(t, env, key, `{"name":"Disk slow","priority":"ALERT_DEF_PRIORITY_P2","entityLabels":{"team":"infra"},`+metricBlock+`}`)
		for _, c := range []struct{ query, want string }{
			{"", "Disk full,Error logs,Disk slow"},
			{"query_filter[nameFilter][name]=disk&query_filter[nameFilter][matcher]=FILTER_MATCHER_CONTAINS", "Disk full,Disk slow"},
			{"query_filter[nameFilter][name]=Disk+full&query_filter[nameFilter][matcher]=FILTER_MATCHER_NOT_EQUALS", "Error logs,Disk slow"},
			{"query_filter[typeFilter][type]=ALERT_DEF_TYPE_LOGS_IMMEDIATE_OR_UNSPECIFIED", "Error logs"},
			{"query_filter[priorityFilter][priority]=ALERT_DEF_PRIORITY_P1&query_filter[priorityFilter][priority]=ALERT_DEF_PRIORITY_P2", "Disk full,Disk slow"},
			{"query_filter[enabledFilter][enabled]=false", "Disk slow"},
			{"query_filter[entityLabelsFilter][entityLabels][team]=infra", "Disk full,Disk slow"},
			{"query_filter[entityLabelsFilter][entityLabels][team]=infra&query_filter[entityLabelsFilter][entityLabels][env]=prod&query_filter[entityLabelsFilter][valuesOperator]=FILTER_VALUES_OPERATOR_AND", "Disk full"},
			{"query_filter[idFilter][alertId]=" + third.ID + "&query_filter[idFilter][matchType]=ALERT_DEF_ID_FILTER_MATCH_TYPE_EXCLUDE", "Disk full,Error logs"},
			{"query_filter[lastTriggeredTimeRangeFilter][lastTriggeredAtRange][startTime]=2020-01-01T00:00:00Z", ""},
			{"order_bys[orderBys][0][fieldName]=ALERT_DEF_ORDER_BY_FIELDS_PRIORITY&order_bys[orderBys][0][direction]=ALERT_DEF_ORDER_BY_DIRECTION_DESC", "Disk full,Disk slow,Error logs"},
			{"order_bys[orderBys][0][fieldName]=ALERT_DEF_ORDER_BY_FIELDS_ENABLED", "Disk slow,Disk full,Error logs"},
		} {
			names, total, _ := list(t, env, key, c.query)
			if got := strings.Join(names, ","); got != c.want || total != len(names) {
				t.Errorf("%s: %q (total %d), want %q", c.query, got, total, c.want)
			}
		}
		names, total, next := list(t, env, key, "pagination[pageSize]=2")
		if strings.Join(names, ",") != "Disk full,Error logs" || total != 3 || next == "" {
			t.Fatalf("first page: %v %d %q", names, total, next)
		}
		names, _, last := list(t, env, key, "pagination[pageSize]=2&pagination[pageToken]="+url.QueryEscape(next))
		if strings.Join(names, ",") != "Disk slow" || last != "" {
			t.Fatalf("second page: %v %q", names, last)
		}
		for _, q := range []string{
			"pagination[pageToken]=bogus", "pagination[pageSize]=1001",
			"query_filter[typeFilter][type]=NOPE", "order_bys[orderBys][0][fieldName]=NOPE",
		} {
			if res := env.JSON(t, http.MethodGet, defsPath+"?"+q, key, ""); res.Status != http.StatusBadRequest {
				t.Errorf("%s: %d %s", q, res.Status, res.Body)
			}
		}

		counts := apitest.Decode[struct {
			Counts struct {
				TypeCounts []struct {
					Type  string
					Count int
				}
				PriorityCounts []struct {
					Priority string
					Count    int
				}
				EnabledCounts []struct {
					Enabled bool
					Count   int
				}
				EntityLabelCounts []struct {
					LabelKey, LabelValue string
					Count                int
				}
			}
		}](t, env.JSON(t, http.MethodGet, defsPath+"/all/counts?query_filter[nameFilter][name]=disk&query_filter[nameFilter][matcher]=FILTER_MATCHER_CONTAINS", key, ""))
		c := counts.Counts
		if len(c.TypeCounts) != 1 || c.TypeCounts[0].Count != 2 || len(c.PriorityCounts) != 2 || len(c.EnabledCounts) != 2 ||
			len(c.EntityLabelCounts) != 2 || c.EntityLabelCounts[0].LabelKey != "team" || c.EntityLabelCounts[0].Count != 2 {
			t.Fatalf("counts: %+v", c)
		}

		dl := apitest.Decode[struct {
			Content     []byte
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, defsPath+"/all/download?ids="+third.ID+"&ids=00000000-0000-4000-8000-000000000009", key, ""))
		var file struct{ AlertDefs []alertDef }
		if err := json.Unmarshal(dl.Content, &file); err != nil || len(file.AlertDefs) != 1 || file.AlertDefs[0].ID != third.ID || len(dl.NotFoundIds) != 1 {
			t.Fatalf("download: %s %v %v", dl.Content, dl.NotFoundIds, err)
		}
		all := apitest.Decode[struct{ Content []byte }](t, env.JSON(t, http.MethodGet, defsPath+"/all/download", key, ""))
		if err := json.Unmarshal(all.Content, &file); err != nil || len(file.AlertDefs) != 3 {
			t.Fatalf("download all: %s", all.Content)
		}
	})
}

func TestReferencesInUse(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "refs")
		r := teamRefs(t, env, key)
		body := r.fill(`{"name":"Burn","sloThreshold":{"sloDefinition":{"sloId":"${SLO}"},"burnRate":{"single":{"timeDuration":{"duration":"1","unit":"DURATION_UNIT_HOURS"}},"rules":[{"condition":{"threshold":2}}]}},` +
			`"notificationGroup":{"destinations":[{"connectorId":"${CONNECTOR}","presetId":"${PRESET}"}],"router":{"id":"${ROUTER}"}}}`)
		d := createDef(t, env, key, body)
		const nc = "/mgmt/openapi/latest/notifications/notification-center/v1/"
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, nc+"connectors/"+r.connector, key, ""), http.StatusConflict, `alert definition "Burn" (id `+d.ID+`)`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, nc+"presets/custom/"+r.preset, key, ""), http.StatusConflict, `alert definition "Burn"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, "/mgmt/openapi/latest/slo/slos/v1/"+r.slo, key, ""), http.StatusConflict, `alert definition "Burn"`)
		// The router it names may go (the public document answers a router's delete with 200
		// only): the definition then names none, as a new version, and routes by its labels.
		if res := env.JSON(t, http.MethodDelete, nc+"routers/"+r.router, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete of a router a definition names: %d %s", res.Status, res.Body)
		}
		released := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, key, "")).AlertDef
		sameJSON(t, "the definition once its router is deleted", released.AlertDefProperties,
			[]byte(strings.Replace(string(d.AlertDefProperties), `"router":{"id":"`+r.router+`"}`, `"router":{}`, 1)))
		if released.AlertVersionID == d.AlertVersionID {
			t.Errorf("the definition that lost its router kept version %s", d.AlertVersionID)
		}
		old := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, defsPath+"/version-ids/"+d.AlertVersionID, key, "")).AlertDef
		sameJSON(t, "the version before the router's delete", old.AlertDefProperties, d.AlertDefProperties)

		// A flow names definitions of the team: deleting one is refused while the flow names it,
		// and flows form no cycle.
		flow := func(name, id string) string {
			return `{"name":"` + name + `","flow":{"stages":[{"flowStagesGroups":{"groups":[{"alertDefs":[{"id":"` + id + `"}]}]}}]}}`
		}
		f1 := createDef(t, env, key, flow("F1", d.ID))
		f2 := createDef(t, env, key, flow("F2", f1.ID))
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, key, ""), http.StatusConflict, `alert definition "F1" (id `+f1.ID+`)`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, defsPath, key, `{"id":"`+f1.ID+`","alertDefProperties":`+flow("F1", f2.ID)+`}`),
			http.StatusBadRequest, "makes a cycle of flows")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, defsPath, key, `{"id":"`+f1.ID+`","alertDefProperties":`+flow("F1", f1.ID)+`}`),
			http.StatusBadRequest, "a flow cannot name itself")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, defsPath+"/all/delete", key, `{"ids":["`+f1.ID+`"]}`), http.StatusConflict, `"F2"`)
		// Deleting the flow with what it names, in one request, is allowed.
		res := apitest.Decode[struct{ DeletedIds []string }](t, env.JSON(t, http.MethodPost, defsPath+"/all/delete", key, `{"ids":["`+f1.ID+`","`+f2.ID+`"]}`))
		if len(res.DeletedIds) != 2 {
			t.Fatalf("bulk delete of two flows: %+v", res)
		}
		if res := env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete once no flow names it: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, nc+"connectors/"+r.connector, key, ""); res.Status == http.StatusConflict && strings.Contains(string(res.Body), `"Burn"`) {
			t.Fatalf("the deleted definition still holds the connector: %s", res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, "/mgmt/openapi/latest/slo/slos/v1/"+r.slo, key, ""); res.Status != http.StatusOK {
			t.Fatalf("SLO delete once unused: %d %s", res.Status, res.Body)
		}
	})
}
