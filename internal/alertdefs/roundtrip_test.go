package alertdefs_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/conformance"
)

var update = flag.Bool("update", false, "rewrite testdata/types from the public document's schema")

// typeBlocks are the 15 type blocks of AlertDefProperties, with their types.
var typeBlocks = map[string]string{
	"logsImmediate":             "ALERT_DEF_TYPE_LOGS_IMMEDIATE_OR_UNSPECIFIED",
	"logsThreshold":             "ALERT_DEF_TYPE_LOGS_THRESHOLD",
	"logsAnomaly":               "ALERT_DEF_TYPE_LOGS_ANOMALY",
	"logsRatioThreshold":        "ALERT_DEF_TYPE_LOGS_RATIO_THRESHOLD",
	"logsNewValue":              "ALERT_DEF_TYPE_LOGS_NEW_VALUE",
	"logsUniqueCount":           "ALERT_DEF_TYPE_LOGS_UNIQUE_COUNT",
	"logsTimeRelativeThreshold": "ALERT_DEF_TYPE_LOGS_TIME_RELATIVE_THRESHOLD",
	"metricThreshold":           "ALERT_DEF_TYPE_METRIC_THRESHOLD",
	"metricAnomaly":             "ALERT_DEF_TYPE_METRIC_ANOMALY",
	"tracingImmediate":          "ALERT_DEF_TYPE_TRACING_IMMEDIATE",
	"tracingThreshold":          "ALERT_DEF_TYPE_TRACING_THRESHOLD",
	"flow":                      "ALERT_DEF_TYPE_FLOW",
	"sloThreshold":              "ALERT_DEF_TYPE_SLO_THRESHOLD",
	"analyticsImmediate":        "ALERT_DEF_TYPE_ANALYTICS_IMMEDIATE",
	"analyticsThreshold":        "ALERT_DEF_TYPE_ANALYTICS_THRESHOLD",
}

// Placeholders in generated bodies, replaced by ids of the test's team before a body is sent.
const (
	phConnector = "${CONNECTOR}"
	phPreset    = "${PRESET}"
	phRouter    = "${ROUTER}"
	phSlo       = "${SLO}"
	phDef       = "${DEF}"
	// phWebhook stands for the externalId (a number) of the team's outgoing webhook that
	// notification groups' webhooks name.
	phWebhook = 900000001
)

// nameWebhook makes every notification group's webhook setting that names an integration name
// phWebhook (the public examples name 123, which the test's team has not).
func nameWebhook(p map[string]any) {
	groups, _ := p["notificationGroupExcess"].([]any)
	if ng, ok := p["notificationGroup"]; ok {
		groups = append(groups, ng)
	}
	for _, ng := range groups {
		hooks, _ := ng.(map[string]any)["webhooks"].([]any)
		for _, h := range hooks {
			if in, ok := h.(map[string]any)["integration"].(map[string]any); ok {
				if _, ok := in["integrationId"]; ok {
					in["integrationId"] = phWebhook
				}
			}
		}
	}
}

// publicDocument is the public alert-definitions document as decoded JSON, or nil when this
// machine has none (the round trip of its examples is then skipped).
func publicDocument(t *testing.T) map[string]any {
	t.Helper()
	dir := os.Getenv(conformance.DirVariable)
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "reference", "public-spec")
	}
	p := filepath.Join(filepath.Dir(filepath.Clean(dir)), "public-spec-latest", "alert_definitions_service.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return doc
}

// generator builds a body from a JSON schema: every property set, one alternative of each one-of,
// each value within its bounds. With examples, a property's `example` is its value (the public
// document's facts); without, values are made from the type, bounds and enumeration alone.
type generator struct {
	schemas  map[string]any
	examples bool
}

var digits = regexp.MustCompile(`^\^-?\??\[0-9\]`)

func (g *generator) resolve(s map[string]any) (map[string]any, string) {
	name := ""
	for {
		if ref, ok := s["$ref"].(string); ok {
			name = ref[strings.LastIndex(ref, "/")+1:]
			s = g.schemas[name].(map[string]any)
			continue
		}
		if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
			s = all[0].(map[string]any)
			continue
		}
		return s, name
	}
}

// value generates a value for schema s at property key; choose names the alternative of a
// one-of to keep (for AlertDefProperties, the type block); depth guards recursion.
func (g *generator) value(key string, s map[string]any, choose string, depth int) any {
	s, name := g.resolve(s)
	if depth > 12 {
		return nil
	}
	switch key {
	case "connectorId":
		return phConnector
	case "presetId":
		return phPreset
	case "sloId":
		return phSlo
	}
	if g.examples {
		if ex, ok := s["example"]; ok && !strings.HasSuffix(name, "Properties") {
			if _, isObj := ex.(map[string]any); !isObj {
				return ex
			}
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		return enum[len(enum)-1]
	}
	switch s["type"] {
	case "string":
		switch {
		case key == "promql":
			return `sum by (service) (rate(http_requests_total{code=~"5.."}[5m]))`
		case key == "metricTimeWindowDynamicDuration":
			return "90m"
		case s["format"] == "date-time":
			return "2026-01-02T03:04:05Z"
		case s["format"] == "byte":
			return "AQID"
		}
		if p, _ := s["pattern"].(string); digits.MatchString(p) {
			return "42"
		} else if strings.Contains(p, "{8}-") {
			return "0190a8b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b"
		}
		v := "value of " + key
		if max, ok := s["maxLength"].(float64); ok && len(v) > int(max) {
			v = v[:int(max)]
		}
		return v
	case "integer":
		min, max := 0.0, 1e9
		if m, ok := s["minimum"].(float64); ok {
			min = m
		}
		if m, ok := s["maximum"].(float64); ok {
			max = m
		}
		v := min + 1
		if v > max {
			v = max
		}
		if key == "hours" || key == "minutes" {
			v = min + 7
		}
		return int64(v)
	case "number":
		return 2.5
	case "boolean":
		return key != "deleted"
	case "array":
		items, _ := s["items"].(map[string]any)
		n := 1
		if m, ok := s["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			out = append(out, g.value(key, items, "", depth+1))
		}
		if key == "dayOfWeek" {
			return []any{"DAY_OF_WEEK_WEDNESDAY", "DAY_OF_WEEK_SATURDAY"}
		}
		return out
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		if add, ok := s["additionalProperties"].(map[string]any); ok {
			return map[string]any{"region": g.value("region", add, "", depth+1)}
		}
		return map[string]any{}
	}
	// A one-of keeps one alternative: choose, else the first.
	drop := map[string]bool{}
	if alts, ok := s["oneOf"].([]any); ok {
		keep := choose
		for _, a := range alts {
			req, _ := a.(map[string]any)["required"].([]any)
			if len(req) == 1 {
				if keep == "" {
					keep = req[0].(string)
				}
				drop[req[0].(string)] = true
			}
		}
		delete(drop, keep)
	}
	out := map[string]any{}
	for k, p := range props {
		if drop[k] || k == "type" && name == "AlertDefProperties" {
			continue
		}
		if v := g.value(k, p.(map[string]any), "", depth+1); v != nil {
			out[k] = v
		}
	}
	return out
}

// properties generates AlertDefProperties with the type block member, its references as
// placeholders.
func (g *generator) properties(member string) map[string]any {
	p := g.value("alertDefProperties", g.schemas["AlertDefProperties"].(map[string]any), member, 0).(map[string]any)
	p["type"] = typeBlocks[member]
	p["name"] = "Generated " + member
	if f, ok := p["flow"].(map[string]any); ok {
		for _, s := range f["stages"].([]any) {
			for _, grp := range s.(map[string]any)["flowStagesGroups"].(map[string]any)["groups"].([]any) {
				for _, a := range grp.(map[string]any)["alertDefs"].([]any) {
					a.(map[string]any)["id"] = phDef
				}
			}
		}
	}
	for _, key := range []string{"notificationGroup"} {
		if ng, ok := p[key].(map[string]any); ok {
			ng["router"].(map[string]any)["id"] = phRouter
		}
	}
	for _, ng := range p["notificationGroupExcess"].([]any) {
		ng.(map[string]any)["router"].(map[string]any)["id"] = phRouter
	}
	nameWebhook(p)
	return p
}

// refs are ids of the team's resources that generated bodies name (webhook: an outgoing
// webhook's externalId).
type refs struct{ connector, preset, router, slo, def, webhook string }

func (r refs) fill(body string) string {
	return strings.NewReplacer(phConnector, r.connector, phPreset, r.preset, phRouter, r.router, phSlo, r.slo, phDef, r.def,
		fmt.Sprintf(`"integrationId":%d`, phWebhook), `"integrationId":`+r.webhook).Replace(body)
}

// teamRefs creates, in the key's team, a Slack connector, a Slack preset, a router, an SLO and a
// definition for generated bodies to name.
func teamRefs(t *testing.T, env *apitest.Env, key string) refs {
	t.Helper()
	const nc = "/mgmt/openapi/latest/notifications/notification-center/v1/"
	var r refs
	hook := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/integrations/webhooks/v1", key,
		`{"data":{"name":"slack","type":"SLACK","url":"https://hooks.example.com/x","slack":{}}}`)).ID
	r.webhook = fmt.Sprint(apitest.Decode[struct{ Webhook struct{ ExternalID int64 } }](t,
		env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/integrations/webhooks/v1/"+hook, key, "")).Webhook.ExternalID)
	r.connector = apitest.Decode[struct{ Connector struct{ ID string } }](t, env.JSON(t, http.MethodPost, nc+"connectors", key,
		`{"connector":{"name":"c","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+hook+`"}]}}}`)).Connector.ID
	r.preset = apitest.Decode[struct{ Preset struct{ ID string } }](t, env.JSON(t, http.MethodPost, nc+"presets:createCustom", key,
		`{"preset":{"name":"p","connectorType":"SLACK","entityType":"ALERTS"}}`)).Preset.ID
	r.router = apitest.Decode[struct{ Router struct{ ID string } }](t, env.JSON(t, http.MethodPost, nc+"routers", key,
		`{"router":{"name":"r","rules":[{"name":"all","condition":"true","targets":[{"connectorId":"`+r.connector+`"}]}]}}`)).Router.ID
	r.slo = apitest.Decode[struct{ Slo struct{ ID string } }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/slo/slos/v1", key, sloBody)).Slo.ID
	r.def = createDef(t, env, key, metricProps).ID
	return r
}

const sloBody = `{"name":"Availability","targetThresholdPercentage":99.5,"sloTimeFrame":"SLO_TIME_FRAME_28_DAYS",` +
	`"requestBasedMetricSli":{"goodEvents":{"query":"sum(rate(http_requests_total{code!~\"5..\"}[5m]))"},` +
	`"totalEvents":{"query":"sum(rate(http_requests_total[5m]))"}}}`

// roundTrip creates props, reads it back (by id, by version, in the list and the download)
// identical to want, replaces it with a new name, reads that back, and deletes it.
func roundTrip(t *testing.T, env *apitest.Env, key, what, props, want string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, defsPath, key, `{"alertDefProperties":`+props+`}`)
	if res.Status != http.StatusOK {
		t.Fatalf("%s: create %d %s\n body %s", what, res.Status, res.Body, props)
	}
	d := apitest.Decode[written](t, res).AlertDef
	sameJSON(t, what+": created", d.AlertDefProperties, []byte(want))
	got := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, key, ""))
	sameJSON(t, what+": read", got.AlertDef.AlertDefProperties, []byte(want))
	v := apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, versionsPath+d.AlertVersionID, key, ""))
	sameJSON(t, what+": version", v.AlertDef.AlertDefProperties, []byte(want))
	dl := apitest.Decode[struct{ Content []byte }](t, env.JSON(t, http.MethodGet, defsPath+"/all/download?ids="+d.ID, key, ""))
	var file struct{ AlertDefs []alertDef }
	if err := json.Unmarshal(dl.Content, &file); err != nil || len(file.AlertDefs) != 1 {
		t.Fatalf("%s: download %s: %v", what, dl.Content, err)
	}
	sameJSON(t, what+": downloaded", file.AlertDefs[0].AlertDefProperties, []byte(want))

	var m map[string]any
	if err := json.Unmarshal([]byte(want), &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "Replaced " + fmt.Sprint(m["name"])
	replacedProps := apitest.JSONOf(t, m)
	r := apitest.Decode[written](t, env.JSON(t, http.MethodPut, defsPath, key, `{"id":"`+d.ID+`","alertDefProperties":`+replacedProps+`}`)).AlertDef
	if r.AlertVersionID == d.AlertVersionID {
		t.Fatalf("%s: the replace kept the version id", what)
	}
	sameJSON(t, what+": replaced", r.AlertDefProperties, []byte(replacedProps))
	got = apitest.Decode[struct{ AlertDef alertDef }](t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, key, ""))
	sameJSON(t, what+": read after replace", got.AlertDef.AlertDefProperties, []byte(replacedProps))
	if res := env.JSON(t, http.MethodDelete, defsPath+"/"+d.ID, key, ""); res.Status != http.StatusOK {
		t.Fatalf("%s: delete %d %s", what, res.Status, res.Body)
	}
	apitest.ExpectError(t, env.JSON(t, http.MethodGet, defsPath+"/"+d.ID, key, ""), http.StatusNotFound)
}

// TestEveryTypeRoundTrips sends, for each of the 15 types, the body of testdata/types (every
// property of the type set), and expects it back exactly: created, read, replaced, deleted.
// -update rewrites the bodies from the public document's schema (types, bounds, enumerations;
// never its examples or prose).
func TestEveryTypeRoundTrips(t *testing.T) {
	members := make([]string, 0, len(typeBlocks))
	for m := range typeBlocks {
		members = append(members, m)
	}
	sort.Strings(members)
	if *update {
		doc := publicDocument(t)
		if doc == nil {
			t.Fatal("-update needs the public document")
		}
		g := &generator{schemas: doc["components"].(map[string]any)["schemas"].(map[string]any)}
		for _, m := range members {
			b, err := json.MarshalIndent(g.properties(m), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "types", m+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "types")
		r := teamRefs(t, env, key)
		for _, m := range members {
			raw, err := os.ReadFile(filepath.Join("testdata", "types", m+".json"))
			if err != nil {
				t.Fatal(err)
			}
			body := r.fill(string(raw))
			roundTrip(t, env, key, m, body, body)
		}
	})
}

// TestPublicExamplesRoundTrip rebuilds, from the public document on this machine, a body per type
// whose values are the document's examples (a property without one gets a value from its type
// and bounds), and the definitions of its answer examples completed with their type's block, and
// round-trips each. Skipped when the document is not on this machine.
func TestPublicExamplesRoundTrip(t *testing.T) {
	doc := publicDocument(t)
	if doc == nil {
		t.Skip("no public alert-definitions document on this machine")
	}
	g := &generator{schemas: doc["components"].(map[string]any)["schemas"].(map[string]any), examples: true}
	// The definitions in the document's examples.
	var examples []map[string]any
	var walk func(v any, inExample bool)
	walk = func(v any, inExample bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if p, ok := c.(map[string]any); ok && inExample && k == "alertDefProperties" {
					examples = append(examples, p)
				}
				walk(c, inExample || k == "example" || k == "examples")
			}
		case []any:
			for _, c := range x {
				walk(c, inExample)
			}
		}
	}
	walk(doc, false)
	if len(examples) == 0 {
		t.Fatal("the public document has no example definition; reading it went wrong")
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "public examples")
		r := teamRefs(t, env, key)
		members := make([]string, 0, len(typeBlocks))
		for m := range typeBlocks {
			members = append(members, m)
		}
		sort.Strings(members)
		for _, m := range members {
			body := r.fill(apitest.JSONOf(t, g.properties(m)))
			roundTrip(t, env, key, "public examples, "+m, body, body)
		}
		for i, ex := range examples {
			p := map[string]any{}
			for k, v := range ex {
				p[k] = v
			}
			typ, _ := p["type"].(string)
			for m, t := range typeBlocks {
				if t == typ && !slices.ContainsFunc(members, func(x string) bool { _, ok := p[x]; return ok }) {
					p[m] = g.properties(m)[m]
				}
			}
			nameWebhook(p)
			body := r.fill(apitest.JSONOf(t, p))
			roundTrip(t, env, key, fmt.Sprintf("public answer example %d", i), body, body)
		}
	})
}
