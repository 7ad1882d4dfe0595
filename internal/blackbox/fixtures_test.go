package blackbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// The fixture registry. Every path parameter of api/openapi.yaml must be given a value by one
// entry: for the authorization matrix, each names a resource of team A (created through the API,
// with its example body) that the other team's key must not reach, or, when shared is set, a value
// every team may read alike (a catalog entry). An entry applies to the parameter called param in
// every operation whose path, without its /mgmt/openapi/<n> version, starts with prefix followed
// by {param}; the longest prefix wins, and an empty prefix matches any path. An operation added
// with a new parameter (or an id under a new area) fails TestAuthorizationMatrix with the entry
// to add here.
var fixtures []fixture

func init() {
	fixtures = []fixture{
		{param: "key_id", create: func(f *fixtureRun) string {
			return f.created("CreateApiKey", nil, "keyId")
		}},
		{param: "id", prefix: "/recording-rules/recording-rules/v1/", create: func(f *fixtureRun) string {
			return f.created("CreateRecordingRuleSet", nil, "id")
		}},
		{param: "id", prefix: "/dataplans/policies/v1/", create: func(f *fixtureRun) string {
			return f.created("CreatePolicy", nil, "id")
		}},
		{param: "case_id", create: func(f *fixtureRun) string {
			return f.created("IngestAlertmanager", nil, "caseId")
		}},
		{param: "event_id", prefix: "/cases/events/v1/", create: func(f *fixtureRun) string {
			return f.created("CreateCaseComment", map[string]string{"case_id": f.value("case_id", "")}, "eventId")
		}},
		{param: "id", prefix: "/incidents/incidents/v1/", create: func(f *fixtureRun) string {
			f.value("case_id", "") // the ingestion opens the incident
			return f.listed("ListIncidents", nil, "id")
		}},
		{param: "incident_id", create: func(f *fixtureRun) string {
			return f.value("id", "/incidents/incidents/v1/")
		}},
		{param: "event_id", prefix: "/incidents/events/v1/", create: func(f *fixtureRun) string {
			return f.listed("ListIncidentEvents", map[string]string{"incident_id": f.value("incident_id", "")}, "id")
		}},
		{param: "team_id", create: func(f *fixtureRun) string { return strconv.FormatInt(f.teamID, 10) }},
		{param: "id", prefix: "/notifications/notification-center/v1/presets/", create: func(f *fixtureRun) string {
			return f.created("CreateCustomPreset", nil, "id")
		}},
		{param: "entity_type", shared: true, create: func(f *fixtureRun) string {
			return "ALERTS"
		}},
		{param: "group_id", create: func(f *fixtureRun) string {
			return f.created("CreateParsingRuleGroup", nil, "id")
		}},
		{param: "role_id", create: func(f *fixtureRun) string {
			return f.created("CreateCustomRole", nil, "id")
		}},
		{param: "dashboard_id", create: func(f *fixtureRun) string {
			return f.created("CreateDashboard", nil, "dashboardId")
		}},
		{param: "slug", create: func(f *fixtureRun) string {
			f.value("dashboard_id", "")
			return f.slug
		}},
		{param: "id", prefix: "/slo/slos/v1/", create: func(f *fixtureRun) string {
			return f.created("CreateSlo", nil, "id")
		}},
		{param: "id", prefix: "/data-exploration/views/v1/views/", create: func(f *fixtureRun) string {
			return f.created("CreateView", nil, "id")
		}},
		{param: "id", prefix: "/data-exploration/views/v1/folders/", create: func(f *fixtureRun) string {
			return f.created("CreateViewFolder", nil, "id")
		}},
		{param: "folder_id", prefix: "/dashboards/folders/v1/", create: func(f *fixtureRun) string {
			return f.created("CreateDashboardFolder", nil, "folderId")
		}},
		{param: "id", prefix: "/integrations/extensions/v1/", shared: true, create: func(f *fixtureRun) string {
			return "kubernetes"
		}},
		{param: "id", prefix: "/integrations/extensions/v1/deployed/", create: func(f *fixtureRun) string {
			f.send(http.MethodPut, "/mgmt/openapi/3/integrations/extensions/v1/deployed?id=kubernetes&version=2.1.0"+
				"&item_ids=k8s-cluster-dashboard&item_ids=k8s-container-logs", "")
			return "kubernetes"
		}},
		{param: "id", prefix: "/events2metrics/events2metrics/v2/", create: func(f *fixtureRun) string {
			return f.created("CreateE2M", nil, "id")
		}},
		{param: "id", prefix: "/cases/cases/case-settings/v1/configs/", create: func(f *fixtureRun) string {
			return f.created("CreateCaseSettings", nil, "id")
		}},
		{param: "id", prefix: "/alerts/alerts/v3/", create: func(f *fixtureRun) string {
			return f.created("CreateAlertDef", nil, "id")
		}},
		{param: "alert_version_id", create: func(f *fixtureRun) string {
			return f.created("CreateAlertDef", nil, "alertVersionId")
		}},
		{param: "id", prefix: "/notifications/notification-center/v1/connectors/", create: func(f *fixtureRun) string {
			return f.connector()
		}},
		{param: "alert_scheduler_rule_id", create: func(f *fixtureRun) string {
			return f.created("CreateAlertSchedulerRule", nil, "uniqueIdentifier")
		}},
		{param: "id", prefix: "/notifications/notification-center/v1/routers/", create: func(f *fixtureRun) string {
			// A router's targets must name a connector of the team: one of its own, whose id the
			// leak check looks for too (of, the caller, holds f.mu).
			connector := f.connector()
			f.ids = append(f.ids, connector)
			return f.posted("/notifications/notification-center/v1/routers",
				`{"router":{"name":"qx7 router","entityType":"ALERTS","rules":[{"condition":"alertDef.priority == 'P1'",`+
					`"targets":[{"connectorId":"`+connector+`"}]}]}}`)
		}},
		{param: "id", prefix: "/alerts/events/v3/", create: func(f *fixtureRun) string {
			return f.alertEvent()
		}},
		{param: "id", prefix: "/v3/alert-event/", create: func(f *fixtureRun) string {
			return f.value("id", "/alerts/events/v3/")
		}},
		{param: "id", prefix: "/integrations/webhooks/v1/", create: func(f *fixtureRun) string {
			// a generic webhook whose URL refuses at once, as the connector's (the matrix tests it)
			return f.posted("/integrations/webhooks/v1",
				`{"data":{"name":"qx7 webhook","type":"GENERIC","url":"http://127.0.0.1:9/qx7","genericWebhook":{"method":"POST"}}}`)
		}},
		{param: "type", prefix: "/integrations/webhook-types/v1/", shared: true, create: func(f *fixtureRun) string {
			return "SLACK"
		}},
		// integrations: an instance of a managed integration (the save's example) and of a
		// contextual data integration; the details take an instance's id as well as a key.
		{param: "id", prefix: "/integrations/integrations/v1/definitions/", shared: true, create: func(f *fixtureRun) string {
			return "aws-metrics-collector"
		}},
		{param: "integration_id", prefix: "/integrations/integrations/v1/deployed/", create: func(f *fixtureRun) string {
			return f.created("SaveIntegration", nil, "integrationId")
		}},
		{param: "integration_id", prefix: "/integrations/integrations/v1/instances/", create: func(f *fixtureRun) string {
			return f.value("integration_id", "/integrations/integrations/v1/deployed/")
		}},
		{param: "integration_id", prefix: "/integrations/managed/v1/", create: func(f *fixtureRun) string {
			return f.value("integration_id", "/integrations/integrations/v1/deployed/")
		}},
		{param: "id", prefix: "/integrations/integrations/v1/", create: func(f *fixtureRun) string {
			return f.value("integration_id", "/integrations/integrations/v1/deployed/")
		}},
		{param: "id", prefix: "/integrations/contextual-data/v1/definitions/", shared: true, create: func(f *fixtureRun) string {
			return "github-contextual-data"
		}},
		{param: "id", prefix: "/integrations/contextual-data/v1/", create: func(f *fixtureRun) string {
			return f.created("SaveContextualDataIntegration", nil, "integrationId")
		}},
		{param: "integration_id", prefix: "/integrations/contextual-data/v1/test/", create: func(f *fixtureRun) string {
			return f.value("id", "/integrations/contextual-data/v1/")
		}},
		{param: "user_account_id", create: func(f *fixtureRun) string {
			members := fmt.Sprintf("/mgmt/openapi/latest/aaa/teams/v2/%d/", f.teamID)
			f.send(http.MethodPost, members+"members", `{"userTemplate":{"username":"qx7-member@example.com","firstName":"qx7"}}`)
			return firstProperty(f.send(http.MethodGet, members+"search?username=qx7-member", ""), "userAccountId")
		}},
		{param: "group_id", prefix: "/aaa/team-groups/v2/", create: func(f *fixtureRun) string {
			return firstProperty(f.send(http.MethodPost, "/mgmt/openapi/latest/aaa/team-groups/v2",
				`{"name":"qx7 group","roleId":3}`), "groupId")
		}},
		{param: "name", prefix: "/aaa/team-groups/v2/name/", create: func(f *fixtureRun) string {
			f.value("group_id", "/aaa/team-groups/v2/")
			return "qx7 group"
		}},
		{param: "id", prefix: "/aaa/team-scopes/v1/", create: func(f *fixtureRun) string {
			return f.created("CreateScope", nil, "id")
		}},
		{param: "id", prefix: "/ai/applications/v3/", create: func(f *fixtureRun) string {
			return f.aiApplication()
		}},
		{param: "application_id", prefix: "/ai/", create: func(f *fixtureRun) string {
			return f.value("id", "/ai/applications/v3/")
		}},
		{param: "id", prefix: "/ai/custom-evaluations/v3/", create: func(f *fixtureRun) string {
			return f.posted("/ai/custom-evaluations/v3", `{"name":"`+leakMarker+` policy","policyType":"quality",`+
				`"instructions":"Does {response} stay on topic?","description":"`+leakMarker+`"}`)
		}},
		{param: "id", prefix: "/ai/evaluations/v3/", create: func(f *fixtureRun) string {
			return f.posted("/ai/evaluations/v3", `{"application":"`+leakMarker+`","target":"RESPONSE",`+
				`"config":{"competition":{"competitors":["`+leakMarker+`"]}}}`)
		}},
		{param: "id", prefix: "/enrichment-rules/custom-enrichment-rules/v1/", create: func(f *fixtureRun) string {
			// A data set whose description and one cell carry the leak marker (its name allows no
			// hyphen), named by a custom enrichment of team A, so that team A's enrichments are
			// compared before and after the probes too.
			id := firstProperty(f.send(http.MethodPost, "/mgmt/openapi/latest/enrichment-rules/custom-enrichment-rules/v1",
				`{"name":"qx7_offices","description":"offices `+leakMarker+`","file":{"textual":"prefix,city\n10.1.,`+leakMarker+`\n"}}`), "id")
			f.send(http.MethodPost, "/mgmt/openapi/latest/enrichment-rules/enrichment-rules/v1",
				`{"requestEnrichments":[{"fieldName":"qx7.ip","enrichmentType":{"customEnrichment":{"id":`+id+`}},"selectedColumns":["city"]}]}`)
			return id
		}},
		{param: "id", prefix: "/actions/actions/v2/", create: func(f *fixtureRun) string {
			return f.created("CreateAction", nil, "id")
		}},
	}
}

// alertEvent ingests the firing of an alert of an alert definition (its alert_def_id label) and
// returns the id of the event it records in the feed.
func (f *fixtureRun) alertEvent() string {
	f.send(http.MethodPost, "/ingest/alertmanager/v1", `{"version":"4","groupKey":"qx7-group","status":"firing",`+
		`"receiver":"qx7","groupLabels":{"alertname":"qx7"},"commonLabels":{},"commonAnnotations":{},"externalURL":"",`+
		`"alerts":[{"status":"firing","labels":{"alertname":"qx7","alert_def_id":"qx7-definition"},"annotations":{},`+
		`"startsAt":"2026-11-20T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"qx7fingerprint"}]}`)
	answer := f.send(http.MethodGet, "/mgmt/openapi/latest/alerts/events/v3?filter[timestamp][from]=2026-11-20T00:00:00Z"+
		"&filter[timestamp][to]=2026-11-21T00:00:00Z", "")
	id := firstProperty(answer, "platformEventKey")
	if id == "" {
		f.fail("the ingested alert recorded no alert event")
	}
	return id
}

// connector creates a generic connector whose URL refuses at once (port 9 of loopback, which
// the test server may reach): the matrix calls the testing operations, which send for real, and
// the document's example host would wait on a DNS lookup that this machine cannot make.
func (f *fixtureRun) connector() string {
	return f.posted("/notifications/notification-center/v1/connectors",
		`{"connector":{"name":"qx7 connector","type":"GENERIC_HTTPS","connectorConfig":{"fields":[`+
			`{"fieldName":"url","value":"http://127.0.0.1:9/qx7"}]}}}`)
}

// aiApplication registers an AI application of team A through the operator API (the public
// operations only read and delete them) and returns its id.
func (f *fixtureRun) aiApplication() string {
	f.t.Helper()
	res := f.env.Do(f.t, http.MethodPost, "/admin/v1/teams/"+strconv.FormatInt(f.teamID, 10)+"/ai-applications",
		"Bearer "+apitest.OperatorKey, "application/json", `{"application":"`+leakMarker+`","subsystem":"qx7"}`)
	var answer any
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
		f.fail("register an AI application: %d %.500s", res.Status, res.Body)
	}
	return firstProperty(answer, "id")
}

// posted creates a resource of team A with body at path (under /mgmt/openapi/latest) and returns
// its id.
func (f *fixtureRun) posted(path, body string) string {
	f.t.Helper()
	res := f.env.JSON(f.t, http.MethodPost, "/mgmt/openapi/latest"+path, f.key, body)
	var answer any
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
		f.fail("POST %s: %d %.500s", path, res.Status, res.Body)
	}
	return firstProperty(answer, "id")
}

// fixture gives a path parameter its value; see fixtures.
type fixture struct {
	param  string
	prefix string
	shared bool
	// create makes the resource in team A (through f) and returns its id; it calls f.fail when it
	// cannot.
	create func(f *fixtureRun) string
}

func (x fixture) key() string { return x.prefix + "{" + x.param + "}" }

// fixtureFor finds the entry for the parameter p of op: ok is false when there is none.
func fixtureFor(op operation, name string) (fixture, bool) {
	before, _, _ := strings.Cut(versionless(op.Path), "{"+name+"}")
	best, found := fixture{}, false
	for _, x := range fixtures {
		if x.param == name && strings.HasPrefix(before, x.prefix) && (!found || len(x.prefix) > len(best.prefix)) {
			best, found = x, true
		}
	}
	return best, found
}

// leakMarker is put into the names and descriptions of what the fixtures create, so that an
// answer to another team that carries it shows a leak even where ids are not unique.
const leakMarker = "qx7-team-a-only"

// fixtureRun creates the fixtures of one team (team A) on one server, each once.
type fixtureRun struct {
	t      testing.TB
	env    *apitest.Env
	doc    *document
	ops    map[string]operation
	key    string // holds every permission in the team
	teamID int64
	slug   string // the slugName of the dashboard fixture

	mu     sync.Mutex
	values map[string]string // by fixture key
	ids    []string          // team A's key value and every id the fixtures created, for the leak check
}

// value returns the value of the fixture for param after prefix, creating it the first time.
func (f *fixtureRun) value(param, prefix string) string {
	f.t.Helper()
	for _, x := range fixtures {
		if x.param == param && x.prefix == prefix {
			return f.of(x)
		}
	}
	f.fail("no fixture %s%s", prefix, "{"+param+"}")
	return ""
}

func (f *fixtureRun) of(x fixture) string {
	f.t.Helper()
	if v, ok := f.values[x.key()]; ok {
		return v
	}
	v := x.create(f)
	if v == "" {
		f.fail("fixture %s created nothing", x.key())
	}
	f.values[x.key()] = v
	if !x.shared {
		f.ids = append(f.ids, v)
	}
	return v
}

func (f *fixtureRun) fail(format string, args ...any) {
	f.t.Helper()
	f.t.Fatalf("fixtures (internal/blackbox/fixtures_test.go): "+format, args...)
}

// send sends a request as team A and returns the decoded answer; anything but a 200 fails.
func (f *fixtureRun) send(method, path, body string) any {
	f.t.Helper()
	res := f.env.JSON(f.t, method, path, f.key, body)
	var answer any
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
		f.fail("%s %s: %d %.500s", method, path, res.Status, res.Body)
	}
	return answer
}

// created sends the example body of the operation (with leakMarker in its names and
// descriptions, unless then refused) and returns the first property called idKey in the answer.
func (f *fixtureRun) created(operationID string, pathArgs map[string]string, idKey string) string {
	f.t.Helper()
	op, ok := f.ops[operationID]
	if !ok {
		f.fail("the document has no operation %s", operationID)
	}
	path := fillPath(op.Path, pathArgs)
	example := op.Example
	if example == nil && op.Body != nil {
		example = f.doc.Minimal(op.Body)
	}
	marked := withMarker(example, "", 0)
	if m, ok := marked.(map[string]any); ok && operationID == "CreateDashboard" {
		f.slug = "qx7-slug-team-a"
		if d, ok := m["dashboard"].(map[string]any); ok {
			d["slugName"] = f.slug
		}
	}
	body, _ := json.Marshal(marked)
	res := f.env.JSON(f.t, op.Method, path, f.key, string(body))
	if res.Status != http.StatusOK {
		f.t.Logf("%s refused the marked example (%d %.300s); sending it as written", operationID, res.Status, res.Body)
		body, _ = json.Marshal(example)
		res = f.env.JSON(f.t, op.Method, path, f.key, string(body))
	}
	var answer any
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
		f.fail("%s %s %s: %d %.500s", operationID, op.Method, path, res.Status, res.Body)
	}
	id := firstProperty(answer, idKey)
	if id == "" {
		f.fail("%s: no %q in the answer %.500s", operationID, idKey, res.Body)
	}
	return id
}

// listed returns the first property called idKey in the answer of a read.
func (f *fixtureRun) listed(operationID string, pathArgs map[string]string, idKey string) string {
	f.t.Helper()
	op, ok := f.ops[operationID]
	if !ok {
		f.fail("the document has no operation %s", operationID)
	}
	answer := f.send(op.Method, fillPath(op.Path, pathArgs), "")
	id := firstProperty(answer, idKey)
	if id == "" {
		f.fail("%s: no %q in the answer", operationID, idKey)
	}
	return id
}

// withMarker appends leakMarker to every string property called name, title, description or
// summary, at any depth.
func withMarker(v any, key string, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = withMarker(e, k, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withMarker(e, "", depth+1)
		}
		return out
	case string:
		if slices.Contains([]string{"name", "title", "description", "summary"}, key) && len(x) < 60 {
			return x + " " + leakMarker
		}
	}
	return v
}

// firstProperty finds the shallowest property called key (breadth first) and returns its value as
// text: a string as is, a whole number in decimal.
func firstProperty(v any, key string) string {
	level := []any{v}
	for len(level) > 0 {
		var next []any
		for _, n := range level {
			switch x := n.(type) {
			case map[string]any:
				switch id := x[key].(type) {
				case string:
					if id != "" {
						return id
					}
				case float64:
					return strconv.FormatFloat(id, 'f', -1, 64)
				}
				for _, e := range x {
					next = append(next, e)
				}
			case []any:
				next = append(next, x...)
			}
		}
		level = next
	}
	return ""
}

// fillPath puts the arguments into a path template, escaped.
func fillPath(template string, args map[string]string) string {
	for name, v := range args {
		template = strings.ReplaceAll(template, "{"+name+"}", url.PathEscape(v))
	}
	return template
}

// pathArguments gives every path parameter of op its fixture's value. missing lists the
// parameters without a fixture, each with the registry entry to add; teamOwned says whether one
// of the values names a resource of team A.
func (f *fixtureRun) pathArguments(op operation) (args map[string]string, teamOwned bool, missing []string) {
	f.t.Helper()
	args = map[string]string{}
	for _, p := range op.PathParams() {
		x, ok := fixtureFor(op, p.Name)
		if !ok {
			before, _, _ := strings.Cut(versionless(op.Path), "{"+p.Name+"}")
			missing = append(missing, fmt.Sprintf("%s: path parameter %q has no fixture; add {param: %q, prefix: %q, create: …} "+
				"to fixtures in internal/blackbox/fixtures_test.go", op, p.Name, p.Name, before))
			continue
		}
		f.mu.Lock()
		args[p.Name] = f.of(x)
		f.mu.Unlock()
		if !x.shared {
			teamOwned = true
		}
	}
	return args, teamOwned, missing
}

// TestFixtureRegistry checks the registry itself, without a server: an operation whose path
// parameter has no entry is reported with the entry to add, and every entry serves at least one
// operation of the document (an entry left behind by a removed operation is reported too).
func TestFixtureRegistry(t *testing.T) {
	f := &fixtureRun{t: t, values: map[string]string{}}
	unknown := operation{ID: "GetWidget", Method: http.MethodGet, Path: "/mgmt/openapi/5/widgets/v1/{widget_id}",
		Params: []parameter{{Name: "widget_id", In: "path", Required: true}}}
	_, _, missing := f.pathArguments(unknown)
	want := `GetWidget (GET /mgmt/openapi/5/widgets/v1/{widget_id}): path parameter "widget_id" has no fixture; ` +
		`add {param: "widget_id", prefix: "/widgets/v1/", create: …} to fixtures in internal/blackbox/fixtures_test.go`
	if len(missing) != 1 || missing[0] != want {
		t.Errorf("missing fixture reported as %q, want %q", missing, want)
	}

	used := map[string]bool{}
	for _, op := range operations(t, loadDocument(t)) {
		for _, p := range op.PathParams() {
			if x, ok := fixtureFor(op, p.Name); ok {
				used[x.key()] = true
			}
		}
	}
	for _, x := range fixtures {
		if !used[x.key()] {
			t.Errorf("fixture %s serves no operation of api/openapi.yaml; remove it", x.key())
		}
	}
}
