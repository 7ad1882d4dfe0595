package e2m_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// latestRules is the rules' path under the newest public documents' prefix, which clients in the
// field are generated from.
const latestRules = "/mgmt/openapi/latest/events2metrics/events2metrics/v2"

// TestAggregationsCompleted: a metric field sent with some aggregations, or none, is answered with
// the whole set as the real service fills it (the vendor's Terraform provider's acceptance test
// reads it back): count, sum, avg, min and max enabled and named cx_count … cx_max, and a disabled
// histogram named cx_bucket without buckets, for each one the client did not send; the ones sent
// are answered as sent. A GET answer sent back as a replace is stored unchanged. A field with two
// aggregations of one type is kept as sent. It was answered as sent before (issue 38).
func TestAggregationsCompleted(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		// As the Terraform provider sends them: a field with min, max, avg, and a field with none.
		body := logsBody("completed", `,"metricFields":[
			{"sourceField":"location_geopoint","targetBaseMetricName":"geo_point","aggregations":[
				{"aggType":"AGG_TYPE_MIN","enabled":false,"targetMetricName":"min"},
				{"aggType":"AGG_TYPE_MAX","enabled":false,"targetMetricName":"max"},
				{"aggType":"AGG_TYPE_AVG","enabled":true,"targetMetricName":"avg"}]},
			{"sourceField":"method","targetBaseMetricName":"method","aggregations":[]}]`)
		res := env.JSON(t, http.MethodPost, latestRules, key, body)
		r := apitest.Decode[envelope](t, res).E2M
		want := func(aggs ...string) string { return "[" + strings.Join(aggs, ",") + "]" }
		none := func(enabled, name, typ string) string {
			return `{"Enabled":` + enabled + `,"TargetMetricName":"` + name + `","AggType":"AGG_TYPE_` + typ + `","None":{},"Histogram":null,"Samples":null}`
		}
		bucket := `{"Enabled":false,"TargetMetricName":"cx_bucket","AggType":"AGG_TYPE_HISTOGRAM","None":null,"Histogram":{"Buckets":[]},"Samples":null}`
		wantGeo := want(none("false", "min", "MIN"), none("false", "max", "MAX"), none("true", "avg", "AVG"),
			none("true", "cx_count", "COUNT"), none("true", "cx_sum", "SUM"), bucket)
		wantMethod := want(none("true", "cx_count", "COUNT"), none("true", "cx_sum", "SUM"), none("true", "cx_avg", "AVG"),
			none("true", "cx_min", "MIN"), none("true", "cx_max", "MAX"), bucket)
		if len(r.MetricFields) != 2 {
			t.Fatalf("metricFields %s", res.Body)
		}
		if got := apitest.JSONOf(t, r.MetricFields[0].Aggregations); got != wantGeo {
			t.Fatalf("partial field\n got %s\nwant %s", got, wantGeo)
		}
		if got := apitest.JSONOf(t, r.MetricFields[1].Aggregations); got != wantMethod {
			t.Fatalf("empty field\n got %s\nwant %s", got, wantMethod)
		}
		if !strings.Contains(string(res.Body), `"histogram":{"buckets":[]}`) {
			t.Fatalf("the added histogram is not answered with empty buckets: %s", res.Body)
		}

		// The answer sent back (cx_count in both fields) is a replace that changes nothing.
		got := env.JSON(t, http.MethodGet, latestRules+"/"+r.ID, key, "")
		stored := apitest.Decode[struct{ E2M map[string]any }](t, got)
		for _, k := range []string{"createTime", "updateTime", "isInternal", "permutations"} {
			delete(stored.E2M, k)
		}
		again := apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, latestRules, key, apitest.JSONOf(t, stored.E2M))).E2M
		if apitest.JSONOf(t, again.MetricFields) != apitest.JSONOf(t, r.MetricFields) {
			t.Fatalf("replace with the answer changed the fields:\n got %s\nwant %s", apitest.JSONOf(t, again.MetricFields), apitest.JSONOf(t, r.MetricFields))
		}

		// A disabled histogram with no buckets is accepted and answered as sent; the rest is completed.
		res = env.JSON(t, http.MethodPost, latestRules, key, logsBody("no buckets", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"m","aggregations":[
			{"histogram":{"buckets":[]},"enabled":false,"targetMetricName":"m_h"}]}]`))
		h := apitest.Decode[envelope](t, res).E2M.MetricFields[0].Aggregations
		if len(h) != 6 || apitest.JSONOf(t, h[0]) != `{"Enabled":false,"TargetMetricName":"m_h","AggType":"AGG_TYPE_HISTOGRAM","None":null,"Histogram":{"Buckets":[]},"Samples":null}` {
			t.Fatalf("disabled histogram without buckets: %s", res.Body)
		}

		// Two aggregations of one type: not the real service's set, kept as sent.
		res = env.JSON(t, http.MethodPost, latestRules, key, logsBody("two sums", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"m","aggregations":[
			{"none":{},"aggType":"AGG_TYPE_SUM","targetMetricName":"a"},{"none":{},"aggType":"AGG_TYPE_SUM","targetMetricName":"b"}]}]`))
		if aggs := apitest.Decode[envelope](t, res).E2M.MetricFields[0].Aggregations; len(aggs) != 2 {
			t.Fatalf("two sums: %s", res.Body)
		}

		// A sent name that the added aggregation would take is a 400 naming it; nothing is stored.
		before := len(list(t, env, key))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestRules, key, logsBody("clash", `,"metricFields":[{"sourceField":"f","targetBaseMetricName":"m","aggregations":[
			{"none":{},"aggType":"AGG_TYPE_MIN","targetMetricName":"cx_count"}]}]`)),
			400, `metricFields[0].aggregations[0].targetMetricName: "cx_count" is the name the server gives the AGG_TYPE_COUNT aggregation`)
		if after := len(list(t, env, key)); after != before {
			t.Fatalf("a refused rule was stored: %d rules, %d before", after, before)
		}
	})
}
