package api_test

import (
	"net/http"
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
