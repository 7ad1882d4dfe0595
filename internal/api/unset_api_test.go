package api_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestNullIsNotSet: the examples of a null member, each answered as if the member had
// not been written (they answered "400 … must be an array/object" before).
func TestNullIsNotSet(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		// "policies": null on a span-policy overwrite is an overwrite with no policies.
		res := env.JSON(t, http.MethodPut, "/mgmt/openapi/4/dataplans/span-policies/v1", key, `{"policies": null}`)
		if res.Status != http.StatusOK {
			t.Fatalf("policies null: %d %s", res.Status, res.Body)
		}
		if got := apitest.Decode[struct{ CreateResponses []any }](t, res).CreateResponses; len(got) != 0 {
			t.Fatalf("policies null: created %v", got)
		}
		// "severities": null in a log policy's rules.
		res = env.JSON(t, http.MethodPost, "/mgmt/openapi/3/dataplans/policies/v1", key,
			`{"name":"errors","priority":"PRIORITY_TYPE_LOW","description":null,"logRules":{"severities":null}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("severities null: %d %s", res.Status, res.Body)
		}
		if !strings.Contains(string(res.Body), `"logRules":{"severities":[]}`) {
			t.Fatalf("severities null: not answered as none: %s", res.Body)
		}
		// "labels": null on a recording rule.
		res = env.JSON(t, http.MethodPost, "/mgmt/openapi/5/recording-rules/recording-rules/v1", key,
			`{"name":"rates","groups":[{"name":"g","interval":60,"rules":[{"record":"job:up:sum","expr":"sum by (job) (up)","labels":null}]}]}`)
		if res.Status != http.StatusOK {
			t.Fatalf("labels null: %d %s", res.Status, res.Body)
		}
		// A real type error is still named.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/recording-rules/recording-rules/v1", key,
			`{"name":"rates","groups":[{"name":"g","rules":[{"record":"job:up:sum","expr":"up","labels":5}]}]}`),
			400, "groups[0].rules[0].labels: must be an object")
		// A required member sent null is missing.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/recording-rules/recording-rules/v1", key,
			`{"name":null}`), 400, "name: is required")
	})
}

// nullRefused is the wording of a value refused for its JSON type.
var nullRefused = regexp.MustCompile(`: must be (a|an) (string|array|object|integer|number|boolean)`)

// TestEveryNullIsNotSet reads api/openapi.yaml and, for every operation with a request body,
// sends its example with one declared, typed, non-nullable property at a time (at any depth,
// array items aside) set to null. None may be refused for its type ("<path>: must be …"), and none may fail the
// server: the null is not set, as if the property had not been sent.
func TestEveryNullIsNotSet(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		sent := 0
		for _, op := range ops {
			if op.Body == nil {
				continue
			}
			target := requestTarget(doc, op)
			base := op.Example
			if base == nil {
				base = doc.Minimal(op.Body)
			}
			for _, p := range doc.PropertyPaths(op.Body) {
				schema := doc.Resolve(p[len(p)-1].Schema)
				if wrong, _ := wrongValue(schema); wrong == nil || schema["nullable"] == true || p[len(p)-1].Index {
					continue // free-form, null is a value there, or an array's item (a null item is refused)
				}
				raw, err := json.Marshal(doc.SetPath(base, p, nil))
				if err != nil {
					t.Fatalf("%s: %v", op.ID, err)
				}
				sent++
				res := env.Do(t, op.Method, target, authorization(env, op), "application/json", string(raw))
				var got struct{ Message string }
				_ = json.Unmarshal(res.Body, &got)
				if res.Status >= 500 || nullRefused.MatchString(got.Message) && strings.HasPrefix(got.Message, p.String()+": ") {
					t.Errorf("%s (%s %s), %s null\n body %s\n answer %d %s",
						op.ID, op.Method, target, p, short(string(raw), 400), res.Status, short(string(res.Body), 300))
				}
			}
		}
		if sent < 200 {
			t.Errorf("only %d bodies with a null were sent; reading the document went wrong", sent)
		}
		t.Logf("%s: %d bodies with a null", env.Engine, sent)
	})
}
