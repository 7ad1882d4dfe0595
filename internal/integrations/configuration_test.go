package integrations_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestConfigurationAsCode: instances are exported without their secrets, re-applied to their
// team unchanged (placeholders keep the secrets), pruned, and refused for a team that has not
// the secret, naming the parameter.
func TestConfigurationAsCode(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		const token = "ghp_exported_never"
		id := save(t, env, metadata, key, metricsCollector)
		cid := save(t, env, contextual, key, `{"metadata":{"integrationKey":"github-contextual-data","version":"1.0.0","integrationParameters":{"parameters":[
			{"key":"IntegrationName","stringValue":"gh"},{"key":"ApplicationName","stringValue":"github"},
			{"key":"SubsystemName","stringValue":"events"},{"key":"GithubToken","stringValue":"`+token+`"}]}}}`)
		exported := env.Get(t, "/config/v1/export", key, map[string]string{"Accept": "application/json"})
		if exported.Status != 200 {
			t.Fatalf("export: %d %s", exported.Status, exported.Body)
		}
		if strings.Contains(string(exported.Body), token) {
			t.Fatal("the export carries the secret")
		}
		var doc map[string]any
		if err := json.Unmarshal(exported.Body, &doc); err != nil {
			t.Fatal(err)
		}
		if apitest.At(doc, "integrations", 0, "id") != id || apitest.At(doc, "contextualDataIntegrations", 0, "id") != cid {
			t.Fatalf("export: %s", exported.Body)
		}
		only := func(d map[string]any) string {
			b, _ := json.Marshal(map[string]any{"version": 1, "integrations": d["integrations"], "contextualDataIntegrations": d["contextualDataIntegrations"]})
			return string(b)
		}
		apply := func(k, query, body string) apitest.Response {
			return env.Do(t, http.MethodPost, "/config/v1/apply"+query, "Bearer "+k, "application/json", body)
		}
		res := apply(key, "", only(doc))
		if res.Status != 200 || strings.Contains(string(res.Body), `"action":"update"`) || strings.Contains(string(res.Body), `"action":"create"`) {
			t.Fatalf("re-apply of the export: %d %s", res.Status, res.Body)
		}
		if !strings.Contains(apitest.MustQueryString(t, env.DB, `SELECT document FROM integration_instances WHERE id = $1`, cid), token) {
			t.Fatal("the apply lost the stored secret")
		}
		// another team cannot take the placeholder: the secret is not in the document
		_, other := env.MustTeam(t, "other")
		apitest.ExpectError(t, apply(other, "", only(doc)), 400, "GithubToken", "no stored secret")
		// a change and a prune
		doc["integrations"].([]any)[0].(map[string]any)["metadata"].(map[string]any)["version"] = "0.2.0"
		doc["contextualDataIntegrations"] = []any{}
		if res := apply(key, "?prune=true", only(doc)); res.Status != 200 {
			t.Fatalf("apply with prune: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, contextual+"/"+cid, key, ""), 404)
		in := apitest.At(decode(t, env.JSON(t, http.MethodGet, deployed+id, key, "")), "integration", "definitionVersion")
		if in != "0.2.0" {
			t.Fatalf("applied version %v", in)
		}
	})
}
