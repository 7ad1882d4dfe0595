package blackbox

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
)

// document is api/openapi.yaml as read at test time.
type document struct {
	root map[string]any
}

func loadDocument(t testing.TB) *document {
	t.Helper()
	var root map[string]any
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &root); err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
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
		var cur any = d.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			next, _ := cur.(map[string]any)
			cur = next[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

type parameter struct {
	name     string
	in       string // path or query
	required bool
	schema   map[string]any
}

// operation is one operation of the document, with what the probes need to build its request.
type operation struct {
	id         string
	method     string
	path       string // the template, e.g. /mgmt/openapi/5/cases/cases/v1/{case_id}
	params     []parameter
	permission string // x-permission; "operator" for the operator operations
	operator   bool   // guarded by the operator key
	hasBody    bool
	body       map[string]any // the JSON body schema
	example    any            // the body's example, nil when there is none
}

func (o operation) String() string { return o.id + " (" + o.method + " " + o.path + ")" }

func (o operation) pathParams() []parameter {
	var out []parameter
	for _, p := range o.params {
		if p.in == "path" {
			out = append(out, p)
		}
	}
	return out
}

var methods = []string{"get", "put", "post", "patch", "delete"}

// operations lists every operation of the document, sorted by path and method.
func (d *document) operations(t testing.TB) []operation {
	t.Helper()
	paths, _ := d.root["paths"].(map[string]any)
	var out []operation
	for path, rawItem := range paths {
		item, _ := rawItem.(map[string]any)
		shared := d.parameters(item["parameters"])
		for method, rawOp := range item {
			if !slices.Contains(methods, method) {
				continue
			}
			op, _ := rawOp.(map[string]any)
			o := operation{method: strings.ToUpper(method), path: path}
			o.id, _ = op["operationId"].(string)
			o.permission, _ = op["x-permission"].(string)
			if o.id == "" || o.permission == "" {
				t.Fatalf("%s %s has no operationId or no x-permission", method, path)
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
			if rb := d.resolve(op["requestBody"]); rb != nil {
				content, _ := rb["content"].(map[string]any)
				media, _ := content["application/json"].(map[string]any)
				o.hasBody = true
				o.body = d.resolve(media["schema"])
				o.example = media["example"]
			}
			if sec, ok := op["security"].([]any); ok {
				for _, s := range sec {
					if m, _ := s.(map[string]any); m != nil && m["operatorKey"] != nil {
						o.operator = true
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
		return out[i].method < out[j].method
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
		out = append(out, parameter{name: name, in: in, required: required, schema: d.resolve(p["schema"])})
	}
	return out
}

// minimal builds the smallest instance of schema its types allow: required properties (and
// name) with a type-correct value, arrays with their fewest (at least one) items, an enumeration's
// first value that is not an UNSPECIFIED placeholder, a oneOf's or anyOf's first alternative.
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
		return merged
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			return d.minimal(d.resolve(alts[0]), depth+1)
		}
	}
	switch s["type"] {
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
				for _, c := range []string{"a", "1", "a1", "A", "aa", "a-1", "1.0.0", "a.b", "a_b"} {
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
	props, _ := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	out := map[string]any{}
	for _, r := range required {
		name, _ := r.(string)
		out[name] = d.minimal(d.resolve(props[name]), depth+1)
	}
	if p, ok := props["name"]; ok && out["name"] == nil {
		out["name"] = d.minimal(d.resolve(p), depth+1)
	}
	return out
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

// versionSegment is the API version at the start of a management path, which fixtures ignore:
// /mgmt/openapi/3/slo/... and /mgmt/openapi/4/slo/... name the same resources.
var versionSegment = regexp.MustCompile(`^/mgmt/openapi/\d+`)

func versionless(path string) string { return versionSegment.ReplaceAllString(path, "") }
