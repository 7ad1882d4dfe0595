package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The generated decoder reports a value of the wrong JSON type as a byte offset and the byte it
// did not expect. These helpers find the value against the operation's request body schema in
// api/openapi.yaml instead (its record's, operations.go), so that the answer says where the value
// is and what it must be: "groups[0].interval: must be an integer".

// jsonValue is a parsed JSON value that keeps the order of object members, so that the first
// wrong value found is the first in the body, where the generated decoder stopped.
type jsonValue struct {
	kind    string // object, array, string, number, boolean, null
	number  string
	text    string // a string's value
	members []jsonMember
	items   []*jsonValue
}

type jsonMember struct {
	key   string
	value *jsonValue
}

// keptDepth is how deep parseOrdered builds values; deeper arrays and objects are read through
// and kept empty (the schema walk stops well before).
const keptDepth = 128

// parseOrdered parses one JSON value; it fails on what is not JSON. It reads any depth (the
// body's size bounds it) without recursing deeper than keptDepth.
func parseOrdered(body []byte) (*jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var parse func(depth int) (*jsonValue, error)
	parse = func(depth int) (*jsonValue, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			if depth >= keptDepth {
				return skipNested(dec, t)
			}
			if t == '{' {
				v := &jsonValue{kind: "object"}
				for dec.More() {
					keyTok, err := dec.Token()
					if err != nil {
						return nil, err
					}
					key, _ := keyTok.(string)
					member, err := parse(depth + 1)
					if err != nil {
						return nil, err
					}
					v.members = append(v.members, jsonMember{key, member})
				}
				_, err := dec.Token()
				return v, err
			}
			v := &jsonValue{kind: "array"}
			for dec.More() {
				item, err := parse(depth + 1)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, item)
			}
			_, err := dec.Token()
			return v, err
		case string:
			return &jsonValue{kind: "string", text: t}, nil
		case json.Number:
			return &jsonValue{kind: "number", number: string(t)}, nil
		case bool:
			return &jsonValue{kind: "boolean"}, nil
		}
		return &jsonValue{kind: "null"}, nil
	}
	return parse(0)
}

// skipNested reads through the array or object that open began and returns it empty.
func skipNested(dec *json.Decoder, open json.Delim) (*jsonValue, error) {
	v := &jsonValue{kind: "array"}
	if open == '{' {
		v.kind = "object"
	}
	for level := 1; level > 0; {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			level++
		case json.Delim(']'), json.Delim('}'):
			level--
		}
	}
	return v, nil
}

// firstWrongType returns the path of the first value of body (in the order it is written) whose
// JSON type the request body schema of operation does not allow, and the type that schema wants
// ("an integer", "a string, one of A, B"); ok is false when every value has an allowed type or
// the operation or body is unknown.
func firstWrongType(operation string, body []byte) (path, want string, ok bool) {
	d := schemas()
	schema, known := d.bodySchema(operation)
	if !known {
		return "", "", false
	}
	v, err := parseOrdered(body)
	if err != nil {
		return "", "", false
	}
	path, want, ok = d.check(schema, v, "", 0)
	if ok && path == "" {
		path = "body"
	}
	return path, want, ok
}

// check walks v against schema and reports the first value of the wrong JSON type.
func (d *operationTable) check(schema any, v *jsonValue, path string, depth int) (string, string, bool) {
	s := d.resolve(schema)
	if s == nil || depth > 64 {
		return "", "", false
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, part := range all {
			if p, w, bad := d.check(part, v, path, depth+1); bad {
				return p, w, true
			}
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := s[key].([]any)
		if len(alts) == 0 {
			continue
		}
		// The value must have the type of one alternative; inside it, when only one alternative
		// has that type, its values are checked against that one.
		var wants []string
		var fitting []any
		for _, alt := range alts {
			a := d.resolve(alt)
			if a == nil || expectedType(a) == "" {
				return "", "", false
			}
			if hasType(a, v) {
				fitting = append(fitting, alt)
			}
			if w := describeType(expectedType(a), nil); !slices.Contains(wants, w) {
				wants = append(wants, w)
			}
		}
		switch len(fitting) {
		case 0:
			return path, strings.Join(wants, " or "), true
		case 1:
			return d.check(fitting[0], v, path, depth+1)
		}
		return "", "", false
	}
	want := expectedType(s)
	if want == "" {
		return "", "", false
	}
	if !hasType(s, v) {
		return path, describeType(want, s), true
	}
	if layout, isTime := timeLayout(s); isTime && v.kind == "string" {
		if _, err := time.Parse(layout, v.text); err != nil {
			shown := v.text
			if len(shown) > 40 {
				shown = shown[:37] + "..."
			}
			return path, fmt.Sprintf("an RFC 3339 date-time (got %q)", shown), true
		}
	}
	switch v.kind {
	case "array":
		for i, item := range v.items {
			if p, w, bad := d.check(s["items"], item, path+"["+strconv.Itoa(i)+"]", depth+1); bad {
				return p, w, true
			}
		}
	case "object":
		props, _ := s["properties"].(map[string]any)
		for _, m := range v.members {
			next := m.key
			if path != "" {
				next = path + "." + m.key
			}
			sub, declared := props[m.key]
			if !declared {
				sub = s["additionalProperties"]
			}
			if p, w, bad := d.check(sub, m.value, next, depth+1); bad {
				return p, w, true
			}
		}
	}
	return "", "", false
}

// enumAt returns the values of the enumeration at path ("records[0].kind") in the request body
// schema of operation, or none when there is no enumeration there.
func enumAt(operation, path string) []string {
	d := schemas()
	body, _ := d.bodySchema(operation)
	schema := d.resolve(body)
	for _, seg := range splitPath(path) {
		if schema == nil {
			return nil
		}
		schema = d.child(schema, seg)
	}
	enum, _ := schema["enum"].([]any)
	values := make([]string, 0, len(enum))
	for _, e := range enum {
		values = append(values, fmt.Sprint(e))
	}
	return values
}

// parameterEnum returns the values of the enumeration of the parameter name of operation (of
// its items, for an array), or none.
func parameterEnum(operation, name string) []string {
	d := schemas()
	schema := d.paramSchema(operation, name)
	if items := d.resolve(schema["items"]); items != nil {
		schema = items
	}
	enum, _ := schema["enum"].([]any)
	values := make([]string, 0, len(enum))
	for _, e := range enum {
		values = append(values, fmt.Sprint(e))
	}
	return values
}

// splitPath turns "a.b[0].c" into ["a", "b", "[]", "c"]; "[]" stands for any array index.
func splitPath(path string) []string {
	var segs []string
	for _, part := range strings.Split(path, ".") {
		name, rest, indexed := strings.Cut(part, "[")
		if name != "" {
			segs = append(segs, name)
		}
		if indexed {
			for range strings.Count(rest, "[") + 1 {
				segs = append(segs, "[]")
			}
		}
	}
	return segs
}

// child is the schema of the property name ("[]": of the items) of schema, looking through allOf.
func (d *operationTable) child(schema map[string]any, name string) map[string]any {
	if name == "[]" {
		return d.resolve(schema["items"])
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		if p, ok := props[name]; ok {
			return d.resolve(p)
		}
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, part := range all {
			if c := d.child(d.resolve(part), name); c != nil {
				return c
			}
		}
	}
	if extra, ok := schema["additionalProperties"].(map[string]any); ok {
		return d.resolve(extra)
	}
	return nil
}

// timeLayout is the layout the generated decoder parses a date-time string of schema s with
// (its x-ogen-time-format, else RFC 3339); isTime is false for other schemas.
func timeLayout(s map[string]any) (layout string, isTime bool) {
	if s["format"] != "date-time" {
		return "", false
	}
	if custom, ok := s["x-ogen-time-format"].(string); ok && custom != "" {
		return custom, true
	}
	return time.RFC3339, true
}

// expectedType is the JSON type schema requires ("" for any): its type, or object for a schema
// with properties or additionalProperties, or string for an enumeration of strings.
func expectedType(s map[string]any) string {
	if t, ok := s["type"].(string); ok {
		return t
	}
	if s["properties"] != nil {
		return "object"
	}
	if _, ok := s["additionalProperties"].(map[string]any); ok {
		return "object"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		if _, ok := enum[0].(string); ok {
			return "string"
		}
	}
	return ""
}

// hasType says whether v has the JSON type schema s requires (null only where it is nullable).
func hasType(s map[string]any, v *jsonValue) bool {
	if v.kind == "null" {
		nullable, _ := s["nullable"].(bool)
		return nullable
	}
	switch want := expectedType(s); want {
	case "integer":
		return v.kind == "number" && !strings.ContainsAny(v.number, ".eE")
	default:
		return v.kind == want
	}
}

// describeType words a JSON type for "must be …": "an integer", "a string, one of A, B, C",
// "a string or null", followed by the schema's x-type-hint when it has one.
func describeType(t string, s map[string]any) string {
	article := "a "
	if t == "integer" || t == "array" || t == "object" {
		article = "an "
	}
	text := article + t
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		names := make([]string, len(enum))
		for i, e := range enum {
			names[i] = fmt.Sprint(e)
		}
		text += ", one of " + strings.Join(names, ", ")
	}
	if nullable, _ := s["nullable"].(bool); nullable {
		text += " or null"
	}
	if hint, ok := s["x-type-hint"].(string); ok {
		text += " (" + hint + ")" // what a client that sent another type most likely meant
	}
	return text
}

// describeMalformed explains a body that is not JSON at all, with the line and column (both
// from 1, columns in bytes) where reading it stopped; ok is false when body is valid JSON.
func describeMalformed(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number of any size is JSON
	var v any
	err := dec.Decode(&v)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) && strings.Contains(syntax.Error(), "exceeded max depth") {
		// Deeper than encoding/json nests values, which is no syntax error: read it token by
		// token (whose errors say less exactly where they are).
		dec = json.NewDecoder(bytes.NewReader(body))
		err = skipValue(dec)
	}
	if err == nil {
		// One value; anything but white space after it is trailing data.
		rest := body[dec.InputOffset():]
		trimmed := bytes.TrimLeft(rest, " \t\r\n")
		if len(trimmed) == 0 {
			return "", false
		}
		line, column := lineColumn(body, int64(len(body)-len(trimmed)))
		return fmt.Sprintf("malformed JSON at line %d, column %d: data after the end of the JSON value", line, column), true
	}
	switch {
	case errors.As(err, &syntax):
		line, column := lineColumn(body, syntax.Offset-1)
		return fmt.Sprintf("malformed JSON at line %d, column %d: %s", line, column, syntax.Error()), true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, column := lineColumn(body, int64(len(body)))
		return fmt.Sprintf("malformed JSON at line %d, column %d: the body ends before the JSON value does", line, column), true
	}
	// Anything else is about the values, not the syntax.
	return "", false
}

// skipValue reads one JSON value of any depth, token by token.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if open, ok := tok.(json.Delim); ok {
		_, err = skipNested(dec, open)
	}
	return err
}

// lineColumn turns a byte offset of body into a line and column, both counted from 1.
func lineColumn(body []byte, offset int64) (int, int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(body)) {
		offset = int64(len(body))
	}
	before := body[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	column := len(before) - bytes.LastIndexByte(before, '\n')
	return line, column
}
