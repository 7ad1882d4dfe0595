package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// readScanned reads body through the scanner of operation in chunks of size bytes and returns
// what the decoder would read, or the refusal.
func readScanned(t testing.TB, operation, body string, size int) string {
	t.Helper()
	r := scanBody(recordOf(operation), io.NopCloser(&chunkedReader{s: body, size: size}))
	var out []byte
	buf := make([]byte, size)
	for range 1 << 20 {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return string(out)
		}
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	t.Fatalf("%s: the read does not end", body)
	return ""
}

// TestNullMembersAreNotSet: a null member whose schema is typed and not nullable is left out of
// what the decoder reads, with its comma, whatever the chunks the body arrives in; nulls inside
// free-form values, in arrays and of nullable members are kept, and so is what only looks like
// null.
func TestNullMembersAreNotSet(t *testing.T) {
	cases := []struct{ operation, body, want string }{
		{"CreateRecordingRuleSet", `{"name":"x","groups":null}`, `{"name":"x"}`},
		{"CreateRecordingRuleSet", `{"groups":null,"name":"x"}`, `{"name":"x"}`},
		{"CreateRecordingRuleSet", `{ "groups" : null , "undeclared":null, "name" : "x" }`, `{   "undeclared":null, "name" : "x" }`},
		{"CreateRecordingRuleSet", `{ "name" : "x" , "groups" : null }`, `{ "name" : "x"  }`},
		{"CreateRecordingRuleSet", `{"groups":null}`, `{}`},
		{"CreateRecordingRuleSet", `{"name":"x","groups":[{"name":"g","interval":null,"rules":[{"record":"r","expr":"up","labels":null}]}]}`,
			`{"name":"x","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`},
		// Not members of a declared property, or not null.
		{"CreateRecordingRuleSet", `{"name":"x","unknown":null}`, `{"name":"x","unknown":null}`},
		{"CreateRecordingRuleSet", `{"name":"x","groups":[null]}`, `{"name":"x","groups":[null]}`},
		{"CreateRecordingRuleSet", `{"name":"x","groups":nul}`, `{"name":"x","groups":nul}`},
		{"CreateRecordingRuleSet", `{"name":"x","groups":nullx}`, `{"name":"x","groups":nullx}`},
		{"CreateRecordingRuleSet", `{"name":"null","groups":"null"}`, `{"name":"null","groups":"null"}`},
		{"CreateRecordingRuleSet", `{"name":"x","groups":null`, `{"name":"x","groups":null`},
		// A nullable member's null is a value.
		{"AssignDashboardFolder", `{"requestId":"r","folderId":null}`, `{"requestId":"r","folderId":null}`},
	}
	for _, c := range cases {
		for _, size := range []int{1, 2, 3, 7, 4096} {
			if got := readScanned(t, c.operation, c.body, size); got != c.want {
				t.Errorf("%s in chunks of %d:\n got %s\nwant %s", c.body, size, got, c.want)
			}
		}
	}
}

func TestIsZeroNumber(t *testing.T) {
	for lit, want := range map[string]bool{"0": true, "-0": true, "0.0": true, "0.000": true, "0e5": true, "0E-1": true,
		"1": false, "00": false, "0.": false, "0.01": false, "0e": false, "0x0": false, "": false, "-": false, ".0": false} {
		if got := isZeroNumber(lit); got != want {
			t.Errorf("%q: %v, want %v", lit, got, want)
		}
	}
}

// TestRequiredArrayNullIsEmpty: a required array sent null reads as the empty array.
func TestRequiredArrayNullIsEmpty(t *testing.T) {
	for _, size := range []int{1, 3, 4096} {
		for body, want := range map[string]string{
			`{"policies":null}`:              `{"policies":[]}`,
			`{"x":1, "policies" : null }`:    `{"x":1, "policies" : [] }`,
			`{"policies":null,"other":null}`: `{"policies":[],"other":null}`,
		} {
			if got := readScanned(t, "OverwriteSpanPolicies", body, size); got != want {
				t.Errorf("%s in chunks of %d:\n got %s\nwant %s", body, size, got, want)
			}
		}
	}
}

// TestZeroWithDefaultIsNotSet: a zero where the schema has a default (permutationsLimit's
// x-default) is left out; another number, or a zero without a default, is kept.
func TestZeroWithDefaultIsNotSet(t *testing.T) {
	for _, size := range []int{1, 2, 4096} {
		for body, want := range map[string]string{
			`{"name":"x","permutationsLimit":0}`:           `{"name":"x"}`,
			`{"permutationsLimit":-0,"name":"x"}`:          `{"name":"x"}`,
			`{"permutationsLimit":0e0 , "name":"x"}`:       `{  "name":"x"}`,
			`{"name":"x","permutationsLimit":0.5}`:         `{"name":"x","permutationsLimit":0.5}`,
			`{"name":"x","permutationsLimit":10}`:          `{"name":"x","permutationsLimit":10}`,
			`{"name":"x","permutationsLimit":"0"}`:         `{"name":"x","permutationsLimit":"0"}`,
			`{"name":"","permutationsLimit":0,"type":"x"}`: `{"name":"","type":"x"}`,
		} {
			if got := readScanned(t, "CreateE2M", body, size); got != want {
				t.Errorf("%s in chunks of %d:\n got %s\nwant %s", body, size, got, want)
			}
		}
	}
}

// FuzzUnsetMembers reads bodies through the scanner of an operation (chosen by the fuzzer among
// every operation with a body) in chunks of one byte and of 4 KiB. The properties: no panic;
// both chunkings give the same bytes; valid JSON stays valid JSON; a body without a null or a
// zero literal passes through unchanged.
func FuzzUnsetMembers(f *testing.F) {
	f.Add(uint16(0), []byte(`{"name":"x","groups":null,"labels":{"a":null},"permutationsLimit":0}`))
	f.Add(uint16(1), []byte(`{"policies":null, "a" : [null, {"b":null}] }`))
	operations := operationsWithABody()
	f.Fuzz(func(t *testing.T, operation uint16, body []byte) {
		id := operations[int(operation)%len(operations)]
		read := func(size int) (string, bool) {
			r := scanBody(recordOf(id), io.NopCloser(&chunkedReader{s: string(body), size: size}))
			var out []byte
			buf := make([]byte, size)
			for range 3*len(body) + 16 {
				n, err := r.Read(buf)
				out = append(out, buf[:n]...)
				if errors.Is(err, io.EOF) {
					return string(out), true
				}
				if err != nil {
					return "", false // refused: the refusal is the answer
				}
			}
			t.Fatalf("%s: the read of %q does not end", id, body)
			return "", false
		}
		one, ok1 := read(1)
		whole, ok2 := read(4096)
		if ok1 != ok2 || one != whole {
			t.Fatalf("%s: %q reads as %q in bytes and %q in 4 KiB (%v, %v)", id, body, one, whole, ok1, ok2)
		}
		if !ok1 {
			return
		}
		if json.Valid(body) && !json.Valid([]byte(one)) {
			t.Fatalf("%s: valid %q reads as invalid %q", id, body, one)
		}
		if !bytes.Contains(body, []byte("null")) && !bytes.ContainsAny(body, "0f") && !bytes.Contains(body, []byte(`""`)) && one != string(body) {
			t.Fatalf("%s: %q without a null or a zero reads as %q", id, body, one)
		}
	})
}

// BenchmarkBodyScannerNulls is BenchmarkBodyScanner's batch with a null member in each of its
// 100 items ("create":null), which the scanner leaves out: the cost of leaving out.
//
//	go test -run '^$' -bench BodyScanner ./internal/api/
func BenchmarkBodyScannerNulls(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"requests":[`)
	for i := range 100 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"create":null,"delete":{"id":"5b0f4c1e-2a3d-4e5f-8a9b-%012d"}}`, i)
	}
	body.WriteString(`]}`)
	raw := body.String()
	if got := readScanned(b, "AtomicBatchExecuteE2M", raw, 4096); strings.Contains(got, "null") || len(got) != len(raw)-100*len(`"create":null,`) {
		b.Fatalf("read %d bytes: %.200s", len(got), got)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if msg, _ := scanAll("AtomicBatchExecuteE2M", raw, 4096); msg != "" {
			b.Fatal(msg)
		}
	}
}
