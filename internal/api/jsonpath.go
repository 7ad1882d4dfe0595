package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The generated decoder names the fields it was decoding but not the array indexes, and reports
// a wrong type as a byte offset. These helpers walk the raw body to turn either into a full path
// such as groups[1].rules[0].record, so that a 400 says exactly where the body went wrong.

// pathAtOffset returns the path of the JSON value that starts at or spans offset, or "" when the
// body cannot be walked that far.
func pathAtOffset(body []byte, offset int64) string {
	type frame struct {
		array     bool
		index     int
		key       string
		expectKey bool
	}
	var stack []frame
	render := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.array {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
		return b.String()
	}
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].expectKey = true
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := dec.InputOffset()
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].expectKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key = key
				stack[n-1].expectKey = false
				if offset >= start && offset < end {
					// The offending byte is in this key: name the object that holds it.
					stack[n-1].key = ""
					return strings.TrimSuffix(render(), ".")
				}
				continue
			}
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if offset >= start && offset < end {
			return render()
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{expectKey: true})
		case json.Delim('['):
			stack = append(stack, frame{array: true})
		default:
			valueDone()
		}
	}
}

// pathOfMissing follows the field names through the body, into every element of each array on
// the way, and returns the path of the first object there that lacks the field missing.
func pathOfMissing(body []byte, fields []string, missing string) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return ""
	}
	var find func(v any, fields []string, path string) string
	find = func(v any, fields []string, path string) string {
		switch t := v.(type) {
		case []any:
			for i, e := range t {
				if p := find(e, fields, path+"["+strconv.Itoa(i)+"]"); p != "" {
					return p
				}
			}
		case map[string]any:
			join := func(name string) string {
				if path == "" {
					return name
				}
				return path + "." + name
			}
			if len(fields) == 0 {
				if _, ok := t[missing]; !ok {
					return join(missing)
				}
				return ""
			}
			return find(t[fields[0]], fields[1:], join(fields[0]))
		}
		return ""
	}
	return find(v, fields, "")
}

// pathOfOutOfRange follows the field names through the body like pathOfMissing and returns the
// path and text of the number there that the decoder could not hold: first one beyond float64,
// else one beyond int64, else one beyond int32. It returns "" when there is none.
func pathOfOutOfRange(body []byte, fields []string) (string, string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", ""
	}
	type found struct{ path, text string }
	var numbers []found
	var collect func(v any, fields []string, path string)
	collect = func(v any, fields []string, path string) {
		switch t := v.(type) {
		case []any:
			for i, e := range t {
				collect(e, fields, path+"["+strconv.Itoa(i)+"]")
			}
		case map[string]any:
			if len(fields) == 0 {
				return
			}
			next := fields[0]
			if path != "" {
				next = path + "." + fields[0]
			}
			collect(t[fields[0]], fields[1:], next)
		case json.Number:
			if len(fields) == 0 {
				numbers = append(numbers, found{path, string(t)})
			}
		}
	}
	collect(v, fields, "")
	beyond := []func(string) bool{
		func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err != nil },
		func(s string) bool {
			_, err := strconv.ParseInt(s, 10, 64)
			return err != nil && !strings.ContainsAny(s, ".eE")
		},
		func(s string) bool {
			_, err := strconv.ParseInt(s, 10, 32)
			return err != nil && !strings.ContainsAny(s, ".eE")
		},
	}
	for _, out := range beyond {
		for _, n := range numbers {
			if out(n.text) {
				return n.path, n.text
			}
		}
	}
	return "", ""
}
