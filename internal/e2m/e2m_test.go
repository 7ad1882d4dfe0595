package e2m_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/e2m"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

const (
	rulesPath   = "/mgmt/openapi/5/events2metrics/events2metrics/v2"
	executePath = rulesPath + "/all/execute"
)

type aggregation struct {
	Enabled          *bool
	TargetMetricName string
	AggType          string
	None             *struct{}
	Histogram        *struct{ Buckets []float64 }
	Samples          *struct{ SampleType string }
}

type rule struct {
	ID                string
	Name              string
	Description       *string
	DataSource        *string
	Type              string
	IsInternal        *bool
	CreateTime        string
	UpdateTime        string
	PermutationsLimit *int
	Permutations      *struct {
		HasExceededLimit bool
		Limit            int
	}
	LogsQuery *struct {
		Alias, Lucene                                                 string
		ApplicationnameFilters, SubsystemnameFilters, SeverityFilters []string
	}
	SpansQuery *struct {
		Lucene                                                                      string
		ApplicationnameFilters, SubsystemnameFilters, ServiceFilters, ActionFilters []string
	}
	MetricFields []struct {
		SourceField, TargetBaseMetricName string
		Aggregations                      []aggregation
	}
	MetricLabels []struct{ SourceField, TargetLabel string }
}

type envelope struct{ E2M rule }

type batchAnswer struct {
	MatchingResponses []struct {
		Created  *envelope
		Replaced *envelope
		Deleted  *struct{ ID string }
	}
}

// logsBody is a minimal logs rule named name, with extra fields (each starting with a comma).
func logsBody(name, extra string) string {
	return `{"name":` + asJSONString(name) + `,"type":"E2M_TYPE_LOGS2METRICS","logsQuery":{"lucene":"level:error"}` + extra + `}`
}

// logsWith is a logs rule named name with the given logsQuery object.
func logsWith(name, query string) string {
	return `{"name":` + asJSONString(name) + `,"type":"E2M_TYPE_LOGS2METRICS","logsQuery":` + query + `}`
}

func asJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func create(t *testing.T, env *apitest.Env, key, body string) rule {
	t.Helper()
	return apitest.Decode[envelope](t, env.JSON(t, http.MethodPost, rulesPath, key, body)).E2M
}

func get(t *testing.T, env *apitest.Env, key, id string) rule {
	t.Helper()
	return apitest.Decode[envelope](t, env.JSON(t, http.MethodGet, rulesPath+"/"+id, key, "")).E2M
}

func list(t *testing.T, env *apitest.Env, key string) []rule {
	t.Helper()
	return apitest.Decode[struct{ E2M []rule }](t, env.JSON(t, http.MethodGet, rulesPath, key, "")).E2M
}

func names(rs []rule) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

func batch(requests ...string) string { return `{"requests":[` + strings.Join(requests, ",") + `]}` }

func createReq(body string) string { return `{"create":{"e2m":` + body + `}}` }

func replaceReq(body string) string { return `{"replace":{"e2m":` + body + `}}` }

func deleteReq(id string) string { return `{"delete":{"id":"` + id + `"}}` }

// replaceBody is a minimal logs rule body for a replace of id.
func replaceBody(id, name, extra string) string {
	return `{"id":"` + id + `","name":` + asJSONString(name) + `,"type":"E2M_TYPE_LOGS2METRICS","logsQuery":{}` + extra + `}`
}

const fullLogsRule = `{
	"name": "catalog latency",
	"description": "latency of the catalog service",
	"dataSource": "my_namespace/my.dataset-1",
	"type": "E2M_TYPE_LOGS2METRICS",
	"logsQuery": {"alias": "q", "lucene": "log_obj.ms:[50 TO 100]", "applicationnameFilters": ["shop", ""],
		"subsystemnameFilters": ["catalog"], "severityFilters": ["SEVERITY_ERROR", "SEVERITY_CRITICAL"]},
	"metricFields": [{"sourceField": "log_obj.ms", "targetBaseMetricName": "catalog_ms", "aggregations": [
		{"none": {}, "aggType": "AGG_TYPE_AVG"},
		{"histogram": {"buckets": [0.5, 1, 2.25]}, "enabled": false},
		{"samples": {"sampleType": "SAMPLE_TYPE_MAX"}, "targetMetricName": "slowest_ms"}
	]}],
	"metricLabels": [{"sourceField": "log_obj.region", "targetLabel": "region"}]
}`

func TestRoundTripAndDefaults(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		res := env.JSON(t, http.MethodPost, rulesPath, key, fullLogsRule)
		if strings.Contains(string(res.Body), "permutationsLimit") {
			t.Fatalf("answer carries permutationsLimit: %s", res.Body)
		}
		r := apitest.Decode[envelope](t, res).E2M
		if len(r.ID) != 36 || r.ID != strings.ToLower(r.ID) {
			t.Fatalf("id %q", r.ID)
		}
		if r.Name != "catalog latency" || *r.Description != "latency of the catalog service" || *r.DataSource != "my_namespace/my.dataset-1" ||
			r.Type != "E2M_TYPE_LOGS2METRICS" || r.IsInternal == nil || *r.IsInternal || r.SpansQuery != nil {
			t.Fatalf("created %+v", r)
		}
		if r.CreateTime == "" || r.CreateTime != r.UpdateTime {
			t.Fatalf("times %q %q", r.CreateTime, r.UpdateTime)
		}
		if r.Permutations == nil || r.Permutations.HasExceededLimit || r.Permutations.Limit != 30000 || r.PermutationsLimit != nil {
			t.Fatalf("permutations %+v", r.Permutations)
		}
		q := r.LogsQuery
		if q.Alias != "q" || q.Lucene != "log_obj.ms:[50 TO 100]" || apitest.JSONOf(t, q.ApplicationnameFilters) != `["shop",""]` ||
			apitest.JSONOf(t, q.SubsystemnameFilters) != `["catalog"]` || apitest.JSONOf(t, q.SeverityFilters) != `["SEVERITY_ERROR","SEVERITY_CRITICAL"]` {
			t.Fatalf("logsQuery %+v", q)
		}
		wantFields := `[{"SourceField":"log_obj.ms","TargetBaseMetricName":"catalog_ms","Aggregations":[` +
			`{"Enabled":true,"TargetMetricName":"catalog_ms_avg","AggType":"AGG_TYPE_AVG","None":{},"Histogram":null,"Samples":null},` +
			`{"Enabled":false,"TargetMetricName":"catalog_ms_histogram","AggType":"AGG_TYPE_HISTOGRAM","None":null,"Histogram":{"Buckets":[0.5,1,2.25]},"Samples":null},` +
			`{"Enabled":true,"TargetMetricName":"slowest_ms","AggType":"AGG_TYPE_SAMPLES","None":null,"Histogram":null,"Samples":{"SampleType":"SAMPLE_TYPE_MAX"}},` +
			// the set completed as the real service answers it (TestAggregationsCompleted)
			`{"Enabled":true,"TargetMetricName":"cx_count","AggType":"AGG_TYPE_COUNT","None":{},"Histogram":null,"Samples":null},` +
			`{"Enabled":true,"TargetMetricName":"cx_sum","AggType":"AGG_TYPE_SUM","None":{},"Histogram":null,"Samples":null},` +
			`{"Enabled":true,"TargetMetricName":"cx_min","AggType":"AGG_TYPE_MIN","None":{},"Histogram":null,"Samples":null},` +
			`{"Enabled":true,"TargetMetricName":"cx_max","AggType":"AGG_TYPE_MAX","None":{},"Histogram":null,"Samples":null}]}]`
		if got := apitest.JSONOf(t, r.MetricFields); got != wantFields {
			t.Fatalf("metricFields\n got %s\nwant %s", got, wantFields)
		}
		if apitest.JSONOf(t, r.MetricLabels) != `[{"SourceField":"log_obj.region","TargetLabel":"region"}]` {
			t.Fatalf("metricLabels %+v", r.MetricLabels)
		}

		// A minimal spans rule: empty field and label lists are answered, nothing else is invented.
		res = env.JSON(t, http.MethodPost, rulesPath, key,
			`{"name":"spans","type":"E2M_TYPE_SPANS2METRICS","spansQuery":{"serviceFilters":["api"]},"permutationsLimit":12}`)
		s := apitest.Decode[envelope](t, res).E2M
		if !strings.Contains(string(res.Body), `"metricFields":[]`) || !strings.Contains(string(res.Body), `"metricLabels":[]`) {
			t.Fatalf("empty lists not answered: %s", res.Body)
		}
		if s.Description != nil || s.DataSource != nil || s.LogsQuery != nil || s.SpansQuery.Lucene != "" ||
			apitest.JSONOf(t, s.SpansQuery.ServiceFilters) != `["api"]` || s.SpansQuery.ActionFilters != nil || s.Permutations.Limit != 12 {
			t.Fatalf("spans rule %s", res.Body)
		}

		// Get by id in either case; the list is by create time.
		if g := get(t, env, key, r.ID); apitest.JSONOf(t, g) != apitest.JSONOf(t, r) {
			t.Fatalf("get %+v", g)
		}
		if g := get(t, env, key, strings.ToUpper(r.ID)); g.ID != r.ID {
			t.Fatalf("uppercase get %+v", g)
		}
		before := list(t, env, key)
		if apitest.JSONOf(t, before) != apitest.JSONOf(t, []rule{r, s}) {
			t.Fatalf("list %+v", before)
		}
		env.Restart(t)
		if after := list(t, env, key); apitest.JSONOf(t, after) != apitest.JSONOf(t, before) {
			t.Fatalf("after restart %+v", after)
		}
	})
}

func TestReplaceE21(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		r := create(t, env, key, logsBody("first", `,"permutationsLimit":500`))
		other := create(t, env, key, logsBody("other", ""))
		env.Clock.Advance(time.Hour)
		// Uppercase id in the body; server-set fields in the body are ignored; the limit is kept.
		body := `{"id":"` + strings.ToUpper(r.ID) + `","name":"renamed","type":"E2M_TYPE_SPANS2METRICS","spansQuery":{"lucene":"x"},
			"isInternal":true,"createTime":"2001-01-01T00:00:00Z","updateTime":"2001-01-01T00:00:00Z",
			"permutations":{"hasExceededLimit":true,"limit":9}}`
		got := apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, rulesPath, key, body)).E2M
		if got.ID != r.ID || got.Name != "renamed" || got.Type != "E2M_TYPE_SPANS2METRICS" || got.LogsQuery != nil ||
			got.SpansQuery.Lucene != "x" || *got.IsInternal || got.Permutations.Limit != 500 || got.Permutations.HasExceededLimit {
			t.Fatalf("replaced %+v", got)
		}
		if got.CreateTime != r.CreateTime {
			t.Fatalf("createTime %s, want %s", got.CreateTime, r.CreateTime)
		}
		created, _ := time.Parse(time.RFC3339Nano, r.CreateTime)
		updated, _ := time.Parse(time.RFC3339Nano, got.UpdateTime)
		if d := updated.Sub(created); d < time.Hour || d > time.Hour+time.Minute {
			t.Fatalf("updateTime %s moved by %v from %s", got.UpdateTime, d, r.CreateTime)
		}
		if g := get(t, env, key, r.ID); apitest.JSONOf(t, g) != apitest.JSONOf(t, got) {
			t.Fatalf("get after replace %+v", g)
		}
		// A given limit replaces the stored one; the rule may keep its own name.
		got = apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(r.ID, "renamed", `,"permutationsLimit":700`))).E2M
		if got.Permutations.Limit != 700 || got.Name != "renamed" {
			t.Fatalf("limit %+v", got.Permutations)
		}
		// Unknown id: 404; another rule's name: 409; the list is unchanged by both.
		before := list(t, env, key)
		missing := "0f0e0d0c-0b0a-4909-8807-060504030201"
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(missing, "x", "")), 404, "id", missing)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(r.ID, "other", "")), 409, "name", `"other"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, `{"name":"x","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{}}`), 400, "id")
		if after := list(t, env, key); apitest.JSONOf(t, after) != apitest.JSONOf(t, before) || len(after) != 2 || after[1].ID != other.ID {
			t.Fatalf("list changed: %+v", after)
		}
	})
}

func TestDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, logsBody("a", ""))
		b := create(t, env, key, logsBody("b", ""))
		res := env.JSON(t, http.MethodDelete, rulesPath+"/"+strings.ToUpper(a.ID), key, "")
		if res.Status != http.StatusOK || string(res.Body) != `{"id":"`+a.ID+`"}` {
			t.Fatalf("delete %d %s", res.Status, res.Body)
		}
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			apitest.ExpectError(t, env.JSON(t, m, rulesPath+"/"+a.ID, key, ""), 404, "id: no events-to-metrics rule "+a.ID)
		}
		if l := list(t, env, key); len(l) != 1 || l[0].ID != b.ID {
			t.Fatalf("list %+v", l)
		}
		// The name is free again.
		create(t, env, key, logsBody("a", ""))
	})
}

func TestBatchMixesAllThreeInOrder(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		x := create(t, env, key, logsBody("x", ""))
		y := create(t, env, key, logsBody("y", ""))
		env.Clock.Advance(time.Minute)
		ans := apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key, batch(
			createReq(logsBody("a", `,"permutationsLimit":7`)),
			replaceReq(replaceBody(strings.ToUpper(x.ID), "x2", "")),
			deleteReq(strings.ToUpper(y.ID)),
			createReq(`{"name":"y","type":"E2M_TYPE_SPANS2METRICS","spansQuery":{}}`),
		)))
		m := ans.MatchingResponses
		if len(m) != 4 || m[0].Created == nil || m[0].Replaced != nil || m[0].Deleted != nil ||
			m[1].Replaced == nil || m[1].Created != nil || m[2].Deleted == nil || m[2].Created != nil || m[3].Created == nil {
			t.Fatalf("answers %+v", m)
		}
		a, x2, b := m[0].Created.E2M, m[1].Replaced.E2M, m[3].Created.E2M
		if a.Name != "a" || a.Permutations.Limit != 7 || len(a.ID) != 36 || x2.ID != x.ID || x2.Name != "x2" ||
			x2.CreateTime != x.CreateTime || x2.UpdateTime == x.UpdateTime || m[2].Deleted.ID != y.ID ||
			b.Name != "y" || b.ID == y.ID || b.Permutations.Limit != 30000 {
			t.Fatalf("answers %s", apitest.JSONOf(t, m))
		}
		// x2 keeps x's older create time; a and b were created at one moment, so the id orders them.
		want := []rule{x2, a, b}
		if b.ID < a.ID {
			want = []rule{x2, b, a}
		}
		l := list(t, env, key)
		if apitest.JSONOf(t, l) != apitest.JSONOf(t, want) {
			t.Fatalf("list %s", apitest.JSONOf(t, l))
		}
		// Names only need to be unique once the batch has run: a swap, and delete-then-create.
		ans = apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key, batch(
			replaceReq(replaceBody(a.ID, "x2", "")),
			replaceReq(replaceBody(x.ID, "a", "")),
			deleteReq(b.ID),
			createReq(logsBody("y", "")),
		)))
		if len(ans.MatchingResponses) != 4 || ans.MatchingResponses[0].Replaced.E2M.Name != "x2" || ans.MatchingResponses[1].Replaced.E2M.Name != "a" {
			t.Fatalf("swap %s", apitest.JSONOf(t, ans))
		}
		if n := names(list(t, env, key)); apitest.JSONOf(t, n) != `["a","x2","y"]` {
			t.Fatalf("names %v", n)
		}
		// A rule replaced and then deleted in one batch is gone.
		apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key, batch(
			replaceReq(replaceBody(a.ID, "gone", "")), deleteReq(a.ID))))
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath+"/"+a.ID, key, ""), 404, "id")
	})
}

func TestBatchIsAllOrNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		x := create(t, env, key, logsBody("x", ""))
		y := create(t, env, key, logsBody("y", ""))
		create(t, env, key, logsBody("z", ""))
		before := list(t, env, key)
		missing := "0f0e0d0c-0b0a-4909-8807-060504030201"
		prefix := []string{
			createReq(logsBody("new", "")),
			replaceReq(replaceBody(x.ID, "x renamed", "")),
			deleteReq(y.ID),
		}
		badHistogram := logsBody("h", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"m","aggregations":[
			{"none":{},"aggType":"AGG_TYPE_SUM"},{"histogram":{"buckets":[1,1]}}]}]`)
		cases := []struct {
			last   string
			status int
			frags  []string
		}{
			{replaceReq(replaceBody(missing, "z", "")), 404, []string{"requests[3].replace.e2m.id: no events-to-metrics rule " + missing}},
			{deleteReq(missing), 404, []string{"requests[3].delete.id: no events-to-metrics rule " + missing}},
			{deleteReq(y.ID), 404, []string{"requests[3].delete.id", y.ID}}, // deleted by requests[2]
			{replaceReq(replaceBody(y.ID, "z", "")), 404, []string{"requests[3].replace.e2m.id", y.ID}},
			{createReq(badHistogram), 400, []string{"requests[3].create.e2m.metricFields[0].aggregations[1].histogram.buckets[1]: must be greater"}},
			{createReq(logsBody("new", "")), 409, []string{"requests[3].create.e2m.name", `"new"`}},
			{createReq(logsBody("z", "")), 409, []string{"requests[3].create.e2m.name", `"z"`}},
			{replaceReq(replaceBody(y.ID, "z", "")), 404, []string{"requests[3].replace.e2m.id"}},
			{replaceReq(replaceBody(x.ID, "new", "")), 409, []string{"requests[3].replace.e2m.name", `"new"`}},
			{`{}`, 400, []string{"requests[3]: must hold exactly one of create, replace and delete (got 0)"}},
			{`{"create":{"e2m":` + logsBody("q", "") + `},"delete":{"id":"` + x.ID + `"}}`, 400, []string{"requests[3]: must hold exactly one", "(got 2)"}},
			{createReq(logsBody(strings.Repeat("n", 256), "")), 400, []string{"requests[3].create.e2m.name", "255"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, batch(append(prefix, c.last)...)), c.status, c.frags...)
			if after := list(t, env, key); apitest.JSONOf(t, after) != apitest.JSONOf(t, before) {
				t.Fatalf("after failing %s the list is %s", c.last, apitest.JSONOf(t, after))
			}
		}
		// Two creates of one name: the later request is named.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key,
			batch(createReq(logsBody("A", "")), createReq(logsBody("A", "")))), 409, "requests[1].create.e2m.name", `"A"`)
		if after := list(t, env, key); apitest.JSONOf(t, after) != apitest.JSONOf(t, before) {
			t.Fatalf("list changed: %s", apitest.JSONOf(t, after))
		}
	})
}

func TestNameClashes(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		a := create(t, env, key, logsBody("A", ""))
		b := create(t, env, key, logsBody("B", ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, logsBody("A", "")), 409, "name", `"A"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(b.ID, "A", "")), 409, "name", `"A"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, batch(createReq(logsBody("C", "")), createReq(logsBody("A", "")))),
			409, "requests[1].create.e2m.name")
		// Names are case-sensitive; another team has its own names.
		create(t, env, key, logsBody("a", ""))
		_, otherKey := env.MustTeam(t, "other")
		create(t, env, otherKey, logsBody("A", ""))
		if n := names(list(t, env, key)); apitest.JSONOf(t, n) != `["A","B","a"]` || a.Name != "A" {
			t.Fatalf("names %v", n)
		}

		// Eight concurrent creates of one name: exactly one wins, the others are 409.
		const n = 8
		answers := make([]apitest.Response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { answers[i] = env.JSON(t, http.MethodPost, rulesPath, key, logsBody("race", "")) })
		}
		wg.Wait()
		won := 0
		for _, res := range answers {
			switch res.Status {
			case http.StatusOK:
				won++
			case http.StatusConflict:
				apitest.ExpectError(t, res, 409, "name", `"race"`)
			default:
				t.Fatalf("create %d %s", res.Status, res.Body)
			}
		}
		if won != 1 {
			t.Fatalf("%d creates won", won)
		}
		if n := names(list(t, env, key)); apitest.JSONOf(t, n) != `["A","B","a","race"]` {
			t.Fatalf("names %v", n)
		}
	})
}

func TestBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		requests := func(n, from int) string {
			rs := make([]string, n)
			for i := range rs {
				rs[i] = createReq(logsBody(fmt.Sprintf("r%03d", from+i), ""))
			}
			return batch(rs...)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, `{"requests":[]}`), 400, "requests", "at least 1")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, requests(101, 0)), 400, "requests", "at most 100")
		if len(list(t, env, key)) != 0 {
			t.Fatal("a refused batch stored rules")
		}
		if m := apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key, requests(1, 0))).MatchingResponses; len(m) != 1 {
			t.Fatalf("%d answers", len(m))
		}
		m := apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key, requests(100, 1))).MatchingResponses
		if len(m) != 100 || m[0].Created.E2M.Name != "r001" || m[99].Created.E2M.Name != "r100" {
			t.Fatalf("%d answers", len(m))
		}
		if l := list(t, env, key); len(l) != 101 {
			t.Fatalf("%d rules", len(l))
		}

		// permutationsLimit 1–10000000 on create and replace.
		lo := create(t, env, key, logsBody("lo", `,"permutationsLimit":1`))
		hi := create(t, env, key, logsBody("hi", `,"permutationsLimit":10000000`))
		if lo.Permutations.Limit != 1 || hi.Permutations.Limit != 10000000 {
			t.Fatalf("limits %d %d", lo.Permutations.Limit, hi.Permutations.Limit)
		}
		for _, v := range []string{"-1", "10000001"} { // 0 is not set (TestZeroPermutationsLimitIsNotSet)
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, logsBody("p", `,"permutationsLimit":`+v)), 400, "permutationsLimit")
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(lo.ID, "lo", `,"permutationsLimit":`+v)), 400, "permutationsLimit")
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, batch(createReq(logsBody("p", `,"permutationsLimit":`+v)))),
				400, "requests[0].create.e2m.permutationsLimit")
		}

		// Field bounds: at the bound passes, one past is a 400 naming the field.
		field := func(aggs string) string {
			return `{"sourceField":"f","targetBaseMetricName":"m","aggregations":[` + aggs + `]}`
		}
		repeat := func(s string, n int, sep string) string {
			out := make([]string, n)
			for i := range out {
				out[i] = strings.ReplaceAll(s, "#", fmt.Sprint(i))
			}
			return strings.Join(out, sep)
		}
		bounds := []struct {
			name, ok, bad, frag string
		}{
			{"name", logsBody(strings.Repeat("n", 255), ""), logsBody(strings.Repeat("n", 256), ""), "name: must have at most 255 characters"},
			{"empty name", logsBody("e", ""), logsBody("", ""), "name: must have at least 1 character"},
			{"description", logsBody("d", `,"description":"`+strings.Repeat("d", 2000)+`"`), logsBody("d2", `,"description":"`+strings.Repeat("d", 2001)+`"`), "description"},
			{"dataSource", logsBody("ds", `,"dataSource":"`+strings.Repeat("a", 128)+`/`+strings.Repeat("b", 128)+`"`),
				logsBody("ds2", `,"dataSource":"`+strings.Repeat("a", 129)+`/b"`), "dataSource: must match"},
			{"lucene", `{"name":"l","type":"E2M_TYPE_SPANS2METRICS","spansQuery":{"lucene":"` + strings.Repeat("q", 10000) + `"}}`,
				`{"name":"l2","type":"E2M_TYPE_SPANS2METRICS","spansQuery":{"lucene":"` + strings.Repeat("q", 10001) + `"}}`, "spansQuery.lucene"},
			{"metricFields", logsBody("mf", `,"metricFields":[`+repeat(`{"sourceField":"f","targetBaseMetricName":"m#","aggregations":[]}`, 10, ",")+`]`),
				logsBody("mf2", `,"metricFields":[`+repeat(`{"sourceField":"f","targetBaseMetricName":"m#","aggregations":[]}`, 11, ",")+`]`), "metricFields: must have at most 10 items"},
			{"metricLabels", logsBody("ml", `,"metricLabels":[`+repeat(`{"sourceField":"f","targetLabel":"l#"}`, 10, ",")+`]`),
				logsBody("ml2", `,"metricLabels":[`+repeat(`{"sourceField":"f","targetLabel":"l#"}`, 11, ",")+`]`), "metricLabels: must have at most 10 items"},
			{"aggregations", logsBody("ag", `,"metricFields":[`+field(repeat(`{"none":{},"aggType":"AGG_TYPE_SUM","targetMetricName":"t#"}`, 7, ","))+`]`),
				logsBody("ag2", `,"metricFields":[`+field(repeat(`{"none":{},"aggType":"AGG_TYPE_SUM","targetMetricName":"t#"}`, 8, ","))+`]`), "metricFields[0].aggregations: must have at most 7 items"},
			{"buckets", logsBody("bk", `,"metricFields":[`+field(`{"histogram":{"buckets":[`+repeat("#", 64, ",")+`]}}`)+`]`),
				logsBody("bk2", `,"metricFields":[`+field(`{"histogram":{"buckets":[`+repeat("#", 65, ",")+`]}}`)+`]`), "histogram.buckets: must have at most 64 items"},
			{"no bucket", logsBody("b0", `,"metricFields":[`+field(`{"histogram":{"buckets":[]},"enabled":false}`)+`]`),
				logsBody("b1", `,"metricFields":[`+field(`{"histogram":{"buckets":[1,1]},"enabled":false}`)+`]`), "histogram.buckets[1]: must be greater than the bucket before it"},
			{"filters", logsWith("fv", `{"applicationnameFilters":["`+strings.Repeat("a", 4096)+`"]}`),
				logsWith("fv2", `{"applicationnameFilters":["`+strings.Repeat("a", 4097)+`"]}`), "logsQuery.applicationnameFilters[0]"},
			{"alias", logsWith("al", `{"alias":"`+strings.Repeat("a", 255)+`"}`), logsWith("al2", `{"alias":""}`), "logsQuery.alias: must have at least 1 character"},
			{"severities", logsWith("sv", `{"severityFilters":["SEVERITY_UNSPECIFIED","SEVERITY_DEBUG","SEVERITY_VERBOSE","SEVERITY_INFO","SEVERITY_WARNING","SEVERITY_ERROR","SEVERITY_CRITICAL"]}`),
				logsWith("sv2", `{"severityFilters":["SEVERITY_DEBUG","SEVERITY_DEBUG","SEVERITY_DEBUG","SEVERITY_DEBUG","SEVERITY_DEBUG","SEVERITY_DEBUG","SEVERITY_DEBUG","SEVERITY_DEBUG"]}`), "logsQuery.severityFilters: must have at most 7 items"},
			{"targetLabel", logsBody("tl", `,"metricLabels":[{"sourceField":"f","targetLabel":"`+strings.Repeat("l", 255)+`"}]`),
				logsBody("tl2", `,"metricLabels":[{"sourceField":"f","targetLabel":"`+strings.Repeat("l", 256)+`"}]`), "metricLabels[0].targetLabel"},
		}
		for _, c := range bounds {
			if res := env.JSON(t, http.MethodPost, rulesPath, key, c.ok); res.Status != http.StatusOK {
				t.Fatalf("%s at the bound: %d %s", c.name, res.Status, res.Body)
			}
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, c.bad), 400, c.frag)
		}

		// Path ids: exactly 36 characters and a UUID.
		id := lo.ID
		for _, p := range []string{id[:35], id + "0", strings.Repeat("z", 36), "0f0e0d0c-0b0a-4909-8807_060504030201"} {
			for _, m := range []string{http.MethodGet, http.MethodDelete} {
				apitest.ExpectError(t, env.JSON(t, m, rulesPath+"/"+p, key, ""), 400, "id")
			}
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(p, "x", "")), 400, "id")
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, batch(deleteReq(p))), 400, "requests[0].delete.id")
		}
		if g := get(t, env, key, strings.ToUpper(id)); g.ID != id {
			t.Fatalf("uppercase %+v", g)
		}
	})
}

func TestRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		agg := func(aggs string) string {
			return `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"lat","aggregations":[` + aggs + `]}]`
		}
		cases := []struct {
			body  string
			frags []string
		}{
			{`{"name":"r","type":"E2M_TYPE_UNSPECIFIED","logsQuery":{}}`, []string{"type: must be E2M_TYPE_LOGS2METRICS or E2M_TYPE_SPANS2METRICS"}},
			{`{"name":"r","logsQuery":{}}`, []string{"type: is required"}},
			{`{"name":"r","type":"E2M_TYPE_SPANS2METRICS","logsQuery":{}}`, []string{"logsQuery: must be absent when type is E2M_TYPE_SPANS2METRICS"}},
			{`{"name":"r","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{},"spansQuery":{}}`, []string{"spansQuery: must be absent"}},
			{`{"name":"r","type":"E2M_TYPE_SPANS2METRICS","logsQuery":{},"spansQuery":{}}`, []string{"logsQuery: must be absent"}},
			{logsWith("r", `{"severityFilters":["SEVERITY_LOUD"]}`), []string{"logsQuery.severityFilters[0]"}},
			{logsBody("r", `,"dataSource":"noslash"`), []string{"dataSource: must match"}},
			{logsBody("r", `,"dataSource":"a/b/c"`), []string{"dataSource: must match"}},
			{logsBody("r", agg(`{}`)), []string{"metricFields[0].aggregations[0]: must hold one of none, histogram and samples, or an aggType that implies one (got aggType nothing)"}},
			{logsBody("r", agg(`{"aggType":"AGG_TYPE_SAMPLES"}`)), []string{"metricFields[0].aggregations[0]: must hold one of none, histogram and samples, or an aggType that implies one (got aggType AGG_TYPE_SAMPLES)"}},
			{logsBody("r", agg(`{"none":{},"aggType":"AGG_TYPE_MIN"},{"none":{},"histogram":{"buckets":[1]}}`)), []string{"metricFields[0].aggregations[1]: must hold exactly one", "(got 2)"}},
			{logsBody("r", agg(`{"none":{}}`)), []string{"metricFields[0].aggregations[0].aggType: with none, must be one of", "got nothing"}},
			{logsBody("r", agg(`{"none":{},"aggType":"AGG_TYPE_HISTOGRAM"}`)), []string{"aggregations[0].aggType: with none", "AGG_TYPE_HISTOGRAM"}},
			{logsBody("r", agg(`{"histogram":{"buckets":[1]},"aggType":"AGG_TYPE_SAMPLES"}`)), []string{"aggregations[0].aggType: must be AGG_TYPE_HISTOGRAM"}},
			{logsBody("r", agg(`{"histogram":{"buckets":[2,1]}}`)), []string{"aggregations[0].histogram.buckets[1]: must be greater than the bucket before it"}},
			{logsBody("r", agg(`{"samples":{}}`)), []string{"aggregations[0].samples.sampleType: is required"}},
			{logsBody("r", agg(`{"samples":{"sampleType":"SAMPLE_TYPE_UNSPECIFIED"}}`)), []string{"aggregations[0].samples.sampleType: must be SAMPLE_TYPE_MIN or SAMPLE_TYPE_MAX"}},
			{logsBody("r", agg(`{"samples":{"sampleType":"SAMPLE_TYPE_MIN"},"aggType":"AGG_TYPE_MIN"}`)), []string{"aggregations[0].aggType: must be AGG_TYPE_SAMPLES"}},
			{logsBody("r", agg(`{"none":{},"aggType":"AGG_TYPE_MAX"},{"none":{},"aggType":"AGG_TYPE_MIN","targetMetricName":"lat_max"}`)),
				[]string{"metricFields[0].aggregations[1].targetMetricName: \"lat_max\" is already the target metric of metricFields[0].aggregations[0]"}},
			{logsBody("r", agg(`{"none":{},"aggType":"AGG_TYPE_MAX","targetMetricName":""}`)), []string{"aggregations[0].targetMetricName: must have at least 1 character"}},
			{logsBody("r", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"`+strings.Repeat("m", 250)+`","aggregations":[{"histogram":{"buckets":[1]}}]}]`),
				[]string{"aggregations[0].targetMetricName: the derived name", "260 characters"}},
			{logsBody("r", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"a.b","aggregations":[]}]`), []string{"metricFields[0].targetBaseMetricName: must match"}},
			{logsBody("r", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"é","aggregations":[]}]`), []string{"metricFields[0].targetBaseMetricName: must match"}},
			{logsBody("r", `,"metricFields":[{"sourceField":"","targetBaseMetricName":"m","aggregations":[]}]`), []string{"metricFields[0].sourceField: must have at least 1 character"}},
			{logsBody("r", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"m"}]`), []string{"metricFields[0].aggregations: is required"}},
			{logsBody("r", `,"metricLabels":[{"sourceField":"a","targetLabel":"zone"},{"sourceField":"b","targetLabel":"zone"}]`),
				[]string{"metricLabels[1].targetLabel: \"zone\" is already the target of metricLabels[0]"}},
			{logsBody("r", `,"metricLabels":[{"sourceField":"a","targetLabel":"my label"}]`), []string{"metricLabels[0].targetLabel: must match"}},
			{logsBody("r", `,"metricLabels":[{"sourceField":"a","targetLabel":"zone:a"}]`), []string{"metricLabels[0].targetLabel: must match"}},
			{logsBody("r", `,"metricLabels":[{"sourceField":"a"}]`), []string{"metricLabels[0].targetLabel: is required"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, c.body), 400, c.frags...)
			// The same body in a batch names its full path.
			res := env.JSON(t, http.MethodPost, executePath, key, batch(createReq(logsBody("ok", "")), createReq(c.body)))
			apitest.ExpectError(t, res, 400)
			if !strings.Contains(string(res.Body), "requests[1].create.e2m.") {
				t.Fatalf("batch message for %s: %s", c.body, res.Body)
			}
		}
		// A bucket beyond float64 is refused by the decoder; the message names its full path.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, logsBody("r", agg(`{"histogram":{"buckets":[1,1e999]}}`))),
			400, "metricFields[0].aggregations[0].histogram.buckets[1]: 1e999 is out of range for this field")
		if l := list(t, env, key); len(l) != 0 {
			t.Fatalf("refused bodies stored %d rules", len(l))
		}
		// The public character set of base metric names and labels: word characters, '/' and '-'.
		wide := create(t, env, key, logsBody("wide", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"9lives/a-b","aggregations":[{"none":{},"aggType":"AGG_TYPE_MAX","targetMetricName":"any name: ok"}]}],"metricLabels":[{"sourceField":"a","targetLabel":"my-label/x"},{"sourceField":"b","targetLabel":"__name"}]`))
		if got := get(t, env, key, wide.ID); !strings.Contains(apitest.JSONOf(t, got), `"my-label/x"`) || !strings.Contains(apitest.JSONOf(t, got), `"9lives/a-b"`) {
			t.Fatalf("wide names not stored: %+v", got)
		}
		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, rulesPath+"/"+wide.ID, key, ""))
		// A rule without the query of its type has that type's empty query (every log, every
		// span), stored and answered.
		for _, c := range []struct{ name, typ string }{{"all logs", "E2M_TYPE_LOGS2METRICS"}, {"all spans", "E2M_TYPE_SPANS2METRICS"}} {
			made := create(t, env, key, `{"name":"`+c.name+`","type":"`+c.typ+`"}`)
			got := get(t, env, key, made.ID)
			logs := c.typ == "E2M_TYPE_LOGS2METRICS"
			if (got.LogsQuery != nil) != logs || (got.SpansQuery != nil) == logs {
				t.Fatalf("%s: answered %s", c.typ, apitest.JSONOf(t, got))
			}
			apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, rulesPath+"/"+made.ID, key, ""))
		}
		// The replace runs the same checks, naming the path in the body.
		r := create(t, env, key, logsBody("r", ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(r.ID, "r", agg(`{"histogram":{"buckets":[3,3]}}`))),
			400, "metricFields[0].aggregations[0].histogram.buckets[1]")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key, batch(replaceReq(replaceBody(r.ID, "r", agg(`{"samples":{"sampleType":"SAMPLE_TYPE_UNSPECIFIED"}}`))))),
			400, "requests[0].replace.e2m.metricFields[0].aggregations[0].samples.sampleType")
	})
}

func TestTeamRuleLimit(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(),
				`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
				 INSERT INTO e2m_rules (team_id, id, name, permutations_limit, document, created_at, updated_at)
				 SELECT $1, 'bulk-' || i, 'bulk-' || i, 30000, '{}', 0, 0 FROM n`, team)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		last := create(t, env, key, logsBody("the 10000th", ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, logsBody("one too many", "")), 429, "body", "10000")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key,
			batch(createReq(logsBody("one", "")), createReq(logsBody("two", "")))), 429, "requests[1].create.e2m", "10000")
		// Deleting one makes room within the same batch.
		apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key,
			batch(deleteReq(last.ID), createReq(logsBody("replacement", "")))))
	})
}

func TestIsolationAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		r := create(t, env, key, logsBody("mine", ""))
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			apitest.ExpectError(t, env.JSON(t, m, rulesPath+"/"+r.ID, otherKey, ""), 404, "id", r.ID)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, otherKey, replaceBody(r.ID, "x", "")), 404, "id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, otherKey, batch(deleteReq(r.ID))), 404, "requests[0].delete.id")
		if len(list(t, env, otherKey)) != 0 {
			t.Fatal("other team lists the rule")
		}
		if g := get(t, env, key, r.ID); g.Name != "mine" {
			t.Fatalf("own rule %+v", g)
		}

		reader := env.MustKey(t, key, "logs.events2metrics:ReadConfig")
		writer := env.MustKey(t, key, "logs.events2metrics:UpdateConfig")
		writes := []struct{ method, path, body string }{
			{http.MethodPost, rulesPath, logsBody("w", "")},
			{http.MethodPut, rulesPath, replaceBody(r.ID, "w2", "")},
			{http.MethodPost, executePath, batch(createReq(logsBody("w3", "")))},
			{http.MethodDelete, rulesPath + "/" + r.ID, ""},
		}
		for _, c := range writes {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, reader, c.body), 403)
		}
		for _, p := range []string{rulesPath, rulesPath + "/" + r.ID} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p, writer, ""), 403)
			if res := env.JSON(t, http.MethodGet, p, reader, ""); res.Status != http.StatusOK {
				t.Fatalf("reader GET %s: %d %s", p, res.Status, res.Body)
			}
		}
		for _, c := range writes {
			if res := env.JSON(t, c.method, c.path, writer, c.body); res.Status != http.StatusOK {
				t.Fatalf("writer %s %s: %d %s", c.method, c.path, res.Status, res.Body)
			}
		}
		readOnly := env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", key,
			`{"name":"ro","keyPermissions":{"presets":["read-only"]}}`)
		roKey := apitest.Decode[struct{ Value string }](t, readOnly).Value
		if res := env.JSON(t, http.MethodGet, rulesPath, roKey, ""); res.Status != http.StatusOK {
			t.Fatalf("read-only preset list: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, roKey, logsBody("ro", "")), 403)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath, "nope", ""), 401)
		apitest.ExpectError(t, env.Do(t, http.MethodPost, executePath, "", "application/json", batch()), 401)
	})
}

// Time stamps keep their microseconds: a replace 1.5 ms after the create answers an updateTime
// 1.5 ms (plus the real time that passed) after the createTime, not the same whole second.
func TestTimesKeepMicroseconds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		r := create(t, env, key, logsBody("precise", ""))
		env.Clock.Advance(1500 * time.Microsecond)
		replaced := apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, rulesPath, key,
			`{"id":"`+r.ID+`","name":"precise","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{"lucene":"level:warn"}}`)).E2M
		created, err := time.Parse(time.RFC3339Nano, r.CreateTime)
		if err != nil {
			t.Fatal(err)
		}
		updated, err := time.Parse(time.RFC3339Nano, replaced.UpdateTime)
		if err != nil {
			t.Fatal(err)
		}
		if gap := updated.Sub(created); gap < 1500*time.Microsecond || gap >= 500*time.Millisecond {
			t.Fatalf("createTime %s, updateTime %s: %s apart, want 1.5 ms to 0.5 s", r.CreateTime, replaced.UpdateTime, gap)
		}
		if replaced.CreateTime != r.CreateTime || !strings.HasSuffix(r.CreateTime, "Z") {
			t.Fatalf("createTime %s then %s, want one UTC value", r.CreateTime, replaced.CreateTime)
		}
	})
}

// TestStreamedListIsTheBufferedList checks that the list, which the server streams, is byte for
// byte what the generated encoder writes for the same rules: empty, one of each kind, and more
// than two streaming buffers.
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "streamed")
		h := e2m.NewHandler(env.DB)
		buffered := func(ctx context.Context) (*oas.E2MList, error) { return h.ListE2M(ctx) }
		if body := apitest.ExpectStreamedAsBuffered(t, env, rulesPath, key, team, buffered); string(body) != `{"e2m":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		create(t, env, key, fullLogsRule)
		create(t, env, key, logsBody("minimal \"é\" <&>", ""))
		apitest.ExpectStreamedAsBuffered(t, env, rulesPath, key, team, buffered)
		for b := range 3 {
			requests := make([]string, 100)
			for i := range requests {
				requests[i] = createReq(strings.Replace(fullLogsRule, "catalog latency", fmt.Sprintf("rule %d-%d", b, i), 1))
			}
			apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key, batch(requests...)))
		}
		if body := apitest.ExpectStreamedAsBuffered(t, env, rulesPath, key, team, buffered); len(body) <= 2*streaming.BufferBytes {
			t.Fatalf("the list is %d bytes, want more than two buffers", len(body))
		}
	})
}

// TestZeroPermutationsLimitIsNotSet: permutationsLimit 0 is not set (its schema has a default):
// a create gets the default, a replace keeps the stored limit, in a batch too. It answered
// "400 permutationsLimit: must be at least 1 (got 0)" before.
func TestZeroPermutationsLimitIsNotSet(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		r := create(t, env, key, logsBody("zero", `,"permutationsLimit": 0`))
		if r.Permutations.Limit != 30000 {
			t.Fatalf("create with 0: limit %d, want the default 30000", r.Permutations.Limit)
		}
		r = create(t, env, key, logsBody("kept", `,"permutationsLimit":500`))
		got := apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(r.ID, "kept", `,"permutationsLimit":0`))).E2M
		if got.Permutations.Limit != 500 {
			t.Fatalf("replace with 0: limit %d, want the stored 500", got.Permutations.Limit)
		}
		res := env.JSON(t, http.MethodPost, executePath, key, batch(createReq(logsBody("batched", `,"permutationsLimit":0.0`))))
		if res.Status != http.StatusOK {
			t.Fatalf("batch create with 0.0: %d %s", res.Status, res.Body)
		}
	})
}

// TestAggregationWithoutMetadata: an aggregation without none, histogram or samples (the one-of
// not set, which the public document allows) is accepted with the alternative its aggType
// implies, and answered with it. It answered "400 metricFields[0].aggregations[0]: must hold
// exactly one of none, histogram and samples (got 0)" before.
func TestAggregationWithoutMetadata(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		res := env.JSON(t, http.MethodPost, rulesPath, key, logsBody("r", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"lat","aggregations":[`+
			`{"enabled":true,"aggType":"AGG_TYPE_MIN","targetMetricName":"lat_min"},{"aggType":"AGG_TYPE_HISTOGRAM","none":null}]}]`))
		if res.Status != http.StatusOK {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		for _, want := range []string{`"aggType":"AGG_TYPE_MIN","none":{}`, `"targetMetricName":"lat_histogram","aggType":"AGG_TYPE_HISTOGRAM","histogram":{"buckets":[]}`} {
			if !strings.Contains(string(res.Body), want) {
				t.Fatalf("answer lacks %s: %s", want, res.Body)
			}
		}
	})
}
