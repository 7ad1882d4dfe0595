package api

import (
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// scanAll reads body through the scanner of operation in chunks of size bytes and returns the
// refusal's message ("" when none) and how many bytes were read.
func scanAll(operation, body string, size int) (string, int) {
	r := scanBody(recordOf(operation), io.NopCloser(&chunkedReader{s: body, size: size}))
	buf := make([]byte, size)
	read := 0
	for {
		n, err := r.Read(buf)
		read += n
		var rule *bodyRuleError
		if errors.As(err, &rule) {
			return rule.Message, read
		}
		if err != nil {
			return "", read
		}
	}
}

type chunkedReader struct {
	s    string
	size int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.s)
	c.s = c.s[n:]
	return n, nil
}

// TestBodyScannerRules: the scanner's verdicts, the same whatever the size of the chunks the body
// arrives in (a character or an escape split between two reads included).
func TestBodyScannerRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	cases := []struct {
		operation, body, want string
	}{
		{"CreateRecordingRuleSet", `{"name":"ok","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`, ""},
		{"CreateRecordingRuleSet", `{"name":"` + long(255) + `"}`, ""},
		{"CreateRecordingRuleSet", `{"name":"` + long(256) + `"}`, "name: must have at most 255 characters (got 256)"},
		{"CreateRecordingRuleSet", `{"name":"` + long(200000) + `"}`, "name: must have at most 255 characters (got more than "},
		{"CreateRecordingRuleSet", `{"groups":[{"name":"a"},{"name":"` + long(300) + `"}]}`, "groups[1].name: must have at most 255 characters (got 300)"},
		{"CreateRecordingRuleSet", `{"groups":[{"id":"` + strings.Repeat(`\u0041`, 129) + `"}]}`, "groups[0].id: must have at most 128 characters (got 129)"},
		// Text.
		{"CreateRecordingRuleSet", `{"name":"a\u0000"}`, `name: must not contain the NUL character (\u0000)`},
		{"CreateRecordingRuleSet", `{"groups":[{"name":"\u0000"}]}`, `groups[0].name: must not contain the NUL character (\u0000)`},
		{"CreateRecordingRuleSet", `{"a\u0000":1}`, `body: must not contain the NUL character (\u0000)`},
		{"CreateRecordingRuleSet", `{"name":"a\\u0000b"}`, ""},
		{"CreateRecordingRuleSet", "{\"name\":\"\xff\"}", "body: must be valid UTF-8"},
		{"CreateRecordingRuleSet", "{\"name\":\"\xe2\x82\"}", "body: must be valid UTF-8"},
		{"CreateRecordingRuleSet", "{\"name\":\"\xed\xa0\x80\"}", "body: must be valid UTF-8"}, // a surrogate in UTF-8
		{"CreateRecordingRuleSet", "{\"name\":\"\xc0\xaf\"}", "body: must be valid UTF-8"},     // overlong
		{"CreateRecordingRuleSet", `{"name":"\ud800"}`, `name: must not contain a lone UTF-16 surrogate (\ud800)`},
		{"CreateRecordingRuleSet", `{"name":"\ud800é"}`, `name: must not contain a lone UTF-16 surrogate (\ud800)`},
		{"CreateRecordingRuleSet", `{"name":"\ud800\n"}`, `name: must not contain a lone UTF-16 surrogate (\ud800)`},
		{"CreateRecordingRuleSet", `{"name":"\ud800\ud800"}`, `name: must not contain a lone UTF-16 surrogate (\ud800)`},
		{"CreateRecordingRuleSet", `{"name":"\ude00x"}`, `name: must not contain a lone UTF-16 surrogate (\ude00)`},
		{"CreateRecordingRuleSet", `{"k\ud800":"v"}`, `body: must not contain a lone UTF-16 surrogate (\ud800)`},
		{"CreateRecordingRuleSet", `{"name":"\ud83d\ude00"}`, ""},
		{"CreateRecordingRuleSet", `{"name":"\\ud800"}`, ""},
		// Bounds do not apply to members of the wrong name or to values of another type.
		{"CreateRecordingRuleSet", `{"other":"` + long(1000) + `","name":5}`, ""},
		// What is not JSON is left to the decoder, whose answer names the place.
		{"CreateRecordingRuleSet", `{"name" "` + long(1000) + `"}`, ""},
		{"CreateRecordingRuleSet", `{"name":"a"}} trailing "` + long(1000) + `"`, ""},
		// Arrays: the first over the bound is named, with an exact count when the array ends soon after.
		{"AtomicBatchExecuteE2M", `{"requests":[` + strings.Repeat(`{},`, 100) + `{}]}`, "requests: must have at most 100 items (got 101)"},
		{"AtomicBatchExecuteE2M", `{"requests":[` + strings.Repeat(`{},`, 99) + `{}]}`, ""},
		{"AtomicBatchExecuteE2M", `{"requests":[` + strings.Repeat(`[1,2],`, 100000) + `{}]}`, "requests: must have at most 100 items (got more than "},
		// Maps: entries past maxProperties.
		{"CreateSlo", `{"name":"s","labels":{` + labelsOf(65) + `}}`, "labels: must have at most 64 entries (got 65)"},
		{"CreateSlo", `{"name":"s","labels":{` + labelsOf(64) + `}}`, ""},
		// An object nested deeper than the scanner follows is left to the decoder.
		{"CreateRecordingRuleSet", strings.Repeat(`[`, maxScanDepth+5), ""},
	}
	for _, c := range cases {
		var first string
		for _, size := range []int{1, 3, 4096} {
			got, _ := scanAll(c.operation, c.body, size)
			ok := got == c.want
			if strings.HasSuffix(c.want, " ") {
				ok = strings.HasPrefix(got, c.want)
			}
			if !ok {
				t.Errorf("%s %s (chunks of %d): got %q, want %q", c.operation, shortened(c.body), size, got, c.want)
			}
			if size == 1 {
				first = got
			} else if got != first {
				t.Errorf("%s %s: chunks of %d say %q, single bytes %q", c.operation, shortened(c.body), size, got, first)
			}
		}
	}
}

// TestBodyScannerStopsEarly: past a bound, the scanner reads at most its lookahead more.
func TestBodyScannerStopsEarly(t *testing.T) {
	body := `{"requests":[` + strings.Repeat(`{"delete":{"id":"5b0f4c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b"}},`, 200000) + `{}]}`
	msg, read := scanAll("AtomicBatchExecuteE2M", body, 32<<10)
	if !strings.HasPrefix(msg, "requests: must have at most 100 items") {
		t.Fatalf("got %q", msg)
	}
	if read > overrunLookahead+64<<10 {
		t.Errorf("read %d of %d bytes", read, len(body))
	}
}

// TestEveryArrayOfEveryRequestBodyIsBounded: the document gives every array a request body can
// hold a maxItems (or the scanner could not stop a body of a million items before decoding it).
func TestEveryArrayOfEveryRequestBodyIsBounded(t *testing.T) {
	d := schemas()
	for id, op := range d.byID {
		schema := op.body
		if schema == nil {
			continue
		}
		var walk func(s any, path string, depth int, refs []string)
		walk = func(raw any, path string, depth int, refs []string) {
			m, _ := raw.(map[string]any)
			if ref, ok := m["$ref"].(string); ok {
				for _, r := range refs {
					if r == ref {
						return
					}
				}
				refs = append(refs, ref)
			}
			s := d.resolve(raw)
			if s == nil || depth > 30 {
				return
			}
			for _, key := range []string{"allOf", "oneOf", "anyOf"} {
				alts, _ := s[key].([]any)
				for _, a := range alts {
					walk(a, path, depth+1, refs)
				}
			}
			if s["items"] != nil || s["type"] == "array" {
				if _, ok := intOf(s["maxItems"]); !ok {
					t.Errorf("%s: %s is an array without maxItems", id, path)
				}
				walk(s["items"], path+"[]", depth+1, refs)
			}
			if props, ok := s["properties"].(map[string]any); ok {
				for name, p := range props {
					walk(p, strings.TrimPrefix(path+"."+name, "."), depth+1, refs)
				}
			}
			if extra, ok := s["additionalProperties"].(map[string]any); ok {
				if _, ok := intOf(s["maxProperties"]); !ok {
					t.Errorf("%s: %s is a map without maxProperties", id, path)
				}
				walk(extra, path+"{}", depth+1, refs)
			}
		}
		walk(schema, "", 0, nil)
	}
}

func shortened(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// labelsOf is n JSON members "l0":"v", "l1":"v", ….
func labelsOf(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"l%d":"v"`, i)
	}
	return strings.Join(parts, ",")
}

// BenchmarkBodyScanner is the scanner's cost on a body within its bounds: an E2M batch of 100
// deletes (about 5.7 KB), read in 4 KiB chunks as the generated handler's io.ReadAll does.
//
//	go test -run '^$' -bench BodyScanner ./internal/api/
func BenchmarkBodyScanner(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"requests":[`)
	for i := range 100 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"delete":{"id":"5b0f4c1e-2a3d-4e5f-8a9b-%012d"}}`, i)
	}
	body.WriteString(`]}`)
	raw := body.String()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if msg, _ := scanAll("AtomicBatchExecuteE2M", raw, 4096); msg != "" {
			b.Fatal(msg)
		}
	}
}

// TestSignedOrPaddedIntegersAreRefused: an integer path parameter with a plus sign or leading
// zeros is refused, naming the parameter; ids that begin with 0 are not integers.
func TestSignedOrPaddedIntegersAreRefused(t *testing.T) {
	routes := schemas().routes
	for path, want := range map[string]bool{
		"/mgmt/openapi/5/data-exploration/views/v1/views/+1":                                      true,
		"/mgmt/openapi/5/data-exploration/views/v1/views/%2B12":                                   true,
		"/mgmt/openapi/5/data-exploration/views/v1/views/007":                                     true,
		"/admin/v1/teams/01/case-kpis":                                                            true,
		"/mgmt/openapi/5/data-exploration/views/v1/views/0":                                       false,
		"/mgmt/openapi/5/data-exploration/views/v1/views/12":                                      false,
		"/mgmt/openapi/5/recording-rules/recording-rules/v1/01a210a6-62e4-7c83-8992-c2561667d3d3": false,
		"/mgmt/openapi/5/data-exploration/views/v1/views/+x":                                      false,
	} {
		r := httptest.NewRequest("GET", path, nil)
		m, _, _, done := routes.route(httptest.NewRecorder(), r)
		if done || m.op == nil {
			t.Fatalf("%s: no operation", path)
		}
		msg := checkIntegerArgs(m.op, m.args.values[:m.args.n])
		if got := msg != ""; got != want {
			t.Errorf("%s: refusal %q, want one: %v", path, msg, want)
		}
		if want && !strings.Contains(msg, "must be an integer written without a plus sign or leading zeros") {
			t.Errorf("%s: %q", path, msg)
		}
	}
}

// recordOf is the record of the operation id, or an empty one (no bounds) for an unknown id.
func recordOf(id string) *operation {
	if op := schemas().byID[id]; op != nil {
		return op
	}
	return &operation{id: id}
}
