package recordingrules_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/recordingrules"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

const rulesPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"

// ---------------------------------------------------------------------------- answer bodies

type ruleOut struct {
	Expr              string            `json:"expr"`
	Record            string            `json:"record"`
	EvaluationDelayMs *int64            `json:"evaluationDelayMs"`
	Labels            map[string]string `json:"labels"`
}

type groupOut struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Interval *int64    `json:"interval"`
	Limit    *string   `json:"limit"`
	Version  *int64    `json:"version"`
	Rules    []ruleOut `json:"rules"`
}

type setOut struct {
	ID     string     `json:"id"`
	Name   string     `json:"name"`
	Groups []groupOut `json:"groups"`
}

type listOut struct {
	Sets []setOut `json:"sets"`
}

// decodeStrict parses an answer body into out, refusing fields the schema does not have.
func decodeStrict(t *testing.T, b []byte, out any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("decode %s: %v", truncate(b), err)
	}
	if dec.More() {
		t.Fatalf("trailing data after the body: %s", truncate(b))
	}
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// -------------------------------------------------------------------------------- requests

func expectOK(t *testing.T, res apitest.Response, what string) {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("%s: status %d, want 200; body %s", what, res.Status, truncate(res.Body))
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// expectEmptyObject checks a 200 whose body is the EmptyObject {}.
func expectEmptyObject(t *testing.T, res apitest.Response, what string) {
	t.Helper()
	expectOK(t, res, what)
	if got := strings.TrimSpace(string(res.Body)); got != "{}" {
		t.Fatalf("%s: body %s, want {}", what, got)
	}
}

func create(t *testing.T, env *apitest.Env, key, body string) string {
	t.Helper()
	res := env.JSON(t, "POST", rulesPath, key, body)
	expectOK(t, res, "create")
	var out struct {
		ID string `json:"id"`
	}
	decodeStrict(t, res.Body, &out)
	if out.ID == "" || len([]rune(out.ID)) > 128 {
		t.Fatalf("create: id %q is not 1..128 characters", out.ID)
	}
	return out.ID
}

func getRaw(t *testing.T, env *apitest.Env, key, id string) []byte {
	t.Helper()
	res := env.JSON(t, "GET", rulesPath+"/"+url.PathEscape(id), key, "")
	expectOK(t, res, "get "+id)
	return res.Body
}

func get(t *testing.T, env *apitest.Env, key, id string) setOut {
	t.Helper()
	var s setOut
	decodeStrict(t, getRaw(t, env, key, id), &s)
	if s.ID != id {
		t.Fatalf("get %s: id %q", id, s.ID)
	}
	return s
}

func list(t *testing.T, env *apitest.Env, key string) []setOut {
	t.Helper()
	res := env.JSON(t, "GET", rulesPath, key, "")
	expectOK(t, res, "list")
	var l listOut
	decodeStrict(t, res.Body, &l)
	if l.Sets == nil {
		t.Fatalf("list: sets is missing or null: %s", truncate(res.Body))
	}
	return l.Sets
}

func expectNotFound(t *testing.T, env *apitest.Env, key, id string) {
	t.Helper()
	res := env.JSON(t, "GET", rulesPath+"/"+url.PathEscape(id), key, "")
	apitest.ExpectError(t, res, 404, "id: no recording rule set", id)
}

// -------------------------------------------------------------------------------- bodies

type doc = map[string]any

// oneRule builds {"name":"s","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]} and
// lets edit change the set, its group and its rule before encoding.
func oneRule(edit func(s, g, r doc)) func(t *testing.T) string {
	return func(t *testing.T) string {
		r := doc{"record": "r", "expr": "up"}
		g := doc{"name": "g", "rules": []any{r}}
		s := doc{"name": "s", "groups": []any{g}}
		if edit != nil {
			edit(s, g, r)
		}
		return apitest.JSONOf(t, s)
	}
}

func groups(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = doc{"name": fmt.Sprintf("g%d", i), "rules": []any{doc{"record": "r", "expr": "up"}}}
	}
	return out
}

func rules(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = doc{"record": fmt.Sprintf("r_%d", i), "expr": fmt.Sprintf("sum(up{i=\"%d\"})", i)}
	}
	return out
}

// generic parses JSON keeping numbers exact.
func generic(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", truncate(b), err)
	}
	return v
}

// within reports where want is not contained in got: every object member of want must be in got
// with a contained value, arrays must have the same length with contained elements, and other
// values must be equal.
func within(want, got any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %v, want an object", path, got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: missing", path, k)
			}
			if err := within(wv, gv, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %d items (%T), want %d", path, len(g), got, len(w))
		}
		for i := range w {
			if err := within(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
	return nil
}

// sameJSON reports whether two bodies hold the same JSON value; object members may come in any
// order (the server writes label maps in Go map order).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(generic(t, a), generic(t, b))
}

// expectStored checks that the stored set holds everything the input body said.
func expectStored(t *testing.T, input string, stored []byte) {
	t.Helper()
	if err := within(generic(t, []byte(input)), generic(t, stored), "set"); err != nil {
		t.Fatalf("stored set differs from the input: %v", err)
	}
}

// ------------------------------------------------------------------------------------ tests

func TestLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		if got := list(t, env, key); len(got) != 0 {
			t.Fatalf("fresh team lists %d sets", len(got))
		}

		first := create(t, env, key, `{"name":"first","groups":[
			{"name":"auto","interval":120,"limit":"500","rules":[
				{"record":"job:up:sum","expr":"sum by (job) (up)","evaluationDelayMs":1500}]},
			{"name":"chosen","id":"my-group","version":7,"rules":[
				{"record":"r2","expr":"rate(http_requests_total[5m])","labels":{"team":"a","tier":""}},
				{"record":"r3","expr":"up == 0"}]}]}`)
		s := get(t, env, key, first)
		if s.Name != "first" || len(s.Groups) != 2 {
			t.Fatalf("get: %+v", s)
		}
		g0, g1 := s.Groups[0], s.Groups[1]
		if g0.ID == "" || g0.ID == "my-group" || len([]rune(g0.ID)) > 128 {
			t.Fatalf("server-assigned group id %q", g0.ID)
		}
		if g0.Name != "auto" || g0.Interval == nil || *g0.Interval != 120 || g0.Limit == nil || *g0.Limit != "500" {
			t.Fatalf("group 0: %+v", g0)
		}
		if g0.Version == nil || *g0.Version != 1 {
			t.Fatalf("group 0 version %v, want the default 1", g0.Version)
		}
		if len(g0.Rules) != 1 {
			t.Fatalf("group 0 rules: %+v", g0.Rules)
		}
		r := g0.Rules[0]
		if r.Record != "job:up:sum" || r.Expr != "sum by (job) (up)" || r.EvaluationDelayMs == nil || *r.EvaluationDelayMs != 1500 {
			t.Fatalf("group 0 rule: %+v", r)
		}
		if r.Labels == nil || len(r.Labels) != 0 {
			t.Fatalf("rule without labels: labels %#v, want {}", r.Labels)
		}
		if g1.ID != "my-group" || g1.Name != "chosen" || g1.Version == nil || *g1.Version != 7 {
			t.Fatalf("group 1: %+v", g1)
		}
		// Not sent, the interval is not answered; the limit is, with the service's default
		// (clients read it without checking; it was absent before).
		if g1.Interval != nil || g1.Limit == nil || *g1.Limit != "0" {
			t.Fatalf("group 1: interval %v (want none), limit %v (want the default \"0\")", g1.Interval, g1.Limit)
		}
		if len(g1.Rules) != 2 ||
			!reflect.DeepEqual(g1.Rules[0], ruleOut{Record: "r2", Expr: "rate(http_requests_total[5m])", Labels: map[string]string{"team": "a", "tier": ""}}) ||
			!reflect.DeepEqual(g1.Rules[1], ruleOut{Record: "r3", Expr: "up == 0", Labels: map[string]string{}}) {
			t.Fatalf("group 1 rules: %+v", g1.Rules)
		}
		// The raw answer says "labels":{} rather than null or nothing.
		raw := getRaw(t, env, key, first)
		if !bytes.Contains(raw, []byte(`"labels":{}`)) {
			t.Fatalf("no \"labels\":{} in %s", raw)
		}
		// A second get gives the same set.
		if again := getRaw(t, env, key, first); !sameJSON(t, again, raw) {
			t.Fatalf("second get differs:\n%s\n%s", raw, again)
		}

		// A set without groups, and a group without rules, come back with empty arrays.
		second := create(t, env, key, `{"name":"second"}`)
		if second == first {
			t.Fatalf("two sets got the same id %q", first)
		}
		if s2 := get(t, env, key, second); s2.Name != "second" || s2.Groups == nil || len(s2.Groups) != 0 {
			t.Fatalf("set without groups: %+v", s2)
		}
		if raw := getRaw(t, env, key, second); !bytes.Contains(raw, []byte(`"groups":[]`)) {
			t.Fatalf("no \"groups\":[] in %s", raw)
		}

		// The list holds both, oldest first, each as get shows it.
		sets := list(t, env, key)
		if len(sets) != 2 || sets[0].ID != first || sets[1].ID != second {
			t.Fatalf("list: %+v", sets)
		}
		if !reflect.DeepEqual(sets[0], get(t, env, key, first)) || !reflect.DeepEqual(sets[1], get(t, env, key, second)) {
			t.Fatalf("list entries differ from get: %+v", sets)
		}

		// PUT replaces name and groups.
		res := env.JSON(t, "PUT", rulesPath+"/"+first, key, `{"name":"first, renamed","groups":[
			{"name":"replacement","version":0,"rules":[{"record":"new_rec","expr":"vector(1)","labels":{"x":"y"}}]}]}`)
		expectEmptyObject(t, res, "put")
		s = get(t, env, key, first)
		if s.Name != "first, renamed" || len(s.Groups) != 1 {
			t.Fatalf("after put: %+v", s)
		}
		g := s.Groups[0]
		if g.Name != "replacement" || g.ID == "" || g.ID == g0.ID || g.ID == "my-group" ||
			g.Version == nil || *g.Version != 0 || g.Interval != nil || g.Limit == nil || *g.Limit != "0" {
			t.Fatalf("after put, group: %+v", g)
		}
		if !reflect.DeepEqual(g.Rules, []ruleOut{{Record: "new_rec", Expr: "vector(1)", Labels: map[string]string{"x": "y"}}}) {
			t.Fatalf("after put, rules: %+v", g.Rules)
		}
		// Replacing keeps the set's place in the list, and leaves the other set alone.
		sets = list(t, env, key)
		if len(sets) != 2 || sets[0].ID != first || sets[0].Name != "first, renamed" || sets[1].ID != second || sets[1].Name != "second" {
			t.Fatalf("list after put: %+v", sets)
		}

		// DELETE by path.
		expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"/"+first, key, ""), "delete by path")
		expectNotFound(t, env, key, first)
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath+"/"+first, key, ""), 404, first)
		apitest.ExpectError(t, env.JSON(t, "PUT", rulesPath+"/"+first, key, `{"name":"back"}`), 404, first)
		expectNotFound(t, env, key, first) // PUT does not create
		if sets := list(t, env, key); len(sets) != 1 || sets[0].ID != second {
			t.Fatalf("list after delete: %+v", sets)
		}

		// DELETE by query.
		expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"?id="+url.QueryEscape(second), key, ""), "delete by query")
		expectNotFound(t, env, key, second)
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath+"?id="+url.QueryEscape(second), key, ""), 404, second)
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath+"?id=missing", key, ""), 404, "missing")
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath+"/missing", key, ""), 404, "missing")
		apitest.ExpectError(t, env.JSON(t, "PUT", rulesPath+"/missing", key, `{"name":"x"}`), 404, "missing")
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath, key, ""), 400, "id: is required")
		if sets := list(t, env, key); len(sets) != 0 {
			t.Fatalf("list after deleting everything: %+v", sets)
		}
		expectNotFound(t, env, key, "missing")
	})
}

type boundCase struct {
	name string
	body func(t *testing.T) string
	// fragments is nil for a body that must be accepted, else what the 400 must say.
	fragments []string
}

func boundCases() []boundCase {
	a := func(n int) string { return strings.Repeat("a", n) }
	e := func(n int) string { return strings.Repeat("é", n) }
	bad := func(f ...string) []string { return f }
	return []boundCase{
		// set name, counted in code points
		{"name 1", oneRule(func(s, g, r doc) { s["name"] = "x" }), nil},
		{"name 255 ascii", oneRule(func(s, g, r doc) { s["name"] = a(255) }), nil},
		{"name 255 multi-byte", oneRule(func(s, g, r doc) { s["name"] = e(255) }), nil},
		{"name 255 three-byte", oneRule(func(s, g, r doc) { s["name"] = strings.Repeat("€", 255) }), nil},
		{"name empty", oneRule(func(s, g, r doc) { s["name"] = "" }), bad("name: must have at least 1 character (got 0)")},
		{"name 256 ascii", oneRule(func(s, g, r doc) { s["name"] = a(256) }), bad("name: must have at most 255 characters (got 256)")},
		{"name 256 multi-byte", oneRule(func(s, g, r doc) { s["name"] = e(256) }), bad("name: must have at most 255 characters (got 256)")},
		{"name missing", oneRule(func(s, g, r doc) { delete(s, "name") }), bad("name: is required")},

		// group name and id
		{"group name 1", oneRule(func(s, g, r doc) { g["name"] = "x" }), nil},
		{"group name 255 multi-byte", oneRule(func(s, g, r doc) { g["name"] = e(255) }), nil},
		{"group name empty", oneRule(func(s, g, r doc) { g["name"] = "" }), bad("groups[0].name: must have at least 1 character (got 0)")},
		{"group name 256", oneRule(func(s, g, r doc) { g["name"] = e(256) }), bad("groups[0].name: must have at most 255 characters (got 256)")},
		{"group id 1", oneRule(func(s, g, r doc) { g["id"] = "x" }), nil},
		{"group id 128", oneRule(func(s, g, r doc) { g["id"] = a(128) }), nil},
		{"group id 128 multi-byte", oneRule(func(s, g, r doc) { g["id"] = e(128) }), nil},
		{"group id empty", oneRule(func(s, g, r doc) { g["id"] = "" }), bad("groups[0].id: must have at least 1 character (got 0)")},
		{"group id 129", oneRule(func(s, g, r doc) { g["id"] = a(129) }), bad("groups[0].id: must have at most 128 characters (got 129)")},
		{"group id 129 multi-byte", oneRule(func(s, g, r doc) { g["id"] = e(129) }), bad("groups[0].id: must have at most 128 characters (got 129)")},

		// interval
		{"interval 60", oneRule(func(s, g, r doc) { g["interval"] = 60 }), nil},
		{"interval 4294967295", oneRule(func(s, g, r doc) { g["interval"] = 4294967295 }), nil},
		{"interval 59", oneRule(func(s, g, r doc) { g["interval"] = 59 }), bad("groups[0].interval: must be at least 60 (got 59)")},
		{"interval 4294967296", oneRule(func(s, g, r doc) { g["interval"] = 4294967296 }), bad("groups[0].interval: must be at most 4294967295 (got 4294967296)")},

		// limit
		{"limit 0", oneRule(func(s, g, r doc) { g["limit"] = "0" }), nil},
		{"limit max uint64", oneRule(func(s, g, r doc) { g["limit"] = "18446744073709551615" }), nil},
		{"limit 20 digits with leading zeros", oneRule(func(s, g, r doc) { g["limit"] = "00000000000000000007" }), nil},
		{"limit empty", oneRule(func(s, g, r doc) { g["limit"] = "" }), bad("groups[0].limit: must have at least 1 character (got 0)")},
		{"limit max uint64 + 1", oneRule(func(s, g, r doc) { g["limit"] = "18446744073709551616" }),
			bad(`groups[0] ("g").limit: must be at most 18446744073709551615`)},
		{"limit 20 nines", oneRule(func(s, g, r doc) { g["limit"] = strings.Repeat("9", 20) }),
			bad(`groups[0] ("g").limit: must be at most 18446744073709551615`)},
		{"limit 21 digits", oneRule(func(s, g, r doc) { g["limit"] = "1" + strings.Repeat("0", 20) }),
			bad("groups[0].limit: must have at most 20 characters (got 21)")},
		{"limit not digits", oneRule(func(s, g, r doc) { g["limit"] = "12a" }), bad("groups[0].limit: must match the pattern ^[0-9]+$")},
		{"limit negative", oneRule(func(s, g, r doc) { g["limit"] = "-1" }), bad("groups[0].limit: must match the pattern")},
		{"limit a number", oneRule(func(s, g, r doc) { g["limit"] = 5 }), bad("groups[0].limit:")},

		// version
		{"version 0", oneRule(func(s, g, r doc) { g["version"] = 0 }), nil},
		{"version 4294967295", oneRule(func(s, g, r doc) { g["version"] = 4294967295 }), nil},
		{"version -1", oneRule(func(s, g, r doc) { g["version"] = -1 }), bad("groups[0].version: must be at least 0 (got -1)")},
		{"version 4294967296", oneRule(func(s, g, r doc) { g["version"] = 4294967296 }), bad("groups[0].version: must be at most 4294967295 (got 4294967296)")},

		// evaluationDelayMs
		{"evaluationDelayMs 0", oneRule(func(s, g, r doc) { r["evaluationDelayMs"] = 0 }), nil},
		{"evaluationDelayMs 1800000", oneRule(func(s, g, r doc) { r["evaluationDelayMs"] = 1800000 }), nil},
		{"evaluationDelayMs -1", oneRule(func(s, g, r doc) { r["evaluationDelayMs"] = -1 }),
			bad("groups[0].rules[0].evaluationDelayMs: must be at least 0 (got -1)")},
		{"evaluationDelayMs 1800001", oneRule(func(s, g, r doc) { r["evaluationDelayMs"] = 1800001 }),
			bad("groups[0].rules[0].evaluationDelayMs: must be at most 1800000 (got 1800001)")},

		// expr
		{"expr 1", oneRule(func(s, g, r doc) { r["expr"] = "a" }), nil},
		{"expr 10000 metric name", oneRule(func(s, g, r doc) { r["expr"] = a(10000) }), nil},
		{"expr 10000 sum", oneRule(func(s, g, r doc) { r["expr"] = sumExpr(10000) }), nil},
		{"expr 10000 multi-byte", oneRule(func(s, g, r doc) { r["expr"] = `up{job="` + e(9990) + `"}` }), nil},
		{"expr empty", oneRule(func(s, g, r doc) { r["expr"] = "" }), bad("groups[0].rules[0].expr: must have at least 1 character (got 0)")},
		{"expr 10001", oneRule(func(s, g, r doc) { r["expr"] = a(10001) }), bad("groups[0].rules[0].expr: must have at most 10000 characters (got 10001)")},
		{"expr 10001 sum", oneRule(func(s, g, r doc) { r["expr"] = sumExpr(10001) }), bad("groups[0].rules[0].expr: must have at most 10000 characters (got 10001)")},
		{"expr 10001 multi-byte", oneRule(func(s, g, r doc) { r["expr"] = `up{job="` + e(9991) + `"}` }),
			bad("groups[0].rules[0].expr: must have at most 10000 characters (got 10001)")},
		{"expr missing", oneRule(func(s, g, r doc) { delete(r, "expr") }), bad("groups[0].rules[0].expr: is required")},

		// record
		{"record 1", oneRule(func(s, g, r doc) { r["record"] = "a" }), nil},
		{"record 4096", oneRule(func(s, g, r doc) { r["record"] = a(4096) }), nil},
		{"record empty", oneRule(func(s, g, r doc) { r["record"] = "" }), bad("groups[0].rules[0].record: must have at least 1 character (got 0)")},
		{"record 4097", oneRule(func(s, g, r doc) { r["record"] = a(4097) }), bad("groups[0].rules[0].record: must have at most 4096 characters (got 4097)")},
		{"record missing", oneRule(func(s, g, r doc) { delete(r, "record") }), bad("groups[0].rules[0].record: is required")},

		// label values
		{"label value empty", oneRule(func(s, g, r doc) { r["labels"] = doc{"k": ""} }), nil},
		{"label value 4096", oneRule(func(s, g, r doc) { r["labels"] = doc{"k": a(4096)} }), nil},
		{"label value 4096 multi-byte", oneRule(func(s, g, r doc) { r["labels"] = doc{"k": e(4096)} }), nil},
		{"label value 4097", oneRule(func(s, g, r doc) { r["labels"] = doc{"k": a(4097)} }),
			bad("groups[0].rules[0].labels.k: must have at most 4096 characters (got 4097)")},
		{"label value 4097 multi-byte", oneRule(func(s, g, r doc) { r["labels"] = doc{"k": e(4097)} }),
			bad("groups[0].rules[0].labels.k: must have at most 4096 characters (got 4097)")},

		// item counts
		{"no groups", oneRule(func(s, g, r doc) { s["groups"] = []any{} }), nil},
		{"1000 groups", oneRule(func(s, g, r doc) { s["groups"] = groups(1000) }), nil},
		{"1001 groups", oneRule(func(s, g, r doc) { s["groups"] = groups(1001) }), bad("groups: must have at most 1000 items (got 1001)")},
		{"no rules", oneRule(func(s, g, r doc) { g["rules"] = []any{} }), nil},
		{"1000 rules", oneRule(func(s, g, r doc) { g["rules"] = rules(1000) }), nil},
		{"1001 rules", oneRule(func(s, g, r doc) { g["rules"] = rules(1001) }), bad("groups[0].rules: must have at most 1000 items (got 1001)")},
		{"1001 rules in the second group", oneRule(func(s, g, r doc) {
			s["groups"] = []any{g, doc{"name": "h", "rules": rules(1001)}}
		}), bad("groups[1].rules: must have at most 1000 items (got 1001)")},
	}
}

// sumExpr returns "up + up + … up" padded with trailing spaces to exactly n characters.
func sumExpr(n int) string {
	s := "up"
	for len(s)+len(" + up") <= n {
		s += " + up"
	}
	return s + strings.Repeat(" ", n-len(s))
}

func TestSumExprLength(t *testing.T) {
	for _, n := range []int{10000, 10001} {
		if got := len([]rune(sumExpr(n))); got != n {
			t.Fatalf("sumExpr(%d) has %d characters", n, got)
		}
	}
}

// TestBoundsOnCreate sends each body to create: an accepted one must be stored as sent, a refused
// one must leave the team without sets.
func TestBoundsOnCreate(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "bounds")
		for _, c := range boundCases() {
			t.Run(c.name, func(t *testing.T) {
				body := c.body(t)
				res := env.JSON(t, "POST", rulesPath, key, body)
				if c.fragments != nil {
					apitest.ExpectError(t, res, 400, c.fragments...)
					if sets := list(t, env, key); len(sets) != 0 {
						t.Fatalf("a refused create stored %d sets", len(sets))
					}
					return
				}
				expectOK(t, res, "create")
				var created struct {
					ID string `json:"id"`
				}
				decodeStrict(t, res.Body, &created)
				expectStored(t, body, getRaw(t, env, key, created.ID))
				expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"/"+created.ID, key, ""), "delete")
			})
		}
	})
}

// TestBoundsOnReplace sends each body to PUT on one set: an accepted one must become the set, a
// refused one must leave the set exactly as it was.
func TestBoundsOnReplace(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		id := create(t, env, key, `{"name":"base","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`)
		current := getRaw(t, env, key, id)
		for _, c := range boundCases() {
			t.Run(c.name, func(t *testing.T) {
				body := c.body(t)
				res := env.JSON(t, "PUT", rulesPath+"/"+id, key, body)
				if c.fragments != nil {
					apitest.ExpectError(t, res, 400, c.fragments...)
					if after := getRaw(t, env, key, id); !sameJSON(t, after, current) {
						t.Fatalf("a refused PUT changed the set:\nbefore %s\nafter  %s", truncate(current), truncate(after))
					}
					return
				}
				expectEmptyObject(t, res, "put")
				current = getRaw(t, env, key, id)
				expectStored(t, body, current)
			})
		}
		if sets := list(t, env, key); len(sets) != 1 || sets[0].ID != id {
			t.Fatalf("PUTs changed the number of sets: %+v", sets)
		}
	})
}

func TestPathIDBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		kept := create(t, env, key, `{"name":"kept"}`)
		before := getRaw(t, env, key, kept)
		ids := []struct {
			name string
			id   string
			ok   bool // a valid id (no such set: 404) rather than a 400
		}{
			{"1", "x", true},
			{"128 ascii", strings.Repeat("a", 128), true},
			{"128 multi-byte", strings.Repeat("é", 128), true},
			{"129 ascii", strings.Repeat("a", 129), false},
			{"129 multi-byte", strings.Repeat("é", 129), false},
		}
		for _, c := range ids {
			for _, op := range []struct{ method, path, body string }{
				{"GET", rulesPath + "/" + url.PathEscape(c.id), ""},
				{"PUT", rulesPath + "/" + url.PathEscape(c.id), `{"name":"n"}`},
				{"DELETE", rulesPath + "/" + url.PathEscape(c.id), ""},
				{"DELETE", rulesPath + "?id=" + url.QueryEscape(c.id), ""},
			} {
				t.Run(c.name+" "+op.method+" "+op.path[len(rulesPath):len(rulesPath)+1], func(t *testing.T) {
					res := env.JSON(t, op.method, op.path, key, op.body)
					if c.ok {
						apitest.ExpectError(t, res, 404, "id: no recording rule set", c.id)
					} else {
						apitest.ExpectError(t, res, 400, "id: must have at most 128 characters (got 129)")
					}
				})
			}
		}
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath+"?id=", key, ""), 400, "id: must have at least 1 character (got 0)")
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath, key, ""), 400, "id: is required")
		if after := getRaw(t, env, key, kept); !sameJSON(t, after, before) {
			t.Fatalf("the set changed:\n%s\n%s", before, after)
		}
		if sets := list(t, env, key); len(sets) != 1 || sets[0].ID != kept {
			t.Fatalf("list: %+v", sets)
		}
	})
}

func TestPrometheusRules(t *testing.T) {
	// second builds a set whose group "g" has a valid first rule and the given second rule.
	second := func(rule doc) func(t *testing.T) string {
		return oneRule(func(s, g, r doc) { g["rules"] = []any{r, rule} })
	}
	const at = `groups[0] ("g").rules[1].`
	cases := []boundCase{
		// expressions
		{"expr sum by", second(doc{"record": "x", "expr": "sum by (job) (rate(http_requests_total[5m]))"}), nil},
		{"expr histogram_quantile", second(doc{"record": "x", "expr": `histogram_quantile(0.9, sum by (le) (rate(req_bucket{job=~"a|b"}[5m])))`}), nil},
		{"expr offset and binary", second(doc{"record": "x", "expr": "up offset 5m / on(job) group_left max by (job) (up)"}), nil},
		{"expr unclosed grouping", second(doc{"record": "x", "expr": "sum by (job (up)"}), []string{at + "expr: not valid PromQL"}},
		{"expr unclosed call", second(doc{"record": "x", "expr": "rate(up[5m]"}), []string{at + "expr: not valid PromQL"}},
		{"expr dangling operator", second(doc{"record": "x", "expr": "up +"}), []string{at + "expr: not valid PromQL"}},
		{"expr unknown function", second(doc{"record": "x", "expr": "nosuchfunction(up)"}), []string{at + "expr: not valid PromQL"}},
		{"expr range for instant", second(doc{"record": "x", "expr": "rate(up)"}), []string{at + "expr: not valid PromQL"}},
		{"expr unclosed matcher", second(doc{"record": "x", "expr": `up{job="a"`}), []string{at + "expr: not valid PromQL"}},
		{"expr only spaces", second(doc{"record": "x", "expr": "   "}), []string{at + "expr: not valid PromQL"}},
		// record names
		{"record with colons", second(doc{"record": "job:up:sum", "expr": "up"}), nil},
		{"record leading colon", second(doc{"record": ":up", "expr": "up"}), nil},
		{"record leading underscore", second(doc{"record": "_up_2", "expr": "up"}), nil},
		{"record leading digit", second(doc{"record": "1abc", "expr": "up"}), []string{at + "record:", `"1abc"`, "not a valid metric name"}},
		{"record dash", second(doc{"record": "a-b", "expr": "up"}), []string{at + "record:", `"a-b"`}},
		{"record space", second(doc{"record": "a b", "expr": "up"}), []string{at + "record:", `"a b"`}},
		{"record dot", second(doc{"record": "a.b", "expr": "up"}), []string{at + "record:", `"a.b"`}},
		{"record non-ASCII", second(doc{"record": "é", "expr": "up"}), []string{at + "record:"}},
		// label names
		{"labels valid names", second(doc{"record": "x", "expr": "up", "labels": doc{"a": "1", "_b": "2", "C_3": "3"}}), nil},
		{"label leading digit", second(doc{"record": "x", "expr": "up", "labels": doc{"1a": "v"}}), []string{at + "labels:", `"1a"`, "not a valid label name"}},
		{"label dash", second(doc{"record": "x", "expr": "up", "labels": doc{"ok": "v", "a-b": "v"}}), []string{at + "labels:", `"a-b"`}},
		{"label colon", second(doc{"record": "x", "expr": "up", "labels": doc{"a:b": "v"}}), []string{at + "labels:", `"a:b"`}},
		{"label empty name", second(doc{"record": "x", "expr": "up", "labels": doc{"": "v"}}), []string{at + "labels:"}},
		{"label __name__", second(doc{"record": "x", "expr": "up", "labels": doc{"__name__": "v"}}), []string{at + "labels:", `"__name__"`, "reserves"}},
		{"label __other", second(doc{"record": "x", "expr": "up", "labels": doc{"__x": "v"}}), []string{at + "labels:", `"__x"`, "reserves"}},
		// the failing rule is located in a later group, by index and name
		{"bad expr in second group", oneRule(func(s, g, r doc) {
			s["groups"] = []any{g, doc{"name": "other", "rules": []any{doc{"record": "a", "expr": "up"}, doc{"record": "b", "expr": "up"}, doc{"record": "c", "expr": "(up"}}}}
		}), []string{`groups[1] ("other").rules[2].expr: not valid PromQL`}},
		// uniqueness within a set
		{"duplicate group names", oneRule(func(s, g, r doc) {
			s["groups"] = []any{g, doc{"name": "h"}, doc{"name": "g"}}
		}), []string{`groups[2] ("g").name`, "groups[0] already has this name"}},
		{"duplicate group ids", oneRule(func(s, g, r doc) {
			g["id"] = "same"
			s["groups"] = []any{g, doc{"name": "h", "id": "same"}}
		}), []string{`groups[1] ("h").id`, `groups[0] already has id "same"`}},
		{"distinct names and ids", oneRule(func(s, g, r doc) {
			g["id"] = "one"
			s["groups"] = []any{g, doc{"name": "h", "id": "two"}, doc{"name": "G"}}
		}), nil},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		base := create(t, env, key, `{"name":"base","groups":[{"name":"g","id":"same","rules":[{"record":"r","expr":"up"}]}]}`)
		current := getRaw(t, env, key, base)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				body := c.body(t)
				// create
				res := env.JSON(t, "POST", rulesPath, key, body)
				if c.fragments != nil {
					apitest.ExpectError(t, res, 400, c.fragments...)
					if sets := list(t, env, key); len(sets) != 1 || sets[0].ID != base {
						t.Fatalf("a refused create changed the list: %+v", sets)
					}
				} else {
					expectOK(t, res, "create")
					var created struct {
						ID string `json:"id"`
					}
					decodeStrict(t, res.Body, &created)
					expectStored(t, body, getRaw(t, env, key, created.ID))
					expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"?id="+url.QueryEscape(created.ID), key, ""), "delete")
				}
				// replace
				res = env.JSON(t, "PUT", rulesPath+"/"+base, key, body)
				if c.fragments != nil {
					apitest.ExpectError(t, res, 400, c.fragments...)
					if after := getRaw(t, env, key, base); !sameJSON(t, after, current) {
						t.Fatalf("a refused PUT changed the set:\nbefore %s\nafter  %s", current, after)
					}
					return
				}
				expectEmptyObject(t, res, "put")
				current = getRaw(t, env, key, base)
				expectStored(t, body, current)
			})
		}
	})
}

// TestGroupNamesAndIDsMayRepeatAcrossSets shows that group ids and names need only be unique
// within one set.
func TestGroupNamesAndIDsMayRepeatAcrossSets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		body := `{"name":"same","groups":[{"name":"g","id":"gid","rules":[{"record":"r","expr":"up"}]}]}`
		a := create(t, env, env.RootKey, body)
		b := create(t, env, env.RootKey, body)
		if a == b {
			t.Fatalf("same id %q twice", a)
		}
		for _, id := range []string{a, b} {
			s := get(t, env, env.RootKey, id)
			if s.Name != "same" || len(s.Groups) != 1 || s.Groups[0].ID != "gid" {
				t.Fatalf("set %s: %+v", id, s)
			}
		}
	})
}

type operation struct {
	name   string
	id     string // operationId, named in a 403
	method string
	path   func(id string) string
	body   string
	manage bool // needs metrics.recording-rules:UpdateConfig rather than ReadConfig
}

var operations = []operation{
	{"create", "CreateRecordingRuleSet", "POST", func(string) string { return rulesPath }, `{"name":"by other key","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`, true},
	{"list", "ListRecordingRuleSets", "GET", func(string) string { return rulesPath }, "", false},
	{"get", "GetRecordingRuleSet", "GET", func(id string) string { return rulesPath + "/" + id }, "", false},
	{"update", "UpdateRecordingRuleSet", "PUT", func(id string) string { return rulesPath + "/" + id }, `{"name":"changed","groups":[]}`, true},
	{"delete", "DeleteRecordingRuleSet", "DELETE", func(id string) string { return rulesPath + "/" + id }, "", true},
	{"delete by query", "DeleteRecordingRuleSetByQuery", "DELETE", func(id string) string { return rulesPath + "?id=" + url.QueryEscape(id) }, "", true},
}

func TestPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id := create(t, env, env.RootKey, `{"name":"guarded","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`)
		before := getRaw(t, env, env.RootKey, id)
		keys := []struct {
			name      string
			key       string
			canRead   bool
			canManage bool
		}{
			{"ReadConfig only", env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig"), true, false},
			{"Manage only", env.MustKey(t, env.RootKey, "metrics.recording-rules:UpdateConfig"), false, true},
			{"api-keys only", env.MustKey(t, env.RootKey, "team-custom-api-keys:ReadConfig", "team-custom-api-keys:Manage"), false, false},
		}
		for _, k := range keys {
			for _, op := range operations {
				allowed := (op.manage && k.canManage) || (!op.manage && k.canRead)
				if allowed {
					continue // the allowed writes are checked below, once the refusals are done
				}
				t.Run(k.name+" "+op.name, func(t *testing.T) {
					res := env.JSON(t, op.method, op.path(id), k.key, op.body)
					if op.manage {
						apitest.ExpectError(t, res, 403, `"metrics.recording-rules:UpdateConfig"`, op.id)
					} else {
						apitest.ExpectError(t, res, 403, `"metrics.recording-rules:ReadConfig"`, op.id)
					}
				})
			}
		}
		// Nothing refused changed anything.
		if after := getRaw(t, env, env.RootKey, id); !sameJSON(t, after, before) {
			t.Fatalf("refused calls changed the set:\n%s\n%s", before, after)
		}
		if sets := list(t, env, env.RootKey); len(sets) != 1 || sets[0].ID != id {
			t.Fatalf("refused calls changed the list: %+v", sets)
		}

		// A ReadConfig key reads.
		reader := keys[0].key
		if got := getRaw(t, env, reader, id); !sameJSON(t, got, before) {
			t.Fatalf("reader sees %s, want %s", got, before)
		}
		if sets := list(t, env, reader); len(sets) != 1 || sets[0].ID != id {
			t.Fatalf("reader list: %+v", sets)
		}
		// A Manage key writes.
		manager := keys[1].key
		other := create(t, env, manager, operations[0].body)
		expectEmptyObject(t, env.JSON(t, "PUT", rulesPath+"/"+other, manager, `{"name":"changed"}`), "manager put")
		if s := get(t, env, env.RootKey, other); s.Name != "changed" || len(s.Groups) != 0 {
			t.Fatalf("after the manager's put: %+v", s)
		}
		expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"/"+other, manager, ""), "manager delete")
		expectNotFound(t, env, env.RootKey, other)
		third := create(t, env, manager, `{"name":"third"}`)
		expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"?id="+third, manager, ""), "manager delete by query")
		expectNotFound(t, env, env.RootKey, third)
	})
}

func TestTeamIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, keyA := env.MustTeam(t, "team a")
		_, keyB := env.MustTeam(t, "team b")
		id := create(t, env, keyA, `{"name":"of a","groups":[{"name":"g","id":"gid","rules":[{"record":"r","expr":"up","labels":{"l":"v"}}]}]}`)
		before := getRaw(t, env, keyA, id)

		for _, op := range operations {
			if op.name == "create" || op.name == "list" {
				continue
			}
			t.Run(op.name, func(t *testing.T) {
				apitest.ExpectError(t, env.JSON(t, op.method, op.path(id), keyB, op.body), 404, "id: no recording rule set", id)
			})
		}
		if sets := list(t, env, keyB); len(sets) != 0 {
			t.Fatalf("team b lists %+v", sets)
		}
		// The root team (1) sees nothing of team a either.
		if sets := list(t, env, env.RootKey); len(sets) != 0 {
			t.Fatalf("team 1 lists %+v", sets)
		}
		expectNotFound(t, env, env.RootKey, id)

		// A still has it, unchanged.
		if after := getRaw(t, env, keyA, id); !sameJSON(t, after, before) {
			t.Fatalf("team b's calls changed the set:\n%s\n%s", before, after)
		}
		if sets := list(t, env, keyA); len(sets) != 1 || sets[0].ID != id || sets[0].Name != "of a" {
			t.Fatalf("team a lists %+v", sets)
		}

		// B's own set is B's alone.
		idB := create(t, env, keyB, `{"name":"of b"}`)
		if sets := list(t, env, keyB); len(sets) != 1 || sets[0].ID != idB {
			t.Fatalf("team b lists %+v", sets)
		}
		if sets := list(t, env, keyA); len(sets) != 1 || sets[0].ID != id {
			t.Fatalf("team a lists %+v", sets)
		}
		expectNotFound(t, env, keyA, idB)
	})
}

func TestRefusedReplaceChangesNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		id := create(t, env, key, `{"name":"keep","groups":[
			{"name":"g","interval":60,"limit":"10","version":3,"rules":[{"record":"r","expr":"up","evaluationDelayMs":5,"labels":{"a":"b"}}]},
			{"name":"h","rules":[]}]}`)
		before := getRaw(t, env, key, id)
		listBefore := env.JSON(t, "GET", rulesPath, key, "").Body
		bodies := []string{
			// a valid first group, then a bad expression: nothing of the first group may land
			`{"name":"changed","groups":[{"name":"new","rules":[{"record":"ok","expr":"up"}]},{"name":"g2","rules":[{"record":"x","expr":"sum(("}]}]}`,
			`{"name":"changed","groups":[{"name":"g","rules":[{"record":"bad-name","expr":"up"}]}]}`,
			`{"name":"changed","groups":[{"name":"g"},{"name":"g"}]}`,
			`{"name":"changed","groups":[{"name":"g","interval":59}]}`,
			`{"name":""}`,
			`{"name":"changed","groups":[{"name":"g","rules":[{"record":"r","expr":5}]}]}`,
			`{"name":"changed"`,
		}
		for i, body := range bodies {
			res := env.JSON(t, "PUT", rulesPath+"/"+id, key, body)
			apitest.ExpectError(t, res, 400)
			if after := getRaw(t, env, key, id); !sameJSON(t, after, before) {
				t.Fatalf("body %d changed the set:\nbefore %s\nafter  %s", i, before, after)
			}
		}
		if listAfter := env.JSON(t, "GET", rulesPath, key, "").Body; !sameJSON(t, listAfter, listBefore) {
			t.Fatalf("list changed:\n%s\n%s", listBefore, listAfter)
		}
	})
}

func TestDataSurvivesRestart(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "durable")
		reader := env.MustKey(t, key, "metrics.recording-rules:ReadConfig")
		id := create(t, env, key, `{"name":"durable","groups":[{"name":"g","interval":300,"limit":"18446744073709551615","version":4294967295,
			"rules":[{"record":"a:b","expr":"sum(rate(x[5m]))","evaluationDelayMs":1800000,"labels":{"k":"é"}}]}]}`)
		gone := create(t, env, key, `{"name":"gone"}`)
		expectEmptyObject(t, env.JSON(t, "DELETE", rulesPath+"/"+gone, key, ""), "delete")
		before := getRaw(t, env, key, id)
		oldURL := env.URL

		env.Restart(t)
		if env.URL == oldURL {
			t.Fatalf("restart kept the URL %s", oldURL)
		}

		if after := getRaw(t, env, key, id); !sameJSON(t, after, before) {
			t.Fatalf("after restart:\n%s\nbefore:\n%s", after, before)
		}
		if after := getRaw(t, env, reader, id); !sameJSON(t, after, before) {
			t.Fatalf("reader after restart:\n%s", after)
		}
		expectNotFound(t, env, key, gone)
		if sets := list(t, env, key); len(sets) != 1 || sets[0].ID != id {
			t.Fatalf("list after restart: %+v", sets)
		}
		// The reader's permissions survive too.
		apitest.ExpectError(t, env.JSON(t, "DELETE", rulesPath+"/"+id, reader, ""), 403, "metrics.recording-rules:UpdateConfig")
		// And the store keeps working: a new set sorts after the old one.
		newer := create(t, env, key, `{"name":"newer"}`)
		if sets := list(t, env, key); len(sets) != 2 || sets[0].ID != id || sets[1].ID != newer {
			t.Fatalf("list after a create after restart: %+v", sets)
		}
	})
}

// TestStreamedListIsTheBufferedList checks that the list, which the server streams, is byte for
// byte what the generated encoder writes for the same sets: empty, one, and more than the
// streaming buffer holds (so the answer leaves in several writes).
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "streamed")
		h := recordingrules.NewHandler(env.DB)
		buffered := func(ctx context.Context) (*oas.RecordingRuleSetList, error) { return h.ListRecordingRuleSets(ctx) }
		if body := apitest.ExpectStreamedAsBuffered(t, env, rulesPath, key, teamID, buffered); string(body) != `{"sets":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		create(t, env, key, `{"name":"one"}`)
		apitest.ExpectStreamedAsBuffered(t, env, rulesPath, key, teamID, buffered)

		size := 0
		for i := 0; size <= 2*streaming.BufferBytes; i++ {
			body := fmt.Sprintf(`{"name":"set %d \"q\" \u00e9 <&>","groups":[
				{"name":"g","interval":60,"limit":"10","rules":[
					{"record":"job:r%d:sum","expr":"sum by (job) (up{x=\"%d\"})","labels":{"k":"v\n%d"}}]},
				{"name":"h","version":3,"rules":[{"record":"r","expr":"up == 0","evaluationDelayMs":%d}]}]}`, i, i, i, i, i)
			create(t, env, key, body)
			size += len(body)
		}
		body := apitest.ExpectStreamedAsBuffered(t, env, rulesPath, key, teamID, buffered)
		if len(body) <= 2*streaming.BufferBytes {
			t.Fatalf("the list is %d bytes, want more than two buffers", len(body))
		}
	})
}

// TestGetSeesEveryCommittedWrite: a GET answered after a write's 2xx shows that write, every
// time: the read path keeps nothing across requests (see getSet).
func TestGetSeesEveryCommittedWrite(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		id := create(t, env, key, `{"name":"v0"}`)
		for i := 1; i <= 20; i++ {
			name := fmt.Sprintf("v%d", i)
			res := env.JSON(t, "PUT", rulesPath+"/"+id, key, `{"name":"`+name+`","groups":[]}`)
			expectEmptyObject(t, res, "put")
			if s := get(t, env, key, id); s.Name != name {
				t.Fatalf("GET after the PUT of %q answered %q", name, s.Name)
			}
		}
		res := env.JSON(t, "DELETE", rulesPath+"/"+id, key, "")
		if res.Status/100 != 2 {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, "GET", rulesPath+"/"+id, key, ""); res.Status != 404 {
			t.Fatalf("GET after DELETE: %d %s, want 404", res.Status, res.Body)
		}
	})
}

// TestGetAnswersTheStoredDocument checks the hot path of GET by id, which sends the stored
// document as it is (AnswerRecordingRuleSet): its answer is byte for byte what the generated
// encoder writes for the set the typed method returns, for sets with every optional field
// present and every one absent, and it is the stored document itself. A document stored in
// another form (keys in another order, as no code of ours writes it) is answered as the typed
// path answers it, decoded and encoded again.
func TestGetAnswersTheStoredDocument(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "stored")
		h := recordingrules.NewHandler(env.DB)
		ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: teamID})
		typed := func(id string) []byte {
			t.Helper()
			set, err := h.GetRecordingRuleSet(ctx, oas.GetRecordingRuleSetParams{ID: id})
			if err != nil {
				t.Fatalf("typed get %s: %v", id, err)
			}
			b, _ := set.MarshalJSON()
			return b
		}
		stored := func(id string) []byte {
			t.Helper()
			var doc string
			if err := env.DB.Read().QueryRowContext(context.Background(),
				`SELECT document FROM recording_rule_sets WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&doc); err != nil {
				t.Fatal(err)
			}
			return []byte(doc)
		}
		for name, body := range map[string]string{
			"no groups":              `{"name":"bare"}`,
			"empty groups":           `{"name":"empty","groups":[]}`,
			"optional fields absent": `{"name":"absent","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`,
			"every optional field": `{"name":"every \"field\" é <&> \u2028 ☃","groups":[
				{"name":"g1","id":"my-group","interval":60,"limit":"10","version":7,"rules":[
					{"record":"job:r:sum","expr":"sum by (job) (up{x=\"1\"})","evaluationDelayMs":1800000,"labels":{"k":"v\n\t\"q\" ☃"}},
					{"record":"r2","expr":"up == 0","labels":{}}]},
				{"name":"g2","interval":4294967295,"limit":"0","version":0,"rules":[]}]}`,
		} {
			t.Run(name, func(t *testing.T) {
				id := create(t, env, key, body)
				answer := getRaw(t, env, key, id)
				if want := typed(id); !bytes.Equal(answer, want) {
					t.Fatalf("GET answered\n%s\nthe typed path answers\n%s", answer, want)
				}
				if doc := stored(id); !bytes.Equal(answer, doc) {
					t.Fatalf("GET answered\n%s\nnot the stored document\n%s", answer, doc)
				}
			})
		}

		t.Run("labels in map order", func(t *testing.T) {
			// The typed path encodes labels in Go's random map order; the stored path answers
			// the stored order every time, and the same JSON value.
			id := create(t, env, key, `{"name":"labels","groups":[{"name":"g","rules":[
				{"record":"r","expr":"up","labels":{"a":"1","b":"2","c":"3","d":"4"}}]}]}`)
			doc := stored(id)
			for range 5 {
				answer := getRaw(t, env, key, id)
				if !bytes.Equal(answer, doc) {
					t.Fatalf("GET answered\n%s\nnot the stored document\n%s", answer, doc)
				}
				var a, b any
				if err := json.Unmarshal(answer, &a); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(typed(id), &b); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("GET answered %s, the typed path %v", answer, b)
				}
			}
		})

		t.Run("document in another form", func(t *testing.T) {
			id := create(t, env, key, `{"name":"other form","groups":[{"name":"g","interval":60,"rules":[{"record":"r","expr":"up"}]}]}`)
			set := get(t, env, key, id)
			reordered := fmt.Sprintf(`{ "name" : "other form", "groups":[{"rules":[{"labels":{},"expr":"up","record":"r"}],"version":%d,"interval":60,"name":"g","id":%q}], "id":%q }`,
				*set.Groups[0].Version, set.Groups[0].ID, id)
			if err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
				_, err := tx.ExecContext(context.Background(),
					`UPDATE recording_rule_sets SET document = $1 WHERE team_id = $2 AND id = $3`, reordered, teamID, id)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			answer := getRaw(t, env, key, id)
			if want := typed(id); !bytes.Equal(answer, want) {
				t.Fatalf("GET answered\n%s\nthe typed path answers\n%s", answer, want)
			}
			if bytes.Equal(answer, stored(id)) {
				t.Fatalf("GET answered the stored document in another form as it is: %s", answer)
			}
		})
	})
}
