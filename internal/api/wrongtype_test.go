package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestEveryWrongJSONTypeIsNamed reads api/openapi.yaml and, for every operation with a request
// body, replaces one property at a time (every property the body schema declares, at any depth,
// array items at index 0) of its example with a value of another JSON type. Each must be answered
// 400 with exactly "<path>: must be <type>": the full path with array indexes, and the type the
// schema wants (string, integer, number, boolean, array, object; an enumeration lists its
// values). A body of the wrong type altogether is "body: must be <type>". A date-time property
// given a string that is not one is "<path>: must be an RFC 3339 date-time (got "…")", and an
// enumeration given a string it does not list is "<path>: must be one of A, B (got "…")".
func TestEveryWrongJSONTypeIsNamed(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		sent := 0
		for _, op := range ops {
			if op.Body == nil {
				continue
			}
			target := requestTarget(doc, op)
			base := op.Example
			if base == nil {
				base = doc.Minimal(op.Body)
			}
			send := func(name string, body any, want string) {
				t.Helper()
				raw, err := json.Marshal(body)
				if err != nil {
					t.Fatalf("%s: %v", op.ID, err)
				}
				sent++
				res := env.Do(t, op.Method, target, authorization(env, op), "application/json", string(raw))
				var got struct{ Message string }
				_ = json.Unmarshal(res.Body, &got)
				if res.Status != 400 || got.Message != want {
					t.Errorf("%s (%s %s), %s\n body %s\n answer %d %s\n want 400 %q",
						op.ID, op.Method, target, name, short(string(raw), 400), res.Status, short(string(res.Body), 300), want)
				}
			}
			if wrong, typ := wrongValue(doc.Resolve(op.Body)); wrong != nil {
				send("the whole body", wrong, "body: must be "+typ)
			}
			for _, p := range doc.PropertyPaths(op.Body) {
				schema := doc.Resolve(p[len(p)-1].Schema)
				wrong, typ := wrongValue(schema)
				if wrong == nil {
					continue
				}
				if hint, ok := schema["x-type-hint"].(string); ok {
					typ += " (" + hint + ")" // what a client that sent another type most likely meant
				}
				send(p.String(), doc.SetPath(base, p, wrong), p.String()+": must be "+typ)
				if enum, ok := schema["enum"].([]any); ok && typ != "" && strings.HasPrefix(typ, "a string") {
					values := make([]string, len(enum))
					for i, e := range enum {
						values[i] = fmt.Sprint(e)
					}
					send(p.String()+" (not one of its values)", doc.SetPath(base, p, "NOT_A_VALUE"),
						p.String()+": must be one of "+strings.Join(values, ", ")+` (got "NOT_A_VALUE")`)
				}
				if schema["format"] == "date-time" {
					send(p.String()+" (not a date-time)", doc.SetPath(base, p, "yesterday"),
						p.String()+`: must be an RFC 3339 date-time (got "yesterday")`)
				}
				// The same in the second item of the first array on the way, after a valid one.
				if body, at, ok := setInSecondItem(doc, base, p, wrong); ok {
					send(at, body, at+": must be "+typ)
				}
			}
		}
		if sent < 200 {
			t.Errorf("only %d wrong-typed bodies were sent; reading the document went wrong", sent)
		}
		t.Logf("%s: %d wrong-typed bodies", env.Engine, sent)
	})
}

// TestMalformedJSONIsPlacedByLineAndColumn sends every operation with a request body JSON that
// does not parse, and expects the line and column where it breaks, never a byte offset.
func TestMalformedJSONIsPlacedByLineAndColumn(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	cases := []struct{ body, want string }{
		{"{\n  \"a\": ,\n}", "body: malformed JSON at line 2, column 8: invalid character ',' looking for beginning of value"},
		{"{\"a\": 1", "body: malformed JSON at line 1, column 8: the body ends before the JSON value does"},
		{"{\"a\": 1}\n\n  x", "body: malformed JSON at line 3, column 3: data after the end of the JSON value"},
		{"{\"a\": tru}", "body: malformed JSON at line 1, column 10: invalid character '}' in literal true (expecting 'e')"},
		{"{\"a\":\n\t[1 2]}", "body: malformed JSON at line 2, column 5: invalid character '2' after array element"},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, op := range ops {
			if op.Body == nil {
				continue
			}
			target := requestTarget(doc, op)
			for _, c := range cases {
				res := env.Do(t, op.Method, target, authorization(env, op), "application/json", c.body)
				var got struct{ Message string }
				_ = json.Unmarshal(res.Body, &got)
				if res.Status != 400 || got.Message != c.want {
					t.Errorf("%s (%s %s), body %q\n answer %d %s\n want 400 %q",
						op.ID, op.Method, target, c.body, res.Status, short(string(res.Body), 300), c.want)
				}
			}
		}
	})
}

// setInSecondItem returns base with the first array on path p holding two items: its first
// (or the minimal one), and a copy of it with the value at the rest of p replaced by value; and
// the path of the replaced value. ok is false when p crosses no array.
func setInSecondItem(d *document, base any, p apidocument.PropertyPath, value any) (any, string, bool) {
	i := slices.IndexFunc(p, func(s apidocument.Step) bool { return s.Index })
	if i < 0 {
		return nil, "", false
	}
	// An array that holds at most one item has no valid second one to break.
	if i > 0 {
		if max := fmt.Sprint(d.Resolve(p[i-1].Schema)["maxItems"]); max == "0" || max == "1" {
			return nil, "", false
		}
	}
	var first any
	cur := base
	for _, s := range p[:i] {
		m, _ := cur.(map[string]any)
		cur = m[s.Key]
	}
	if arr, _ := cur.([]any); len(arr) > 0 && arr[0] != nil {
		first = arr[0]
	} else {
		first = d.Minimal(p[i].Schema)
	}
	if first == nil && i+1 < len(p) {
		return nil, "", false
	}
	second := d.SetPath(first, p[i+1:], value)
	body := d.SetPath(base, p[:i], []any{first, second})
	at := p[:i].String() + "[1]" + strings.TrimPrefix(append(apidocument.PropertyPath{{Key: "x"}}, p[i+1:]...).String(), "x")
	return body, at, true
}

// requestTarget is op's path with every path parameter and required query parameter set to the
// smallest value its schema allows, so that the request gets as far as decoding its body.
func requestTarget(doc *document, op operation) string {
	path := op.Path
	query := url.Values{}
	for _, p := range op.Params {
		value := fmt.Sprint(doc.Minimal(p.Schema))
		if f, ok := doc.Minimal(p.Schema).(float64); ok {
			value = fmt.Sprint(int64(f))
		}
		switch {
		case p.In == "path":
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(value))
		case p.In == "query" && p.Required:
			query.Set(p.Name, value)
		}
	}
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return path
}

// wrongValue is a value whose JSON type schema does not allow, and the words for the type it
// wants ("an integer", "a string, one of A, B"); nil for a schema that takes any type.
func wrongValue(schema map[string]any) (any, string) {
	typ, _ := schema["type"].(string)
	if typ == "" && (schema["properties"] != nil || schema["allOf"] != nil) {
		typ = "object"
	}
	var wrong any
	var words string
	switch typ {
	case "string":
		wrong, words = 5, "a string"
	case "integer":
		wrong, words = 1.5, "an integer"
	case "number":
		wrong, words = "5", "a number"
	case "boolean":
		wrong, words = "true", "a boolean"
	case "array":
		wrong, words = map[string]any{}, "an array"
	case "object":
		wrong, words = []any{}, "an object"
	default:
		return nil, ""
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		names := make([]string, len(enum))
		for i, e := range enum {
			names[i] = fmt.Sprint(e)
		}
		words += ", one of " + strings.Join(names, ", ")
	}
	if nullable, _ := schema["nullable"].(bool); nullable {
		words += " or null"
	}
	return wrong, words
}

// TestEveryEnumQueryParameterListsItsValues sends every query parameter that is an enumeration
// (or an array of one) a value it does not list, and expects the values it takes named.
func TestEveryEnumQueryParameterListsItsValues(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		sent := 0
		for _, op := range ops {
			for _, p := range op.Params {
				if p.In != "query" || p.Style == "deepObject" {
					continue
				}
				schema, path := p.Schema, p.Name
				if items := doc.Resolve(schema["items"]); items != nil {
					schema, path = items, p.Name+"[0]"
				}
				enum, _ := schema["enum"].([]any)
				if len(enum) == 0 {
					continue
				}
				values := make([]string, len(enum))
				for i, e := range enum {
					values[i] = fmt.Sprint(e)
				}
				others := op
				others.Params = slices.DeleteFunc(slices.Clone(op.Params), func(q parameter) bool { return q.Name == p.Name })
				target := requestTarget(doc, others)
				sep := "?"
				if strings.Contains(target, "?") {
					sep = "&"
				}
				target += sep + url.QueryEscape(p.Name) + "=NOT_A_VALUE"
				sent++
				var body string
				if op.Body != nil {
					raw, _ := json.Marshal(op.Example)
					body = string(raw)
				}
				res := env.Do(t, op.Method, target, authorization(env, op), "application/json", body)
				want := path + ": must be one of " + strings.Join(values, ", ") + ` (got "NOT_A_VALUE")`
				var got struct{ Message string }
				_ = json.Unmarshal(res.Body, &got)
				if res.Status != 400 || got.Message != want {
					t.Errorf("%s (%s %s): answer %d %s\n want 400 %q", op.ID, op.Method, target, res.Status, short(string(res.Body), 300), want)
				}
			}
		}
		if sent < 3 {
			t.Errorf("only %d enumeration parameters were found", sent)
		}
	})
}
