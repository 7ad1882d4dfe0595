package integrations_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	base        = "/mgmt/openapi/latest/integrations/"
	catalogPath = base + "integrations/v1"
	metadata    = base + "metadata/v1"
	testPath    = base + "metadata/v1/test"
	deployed    = base + "integrations/v1/deployed/"
	instances   = base + "integrations/v1/instances/"
	managed     = base + "managed/v1"
	contextual  = base + "contextual-data/v1"
	apiKeys     = "/mgmt/openapi/latest/aaa/api-keys/v3"
)

// metricsCollector is the registration the vendor's Terraform example writes (parameters by name,
// strings, lists and booleans as the provider sends them), with WithAggregations and
// EnrichWithTags left to their defaults.
const metricsCollector = `{"metadata":{"integrationKey":"aws-metrics-collector","version":"0.1.0","integrationParameters":{"parameters":[
	{"key":"ApplicationName","stringValue":"cxsdk"},
	{"key":"SubsystemName","stringValue":"aws-metrics-collector"},
	{"key":"MetricNamespaces","stringList":{"values":["AWS/S3"]}},
	{"key":"AwsRoleArn","stringValue":"arn:aws:iam::123456789012:role/example-role"},
	{"key":"IntegrationName","stringValue":"sdk-integration-setup"},
	{"key":"AwsRegion","stringValue":"eu-north-1"}]}}}`

func save(t *testing.T, env *apitest.Env, path, key, body string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, path, key, body)
	if res.Status != http.StatusOK {
		t.Fatalf("save: %d %s", res.Status, res.Body)
	}
	id := apitest.Decode[struct{ IntegrationID string }](t, res).IntegrationID
	if id == "" {
		t.Fatalf("save answered no id: %s", res.Body)
	}
	return id
}

func decode(t *testing.T, res apitest.Response) map[string]any {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	var v map[string]any
	if err := json.Unmarshal(res.Body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// params returns an instance's parameters by key, each as its one value member.
func params(t *testing.T, list any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, p := range list.([]any) {
		m := map[string]any{}
		for name, v := range p.(map[string]any) {
			m[name] = v
		}
		k, _ := m["key"].(string)
		delete(m, "key")
		if len(m) != 1 {
			t.Fatalf("parameter %s has %d value members: %v", k, len(m), m)
		}
		out[k] = m
	}
	return out
}

func sendDataKey(t *testing.T, env *apitest.Env, key string) (id, value string) {
	t.Helper()
	k := apitest.Decode[struct{ KeyID, Value string }](t, env.JSON(t, http.MethodPost, apiKeys, key,
		`{"name":"shipper","keyPermissions":{"presets":["SendData"]}}`))
	if k.KeyID == "" || k.Value == "" {
		t.Fatal("no send-data key")
	}
	return k.KeyID, k.Value
}

func TestRegisterReadUpdateDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		_, other := env.MustTeam(t, "other")
		id := save(t, env, metadata, key, metricsCollector)

		got := decode(t, env.JSON(t, http.MethodGet, deployed+id, key, ""))
		in := apitest.At(got, "integration").(map[string]any)
		if in["id"] != id || in["definitionKey"] != "aws-metrics-collector" || in["definitionVersion"] != "0.1.0" {
			t.Fatalf("deployed: %v", in)
		}
		ps := params(t, in["parameters"])
		if len(ps) != 8 {
			t.Fatalf("want the 6 sent and the 2 defaults, got %v", ps)
		}
		if apitest.At(ps, "WithAggregations", "booleanValue") != false || apitest.At(ps, "EnrichWithTags", "booleanValue") != true {
			t.Fatalf("defaults not filled: %v", ps)
		}
		if apitest.At(ps, "MetricNamespaces", "stringList", "values", 0) != "AWS/S3" {
			t.Fatalf("list: %v", ps["MetricNamespaces"])
		}
		if apitest.At(in, "integrationStatus", "connectionStatus") != "ACTIVE" {
			t.Fatalf("a managed integration without key parameter is active: %v", in["integrationStatus"])
		}

		// the catalog counts it, the details list it; another team sees neither
		count := func(k string) any {
			for _, it := range decode(t, env.JSON(t, http.MethodGet, catalogPath, k, ""))["integrations"].([]any) {
				if apitest.At(it, "integration", "id") == "aws-metrics-collector" {
					return apitest.At(it, "amountIntegrations")
				}
			}
			return nil
		}
		if count(key) != float64(1) || count(other) != float64(0) {
			t.Fatalf("counts %v %v", count(key), count(other))
		}
		for _, ref := range []string{"aws-metrics-collector", id} {
			reg := apitest.At(decode(t, env.JSON(t, http.MethodGet, catalogPath+"/"+ref, key, "")), "integrationDetail", "default", "registered").([]any)
			if len(reg) != 1 || apitest.At(reg[0], "id") != id {
				t.Fatalf("details by %s: %v", ref, reg)
			}
		}
		reg := apitest.At(decode(t, env.JSON(t, http.MethodGet, catalogPath+"/aws-metrics-collector", other, "")), "integrationDetail", "default", "registered").([]any)
		if len(reg) != 0 {
			t.Fatalf("other team sees %v", reg)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, deployed+id, other, ""), 404, "integration_id", id)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, instances+id, other, ""), 404, id)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, metadata, other, `{"id":"`+id+`",`+metricsCollector[1:]), 404, id)

		// update: another version, a changed parameter; the key cannot change
		upd := strings.Replace(strings.Replace(metricsCollector, `"0.1.0"`, `"0.2.0"`, 1), "eu-north-1", "us-east-1", 1)
		if res := env.JSON(t, http.MethodPut, metadata, key, `{"id":"`+id+`",`+upd[1:]); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		in = apitest.At(decode(t, env.JSON(t, http.MethodGet, deployed+id, key, "")), "integration").(map[string]any)
		if in["definitionVersion"] != "0.2.0" || apitest.At(params(t, in["parameters"]), "AwsRegion", "stringValue") != "us-east-1" ||
			apitest.At(params(t, in["parameters"]), "IntervalSeconds", "numericValue") != float64(300) {
			t.Fatalf("after update: %v", in)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, metadata, key, `{"id":"`+id+`","metadata":{"integrationKey":"aws-resource-catalog","version":"0.1.0","integrationParameters":{"parameters":[{"key":"IntegrationName","stringValue":"x"},{"key":"AwsRoleArn","stringValue":"arn:aws:iam::123456789012:role/x"}]}}}`),
			400, "metadata.integrationKey", "cannot change")

		// an instance on a testing revision makes an upgrade... not available: it is newer
		for _, it := range decode(t, env.JSON(t, http.MethodGet, catalogPath, key, ""))["integrations"].([]any) {
			if apitest.At(it, "integration", "id") == "aws-metrics-collector" && apitest.At(it, "upgradeAvailable") != true {
				t.Fatalf("an instance on another version than the newest GA one: upgradeAvailable %v", apitest.At(it, "upgradeAvailable"))
			}
		}

		if res := env.JSON(t, http.MethodDelete, instances+id, key, ""); res.Status != 200 {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, deployed+id, key, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, instances+id, key, ""), 404)
		if count(key) != float64(0) {
			t.Fatal("deleted instance still counted")
		}
		// the audit log names each change and the instance
		for _, op := range []string{"SaveIntegration", "UpdateIntegration", "DeleteIntegration"} {
			ids := apitest.MustQueryString(t, env.DB, `SELECT resource_ids FROM audit_records WHERE operation = $1`, op)
			if !strings.Contains(ids, id) {
				t.Fatalf("audit record of %s: resource ids %q, want %s", op, ids, id)
			}
		}
	})
}

func TestTestingRevisions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		def := decode(t, env.JSON(t, http.MethodGet, catalogPath+"/definitions/aws-metrics-collector", env.RootKey, ""))
		if n := len(apitest.At(def, "integrationDefinition", "revisions").([]any)); n != 1 {
			t.Fatalf("without testing revisions: %d revisions", n)
		}
		def = decode(t, env.JSON(t, http.MethodGet, catalogPath+"/definitions/aws-metrics-collector?include_testing_revision=true", env.RootKey, ""))
		revs := apitest.At(def, "integrationDefinition", "revisions").([]any)
		if len(revs) != 2 || apitest.At(revs[1], "id") != "0.2.0" {
			t.Fatalf("with testing revisions: %v", revs)
		}
		// the fields are typed as the catalog file says
		for _, f := range apitest.At(revs[1], "fields").([]any) {
			switch apitest.At(f, "name") {
			case "AwsRegion":
				if apitest.At(f, "type") != "AWS_REGION_SELECT" || apitest.At(f, "selection", "options", 0) != "us-east-1" {
					t.Fatalf("AwsRegion: %v", f)
				}
			case "IntervalSeconds":
				if apitest.At(f, "singleNumber", "defaultValue") != float64(300) || apitest.At(f, "required") != false {
					t.Fatalf("IntervalSeconds: %v", f)
				}
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, catalogPath+"/definitions/no-such-thing", env.RootKey, ""), 404, "no-such-thing")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, catalogPath+"/definitions/github-contextual-data", env.RootKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, contextual+"/definitions/aws-sqs", env.RootKey, ""), 404)
	})
}

// TestParameterRules: every refused registration names the parameter and the rule, and stores
// nothing.
func TestParameterRules(t *testing.T) {
	reg := func(key, version, parameters string) string {
		return `{"metadata":{"integrationKey":"` + key + `","version":"` + version + `","integrationParameters":{"parameters":[` + parameters + `]}}}`
	}
	const (
		name = `{"key":"IntegrationName","stringValue":"catalog"}`
		arn  = `{"key":"AwsRoleArn","stringValue":"arn:aws:iam::123456789012:role/S3Access"}`
	)
	cases := []struct {
		name, body string
		fragments  []string
	}{
		{"no metadata", `{}`, []string{"metadata: required"}},
		{"no key", `{"metadata":{"version":"1.0.0"}}`, []string{"metadata.integrationKey: required"}},
		{"unknown integration", reg("nope", "1.0.0", ""), []string{"metadata.integrationKey", `"nope"`}},
		{"contextual key in the integration service", reg("github-contextual-data", "1.0.0", ""), []string{"metadata.integrationKey", "github-contextual-data"}},
		{"unknown version", reg("aws-resource-catalog", "9.9.9", ""), []string{"metadata.version", `"9.9.9"`, "0.1.0"}},
		{"missing required", reg("aws-resource-catalog", "0.1.0", name), []string{`"AwsRoleArn" is required`}},
		{"unknown parameter", reg("aws-resource-catalog", "0.1.0", name+","+arn+`,{"key":"Colour","stringValue":"red"}`), []string{"parameters[2].key", `"Colour"`, "AwsRoleArn"}},
		{"twice", reg("aws-resource-catalog", "0.1.0", name+","+name+","+arn), []string{"parameters[1].key", "twice"}},
		{"no value", reg("aws-resource-catalog", "0.1.0", name+`,{"key":"AwsRoleArn"}`), []string{"parameters[1]", `"AwsRoleArn" has no value`}},
		{"two values", reg("aws-resource-catalog", "0.1.0", name+`,{"key":"AwsRoleArn","stringValue":"a","booleanValue":true}`), []string{"parameters[1]", "stringValue and booleanValue"}},
		{"wrong kind", reg("aws-resource-catalog", "0.1.0", name+`,{"key":"AwsRoleArn","booleanValue":true}`), []string{"parameters[1].booleanValue", "TEXT", "stringValue"}},
		{"pattern", reg("aws-resource-catalog", "0.1.0", name+`,{"key":"AwsRoleArn","stringValue":"role"}`), []string{"parameters[1]", `"AwsRoleArn"`, "does not match the pattern"}},
		{"option", strings.Replace(metricsCollector, "eu-north-1", "mars-1", 1), []string{"parameters[5]", `"AwsRegion"`, `"mars-1" is not one of the options`}},
		{"list item pattern", strings.Replace(metricsCollector, `"AWS/S3"`, `"AWS/S3","bad space"`, 1), []string{"parameters[2]", `"MetricNamespaces"`, "item 1"}},
		{"JSON", reg("generic-webhook", "1.0.0", name+`,{"key":"WebhookUrl","stringValue":"https://example.com/h"},{"key":"Headers","stringValue":"{nope"}`), []string{"parameters[2]", `"Headers"`, "JSON"}},
		{"api key not of the team", reg("aws-sqs", "1.0.0", name+`,{"key":"ApplicationName","stringValue":"a"},{"key":"SubsystemName","stringValue":"s"},{"key":"SqsQueueName","stringValue":"q"},{"key":"AwsRegion","stringValue":"eu-west-1"},{"key":"ApiKey","stringValue":"cxtp_not-a-key"}`), []string{"parameters[5]", `"ApiKey"`, "not a send-data key"}},
		{"secret placeholder without a stored secret", `{"metadata":{"integrationKey":"gcp-metrics","version":"1.0.0","integrationParameters":{"parameters":[` + name + `,{"key":"ApplicationName","stringValue":"a"},{"key":"SubsystemName","stringValue":"s"},{"key":"ServiceAccountKey","sensitiveData":{}},{"key":"MetricPrefixes","stringList":{"values":[]}}]}}}`, []string{"parameters[3].sensitiveData", `"ServiceAccountKey"`, "no stored secret"}},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, env.JSON(t, http.MethodPost, metadata, env.RootKey, c.body), 400, c.fragments...)
				// the test checks the same way
				body := strings.Replace(c.body, `"metadata"`, `"integrationData"`, 1)
				frag := append([]string{}, c.fragments...)
				for i := range frag {
					frag[i] = strings.Replace(frag[i], "metadata", "integrationData", 1)
				}
				apitest.ExpectError(t, env.JSON(t, http.MethodPost, testPath, env.RootKey, body), 400, frag...)
			})
		}
		if n := apitest.MustQueryString(t, env.DB, `SELECT CAST(COUNT(*) AS TEXT) FROM integration_instances`); n != "0" {
			t.Fatalf("refused registrations stored %s instances", n)
		}
	})
}

// TestSecretsAreMasked: a secret is answered as the placeholder, never by value; sent back as the
// placeholder it keeps the stored value; a contextual data instance behaves alike.
func TestSecretsAreMasked(t *testing.T) {
	const token = "ghp_verysecret0123456789"
	body := func(secret string) string {
		return `{"metadata":{"integrationKey":"github-contextual-data","version":"1.0.0","integrationParameters":{"parameters":[
			{"key":"IntegrationName","stringValue":"gh"},{"key":"ApplicationName","stringValue":"github"},
			{"key":"SubsystemName","stringValue":"events"},{"key":"GithubToken",` + secret + `}]}}}`
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		id := save(t, env, contextual, env.RootKey, body(`"stringValue":"`+token+`"`))
		stored := func() string {
			return apitest.MustQueryString(t, env.DB, `SELECT document FROM integration_instances WHERE id = $1`, id)
		}
		details := env.JSON(t, http.MethodGet, contextual+"/github-contextual-data", env.RootKey, "")
		if strings.Contains(string(details.Body), token) {
			t.Fatalf("the secret is answered: %s", details.Body)
		}
		reg := apitest.At(decode(t, details), "integrationDetail", "default", "registered", 0)
		if got := params(t, apitest.At(reg, "parameters"))["GithubToken"]; apitest.At(got, "sensitiveData") == nil {
			t.Fatalf("secret answered as %v", got)
		}
		if !strings.Contains(stored(), token) {
			t.Fatal("the secret is not stored")
		}
		// sent back as the placeholder, the stored secret stays; sent anew, it is replaced
		upd := `{"integrationId":"` + id + `",` + body(`"sensitiveData":{}`)[1:]
		if res := env.JSON(t, http.MethodPut, contextual, env.RootKey, upd); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if !strings.Contains(stored(), token) {
			t.Fatal("the placeholder lost the stored secret")
		}
		// the test of the stored instance takes the secret from it
		test := `{"integrationData":` + strings.TrimSuffix(strings.TrimPrefix(body(`"sensitiveData":{}`), `{"metadata":`), "}") + `}`
		if res := decode(t, env.JSON(t, http.MethodPost, contextual+"/test/"+id, env.RootKey, test)); apitest.At(res, "result", "success") == nil {
			t.Fatalf("test: %v", res)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, contextual+"/test/github-contextual-data", env.RootKey, test), 400, "GithubToken", "no stored secret")
		upd = `{"integrationId":"` + id + `",` + body(`"stringValue":"ghp_other"`)[1:]
		if res := env.JSON(t, http.MethodPut, contextual, env.RootKey, upd); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if strings.Contains(stored(), token) || !strings.Contains(stored(), "ghp_other") {
			t.Fatal("the new secret did not replace the old one")
		}
		// the contextual instance is not an integration instance, and the reverse
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, deployed+id, env.RootKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, instances+id, env.RootKey, ""), 404)
		if res := env.JSON(t, http.MethodDelete, contextual+"/"+id, env.RootKey, ""); res.Status != 200 {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, contextual+"/"+id, env.RootKey, ""), 404)
	})
}

// TestAPIKeyParameters: an API key parameter takes a send-data key of the team by value or id,
// is stored and answered by id, and a managed integration's status follows the key.
func TestAPIKeyParameters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		keyID, keyValue := sendDataKey(t, env, env.RootKey)
		keys := decode(t, env.JSON(t, http.MethodGet, managed, env.RootKey, ""))
		if apitest.At(keys, "integrationKeys", 0) != keyID || len(keys["integrationKeys"].([]any)) != 1 {
			t.Fatalf("managed keys: %v, want [%s]", keys, keyID)
		}
		body := strings.Replace(metricsCollector, `{"key":"AwsRegion"`, `{"key":"ApiKey","apiKey":{"value":"`+keyValue+`"}},{"key":"AwsRegion"`, 1)
		id := save(t, env, metadata, env.RootKey, body)
		res := env.JSON(t, http.MethodGet, deployed+id, env.RootKey, "")
		if strings.Contains(string(res.Body), keyValue) {
			t.Fatal("the key's value is answered")
		}
		in := apitest.At(decode(t, res), "integration")
		if got := apitest.At(params(t, apitest.At(in, "parameters")), "ApiKey", "apiKey", "id"); got != keyID {
			t.Fatalf("api key answered as %v, want id %s", got, keyID)
		}
		status := func() map[string]any {
			return decode(t, env.JSON(t, http.MethodGet, managed+"/"+id, env.RootKey, ""))
		}
		if s := status(); apitest.At(s, "integrationId") != id || apitest.At(s, "status", "connectionStatus") != "ACTIVE" {
			t.Fatalf("status: %v", s)
		}
		if res := env.JSON(t, http.MethodPut, apiKeys+"/"+keyID, env.RootKey, `{"isActive":false}`); res.Status != 200 {
			t.Fatalf("deactivate: %d %s", res.Status, res.Body)
		}
		if s := status(); apitest.At(s, "status", "connectionStatus") != "FAILING" || !strings.Contains(apitest.At(s, "status", "messages", 0).(string), "deactivated") {
			t.Fatalf("status after deactivation: %v", s)
		}
		// by id alone, the update keeps naming the key
		upd := `{"id":"` + id + `",` + strings.Replace(body, `"value":"`+keyValue+`"`, `"id":"`+keyID+`"`, 1)[1:]
		if res := env.JSON(t, http.MethodPut, metadata, env.RootKey, upd); res.Status != 200 {
			t.Fatalf("update by key id: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, apiKeys+"/"+keyID, env.RootKey, ""); res.Status != 200 {
			t.Fatalf("delete key: %d %s", res.Status, res.Body)
		}
		if s := status(); !strings.Contains(apitest.At(s, "status", "messages", 0).(string), "no longer exists") {
			t.Fatalf("status after deletion: %v", s)
		}
		// another team's key is not a key of this team; a non-managed instance has no managed status
		_, other := env.MustTeam(t, "other")
		_, otherValue := sendDataKey(t, env, other)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, metadata, env.RootKey, strings.Replace(body, keyValue, otherValue, 1)), 400, `"ApiKey"`, "not a send-data key")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, managed+"/"+id, other, ""), 404)
		hook := save(t, env, metadata, env.RootKey, `{"metadata":{"integrationKey":"generic-webhook","version":"1.0.0","integrationParameters":{"parameters":[{"key":"IntegrationName","stringValue":"h"},{"key":"WebhookUrl","stringValue":"https://example.com/h"}]}}}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, managed+"/"+hook, env.RootKey, ""), 404, "not a managed integration")
	})
}

// receiver counts the requests it gets and answers status.
type receiver struct {
	mu     sync.Mutex
	bodies []string
	status int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, req.Method+" "+string(b))
	w.WriteHeader(r.status)
}

// TestTestSendsOneRequest: the test of an integration whose revision names an HTTP endpoint posts
// one request there and answers its outcome; the outbound policy applies.
func TestTestSendsOneRequest(t *testing.T) {
	rcv := &receiver{status: http.StatusNoContent}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	body := func(u string) string {
		return `{"integrationData":{"integrationKey":"generic-webhook","version":"1.0.0","integrationParameters":{"parameters":[{"key":"IntegrationName","stringValue":"h"},{"key":"WebhookUrl","stringValue":"` + u + `"}]}}}`
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		rcv.mu.Lock()
		rcv.bodies, rcv.status = nil, http.StatusNoContent
		rcv.mu.Unlock()
		res := decode(t, env.JSON(t, http.MethodPost, testPath, env.RootKey, body(srv.URL+"/hook")))
		if apitest.At(res, "result", "success") == nil {
			t.Fatalf("test: %v", res)
		}
		rcv.mu.Lock()
		if len(rcv.bodies) != 1 || !strings.HasPrefix(rcv.bodies[0], `POST {"integration":"generic-webhook"`) {
			t.Fatalf("receiver got %v", rcv.bodies)
		}
		rcv.status = http.StatusInternalServerError
		rcv.mu.Unlock()
		res = decode(t, env.JSON(t, http.MethodPost, testPath, env.RootKey, body(srv.URL+"/hook")))
		if msg, _ := apitest.At(res, "result", "failure", "errorMessage").(string); !strings.Contains(msg, `"WebhookUrl"`) || !strings.Contains(msg, "500") {
			t.Fatalf("failure: %v", res)
		}
		// the contextual data test reaches its endpoint the same way
		ctx := `{"integrationData":{"integrationKey":"statuspage-contextual-data","version":"1.0.0","integrationParameters":{"parameters":[{"key":"IntegrationName","stringValue":"s"},{"key":"ApplicationName","stringValue":"a"},{"key":"SubsystemName","stringValue":"b"},{"key":"StatusPageUrl","stringValue":"` + srv.URL + `"}]}}}`
		res = decode(t, env.JSON(t, http.MethodPost, contextual+"/test/statuspage-contextual-data", env.RootKey, ctx))
		if apitest.At(res, "result", "failure") == nil {
			t.Fatalf("contextual test against a failing endpoint: %v", res)
		}
		rcv.mu.Lock()
		if len(rcv.bodies) != 3 {
			t.Fatalf("receiver got %d requests, want 3", len(rcv.bodies))
		}
		rcv.mu.Unlock()
	})
	apitest.EnginesWith(t, apitest.Options{PublicDeliveriesOnly: true}, func(t *testing.T, env *apitest.Env) {
		res := decode(t, env.JSON(t, http.MethodPost, testPath, env.RootKey, body(srv.URL+"/hook")))
		if msg, _ := apitest.At(res, "result", "failure", "errorMessage").(string); !strings.Contains(msg, `"WebhookUrl"`) {
			t.Fatalf("a loopback endpoint under the public-only policy: %v", res)
		}
	})
}

func TestTemplates(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		tmpl := func(query string) string {
			return apitest.At(decode(t, env.JSON(t, http.MethodGet, base+"template/v1?"+query, env.RootKey, "")), "templateUrl").(string)
		}
		if got := tmpl("integration_id=aws-sqs"); got != "https://templates.mgmtapi.invalid/aws-sqs/1.0.0/template.yaml" {
			t.Fatalf("aws-sqs: %s", got)
		}
		got, err := url.Parse(tmpl("integration_id=azure-eventhub&common_arm_params[logsUrl]=https://logs.example.com&common_arm_params.cgxDomain=eu2"))
		if err != nil || got.Query().Get("logsUrl") != "https://logs.example.com" || got.Query().Get("cgxDomain") != "eu2" {
			t.Fatalf("azure: %v %v", got, err)
		}
		got, err = url.Parse(tmpl("integration_id=azure-eventhub&logsUrl=https://flat.example.com"))
		if err != nil || got.Query().Get("logsUrl") != "https://flat.example.com" {
			t.Fatalf("azure, the form style: %v %v", got, err)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, base+"template/v1?integration_id=azure-eventhub&common_arm_params[apiKey]=nope", env.RootKey, ""), 400, "common_arm_params.apiKey")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, base+"template/v1?integration_id=kubernetes-collector", env.RootKey, ""), 404, "no deployment template")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, base+"template/v1", env.RootKey, ""), 400, "integration_id: required")
	})
}

func TestRumVersions(t *testing.T) {
	rum := func(app, version string) string {
		return `{"metadata":{"integrationKey":"rum-browser","version":"1.0.0","integrationParameters":{"parameters":[{"key":"ApplicationName","stringValue":"` + app + `"},{"key":"Version","stringValue":"` + version + `"}]}}}`
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		save(t, env, metadata, env.RootKey, rum("shop", "1.0.0"))
		save(t, env, metadata, env.RootKey, rum("shop", "1.1.0"))
		save(t, env, metadata, env.RootKey, rum("shop", "1.1.0"))
		save(t, env, metadata, env.RootKey, rum("admin", "7"))
		_, other := env.MustTeam(t, "other")
		save(t, env, metadata, other, rum("shop", "9.9.9"))
		versions := func(key, query string) []string {
			var out []string
			for _, v := range apitest.At(decode(t, env.JSON(t, http.MethodGet, catalogPath+"/rum/app-versions"+query, key, "")), "versionData", "versions").([]any) {
				out = append(out, apitest.At(v, "version").(string))
			}
			return out
		}
		got := versions(env.RootKey, "?application_name=shop")
		if len(got) != 2 || got[0] != "1.1.0" || got[1] != "1.0.0" {
			t.Fatalf("shop versions %v, want [1.1.0 1.0.0]", got)
		}
		if got := versions(env.RootKey, ""); len(got) != 3 {
			t.Fatalf("every application's versions: %v", got)
		}
		if got := versions(other, "?application_name=shop"); len(got) != 1 || got[0] != "9.9.9" {
			t.Fatalf("other team: %v", got)
		}
		res := decode(t, env.JSON(t, http.MethodPost, catalogPath+"/rum/sync", env.RootKey, `{"force":true}`))
		if res["syncExecuted"] != false || res["syncedAt"] == nil {
			t.Fatalf("sync: %v", res)
		}
	})
}
