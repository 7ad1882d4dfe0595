package slos_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	validatedPath = "/mgmt/openapi/5/slo/validated/v1"
	zeroStatePath = "/mgmt/openapi/5/slo/zero-state/v1"
)

// apmError makes m an SLO with an APM error SLI over the services.
func apmError(services ...string) func(m map[string]any) {
	return func(m map[string]any) {
		delete(m, "requestBasedMetricSli")
		m["apmSli"] = map[string]any{"services": services, "errorConfig": map[string]any{}}
	}
}

// apmLatency makes m an SLO with an APM P95 latency SLI over checkout.
func apmLatency(m map[string]any) {
	delete(m, "requestBasedMetricSli")
	m["apmSli"] = map[string]any{
		"services":     []string{"checkout"},
		"filters":      []any{map[string]any{"key": "environment", "values": []string{"production", "staging"}}},
		"groupingKeys": []string{"region"},
		"latencyConfig": map[string]any{
			"quantile": map[string]any{"percentile": 0.95}, "threshold": 500, "timeWindow": "WINDOW_SLO_WINDOW_1_MINUTE",
		},
	}
}

// apmMod changes the apmSli of m (set by apmLatency) at one key.
func apmMod(key string, v any) func(m map[string]any) {
	return func(m map[string]any) {
		apmLatency(m)
		a := m["apmSli"].(map[string]any)
		if v == nil {
			delete(a, key)
		} else {
			a[key] = v
		}
	}
}

// latencyMod changes the latencyConfig of an apmLatency SLO at one key.
func latencyMod(key string, v any) func(m map[string]any) {
	return func(m map[string]any) {
		apmLatency(m)
		l := m["apmSli"].(map[string]any)["latencyConfig"].(map[string]any)
		if v == nil {
			delete(l, key)
		} else {
			l[key] = v
		}
	}
}

func createRaw(t *testing.T, env *apitest.Env, key string, m map[string]any) map[string]any {
	t.Helper()
	return apitest.Decode[struct{ Slo map[string]any }](t, env.JSON(t, http.MethodPost, slosPath, key, apitest.JSONOf(t, m))).Slo
}

func getRaw(t *testing.T, env *apitest.Env, key, id string) map[string]any {
	t.Helper()
	return apitest.Decode[struct{ Slo map[string]any }](t, env.JSON(t, http.MethodGet, slosPath+"/"+id, key, "")).Slo
}

// An APM SLI is stored as sent, with its empty lists filled; it makes the SLO an APM product of the
// type its configuration implies (error: request, latency: window). A metric SLO may carry the APM
// description of its queries in apmSliMetadata.
func TestApmSliRoundTrip(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		e := createRaw(t, env, key, body("errors", apmError("checkout", "payment-service")))
		if e["sloType"] != "SLO_TYPE_REQUEST" || e["type"] != "request" || e["productType"] != "SLO_PRODUCT_TYPE_APM" {
			t.Fatalf("error SLO types: %v", e)
		}
		if got := apitest.JSONOf(t, e["apmSli"]); got != `{"errorConfig":{},"filters":[],"groupingKeys":[],"services":["checkout","payment-service"]}` {
			t.Fatalf("apmSli %s", got)
		}
		if _, ok := e["requestBasedMetricSli"]; ok {
			t.Fatal("an APM SLO answered a metric SLI")
		}
		l := createRaw(t, env, key, body("latency", apmLatency, set("sloType", "SLO_TYPE_WINDOW"), set("productType", "SLO_PRODUCT_TYPE_APM")))
		if l["sloType"] != "SLO_TYPE_WINDOW" || l["type"] != "window" || l["productType"] != "SLO_PRODUCT_TYPE_APM" {
			t.Fatalf("latency SLO types: %v", l)
		}
		want := `{"filters":[{"key":"environment","values":["production","staging"]}],"groupingKeys":["region"],` +
			`"latencyConfig":{"quantile":{"percentile":0.95},"threshold":500,"timeWindow":"WINDOW_SLO_WINDOW_1_MINUTE"},"services":["checkout"]}`
		if got := apitest.JSONOf(t, l["apmSli"]); got != want {
			t.Fatalf("apmSli %s\nwant   %s", got, want)
		}
		if apitest.JSONOf(t, getRaw(t, env, key, l["id"].(string))) != apitest.JSONOf(t, l) {
			t.Fatal("get differs from create")
		}

		// Replace the latency SLO with the window-based metric SLI it stands for, keeping its APM origin.
		meta := body("latency", windowSli, withID(l["id"].(string)), func(m map[string]any) {
			apmLatency(m)
			m["apmSliMetadata"] = m["apmSli"]
			delete(m, "apmSli")
			windowSli(m)
		})
		res := env.JSON(t, http.MethodPut, slosPath, key, apitest.JSONOf(t, meta))
		r := apitest.Decode[struct{ Slo map[string]any }](t, res).Slo
		if r["productType"] != "SLO_PRODUCT_TYPE_APM" || r["sloType"] != "SLO_TYPE_WINDOW" || r["apmSli"] != nil ||
			apitest.JSONOf(t, r["apmSliMetadata"]) != want || r["windowBasedMetricSli"] == nil {
			t.Fatalf("replaced %v", r)
		}
		// A deprecated single filter value is kept as sent.
		v := createRaw(t, env, key, body("legacy", apmMod("filters", []any{map[string]any{"key": "env", "value": "prod"}})))
		if got := apitest.JSONOf(t, v["apmSli"].(map[string]any)["filters"]); got != `[{"key":"env","value":"prod","values":[]}]` {
			t.Fatalf("legacy filter %s", got)
		}
	})
}

func set(key string, v any) func(m map[string]any) {
	return func(m map[string]any) { m[key] = v }
}

func TestApmSliBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		names := func(n, size int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("%0*d", size, i)
			}
			return out
		}
		filters := func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = map[string]any{"key": fmt.Sprintf("k%d", i), "values": []string{"v"}}
			}
			return out
		}
		labels := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("g%d", i)
			}
			return out
		}
		accepted := []struct {
			label string
			mod   func(m map[string]any)
		}{
			{"services 100 of 255", apmMod("services", names(100, 255))},
			{"filters 50", apmMod("filters", filters(50))},
			{"filter values 100", apmMod("filters", []any{map[string]any{"key": "k", "values": names(100, 255)}})},
			{"filter key 255", apmMod("filters", []any{map[string]any{"key": strings.Repeat("é", 255), "value": strings.Repeat("é", 255)}})},
			{"groupingKeys 10", apmMod("groupingKeys", labels(10))},
			{"percentile 0.999", latencyMod("quantile", map[string]any{"percentile": 0.999})},
			{"average", func(m map[string]any) {
				latencyMod("quantile", nil)(m)
				m["apmSli"].(map[string]any)["latencyConfig"].(map[string]any)["average"] = map[string]any{}
			}},
			{"threshold 0.001", latencyMod("threshold", 0.001)},
			{"error SLI", apmError("a")},
		}
		for _, a := range accepted {
			s := createRaw(t, env, key, body("ok", a.mod))
			if s["productType"] != "SLO_PRODUCT_TYPE_APM" {
				t.Fatalf("%s: %v", a.label, s)
			}
		}
		refused := []struct {
			label string
			mod   func(m map[string]any)
			frags []string
		}{
			{"services missing", apmMod("services", nil), []string{"apmSli.services: is required"}},
			{"services empty", apmMod("services", []string{}), []string{"apmSli.services: must have at least 1 item"}},
			{"services 101", apmMod("services", names(101, 3)), []string{"apmSli.services: must have at most 100 items"}},
			{"service 256", apmMod("services", []string{strings.Repeat("s", 256)}), []string{"apmSli.services[0]: must have at most 255 characters"}},
			{"service empty", apmMod("services", []string{""}), []string{"apmSli.services[0]: must have at least 1 character"}},
			{"service blank", apmMod("services", []string{"a", " "}), []string{"apmSli.services[1]: must contain a non-whitespace character"}},
			{"service repeated", apmMod("services", []string{"a", "b", "a"}), []string{"apmSli.services[2]: \"a\" repeats item 0"}},
			{"filters 51", apmMod("filters", filters(51)), []string{"apmSli.filters: must have at most 50 items"}},
			{"filter key missing", apmMod("filters", []any{map[string]any{"values": []string{"v"}}}), []string{"apmSli.filters[0].key: is required"}},
			{"filter key blank", apmMod("filters", []any{map[string]any{"key": " ", "values": []string{"v"}}}), []string{"apmSli.filters[0].key: must contain a non-whitespace character"}},
			{"filter without values", apmMod("filters", []any{map[string]any{"key": "k"}}), []string{"apmSli.filters[0].values: at least one value is required"}},
			{"filter key 256", apmMod("filters", []any{map[string]any{"key": strings.Repeat("é", 256), "values": []string{"v"}}}), []string{"apmSli.filters[0].key: must have at most 255 characters"}},
			{"filter value 256", apmMod("filters", []any{map[string]any{"key": "k", "values": []string{"v", strings.Repeat("é", 256)}}}), []string{"apmSli.filters[0].values[1]: must have at most 255 characters"}},
			{"filter values 101", apmMod("filters", []any{map[string]any{"key": "k", "values": names(101, 1)}}), []string{"apmSli.filters[0].values: must have at most 100 items"}},
			{"groupingKeys 11", apmMod("groupingKeys", labels(11)), []string{"apmSli.groupingKeys: must have at most 10 items"}},
			{"groupingKey invalid", apmMod("groupingKeys", []string{"a-b"}), []string{"apmSli.groupingKeys[0]: must match the pattern"}},
			{"groupingKey repeated", apmMod("groupingKeys", []string{"a", "a"}), []string{"apmSli.groupingKeys[1]: \"a\" repeats item 0"}},
			{"no configuration", apmMod("latencyConfig", nil), []string{"apmSli.errorConfig: an APM SLI needs errorConfig or latencyConfig"}},
			{"both configurations", apmMod("errorConfig", map[string]any{}), []string{"apmSli.latencyConfig: only one of errorConfig and latencyConfig"}},
			{"quantile and average", func(m map[string]any) {
				apmLatency(m)
				m["apmSli"].(map[string]any)["latencyConfig"].(map[string]any)["average"] = map[string]any{}
			}, []string{"apmSli.latencyConfig: must set only one of quantile and average, both are set"}},
			{"neither quantile nor average", latencyMod("quantile", nil), []string{"apmSli.latencyConfig: needs quantile or average"}},
			{"percentile 0", latencyMod("quantile", map[string]any{"percentile": 0}), []string{"apmSli.latencyConfig.quantile.percentile: must be greater than 0"}},
			{"percentile 1", latencyMod("quantile", map[string]any{"percentile": 1}), []string{"apmSli.latencyConfig.quantile.percentile: must be less than 1"}},
			{"percentile missing", latencyMod("quantile", map[string]any{}), []string{"apmSli.latencyConfig.quantile.percentile: is required"}},
			{"threshold 0", latencyMod("threshold", 0), []string{"apmSli.latencyConfig.threshold: must be greater than 0"}},
			{"threshold missing", latencyMod("threshold", nil), []string{"apmSli.latencyConfig.threshold: is required"}},
			{"time window missing", latencyMod("timeWindow", nil), []string{"apmSli.latencyConfig.timeWindow: is required"}},
			{"time window unspecified", latencyMod("timeWindow", "WINDOW_SLO_WINDOW_UNSPECIFIED"), []string{"apmSli.latencyConfig.timeWindow: must be WINDOW_SLO_WINDOW_1_MINUTE"}},
			{"productType unspecified", func(m map[string]any) { apmLatency(m); m["productType"] = "SLO_PRODUCT_TYPE_UNSPECIFIED" }, []string{"productType: must be SLO_PRODUCT_TYPE_APM"}},
			{"sloType mismatch", func(m map[string]any) { apmLatency(m); m["sloType"] = "SLO_TYPE_REQUEST" }, []string{"sloType: SLO_TYPE_REQUEST does not match the SLI"}},
			{"apmSli and apmSliMetadata", func(m map[string]any) {
				apmLatency(m)
				m["apmSliMetadata"] = m["apmSli"]
			}, []string{"apmSliMetadata: describes the APM origin of metric queries"}},
			{"metadata of another type", func(m map[string]any) {
				m["apmSliMetadata"] = map[string]any{"services": []string{"a"}, "latencyConfig": map[string]any{
					"average": map[string]any{}, "threshold": 1, "timeWindow": "WINDOW_SLO_WINDOW_1_MINUTE"}}
			}, []string{"apmSliMetadata: describes an SLI of type SLO_TYPE_WINDOW, but the SLO's SLI makes it SLO_TYPE_REQUEST"}},
			{"metadata checked", func(m map[string]any) {
				m["apmSliMetadata"] = map[string]any{"services": []string{"a", "a"}, "errorConfig": map[string]any{}}
			}, []string{"apmSliMetadata.services[1]: \"a\" repeats item 0"}},
		}
		for _, r := range refused {
			res := env.JSON(t, http.MethodPost, slosPath, key, apitest.JSONOf(t, body("bad", r.mod)))
			if res.Status != http.StatusBadRequest {
				t.Fatalf("%s: status %d %s", r.label, res.Status, res.Body)
			}
			apitest.ExpectError(t, res, 400, r.frags...)
			apitest.ExpectError(t, execute(t, env, key, createReq(body("ok")), createReq(body("bad", r.mod))), 400,
				"requests[1].createSloRequest.slo."+r.frags[0])
		}
		if l := list(t, env, key); len(l) != len(accepted) {
			t.Fatalf("list has %d, want %d", len(l), len(accepted))
		}
	})
}

// Ownership tags are stored as sent; resolvedValues is the server's: the static values, each once.
func TestOwnershipTags(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		s := createRaw(t, env, key, body("owned", set("ownershipTags", map[string]any{
			"service": map[string]any{"staticValues": []string{"pay", "billing", "pay"}, "labelKeys": []string{"service_name"}, "resolvedValues": []string{"forged"}},
			"team":    map[string]any{},
		})))
		want := `{"service":{"labelKeys":["service_name"],"resolvedValues":["pay","billing"],"staticValues":["pay","billing","pay"]},` +
			`"team":{"labelKeys":[],"resolvedValues":[],"staticValues":[]}}`
		if got := apitest.JSONOf(t, s["ownershipTags"]); got != want {
			t.Fatalf("ownershipTags %s\nwant          %s", got, want)
		}
		if apitest.JSONOf(t, getRaw(t, env, key, s["id"].(string))["ownershipTags"]) != want {
			t.Fatal("get differs")
		}
		edge := make([]string, 100)
		for i := range edge {
			edge[i] = fmt.Sprintf("%0255d", i)
		}
		keys := make([]string, 11)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i)
		}
		full := createRaw(t, env, key, body("edges", set("ownershipTags", map[string]any{
			"environment": map[string]any{"staticValues": edge, "labelKeys": keys[:10]}})))
		if n := len(full["ownershipTags"].(map[string]any)["environment"].(map[string]any)["resolvedValues"].([]any)); n != 100 {
			t.Fatalf("resolvedValues has %d values, want 100", n)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, slosPath, key, apitest.JSONOf(t, body("bad", set("ownershipTags", map[string]any{
			"team": map[string]any{"labelKeys": keys}})))), 400, "ownershipTags.team.labelKeys: must have at most 10 items")
		plain := createRaw(t, env, key, body("plain"))
		if _, ok := plain["ownershipTags"]; ok {
			t.Fatalf("ownershipTags appeared: %v", plain)
		}
		many := make([]string, 101)
		for i := range many {
			many[i] = fmt.Sprint(i)
		}
		for _, c := range []struct {
			tags any
			frag string
		}{
			{map[string]any{"environment": map[string]any{"staticValues": many}}, "ownershipTags.environment.staticValues: must have at most 100 items"},
			{map[string]any{"environment": map[string]any{"staticValues": []string{""}}}, "ownershipTags.environment.staticValues[0]: must have at least 1 character"},
			{map[string]any{"team": map[string]any{"labelKeys": []string{"1x"}}}, "ownershipTags.team.labelKeys[0]: must match the pattern"},
			{map[string]any{"team": map[string]any{"staticValues": []string{strings.Repeat("é", 256)}}}, "ownershipTags.team.staticValues[0]: must have at most 255 characters"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, slosPath, key, apitest.JSONOf(t, body("bad", set("ownershipTags", c.tags)))), 400, c.frag)
		}
		// The deprecated silence_data_validations is accepted, and must be a boolean.
		if res := env.JSON(t, http.MethodPost, slosPath+"?silence_data_validations=true", key, apitest.JSONOf(t, body("silenced"))); res.Status != http.StatusOK {
			t.Fatalf("silenced create: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodPut, slosPath+"?silence_data_validations=false", key, apitest.JSONOf(t, body("plain", withID(plain["id"].(string))))); res.Status != http.StatusOK {
			t.Fatalf("silenced replace: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, slosPath+"?silence_data_validations=maybe", key, apitest.JSONOf(t, body("x"))), 400, "silence_data_validations")
		if n := len(list(t, env, key)); n != 4 {
			t.Fatalf("%d SLOs, want 4", n)
		}
	})
}

func names(slos []slo) string {
	out := make([]string, 0, len(slos))
	for _, s := range slos {
		out = append(out, s.Name)
	}
	return strings.Join(out, ",")
}

// The list applies every filter (all must match, any value of one may), in bracket, dot and JSON
// form, and refuses with 400 every filter it could not apply.
func TestListFilters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		alice := apitest.Decode[struct{ Value string }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", key,
			`{"name":"alice","keyPermissions":{"presets":["slos"]}}`)).Value
		create(t, env, key, body("checkout", set("labels", map[string]string{"env": "prod"}),
			set("ownershipTags", map[string]any{"service": map[string]any{"staticValues": []string{"pay"}}})))
		create(t, env, key, body("search", windowSli, set("labels", map[string]string{"env": "dev"})))
		create(t, env, key, body("payments", apmError("payment-service"),
			set("ownershipTags", map[string]any{"team": map[string]any{"staticValues": []string{"core"}}, "environment": map[string]any{"staticValues": []string{"prod"}}})))
		create(t, env, alice, body("alice's", set("labels", map[string]string{"owner": "alice"})))
		_, other := env.MustTeam(t, "globex")
		create(t, env, other, body("checkout", set("labels", map[string]string{"env": "prod"})))

		is := func(kind string, values ...string) string {
			q := ""
			for _, v := range values {
				q += "&filters[0][predicate][is][" + kind + "][values]=" + url.QueryEscape(v)
			}
			return q
		}
		for _, c := range []struct{ query, want string }{
			{"", "checkout,search,payments,alice's"},
			{"filters[0][field][constFilter]=SLO_CONST_FILTER_FIELD_SLO_NAME" + is("stringValues", "search", "checkout", "nope"), "checkout,search"},
			{"filters[0][field][constFilter]=SLO_CONST_FILTER_FIELD_USER_NAME" + is("stringValues", "alice"), "alice's"},
			{"filters[0][field][labelName]=env" + is("stringValues", "prod"), "checkout"},
			{"filters=" + url.QueryEscape(`[{"field":{"labelName":"env"},"predicate":{"is":{"stringValues":{"values":[]}}}}]`), ""},
			{"filters[0][field][sloType]=true" + is("typeValues", "SLO_TYPE_WINDOW"), "search"},
			{"filters[0][field][productType]=true" + is("productTypeValues", "SLO_PRODUCT_TYPE_APM"), "payments"},
			{"filters[0][field][productType]=true" + is("productTypeValues", "SLO_PRODUCT_TYPE_UNSPECIFIED"), "checkout,search,alice's"},
			{"filters[0][field][productType]=true" + is("productTypeValues", "SLO_PRODUCT_TYPE_APM") + "&filters[1][field][serviceName]=payment-service", "payments"},
			{"filters[0][field][productType]=true" + is("productTypeValues", "SLO_PRODUCT_TYPE_APM") + "&filters[1][field][serviceName]=checkout", ""},
			{"filters[0][field][ownershipServiceValues][values]=pay&filters[0][field][ownershipServiceValues][values]=x", "checkout"},
			{"filters[0][field][ownershipTeamValues][values]=core", "payments"},
			{"filters[0][field][ownershipEnvironmentValues][values]=prod", "payments"},
			// Every filter must match.
			{"filters[0][field][labelName]=env" + is("stringValues", "prod", "dev") +
				"&filters[1][field][sloType]=true&filters[1][predicate][is][typeValues][values]=SLO_TYPE_REQUEST", "checkout"},
			// Dot form and JSON form.
			{"filters[0].field.labelName=env&filters[0].predicate.is.stringValues.values=dev", "search"},
			{"filters=" + url.QueryEscape(`[{"field":{"sloType":true},"predicate":{"is":{"typeValues":{"values":["SLO_TYPE_WINDOW","SLO_TYPE_REQUEST"]}}}},`+
				`{"field":{"constFilter":"SLO_CONST_FILTER_FIELD_SLO_NAME"},"predicate":{"is":{"stringValues":{"values":["payments","search"]}}}}]`), "search,payments"},
		} {
			res := env.JSON(t, http.MethodGet, slosPath+"?"+strings.TrimPrefix(c.query, "&"), key, "")
			got := apitest.Decode[struct{ Slos []slo }](t, res).Slos
			if names(got) != c.want {
				t.Errorf("%s: got %q, want %q", c.query, names(got), c.want)
			}
		}

		hundred := ""
		for i := 0; i < 100; i++ {
			hundred += fmt.Sprintf("&filters[%d][field][labelName]=env&filters[%d][predicate][is][stringValues][values]=prod", i, i)
		}
		if got := apitest.Decode[struct{ Slos []slo }](t, env.JSON(t, http.MethodGet, slosPath+"?"+hundred[1:], key, "")).Slos; names(got) != "checkout" {
			t.Fatalf("100 filters: %q", names(got))
		}
		many := ""
		for i := 0; i < 101; i++ {
			many += fmt.Sprintf("&filters[%d][field][labelName]=env&filters[%d][predicate][is][stringValues][values]=x", i, i)
		}
		for _, c := range []struct{ query, frag string }{
			{"filters[0][predicate][is][stringValues][values]=x", "filters[0].field: is required"},
			{"filters[0][field][labelName]=env&filters[0][field][sloType]=true", "filters[0].field: must set exactly one of"},
			{"filters[0][field][labelName]=env", "filters[0].predicate.is.stringValues: is required for the field filters[0].field.labelName"},
			{"filters[0][field][labelName]=env&filters[0][predicate][is][typeValues][values]=SLO_TYPE_WINDOW", "filters[0].predicate.is.typeValues: the field filters[0].field.labelName takes stringValues"},
			{"filters[0][field][labelName]=&filters[0][predicate][is][stringValues][values]=x", "filters[0].field.labelName: must not be empty"},
			{"filters[0][field][constFilter]=SLO_CONST_FILTER_FIELD_UNSPECIFIED" + is("stringValues", "x"), "filters[0].field.constFilter: must be SLO_CONST_FILTER_FIELD_SLO_NAME"},
			{"filters[0][field][constFilter]=SLO_CONST_FILTER_FIELD_TEAM" + is("stringValues", "x"), "filters[0].field.constFilter"},
			{"filters[0][field][sloType]=false" + is("typeValues", "SLO_TYPE_WINDOW"), "filters[0].field.sloType: must be true"},
			{"filters[0][field][sloType]=yes" + is("typeValues", "SLO_TYPE_WINDOW"), "filters[0].field.sloType"},
			{"filters[0][field][productType]=true" + is("productTypeValues", "SLO_PRODUCT_TYPE_RUM"), "filters[0].predicate.is.productTypeValues.values[0]"},
			{"filters=" + url.QueryEscape(`[{"field":{"sloType":true},"predicate":{"is":{"typeValues":{"values":["SLO_TYPE_X"]}}}}]`), "filters[0].predicate.is.typeValues.values[0]: must be one of SLO_TYPE_REQUEST, SLO_TYPE_WINDOW"},
			{"filters[0][field][serviceName]=checkout", "filters[0].field.serviceName: needs a productType filter"},
			{"filters[0][field][productType]=true" + is("productTypeValues", "SLO_PRODUCT_TYPE_UNSPECIFIED") + "&filters[1][field][serviceName]=checkout", "filters[1].field.serviceName: needs a productType filter"},
			{"filters[0][field][ownershipTeamValues][values]=core" + is("stringValues", "x"), "filters[0].predicate: must be omitted"},
			{"filters=notjson", "filters"},
			{"filters=" + url.QueryEscape(`[{"field":{"labelName":5}}]`), "filters"},
			{strings.TrimPrefix(many, "&"), "filters: must have at most 100 items (got 101)"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, slosPath+"?"+c.query, key, ""), 400, c.frag)
		}
	})
}

// The zero state is true exactly while the team has no SLO.
func TestZeroState(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "globex")
		zero := func(k string) string {
			res := env.JSON(t, http.MethodGet, zeroStatePath, k, "")
			if res.Status != http.StatusOK {
				t.Fatalf("zero state: %d %s", res.Status, res.Body)
			}
			return string(res.Body)
		}
		if got := zero(key); got != `{"zeroState":true}` {
			t.Fatalf("new team: %s", got)
		}
		s := create(t, env, key, body("a"))
		if got := zero(key); got != `{"zeroState":false}` {
			t.Fatalf("with an SLO: %s", got)
		}
		if got := zero(other); got != `{"zeroState":true}` {
			t.Fatalf("another team's SLO counted: %s", got)
		}
		if res := env.JSON(t, http.MethodDelete, slosPath+"/"+s.ID, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete %d", res.Status)
		}
		if got := zero(key); got != `{"zeroState":true}` {
			t.Fatalf("after delete: %s", got)
		}
		if got := zero(env.MustKey(t, key, "slo:ReadConfig")); got != `{"zeroState":true}` {
			t.Fatalf("reader: %s", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, zeroStatePath, env.MustKey(t, key, "slo:UpdateConfig"), ""), 403, "slo:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, zeroStatePath, "", ""), 401)
	})
}

// The validating replace stores the replacement exactly as the replace does and answers the
// (always empty) validation of the SLO's alerts.
func TestValidateReplaceSloAlerts(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "globex")
		s := create(t, env, key, body("a"))
		res := env.JSON(t, http.MethodPut, validatedPath, key, apitest.JSONOf(t, body("renamed", withID(s.ID), apmLatency)))
		if res.Status != http.StatusOK || string(res.Body) != `{"alertsValidationResult":[]}` {
			t.Fatalf("validated replace: %d %s", res.Status, res.Body)
		}
		got := getRaw(t, env, key, s.ID)
		if got["name"] != "renamed" || got["revision"].(map[string]any)["revision"] != float64(2) ||
			got["sloType"] != "SLO_TYPE_WINDOW" || got["apmSli"] == nil || got["createTime"] != s.CreateTime {
			t.Fatalf("after validated replace: %v", got)
		}
		before := listRaw(t, env, key)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, validatedPath, key, apitest.JSONOf(t, body("x", withID(s.ID), latencyMod("timeWindow", "WINDOW_SLO_WINDOW_UNSPECIFIED")))),
			400, "apmSli.latencyConfig.timeWindow")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, validatedPath, key, apitest.JSONOf(t, body("x"))), 400, "id: required")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, validatedPath, key, apitest.JSONOf(t, body("x", withID(missingID)))), 404, "id: no SLO")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, validatedPath, other, apitest.JSONOf(t, body("x", withID(s.ID)))), 404, "id: no SLO")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, validatedPath, env.MustKey(t, key, "slo:ReadConfig"), apitest.JSONOf(t, body("x", withID(s.ID)))), 403, "slo:UpdateConfig")
		apitest.ExpectError(t, env.Do(t, http.MethodPut, validatedPath, "", "application/json", apitest.JSONOf(t, body("x", withID(s.ID)))), 401)
		if listRaw(t, env, key) != before {
			t.Fatal("a refused validated replace changed the SLOs")
		}
		if res := env.JSON(t, http.MethodPut, validatedPath, env.MustKey(t, key, "slo:UpdateConfig"), apitest.JSONOf(t, body("again", withID(s.ID)))); res.Status != http.StatusOK {
			t.Fatalf("with slo:UpdateConfig: %d %s", res.Status, res.Body)
		}
		if g := get(t, env, key, s.ID); g.Revision.Revision != 3 || g.Name != "again" || g.ProductType != "SLO_PRODUCT_TYPE_UNSPECIFIED" {
			t.Fatalf("after second validated replace: %+v", g)
		}
	})
}
