package ingest_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// The robustness tests send malformed input of every kind to the operations tagged cases,
// incidents and ingestion in api/openapi.yaml, and check that each is refused with a 4xx whose
// body is {code, message} (code equal to the status, a message naming the field), never a 500
// or a panic, and that a refused write changes nothing.

const (
	casesBase     = "/mgmt/openapi/5/cases"
	incidentsBase = "/mgmt/openapi/5/incidents/incidents/v1"
	aggPath       = "/mgmt/openapi/4/incidents/aggregations/v1"
)

// anyClientError accepts any 4xx; anyAnswer accepts any answer below 500 (a 4xx must still be a
// well-formed error).
const (
	anyClientError = 0
	anyAnswer      = -1
)

// probe is one request and what must come back.
type probe struct {
	name   string
	method string
	path   string
	// auth is the Authorization header: "" sends the root key, "-" sends none.
	auth string
	// contentType: "" sends application/json when there is a body, "-" sends none.
	contentType string
	body        string
	status      int
	fragments   []string
}

func (p probe) send(t *testing.T, env *apitest.Env) apitest.Response {
	t.Helper()
	auth := "Bearer " + env.RootKey
	switch p.auth {
	case "-":
		auth = ""
	case "":
	default:
		auth = p.auth
	}
	ct := p.contentType
	switch {
	case ct == "-":
		ct = ""
	case ct == "" && p.body != "":
		ct = "application/json"
	}
	return env.Do(t, p.method, p.path, auth, ct, p.body)
}

// check sends the probe and checks the answer against its expectation.
func (p probe) check(t *testing.T, env *apitest.Env) apitest.Response {
	t.Helper()
	res := p.send(t, env)
	describe := fmt.Sprintf("%s %s (body %s)", p.method, short(p.path, 200), short(p.body, 200))
	if res.Status >= 500 {
		t.Fatalf("%s: status %d, want a 4xx; body %s", describe, res.Status, res.Body)
	}
	switch {
	case p.status == anyAnswer:
		if res.Status < 400 {
			return res
		}
	case p.status == anyClientError:
		if res.Status < 400 || res.Status >= 500 {
			t.Fatalf("%s: status %d, want a 4xx; body %s", describe, res.Status, short(string(res.Body), 300))
		}
	case res.Status != p.status:
		t.Fatalf("%s: status %d, want %d; body %s", describe, res.Status, p.status, short(string(res.Body), 300))
	}
	if res.Status < 400 {
		return res
	}
	expectErrorBody(t, describe, res, p.fragments...)
	return res
}

// expectErrorBody checks that res is {code, message} with code == status, a non-empty message
// holding every fragment, and a JSON Content-Type.
func expectErrorBody(t *testing.T, describe string, res apitest.Response, fragments ...string) {
	t.Helper()
	var body struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil || body.Code == nil || body.Message == nil {
		t.Fatalf("%s: status %d, body is not {code, message}: %s", describe, res.Status, short(string(res.Body), 300))
	}
	if *body.Code != res.Status {
		t.Fatalf("%s: code %d, status %d", describe, *body.Code, res.Status)
	}
	if strings.TrimSpace(*body.Message) == "" {
		t.Fatalf("%s: empty message", describe)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q", describe, ct)
	}
	for _, f := range fragments {
		if !strings.Contains(*body.Message, f) {
			t.Fatalf("%s: status %d, message %q does not name %q", describe, res.Status, *body.Message, f)
		}
	}
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

// fixture is the data every robustness test starts from.
type fixture struct {
	caseID      string // CASE-1's UUID
	commentID   string // a comment event of CASE-1
	createdID   string // CASE-1's created event (not a comment)
	incidentIDs []string
}

func seedFixture(t *testing.T, env *apitest.Env) fixture {
	t.Helper()
	first := send(t, env, env.RootKey, group("seed-1",
		firing("HighLatency", "critical", "api", t0), firing("HighLatency", "warning", "db", t0)))
	send(t, env, env.RootKey, group("seed-2", firing("DiskFull", "info", "store", t0)))
	res := env.JSON(t, http.MethodPost, casesBase+"/cases/v1/CASE-1/comments", env.RootKey, `{"text":"seed comment"}`)
	if res.Status != http.StatusOK {
		t.Fatalf("seed comment: %d %s", res.Status, res.Body)
	}
	var comment struct {
		Event struct {
			EventID string `json:"eventId"`
		} `json:"event"`
	}
	if err := json.Unmarshal(res.Body, &comment); err != nil {
		t.Fatal(err)
	}
	res = env.JSON(t, http.MethodGet, casesBase+"/cases/v1/CASE-1/events", env.RootKey, "")
	var events struct {
		Events []struct {
			EventID   string                     `json:"eventId"`
			EventData map[string]json.RawMessage `json:"eventData"`
		} `json:"events"`
	}
	if err := json.Unmarshal(res.Body, &events); err != nil {
		t.Fatal(err)
	}
	f := fixture{caseID: first.CaseID, commentID: comment.Event.EventID}
	for _, e := range events.Events {
		if _, ok := e.EventData["created"]; ok {
			f.createdID = e.EventID
		}
	}
	for _, inc := range listIncidents(t, env, env.RootKey) {
		f.incidentIDs = append(f.incidentIDs, inc.ID)
	}
	if f.caseID == "" || f.commentID == "" || f.createdID == "" || len(f.incidentIDs) != 3 {
		t.Fatalf("fixture: %+v", f)
	}
	return f
}

// snapshot is the team's whole state as the API shows it: every case with its events and every
// incident with its events, without the durations (which grow with the clock).
func snapshot(t *testing.T, env *apitest.Env) string {
	t.Helper()
	var b strings.Builder
	get := func(method, path, body string) any {
		res := env.JSON(t, method, path, env.RootKey, body)
		if res.Status != http.StatusOK {
			t.Fatalf("snapshot %s %s: %d %s", method, path, res.Status, res.Body)
		}
		var v any
		if err := json.Unmarshal(res.Body, &v); err != nil {
			t.Fatal(err)
		}
		return dropKey(v, "duration")
	}
	cases := get(http.MethodPost, casesBase+"/cases/v1", `{"pagination":{"pageSize":1000}}`)
	out, _ := json.Marshal(cases)
	b.Write(out)
	list, _ := cases.(map[string]any)["cases"].([]any)
	for _, c := range list {
		id, _ := c.(map[string]any)["id"].(string)
		out, _ := json.Marshal(get(http.MethodGet, casesBase+"/cases/v1/"+id+"/events", ""))
		b.Write(out)
	}
	out, _ = json.Marshal(get(http.MethodPost, incidentsBase, `{"pagination":{"pageSize":10000}}`))
	b.Write(out)
	return b.String()
}

func dropKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for k, e := range x {
			x[k] = dropKey(e, key)
		}
	case []any:
		for i, e := range x {
			x[i] = dropKey(e, key)
		}
	}
	return v
}

// unchanged runs fn and fails when the state differs afterwards.
func unchanged(t *testing.T, env *apitest.Env, fn func(t *testing.T)) {
	t.Helper()
	before := snapshot(t, env)
	fn(t)
	if after := snapshot(t, env); after != before {
		t.Errorf("refused requests changed the state:\nbefore %s\nafter  %s", short(before, 3000), short(after, 3000))
	}
}

func runProbes(t *testing.T, env *apitest.Env, probes []probe) {
	t.Helper()
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) { p.check(t, env) })
	}
}

// withField returns the JSON document body with the value at path (dot separated, numbers index
// arrays) replaced by raw, or removed when raw is "".
func withField(t *testing.T, body, path, raw string) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("withField: %v", err)
	}
	segs := strings.Split(path, ".")
	cur := doc
	for i, s := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if raw == "" {
					delete(c, s)
				} else {
					c[s] = placeholder
				}
				continue
			}
			next, ok := c[s]
			if !ok {
				next = map[string]any{}
				c[s] = next
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(s)
			if err != nil || n >= len(c) {
				t.Fatalf("withField: %s is not an index of %s", s, path)
			}
			if last {
				c[n] = placeholder
				continue
			}
			cur = c[n]
		default:
			t.Fatalf("withField: %s is not a container", path)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("withField: %v", err)
	}
	return strings.Replace(string(out), `"`+placeholder+`"`, raw, 1)
}

// placeholder stands for a raw value in withField until the document is encoded.
const placeholder = "\u2063raw\u2063"

// field is one body field of an operation: its path in the body, its kind and the name that a
// message about it must contain.
type field struct {
	path string
	kind string // string, enum, array, object, int, bool, datetime
	max  int    // maxLength of a string (0: none documented)
	name string // fragment of the message; the last segment of path when empty
}

// wrongValues are values of the wrong JSON type (and bad values) for a kind. A null is not one:
// it is "not set" (docs/decisions.md; internal/api TestEveryNullIsNotSet), as if the field had
// not been sent.
func wrongValues(kind string) map[string]string {
	common := map[string]string{}
	switch kind {
	case "string", "enum", "datetime":
		common["number"] = `123`
		common["bool"] = `true`
		common["object"] = `{"a":"b"}`
		common["array"] = `["a"]`
		if kind == "enum" {
			common["unknown enum"] = `"NOPE"`
			common["lowercase enum"] = `"case_priority_p1"`
			common["enum with space"] = `" INCIDENT_SEVERITY_INFO"`
		}
		if kind == "datetime" {
			common["not a date"] = `"yesterday"`
			common["month 13"] = `"2026-13-01T00:00:00Z"`
			common["no zone"] = `"2026-01-01T00:00:00"`
		}
	case "array":
		common["object"] = `{"a":"b"}`
		common["string"] = `"a"`
		common["number"] = `1`
		common["nested arrays"] = `[[[["a"]]]]`
	case "object":
		common["array"] = `[]`
		common["string"] = `"a"`
		common["number"] = `1`
	case "int":
		common["string"] = `"10"`
		common["float"] = `1.5`
		common["exponent"] = `1e3`
		common["overflow"] = `99999999999999999999`
		common["object"] = `{}`
		common["bool"] = `true`
	case "bool":
		common["string"] = `"true"`
		common["number"] = `1`
	}
	return common
}

// bodyOp is an operation with a JSON body.
type bodyOp struct {
	name     string
	method   string
	path     string
	valid    string // a valid body
	optional bool   // the body may be omitted
	fields   []field
}

func bodyOps(f fixture) []bodyOp {
	ids := fmt.Sprintf(`{"incidentIds":[%q]}`, f.incidentIDs[0])
	return []bodyOp{
		{name: "ListCases", method: http.MethodPost, path: casesBase + "/cases/v1", optional: true,
			valid: `{"filters":{"statuses":["CASE_STATUS_ACTIVE"],"textSearch":"x","dateRange":{"from":"2026-01-01T00:00:00Z","to":"2027-01-01T00:00:00Z"},"labels":[{"key":"k","values":["v"]}],"assignees":[{"assignee":"u"}]},"orderBy":{"field":"CASE_ORDER_BY_FIELD_PRIORITY","direction":"CASE_ORDER_BY_DIRECTION_ASCENDING"},"pagination":{"pageSize":10}}`,
			fields: []field{
				{path: "filters", kind: "object"},
				{path: "filters.statuses", kind: "array"},
				{path: "filters.priorities", kind: "array"},
				{path: "filters.breached", kind: "array"},
				{path: "filters.labels", kind: "array"},
				{path: "filters.assignees", kind: "array"},
				{path: "filters.textSearch", kind: "string", max: 4096},
				{path: "filters.dateRange", kind: "object"},
				{path: "filters.dateRange.from", kind: "datetime", name: "from"},
				{path: "orderBy", kind: "object"},
				{path: "orderBy.field", kind: "enum"},
				{path: "orderBy.direction", kind: "enum"},
				{path: "pagination", kind: "object"},
				{path: "pagination.pageSize", kind: "int"},
				{path: "pagination.pageToken", kind: "string", max: 4096},
			}},
		{name: "UpdateCase", method: http.MethodPut, path: casesBase + "/cases/v1/CASE-1",
			valid: `{"title":"new title"}`,
			fields: []field{
				{path: "title", kind: "string", max: 512},
				{path: "priorityOverride", kind: "enum"},
				{path: "resolutionReason", kind: "string", max: 500},
			}},
		{name: "CreateCaseComment", method: http.MethodPost, path: casesBase + "/cases/v1/CASE-1/comments",
			valid: `{"text":"a comment"}`,
			fields: []field{
				{path: "text", kind: "string", max: 10000},
				{path: "attachments", kind: "array"},
			}},
		{name: "UpdateCaseComment", method: http.MethodPut, path: casesBase + "/events/v1/" + f.commentID + "/comments",
			valid: `{"text":"edited"}`,
			fields: []field{
				{path: "text", kind: "string", max: 10000},
				{path: "attachments", kind: "array"},
			}},
		{name: "AssignCase", method: http.MethodPost, path: casesBase + "/assigned/v1/CASE-1",
			valid: `{"assignee":{"userId":"0b0c0d0e-0000-4000-8000-000000000001"}}`,
			fields: []field{
				{path: "assignee", kind: "object"},
				{path: "assignee.userId", kind: "string", name: "userId"},
			}},
		{name: "ResolveCase", method: http.MethodPut, path: casesBase + "/resolved/v1/CASE-1", optional: true,
			valid: `{"reason":"fixed"}`,
			fields: []field{
				{path: "reason", kind: "string", max: 500},
			}},
		{name: "ListIncidents", method: http.MethodPost, path: incidentsBase, optional: true,
			valid: `{"filter":{"severity":["INCIDENT_SEVERITY_INFO"],"contextualLabels":{"service":{"contextualLabelValues":["api"]}}},"orderBys":[{"incidentField":"INCIDENTS_FIELDS_NAME","direction":"ORDER_BY_DIRECTION_ASC"}],"pagination":{"pageSize":10}}`,
			fields: []field{
				{path: "filter", kind: "object"},
				{path: "filter.severity", kind: "array"},
				{path: "filter.state", kind: "array"},
				{path: "filter.contextualLabels", kind: "object"},
				{path: "filter.contextualLabels.service", kind: "object", name: "service"},
				{path: "filter.metaLabelsOp", kind: "enum"},
				{path: "filter.isMuted", kind: "bool"},
				{path: "filter.startTime", kind: "datetime"},
				{path: "orderBys", kind: "array"},
				{path: "pagination", kind: "object"},
				{path: "pagination.pageSize", kind: "int"},
				{path: "pagination.pageToken", kind: "string", max: 4096},
			}},
		{name: "AcknowledgeIncidents", method: http.MethodPost, path: incidentsBase + "/all/acknowledge", valid: ids,
			fields: []field{{path: "incidentIds", kind: "array"}}},
		{name: "ResolveIncidents", method: http.MethodPost, path: incidentsBase + "/all/resolve", valid: ids,
			fields: []field{{path: "incidentIds", kind: "array"}}},
		{name: "CloseIncidents", method: http.MethodPost, path: incidentsBase + "/all/closed", valid: ids,
			fields: []field{{path: "incidentIds", kind: "array"}}},
		{name: "AssignIncidents", method: http.MethodPost, path: incidentsBase + "/all/by-user",
			valid: fmt.Sprintf(`{"incidentIds":[%q],"assignedTo":{"userId":"someone"}}`, f.incidentIDs[0]),
			fields: []field{
				{path: "incidentIds", kind: "array"},
				{path: "assignedTo", kind: "object"},
				{path: "assignedTo.userId", kind: "string", max: 300, name: "userId"},
			}},
		{name: "IngestAlertmanager", method: http.MethodPost, path: ingestPath,
			valid: mustJSON(group("robust", firing("Robust", "warning", "svc", t0))),
			fields: []field{
				{path: "version", kind: "enum"},
				{path: "groupKey", kind: "string", max: 4096},
				{path: "truncatedAlerts", kind: "int"},
				{path: "status", kind: "enum"},
				{path: "receiver", kind: "string", max: 256},
				{path: "groupLabels", kind: "object"},
				{path: "commonLabels", kind: "object"},
				{path: "commonAnnotations", kind: "object"},
				{path: "externalURL", kind: "string", max: 4096},
				{path: "alerts", kind: "array"},
				{path: "alerts.0.status", kind: "enum", name: "status"},
				{path: "alerts.0.labels", kind: "object", name: "labels"},
				{path: "alerts.0.annotations", kind: "object", name: "annotations"},
				{path: "alerts.0.startsAt", kind: "datetime", name: "startsAt"},
				{path: "alerts.0.endsAt", kind: "datetime", name: "endsAt"},
				{path: "alerts.0.generatorURL", kind: "string", max: 4096, name: "generatorURL"},
				{path: "alerts.0.fingerprint", kind: "string", max: 64, name: "fingerprint"},
			}},
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func lastSegment(path string) string {
	segs := strings.Split(path, ".")
	return segs[len(segs)-1]
}

// nested is depth levels of arrays around a string.
func nested(depth int) string {
	return strings.Repeat("[", depth) + `"x"` + strings.Repeat("]", depth)
}

// malformedBodies are bodies that no operation accepts (its valid body is the base of a few).
func malformedBodies(t *testing.T, op bodyOp) []probe {
	var out []probe
	add := func(name, ct, body string, status int, fragments ...string) {
		out = append(out, probe{name: name, method: op.method, path: op.path, contentType: ct, body: body,
			status: status, fragments: fragments})
	}
	if !op.optional {
		add("empty body", "application/json", "", http.StatusBadRequest, "body")
		add("empty body without Content-Type", "-", "", anyClientError)
	}
	add("truncated JSON", "", `{"a":`, http.StatusBadRequest)
	add("not JSON", "", `not json`, http.StatusBadRequest)
	add("array", "", `[]`, http.StatusBadRequest)
	add("string", "", `"text"`, http.StatusBadRequest)
	add("number", "", `42`, http.StatusBadRequest)
	add("two documents", "", op.valid+op.valid, http.StatusBadRequest)
	add("trailing garbage", "", op.valid+"x", http.StatusBadRequest)
	add("invalid UTF-8", "", strings.Replace(op.valid, `"`, "\"\xff\xfe", 2), http.StatusBadRequest, "UTF-8")
	add("NUL in a key", "", `{"a\u0000b":"x"}`, http.StatusBadRequest, "NUL")
	add("deeply nested", "", strings.Repeat(`{"a":`, 100000)+"1"+strings.Repeat("}", 100000), http.StatusBadRequest)
	add("deeply nested arrays", "", nested(500000), http.StatusBadRequest)
	add("text/plain", "text/plain", op.valid, http.StatusUnsupportedMediaType, "Content-Type")
	add("form", "application/x-www-form-urlencoded", op.valid, http.StatusUnsupportedMediaType, "Content-Type")
	add("no Content-Type", "-", op.valid, http.StatusUnsupportedMediaType, "Content-Type")
	add("malformed Content-Type", "application/json; charset", op.valid, http.StatusUnsupportedMediaType, "Content-Type")
	add("json suffix type", "application/problem+json", op.valid, http.StatusUnsupportedMediaType, "Content-Type")
	add("no key", "", op.valid, http.StatusUnauthorized)
	out[len(out)-1].auth = "-"
	add("unknown key", "", op.valid, http.StatusUnauthorized)
	out[len(out)-1].auth = "Bearer mgmt_nope"
	for _, f := range op.fields {
		name := f.name
		if name == "" {
			name = lastSegment(f.path)
		}
		values := wrongValues(f.kind)
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add(f.path+" "+k, "", withField(t, op.valid, f.path, values[k]), http.StatusBadRequest, name)
		}
		if f.kind == "string" || f.kind == "enum" {
			add(f.path+" deeply nested", "", withField(t, op.valid, f.path, nested(10000)), http.StatusBadRequest, name)
			add(f.path+" NUL", "", withField(t, op.valid, f.path, `"a\u0000b"`), http.StatusBadRequest, name)
		}
		if f.max > 0 {
			add(f.path+" beyond maxLength", "", withField(t, op.valid, f.path, strconv.Quote(strings.Repeat("é", f.max+1))),
				http.StatusBadRequest, name)
		}
	}
	return out
}

// TestRobustBodies sends malformed bodies to every operation that has one, then checks that the
// state is as before.
func TestRobustBodies(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := seedFixture(t, env)
		for _, op := range bodyOps(f) {
			t.Run(op.name, func(t *testing.T) {
				unchanged(t, env, func(t *testing.T) { runProbes(t, env, malformedBodies(t, op)) })
			})
		}
	})
}

// TestRobustBodyRules sends bodies that are JSON of the right shape but break a documented rule.
func TestRobustBodyRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := seedFixture(t, env)
		inc := f.incidentIDs[0]
		bad400 := func(name, method, path, body string, fragments ...string) probe {
			return probe{name: name, method: method, path: path, body: body, status: http.StatusBadRequest, fragments: fragments}
		}
		manyIDs := func(n int, first string) string {
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
			}
			if first != "" {
				ids[0] = first
			}
			return `{"incidentIds":` + mustJSON(ids) + `,"assignedTo":{"userId":"u"}}`
		}
		var probes []probe
		for _, p := range []string{"acknowledge", "resolve", "closed", "by-user"} {
			path := incidentsBase + "/all/" + p
			probes = append(probes,
				bad400(p+" no ids", http.MethodPost, path, `{"incidentIds":[],"assignedTo":{"userId":"u"}}`, "incidentIds"),
				bad400(p+" not a uuid", http.MethodPost, path, `{"incidentIds":["not-a-uuid"],"assignedTo":{"userId":"u"}}`, "incidentIds"),
				bad400(p+" 35 chars", http.MethodPost, path, `{"incidentIds":["`+inc[:35]+`"],"assignedTo":{"userId":"u"}}`, "incidentIds"),
				bad400(p+" 37 chars", http.MethodPost, path, `{"incidentIds":["`+inc+`0"],"assignedTo":{"userId":"u"}}`, "incidentIds"),
				bad400(p+" 10001 ids", http.MethodPost, path, manyIDs(10001, ""), "incidentIds"),
				bad400(p+" missing incidentIds", http.MethodPost, path, `{"assignedTo":{"userId":"u"}}`, "incidentIds"),
				probe{name: p + " 10000 unknown ids", method: http.MethodPost, path: path, body: manyIDs(10000, ""),
					status: http.StatusNotFound, fragments: []string{"incidentIds"}},
				probe{name: p + " a known id among unknown ones", method: http.MethodPost, path: path, body: manyIDs(3, inc),
					status: http.StatusNotFound, fragments: []string{"incidentIds"}},
			)
		}
		by := incidentsBase + "/all/by-user"
		probes = append(probes,
			bad400("assign without assignedTo", http.MethodPost, by, `{"incidentIds":["`+inc+`"]}`, "assignedTo"),
			bad400("assign empty userId", http.MethodPost, by, `{"incidentIds":["`+inc+`"],"assignedTo":{"userId":""}}`, "userId"),
			bad400("assign userId 301", http.MethodPost, by, `{"incidentIds":["`+inc+`"],"assignedTo":{"userId":"`+strings.Repeat("u", 301)+`"}}`, "userId"),
			bad400("assign case userId not a uuid", http.MethodPost, casesBase+"/assigned/v1/CASE-1", `{"assignee":{"userId":"bob"}}`, "userId"),
			bad400("assign case uppercase userId", http.MethodPost, casesBase+"/assigned/v1/CASE-1", `{"assignee":{"userId":"0B0C0D0E-0000-4000-8000-000000000001"}}`, "userId"),
			bad400("assign case empty", http.MethodPost, casesBase+"/assigned/v1/CASE-1", `{}`, "assignee"),
			bad400("update case empty", http.MethodPut, casesBase+"/cases/v1/CASE-1", `{}`, "body"),
			bad400("update case blank title", http.MethodPut, casesBase+"/cases/v1/CASE-1", `{"title":"   "}`, "title"),
			bad400("update case empty title", http.MethodPut, casesBase+"/cases/v1/CASE-1", `{"title":""}`, "title"),
			bad400("update case blank reason", http.MethodPut, casesBase+"/cases/v1/CASE-1", `{"resolutionReason":"  "}`, "resolutionReason"),
			bad400("update case good title, bad priority", http.MethodPut, casesBase+"/cases/v1/CASE-1", `{"title":"ok","priorityOverride":"P1"}`, "priorityOverride"),
			bad400("resolve empty reason", http.MethodPut, casesBase+"/resolved/v1/CASE-1", `{"reason":""}`, "reason"),
			bad400("comment blank", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments", `{"text":" \n\t "}`, "text"),
			bad400("comment missing text", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments", `{"attachments":[]}`, "text"),
			bad400("comment 10001 characters once trimmed", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments",
				`{"text":"  `+strings.Repeat("é", 10001)+`  "}`, "text"),
			bad400("comment 101 attachments", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments",
				`{"text":"x","attachments":[`+strings.TrimSuffix(strings.Repeat(`{"file":{"fileId":"`+inc+`","fileName":"f","isDeleted":false}},`, 101), ",")+`]}`, "attachments"),
			bad400("comment attachment with none", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments", `{"text":"x","attachments":[{}]}`, "attachments[0]"),
			bad400("comment attachment with two", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments",
				`{"text":"x","attachments":[{"file":{"fileId":"`+inc+`","fileName":"f","isDeleted":false},"log":{"logId":"`+inc+`","logTimestamp":"2026-01-01T00:00:00Z","logContent":"c"}}]}`, "attachments[0]"),
			bad400("comment attachment bad fileId", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments",
				`{"text":"x","attachments":[{"file":{"fileId":"nope","fileName":"f","isDeleted":false}}]}`, "fileId"),
			bad400("comment attachment log 10001", http.MethodPost, casesBase+"/cases/v1/CASE-1/comments",
				`{"text":"x","attachments":[{"log":{"logId":"`+inc+`","logTimestamp":"2026-01-01T00:00:00Z","logContent":"`+strings.Repeat("l", 10001)+`"}}]}`, "logContent"),
			bad400("edit comment blank", http.MethodPut, casesBase+"/events/v1/"+f.commentID+"/comments", `{"text":"  "}`, "text"),
			bad400("edit a non-comment event", http.MethodPut, casesBase+"/events/v1/"+f.createdID+"/comments", `{"text":"x"}`, "event_id"),
			bad400("delete a non-comment event", http.MethodDelete, casesBase+"/events/v1/"+f.createdID+"/comments", ``, "event_id"),
			bad400("list cases pageSize 0", http.MethodPost, casesBase+"/cases/v1", `{"pagination":{"pageSize":0}}`, "pageSize"),
			bad400("list cases pageSize 1001", http.MethodPost, casesBase+"/cases/v1", `{"pagination":{"pageSize":1001}}`, "pageSize"),
			bad400("list cases pageSize -1", http.MethodPost, casesBase+"/cases/v1", `{"pagination":{"pageSize":-1}}`, "pageSize"),
			bad400("list cases pageToken garbage", http.MethodPost, casesBase+"/cases/v1", `{"pagination":{"pageToken":"garbage"}}`, "pageToken"),
			bad400("list cases pageToken negative", http.MethodPost, casesBase+"/cases/v1",
				`{"pagination":{"pageToken":"`+base64.RawURLEncoding.EncodeToString([]byte("cases.v1.-1"))+`"}}`, "pageToken"),
			bad400("list cases dateRange reversed", http.MethodPost, casesBase+"/cases/v1",
				`{"filters":{"dateRange":{"from":"2027-01-01T00:00:00Z","to":"2026-01-01T00:00:00Z"}}}`, "dateRange"),
			bad400("list cases dateRange without to", http.MethodPost, casesBase+"/cases/v1",
				`{"filters":{"dateRange":{"from":"2027-01-01T00:00:00Z"}}}`, "to"),
			bad400("list cases empty textSearch", http.MethodPost, casesBase+"/cases/v1", `{"filters":{"textSearch":""}}`, "textSearch"),
			bad400("list cases assignee with both", http.MethodPost, casesBase+"/cases/v1", `{"filters":{"assignees":[{"assignee":"u","unassigned":{}}]}}`, "assignees"),
			bad400("list cases label without key", http.MethodPost, casesBase+"/cases/v1", `{"filters":{"labels":[{"values":["v"]}]}}`, "key"),
			bad400("list cases 1001 statuses", http.MethodPost, casesBase+"/cases/v1",
				`{"filters":{"statuses":[`+strings.TrimSuffix(strings.Repeat(`"CASE_STATUS_ACTIVE",`, 1001), ",")+`]}}`, "statuses"),
			bad400("list incidents pageSize 0", http.MethodPost, incidentsBase, `{"pagination":{"pageSize":0}}`, "pageSize"),
			bad400("list incidents pageSize 10001", http.MethodPost, incidentsBase, `{"pagination":{"pageSize":10001}}`, "pageSize"),
			bad400("list incidents pagination without pageSize", http.MethodPost, incidentsBase, `{"pagination":{}}`, "pageSize"),
			bad400("list incidents pageToken garbage", http.MethodPost, incidentsBase, `{"pagination":{"pageSize":1,"pageToken":"garbage"}}`, "pageToken"),
			bad400("list incidents orderBy with neither", http.MethodPost, incidentsBase, `{"orderBys":[{"direction":"ORDER_BY_DIRECTION_ASC"}]}`, "orderBys[0]"),
			bad400("list incidents orderBy with both", http.MethodPost, incidentsBase,
				`{"orderBys":[{"incidentField":"INCIDENTS_FIELDS_NAME","contextualLabel":"x","direction":"ORDER_BY_DIRECTION_ASC"}]}`, "orderBys[0]"),
			bad400("list incidents orderBy without direction", http.MethodPost, incidentsBase, `{"orderBys":[{"incidentField":"INCIDENTS_FIELDS_NAME"}]}`, "direction"),
			bad400("list incidents contextual label without values", http.MethodPost, incidentsBase, `{"filter":{"contextualLabels":{"k":{}}}}`, "contextualLabelValues"),
			bad400("list incidents contextual label string", http.MethodPost, incidentsBase, `{"filter":{"contextualLabels":{"k":"v"}}}`, "contextualLabels"),
			bad400("list incidents searchQuery with neither", http.MethodPost, incidentsBase, `{"filter":{"searchQuery":{"query":"x"}}}`, "searchQuery"),
			bad400("list incidents createdAtRange without end", http.MethodPost, incidentsBase, `{"filter":{"createdAtRange":{"startTime":"2026-01-01T00:00:00Z"}}}`, "endTime"),
			bad400("list incidents metaLabel empty key", http.MethodPost, incidentsBase, `{"filter":{"metaLabels":[{"key":"","value":"v"}]}}`, "key"),
		)
		unchanged(t, env, func(t *testing.T) { runProbes(t, env, probes) })
	})
}

// TestRobustIngestPayloads sends Alertmanager notifications that break the contract, then ones
// at its limits or odd but acceptable.
func TestRobustIngestPayloads(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		seedFixture(t, env)
		good := mustJSON(group("robust", firing("Robust", "warning", "svc", t0)))
		set := func(path, raw string) string { return withField(t, good, path, raw) }
		ingest := func(name, body string, status int, fragments ...string) probe {
			return probe{name: name, method: http.MethodPost, path: ingestPath, body: body, status: status, fragments: fragments}
		}
		alerts := func(n int) string {
			a := firing("Many", "info", "s", t0)
			list := make([]amAlert, n)
			for i := range list {
				list[i] = a
				list[i].Fingerprint = fmt.Sprintf("fp-%d", i)
			}
			return mustJSON(list)
		}
		refused := []probe{
			ingest("10001 alerts", set("alerts", alerts(10001)), http.StatusBadRequest, "alerts"),
			ingest("no alerts", set("alerts", `[]`), http.StatusBadRequest, "alerts"),
			ingest("alert null", set("alerts", `[null]`), http.StatusBadRequest, "alerts"),
			ingest("alert number", set("alerts", `[1]`), http.StatusBadRequest, "alerts"),
			ingest("fingerprint 257", set("alerts.0.fingerprint", strconv.Quote(strings.Repeat("f", 257))), http.StatusBadRequest, "fingerprint"),
			ingest("fingerprint empty", set("alerts.0.fingerprint", `""`), http.StatusBadRequest, "fingerprint"),
			ingest("fingerprint missing", set("alerts.0.fingerprint", ""), http.StatusBadRequest, "fingerprint"),
			ingest("labels missing", set("alerts.0.labels", ""), http.StatusBadRequest, "labels"),
			ingest("startsAt missing", set("alerts.0.startsAt", ""), http.StatusBadRequest, "startsAt"),
			ingest("alert status missing", set("alerts.0.status", ""), http.StatusBadRequest, "status"),
			ingest("version missing", set("version", ""), http.StatusBadRequest, "version"),
			ingest("version 3", set("version", `"3"`), http.StatusBadRequest, "version"),
			ingest("groupKey missing", set("groupKey", ""), http.StatusBadRequest, "groupKey"),
			ingest("groupKey empty", set("groupKey", `""`), http.StatusBadRequest, "groupKey"),
			ingest("receiver missing", set("receiver", ""), http.StatusBadRequest, "receiver"),
			ingest("receiver empty", set("receiver", `""`), http.StatusBadRequest, "receiver"),
			ingest("status missing", set("status", ""), http.StatusBadRequest, "status"),
			ingest("truncatedAlerts -1", set("truncatedAlerts", `-1`), http.StatusBadRequest, "truncatedAlerts"),
			ingest("label value number", set("alerts.0.labels", `{"a":1}`), http.StatusBadRequest, "labels"),
			ingest("label value 4097", set("alerts.0.labels", `{"a":"`+strings.Repeat("v", 4097)+`"}`), http.StatusBadRequest, "labels"),
			ingest("label value nested", set("alerts.0.labels", `{"a":`+nested(10000)+`}`), http.StatusBadRequest, "labels"),
			ingest("label key NUL", set("alerts.0.labels", `{"a\u0000":"v"}`), http.StatusBadRequest, "labels"),
			ingest("label value NUL", set("alerts.0.labels", `{"a":"v\u0000"}`), http.StatusBadRequest, "labels"),
			ingest("annotation number", set("alerts.0.annotations", `{"summary":1}`), http.StatusBadRequest, "annotations"),
			ingest("groupLabels value 4097", set("groupLabels", `{"a":"`+strings.Repeat("v", 4097)+`"}`), http.StatusBadRequest, "groupLabels"),
			ingest("commonLabels value 4097", set("commonLabels", `{"a":"`+strings.Repeat("v", 4097)+`"}`), http.StatusBadRequest, "commonLabels"),
			ingest("startsAt year 10000", set("alerts.0.startsAt", `"10000-01-01T00:00:00Z"`), http.StatusBadRequest, "startsAt"),
			ingest("startsAt February 30", set("alerts.0.startsAt", `"2026-02-30T00:00:00Z"`), http.StatusBadRequest, "startsAt"),
			ingest("second alert bad", withField(t, set("alerts", alerts(2)), "alerts.1.fingerprint", `""`), http.StatusBadRequest, "alerts[1]"),
		}
		unchanged(t, env, func(t *testing.T) { runProbes(t, env, refused) })

		// Odd but acceptable notifications: each must be applied or refused as a whole, never
		// answered with a 500.
		odd := []struct {
			name   string
			body   string
			status int
		}{
			{"fingerprint 64", set("alerts.0.fingerprint", strconv.Quote(strings.Repeat("f", 64))), http.StatusOK},
			{"groupKey 4096", set("groupKey", strconv.Quote(strings.Repeat("g", 4096))), http.StatusOK},
			{"receiver 256", set("receiver", strconv.Quote(strings.Repeat("r", 256))), http.StatusOK},
			{"label value 4096", set("alerts.0.labels", `{"alertname":"Big","a":"`+strings.Repeat("v", 4096)+`"}`), http.StatusOK},
			{"label value 4096 two-byte characters", set("alerts.0.labels", `{"alertname":"Wide","a":"`+strings.Repeat("é", 4096)+`"}`), http.StatusOK},
			{"label with an empty key", set("alerts.0.labels", `{"":"x","alertname":"EmptyKey"}`), anyAnswer},
			{"label with an empty value", set("alerts.0.labels", `{"alertname":"EmptyValue","service":""}`), anyAnswer},
			{"group label with an empty key", set("groupLabels", `{"":"x"}`), anyAnswer},
			{"startsAt year 0000", set("alerts.0.startsAt", `"0000-01-01T00:00:00Z"`), anyAnswer},
			{"startsAt year 0001", set("alerts.0.startsAt", `"0001-01-01T00:00:00Z"`), anyAnswer},
			{"startsAt year 9999", set("alerts.0.startsAt", `"9999-12-31T23:59:59.999999999Z"`), anyAnswer},
			{"resolved with endsAt before startsAt", set("alerts.0", mustJSON(resolved(firing("Back", "info", "s", t0), t0.AddDate(-1, 0, 0)))), anyAnswer},
			{"firing then resolved before its start", set("alerts", mustJSON([]amAlert{firing("Twice", "info", "s", t0), resolved(firing("Twice", "info", "s", t0), t0.AddDate(0, 0, -1))})), anyAnswer},
			{"endsAt year 0001", set("alerts.0.endsAt", `"0001-01-01T00:00:00Z"`), anyAnswer},
			{"the same alert twice", set("alerts", mustJSON([]amAlert{firing("Dup", "info", "s", t0), firing("Dup", "info", "s", t0)})), anyAnswer},
			{"alertname of 100000 characters", set("alerts.0.labels", `{"alertname":"`+strings.Repeat("n", 100000)+`"}`), anyAnswer},
			{"summary of 100000 characters", set("commonAnnotations", `{"summary":"`+strings.Repeat("s", 100000)+`"}`), anyAnswer},
			{"unknown fields deeply nested", set("x", strings.Repeat(`{"a":`, 5000)+"1"+strings.Repeat("}", 5000)), anyAnswer},
			{"truncatedAlerts huge", set("truncatedAlerts", `9223372036854775807`), anyAnswer},
		}
		for i, o := range odd {
			t.Run(o.name, func(t *testing.T) {
				// A group key and fingerprint of its own, so that each opens its own case.
				body := withField(t, o.body, "groupKey", strconv.Quote(fmt.Sprintf("odd-%d", i)))
				if o.name == "groupKey 4096" {
					body = o.body
				}
				before := snapshot(t, env)
				res := probe{name: o.name, method: http.MethodPost, path: ingestPath, body: body, status: o.status}.check(t, env)
				if res.Status >= 400 {
					if after := snapshot(t, env); after != before {
						t.Errorf("refused notification changed the state")
					}
				}
			})
		}
	})
}

// casePathOps are the operations addressed by a case_id, with a body that would be valid.
func casePathOps() []struct{ name, method, suffix, prefix, body string } {
	return []struct{ name, method, suffix, prefix, body string }{
		{"GetCase", http.MethodGet, "", "/cases/v1/", ""},
		{"UpdateCase", http.MethodPut, "", "/cases/v1/", `{"title":"x"}`},
		{"CreateCaseComment", http.MethodPost, "/comments", "/cases/v1/", `{"text":"x"}`},
		{"SyncCaseExternalThread", http.MethodPost, "/sync-external-thread-comments", "/cases/v1/", ""},
		{"ListCaseEvents", http.MethodGet, "/events", "/cases/v1/", ""},
		{"AssignCase", http.MethodPost, "", "/assigned/v1/", `{"assignee":{"userId":"0b0c0d0e-0000-4000-8000-000000000001"}}`},
		{"UnassignCase", http.MethodDelete, "", "/assigned/v1/", ""},
		{"AcknowledgeCase", http.MethodPut, "", "/acknowledged/v1/", ""},
		{"UnacknowledgeCase", http.MethodDelete, "", "/acknowledged/v1/", ""},
		{"ResolveCase", http.MethodPut, "", "/resolved/v1/", `{"reason":"r"}`},
		{"CloseCase", http.MethodPost, "", "/closed/v1/", ""},
	}
}

// TestRobustPathIDs sends path ids of every wrong shape to every operation addressed by one.
func TestRobustPathIDs(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := seedFixture(t, env)
		unknownUUID := "0b0c0d0e-0000-4000-8000-0000000000ff"
		caseIDs := []struct {
			name, id string
			status   int
		}{
			{"35 characters", f.caseID[:35], http.StatusBadRequest},
			{"37 characters", f.caseID + "0", http.StatusBadRequest},
			{"uppercase UUID", strings.ToUpper(f.caseID), http.StatusBadRequest},
			{"UUID without dashes", strings.ReplaceAll(f.caseID, "-", "") + "0000", http.StatusBadRequest},
			{"unknown UUID", unknownUUID, http.StatusNotFound},
			{"CASE-0", "CASE-0", http.StatusNotFound},
			{"CASE-01", "CASE-01", http.StatusNotFound},
			{"CASE-99999999999999999999", "CASE-99999999999999999999", http.StatusNotFound},
			{"CASE-9223372036854775807", "CASE-9223372036854775807", http.StatusNotFound},
			{"CASE-9223372036854775808", "CASE-9223372036854775808", http.StatusNotFound},
			{"case-1", "case-1", http.StatusBadRequest},
			{"CASE--1", "CASE--1", http.StatusBadRequest},
			{"CASE-", "CASE-", http.StatusBadRequest},
			{"CASE-1.0", "CASE-1.0", http.StatusBadRequest},
			{"CASE-1 with space", "CASE-1%20", http.StatusBadRequest},
			{"X-1", "X-1", http.StatusNotFound},
			{"INCIDENT-1", "INCIDENT-1", http.StatusNotFound},
			{"65 characters", "CASE-" + strings.Repeat("1", 60), http.StatusBadRequest},
			{"non-ASCII", "%C3%84SE-1", http.StatusBadRequest},
			{"NUL", "CASE-1%00", http.StatusBadRequest},
			{"invalid UTF-8", "CASE-%FF", http.StatusBadRequest},
			{"slash", "CASE-1%2F2", anyClientError},
			{"SQL", "CASE-1'%20OR%20'1'='1", http.StatusBadRequest},
		}
		t.Run("case_id", func(t *testing.T) {
			unchanged(t, env, func(t *testing.T) {
				for _, op := range casePathOps() {
					for _, c := range caseIDs {
						p := probe{name: op.name + " " + c.name, method: op.method, path: casesBase + op.prefix + c.id + op.suffix,
							body: op.body, status: c.status}
						switch {
						case strings.Contains(c.id, "%00") || strings.Contains(c.id, "%FF"):
							p.fragments = []string{"path"}
						case c.status == http.StatusBadRequest || c.status == http.StatusNotFound:
							p.fragments = []string{"case_id"}
						}
						t.Run(p.name, func(t *testing.T) { p.check(t, env) })
					}
					// A body where none is expected, sent to a case that does not exist.
					if op.body == "" {
						p := probe{name: op.name + " unexpected body", method: op.method, path: casesBase + op.prefix + "CASE-999" + op.suffix,
							body: `{"title":"x"}`, status: http.StatusNotFound, fragments: []string{"case_id"}}
						t.Run(p.name, func(t *testing.T) { p.check(t, env) })
						p = probe{name: op.name + " unexpected non-JSON body", method: op.method, path: casesBase + op.prefix + "CASE-999" + op.suffix,
							body: "\xff\x00garbage", contentType: "application/octet-stream", status: anyClientError}
						t.Run(p.name, func(t *testing.T) { p.check(t, env) })
					}
				}
			})
		})

		eventIDs := []struct {
			name, id string
			status   int
		}{
			{"35 characters", f.commentID[:35], http.StatusBadRequest},
			{"37 characters", f.commentID + "0", http.StatusBadRequest},
			{"unknown", unknownUUID, http.StatusNotFound},
			{"readable id", "CASE-1", http.StatusBadRequest},
			{"not hex", strings.Repeat("g", 8) + f.commentID[8:], http.StatusBadRequest},
			{"NUL", f.commentID[:35] + "%00", http.StatusBadRequest},
		}
		t.Run("event_id", func(t *testing.T) {
			unchanged(t, env, func(t *testing.T) {
				for _, op := range []struct{ name, method, suffix, body string }{
					{"GetCaseEvent", http.MethodGet, "", ""},
					{"UpdateCaseComment", http.MethodPut, "/comments", `{"text":"x"}`},
					{"DeleteCaseComment", http.MethodDelete, "/comments", ""},
				} {
					for _, e := range eventIDs {
						p := probe{name: op.name + " " + e.name, method: op.method, path: casesBase + "/events/v1/" + e.id + op.suffix,
							body: op.body, status: e.status, fragments: []string{"event_id"}}
						if e.name == "NUL" {
							p.fragments = []string{"path"}
						}
						t.Run(p.name, func(t *testing.T) { p.check(t, env) })
					}
				}
			})
			// Hex digits in either case name the same event.
			p := probe{name: "uppercase event id", method: http.MethodGet, path: casesBase + "/events/v1/" + strings.ToUpper(f.commentID), status: http.StatusOK}
			p.check(t, env)
		})

		incidentIDs := []struct {
			name, id string
			status   int
		}{
			{"35 characters", f.incidentIDs[0][:35], http.StatusBadRequest},
			{"37 characters", f.incidentIDs[0] + "0", http.StatusBadRequest},
			{"unknown", unknownUUID, http.StatusNotFound},
			{"readable id", "CASE-1", http.StatusBadRequest},
			{"numeric", "1", http.StatusBadRequest},
			{"invalid UTF-8", "%FF" + f.incidentIDs[0][1:], http.StatusBadRequest},
		}
		t.Run("incident id", func(t *testing.T) {
			for _, op := range []struct{ name, prefix, suffix, param string }{
				{"GetIncident", "/mgmt/openapi/3/incidents/incidents/v1/", "", "id"},
				{"ListIncidentEvents", incidentsBase + "/", "/events", "incident_id"},
			} {
				for _, c := range incidentIDs {
					p := probe{name: op.name + " " + c.name, method: http.MethodGet, path: op.prefix + c.id + op.suffix,
						status: c.status, fragments: []string{op.param}}
					if c.name == "invalid UTF-8" {
						p.fragments = nil
					}
					t.Run(p.name, func(t *testing.T) { p.check(t, env) })
				}
				p := probe{name: op.name + " uppercase", method: http.MethodGet, path: op.prefix + strings.ToUpper(f.incidentIDs[0]) + op.suffix, status: http.StatusOK}
				t.Run(p.name, func(t *testing.T) { p.check(t, env) })
			}
		})

		t.Run("methods", func(t *testing.T) {
			runProbes(t, env, []probe{
				{name: "PATCH case", method: http.MethodPatch, path: casesBase + "/cases/v1/CASE-1", body: `{"title":"x"}`, status: http.StatusMethodNotAllowed},
				{name: "DELETE case", method: http.MethodDelete, path: casesBase + "/cases/v1/CASE-1", status: http.StatusMethodNotAllowed},
				{name: "GET ingest", method: http.MethodGet, path: ingestPath, status: http.StatusMethodNotAllowed},
				{name: "PUT aggregations", method: http.MethodPut, path: aggPath, body: `{}`, status: http.StatusMethodNotAllowed},
				{name: "no case id", method: http.MethodGet, path: casesBase + "/cases/v1/", status: anyClientError},
				{name: "unknown path", method: http.MethodGet, path: casesBase + "/nope/v1/CASE-1", status: http.StatusNotFound},
			})
		})
	})
}

// TestRobustQueries sends query parameters of every odd form to E18 and to the operations that
// take ids in the query.
func TestRobustQueries(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := seedFixture(t, env)
		agg := func(name, query string, status int, fragments ...string) probe {
			return probe{name: name, method: http.MethodGet, path: aggPath + "?" + query, status: status, fragments: fragments}
		}
		repeat := func(kv string, n int) string { return strings.TrimSuffix(strings.Repeat(kv+"&", n), "&") }
		groupBys := func(n int) string {
			var parts []string
			for i := range n {
				parts = append(parts, fmt.Sprintf("group_bys[%d][contextualLabel]=l%d", i, i))
			}
			return strings.Join(parts, "&")
		}
		probes := []probe{
			agg("severity NOPE", "filter[severity]=NOPE", http.StatusBadRequest, "filter.severity"),
			agg("severity lowercase", "filter[severity]=incident_severity_info", http.StatusBadRequest, "filter.severity"),
			agg("severity with a field", "filter[severity][x]=INCIDENT_SEVERITY_INFO", http.StatusBadRequest, "filter.severity"),
			agg("severity index with a field", "filter[severity][0][x]=INCIDENT_SEVERITY_INFO", http.StatusBadRequest, "filter.severity"),
			agg("severity index too large", "filter[severity][999999999]=INCIDENT_SEVERITY_INFO", http.StatusBadRequest, "filter.severity"),
			agg("severity negative index", "filter[severity][-1]=INCIDENT_SEVERITY_INFO", http.StatusBadRequest, "filter.severity"),
			agg("severity index twice", "filter[severity][0]=INCIDENT_SEVERITY_INFO&filter[severity][00]=INCIDENT_SEVERITY_LOW", http.StatusBadRequest, "filter.severity"),
			agg("severity 1001 items", repeat("filter[severity]=INCIDENT_SEVERITY_INFO", 1001), http.StatusBadRequest, "filter.severity"),
			agg("pageSize abc", "pagination[pageSize]=abc", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize -1", "pagination[pageSize]=-1", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize 0", "pagination[pageSize]=0", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize 10001", "pagination[pageSize]=10001", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize 1e3", "pagination[pageSize]=1e3", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize 1.0", "pagination[pageSize]=1.0", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize overflow", "pagination[pageSize]=99999999999999999999", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize empty", "pagination[pageSize]=", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize twice", "pagination[pageSize]=5&pagination[pageSize]=6", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize bracket and dot", "pagination[pageSize]=5&pagination.pageSize=6", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageSize with a field", "pagination[pageSize][x]=5", http.StatusBadRequest, "pagination.pageSize"),
			agg("pageToken garbage", "pagination[pageSize]=5&pagination[pageToken]=garbage", http.StatusBadRequest, "pagination.pageToken"),
			agg("pageToken empty", "pagination[pageSize]=5&pagination[pageToken]=", http.StatusBadRequest, "pagination.pageToken"),
			agg("pageToken without pageSize", "pagination[pageToken]=garbage", http.StatusBadRequest, "pagination"),
			agg("pageToken negative", "pagination[pageSize]=5&pagination[pageToken]="+base64.RawURLEncoding.EncodeToString([]byte("-1:0000000000000000")), http.StatusBadRequest, "pagination.pageToken"),
			agg("pagination scalar", "pagination=5", http.StatusBadRequest, "pagination"),
			agg("pagination JSON without pageSize", "pagination="+url.QueryEscape(`{"pageToken":"x"}`), http.StatusBadRequest, "pagination"),
			agg("pagination JSON pageSize string", "pagination="+url.QueryEscape(`{"pageSize":"5"}`), http.StatusBadRequest, "pagination"),
			agg("group_bys bad field", "group_bys[0][incidentField]=NOPE", http.StatusBadRequest, "group_bys[0].incidentField"),
			agg("group_bys unspecified field", "group_bys[0][incidentField]=INCIDENTS_FIELDS_UNSPECIFIED", http.StatusBadRequest, "group_bys[0].incidentField"),
			agg("group_bys huge index", "group_bys[999999999][incidentField]=INCIDENTS_FIELDS_SEVERITY", http.StatusBadRequest, "group_bys"),
			agg("group_bys index overflow", "group_bys[99999999999999999999][incidentField]=INCIDENTS_FIELDS_SEVERITY", http.StatusBadRequest, "group_bys"),
			agg("group_bys not indexed", "group_bys[][incidentField]=INCIDENTS_FIELDS_SEVERITY", http.StatusBadRequest, "group_bys"),
			agg("group_bys scalar", "group_bys=INCIDENTS_FIELDS_SEVERITY", http.StatusBadRequest, "group_bys"),
			agg("group_bys item scalar", "group_bys[0]=INCIDENTS_FIELDS_SEVERITY", http.StatusBadRequest, "group_bys[0]"),
			agg("group_bys empty item", "group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_ASC", http.StatusBadRequest, "group_bys[0]"),
			agg("group_bys both", "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[0][contextualLabel]=x", http.StatusBadRequest, "group_bys[0]"),
			agg("group_bys empty label", "group_bys[0][contextualLabel]=", http.StatusBadRequest, "group_bys[0].contextualLabel"),
			agg("group_bys label 257", "group_bys[0][contextualLabel]="+strings.Repeat("l", 257), http.StatusBadRequest, "group_bys[0].contextualLabel"),
			agg("group_bys bad direction", "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[0][orderByDirection]=UP", http.StatusBadRequest, "group_bys[0].orderByDirection"),
			agg("group_bys 101", groupBys(101), http.StatusBadRequest, "group_bys"),
			agg("group_bys field twice bracket and dot", "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[0].incidentField=INCIDENTS_FIELDS_STATE", http.StatusBadRequest, "group_bys[0].incidentField"),
			agg("group_bys JSON of numbers", "group_bys="+url.QueryEscape(`[1]`), http.StatusBadRequest, "group_bys"),
			agg("group_bys JSON field number", "group_bys="+url.QueryEscape(`[{"incidentField":1}]`), http.StatusBadRequest, "group_bys"),
			agg("group_bys JSON null item", "group_bys="+url.QueryEscape(`[null]`), http.StatusBadRequest, "group_bys"),
			agg("group_bys JSON malformed", "group_bys="+url.QueryEscape(`[{`), http.StatusBadRequest, "group_bys"),
			agg("group_bys JSON deeply nested", "group_bys="+url.QueryEscape(nested(10000)), http.StatusBadRequest, "group_bys"),
			agg("contextualLabels without contextualLabelValues", "filter[contextualLabels][k]=v", http.StatusBadRequest, "filter.contextualLabels"),
			agg("contextualLabels scalar", "filter[contextualLabels]=v", http.StatusBadRequest, "filter.contextualLabels"),
			agg("contextualLabels unknown field", "filter[contextualLabels][k][x]=v", http.StatusBadRequest, "contextualLabelValues"),
			agg("filter notjson", "filter=notjson", http.StatusBadRequest, "filter"),
			agg("filter JSON wrong type", "filter="+url.QueryEscape(`{"severity":1}`), http.StatusBadRequest, "filter"),
			agg("filter JSON unknown enum", "filter="+url.QueryEscape(`{"severity":["NOPE"]}`), http.StatusBadRequest, "filter"),
			agg("filter JSON malformed", "filter="+url.QueryEscape(`{"severity":`), http.StatusBadRequest, "filter"),
			agg("filter JSON deeply nested", "filter="+url.QueryEscape(strings.Repeat(`{"a":`, 10000)+"1"+strings.Repeat("}", 10000)), anyAnswer),
			agg("filter JSON and brackets", "filter="+url.QueryEscape(`{"severity":["INCIDENT_SEVERITY_INFO"]}`)+"&filter[state]=INCIDENT_STATE_TRIGGERED", http.StatusBadRequest, "filter"),
			agg("filter JSON twice", "filter="+url.QueryEscape(`{}`)+"&filter="+url.QueryEscape(`{}`), http.StatusBadRequest, "filter"),
			agg("filter unclosed bracket", "filter[severity=INCIDENT_SEVERITY_INFO", http.StatusBadRequest, "filter"),
			agg("filter empty dot segment", "filter..severity=INCIDENT_SEVERITY_INFO", http.StatusBadRequest, "filter"),
			agg("isMuted maybe", "filter[isMuted]=maybe", http.StatusBadRequest, "filter.isMuted"),
			agg("startTime not a date", "filter[startTime]=yesterday", http.StatusBadRequest, "filter.startTime"),
			agg("createdAtRange without endTime", "filter[createdAtRange][startTime]=2026-01-01T00:00:00Z", http.StatusBadRequest, "filter.createdAtRange.endTime"),
			agg("searchQuery with neither", "filter[searchQuery][query]=x", http.StatusBadRequest, "filter.searchQuery"),
			agg("searchQuery empty", "filter[searchQuery][query]=&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME", http.StatusBadRequest, "filter.searchQuery.query"),
			agg("metaLabels empty key", "filter[metaLabels][0][key]=&filter[metaLabels][0][value]=v", http.StatusBadRequest, "filter.metaLabels"),
			agg("metaLabelsOp unknown", "filter[metaLabelsOp]=XOR", http.StatusBadRequest, "filter.metaLabelsOp"),
			agg("applicationName 257", "filter[applicationName]="+strings.Repeat("a", 257), http.StatusBadRequest, "filter.applicationName"),
			agg("NUL in a value", "filter[applicationName]=a%00b", http.StatusBadRequest),
			agg("invalid UTF-8 in a value", "filter[applicationName]=a%FFb", http.StatusBadRequest),
			agg("invalid UTF-8 in a key", "filter[%FF]=x", http.StatusBadRequest),
			agg("malformed escape", "filter[applicationName]=%zz", http.StatusBadRequest),
			agg("no key", "", http.StatusUnauthorized),
			// Odd but acceptable forms.
			agg("pageSize 10000", "pagination[pageSize]=10000", http.StatusOK),
			agg("severity bracket and dot", "filter[severity]=INCIDENT_SEVERITY_INFO&filter.severity=INCIDENT_SEVERITY_LOW", http.StatusOK),
			agg("label values", "filter[contextualLabels][service][contextualLabelValues]=api", http.StatusOK),
			agg("empty label name", "filter[contextualLabels][][contextualLabelValues]=api", anyAnswer),
			agg("unknown filter field", "filter[nope]=1", http.StatusOK),
			agg("other parameter", "filterx=1&unknown[a]=b", http.StatusOK),
			agg("group_bys label 256", "group_bys[0][contextualLabel]="+strings.Repeat("l", 256), http.StatusOK),
			agg("group_bys sparse index", "group_bys[100000][incidentField]=INCIDENTS_FIELDS_SEVERITY", http.StatusOK),
			agg("group_bys 100", groupBys(100), http.StatusOK),
			agg("every field groupable or refused", "group_bys[0][incidentField]=INCIDENTS_FIELDS_DURATION", anyAnswer),
			agg("times at the ends", "filter[createdAtRange][startTime]=0001-01-01T00:00:00Z&filter[createdAtRange][endTime]=9999-12-31T23:59:59Z", anyAnswer),
			agg("JSON group_bys", "group_bys="+url.QueryEscape(`[{"incidentField":"INCIDENTS_FIELDS_SEVERITY"}]`), http.StatusOK),
		}
		for i := range probes {
			if probes[i].name == "no key" {
				probes[i].auth = "-"
			}
		}

		// Batch get and unassign take ids in the query.
		ids := func(param string, n int) string {
			parts := make([]string, n)
			for i := range parts {
				parts[i] = param + "=" + fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
			}
			return strings.Join(parts, "&")
		}
		byUser := incidentsBase + "/all/by-user"
		probes = append(probes,
			probe{name: "batch get no ids", method: http.MethodGet, path: incidentsBase, status: http.StatusBadRequest, fragments: []string{"ids"}},
			probe{name: "batch get empty id", method: http.MethodGet, path: incidentsBase + "?ids=", status: http.StatusBadRequest, fragments: []string{"ids"}},
			probe{name: "batch get not a uuid", method: http.MethodGet, path: incidentsBase + "?ids=not-a-uuid", status: http.StatusBadRequest, fragments: []string{"ids"}},
			probe{name: "batch get 10001 ids", method: http.MethodGet, path: incidentsBase + "?" + ids("ids", 10001), status: http.StatusBadRequest, fragments: []string{"ids"}},
			probe{name: "batch get 10000 ids", method: http.MethodGet, path: incidentsBase + "?" + ids("ids", 10000), status: http.StatusOK},
			probe{name: "batch get bracket form", method: http.MethodGet, path: incidentsBase + "?ids[0]=" + f.incidentIDs[0], status: http.StatusBadRequest, fragments: []string{"ids"}},
			probe{name: "batch get comma list", method: http.MethodGet, path: incidentsBase + "?ids=" + f.incidentIDs[0] + "," + f.incidentIDs[1], status: http.StatusBadRequest, fragments: []string{"ids"}},
			probe{name: "unassign no ids", method: http.MethodDelete, path: byUser, status: http.StatusBadRequest, fragments: []string{"incident_ids"}},
			probe{name: "unassign not a uuid", method: http.MethodDelete, path: byUser + "?incident_ids=not-a-uuid", status: http.StatusBadRequest, fragments: []string{"incident_ids"}},
			probe{name: "unassign 10001 ids", method: http.MethodDelete, path: byUser + "?" + ids("incident_ids", 10001), status: http.StatusBadRequest, fragments: []string{"incident_ids"}},
			probe{name: "unassign 10000 unknown ids", method: http.MethodDelete, path: byUser + "?" + ids("incident_ids", 10000), status: http.StatusNotFound, fragments: []string{"incident_ids"}},
			probe{name: "unassign known and unknown", method: http.MethodDelete, path: byUser + "?incident_ids=" + f.incidentIDs[0] + "&incident_ids=0b0c0d0e-0000-4000-8000-0000000000ff", status: http.StatusNotFound, fragments: []string{"incident_ids"}},
		)
		unchanged(t, env, func(t *testing.T) { runProbes(t, env, probes) })
	})
}

// TestRobustPageTokens forges page tokens with offsets at the ends of the integer range from
// tokens the server issued.
func TestRobustPageTokens(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		seedFixture(t, env)
		// E18: three severities, one group per page.
		query := "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&pagination[pageSize]=1"
		res := env.JSON(t, http.MethodGet, aggPath+"?"+query, env.RootKey, "")
		var page struct {
			Pagination struct {
				NextPageToken string `json:"nextPageToken"`
			} `json:"pagination"`
		}
		if res.Status != http.StatusOK || json.Unmarshal(res.Body, &page) != nil || page.Pagination.NextPageToken == "" {
			t.Fatalf("first page: %d %s", res.Status, res.Body)
		}
		raw, err := base64.RawURLEncoding.DecodeString(page.Pagination.NextPageToken)
		if err != nil {
			t.Fatalf("token %q: %v", page.Pagination.NextPageToken, err)
		}
		_, hash, _ := strings.Cut(string(raw), ":")
		forge := func(offset string) string {
			return base64.RawURLEncoding.EncodeToString([]byte(offset + ":" + hash))
		}
		for _, offset := range []string{"9223372036854775807", "9223372036854775806", "9223372036854775800", "1000000", "3"} {
			t.Run("aggregations offset "+offset, func(t *testing.T) {
				probe{method: http.MethodGet, path: aggPath + "?" + query + "&pagination[pageToken]=" + forge(offset), status: anyAnswer}.check(t, env)
			})
		}
		// Incident list: same scheme of token.
		res = env.JSON(t, http.MethodPost, incidentsBase, env.RootKey, `{"pagination":{"pageSize":1}}`)
		if res.Status != http.StatusOK || json.Unmarshal(res.Body, &page) != nil || page.Pagination.NextPageToken == "" {
			t.Fatalf("first incident page: %d %s", res.Status, res.Body)
		}
		raw, _ = base64.RawURLEncoding.DecodeString(page.Pagination.NextPageToken)
		_, hash, _ = strings.Cut(string(raw), ":")
		for _, offset := range []string{"9223372036854775807", "9223372036854775800"} {
			t.Run("incidents offset "+offset, func(t *testing.T) {
				res := probe{method: http.MethodPost, path: incidentsBase,
					body: `{"pagination":{"pageSize":1,"pageToken":"` + forge(offset) + `"}}`, status: anyAnswer}.check(t, env)
				if res.Status == http.StatusOK {
					var out struct {
						Incidents  []json.RawMessage
						Pagination struct{ NextPageToken string }
					}
					_ = json.Unmarshal(res.Body, &out)
					if len(out.Incidents) != 0 || out.Pagination.NextPageToken != "" {
						t.Fatalf("a page beyond the end has %d incidents and nextPageToken %q", len(out.Incidents), out.Pagination.NextPageToken)
					}
				}
			})
		}
		for _, offset := range []string{"9223372036854775807", "9223372036854775800"} {
			t.Run("cases offset "+offset, func(t *testing.T) {
				tok := base64.RawURLEncoding.EncodeToString([]byte("cases.v1." + offset))
				probe{method: http.MethodPost, path: casesBase + "/cases/v1",
					body: `{"pagination":{"pageSize":1000,"pageToken":"` + tok + `"}}`, status: anyAnswer}.check(t, env)
			})
		}
	})
}

// TestRobustPermissions checks that every operation refuses a key without its permission with a
// 403 naming the permission, before looking at the (malformed) input.
func TestRobustPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		seedFixture(t, env)
		other := env.MustKey(t, env.RootKey, "team-custom-api-keys:ReadConfig")
		ops := []struct{ method, path, permission string }{
			{http.MethodPost, casesBase + "/cases/v1", "case:Read"},
			{http.MethodGet, casesBase + "/cases/v1/case-1", "case:Read"},
			{http.MethodPut, casesBase + "/cases/v1/CASE-1", "case:Update"},
			{http.MethodPost, casesBase + "/cases/v1/CASE-1/comments", "case:Comment"},
			{http.MethodPost, casesBase + "/cases/v1/CASE-1/sync-external-thread-comments", "case:Comment"},
			{http.MethodGet, casesBase + "/cases/v1/CASE-1/events", "case:Read"},
			{http.MethodGet, casesBase + "/events/v1/nope", "case:Read"},
			{http.MethodPut, casesBase + "/events/v1/nope/comments", "case:Comment"},
			{http.MethodDelete, casesBase + "/events/v1/nope/comments", "case:Comment"},
			{http.MethodPost, casesBase + "/assigned/v1/CASE-1", "case:Assign"},
			{http.MethodDelete, casesBase + "/assigned/v1/CASE-1", "case:Assign"},
			{http.MethodPut, casesBase + "/acknowledged/v1/CASE-1", "case:Acknowledge"},
			{http.MethodDelete, casesBase + "/acknowledged/v1/CASE-1", "case:Acknowledge"},
			{http.MethodPut, casesBase + "/resolved/v1/CASE-1", "case:Close"},
			{http.MethodPost, casesBase + "/closed/v1/CASE-1", "case:Close"},
			{http.MethodGet, "/mgmt/openapi/3/incidents/incidents/v1/nope", "incidents:Read"},
			{http.MethodGet, aggPath + "?filter=notjson", "incidents:Read"},
			{http.MethodPost, incidentsBase, "incidents:Read"},
			{http.MethodGet, incidentsBase + "?ids=nope", "incidents:Read"},
			{http.MethodPost, incidentsBase + "/all/acknowledge", "incidents:Acknowledge"},
			{http.MethodPost, incidentsBase + "/all/resolve", "incidents:Close"},
			{http.MethodPost, incidentsBase + "/all/closed", "incidents:Close"},
			{http.MethodPost, incidentsBase + "/all/by-user", "incidents:Assign"},
			{http.MethodDelete, incidentsBase + "/all/by-user?incident_ids=nope", "incidents:Assign"},
			{http.MethodGet, incidentsBase + "/nope/events", "incidents:Read"},
			{http.MethodPost, ingestPath, "contextual-data:SendData"},
		}
		unchanged(t, env, func(t *testing.T) {
			for _, op := range ops {
				body := ""
				if op.method == http.MethodPost || op.method == http.MethodPut {
					body = `{"malformed":`
				}
				runProbes(t, env, []probe{
					{name: op.method + " " + op.path + " forbidden", method: op.method, path: op.path, auth: "Bearer " + other,
						body: body, status: http.StatusForbidden, fragments: []string{op.permission}},
					{name: op.method + " " + op.path + " no key", method: op.method, path: op.path, auth: "-",
						body: body, status: http.StatusUnauthorized},
				})
			}
		})
	})
}
