// Package apidocument reads the served OpenAPI document (api/openapi.yaml, as embedded in the
// api package) into what a client needs to build requests from it: every operation with its
// method, path template, parameters, permission and body schema and example, the smallest
// instance a schema allows, and the property paths of a body schema with a way to set one. The
// black-box tests, the robustness tests and the load command's mutation run generate their
// requests from it, so that an operation added to the document is covered by all of them
// without an edit. The server reads it too, once at start: internal/api builds its one record
// per operation from Operations, and resolves every $ref of the request schemas through Resolve.
package apidocument

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
)

// Document is a parsed OpenAPI document.
type Document struct {
	// Root is the whole document as YAML decodes it: maps, slices and scalars.
	Root map[string]any
}

// Load parses the served document, api/openapi.yaml.
func Load() (*Document, error) {
	return Parse(spec.OpenAPIYAML)
}

// Parse parses an OpenAPI document written in YAML (or JSON).
func Parse(text []byte) (*Document, error) {
	var root map[string]any
	if err := yaml.Unmarshal(text, &root); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if root == nil {
		return nil, errors.New("openapi document: empty")
	}
	return &Document{Root: root}, nil
}

// Resolve follows $ref (to any depth, at most 32 hops) and returns the object it ends at, or
// nil when node is not an object or a reference leads nowhere.
func (d *Document) Resolve(node any) map[string]any {
	m, _ := node.(map[string]any)
	for range 32 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m = d.Lookup(ref)
	}
	return m
}

// Lookup returns the object a local reference (#/components/schemas/X) names, or nil.
func (d *Document) Lookup(ref string) map[string]any {
	var cur any = d.Root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, _ := cur.(map[string]any)
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}

// Parameter is one parameter of an operation.
type Parameter struct {
	Name     string
	In       string // path, query or header
	Required bool
	Style    string // deepObject for a query object; "" when the document does not say
	Schema   map[string]any
}

// Operation is one operation of the document.
type Operation struct {
	ID     string // operationId
	Method string // upper case: GET, POST, PUT, PATCH, DELETE
	Path   string // the template, e.g. /mgmt/openapi/5/cases/cases/v1/{case_id}
	// Params are the path item's parameters overridden and completed by the operation's own.
	Params []Parameter
	// Objects are the names of its query objects (its deepObject parameters), sorted.
	Objects []string
	// Permission is its x-permission ("" when it has none).
	Permission string
	// Operator says that the operator key guards it (an operatorKey security requirement).
	Operator bool
	// OperatorToo says that it takes the operator key beside team keys (x-operator-key:
	// accepted): the public teams operations.
	OperatorToo bool
	// Body is the resolved schema of its application/json request body: nil when it has no
	// request body, an empty map when the body has no schema.
	Body map[string]any
	// Example is the body's example, nil when there is none; NeedsExisting is the example's
	// x-example-needs-existing (the example names a resource that must exist first).
	Example       any
	NeedsExisting bool
	// SuccessStatus is its lowest 2xx response (200 when it lists none).
	SuccessStatus int
	// OtherPaths are its x-other-paths: the templates the operation has in other versions of
	// the public documents, after the version segment.
	OtherPaths []string
	// Object is the operation as the document holds it, for what no field above says.
	Object map[string]any
}

func (o Operation) String() string { return o.ID + " (" + o.Method + " " + o.Path + ")" }

// IsWrite reports whether the operation may change state (any method but GET and HEAD).
func (o Operation) IsWrite() bool { return o.Method != "GET" && o.Method != "HEAD" }

// PathParams are its path parameters, in the order of Params.
func (o Operation) PathParams() []Parameter {
	var out []Parameter
	for _, p := range o.Params {
		if p.In == "path" {
			out = append(out, p)
		}
	}
	return out
}

// HasPathParams reports whether its path has a parameter.
func (o Operation) HasPathParams() bool {
	return slices.ContainsFunc(o.Params, func(p Parameter) bool { return p.In == "path" })
}

// methodOrder puts, within one path, reads before writes and deletes last, so that a client
// walking the operations in order finds what it created still there as long as possible.
var methodOrder = map[string]int{"get": 0, "post": 1, "put": 2, "patch": 3, "delete": 4}

// Operations lists every operation of the document, sorted by path and, within a path, GET,
// POST, PUT, PATCH, DELETE. It fails when an operation has no operationId or a request body
// that is not application/json.
func (d *Document) Operations() ([]Operation, error) {
	paths, _ := d.Root["paths"].(map[string]any)
	var out []Operation
	for path, rawItem := range paths {
		item, _ := rawItem.(map[string]any)
		shared := d.Parameters(item["parameters"])
		for method, rawOp := range item {
			if _, ok := methodOrder[method]; !ok {
				continue
			}
			op, _ := rawOp.(map[string]any)
			o := Operation{Method: strings.ToUpper(method), Path: path}
			o.ID, _ = op["operationId"].(string)
			if o.ID == "" {
				return nil, fmt.Errorf("%s %s has no operationId", method, path)
			}
			o.Permission, _ = op["x-permission"].(string)
			o.Params = slices.Clone(shared)
			for _, p := range d.Parameters(op["parameters"]) {
				i := slices.IndexFunc(o.Params, func(q Parameter) bool { return q.Name == p.Name && q.In == p.In })
				if i >= 0 {
					o.Params[i] = p
				} else {
					o.Params = append(o.Params, p)
				}
			}
			for _, p := range o.Params {
				if p.In == "query" && p.Style == "deepObject" {
					o.Objects = append(o.Objects, p.Name)
				}
			}
			sort.Strings(o.Objects)
			if rb := d.Resolve(op["requestBody"]); rb != nil {
				content, _ := rb["content"].(map[string]any)
				media, _ := content["application/json"].(map[string]any)
				if media == nil {
					return nil, fmt.Errorf("%s: the request body is not application/json", o.ID)
				}
				o.Body = d.Resolve(media["schema"])
				if o.Body == nil {
					o.Body = map[string]any{}
				}
				o.Example = media["example"]
				o.NeedsExisting, _ = media["x-example-needs-existing"].(bool)
			}
			o.OperatorToo = op["x-operator-key"] == "accepted"
			o.SuccessStatus = successStatus(op["responses"])
			others, _ := op["x-other-paths"].([]any)
			for _, other := range others {
				text, ok := other.(string)
				if !ok {
					return nil, fmt.Errorf("%s: x-other-paths holds %v, not a path", o.ID, other)
				}
				o.OtherPaths = append(o.OtherPaths, text)
			}
			o.Object = op
			if sec, ok := op["security"].([]any); ok {
				for _, s := range sec {
					if m, _ := s.(map[string]any); m != nil {
						if _, ok := m["operatorKey"]; ok {
							o.Operator = true
						}
					}
				}
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return methodOrder[strings.ToLower(out[i].Method)] < methodOrder[strings.ToLower(out[j].Method)]
	})
	return out, nil
}

// successStatus is the lowest 2xx status of a responses object, 200 when it has none.
func successStatus(responses any) int {
	m, _ := responses.(map[string]any)
	status := 0
	for code := range m {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 && (status == 0 || n < status) {
			status = n
		}
	}
	if status == 0 {
		return 200
	}
	return status
}

// Parameters reads a parameters list (references resolved).
func (d *Document) Parameters(raw any) []Parameter {
	list, _ := raw.([]any)
	var out []Parameter
	for _, r := range list {
		p := d.Resolve(r)
		if p == nil {
			continue
		}
		name, _ := p["name"].(string)
		in, _ := p["in"].(string)
		required, _ := p["required"].(bool)
		style, _ := p["style"].(string)
		out = append(out, Parameter{Name: name, In: in, Required: required, Style: style, Schema: d.Resolve(p["schema"])})
	}
	return out
}

// ---------------------------------------------------------------- minimal instances

// Minimal builds the smallest instance of schema that its types allow: required properties (and
// name, which most areas require by rule rather than by schema) with a type-correct value,
// arrays with their fewest (at least one) items, an enumeration's first value that is not an
// UNSPECIFIED placeholder, a oneOf's or anyOf's first alternative (with the schema's own
// properties), a string matching the schema's pattern where one of a few candidates does. It
// returns nil for a nil schema.
func (d *Document) Minimal(schema map[string]any) any { return d.minimal(schema, 0) }

func (d *Document) minimal(schema map[string]any, depth int) any {
	s := d.Resolve(schema)
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
			if m, ok := d.minimal(d.Resolve(alt), depth+1).(map[string]any); ok {
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
			first := d.minimal(d.Resolve(alts[0]), depth+1)
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
		if v, ok := Number(s["minLength"]); ok && v > 1 {
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
		if lo, ok := Number(s["minimum"]); ok && lo > v {
			v = lo
		}
		if hi, ok := Number(s["maximum"]); ok && hi < v {
			v = hi
		}
		return v
	case "boolean":
		return true
	case "array":
		n := 1
		if v, ok := Number(s["minItems"]); ok && v > 1 {
			n = int(v)
		}
		items := make([]any, n)
		for i := range items {
			items[i] = d.minimal(d.Resolve(s["items"]), depth+1)
		}
		return items
	}
	return d.objectMinimal(s, depth)
}

func (d *Document) objectMinimal(s map[string]any, depth int) any {
	props, _ := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	if props == nil && required == nil {
		if s["type"] == "object" || s["additionalProperties"] != nil || len(s) == 0 {
			return map[string]any{}
		}
		return nil
	}
	out := map[string]any{}
	for _, r := range required {
		name, _ := r.(string)
		out[name] = d.minimal(d.Resolve(props[name]), depth+1)
	}
	// Most areas require a name by rule rather than by schema; filling it lets a request get
	// past that rule to whatever it aims at.
	if p, ok := props["name"]; ok {
		if _, done := out["name"]; !done {
			out["name"] = d.minimal(d.Resolve(p), depth+1)
		}
	}
	return out
}

// patternCandidates are tried, in order, against a string schema's pattern.
var patternCandidates = []string{
	"a", "00000000-0000-4000-8000-000000000001", "1", "a1", "A", "aa", "a-1", "1.0.0", "2024-01-02T03:04:05Z",
	"#000000", "a.b", "a_b", "a@b.c",
}

// Number reads a number of the document (YAML decodes it as int, int64, uint64 or float64).
func Number(v any) (float64, bool) {
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

// Step is one step into a JSON value: a property name, or index 0 of an array.
type Step struct {
	Key   string
	Index bool
	// Schema describes the value the step leads to; a value missing on the way is built as its
	// minimal instance by SetPath, so that a request breaks only the property it aims at.
	Schema map[string]any
}

// PropertyPath is a path from a body's root to one value in it.
type PropertyPath []Step

// String writes the path as a.b[0].c.
func (p PropertyPath) String() string {
	var b strings.Builder
	for _, s := range p {
		if s.Index {
			b.WriteString("[0]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// PropertyPaths lists every property (and array item) that schema declares, depth first, the
// properties of an object in name order, each once; the alternatives of allOf, oneOf and anyOf
// are all walked. Recursive schemas are followed at most ten references and ten steps deep.
func (d *Document) PropertyPaths(schema map[string]any) []PropertyPath {
	var out []PropertyPath
	seen := map[string]bool{}
	add := func(p PropertyPath) {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	var walk func(s map[string]any, prefix PropertyPath, refs []string)
	walk = func(raw map[string]any, prefix PropertyPath, refs []string) {
		if ref, ok := raw["$ref"].(string); ok {
			if slices.Contains(refs, ref) || len(refs) > 10 {
				return
			}
			refs = append(slices.Clone(refs), ref)
		}
		s := d.Resolve(raw)
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
			p := append(slices.Clone(prefix), Step{Index: true, Schema: items})
			add(p)
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
			p := append(slices.Clone(prefix), Step{Key: name, Schema: m})
			add(p)
			walk(m, p, refs)
		}
	}
	walk(schema, nil, nil)
	return out
}

// SetPath returns a copy of base with the value at p replaced by value, building what is missing
// on the way as its minimal instance; base is not changed. An array step sets the first item.
func (d *Document) SetPath(base any, p PropertyPath, value any) any {
	if len(p) == 0 {
		return value
	}
	s := p[0]
	if s.Index {
		arr, _ := base.([]any)
		cp := slices.Clone(arr)
		if len(cp) == 0 {
			cp = []any{nil}
		}
		if cp[0] == nil && len(p) > 1 {
			cp[0] = d.Minimal(s.Schema)
		}
		cp[0] = d.SetPath(cp[0], p[1:], value)
		return cp
	}
	m, _ := base.(map[string]any)
	cp := make(map[string]any, len(m)+1)
	for k, v := range m {
		cp[k] = v
	}
	next := cp[s.Key]
	if next == nil && len(p) > 1 {
		next = d.Minimal(s.Schema)
	}
	cp[s.Key] = d.SetPath(next, p[1:], value)
	return cp
}
