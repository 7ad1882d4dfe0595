package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// Request examples. Every operation with a request body carries one `example` under
// requestBody.content.application/json: a valid, realistic body. An example that can only be
// accepted when a resource already exists (a replace naming an id, a batch over existing
// incidents) says so with `x-example-needs-existing: true` next to it, and names that resource
// with a placeholder id (placeholderIDs): before it is sent, every placeholder that is the value
// of a property named id, or an element of an array whose name ends in Ids, is replaced with the
// id seeded in the same area (the seeded resource whose creating path shares the most segments
// with the operation's path), when there is one.

// placeholderIDs stand, in examples, for the id of an existing resource: a UUID, and a
// dashboard's 21-character id.
var placeholderIDs = []string{"00000000-0000-4000-8000-000000000000", "000000000000000000000"}

// acceptedAfterSeeding are operations whose example, sent after the seeding, must be accepted:
// the seeding creates the resource each names (a deployment, a custom role, a case comment).
var acceptedAfterSeeding = []string{"UndeployExtension", "UpdateCustomRole", "UpdateCaseComment"}

// TestEveryRequestExampleIsAccepted sends the example of every operation that has one. A POST
// or PUT without path parameters whose example needs nothing existing is sent on a fresh team
// (a key with every permission; the operator key for operator operations) and must be answered
// with a 2xx. Every other example is sent on the bootstrap team after the seeding, with its path
// parameters and placeholder ids naming seeded resources; its answer must be below 500, a 4xx
// must carry a well-formed error body and must have changed nothing, and the examples of
// acceptedAfterSeeding must get a 2xx.
func TestEveryRequestExampleIsAccepted(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	var missing []string
	for _, op := range ops {
		if op.Body != nil && op.Example == nil {
			missing = append(missing, op.ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("operations with a request body and no example: %v", missing)
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var later []operation
		fresh := 0
		for _, op := range ops {
			if op.Example == nil {
				continue
			}
			if op.NeedsExisting || op.HasPathParams() || (op.Method != http.MethodPost && op.Method != http.MethodPut) {
				later = append(later, op)
				continue
			}
			fresh++
			_, key := env.MustTeam(t, "examples "+op.ID)
			auth := "Bearer " + key
			if op.Operator {
				auth = "Bearer " + apitest.OperatorKey
			}
			body, _ := json.Marshal(op.Example)
			res := env.Do(t, op.Method, op.Path, auth, "application/json", string(body))
			if res.Status < 200 || res.Status > 299 {
				t.Errorf("%s (%s %s): the example was refused on a fresh team\n body %s\n answer %d %s",
					op.ID, op.Method, op.Path, body, res.Status, short(string(res.Body), 500))
			}
		}
		ids := seed(t, env, doc, ops)
		for _, id := range acceptedAfterSeeding {
			if !slices.ContainsFunc(later, func(o operation) bool { return o.ID == id }) {
				t.Errorf("%s: no such operation with an example sent after the seeding", id)
			}
		}
		accepted := 0
		for _, op := range later {
			path := op.Path
			for _, p := range op.Params {
				if p.In == "path" {
					path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(defaultPathValue(op, p, ids)))
				}
			}
			body, _ := json.Marshal(withSeededIDs(op, op.Example, ids))
			before := snapshotDB(t, env)
			res := env.Do(t, op.Method, path, authorization(env, op), "application/json", string(body))
			describe := fmt.Sprintf("%s (%s %s): %s %s\n body %s\n answer %d %s", op.ID, op.Method, op.Path,
				op.Method, path, body, res.Status, short(string(res.Body), 500))
			switch {
			case res.Status >= 500:
				t.Errorf("%s", describe)
			case res.Status >= 400 && slices.Contains(acceptedAfterSeeding, op.ID):
				t.Errorf("%s\n the seeding gives this example what it names; it must be accepted", describe)
			case res.Status >= 400:
				if msg := errorBodyProblem(res); msg != "" {
					t.Errorf("%s\n %s", describe, msg)
				}
				if diff := compareSnapshots(before, snapshotDB(t, env)); diff != "" {
					t.Errorf("%s\n the refused write changed the database: %s", describe, diff)
				}
				t.Logf("refused after the seeding: %s", describe)
			default:
				accepted++
				if restore := restorers[op.ID]; restore != nil {
					restore(t, env)
				}
			}
		}
		if fresh < 25 {
			t.Errorf("only %d examples were sent on a fresh team", fresh)
		}
		t.Logf("%s: %d examples sent on a fresh team (each must be accepted); %d sent after the seeding, %d of them accepted",
			env.Engine, fresh, len(later), accepted)
	})
}

// TestEveryOperationSurvivesMalformedInput reads api/openapi.yaml and sends every operation it
// declares malformed path parameters, query parameters and bodies, generated from the document
// itself, so that an operation added later is covered without touching this file. The body
// probes start from the operation's example (its placeholder ids naming seeded resources), or,
// without one, from the minimal instance of its schema, and break one property at a time. For
// every probe the answer must be below 500; a 4xx must carry exactly {code, message} with code
// equal to the status and a non-empty message; and a write (POST, PUT, PATCH, DELETE) answered
// with a 4xx must leave every row of every table of the database as it was.
func TestEveryOperationSurvivesMalformedInput(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	if len(ops) < 100 {
		t.Fatalf("the document declares %d operations; reading it went wrong", len(ops))
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		started := time.Now()
		empty := snapshotDB(t, env)
		ids := seed(t, env, doc, ops)
		// The snapshot sees what the seeding wrote; otherwise comparing snapshots proves nothing.
		if compareSnapshots(empty, snapshotDB(t, env)) == "" || len(ids) < 5 {
			t.Fatalf("seeding created %d ids and changed no row", len(ids))
		}
		analyzeTables(t, env)
		statuses := map[int]int{}
		total := 0
		for _, op := range ops {
			probes := probes(doc, op, ids)
			total += len(probes)
			runProbes(t, env, op, probes, statuses)
		}
		t.Logf("%s: %d operations, %d probes, answers by status %v, %s", env.Engine, len(ops), total, statuses,
			time.Since(started).Round(time.Millisecond))
	})
}

// ---------------------------------------------------------------- the document

// The document's reading (operations, minimal instances, property paths) is apidocument's,
// shared with the black-box tests and the load command.
type (
	document  = apidocument.Document
	operation = apidocument.Operation
	parameter = apidocument.Parameter
)

func loadDocument(t *testing.T) *document {
	t.Helper()
	doc, err := apidocument.Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func operations(t *testing.T, doc *document) []operation {
	t.Helper()
	ops, err := doc.Operations()
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	return ops
}

// ---------------------------------------------------------------- probes

type probe struct {
	name        string
	method      string
	path        string // with query
	contentType string // "" sends none
	body        string
}

const maxProbesPerOperation = 400

// Raw JSON values that replace one property at a time.
var replacements = []string{
	`null`, `0`, `-1`, `1e308`, `-1e308`, `1.5`, `""`, `"` + strings.Repeat("x", 70000) + `"`, `true`, `[]`, `{}`,
	`[null]`, `"NaN"`, `9223372036854775808`,
}

var pathValues = []string{
	"", "x", strings.Repeat("a", 300), strings.Repeat("a", 70000), "../..", "-1", "99999999999999999999", "1e9",
	"5b0f4c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b", "5B0F4C1E-2A3D-4E5F-8A9B-0C1D2E3F4A5B", "null", "0", "/", "☃",
}

// rawPathValues go into the path as written (they are already percent-encoded).
var rawPathValues = []string{"%2F", "%E2%98%83", "%00", "%ff", "a%20b"}

var queryValues = []string{"x", "-1", "1e400", "", "true", strings.Repeat("a", 70000), "%00", "%ff", "-9223372036854775809"}

// probes lists what is sent to op; ids are the resources seeded, by the path they were created at.
func probes(d *document, op operation, ids []seeded) []probe {
	pathArgs := map[string]string{}
	for _, p := range op.Params {
		if p.In == "path" {
			pathArgs[p.Name] = url.PathEscape(defaultPathValue(op, p, ids))
		}
	}
	build := func(args map[string]string, query string) string {
		path := op.Path
		for name, v := range args {
			path = strings.ReplaceAll(path, "{"+name+"}", v)
		}
		if query != "" {
			path += "?" + query
		}
		return path
	}
	base := build(pathArgs, "")
	validBody := ""
	baseBody := baseBody(d, op, ids)
	if op.Body != nil {
		b, _ := json.Marshal(baseBody)
		validBody = string(b)
	}
	withBody := func(name, path string) probe {
		p := probe{name: name, method: op.Method, path: path}
		if op.Body != nil {
			p.contentType, p.body = "application/json", validBody
		}
		return p
	}

	var fixed []probe
	for _, p := range op.Params {
		if p.In != "path" {
			continue
		}
		var values []string
		for _, v := range pathValues {
			values = append(values, url.PathEscape(v))
		}
		values = append(values, rawPathValues...)
		for _, s := range ids {
			values = append(values, url.PathEscape(s.id))
		}
		for _, v := range values {
			args := maps(pathArgs)
			args[p.Name] = v
			fixed = append(fixed, withBody(fmt.Sprintf("path %s=%s", p.Name, short(v, 40)), build(args, "")))
		}
	}
	for _, p := range op.Params {
		if p.In != "query" {
			continue
		}
		name := url.QueryEscape(p.Name)
		for _, v := range queryValues {
			enc := url.QueryEscape(v)
			if strings.HasPrefix(v, "%") {
				enc = v
			}
			fixed = append(fixed, withBody(fmt.Sprintf("query %s=%s", p.Name, short(v, 40)), build(pathArgs, name+"="+enc)))
		}
		fixed = append(fixed, withBody("query "+p.Name+" repeated", build(pathArgs, name+"=1&"+name+"=2")))
		fixed = append(fixed, withBody("query "+p.Name+" bracketed", build(pathArgs, name+"[a]=1")))
	}
	for _, name := range op.Objects {
		for _, q := range []string{
			name + "[a][b][c]=1", name + "[99999999999]=1", name + "=notjson", name + "={", name + ".x=1",
			name + "[]=1", name + "[0]=x", name + "[-1]=x", name + "[a]=1&" + name + "[a]=2", name + "[%ff]=1",
			name + "[a]=%00", name + "[" + strings.Repeat("a", 70000) + "]=1", name + "[0][0][0][0][0][0][0][0][0][0]=1",
		} {
			fixed = append(fixed, withBody("query object "+short(q, 60), build(pathArgs, q)))
		}
	}
	if op.Body == nil {
		return fixed
	}
	raw := func(name, ct, body string) probe {
		return probe{name: name, method: op.Method, path: base, contentType: ct, body: body}
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	fixed = append(fixed,
		raw("body as is", "application/json", validBody),
		raw("body empty", "application/json", ""),
		raw("body {", "application/json", "{"),
		raw("body []", "application/json", "[]"),
		raw("body null", "application/json", "null"),
		raw(`body "x"`, "application/json", `"x"`),
		raw("body 1", "application/json", "1"),
		raw("body {}", "application/json", "{}"),
		raw("body 100-deep array", "application/json", deep),
		raw("body 10000-deep object", "application/json", strings.Repeat(`{"a":`, 10000)+"1"+strings.Repeat("}", 10000)),
		raw("body invalid UTF-8", "application/json", "{\"a\":\"\xff\xfe\"}"),
		raw("body invalid UTF-8 bytes", "application/json", "\xff\xfe\xfd"),
		raw("body 1 MiB object", "application/json", `{"a":"`+strings.Repeat("x", 1<<20)+`"}`),
		raw("body duplicate key", "application/json", duplicateKey(validBody)),
		raw("body then trailing data", "application/json", validBody+" {}"),
		raw("no Content-Type", "", validBody),
		raw("Content-Type text/plain", "text/plain", validBody),
		raw("Content-Type application/json; charset=latin1", "application/json; charset=latin1", validBody),
		raw("Content-Type garbage", ";;;", validBody),
	)

	var schemaProbes []probe
	paths := d.PropertyPaths(op.Body)
	budget := maxProbesPerOperation - len(fixed)
	if budget < len(paths) {
		budget = len(paths)
	}
	perPath := len(replacements)
	if len(paths)*perPath > budget {
		perPath = max(1, budget/max(1, len(paths)))
	}
	for i, p := range paths {
		for m := range perPath {
			r := replacements[(i*perPath+m)%len(replacements)]
			body, err := json.Marshal(d.SetPath(baseBody, p, json.RawMessage(r)))
			if err != nil {
				continue
			}
			schemaProbes = append(schemaProbes, raw(fmt.Sprintf("body %s=%s", p.String(), short(r, 40)), "application/json", string(body)))
		}
	}
	return append(fixed, schemaProbes...)
}

// baseBody is the valid body that the body probes change: the operation's example with its
// placeholder ids naming seeded resources, or the minimal instance of its schema.
func baseBody(d *document, op operation, ids []seeded) any {
	if op.Body == nil {
		return nil
	}
	if op.Example != nil {
		return withSeededIDs(op, op.Example, ids)
	}
	return d.Minimal(op.Body)
}

// withSeededIDs returns a copy of example with every placeholder id (a property named id, or an
// element of an array whose name ends in Ids) replaced by the id seeded in op's area, when
// there is one.
func withSeededIDs(op operation, example any, ids []seeded) any {
	id, ok := seededInArea(op.Path, ids, false)
	if !ok {
		return example
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = walk(e, k)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				if s, isString := e.(string); isString && strings.HasSuffix(key, "Ids") && slices.Contains(placeholderIDs, s) {
					out[i] = id
					continue
				}
				out[i] = walk(e, "")
			}
			return out
		case string:
			if key == "id" && slices.Contains(placeholderIDs, x) {
				return id
			}
		}
		return v
	}
	return walk(example, "")
}

// seededInArea is the id seeded at the creating path that shares the most segments (at least
// the area's) with path; among those, one that the answer held in a property named id. integer
// chooses between the integer ids and the string ones.
func seededInArea(path string, ids []seeded, integer bool) (string, bool) {
	want := strings.Split(versionSegment.ReplaceAllString(path, ""), "/")
	best, bestScore := "", 3 // two shared segments: "" and the area
	for _, s := range ids {
		if s.integer != integer {
			continue
		}
		have := strings.Split(versionSegment.ReplaceAllString(s.path, ""), "/")
		shared := 0
		for shared < len(have) && shared < len(want) && have[shared] == want[shared] {
			shared++
		}
		score := 2 * shared
		if s.key == "id" {
			score++
		}
		if score > bestScore {
			best, bestScore = s.id, score
		}
	}
	return best, best != ""
}

// duplicateKey repeats the first property of a JSON object with another value.
func duplicateKey(object string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(object), &m) != nil || len(m) == 0 {
		return `{"a":1,"a":2}`
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	k, _ := json.Marshal(keys[0])
	return "{" + string(k) + `:{"x":[1]},` + object[1:]
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

// ---------------------------------------------------------------- seeding

// seeded is a resource that the seeding created: its id and the path it was created at.
type seeded struct {
	path string
	key  string // the property that held the id
	id   string
	// integer is true for an id the answer held as a JSON number (a custom role's); such an id
	// names only integer path parameters.
	integer bool
}

var versionSegment = regexp.MustCompile(`^/mgmt/openapi/\d+`)

// creatingPuts are the PUTs without path parameters that create a resource with a new id, and
// are seeded as the creating POSTs are. (The other such PUTs replace a team's whole set.)
var creatingPuts = []string{"CreateCustomRole"}

// nestedCreators are POSTs under a path parameter that create what another operation's path
// parameter names (a comment's eventId for event_id). They are seeded after the rest, their
// path parameters naming what was seeded; of their answers only the named ids (eventId) are
// kept: a plain id there is the calling key's, as the event's actor.
var nestedCreators = []string{"CreateCaseComment"}

// Seeded by seed in the bootstrap team: the catalog extension kubernetes, deployed with two
// of its items. UndeployExtension's example names it and keeps one of the items.
const (
	deployedPath     = "/mgmt/openapi/3/integrations/extensions/v1/deployed"
	seededDeployment = deployedPath + "?id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard&item_ids=k8s-container-logs"
)

// seed posts the example (or, without one, the minimal body) of every creating operation (a
// POST without path parameters whose example needs nothing existing, and creatingPuts) and
// keeps the ids the answers carry, so that path parameters and placeholder ids can name real
// resources. It then deploys an extension (seededDeployment) and runs nestedCreators.
func seed(t *testing.T, env *apitest.Env, doc *document, ops []operation) []seeded {
	t.Helper()
	for _, id := range slices.Concat(creatingPuts, nestedCreators) {
		if !slices.ContainsFunc(ops, func(o operation) bool { return o.ID == id }) {
			t.Fatalf("seeding: the document has no operation %s", id)
		}
	}
	var out []seeded
	keep := func(path string, answer any, onlyNamed bool) {
		for _, found := range apidocument.IDsIn(answer) {
			s := seeded{key: found.Key, id: found.Value, integer: found.Integer}
			if onlyNamed && s.key == "id" {
				continue
			}
			if !slices.ContainsFunc(out, func(o seeded) bool { return o.id == s.id && o.integer == s.integer }) {
				s.path = path
				out = append(out, s)
			}
		}
	}
	for _, op := range ops {
		creating := op.Method == http.MethodPost || slices.Contains(creatingPuts, op.ID)
		if !creating || op.Body == nil || op.NeedsExisting || strings.Contains(op.Path, "{") {
			continue
		}
		body, _ := json.Marshal(baseBody(doc, op, nil))
		res := env.Do(t, op.Method, op.Path, authorization(env, op), "application/json", string(body))
		if res.Status != http.StatusOK {
			if slices.Contains(creatingPuts, op.ID) {
				t.Fatalf("seeding %s: %d %s", op.ID, res.Status, res.Body)
			}
			continue
		}
		var answer any
		if json.Unmarshal(res.Body, &answer) != nil {
			continue
		}
		keep(op.Path, answer, false)
	}
	keep(deployedPath, deployExtension(t, env), false)
	for _, id := range nestedCreators {
		op := ops[slices.IndexFunc(ops, func(o operation) bool { return o.ID == id })]
		path := op.Path
		for _, p := range op.Params {
			if p.In == "path" {
				path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(defaultPathValue(op, p, out)))
			}
		}
		body, _ := json.Marshal(baseBody(doc, op, out))
		res := env.Do(t, op.Method, path, authorization(env, op), "application/json", string(body))
		var answer any
		if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
			t.Fatalf("seeding %s: %s %s: %d %s", op.ID, op.Method, path, res.Status, res.Body)
		}
		keep(op.Path, answer, true)
	}
	return out
}

// deployExtension deploys seededDeployment in the bootstrap team and returns the answer.
func deployExtension(t *testing.T, env *apitest.Env) any {
	t.Helper()
	res := env.Do(t, http.MethodPut, seededDeployment, "Bearer "+env.RootKey, "", "")
	var answer any
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
		t.Fatalf("seeding the deployment: PUT %s: %d %s", seededDeployment, res.Status, res.Body)
	}
	return answer
}

// restorers put back what an accepted request of the operation removed and the requests after
// it rely on: the body probes of UndeployExtension (and its example) undeploy the seeded
// deployment, which its other probes and GetDeployedExtension need.
var restorers = map[string]func(t *testing.T, env *apitest.Env){
	"UndeployExtension": func(t *testing.T, env *apitest.Env) { deployExtension(t, env) },
}

// defaultPathValue is the value a path parameter takes while another part of the request is
// probed. An integer parameter gets the integer id seeded in the area of the path up to the
// parameter (a custom role's for role_id), or else 1 (team_id always gets 1, the bootstrap team,
// which holds everything seeded). Any other gets the id seeded under the parameter's name in
// camel case (unless that is just id), or else the string id seeded in the area of the path up
// to the parameter (seededInArea), or else x.
func defaultPathValue(op operation, p parameter, ids []seeded) string {
	prefix, _, _ := strings.Cut(op.Path, "{"+p.Name+"}")
	if typ, _ := p.Schema["type"].(string); typ == "integer" {
		if id, ok := seededInArea(prefix, ids, true); ok && p.Name != "team_id" {
			return id
		}
		return "1"
	}
	// caseId answers case_id.
	camel := regexp.MustCompile(`_([a-z])`).ReplaceAllStringFunc(p.Name, func(m string) string { return strings.ToUpper(m[1:]) })
	for _, s := range ids {
		if s.key == camel && camel != "id" && !s.integer {
			return s.id
		}
	}
	if id, ok := seededInArea(prefix, ids, false); ok {
		return id
	}
	return "x"
}

func authorization(env *apitest.Env, op operation) string {
	if op.Operator {
		return "Bearer " + apitest.OperatorKey
	}
	return "Bearer " + env.RootKey
}

// ---------------------------------------------------------------- running

func runProbes(t *testing.T, env *apitest.Env, op operation, probes []probe, statuses map[int]int) {
	t.Helper()
	auth := authorization(env, op)
	var before map[string]string
	if op.IsWrite() {
		before = snapshotDB(t, env)
	}
	for _, p := range probes {
		res := env.Do(t, p.method, p.path, auth, p.contentType, p.body)
		statuses[res.Status]++
		describe := fmt.Sprintf("%s (%s %s), probe %q: %s %s, Content-Type %q, body %s\n answer %d %s",
			op.ID, op.Method, op.Path, p.name, p.method, short(p.path, 300), p.contentType, short(p.body, 300),
			res.Status, short(string(res.Body), 500))
		if res.Status >= 500 {
			t.Errorf("%s", describe)
			continue
		}
		if res.Status >= 400 {
			if msg := errorBodyProblem(res); msg != "" {
				t.Errorf("%s\n %s", describe, msg)
			}
		}
		if !op.IsWrite() {
			continue
		}
		after := snapshotDB(t, env)
		if res.Status >= 400 {
			if diff := compareSnapshots(before, after); diff != "" {
				t.Errorf("%s\n the refused write changed the database: %s", describe, diff)
			}
		} else if restore := restorers[op.ID]; restore != nil {
			restore(t, env)
			after = snapshotDB(t, env)
		}
		before = after
	}
}

// errorBodyProblem says what is wrong with an error answer, or "" when it is exactly
// {code, message} with code equal to the status and a non-empty message.
func errorBodyProblem(res apitest.Response) string {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(res.Body, &body); err != nil {
		return "the body is not a JSON object: " + err.Error()
	}
	if len(body) != 2 || body["code"] == nil || body["message"] == nil {
		return "the body does not have exactly the properties code and message"
	}
	var code int
	if err := json.Unmarshal(body["code"], &code); err != nil || code != res.Status {
		return fmt.Sprintf("code %s is not the status %d", body["code"], res.Status)
	}
	var message string
	if err := json.Unmarshal(body["message"], &message); err != nil || strings.TrimSpace(message) == "" {
		return "the message is not a non-empty string"
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("Content-Type %q", ct)
	}
	return ""
}

// snapshotDB reads every row of every table, in a fixed order, one string per table.
func snapshotDB(t *testing.T, env *apitest.Env) map[string]string {
	t.Helper()
	ctx := context.Background()
	q := env.DB.Read()
	snap, ok := snapshotQueries[env]
	if !ok {
		snap = snapshotQuery(t, env)
		snapshotQueries[env] = snap
	}
	rows, err := q.QueryContext(ctx, snap.query)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	defer rows.Close()
	// One builder per table: appending to a string per row would copy each table's text once per
	// row, and the write probes take thousands of snapshots.
	builders := make(map[string]*strings.Builder, len(snap.tables))
	for _, table := range snap.tables {
		builders[table] = &strings.Builder{}
	}
	var table, row []byte
	for rows.Next() {
		if err := rows.Scan(&table, &row); err != nil {
			t.Fatal(err)
		}
		b := builders[string(table)]
		if b == nil {
			b = &strings.Builder{}
			builders[string(table)] = b
		}
		b.Write(row)
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(builders))
	for table, b := range builders {
		out[table] = b.String()
	}
	return out
}

// snapshotQueries holds, per Env, the one query that reads the whole database (the tables do
// not change while the server runs).
var snapshotQueries = map[*apitest.Env]tableSnapshot{}

type tableSnapshot struct {
	tables []string
	query  string
}

func snapshotQuery(t *testing.T, env *apitest.Env) tableSnapshot {
	t.Helper()
	ctx := context.Background()
	q := env.DB.Read()
	var tables []string
	var listing string
	if env.Engine == db.Postgres {
		listing = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	} else {
		listing = `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
	}
	rows, err := q.QueryContext(ctx, listing)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	var selects []string
	for _, table := range tables {
		quoted := `"` + strings.ReplaceAll(table, `"`, `""`) + `"`
		lit := "'" + strings.ReplaceAll(table, "'", "''") + "'"
		if env.Engine == db.Postgres {
			selects = append(selects, fmt.Sprintf("SELECT %s AS t, r::text AS v FROM %s r", lit, quoted))
			continue
		}
		cols := sqliteColumns(t, q, table)
		var parts []string
		for _, c := range cols {
			parts = append(parts, `quote("`+strings.ReplaceAll(c, `"`, `""`)+`")`)
		}
		selects = append(selects, fmt.Sprintf("SELECT %s AS t, %s AS v FROM %s", lit, strings.Join(parts, "||','||"), quoted))
	}
	// Byte order, whatever the database's collation.
	query := "SELECT t, v FROM (" + strings.Join(selects, " UNION ALL ") + `) s ORDER BY t COLLATE "C", v COLLATE "C"`
	if env.Engine == db.SQLite {
		query = strings.ReplaceAll(query, `COLLATE "C"`, "COLLATE BINARY")
	}
	return tableSnapshot{tables: tables, query: query}
}

// analyzeTables gives PostgreSQL the seeded tables' statistics, as autovacuum would on a server
// (this machine's PostgreSQL runs without it). Never analyzed, every table is estimated at
// thousands of rows, and the snapshot's union of some sixty tables is planned as a parallel query
// whose workers take 10 ms to start for a few hundred rows: most of the probes' time.
func analyzeTables(t *testing.T, env *apitest.Env) {
	t.Helper()
	if env.Engine != db.Postgres {
		return
	}
	for _, table := range snapshotQueries[env].tables {
		if _, err := env.DB.Read().ExecContext(context.Background(), `ANALYZE "`+strings.ReplaceAll(table, `"`, `""`)+`"`); err != nil {
			t.Fatalf("analyze %s: %v", table, err)
		}
	}
}

func sqliteColumns(t *testing.T, q db.Querier, table string) []string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), `SELECT name FROM pragma_table_info($1) ORDER BY cid`, table)
	if err != nil {
		t.Fatalf("columns of %s: %v", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func compareSnapshots(before, after map[string]string) string {
	var diffs []string
	for table, b := range before {
		a, ok := after[table]
		if !ok {
			diffs = append(diffs, "table "+table+" vanished")
			continue
		}
		if a != b {
			diffs = append(diffs, fmt.Sprintf("table %s: before %x (%d rows) %s, after %x (%d rows) %s", table,
				sha256.Sum256([]byte(b)), strings.Count(b, "\n"), short(b, 300),
				sha256.Sum256([]byte(a)), strings.Count(a, "\n"), short(a, 300)))
		}
	}
	for table := range after {
		if _, ok := before[table]; !ok {
			diffs = append(diffs, "table "+table+" appeared")
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}
