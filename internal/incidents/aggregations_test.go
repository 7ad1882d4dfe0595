package incidents_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// fixture is a small known data set of team 1:
//
//	name  severity  service  meta (env, team)    later
//	a     ERROR     api      prod, core          acknowledged, assigned to bob
//	b     ERROR     web      prod, core          closed
//	c     CRITICAL  api      staging, core       assigned to bob
//	d     INFO      (none)   prod, edge          assigned to amy
type fixture struct{ a, b, c, d string }

func loadFixture(t *testing.T, env *apitest.Env) fixture {
	t.Helper()
	mk := func(fp string, sev oas.IncidentSeverity, service, envName, team string) string {
		al := alert(fp)
		al.Name = "alert-" + fp
		al.Severity = sev
		al.Labels = map[string]string{"alertname": "alert-" + fp}
		if service != "" {
			al.Labels["service"] = service
		}
		al.Annotations = map[string]string{"runbook": "rb-" + fp}
		al.MetaLabels = []oas.MetaLabel{
			{Key: oas.NewOptString("team"), Value: oas.NewOptString(team)},
			{Key: oas.NewOptString("env"), Value: oas.NewOptString(envName)},
		}
		al.SubsystemName = "sub-" + fp
		id, _ := trigger(t, env, al)
		return id
	}
	f := fixture{
		a: mk("a", oas.IncidentSeverityINCIDENTSEVERITYERROR, "api", "prod", "core"),
		b: mk("b", oas.IncidentSeverityINCIDENTSEVERITYERROR, "web", "prod", "core"),
		c: mk("c", oas.IncidentSeverityINCIDENTSEVERITYCRITICAL, "api", "staging", "core"),
		d: mk("d", oas.IncidentSeverityINCIDENTSEVERITYINFO, "", "prod", "edge"),
	}
	var out incidentsOut
	decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(f.a)), &out)
	decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(f.b)), &out)
	decode(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+f.a+`","`+f.c+`"],"assignedTo":{"userId":"bob"}}`), &out)
	decode(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+f.d+`"],"assignedTo":{"userId":"amy"}}`), &out)
	return f
}

func aggs(t *testing.T, env *apitest.Env, query string) aggOut {
	t.Helper()
	var out aggOut
	decode(t, env.JSON(t, "GET", aggPath+"?"+encodeQuery(query), env.RootKey, ""), &out)
	return out
}

func aggErr(t *testing.T, env *apitest.Env, query string, fragments ...string) {
	t.Helper()
	apitest.ExpectError(t, env.JSON(t, "GET", aggPath+"?"+encodeQuery(query), env.RootKey, ""), 400, fragments...)
}

func sortedIDs(in ...string) string {
	s := append([]string(nil), in...)
	sort.Strings(s)
	return strings.Join(s, ",")
}

func counts(cs []count, label func(c count) string) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%d", label(c), c.Count))
	}
	return strings.Join(parts, " ")
}

func TestAggregationsAllFields(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		empty := aggs(t, env, "")
		equal(t, "no incidents: groups", len(empty.IncidentAggs), 0)
		equal(t, "no incidents: total", empty.Pagination.TotalSize, int64(0))

		f := loadFixture(t, env)
		all := aggs(t, env, "")
		equal(t, "one group", len(all.IncidentAggs), 1)
		equal(t, "total", all.Pagination.TotalSize, int64(1))
		equal(t, "no next page", all.Pagination.NextPageToken, "")
		g := all.IncidentAggs[0]
		equal(t, "group values", len(g.GroupBysValue), 0)
		equal(t, "allValuesCount", g.AllValuesCount, int64(4))
		equal(t, "severity", counts(g.AggSeverityCount, func(c count) string { return c.Severity }),
			"INCIDENT_SEVERITY_INFO=1 INCIDENT_SEVERITY_ERROR=2 INCIDENT_SEVERITY_CRITICAL=1")
		equal(t, "state", counts(g.AggStateCount, func(c count) string { return c.State }),
			"INCIDENT_STATE_TRIGGERED=3 INCIDENT_STATE_RESOLVED=1")
		equal(t, "status", counts(g.AggStatusCount, func(c count) string { return c.Status }),
			"INCIDENT_STATUS_TRIGGERED=2 INCIDENT_STATUS_ACKNOWLEDGED=1 INCIDENT_STATUS_RESOLVED=1")
		equal(t, "assignments", counts(g.AggAssignmentsCount, func(c count) string { return c.AssignedTo.UserID }), "amy=1 bob=2")
		equal(t, "meta", counts(g.AggMetaLabelsCount, func(c count) string { return c.MetaLabel.Key + ":" + c.MetaLabel.Value }),
			"env:prod=3 env:staging=1 team:core=3 team:edge=1")
		equal(t, "ids", strings.Join(g.ListIncidentsID, ","), sortedIDs(f.a, f.b, f.c, f.d))

		ia, ib, ic, id := get(t, env, env.RootKey, f.a), get(t, env, env.RootKey, f.b), get(t, env, env.RootKey, f.c), get(t, env, env.RootKey, f.d)
		first := ia.CreatedAt
		lastUpdate := ia.LastStateUpdateTime
		for _, inc := range []incident{ib, ic, id} {
			if inc.CreatedAt.Before(first) {
				first = inc.CreatedAt
			}
			if inc.LastStateUpdateTime.After(lastUpdate) {
				lastUpdate = inc.LastStateUpdateTime
			}
		}
		equal(t, "firstCreatedAt", g.FirstCreatedAt.Equal(first), true)
		equal(t, "lastStateUpdateTime", g.LastStateUpdateTime.Equal(lastUpdate), true)
		equal(t, "lastClosedAt", g.LastClosedAt != nil && g.LastClosedAt.Equal(*ib.ClosedAt), true)

		// only open incidents: lastClosedAt is required, and the Unix epoch says "never"
		open := aggs(t, env, "filter[state]=INCIDENT_STATE_TRIGGERED")
		equal(t, "open count", open.IncidentAggs[0].AllValuesCount, int64(3))
		equal(t, "open lastClosedAt", open.IncidentAggs[0].LastClosedAt != nil && open.IncidentAggs[0].LastClosedAt.Equal(time.Unix(0, 0)), true)
		raw := env.Do(t, "GET", aggPath+"?filter[state]=INCIDENT_STATE_TRIGGERED", "Bearer "+env.RootKey, "", "")
		equal(t, "open lastClosedAt as sent", strings.Contains(string(raw.Body), `"lastClosedAt":"1970-01-01T00:00:00Z"`), true)
		equal(t, "open firstCreatedAt", open.IncidentAggs[0].FirstCreatedAt != nil, true)
		equal(t, "open lastStateUpdateTime", open.IncidentAggs[0].LastStateUpdateTime != nil, true)
		// nothing matches: no group
		equal(t, "no match", len(aggs(t, env, "filter[applicationName]=nope").IncidentAggs), 0)
	})
}

func TestAggregationsGroupBy(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := loadFixture(t, env)
		// by severity, bracket and dot forms alike, enumeration order
		for _, q := range []string{
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY",
			"group_bys[0].incidentField=INCIDENTS_FIELDS_SEVERITY",
			`group_bys=[{"incidentField":"INCIDENTS_FIELDS_SEVERITY"}]`,
		} {
			out := aggs(t, env, q)
			equal(t, q+": groups", len(out.IncidentAggs), 3)
			var got []string
			for _, g := range out.IncidentAggs {
				got = append(got, fmt.Sprintf("%s:%d", g.GroupBysValue[0].IncidentField["severity"], g.AllValuesCount))
			}
			equal(t, q+": order", strings.Join(got, " "), "INCIDENT_SEVERITY_INFO:1 INCIDENT_SEVERITY_ERROR:2 INCIDENT_SEVERITY_CRITICAL:1")
			equal(t, q+": error ids", strings.Join(out.IncidentAggs[1].ListIncidentsID, ","), sortedIDs(f.a, f.b))
			equal(t, q+": error statuses", counts(out.IncidentAggs[1].AggStatusCount, func(c count) string { return c.Status }),
				"INCIDENT_STATUS_ACKNOWLEDGED=1 INCIDENT_STATUS_RESOLVED=1")
		}
		// descending
		out := aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC")
		equal(t, "desc first", out.IncidentAggs[0].GroupBysValue[0].IncidentField["severity"], "INCIDENT_SEVERITY_CRITICAL")

		// by contextual label: incidents without it form the "" group, which sorts first
		out = aggs(t, env, "group_bys[0][contextualLabel]=service")
		var got []string
		for _, g := range out.IncidentAggs {
			cl := g.GroupBysValue[0].ContextualLabels
			got = append(got, fmt.Sprintf("%s=%q:%d", cl.FieldName, cl.FieldValue, g.AllValuesCount))
		}
		equal(t, "by label", strings.Join(got, " "), `service="":1 service="api":2 service="web":1`)
		equal(t, "label group ids", strings.Join(out.IncidentAggs[1].ListIncidentsID, ","), sortedIDs(f.a, f.c))

		// by two fields: label, then state descending
		out = aggs(t, env, "group_bys[0][contextualLabel]=service&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATE&group_bys[1][orderByDirection]=ORDER_BY_DIRECTION_DESC&group_bys[2].incidentField=INCIDENTS_FIELDS_SUBSYSTEM_NAME")
		got = nil
		for _, g := range out.IncidentAggs {
			equal(t, "values per group", len(g.GroupBysValue), 3)
			got = append(got, g.GroupBysValue[0].ContextualLabels.FieldValue+"/"+g.GroupBysValue[1].IncidentField["state"]+"/"+g.GroupBysValue[2].IncidentField["subsystemName"])
		}
		equal(t, "two fields", strings.Join(got, " "),
			"/INCIDENT_STATE_TRIGGERED/sub-d api/INCIDENT_STATE_TRIGGERED/sub-a api/INCIDENT_STATE_TRIGGERED/sub-c web/INCIDENT_STATE_RESOLVED/sub-b")

		// closed time: open incidents have no value and come first
		out = aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME")
		equal(t, "closed groups", len(out.IncidentAggs), 2)
		_, hasClosed := out.IncidentAggs[0].GroupBysValue[0].IncidentField["closedAt"]
		equal(t, "open group has no closedAt", hasClosed, false)
		equal(t, "open group count", out.IncidentAggs[0].AllValuesCount, int64(3))
		equal(t, "closed group", out.IncidentAggs[1].GroupBysValue[0].IncidentField["closedAt"] != "", true)

		// by id and by name: one group each
		equal(t, "by id", len(aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_ID").IncidentAggs), 4)
		out = aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC")
		equal(t, "by name desc", out.IncidentAggs[0].GroupBysValue[0].IncidentField["name"], "alert-d")
		for _, field := range []string{"CREATED_TIME", "STATUS", "LAST_STATE_UPDATE_TIME", "APPLICATION_NAME"} {
			out = aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_"+field)
			var sum int64
			for _, g := range out.IncidentAggs {
				sum += g.AllValuesCount
			}
			equal(t, field+" covers all", sum, int64(4))
		}
		aggErr(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_DURATION", "group_bys[0].incidentField", "not groupable")
		aggErr(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_UNSPECIFIED", "group_bys[0].incidentField", "not groupable")
	})
}

func TestAggregationsPagination(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var all []string
		for i := 0; i < 7; i++ {
			id, _ := trigger(t, env, alert(fmt.Sprintf("p-%d", i)))
			all = append(all, id)
		}
		sort.Strings(all)
		q := "group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&pagination[pageSize]=3"
		first := aggs(t, env, q)
		equal(t, "total", first.Pagination.TotalSize, int64(7))
		equal(t, "stable token", aggs(t, env, q).Pagination.NextPageToken, first.Pagination.NextPageToken)
		var got []string
		page := first
		for pages := 1; ; pages++ {
			for _, g := range page.IncidentAggs {
				got = append(got, g.GroupBysValue[0].IncidentField["id"])
			}
			if page.Pagination.NextPageToken == "" {
				equal(t, "pages", pages, 3)
				break
			}
			page = aggs(t, env, q+"&pagination.pageToken="+page.Pagination.NextPageToken)
		}
		equal(t, "all groups in order", strings.Join(got, ","), strings.Join(all, ","))

		// a token of another query, or garbage, is refused
		aggErr(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&pagination[pageSize]=3&pagination[pageToken]="+first.Pagination.NextPageToken, "pagination.pageToken")
		aggErr(t, env, q+"&pagination[pageToken]=%%%", "pagination.pageToken")
		// page size bounds
		aggErr(t, env, "pagination[pageSize]=0", "pagination.pageSize", "at least 1")
		aggErr(t, env, "pagination.pageSize=10001", "pagination.pageSize", "at most 10000")
		aggErr(t, env, "pagination.pageSize=ten", "pagination.pageSize", "integer")
		aggErr(t, env, "pagination.pageSize=1&pagination.pageSize=2", "pagination.pageSize", "once")
		aggErr(t, env, "pagination[pageSize]=1&pagination.pageSize=2", "pagination.pageSize", "once")
		aggErr(t, env, "pagination[pageToken]=x", "pagination.pageSize", "required")
		equal(t, "pageSize 1", len(aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&pagination[pageSize]=1").IncidentAggs), 1)
		equal(t, "pageSize 10000", len(aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&pagination[pageSize]=10000").IncidentAggs), 7)
	})
}

func TestAggregationsFilters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := loadFixture(t, env)
		cases := []struct {
			query string
			want  []string
		}{
			{"filter[severity]=INCIDENT_SEVERITY_ERROR", []string{f.a, f.b}},
			{"filter[severity][0]=INCIDENT_SEVERITY_ERROR&filter[severity][1]=INCIDENT_SEVERITY_INFO", []string{f.a, f.b, f.d}},
			{"filter.severity=INCIDENT_SEVERITY_ERROR&filter.severity=INCIDENT_SEVERITY_CRITICAL", []string{f.a, f.b, f.c}},
			{"filter[state]=INCIDENT_STATE_RESOLVED", []string{f.b}},
			{"filter[status]=INCIDENT_STATUS_ACKNOWLEDGED", []string{f.a}},
			{"filter[assignee]=bob", []string{f.a, f.c}},
			{"filter[applicationName]=shop&filter[subsystemName]=sub-c&filter[subsystemName]=sub-d", []string{f.c, f.d}},
			{"filter[contextualLabels][service][contextualLabelValues]=api", []string{f.a, f.c}},
			{"filter[contextualLabels][service][contextualLabelValues][0]=web&filter.contextualLabels.service.contextualLabelValues[1]=api&filter[severity]=INCIDENT_SEVERITY_ERROR", []string{f.a, f.b}},
			{`filter={"contextualLabels":{"service":{"contextualLabelValues":["web"]}}}`, []string{f.b}},
			{"filter[displayLabels][runbook][displayLabelValues]=rb-c", []string{f.c}},
			{"filter[metaLabels][0][key]=env&filter[metaLabels][0][value]=staging", []string{f.c}},
			{"filter[metaLabels][0][key]=team&filter[metaLabels][0][value]=edge&filter[metaLabels][1][key]=env&filter[metaLabels][1][value]=staging", []string{f.c, f.d}},
			{"filter[metaLabels][0][key]=team&filter[metaLabels][0][value]=core&filter[metaLabels][1][key]=env&filter[metaLabels][1][value]=prod&filter[metaLabelsOp]=FILTER_OPERATOR_AND", []string{f.a, f.b}},
			{"filter[isMuted]=false", []string{f.a, f.b, f.c, f.d}},
			{"filter[isMuted]=true", nil},
			{"filter[searchQuery][query]=ALERT-B&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME", []string{f.b}},
			{"filter[searchQuery][query]=PI&filter[searchQuery][contextualLabel]=service", []string{f.a, f.c}},
			{"filter[unknownField]=x&filter[severity]=INCIDENT_SEVERITY_INFO", []string{f.d}},
		}
		for _, c := range cases {
			out := aggs(t, env, c.query)
			var got []string
			if len(out.IncidentAggs) > 0 {
				got = out.IncidentAggs[0].ListIncidentsID
			}
			equal(t, c.query, strings.Join(got, ","), sortedIDs(c.want...))
		}

		// time ranges
		created := get(t, env, env.RootKey, f.a).CreatedAt
		closedAt := *get(t, env, env.RootKey, f.b).ClosedAt
		rng := func(name string, from, to time.Time) string {
			return fmt.Sprintf("filter[%s][startTime]=%s&filter[%s][endTime]=%s", name, from.Format(time.RFC3339Nano), name, to.Format(time.RFC3339Nano))
		}
		later := closedAt.Add(time.Hour)
		equal(t, "created range all", aggs(t, env, rng("createdAtRange", created.Add(-time.Hour), later)).IncidentAggs[0].AllValuesCount, int64(4))
		equal(t, "created range none", len(aggs(t, env, rng("createdAtRange", later, later.Add(time.Hour))).IncidentAggs), 0)
		// after b closed, only the three open incidents were open (answers show whole seconds)
		out := aggs(t, env, rng("incidentDurationRange", closedAt.Add(time.Second), later))
		equal(t, "open after close", strings.Join(out.IncidentAggs[0].ListIncidentsID, ","), sortedIDs(f.a, f.c, f.d))
		out = aggs(t, env, fmt.Sprintf("filter.startTime=%s&filter.endTime=%s", closedAt.Add(time.Second).Format(time.RFC3339Nano), later.Format(time.RFC3339Nano)))
		equal(t, "deprecated range", out.IncidentAggs[0].AllValuesCount, int64(3))
		equal(t, "range before all", len(aggs(t, env, rng("incidentDurationRange", created.Add(-2*time.Hour), created.Add(-time.Hour))).IncidentAggs), 0)

		// list uses the same filter
		var list listOut
		body, _ := json.Marshal(map[string]any{"filter": map[string]any{"contextualLabels": map[string]any{"service": map[string]any{"contextualLabelValues": []string{"api"}}}}})
		decode(t, env.JSON(t, "POST", listPath, env.RootKey, string(body)), &list)
		equal(t, "list filter", list.Pagination.TotalSize, int64(2))
	})
}

func TestAggregationsBadQueries(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		loadFixture(t, env)
		aggErr(t, env, "filter[severity][0]=LOUD", "filter.severity[0]", "must be one of", "INCIDENT_SEVERITY_INFO")
		aggErr(t, env, "filter[state]=x", "filter.state[0]", "must be one of")
		aggErr(t, env, "filter[isMuted]=maybe", "filter.isMuted", "true or false")
		aggErr(t, env, "filter[createdAtRange][startTime]=2024-01-01T00:00:00Z", "filter.createdAtRange.endTime", "required")
		aggErr(t, env, "filter[createdAtRange][startTime]=yesterday&filter[createdAtRange][endTime]=2024-01-01T00:00:00Z", "filter.createdAtRange.startTime", "date-time")
		aggErr(t, env, "filter[applicationName]=", "filter.applicationName[0]", "at least 1")
		aggErr(t, env, "filter[searchQuery][query]=x", "filter.searchQuery", "exactly one")
		aggErr(t, env, "filter[searchQuery][query]=x&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_CREATED_TIME", "filter.searchQuery.incidentField", "cannot be searched")
		aggErr(t, env, "filter[metaLabelsOp]=XOR", "filter.metaLabelsOp", "must be one of")
		aggErr(t, env, "filter[severity]=INCIDENT_SEVERITY_INFO&filter[severity][x]=1", "filter.severity", "array index")
		aggErr(t, env, "filter[severity", "filter[severity", "unclosed")
		aggErr(t, env, "filter={not json", "filter", "JSON")
		aggErr(t, env, "group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_ASC", "group_bys[0]", "exactly one of incidentField, contextualLabel")
		aggErr(t, env, "group_bys[1][incidentField]=INCIDENTS_FIELDS_ID&group_bys[1][contextualLabel]=x", "group_bys[0]", "exactly one")
		aggErr(t, env, "group_bys[0][incidentField]=NOPE", "group_bys[0].incidentField", "must be one of")
		aggErr(t, env, "group_bys[0][orderByDirection]=UP&group_bys[0][contextualLabel]=x", "group_bys[0].orderByDirection", "must be one of")
		aggErr(t, env, "group_bys[0][contextualLabel]="+strings.Repeat("é", 257), "group_bys[0].contextualLabel", "256")
		aggErr(t, env, "group_bys.incidentField=INCIDENTS_FIELDS_ID&group_bys[1][contextualLabel]=x", "group_bys", "index every item")
		aggErr(t, env, "group_bys[incidentField]=NOPE", "group_bys[0].incidentField", "must be one of")
		equal(t, "label of 256", len(aggs(t, env, "group_bys[0][contextualLabel]="+strings.Repeat("é", 256)).IncidentAggs), 1)
		v := url.Values{}
		for i := 0; i < 101; i++ {
			v.Set(fmt.Sprintf("group_bys[%d][contextualLabel]", i), "service")
		}
		apitest.ExpectError(t, env.JSON(t, "GET", aggPath+"?"+v.Encode(), env.RootKey, ""), 400, "group_bys", "at most 100")
		v.Del("group_bys[100][contextualLabel]")
		var out aggOut
		decode(t, env.JSON(t, "GET", aggPath+"?"+v.Encode(), env.RootKey, ""), &out)
		equal(t, "100 group-bys", len(out.IncidentAggs[0].GroupBysValue), 100)
	})
}

// TestAggregationsEmptyTextValue: a group of incidents without an application name answers the
// empty incidentField (the public text values are at least one character long), sorted first.
func TestAggregationsEmptyTextValue(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		noApp := alert("no-app")
		noApp.ApplicationName = ""
		trigger(t, env, noApp)
		trigger(t, env, alert("with-app"))
		out := aggs(t, env, "group_bys[0][incidentField]=INCIDENTS_FIELDS_APPLICATION_NAME")
		equal(t, "groups", len(out.IncidentAggs), 2)
		equal(t, "empty value", len(out.IncidentAggs[0].GroupBysValue[0].IncidentField), 0)
		equal(t, "empty value present", out.IncidentAggs[0].GroupBysValue[0].IncidentField != nil, true)
		equal(t, "its count", out.IncidentAggs[0].AllValuesCount, int64(1))
		equal(t, "named value", out.IncidentAggs[1].GroupBysValue[0].IncidentField["applicationName"], "shop")
	})
}
