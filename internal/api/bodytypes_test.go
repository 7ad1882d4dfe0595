package api

import (
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
)

// The schema walk names the first value, in the order written, whose JSON type the schema does
// not allow, with its full path and the words for the type wanted.
func TestFirstWrongTypeAgainstASchema(t *testing.T) {
	d := &operationTable{doc: &apidocument.Document{Root: map[string]any{"components": map[string]any{"schemas": map[string]any{
		"Rule": map[string]any{"type": "object", "properties": map[string]any{
			"expr":  map[string]any{"type": "string"},
			"count": map[string]any{"type": "integer"},
		}},
		"Kind": map[string]any{"type": "string", "enum": []any{"A", "B"}},
	}}}}}
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"rules":  map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/Rule"}},
		"kind":   map[string]any{"$ref": "#/components/schemas/Kind"},
		"ratio":  map[string]any{"type": "number"},
		"on":     map[string]any{"type": "boolean"},
		"note":   map[string]any{"type": "string", "nullable": true},
		"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"free":   map[string]any{},
		"at":     map[string]any{"type": "string", "format": "date-time"},
		"micros": map[string]any{"type": "string", "format": "date-time", "x-ogen-time-format": "2006-01-02T15:04:05.999999Z07:00"},
		"both": map[string]any{"allOf": []any{
			map[string]any{"$ref": "#/components/schemas/Rule"},
			map[string]any{"type": "object", "properties": map[string]any{"extra": map[string]any{"type": "boolean"}}},
		}},
		"either": map[string]any{"oneOf": []any{
			map[string]any{"type": "string"},
			map[string]any{"$ref": "#/components/schemas/Rule"},
		}},
	}}
	cases := []struct{ body, path, want string }{
		{`{"rules":[{"expr":"up"},{"expr":"up","count":1.5}]}`, "rules[1].count", "an integer"},
		{`{"rules":[{"expr":"up","count":1e3}]}`, "rules[0].count", "an integer"},
		{`{"rules":[{"count":2,"expr":5}]}`, "rules[0].expr", "a string"},
		{`{"kind":1,"ratio":"x"}`, "kind", "a string, one of A, B"},
		{`{"ratio":"x","kind":1}`, "ratio", "a number"},
		{`{"on":"true"}`, "on", "a boolean"},
		{`{"on":null}`, "on", "a boolean"},
		{`{"note":1}`, "note", "a string or null"},
		{`{"labels":{"a":"x","b":2}}`, "labels.b", "a string"},
		{`{"labels":[]}`, "labels", "an object"},
		{`{"rules":{}}`, "rules", "an array"},
		{`{"both":{"expr":"x","extra":1}}`, "both.extra", "a boolean"},
		{`{"both":{"count":"1"}}`, "both.count", "an integer"},
		{`{"either":5}`, "either", "a string or an object"},
		{`{"either":{"expr":[]}}`, "either.expr", "a string"},
		{`[1]`, "", "an object"},
		{`{"at":"2024-01-02"}`, "at", `an RFC 3339 date-time (got "2024-01-02")`},
		{`{"micros":"2024-01-02T03:04:05.123456789+02:00","at":"yesterday"}`, "at", `an RFC 3339 date-time (got "yesterday")`},
	}
	for _, c := range cases {
		v, err := parseOrdered([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		path, want, found := d.check(schema, v, "", 0)
		if !found || path != c.path || want != c.want {
			t.Errorf("%s: got %q %q %v, want %q %q", c.body, path, want, found, c.path, c.want)
		}
	}
	for _, body := range []string{
		`{}`, `{"note":null,"free":[1,{"a":2}],"unknown":5,"either":"x","rules":[{"count":-3}],"ratio":1.5e3,"at":"2024-01-02T03:04:05.5Z","micros":"2024-01-02T03:04:05Z"}`,
	} {
		v, _ := parseOrdered([]byte(body))
		if path, want, found := d.check(schema, v, "", 0); found {
			t.Errorf("%s: found %q %q in a body of the right types", body, path, want)
		}
	}
}

// A body that is not JSON is placed by line and column (from 1); a JSON body is not malformed.
func TestDescribeMalformed(t *testing.T) {
	cases := []struct{ body, want string }{
		{"{\"a\":1}", ""},
		{" \n{\"a\":1}\n\t ", ""},
		{"{\"a\":1e999,\"b\":-99999999999999999999999}", ""},
		{"{\"a\":\n  }", "malformed JSON at line 2, column 3: invalid character '}' looking for beginning of value"},
		{"", "malformed JSON at line 1, column 1: the body ends before the JSON value does"},
		{"{\"a\":[1,\n", "malformed JSON at line 2, column 1: the body ends before the JSON value does"},
		{"{} []", "malformed JSON at line 1, column 4: data after the end of the JSON value"},
		{"\"\x01\"", "malformed JSON at line 1, column 2: invalid character '\\x01' in string literal"},
	}
	for _, c := range cases {
		got, malformed := describeMalformed([]byte(c.body))
		if got != c.want || malformed != (c.want != "") {
			t.Errorf("%q: got %q %v, want %q", c.body, got, malformed, c.want)
		}
	}
}

func TestSplitPath(t *testing.T) {
	cases := map[string]string{
		"a":               "a",
		"a.b":             "a b",
		"records[0].kind": "records [] kind",
		"m[1][2].x[3]":    "m [] [] x []",
		"[0].a":           "[] a",
	}
	for in, want := range cases {
		if got := strings.Join(splitPath(in), " "); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// Nesting deeper than encoding/json decodes is still JSON: not malformed, and walked by the
// schema check without recursing that deep.
func TestDeepNestingIsNotMalformed(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	if msg, malformed := describeMalformed([]byte(deep)); malformed {
		t.Fatalf("deep body called malformed: %s", msg)
	}
	if msg, malformed := describeMalformed([]byte(`{"a":` + strings.Repeat("[", 20000) + `}`)); !malformed {
		t.Fatal("unbalanced deep body not called malformed")
	} else if !strings.HasPrefix(msg, "malformed JSON at line 1, column ") {
		t.Fatalf("message %q", msg)
	}
	v, err := parseOrdered([]byte(deep))
	if err != nil || v.kind != "object" || v.members[0].value.kind != "array" {
		t.Fatalf("parse: %v %+v", err, v)
	}
	d := &operationTable{doc: &apidocument.Document{}}
	schema := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}
	if path, want, found := d.check(schema, v, "", 0); !found || path != "a" || want != "a string" {
		t.Fatalf("got %q %q %v", path, want, found)
	}
}
