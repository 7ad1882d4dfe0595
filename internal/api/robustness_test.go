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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
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
	ops := doc.operations(t)
	var missing []string
	for _, op := range ops {
		if op.body != nil && op.example == nil {
			missing = append(missing, op.id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("operations with a request body and no example: %v", missing)
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var later []operation
		fresh := 0
		for _, op := range ops {
			if op.example == nil {
				continue
			}
			if op.needsExisting || op.hasPathParams() || (op.method != http.MethodPost && op.method != http.MethodPut) {
				later = append(later, op)
				continue
			}
			fresh++
			_, key := env.MustTeam(t, "examples "+op.id)
			auth := "Bearer " + key
			if op.operator {
				auth = "Bearer " + apitest.OperatorKey
			}
			body, _ := json.Marshal(op.example)
			res := env.Do(t, op.method, op.path, auth, "application/json", string(body))
			if res.Status < 200 || res.Status > 299 {
				t.Errorf("%s (%s %s): the example was refused on a fresh team\n body %s\n answer %d %s",
					op.id, op.method, op.path, body, res.Status, short(string(res.Body), 500))
			}
		}
		ids := seed(t, env, doc, ops)
		for _, id := range acceptedAfterSeeding {
			if !slices.ContainsFunc(later, func(o operation) bool { return o.id == id }) {
				t.Errorf("%s: no such operation with an example sent after the seeding", id)
			}
		}
		accepted := 0
		for _, op := range later {
			path := op.path
			for _, p := range op.params {
				if p.in == "path" {
					path = strings.ReplaceAll(path, "{"+p.name+"}", url.PathEscape(defaultPathValue(op, p, ids)))
				}
			}
			body, _ := json.Marshal(withSeededIDs(op, op.example, ids))
			before := snapshotDB(t, env)
			res := env.Do(t, op.method, path, authorization(env, op), "application/json", string(body))
			describe := fmt.Sprintf("%s (%s %s): %s %s\n body %s\n answer %d %s", op.id, op.method, op.path,
				op.method, path, body, res.Status, short(string(res.Body), 500))
			switch {
			case res.Status >= 500:
				t.Errorf("%s", describe)
			case res.Status >= 400 && slices.Contains(acceptedAfterSeeding, op.id):
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
				if restore := restorers[op.id]; restore != nil {
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
	ops := doc.operations(t)
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
		statuses := map[int]int{}
		total := 0
		for _, op := range ops {
			probes := doc.probes(op, ids)
			total += len(probes)
			runProbes(t, env, op, probes, statuses)
		}
		t.Logf("%s: %d operations, %d probes, answers by status %v, %s", env.Engine, len(ops), total, statuses,
			time.Since(started).Round(time.Millisecond))
	})
}

// ---------------------------------------------------------------- the document

type document struct {
	root map[string]any
}

func loadDocument(t *testing.T) *document {
	t.Helper()
	var root map[string]any
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &root); err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	return &document{root: root}
}

// resolve follows $ref (to any depth) into the document.
func (d *document) resolve(node any) map[string]any {
	m, _ := node.(map[string]any)
	for range 32 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m = d.lookup(ref)
	}
	return m
}

func (d *document) lookup(ref string) map[string]any {
	var cur any = d.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, _ := cur.(map[string]any)
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}

type parameter struct {
	name     string
	in       string
	required bool
	style    string
	schema   map[string]any
}

type operation struct {
	id       string
	method   string
	path     string // the template, e.g. /x/{id}
	params   []parameter
	objects  []string       // names of its query objects (its deepObject parameters)
	body     map[string]any // the JSON body schema, nil when there is none
	operator bool           // guarded by the operator key
	// example is the body's example, nil when there is none; needsExisting is its
	// x-example-needs-existing.
	example       any
	needsExisting bool
}

func (o operation) isWrite() bool {
	return o.method != http.MethodGet && o.method != http.MethodHead
}

func (o operation) hasPathParams() bool {
	return slices.ContainsFunc(o.params, func(p parameter) bool { return p.in == "path" })
}

// methodOrder runs reads before writes, and deletes last, so that a seeded resource is there
// for as many probes as possible.
var methodOrder = map[string]int{"get": 0, "post": 1, "put": 2, "patch": 3, "delete": 4}

func (d *document) operations(t *testing.T) []operation {
	t.Helper()
	paths, _ := d.root["paths"].(map[string]any)
	var out []operation
	for path, rawItem := range paths {
		item, _ := rawItem.(map[string]any)
		shared := d.parameters(item["parameters"])
		for method, rawOp := range item {
			if _, ok := methodOrder[method]; !ok {
				continue
			}
			op, _ := rawOp.(map[string]any)
			o := operation{method: strings.ToUpper(method), path: path}
			o.id, _ = op["operationId"].(string)
			if o.id == "" {
				t.Fatalf("%s %s has no operationId", method, path)
			}
			o.params = slices.Clone(shared)
			for _, p := range d.parameters(op["parameters"]) {
				i := slices.IndexFunc(o.params, func(q parameter) bool { return q.name == p.name && q.in == p.in })
				if i >= 0 {
					o.params[i] = p
				} else {
					o.params = append(o.params, p)
				}
			}
			for _, p := range o.params {
				if p.in == "query" && p.style == "deepObject" {
					o.objects = append(o.objects, p.name)
				}
			}
			sort.Strings(o.objects)
			if rb := d.resolve(op["requestBody"]); rb != nil {
				content, _ := rb["content"].(map[string]any)
				media, _ := content["application/json"].(map[string]any)
				if media == nil {
					t.Fatalf("%s: request body is not application/json", o.id)
				}
				o.body = d.resolve(media["schema"])
				if o.body == nil {
					o.body = map[string]any{}
				}
				o.example = media["example"]
				o.needsExisting, _ = media["x-example-needs-existing"].(bool)
			}
			if sec, ok := op["security"].([]any); ok {
				for _, s := range sec {
					if m, _ := s.(map[string]any); m != nil {
						if _, ok := m["operatorKey"]; ok {
							o.operator = true
						}
					}
				}
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].path != out[j].path {
			return out[i].path < out[j].path
		}
		return methodOrder[strings.ToLower(out[i].method)] < methodOrder[strings.ToLower(out[j].method)]
	})
	return out
}

func (d *document) parameters(raw any) []parameter {
	list, _ := raw.([]any)
	var out []parameter
	for _, r := range list {
		p := d.resolve(r)
		if p == nil {
			continue
		}
		name, _ := p["name"].(string)
		in, _ := p["in"].(string)
		required, _ := p["required"].(bool)
		style, _ := p["style"].(string)
		out = append(out, parameter{name: name, in: in, required: required, style: style, schema: d.resolve(p["schema"])})
	}
	return out
}

// ---------------------------------------------------------------- minimal instances

// minimal builds the smallest instance of schema that its types allow: required properties with
// a type-correct default, arrays with their fewest (at least one) elements, enums with their
// first value that is not an UNSPECIFIED placeholder, the first alternative of a oneOf/anyOf.
func (d *document) minimal(schema map[string]any, depth int) any {
	s := d.resolve(schema)
	if s == nil || depth > 12 {
		return nil
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		for _, v := range enum {
			if str, ok := v.(string); !ok || !strings.Contains(str, "UNSPECIFIED") {
				return v
			}
		}
		return enum[0]
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		for _, alt := range all {
			if m, ok := d.minimal(d.resolve(alt), depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
		}
		if obj, ok := d.objectMinimal(s, depth).(map[string]any); ok {
			for k, v := range obj {
				merged[k] = v
			}
		}
		return merged
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			first := d.minimal(d.resolve(alts[0]), depth+1)
			if obj, ok := d.objectMinimal(s, depth).(map[string]any); ok {
				if m, ok := first.(map[string]any); ok {
					for k, v := range obj {
						m[k] = v
					}
				}
			}
			return first
		}
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "string":
		switch s["format"] {
		case "date-time":
			return "2024-01-02T03:04:05Z"
		case "date":
			return "2024-01-02"
		case "uuid":
			return "00000000-0000-4000-8000-000000000001"
		}
		n := 1
		if v, ok := number(s["minLength"]); ok && v > 1 {
			n = int(v)
		}
		if pattern, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(pattern); err == nil {
				for _, c := range patternCandidates {
					if re.MatchString(c) {
						return c
					}
				}
			}
		}
		return strings.Repeat("a", n)
	case "integer", "number":
		v := 1.0
		if lo, ok := number(s["minimum"]); ok && lo > v {
			v = lo
		}
		if hi, ok := number(s["maximum"]); ok && hi < v {
			v = hi
		}
		return v
	case "boolean":
		return true
	case "array":
		n := 1
		if v, ok := number(s["minItems"]); ok && v > 1 {
			n = int(v)
		}
		items := make([]any, n)
		for i := range items {
			items[i] = d.minimal(d.resolve(s["items"]), depth+1)
		}
		return items
	}
	return d.objectMinimal(s, depth)
}

func (d *document) objectMinimal(s map[string]any, depth int) any {
	props, _ := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	if props == nil && required == nil {
		if s["type"] == "object" || s["additionalProperties"] != nil {
			return map[string]any{}
		}
		if len(s) == 0 {
			return map[string]any{}
		}
		return nil
	}
	out := map[string]any{}
	for _, r := range required {
		name, _ := r.(string)
		out[name] = d.minimal(d.resolve(props[name]), depth+1)
	}
	// Most areas require a name by rule rather than by schema; filling it lets more probes
	// get past that rule to the ones they aim at.
	if p, ok := props["name"]; ok {
		if _, done := out["name"]; !done {
			out["name"] = d.minimal(d.resolve(p), depth+1)
		}
	}
	return out
}

// patternCandidates are tried, in order, against a string schema's pattern.
var patternCandidates = []string{
	"a", "00000000-0000-4000-8000-000000000001", "1", "a1", "A", "aa", "a-1", "1.0.0", "2024-01-02T03:04:05Z",
	"#000000", "a.b", "a_b", "a@b.c",
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// ---------------------------------------------------------------- property paths

// step is one step into a JSON value: a property name, or index 0 of an array.
type step struct {
	key   string
	index bool
	// schema describes the value the step leads to; a value missing on the way is built as its
	// minimal instance, so that the probe fails only for the property it replaces.
	schema map[string]any
}

func (d *document) propertyPaths(schema map[string]any) [][]step {
	var out [][]step
	seen := map[string]bool{}
	var walk func(s map[string]any, prefix []step, refs []string)
	walk = func(raw map[string]any, prefix []step, refs []string) {
		if ref, ok := raw["$ref"].(string); ok {
			if slices.Contains(refs, ref) || len(refs) > 10 {
				return
			}
			refs = append(slices.Clone(refs), ref)
		}
		s := d.resolve(raw)
		if s == nil || len(prefix) > 10 {
			return
		}
		for _, key := range []string{"allOf", "oneOf", "anyOf"} {
			alts, _ := s[key].([]any)
			for _, alt := range alts {
				m, _ := alt.(map[string]any)
				walk(m, prefix, refs)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			p := append(slices.Clone(prefix), step{index: true, schema: items})
			add(&out, seen, p)
			walk(items, p, refs)
		}
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			m, _ := props[name].(map[string]any)
			p := append(slices.Clone(prefix), step{key: name, schema: m})
			add(&out, seen, p)
			walk(m, p, refs)
		}
	}
	walk(schema, nil, nil)
	return out
}

func add(out *[][]step, seen map[string]bool, p []step) {
	k := pathString(p)
	if !seen[k] {
		seen[k] = true
		*out = append(*out, p)
	}
}

func pathString(p []step) string {
	var b strings.Builder
	for _, s := range p {
		if s.index {
			b.WriteString("[0]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

// setPath returns a deep copy of base with the value at p replaced (creating what is missing).
func (d *document) setPath(base any, p []step, value any) any {
	if len(p) == 0 {
		return value
	}
	s := p[0]
	if s.index {
		arr, _ := base.([]any)
		cp := slices.Clone(arr)
		if len(cp) == 0 {
			cp = []any{nil}
		}
		if cp[0] == nil && len(p) > 1 {
			cp[0] = d.minimal(s.schema, 0)
		}
		cp[0] = d.setPath(cp[0], p[1:], value)
		return cp
	}
	m, _ := base.(map[string]any)
	cp := make(map[string]any, len(m)+1)
	for k, v := range m {
		cp[k] = v
	}
	next := cp[s.key]
	if next == nil && len(p) > 1 {
		next = d.minimal(s.schema, 0)
	}
	cp[s.key] = d.setPath(next, p[1:], value)
	return cp
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
func (d *document) probes(op operation, ids []seeded) []probe {
	pathArgs := map[string]string{}
	for _, p := range op.params {
		if p.in == "path" {
			pathArgs[p.name] = url.PathEscape(defaultPathValue(op, p, ids))
		}
	}
	build := func(args map[string]string, query string) string {
		path := op.path
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
	baseBody := d.baseBody(op, ids)
	if op.body != nil {
		b, _ := json.Marshal(baseBody)
		validBody = string(b)
	}
	withBody := func(name, path string) probe {
		p := probe{name: name, method: op.method, path: path}
		if op.body != nil {
			p.contentType, p.body = "application/json", validBody
		}
		return p
	}

	var fixed []probe
	for _, p := range op.params {
		if p.in != "path" {
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
			args[p.name] = v
			fixed = append(fixed, withBody(fmt.Sprintf("path %s=%s", p.name, short(v, 40)), build(args, "")))
		}
	}
	for _, p := range op.params {
		if p.in != "query" {
			continue
		}
		name := url.QueryEscape(p.name)
		for _, v := range queryValues {
			enc := url.QueryEscape(v)
			if strings.HasPrefix(v, "%") {
				enc = v
			}
			fixed = append(fixed, withBody(fmt.Sprintf("query %s=%s", p.name, short(v, 40)), build(pathArgs, name+"="+enc)))
		}
		fixed = append(fixed, withBody("query "+p.name+" repeated", build(pathArgs, name+"=1&"+name+"=2")))
		fixed = append(fixed, withBody("query "+p.name+" bracketed", build(pathArgs, name+"[a]=1")))
	}
	for _, name := range op.objects {
		for _, q := range []string{
			name + "[a][b][c]=1", name + "[99999999999]=1", name + "=notjson", name + "={", name + ".x=1",
			name + "[]=1", name + "[0]=x", name + "[-1]=x", name + "[a]=1&" + name + "[a]=2", name + "[%ff]=1",
			name + "[a]=%00", name + "[" + strings.Repeat("a", 70000) + "]=1", name + "[0][0][0][0][0][0][0][0][0][0]=1",
		} {
			fixed = append(fixed, withBody("query object "+short(q, 60), build(pathArgs, q)))
		}
	}
	if op.body == nil {
		return fixed
	}
	raw := func(name, ct, body string) probe {
		return probe{name: name, method: op.method, path: base, contentType: ct, body: body}
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
	paths := d.propertyPaths(op.body)
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
			body, err := json.Marshal(d.setPath(baseBody, p, json.RawMessage(r)))
			if err != nil {
				continue
			}
			schemaProbes = append(schemaProbes, raw(fmt.Sprintf("body %s=%s", pathString(p), short(r, 40)), "application/json", string(body)))
		}
	}
	return append(fixed, schemaProbes...)
}

// baseBody is the valid body that the body probes change: the operation's example with its
// placeholder ids naming seeded resources, or the minimal instance of its schema.
func (d *document) baseBody(op operation, ids []seeded) any {
	if op.body == nil {
		return nil
	}
	if op.example != nil {
		return withSeededIDs(op, op.example, ids)
	}
	return d.minimal(op.body, 0)
}

// withSeededIDs returns a copy of example with every placeholder id (a property named id, or an
// element of an array whose name ends in Ids) replaced by the id seeded in op's area, when
// there is one.
func withSeededIDs(op operation, example any, ids []seeded) any {
	id, ok := seededInArea(op.path, ids, false)
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
		if !slices.ContainsFunc(ops, func(o operation) bool { return o.id == id }) {
			t.Fatalf("seeding: the document has no operation %s", id)
		}
	}
	var out []seeded
	keep := func(path string, answer any, onlyNamed bool) {
		for _, s := range idsIn(answer, 0) {
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
		creating := op.method == http.MethodPost || slices.Contains(creatingPuts, op.id)
		if !creating || op.body == nil || op.needsExisting || strings.Contains(op.path, "{") {
			continue
		}
		body, _ := json.Marshal(doc.baseBody(op, nil))
		res := env.Do(t, op.method, op.path, authorization(env, op), "application/json", string(body))
		if res.Status != http.StatusOK {
			if slices.Contains(creatingPuts, op.id) {
				t.Fatalf("seeding %s: %d %s", op.id, res.Status, res.Body)
			}
			continue
		}
		var answer any
		if json.Unmarshal(res.Body, &answer) != nil {
			continue
		}
		keep(op.path, answer, false)
	}
	keep(deployedPath, deployExtension(t, env), false)
	for _, id := range nestedCreators {
		op := ops[slices.IndexFunc(ops, func(o operation) bool { return o.id == id })]
		path := op.path
		for _, p := range op.params {
			if p.in == "path" {
				path = strings.ReplaceAll(path, "{"+p.name+"}", url.PathEscape(defaultPathValue(op, p, out)))
			}
		}
		body, _ := json.Marshal(doc.baseBody(op, out))
		res := env.Do(t, op.method, path, authorization(env, op), "application/json", string(body))
		var answer any
		if res.Status != http.StatusOK || json.Unmarshal(res.Body, &answer) != nil {
			t.Fatalf("seeding %s: %s %s: %d %s", op.id, op.method, path, res.Status, res.Body)
		}
		keep(op.path, answer, true)
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

// idsIn collects the values of properties named id or ending in Id, a few levels deep,
// shallower first: strings, and whole positive numbers (marked integer).
func idsIn(v any, depth int) []seeded {
	if depth > 4 {
		return nil
	}
	var out []seeded
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// An object's own ids come before those of what it holds (an incident's before its events').
		for _, k := range keys {
			if k != "id" && !strings.HasSuffix(k, "Id") {
				continue
			}
			switch id := x[k].(type) {
			case string:
				if id != "" && len(id) < 100 {
					out = append(out, seeded{key: k, id: id})
				}
			case float64:
				if id >= 1 && id < 1<<53 && id == float64(int64(id)) {
					out = append(out, seeded{key: k, id: strconv.FormatInt(int64(id), 10), integer: true})
				}
			}
		}
		for _, k := range keys {
			out = append(out, idsIn(x[k], depth+1)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, idsIn(e, depth+1)...)
		}
	}
	return out
}

// defaultPathValue is the value a path parameter takes while another part of the request is
// probed. An integer parameter gets the integer id seeded in the area of the path up to the
// parameter (a custom role's for role_id), or else 1 (team_id always gets 1, the bootstrap team,
// which holds everything seeded). Any other gets the id seeded under the parameter's name in
// camel case (unless that is just id), or else the string id seeded in the area of the path up
// to the parameter (seededInArea), or else x.
func defaultPathValue(op operation, p parameter, ids []seeded) string {
	prefix, _, _ := strings.Cut(op.path, "{"+p.name+"}")
	if typ, _ := p.schema["type"].(string); typ == "integer" {
		if id, ok := seededInArea(prefix, ids, true); ok && p.name != "team_id" {
			return id
		}
		return "1"
	}
	// caseId answers case_id.
	camel := regexp.MustCompile(`_([a-z])`).ReplaceAllStringFunc(p.name, func(m string) string { return strings.ToUpper(m[1:]) })
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
	if op.operator {
		return "Bearer " + apitest.OperatorKey
	}
	return "Bearer " + env.RootKey
}

// ---------------------------------------------------------------- running

func runProbes(t *testing.T, env *apitest.Env, op operation, probes []probe, statuses map[int]int) {
	t.Helper()
	auth := authorization(env, op)
	var before map[string]string
	if op.isWrite() {
		before = snapshotDB(t, env)
	}
	for _, p := range probes {
		res := env.Do(t, p.method, p.path, auth, p.contentType, p.body)
		statuses[res.Status]++
		describe := fmt.Sprintf("%s (%s %s), probe %q: %s %s, Content-Type %q, body %s\n answer %d %s",
			op.id, op.method, op.path, p.name, p.method, short(p.path, 300), p.contentType, short(p.body, 300),
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
		if !op.isWrite() {
			continue
		}
		after := snapshotDB(t, env)
		if res.Status >= 400 {
			if diff := compareSnapshots(before, after); diff != "" {
				t.Errorf("%s\n the refused write changed the database: %s", describe, diff)
			}
		} else if restore := restorers[op.id]; restore != nil {
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
