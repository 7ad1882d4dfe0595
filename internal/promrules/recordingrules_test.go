package promrules_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/promrules"
)

const (
	setsPath  = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
	rulesPath = "/config/v1/prometheus/rules"
)

// createSet creates a recording-rule set from its JSON body and returns its id.
func createSet(t *testing.T, env *apitest.Env, key, body string) string {
	t.Helper()
	return apitest.Decode[struct {
		ID string `json:"id"`
	}](t, env.JSON(t, http.MethodPost, setsPath, key, body)).ID
}

// ruleFile GETs the rule file with key and checks that it is a 200 of application/yaml.
func ruleFile(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	res := env.Do(t, http.MethodGet, rulesPath, "Bearer "+key, "", "")
	if res.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d, body %s", rulesPath, res.Status, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Fatalf("Content-Type %q, want application/yaml", ct)
	}
	return string(res.Body)
}

// TestRuleFileOfTheTeamsSets: every group of every set of the caller's team, oldest set first,
// named "<set>/<group>", interval as a duration, limit kept, rules with their labels; another
// team's sets are not in it; evaluationDelayMs is left out.
func TestRuleFileOfTheTeamsSets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, otherKey := env.MustTeam(t, "other")
		createSet(t, env, otherKey, `{"name":"theirs","groups":[{"name":"g","rules":[{"record":"theirs:up","expr":"up"}]}]}`)

		createSet(t, env, env.RootKey, `{"name":"HTTP request rates","groups":[
			{"name":"checkout-http","interval":60,"limit":"10","rules":[
				{"record":"service:http_requests:rate5m","expr":"sum by (service) (rate(http_requests_total[5m]))",
				 "labels":{"team":"payments","tier":"1"},"evaluationDelayMs":60000},
				{"record":"service:http_errors:rate5m","expr":"sum by (service) (rate(http_requests_total{code=~\"5..\"}[5m]))"}]},
			{"name":"slow","interval":3660,"rules":[]}]}`)
		createSet(t, env, env.RootKey, `{"name":"up","groups":[{"name":"jobs","limit":"0","rules":[
			{"record":"job:up:sum","expr":"sum by (job) (up)"}]}]}`)

		want := `groups:
  - name: HTTP request rates/checkout-http
    interval: 1m
    limit: 10
    rules:
      - record: service:http_requests:rate5m
        expr: sum by (service) (rate(http_requests_total[5m]))
        labels:
          team: payments
          tier: "1"
      - record: service:http_errors:rate5m
        expr: sum by (service) (rate(http_requests_total{code=~"5.."}[5m]))
  - name: HTTP request rates/slow
    interval: 1h1m
    rules: []
  - name: up/jobs
    rules:
      - record: job:up:sum
        expr: sum by (job) (up)
`
		if got := ruleFile(t, env, env.RootKey); got != want {
			t.Fatalf("rule file:\n%s\nwant:\n%s", got, want)
		}
		if got := ruleFile(t, env, otherKey); !strings.Contains(got, "theirs/g") || strings.Contains(got, "up/jobs") {
			t.Fatalf("the other team's rule file:\n%s", got)
		}
	})
}

// TestRuleFileOfATeamWithoutSets is a valid file with no groups.
func TestRuleFileOfATeamWithoutSets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		if got := ruleFile(t, env, env.RootKey); got != "groups: []\n" {
			t.Fatalf("rule file %q, want %q", got, "groups: []\n")
		}
	})
}

// TestRuleFileGroupNamesAreUnique: two sets of one name with a group name in common give two
// groups, the later one suffixed with its set's id; a group whose own name is that suffixed name
// is suffixed with its own set's id. Prometheus refuses a file that repeats a group name.
func TestRuleFileGroupNamesAreUnique(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		body := `{"name":"api","groups":[{"name":"latency","rules":[{"record":"a:b","expr":"up"}]}]}`
		createSet(t, env, env.RootKey, body)
		second := createSet(t, env, env.RootKey, body)
		third := createSet(t, env, env.RootKey, `{"name":"api","groups":[{"name":"latency [`+second+`]","rules":[]}]}`)
		got := ruleFile(t, env, env.RootKey)
		var names []string
		for _, line := range strings.Split(got, "\n") {
			if name, ok := strings.CutPrefix(line, "  - name: "); ok {
				names = append(names, name)
			}
		}
		want := []string{"api/latency", "api/latency [" + second + "]", "api/latency [" + second + "] [" + third + "]"}
		if !reflect.DeepEqual(names, want) {
			t.Fatalf("group names %q, want %q; file:\n%s", names, want, got)
		}
	})
}

// TestRuleFileFollowsChanges: an update and a delete of a set show in the next file.
func TestRuleFileFollowsChanges(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id := createSet(t, env, env.RootKey, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
		res := env.JSON(t, http.MethodPut, setsPath+"/"+id, env.RootKey,
			`{"name":"s","groups":[{"name":"g2","rules":[{"record":"c:d","expr":"sum(up)"}]}]}`)
		if res.Status != http.StatusOK {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if got := ruleFile(t, env, env.RootKey); !strings.Contains(got, "name: s/g2") || !strings.Contains(got, "record: c:d") ||
			strings.Contains(got, "a:b") {
			t.Fatalf("after the update:\n%s", got)
		}
		if res := env.JSON(t, http.MethodDelete, setsPath+"/"+id, env.RootKey, ""); res.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		if got := ruleFile(t, env, env.RootKey); got != "groups: []\n" {
			t.Fatalf("after the delete:\n%s", got)
		}
	})
}

// TestRuleFilePermission: metrics.recording-rules:ReadConfig, slo:ReadConfig and alerts:ReadConfig
// are enough, and each is needed; no key is a 401.
func TestRuleFilePermission(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		createSet(t, env, env.RootKey, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
		reader := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig")
		if got := ruleFile(t, env, reader); !strings.Contains(got, "s/g") {
			t.Fatalf("rule file:\n%s", got)
		}
		withoutAlerts := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig", "slo:ReadConfig")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, rulesPath, "Bearer "+withoutAlerts, "", ""), http.StatusForbidden,
			`the API key lacks the permission "alerts:ReadConfig", which reading the alert definitions' rules of the rule file requires`)
		recordingOnly := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, rulesPath, "Bearer "+recordingOnly, "", ""), http.StatusForbidden,
			`the API key lacks the permission "slo:ReadConfig", which reading the SLOs' burn-rate rules of the rule file requires`)
		other := env.MustKey(t, env.RootKey, "metrics.recording-rules:UpdateConfig", "slo:ReadConfig")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, rulesPath, "Bearer "+other, "", ""), http.StatusForbidden,
			"metrics.recording-rules:ReadConfig", "GetPrometheusRules")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, rulesPath, "", "", ""), http.StatusUnauthorized)
		apitest.ExpectError(t, env.Do(t, http.MethodPost, rulesPath, "Bearer "+reader, "", ""), http.StatusMethodNotAllowed)
	})
}

// TestRuleFileThroughTheGeneratedClient: the public client reads the same bytes.
func TestRuleFileThroughTheGeneratedClient(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		createSet(t, env, env.RootKey, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
		client := env.Client(t, env.RootKey)
		answer, err := client.GetPrometheusRules(t.Context(), oas.GetPrometheusRulesParams{})
		if err != nil {
			t.Fatal(err)
		}
		ok, isOK := answer.(*oas.GetPrometheusRulesOKHeaders)
		if !isOK {
			t.Fatalf("answer %T, want the file", answer)
		}
		got, err := io.ReadAll(ok.Response)
		if err != nil {
			t.Fatal(err)
		}
		if want := ruleFile(t, env, env.RootKey); string(got) != want {
			t.Fatalf("client read %q, want %q", got, want)
		}
		again, err := client.GetPrometheusRules(t.Context(), oas.GetPrometheusRulesParams{IfNoneMatch: ok.ETag})
		if err != nil {
			t.Fatal(err)
		}
		if nm, isNM := again.(*oas.GetPrometheusRulesNotModified); !isNM || nm.ETag != ok.ETag {
			t.Fatalf("with If-None-Match %v: %#v, want 304 with the same ETag", ok.ETag, again)
		}
	})
}

// TestGroupsOfSets covers what the API's bounds make hard to reach: a limit beyond the largest
// int, and a stored limit that is not a number.
func TestGroupsOfSets(t *testing.T) {
	sets := []oas.RecordingRuleSet{{ID: "s1", Name: "s", Groups: []oas.RecordingRuleGroup{{
		ID: "g1", Name: "g", Limit: oas.NewOptString("18446744073709551615"),
		Rules: []oas.RecordingRule{{Record: "a:b", Expr: "up", Labels: oas.RecordingRuleLabels{}}},
	}}}}
	groups, err := promrules.GroupsOfSets(sets)
	if err != nil {
		t.Fatal(err)
	}
	want := []promrules.Group{{Name: "s/g", Limit: math.MaxInt, Rules: []promrules.Rule{{Record: "a:b", Expr: "up"}}}}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("groups %+v, want %+v", groups, want)
	}
	sets[0].Groups[0].Limit = oas.NewOptString("ten")
	if _, err := promrules.GroupsOfSets(sets); err == nil || !strings.Contains(err.Error(), strconv.Quote("ten")) {
		t.Fatalf("error %v, want one naming the stored limit", err)
	}
	if groups, err := promrules.GroupsOfSets(nil); err != nil || groups == nil || len(groups) != 0 {
		t.Fatalf("no sets: %v, %v; want an empty list", groups, err)
	}
}

// TestRuleFileWithASecondPart is how the SLO groups join the file: a part's groups follow the
// recording-rule groups, a name already taken is suffixed " [2]", what the part left out comes
// first as comment lines (a name with a line break stays on its line), and a key that lacks the
// part's permission gets a 403 naming it rather than a file without the part.
func TestRuleFileWithASecondPart(t *testing.T) {
	remove := promrules.AddFilePart("the test part", "logs.tco:ReadPolicies",
		func(ctx context.Context, q db.Querier, teamID int64) ([]promrules.Group, []promrules.LeftOut, error) {
			return []promrules.Group{{Name: "s/g", Rules: []promrules.Rule{{Alert: "Burning", Expr: "vector(1) > 0", For: "5m",
					Labels: map[string]string{"severity": "page"}, Annotations: map[string]string{"summary": "team " + strconv.FormatInt(teamID, 10)}}}}},
				[]promrules.LeftOut{
					{Kind: "SLO", ID: "s-1", Name: "two\nlines", Reason: "its SLI is apmSli, which is not PromQL"},
					{Kind: "alert definition", ID: "a-1", Name: "x", Reason: "a reason\ngroups: []"},
				}, nil
		})
	defer remove()
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		createSet(t, env, env.RootKey, `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`)
		withoutPart := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, rulesPath, "Bearer "+withoutPart, "", ""), http.StatusForbidden,
			`the API key lacks the permission "logs.tco:ReadPolicies", which reading the test part of the rule file requires`)
		both := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig", "slo:ReadConfig", "alerts:ReadConfig", "logs.tco:ReadPolicies")
		want := `# left out: SLO s-1 "two\nlines": its SLI is apmSli, which is not PromQL
# left out: alert definition a-1 "x": a reason groups: []
groups:
  - name: s/g
    rules:
      - record: a:b
        expr: up
  - name: s/g [2]
    rules:
      - alert: Burning
        expr: vector(1) > 0
        for: 5m
        labels:
          severity: page
        annotations:
          summary: team 1
`
		if got := ruleFile(t, env, both); got != want {
			t.Fatalf("rule file:\n%s\nwant:\n%s", got, want)
		}
	})
}

// TestRuleFileETag: the file carries an ETag; If-None-Match naming it (also weak, in a list, or
// "*") answers 304 without a body; another tag, or a changed file, answers 200 with the file; the
// same file has the same tag for another team.
func TestRuleFileETag(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const set = `{"name":"s","groups":[{"name":"g","rules":[{"record":"a:b","expr":"up"}]}]}`
		createSet(t, env, env.RootKey, set)
		get := func(key, ifNoneMatch string) apitest.Response {
			t.Helper()
			headers := map[string]string{}
			if ifNoneMatch != "" {
				headers["If-None-Match"] = ifNoneMatch
			}
			return env.Get(t, rulesPath, key, headers)
		}
		first := get(env.RootKey, "")
		etag := first.Header.Get("ETag")
		if first.Status != http.StatusOK || len(etag) != 34 || etag[0] != '"' || etag != promrules.FileETag(first.Body) {
			t.Fatalf("first read: %d, ETag %q", first.Status, etag)
		}
		for _, held := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
			res := get(env.RootKey, held)
			if res.Status != http.StatusNotModified || len(res.Body) != 0 || res.Header.Get("ETag") != etag {
				t.Errorf("If-None-Match %s: %d %q, ETag %q; want 304, no body, the same ETag", held, res.Status, res.Body, res.Header.Get("ETag"))
			}
		}
		if res := get(env.RootKey, `"other"`); res.Status != http.StatusOK || string(res.Body) != string(first.Body) {
			t.Errorf("another tag: %d", res.Status)
		}
		// Another team with the same set has the same file, so the same tag.
		_, other := env.MustTeam(t, "other")
		createSet(t, env, other, set)
		if res := get(other, etag); res.Status != http.StatusNotModified {
			t.Errorf("the same file of another team: %d, want 304", res.Status)
		}
		createSet(t, env, env.RootKey, `{"name":"t","groups":[{"name":"g","rules":[{"record":"c:d","expr":"up"}]}]}`)
		changed := get(env.RootKey, etag)
		if changed.Status != http.StatusOK || changed.Header.Get("ETag") == etag || !strings.Contains(string(changed.Body), "c:d") {
			t.Errorf("a changed file with the old tag: %d, ETag %q\n%s", changed.Status, changed.Header.Get("ETag"), changed.Body)
		}
		// A refusal is a refusal, whatever the tag.
		noSLOs := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig")
		apitest.ExpectError(t, get(noSLOs, "*"), http.StatusForbidden, `"slo:ReadConfig"`)
	})
}
