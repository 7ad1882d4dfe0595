package slos_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	slosPath    = "/mgmt/openapi/4/slo/slos/v1"
	executePath = "/mgmt/openapi/4/slo/slos/v1/all/execute"
	batchGet    = "/mgmt/openapi/3/v1/slo/slos:batchGet"
	// batchGetList is E15 at its public path.
	batchGetList = "/mgmt/openapi/5/slo/slos/v1/all/list"
)

var lowerUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// slo is an SLO as answered; pointers tell a missing field from a zero one.
type slo struct {
	ID                        string                     `json:"id"`
	Name                      string                     `json:"name"`
	Description               *string                    `json:"description"`
	Creator                   string                     `json:"creator"`
	TargetThresholdPercentage float64                    `json:"targetThresholdPercentage"`
	Grouping                  *struct{ Labels []string } `json:"grouping"`
	Labels                    map[string]string          `json:"labels"`
	RequestBasedMetricSli     *struct {
		GoodEvents, TotalEvents struct{ Query string }
	} `json:"requestBasedMetricSli"`
	WindowBasedMetricSli *struct {
		Query                                           struct{ Query string }
		Window, ComparisonOperator, MissingDataStrategy string
		Threshold                                       float64
	} `json:"windowBasedMetricSli"`
	Revision struct {
		Revision   int    `json:"revision"`
		UpdateTime string `json:"updateTime"`
	} `json:"revision"`
	SloTimeFrame string `json:"sloTimeFrame"`
	ProductType  string `json:"productType"`
	SloType      string `json:"sloType"`
	Type         string `json:"type"`
	CreateTime   string `json:"createTime"`
	UpdateTime   string `json:"updateTime"`
}

// body is an SLO request as a JSON object: a valid request-based SLO, changed by mods.
func body(name string, mods ...func(m map[string]any)) map[string]any {
	m := map[string]any{
		"name":                      name,
		"targetThresholdPercentage": 99.9,
		"sloTimeFrame":              "SLO_TIME_FRAME_28_DAYS",
		"requestBasedMetricSli": map[string]any{
			"goodEvents":  map[string]any{"query": `sum(rate(http_requests_total{code!~"5.."}[5m]))`},
			"totalEvents": map[string]any{"query": `sum(rate(http_requests_total[5m]))`},
		},
	}
	for _, mod := range mods {
		mod(m)
	}
	return m
}

func windowSli(m map[string]any) {
	delete(m, "requestBasedMetricSli")
	m["windowBasedMetricSli"] = map[string]any{
		"query":              map[string]any{"query": `avg(up)`},
		"window":             "WINDOW_SLO_WINDOW_5_MINUTES",
		"comparisonOperator": "COMPARISON_OPERATOR_GREATER_THAN_OR_EQUALS",
		"threshold":          0.95,
	}
}

func create(t *testing.T, env *apitest.Env, key string, m map[string]any) slo {
	t.Helper()
	return apitest.Decode[struct{ Slo slo }](t, env.JSON(t, http.MethodPost, slosPath, key, apitest.JSONOf(t, m))).Slo
}

func get(t *testing.T, env *apitest.Env, key, id string) slo {
	t.Helper()
	return apitest.Decode[struct{ Slo slo }](t, env.JSON(t, http.MethodGet, slosPath+"/"+id, key, "")).Slo
}

// listRaw is the list answer's body, for comparing before and after a refused batch.
func listRaw(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	res := env.JSON(t, http.MethodGet, slosPath, key, "")
	if res.Status != http.StatusOK {
		t.Fatalf("list %d %s", res.Status, res.Body)
	}
	return string(res.Body)
}

func list(t *testing.T, env *apitest.Env, key string) []slo {
	t.Helper()
	return apitest.Decode[struct{ Slos []slo }](t, env.JSON(t, http.MethodGet, slosPath, key, "")).Slos
}

func execute(t *testing.T, env *apitest.Env, key string, requests ...any) apitest.Response {
	t.Helper()
	if requests == nil {
		requests = []any{}
	}
	return env.JSON(t, http.MethodPost, executePath, key, apitest.JSONOf(t, map[string]any{"requests": requests}))
}

func createReq(m map[string]any) any {
	return map[string]any{"createSloRequest": map[string]any{"slo": m}}
}
func replaceReq(m map[string]any) any {
	return map[string]any{"replaceSloRequest": map[string]any{"slo": m}}
}
func deleteReq(id string) any { return map[string]any{"deleteSloRequest": map[string]any{"id": id}} }

func withID(id string) func(m map[string]any) { return func(m map[string]any) { m["id"] = id } }

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}

const missingID = "00000000-0000-4000-8000-000000000000"

func TestSloRoundTrip(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, team := env.MustTeam(t, "acme")
		key := env.MustKey(t, team, "slo:UpdateConfig", "slo:ReadConfig")
		// Server fields sent by the client are ignored.
		in := body("checkout availability", func(m map[string]any) {
			m["id"] = missingID
			m["creator"] = "mallory@example.com"
			m["createTime"] = "2000-01-01T00:00:00Z"
			m["updateTime"] = "2000-01-01T00:00:00Z"
			m["revision"] = map[string]any{"revision": 41, "updateTime": "2000-01-01T00:00:00Z"}
			m["description"] = "99.9% of checkouts succeed"
			m["grouping"] = map[string]any{"labels": []string{"region", "service"}}
			m["labels"] = map[string]string{"team": "payments", "tier": ""}
		})
		before := env.Clock.Now().Add(-time.Second)
		c := create(t, env, key, in)
		if !lowerUUID.MatchString(c.ID) || c.ID == missingID {
			t.Fatalf("id %q", c.ID)
		}
		if c.Name != "checkout availability" || c.Description == nil || *c.Description != "99.9% of checkouts succeed" ||
			c.Creator != "test key" || c.TargetThresholdPercentage != 99.9 ||
			apitest.JSONOf(t, c.Grouping.Labels) != `["region","service"]` || apitest.JSONOf(t, c.Labels) != `{"team":"payments","tier":""}` ||
			c.RequestBasedMetricSli == nil || c.RequestBasedMetricSli.GoodEvents.Query != `sum(rate(http_requests_total{code!~"5.."}[5m]))` ||
			c.RequestBasedMetricSli.TotalEvents.Query != `sum(rate(http_requests_total[5m]))` || c.WindowBasedMetricSli != nil ||
			c.SloTimeFrame != "SLO_TIME_FRAME_28_DAYS" || c.ProductType != "SLO_PRODUCT_TYPE_UNSPECIFIED" ||
			c.SloType != "SLO_TYPE_REQUEST" || c.Type != "request" || c.Revision.Revision != 1 ||
			c.CreateTime != c.UpdateTime || c.Revision.UpdateTime != c.UpdateTime {
			t.Fatalf("created %+v", c)
		}
		if ct := parseTime(t, c.CreateTime); ct.Before(before) || ct.After(env.Clock.Now().Add(time.Second)) {
			t.Fatalf("createTime %s, clock %s", c.CreateTime, env.Clock.Now())
		}
		// Omitted optional fields are filled.
		bare := create(t, env, key, body("bare"))
		if bare.Description == nil || *bare.Description != "" || bare.Grouping == nil || len(bare.Grouping.Labels) != 0 ||
			bare.Labels == nil || len(bare.Labels) != 0 {
			t.Fatalf("bare %+v", bare)
		}
		if g := get(t, env, key, c.ID); apitest.JSONOf(t, g) != apitest.JSONOf(t, c) {
			t.Fatalf("get %+v, want %+v", g, c)
		}
		if l := list(t, env, key); len(l) != 2 || l[0].ID != c.ID || l[1].ID != bare.ID {
			t.Fatalf("list %+v", l)
		}

		// Replace: revision 1 → 2 → 3, times move, createTime and creator stay.
		other := env.MustKey(t, team, "slo:UpdateConfig")
		env.Clock.Advance(time.Hour)
		r2 := apitest.Decode[struct {
			Slo                 slo
			EffectedSloAlertIds []string
		}](t, env.JSON(t, http.MethodPut, slosPath, other, apitest.JSONOf(t, body("renamed", withID(c.ID), windowSli,
			func(m map[string]any) { m["creator"] = "x"; m["sloType"] = "SLO_TYPE_WINDOW"; m["type"] = "window" }))))
		s2 := r2.Slo
		if r2.EffectedSloAlertIds == nil || len(r2.EffectedSloAlertIds) != 0 {
			t.Fatalf("effectedSloAlertIds %v", r2.EffectedSloAlertIds)
		}
		if s2.ID != c.ID || s2.Name != "renamed" || s2.Creator != "test key" || s2.CreateTime != c.CreateTime ||
			s2.Revision.Revision != 2 || s2.Revision.UpdateTime != s2.UpdateTime ||
			!parseTime(t, s2.UpdateTime).After(parseTime(t, c.UpdateTime).Add(59*time.Minute)) ||
			s2.RequestBasedMetricSli != nil || s2.WindowBasedMetricSli == nil ||
			s2.WindowBasedMetricSli.Query.Query != "avg(up)" || s2.WindowBasedMetricSli.Window != "WINDOW_SLO_WINDOW_5_MINUTES" ||
			s2.WindowBasedMetricSli.ComparisonOperator != "COMPARISON_OPERATOR_GREATER_THAN_OR_EQUALS" ||
			s2.WindowBasedMetricSli.Threshold != 0.95 || s2.WindowBasedMetricSli.MissingDataStrategy != "MISSING_DATA_STRATEGY_UNCOUNTED" ||
			s2.SloType != "SLO_TYPE_WINDOW" || s2.Type != "window" || s2.Grouping == nil || len(s2.Grouping.Labels) != 0 || len(s2.Labels) != 0 {
			t.Fatalf("replaced %+v", s2)
		}
		env.Clock.Advance(time.Hour)
		s3 := apitest.Decode[struct{ Slo slo }](t, env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, body("third", withID(c.ID))))).Slo
		if s3.Revision.Revision != 3 || s3.CreateTime != c.CreateTime || s3.Revision.UpdateTime != s3.UpdateTime ||
			!parseTime(t, s3.UpdateTime).After(parseTime(t, s2.UpdateTime).Add(59*time.Minute)) || s3.SloType != "SLO_TYPE_REQUEST" {
			t.Fatalf("third %+v", s3)
		}
		// The list stays in create order after replaces.
		if l := list(t, env, key); len(l) != 2 || l[0].ID != c.ID || l[1].ID != bare.ID || apitest.JSONOf(t, l[0]) != apitest.JSONOf(t, s3) {
			t.Fatalf("list after replace %+v", l)
		}

		env.Restart(t)
		if g := get(t, env, key, c.ID); apitest.JSONOf(t, g) != apitest.JSONOf(t, s3) {
			t.Fatalf("after restart %+v, want %+v", g, s3)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, body("x", withID(missingID)))), 404, "id: no SLO", missingID)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, body("x"))), 400, "id: required")

		del := env.JSON(t, http.MethodDelete, slosPath+"/"+c.ID, key, "")
		if del.Status != http.StatusOK || string(del.Body) != `{"effectedSloAlertIds":[]}` {
			t.Fatalf("delete %d %s", del.Status, del.Body)
		}
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			apitest.ExpectError(t, env.JSON(t, m, slosPath+"/"+c.ID, key, ""), 404, "id: no SLO", c.ID)
		}
		if l := list(t, env, key); len(l) != 1 || l[0].ID != bare.ID {
			t.Fatalf("list after delete %+v", l)
		}
	})
}

func TestSloListOrder(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		var ids []string
		for i := range 3 {
			ids = append(ids, create(t, env, key, body(fmt.Sprintf("s%d", 2-i))).ID)
			env.Clock.Advance(time.Minute)
		}
		l := list(t, env, key)
		if len(l) != 3 || l[0].ID != ids[0] || l[1].ID != ids[1] || l[2].ID != ids[2] {
			t.Fatalf("list %+v, want %v", l, ids)
		}
	})
}

func TestBatchExecuteAtomic(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		a := create(t, env, key, body("a"))
		b := create(t, env, key, body("b"))
		foreign := create(t, env, otherKey, body("foreign"))
		snapshot := listRaw(t, env, key)
		aJSON, bJSON := apitest.JSONOf(t, get(t, env, key, a.ID)), apitest.JSONOf(t, get(t, env, key, b.ID))
		unchanged := func(label string) {
			t.Helper()
			if got := listRaw(t, env, key); got != snapshot {
				t.Fatalf("%s: list changed:\n%s\nwas\n%s", label, got, snapshot)
			}
			if apitest.JSONOf(t, get(t, env, key, a.ID)) != aJSON || apitest.JSONOf(t, get(t, env, key, b.ID)) != bJSON {
				t.Fatalf("%s: an SLO changed", label)
			}
		}
		cases := []struct {
			label    string
			requests []any
			status   int
			frags    []string
		}{
			{"unknown delete last", []any{createReq(body("new")), replaceReq(body("a2", withID(a.ID))), deleteReq(missingID)},
				404, []string{"requests[2].deleteSloRequest.id: no SLO", missingID}},
			{"decoder failure in the middle", []any{createReq(body("new")), replaceReq(body("a2", withID(a.ID),
				func(m map[string]any) { m["targetThresholdPercentage"] = 0 })), deleteReq(b.ID)},
				400, []string{"requests[1].replaceSloRequest.slo.targetThresholdPercentage: must be greater than 0"}},
			{"rule failure in the middle", []any{createReq(body("new")), replaceReq(body("a2", withID(a.ID),
				func(m map[string]any) { m["sloTimeFrame"] = "SLO_TIME_FRAME_UNSPECIFIED" })), deleteReq(b.ID)},
				400, []string{"requests[1].replaceSloRequest.slo.sloTimeFrame: must be one of"}},
			{"invalid PromQL last", []any{deleteReq(b.ID), replaceReq(body("a2", withID(a.ID))), createReq(body("new",
				func(m map[string]any) {
					m["requestBasedMetricSli"].(map[string]any)["goodEvents"] = map[string]any{"query": "sum(rate(x[5m])"}
				}))},
				400, []string{"requests[2].createSloRequest.slo.requestBasedMetricSli.goodEvents.query: not valid PromQL"}},
			{"delete twice", []any{deleteReq(b.ID), deleteReq(b.ID)}, 404, []string{"requests[1].deleteSloRequest.id: no SLO", b.ID}},
			{"replace after delete", []any{deleteReq(a.ID), replaceReq(body("a2", withID(a.ID)))},
				404, []string{"requests[1].replaceSloRequest.slo.id: no SLO", a.ID}},
			{"another team's SLO", []any{replaceReq(body("a2", withID(a.ID))), replaceReq(body("f", withID(foreign.ID)))},
				404, []string{"requests[1].replaceSloRequest.slo.id: no SLO", foreign.ID}},
			{"replace without id", []any{deleteReq(b.ID), replaceReq(body("a2"))}, 400, []string{"requests[1].replaceSloRequest.slo.id: required"}},
			{"no alternative", []any{deleteReq(b.ID), map[string]any{}}, 400, []string{"requests[1]: must set exactly one of", "(got 0)"}},
			{"two alternatives", []any{map[string]any{"createSloRequest": map[string]any{"slo": body("n")}, "deleteSloRequest": map[string]any{"id": b.ID}}},
				400, []string{"requests[0]: must set exactly one of", "(got 2)"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, execute(t, env, key, c.requests...), c.status, c.frags...)
			unchanged(c.label)
		}
		if g := get(t, env, otherKey, foreign.ID); g.Name != "foreign" || g.Revision.Revision != 1 {
			t.Fatalf("foreign SLO changed %+v", g)
		}
	})
}

func TestBatchExecuteSuccess(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, body("a"))
		b := create(t, env, key, body("b"))
		env.Clock.Advance(time.Minute)
		res := execute(t, env, key,
			createReq(body("x", func(m map[string]any) { m["id"] = a.ID })),
			replaceReq(body("a2", withID(a.ID))),
			deleteReq(b.ID),
			replaceReq(body("a3", withID(a.ID), windowSli)),
			createReq(body("y", windowSli)))
		raw := apitest.Decode[struct {
			MatchingResponses []map[string]json.RawMessage
			Status            json.RawMessage
		}](t, res)
		if string(raw.Status) != `{"statusCode":"OK","details":{},"message":""}` {
			t.Fatalf("status %s", raw.Status)
		}
		wantKeys := []string{"createSloResponse", "replaceSloResponse", "deleteSloResponse", "replaceSloResponse", "createSloResponse"}
		if len(raw.MatchingResponses) != len(wantKeys) {
			t.Fatalf("responses %s", res.Body)
		}
		for i, r := range raw.MatchingResponses {
			if _, ok := r[wantKeys[i]]; !ok || len(r) != 1 {
				t.Fatalf("response %d %v, want only %s", i, r, wantKeys[i])
			}
		}
		var x, a2, a3, y struct{ Slo slo }
		for i, dst := range map[int]*struct{ Slo slo }{0: &x, 1: &a2, 3: &a3, 4: &y} {
			if err := json.Unmarshal(raw.MatchingResponses[i][wantKeys[i]], dst); err != nil {
				t.Fatal(err)
			}
		}
		if string(raw.MatchingResponses[2]["deleteSloResponse"]) != `{"effectedSloAlertIds":[]}` {
			t.Fatalf("delete response %s", raw.MatchingResponses[2]["deleteSloResponse"])
		}
		if x.Slo.ID == a.ID || !lowerUUID.MatchString(x.Slo.ID) || x.Slo.Name != "x" || x.Slo.Revision.Revision != 1 || x.Slo.Creator == "" || x.Slo.Creator != a.Creator {
			t.Fatalf("created x %+v", x.Slo)
		}
		if a2.Slo.Name != "a2" || a2.Slo.Revision.Revision != 2 || a3.Slo.Name != "a3" || a3.Slo.Revision.Revision != 3 ||
			a3.Slo.SloType != "SLO_TYPE_WINDOW" || a3.Slo.CreateTime != a.CreateTime || a3.Slo.UpdateTime == a.UpdateTime {
			t.Fatalf("replaced %+v %+v", a2.Slo, a3.Slo)
		}
		if y.Slo.Name != "y" || y.Slo.SloType != "SLO_TYPE_WINDOW" || y.Slo.Type != "window" {
			t.Fatalf("created y %+v", y.Slo)
		}
		// x and y were created at the same instant, so the list orders them by id.
		first, second := x.Slo, y.Slo
		if first.ID > second.ID {
			first, second = second, first
		}
		l := list(t, env, key)
		if len(l) != 3 || apitest.JSONOf(t, l[0]) != apitest.JSONOf(t, a3.Slo) || apitest.JSONOf(t, l[1]) != apitest.JSONOf(t, first) || apitest.JSONOf(t, l[2]) != apitest.JSONOf(t, second) {
			t.Fatalf("list %+v", l)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, slosPath+"/"+b.ID, key, ""), 404, b.ID)
	})
}

func TestBatchExecuteBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		// An empty batch (the public document's minimum) changes nothing and answers OK.
		if res := execute(t, env, key); res.Status != http.StatusOK ||
			string(res.Body) != `{"matchingResponses":[],"status":{"statusCode":"OK","details":{},"message":""}}` {
			t.Fatalf("empty batch: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, `{}`), 400, "requests: is required")
		many := func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = createReq(body(fmt.Sprintf("s%04d", i)))
			}
			return out
		}
		apitest.ExpectError(t, execute(t, env, key, many(1001)...), 400, "requests: must have at most 1000 items")
		if l := list(t, env, key); len(l) != 0 {
			t.Fatalf("list after refused batch has %d", len(l))
		}
		one := apitest.Decode[struct{ MatchingResponses []any }](t, execute(t, env, key, many(1)...))
		if len(one.MatchingResponses) != 1 {
			t.Fatalf("one: %d responses", len(one.MatchingResponses))
		}
		full := apitest.Decode[struct {
			MatchingResponses []struct{ CreateSloResponse struct{ Slo slo } }
		}](t, execute(t, env, key, many(1000)...))
		if len(full.MatchingResponses) != 1000 || full.MatchingResponses[999].CreateSloResponse.Slo.Name != "s0999" {
			t.Fatalf("full: %d responses", len(full.MatchingResponses))
		}
		if l := list(t, env, key); len(l) != 1001 {
			t.Fatalf("list has %d, want 1001", len(l))
		}
	})
}

func batchGetPath(ids ...string) string { return batchGetAt(batchGet, ids...) }

func batchGetAt(base string, ids ...string) string {
	q := url.Values{"ids": ids}
	return base + "?" + q.Encode()
}

// E15 answers the same at its seed path and at its public path.
func TestBatchGet(t *testing.T) {
	for _, base := range []string{batchGet, batchGetList} {
		t.Run(base, func(t *testing.T) { testBatchGet(t, base) })
	}
}

func testBatchGet(t *testing.T, base string) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "globex")
		a := create(t, env, key, body("a"))
		b := create(t, env, key, body("b"))
		foreign := create(t, env, otherKey, body("foreign"))
		id36 := strings.Repeat("z", 36)
		got := apitest.Decode[struct {
			Slos        []slo
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchGetAt(base, b.ID, missingID, a.ID, b.ID, foreign.ID, "x", missingID, id36), key, ""))
		if len(got.Slos) != 2 || apitest.JSONOf(t, got.Slos[0]) != apitest.JSONOf(t, b) || apitest.JSONOf(t, got.Slos[1]) != apitest.JSONOf(t, a) {
			t.Fatalf("slos %+v", got.Slos)
		}
		if apitest.JSONOf(t, got.NotFoundIds) != apitest.JSONOf(t, []string{missingID, foreign.ID, "x", id36}) {
			t.Fatalf("notFoundIds %v", got.NotFoundIds)
		}
		// Nothing found: both arrays present.
		res := env.JSON(t, http.MethodGet, batchGetAt(base, "x"), key, "")
		if res.Status != http.StatusOK || string(res.Body) != `{"slos":[],"notFoundIds":["x"]}` {
			t.Fatalf("none found %d %s", res.Status, res.Body)
		}
		// Bounds: 0–1000 ids of 1–36 characters; no ids answers two empty lists.
		if res := env.JSON(t, http.MethodGet, base, key, ""); res.Status != http.StatusOK || string(res.Body) != `{"slos":[],"notFoundIds":[]}` {
			t.Fatalf("no ids: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, batchGetAt(base, ""), key, ""), 400, "ids")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, batchGetAt(base, a.ID, id36+"z"), key, ""), 400, "ids", "36")
		ids := make([]string, 1001)
		for i := range ids {
			ids[i] = fmt.Sprintf("id-%d", i)
		}
		ids[999] = a.ID
		thousand := apitest.Decode[struct {
			Slos        []slo
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchGetAt(base, ids[:1000]...), key, ""))
		if len(thousand.Slos) != 1 || thousand.Slos[0].ID != a.ID || len(thousand.NotFoundIds) != 999 || thousand.NotFoundIds[998] != "id-998" {
			t.Fatalf("1000 ids: %d found, %d not", len(thousand.Slos), len(thousand.NotFoundIds))
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, batchGetAt(base, ids...), key, ""), 400, "ids", "1000")
	})
}

func TestSloBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		set := func(k string, v any) func(m map[string]any) { return func(m map[string]any) { m[k] = v } }
		drop := func(k string) func(m map[string]any) { return func(m map[string]any) { delete(m, k) } }
		sli := func(k string, v any) func(m map[string]any) {
			return func(m map[string]any) { m["requestBasedMetricSli"].(map[string]any)[k] = v }
		}
		win := func(k string, v any) func(m map[string]any) {
			return func(m map[string]any) {
				windowSli(m)
				w := m["windowBasedMetricSli"].(map[string]any)
				if v == nil {
					delete(w, k)
				} else {
					w[k] = v
				}
			}
		}
		labels := func(n int) map[string]string {
			out := map[string]string{}
			for i := range n {
				out[fmt.Sprintf("l%d", i)] = "v"
			}
			return out
		}
		grouping := func(n int) map[string]any {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("g%d", i)
			}
			return map[string]any{"labels": out}
		}
		longMetric := func(n int) string { return strings.Repeat("a", n) }
		accepted := []struct {
			label string
			mod   func(m map[string]any)
		}{
			{"name 1", set("name", "n")},
			{"name 255", set("name", strings.Repeat("é", 255))},
			{"description 4096", set("description", strings.Repeat("é", 4096))},
			{"threshold 0.001", set("targetThresholdPercentage", 0.001)},
			{"threshold 100", set("targetThresholdPercentage", 100)},
			{"grouping 10", set("grouping", grouping(10))},
			{"grouping label 63", set("grouping", map[string]any{"labels": []string{strings.Repeat("g", 63)}})},
			{"labels 64", set("labels", labels(64))},
			{"label key 63, value 255", set("labels", map[string]string{strings.Repeat("k", 63): strings.Repeat("é", 255)})},
			{"query 10000", sli("goodEvents", map[string]any{"query": longMetric(10000)})},
			{"sloType matches", set("sloType", "SLO_TYPE_REQUEST")},
			{"type matches", set("type", "request")},
			{"productType APM", set("productType", "SLO_PRODUCT_TYPE_APM")},
			{"window, missing data BAD", win("missingDataStrategy", "MISSING_DATA_STRATEGY_BAD")},
			{"silly id on create", set("id", strings.Repeat("q", 36))},
		}
		for _, a := range accepted {
			s := create(t, env, key, body("ok", a.mod))
			if s.Revision.Revision != 1 {
				t.Fatalf("%s: %+v", a.label, s)
			}
		}
		refused := []struct {
			label string
			mod   func(m map[string]any)
			frags []string
		}{
			{"name missing", drop("name"), []string{"name: is required"}},
			{"name empty", set("name", ""), []string{"name: must have at least 1 character"}},
			{"name 256", set("name", strings.Repeat("é", 256)), []string{"name: must have at most 255 characters"}},
			{"description 4097", set("description", strings.Repeat("é", 4097)), []string{"description: must have at most 4096 characters"}},
			{"threshold missing", drop("targetThresholdPercentage"), []string{"targetThresholdPercentage: is required"}},
			{"threshold 0", set("targetThresholdPercentage", 0), []string{"targetThresholdPercentage: must be greater than 0 (got 0)"}},
			{"threshold negative", set("targetThresholdPercentage", -1), []string{"targetThresholdPercentage: must be at least 0 (got -1)"}},
			{"threshold 100.0001", set("targetThresholdPercentage", 100.0001), []string{"targetThresholdPercentage: must be at most 100 (got 100.0001)"}},
			{"grouping 11", set("grouping", grouping(11)), []string{"grouping.labels: must have at most 10 items"}},
			{"grouping label 64", set("grouping", map[string]any{"labels": []string{strings.Repeat("g", 64)}}), []string{"grouping.labels[0]: must have at most 63 characters"}},
			{"grouping label invalid", set("grouping", map[string]any{"labels": []string{"ok", "1bad"}}), []string{"grouping.labels[1]: must match the pattern"}},
			{"grouping label empty", set("grouping", map[string]any{"labels": []string{""}}), []string{"grouping.labels[0]: must have at least 1 character"}},
			{"grouping duplicate", set("grouping", map[string]any{"labels": []string{"a", "b", "a"}}), []string{"grouping.labels[2]: \"a\" repeats item 0"}},
			{"labels 65", set("labels", labels(65)), []string{"labels: must have at most 64 entries (got 65)"}},
			{"label key 64", set("labels", map[string]string{strings.Repeat("k", 64): "v"}), []string{"labels: key", "1 to 63 characters (got 64)"}},
			{"label key empty", set("labels", map[string]string{"": "v"}), []string{"labels: key \"\"", "(got 0)"}},
			{"label key invalid", set("labels", map[string]string{"a-b": "v"}), []string{"labels: key \"a-b\" is not a Prometheus label name"}},
			{"label value 256", set("labels", map[string]string{"k": strings.Repeat("é", 256)}), []string{"labels.k: must have at most 255 characters"}},
			{"no SLI", drop("requestBasedMetricSli"), []string{"requestBasedMetricSli: an SLI is required"}},
			{"two SLIs", func(m map[string]any) {
				r := m["requestBasedMetricSli"]
				windowSli(m)
				m["requestBasedMetricSli"] = r
			}, []string{"windowBasedMetricSli: only one SLI may be set"}},
			{"apmSli beside a metric SLI", set("apmSli", map[string]any{"services": []string{"x"}, "errorConfig": map[string]any{}}), []string{"apmSli: only one SLI may be set"}},
			{"good query missing", sli("goodEvents", map[string]any{}), []string{"requestBasedMetricSli.goodEvents.query: is required"}},
			{"good query empty", sli("goodEvents", map[string]any{"query": ""}), []string{"requestBasedMetricSli.goodEvents.query: must have at least 1 character"}},
			{"good query 10001", sli("goodEvents", map[string]any{"query": longMetric(10001)}), []string{"requestBasedMetricSli.goodEvents.query: must have at most 10000 characters"}},
			{"good query invalid", sli("goodEvents", map[string]any{"query": "rate(x[5m]"}), []string{"requestBasedMetricSli.goodEvents.query: not valid PromQL"}},
			{"total query invalid", sli("totalEvents", map[string]any{"query": "sum by (a b)"}), []string{"requestBasedMetricSli.totalEvents.query: not valid PromQL"}},
			{"total missing", func(m map[string]any) { delete(m["requestBasedMetricSli"].(map[string]any), "totalEvents") }, []string{"requestBasedMetricSli.totalEvents: is required"}},
			{"window query invalid", win("query", map[string]any{"query": "avg(up"}), []string{"windowBasedMetricSli.query.query: not valid PromQL"}},
			{"window missing", win("window", nil), []string{"windowBasedMetricSli.window: is required"}},
			{"window unspecified", win("window", "WINDOW_SLO_WINDOW_UNSPECIFIED"), []string{"windowBasedMetricSli.window: must be WINDOW_SLO_WINDOW_1_MINUTE"}},
			{"window unknown", win("window", "WINDOW_SLO_WINDOW_1_HOUR"), []string{"windowBasedMetricSli.window"}},
			{"operator missing", win("comparisonOperator", nil), []string{"windowBasedMetricSli.comparisonOperator: is required"}},
			{"operator unspecified", win("comparisonOperator", "COMPARISON_OPERATOR_UNSPECIFIED"), []string{"windowBasedMetricSli.comparisonOperator: must be one of"}},
			{"threshold missing (window)", win("threshold", nil), []string{"windowBasedMetricSli.threshold: is required"}},
			{"window query missing", win("query", nil), []string{"windowBasedMetricSli.query: is required"}},
			{"time frame missing", drop("sloTimeFrame"), []string{"sloTimeFrame: is required"}},
			{"time frame unspecified", set("sloTimeFrame", "SLO_TIME_FRAME_UNSPECIFIED"), []string{"sloTimeFrame: must be one of SLO_TIME_FRAME_7_DAYS"}},
			{"time frame unknown", set("sloTimeFrame", "SLO_TIME_FRAME_1_DAY"), []string{"sloTimeFrame"}},
			{"sloType mismatch", set("sloType", "SLO_TYPE_WINDOW"), []string{"sloType: SLO_TYPE_WINDOW does not match the SLI"}},
			{"type mismatch", set("type", "window"), []string{"type: \"window\" does not match the SLI"}},
			{"sloType mismatch (window)", func(m map[string]any) { windowSli(m); m["sloType"] = "SLO_TYPE_REQUEST" }, []string{"sloType: SLO_TYPE_REQUEST does not match"}},
			{"productType unknown", set("productType", "SLO_PRODUCT_TYPE_RUM"), []string{"productType"}},
			{"id 37 on create", set("id", strings.Repeat("q", 37)), []string{"id: must have at most 36 characters"}},
		}
		for _, r := range refused {
			res := env.JSON(t, http.MethodPost, slosPath, key, apitest.JSONOf(t, body("bad", r.mod)))
			if res.Status != http.StatusBadRequest {
				t.Fatalf("%s: status %d %s", r.label, res.Status, res.Body)
			}
			apitest.ExpectError(t, res, 400, r.frags...)
			// The same failure inside a batch names the request.
			apitest.ExpectError(t, execute(t, env, key, createReq(body("ok")), createReq(body("bad", r.mod))), 400,
				"requests[1].createSloRequest.slo."+r.frags[0])
		}
		if l := list(t, env, key); len(l) != len(accepted) {
			t.Fatalf("list has %d, want %d", len(l), len(accepted))
		}
		// Replace and path ids: 36 characters is an unknown id (404), 37 a 400.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, body("x", withID(strings.Repeat("q", 36))))), 404, "id: no SLO")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, body("x", withID(strings.Repeat("q", 37))))), 400, "id: must have at most 36 characters")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, slosPath+"/"+strings.Repeat("q", 36), key, ""), 404, "id: no SLO")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, slosPath+"/"+strings.Repeat("q", 37), key, ""), 400, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, slosPath+"/"+strings.Repeat("q", 37), key, ""), 400, "id")
		apitest.ExpectError(t, execute(t, env, key, deleteReq(strings.Repeat("q", 36))), 404, "requests[0].deleteSloRequest.id: no SLO")
		apitest.ExpectError(t, execute(t, env, key, deleteReq(strings.Repeat("q", 37))), 400, "requests[0].deleteSloRequest.id: must have at most 36 characters")
		apitest.ExpectError(t, execute(t, env, key, deleteReq("")), 400, "requests[0].deleteSloRequest.id: must have at least 1 character")
	})
}

func TestSloAuth(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, team := env.MustTeam(t, "acme")
		s := create(t, env, team, body("a"))
		reader := env.MustKey(t, team, "slo:ReadConfig")
		writer := env.MustKey(t, team, "slo:UpdateConfig")
		readOnly := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", team,
			`{"name":"ro","keyPermissions":{"presets":["read-only"]}}`)).Value
		preset := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", team,
			`{"name":"slo preset","keyPermissions":{"presets":["slos"]}}`)).Value
		reads := []struct{ method, path, body string }{
			{http.MethodGet, slosPath, ""},
			{http.MethodGet, slosPath + "/" + s.ID, ""},
			{http.MethodGet, batchGetPath(s.ID), ""},
			{http.MethodGet, batchGetAt(batchGetList, s.ID), ""},
			{http.MethodGet, zeroStatePath, ""},
		}
		writes := []struct{ method, path, body string }{
			{http.MethodPost, slosPath, apitest.JSONOf(t, body("b"))},
			{http.MethodPut, slosPath, apitest.JSONOf(t, body("a", withID(s.ID)))},
			{http.MethodPut, validatedPath, apitest.JSONOf(t, body("a", withID(s.ID)))},
			{http.MethodPost, executePath, apitest.JSONOf(t, map[string]any{"requests": []any{replaceReq(body("a", withID(s.ID)))}})},
			{http.MethodDelete, slosPath + "/" + s.ID, ""},
		}
		for _, op := range append(append([]struct{ method, path, body string }{}, reads...), writes...) {
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "", "application/json", op.body), 401)
			apitest.ExpectError(t, env.Do(t, op.method, op.path, "Bearer nope", "application/json", op.body), 401)
		}
		for _, op := range reads {
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, writer, op.body), 403, "slo:ReadConfig")
			for _, k := range []string{reader, readOnly, preset} {
				if res := env.JSON(t, op.method, op.path, k, op.body); res.Status != http.StatusOK {
					t.Fatalf("%s %s: %d %s", op.method, op.path, res.Status, res.Body)
				}
			}
		}
		for _, op := range writes {
			for _, k := range []string{reader, readOnly} {
				apitest.ExpectError(t, env.JSON(t, op.method, op.path, k, op.body), 403, "slo:UpdateConfig")
			}
		}
		for _, op := range writes {
			if res := env.JSON(t, op.method, op.path, preset, op.body); res.Status != http.StatusOK {
				t.Fatalf("%s %s: %d %s", op.method, op.path, res.Status, res.Body)
			}
		}
	})
}

func TestSloTeamIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, acme := env.MustTeam(t, "acme")
		_, globex := env.MustTeam(t, "globex")
		s := create(t, env, acme, body("a"))
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, slosPath+"/"+s.ID, globex, ""), 404, s.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, slosPath, globex, apitest.JSONOf(t, body("x", withID(s.ID)))), 404, s.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, slosPath+"/"+s.ID, globex, ""), 404, s.ID)
		apitest.ExpectError(t, execute(t, env, globex, deleteReq(s.ID)), 404, "requests[0].deleteSloRequest.id", s.ID)
		if l := list(t, env, globex); len(l) != 0 {
			t.Fatalf("globex lists %+v", l)
		}
		if g := get(t, env, acme, s.ID); apitest.JSONOf(t, g) != apitest.JSONOf(t, s) {
			t.Fatalf("acme's SLO changed %+v", g)
		}
	})
}

// Ids are lowercase UUIDs, and every lookup matches their hex digits in either case: get, batch
// get, replace (which answers the stored, lowercase id), batch delete and delete.
func TestSloIDsMatchInEitherCase(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, body("a"))
		b := create(t, env, key, body("b"))
		upA, upB := strings.ToUpper(a.ID), strings.ToUpper(b.ID)
		if upA == a.ID || a.ID != strings.ToLower(a.ID) {
			t.Fatalf("id %q is not a lowercase UUID", a.ID)
		}
		if got := get(t, env, key, upA); got.ID != a.ID || got.Name != "a" {
			t.Fatalf("get by %s: %+v", upA, got)
		}
		found := apitest.Decode[struct {
			Slos        []slo
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchGetPath(upA, a.ID, missingID), key, ""))
		if len(found.Slos) != 1 || found.Slos[0].ID != a.ID || apitest.JSONOf(t, found.NotFoundIds) != apitest.JSONOf(t, []string{missingID}) {
			t.Fatalf("batch get: %+v", found)
		}
		replaced := apitest.Decode[struct{ Slo slo }](t, env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, body("a2", withID(upA))))).Slo
		if replaced.ID != a.ID || replaced.Name != "a2" || replaced.Revision.Revision != 2 {
			t.Fatalf("replace by %s: %+v", upA, replaced)
		}
		for _, res := range []apitest.Response{
			env.JSON(t, http.MethodPost, executePath, key, `{"requests":[{"deleteSloRequest":{"id":"`+upB+`"}}]}`),
			env.JSON(t, http.MethodDelete, slosPath+"/"+upA, key, ""),
		} {
			if res.Status != http.StatusOK {
				t.Fatalf("delete by upper-case id: %d %s", res.Status, res.Body)
			}
		}
		if left := list(t, env, key); len(left) != 0 {
			t.Fatalf("left after deletes: %+v", left)
		}
	})
}

// Concurrent replaces of one SLO, single and batched, each count the revision up exactly once:
// no two answers carry the same revision and the last one is 1 + the number of replaces.
func TestConcurrentReplacesCountEveryRevision(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		s := create(t, env, key, body("busy"))
		const writers = 16
		revisions := make(chan int, writers)
		failures := make(chan string, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := body(fmt.Sprintf("busy-%d", i), withID(s.ID))
				if i%2 == 0 {
					res := env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, b))
					if res.Status != http.StatusOK {
						failures <- fmt.Sprintf("replace %d: %d %s", i, res.Status, res.Body)
						return
					}
					var got struct{ Slo slo }
					if err := json.Unmarshal(res.Body, &got); err != nil {
						failures <- err.Error()
						return
					}
					revisions <- got.Slo.Revision.Revision
					return
				}
				res := env.JSON(t, http.MethodPost, executePath, key,
					apitest.JSONOf(t, map[string]any{"requests": []any{map[string]any{"replaceSloRequest": map[string]any{"slo": b}}}}))
				if res.Status != http.StatusOK {
					failures <- fmt.Sprintf("batch replace %d: %d %s", i, res.Status, res.Body)
					return
				}
				var got struct {
					MatchingResponses []struct {
						ReplaceSloResponse struct{ Slo slo }
					}
				}
				if err := json.Unmarshal(res.Body, &got); err != nil || len(got.MatchingResponses) != 1 {
					failures <- fmt.Sprintf("batch answer %s", res.Body)
					return
				}
				revisions <- got.MatchingResponses[0].ReplaceSloResponse.Slo.Revision.Revision
			}()
		}
		wg.Wait()
		close(revisions)
		close(failures)
		for f := range failures {
			t.Error(f)
		}
		seen := map[int]bool{}
		for r := range revisions {
			if seen[r] || r < 2 || r > writers+1 {
				t.Errorf("revision %d answered twice or out of 2..%d", r, writers+1)
			}
			seen[r] = true
		}
		if len(seen) != writers {
			t.Fatalf("%d distinct revisions, want %d", len(seen), writers)
		}
		if got := get(t, env, key, s.ID); got.Revision.Revision != writers+1 {
			t.Fatalf("final revision %d, want %d", got.Revision.Revision, writers+1)
		}
	})
}
