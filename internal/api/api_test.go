package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const rulesPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"

func TestErrorsHaveTheErrorBody(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{MaxBodyBytes: 4096}, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		cases := []struct {
			name        string
			method      string
			path        string
			auth        string
			contentType string
			body        string
			status      int
			fragments   []string
		}{
			{"unknown path", "GET", "/mgmt/openapi/5/nothing/here", "Bearer " + key, "", "", 404, []string{"/mgmt/openapi/5/nothing/here"}},
			{"unknown version segment", "GET", "/mgmt/openapi/6/recording-rules/recording-rules/v1", "Bearer " + key, "", "", 404, []string{"no operation at /mgmt/openapi/6/recording-rules/recording-rules/v1"}},
			{"wrong method under latest", "PATCH", "/mgmt/openapi/latest/recording-rules/recording-rules/v1", "Bearer " + key, "", "", 405,
				[]string{"PATCH is not allowed on /mgmt/openapi/latest/recording-rules/recording-rules/v1; allowed: DELETE,GET,POST"}},
			{"root", "GET", "/", "", "", "", 404, nil},
			{"wrong method", "PATCH", rulesPath, "Bearer " + key, "", "", 405, []string{"PATCH", "GET"}},
			{"malformed JSON", "POST", rulesPath, "Bearer " + key, "application/json", "{\n  \"name\":", 400, []string{"body: malformed JSON at line 2, column 10: the body ends before the JSON value does"}},
			{"JSON array instead of object", "POST", rulesPath, "Bearer " + key, "application/json", `[]`, 400, []string{"body: must be an object"}},
			{"trailing data", "POST", rulesPath, "Bearer " + key, "application/json", `{"name":"a"} {}`, 400, []string{"body: malformed JSON at line 1, column 14: data after the end of the JSON value"}},
			{"wrong type deep inside", "POST", rulesPath, "Bearer " + key, "application/json",
				`{"name":"a","groups":[{"name":"g"},{"name":"h","rules":[{"record":"r","expr":5}]}]}`, 400,
				[]string{"groups[1].rules[0].expr: must be a string"}},
			{"missing field deep inside", "POST", rulesPath, "Bearer " + key, "application/json",
				`{"name":"a","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]},{"name":"h","rules":[{"record":"r","expr":"up"},{"expr":"up"}]}]}`, 400,
				[]string{"groups[1].rules[1].record: is required"}},
			{"float where integer", "POST", rulesPath, "Bearer " + key, "application/json",
				`{"name":"a","groups":[{"name":"g","interval":60.5}]}`, 400, []string{"groups[0].interval: must be an integer"}},
			{"empty body", "POST", rulesPath, "Bearer " + key, "application/json", "", 400, []string{"body"}},
			{"text content type", "POST", rulesPath, "Bearer " + key, "text/plain", `{"name":"a"}`, 415, []string{"application/json"}},
			{"no content type", "POST", rulesPath, "Bearer " + key, "", `{"name":"a"}`, 415, []string{"Content-Type"}},
			{"oversize body", "POST", rulesPath, "Bearer " + key, "application/json",
				`{"name":"` + strings.Repeat("a", 5000) + `"}`, 413, []string{"4096 bytes"}},
			{"no key", "GET", rulesPath, "", "", "", 401, []string{"Authorization"}},
			{"empty bearer", "GET", rulesPath, "Bearer ", "", "", 401, []string{"Authorization"}},
			{"unknown key", "GET", rulesPath, "Bearer mgmt_unknown", "", "", 401, []string{"not valid"}},
			{"malformed header", "GET", rulesPath, "Basic dXNlcjpwYXNz", "", "", 401, []string{"not valid"}},
			{"operator key is not a team key", "GET", rulesPath, "Bearer " + apitest.OperatorKey, "", "", 401, nil},
			{"team key is not the operator key", "GET", "/admin/v1/teams", "Bearer " + key, "", "", 401, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := env.Do(t, c.method, c.path, c.auth, c.contentType, c.body)
				apitest.ExpectError(t, res, c.status, c.fragments...)
				if res.Header.Get("X-Request-Id") == "" {
					t.Fatal("no X-Request-Id header")
				}
			})
		}
		// None of the failed writes left anything behind.
		res := env.Do(t, "GET", rulesPath, "Bearer "+key, "", "")
		if res.Status != 200 || string(res.Body) != `{"sets":[]}` {
			t.Fatalf("after failed writes: %d %s", res.Status, res.Body)
		}
	})
}

func TestBareAndBearerKeysAreAccepted(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, header := range []string{env.RootKey, "Bearer " + env.RootKey, "bearer " + env.RootKey, "  Bearer   " + env.RootKey + " "} {
			if res := env.Do(t, "GET", rulesPath, header, "", ""); res.Status != http.StatusOK {
				t.Fatalf("Authorization %q: %d %s", header, res.Status, res.Body)
			}
		}
	})
}

func TestUnauthenticatedRequestsAreRefusedBeforeValidation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		res := env.Do(t, "POST", rulesPath, "", "application/json", `{"name":""}`)
		apitest.ExpectError(t, res, 401)
		weak := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig")
		res = env.Do(t, "POST", rulesPath, "Bearer "+weak, "application/json", `{"name":""}`)
		apitest.ExpectError(t, res, 403, "metrics.recording-rules:UpdateConfig")
	})
}

func TestUnauthenticatedRoutes(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for path, want := range map[string]string{
			"/healthz":      `"ok"`,
			"/readyz":       `"ready"`,
			"/openapi.json": `"CreateRecordingRuleSet"`,
			"/openapi.yaml": "operationId: CreateApiKey",
		} {
			res := env.Do(t, "GET", path, "", "", "")
			if res.Status != 200 || !strings.Contains(string(res.Body), want) {
				t.Fatalf("GET %s: %d, body lacks %q", path, res.Status, want)
			}
		}
		res := env.Do(t, "GET", "/metrics", "", "", "")
		for _, want := range []string{
			`mgmtapi_requests_total{operation="none",status="200"}`,
			"mgmtapi_request_duration_seconds_bucket",
			"mgmtapi_requests_in_flight",
			"mgmtapi_db_connections_open",
		} {
			if !strings.Contains(string(res.Body), want) {
				t.Fatalf("/metrics lacks %q", want)
			}
		}
	})
}

func TestReadyzFailsWhenTheDatabaseIsGone(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		if err := env.DB.Close(); err != nil {
			t.Fatal(err)
		}
		apitest.ExpectError(t, env.Do(t, "GET", "/readyz", "", "", ""), 503)
		if res := env.Do(t, "GET", "/healthz", "", "", ""); res.Status != 200 {
			t.Fatalf("/healthz %d", res.Status)
		}
	})
}

// Text that PostgreSQL cannot store is refused alike on every engine, and stores nothing.
func TestNULAndInvalidUTF8AreRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := "Bearer " + env.RootKey
		cases := []struct {
			method, path, body, fragment string
		}{
			{"POST", rulesPath, `{"name":"a\u0000b"}`, "name: must not contain the NUL character"},
			{"POST", rulesPath, `{"name":"ok","groups":[{"name":"g\u0000"}]}`, "groups[0].name: must not contain"},
			{"POST", rulesPath, `{"a\u0000":1,"name":"x"}`, "must not contain"},
			{"POST", rulesPath, "{\"name\":\"\xff\xfe\"}", "body: must be valid UTF-8"},
			{"GET", rulesPath + "/a%00b", "", "path: must be valid UTF-8"},
			{"GET", rulesPath + "/a%ffb", "", "path: must be valid UTF-8"},
			{"DELETE", rulesPath + "?id=a%00", "", "id: must be valid UTF-8"},
			{"PUT", "/mgmt/openapi/5/aaa/api-keys/v3/x", `{"newName":"\u0000"}`, "newName: must not contain"},
		}
		for _, c := range cases {
			ct := ""
			if c.body != "" {
				ct = "application/json"
			}
			apitest.ExpectError(t, env.Do(t, c.method, c.path, key, ct, c.body), 400, c.fragment)
		}
		// An escaped backslash followed by "u0000" is ordinary text.
		res := env.Do(t, "POST", rulesPath, key, "application/json", `{"name":"a\\u0000b"}`)
		if res.Status != 200 {
			t.Fatalf("literal backslash-u0000: %d %s", res.Status, res.Body)
		}
		res = env.Do(t, "GET", rulesPath, key, "", "")
		if strings.Count(string(res.Body), `"name"`) != 1 {
			t.Fatalf("refused requests stored something: %s", res.Body)
		}
	})
}

func TestTooManyQueryParametersAreRefusedByName(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id := "00000000-0000-0000-0000-000000000000"
		path := "/mgmt/openapi/5/incidents/incidents/v1?ids=" + strings.Repeat(id+"&ids=", 10000) + id
		apitest.ExpectError(t, env.JSON(t, "GET", path, env.RootKey, ""), 400, "ids: given 10001 times", "at most 10000")
		ok := "/mgmt/openapi/5/incidents/incidents/v1?ids=" + strings.Repeat(id+"&ids=", 9999) + id
		if res := env.JSON(t, "GET", ok, env.RootKey, ""); res.Status != 200 {
			t.Fatalf("10000 ids: %d %s", res.Status, res.Body)
		}
	})
}

// A message that quotes a long input is cut to the Error schema's 4096 characters, ending in "…".
func TestLongMessagesFitTheErrorSchema(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, c := range []struct{ name, path string }{
			{"one-byte characters", "/mgmt/openapi/5/" + strings.Repeat("x", 10000)},
			{"two-byte characters", "/mgmt/openapi/5/" + strings.Repeat("é", 10000)},
		} {
			res := env.Do(t, "GET", c.path, "Bearer "+env.RootKey, "", "")
			var body struct {
				Code    int
				Message string
			}
			if err := json.Unmarshal(res.Body, &body); err != nil {
				t.Fatalf("%s: %v: %s", c.name, err, res.Body)
			}
			if res.Status != 404 || body.Code != 404 {
				t.Fatalf("%s: %d %s", c.name, res.Status, res.Body)
			}
			if n := utf8.RuneCountInString(body.Message); n != 4096 || !strings.HasSuffix(body.Message, "…") ||
				!strings.HasPrefix(body.Message, "no operation at /mgmt/openapi/5/") {
				t.Errorf("%s: %d characters, %q…%q", c.name, n, body.Message[:40], body.Message[len(body.Message)-10:])
			}
		}
	})
}
