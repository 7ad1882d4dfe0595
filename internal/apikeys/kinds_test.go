package apikeys_test

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	sendDataPath = "/mgmt/openapi/5/aaa/send-data-keys/v3"
	membersPath  = "/mgmt/openapi/5/aaa/api-keys/v3"
	ingestPath   = "/ingest/alertmanager/v1"
)

const notification = `{"version":"4","groupKey":"{}:{alertname=\"DiskFull\"}","status":"firing",
	"receiver":"ops","groupLabels":{"alertname":"DiskFull"},"commonLabels":{"alertname":"DiskFull"},
	"commonAnnotations":{},"externalURL":"http://alertmanager:9093","alerts":[{"status":"firing",
	"labels":{"alertname":"DiskFull","severity":"critical"},"annotations":{"summary":"disk full"},
	"startsAt":"2026-11-20T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"f1"}]}`

func listKeyIDs(t *testing.T, env *apitest.Env, path string) []string {
	t.Helper()
	res := env.JSON(t, "GET", path, env.RootKey, "")
	got := apitest.Decode[oas.ApiKeyList](t, res)
	ids := []string{}
	for _, k := range got.Keys {
		ids = append(ids, k.ID)
	}
	return ids
}

// managementOperations lists every operation of the document that a team key can call, except
// ingestion, with its path parameters filled by a placeholder.
func managementOperations(t *testing.T) [][2]string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	var ops [][2]string
	for path, item := range doc.Paths {
		for method, node := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Permission string `yaml:"x-permission"`
			}
			if err := node.Decode(&op); err != nil {
				t.Fatal(err)
			}
			if op.Permission == "operator" || op.Permission == "contextual-data:SendData" {
				continue
			}
			ops = append(ops, [2]string{strings.ToUpper(method), param.ReplaceAllString(path, "00000000-0000-4000-8000-000000000000")})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i][1]+ops[i][0] < ops[j][1]+ops[j][0] })
	if len(ops) < 100 {
		t.Fatalf("only %d management operations found", len(ops))
	}
	return ops
}

// A key created with the SendData preset alone is a send-data key: listed apart from the API keys,
// accepted by ingestion, refused with 403 by every management operation, and gone when deleted.
func TestSendDataKeyOnlyIngests(t *testing.T) {
	ops := managementOperations(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		api := create(t, env, env.RootKey, `{"name":"ops","keyPermissions":{"presets":["full-access"]}}`)
		send := create(t, env, env.RootKey, `{"name":"collector","hashed":false,
			"keyPermissions":{"presets":["SendData","SendData"]},"owner":{"teamId":1}}`)

		if ids := listKeyIDs(t, env, sendDataPath); len(ids) != 1 || ids[0] != send.KeyID {
			t.Fatalf("send-data keys %v, want [%s]", ids, send.KeyID)
		}
		for _, id := range listKeyIDs(t, env, listPath) {
			if id == send.KeyID {
				t.Fatal("the API key list shows the send-data key")
			}
		}
		info := apitest.Decode[oas.ApiKeyEnvelope](t, env.JSON(t, "GET", keyPath+send.KeyID, env.RootKey, "")).KeyInfo
		if info.Name != "collector" || !info.Active || len(info.KeyPermissions.Permissions) != 0 ||
			len(info.KeyPermissions.Presets) != 1 || info.KeyPermissions.Presets[0].Name != "SendData" ||
			!slices.Equal(info.KeyPermissions.Presets[0].Permissions, auth.PresetPermissions(auth.SendData)) ||
			!slices.Contains(info.KeyPermissions.Presets[0].Permissions, auth.IngestPermission) {
			t.Fatalf("send-data key info %+v", info)
		}

		if res := env.JSON(t, "POST", ingestPath, send.Value, notification); res.Status != 200 {
			t.Fatalf("ingestion with a send-data key: %d %s", res.Status, res.Body)
		}
		// Another team sees neither the key nor its ingestion.
		_, otherKey := env.MustTeam(t, "other")
		if res := env.JSON(t, "GET", sendDataPath, otherKey, ""); res.Status != 200 || string(res.Body) != `{"keys":[]}` {
			t.Fatalf("other team's send-data keys: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "GET", keyPath+send.KeyID, otherKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, "DELETE", keyPath+send.KeyID, otherKey, ""), 404)
		if res := env.JSON(t, "POST", "/mgmt/openapi/5/cases/cases/v1", otherKey, "{}"); res.Status != 200 || strings.Contains(string(res.Body), "DiskFull") {
			t.Fatalf("other team's cases: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, "POST", "/mgmt/openapi/5/cases/cases/v1", env.RootKey, "{}"); res.Status != 200 || !strings.Contains(string(res.Body), "DiskFull") {
			t.Fatalf("the send-data key's team has no case from its notification: %d %s", res.Status, res.Body)
		}
		for _, op := range ops {
			res := env.JSON(t, op[0], op[1], send.Value, "{}")
			apitest.ExpectError(t, res, 403, "send-data key")
			// The same call with an API key gets past authentication.
			if res := env.JSON(t, op[0], op[1], api.Value, "{}"); res.Status == 401 || res.Status == 403 {
				t.Fatalf("%s %s with a full-access key: %d %s", op[0], op[1], res.Status, res.Body)
			}
		}

		// Deactivated, then deleted: ingestion refuses it.
		if res := env.JSON(t, "PUT", keyPath+send.KeyID, env.RootKey, `{"isActive":false,"newName":"old collector"}`); res.Status != 200 {
			t.Fatalf("deactivate: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "POST", ingestPath, send.Value, notification), 401, "deactivated")
		if res := env.JSON(t, "DELETE", keyPath+send.KeyID, env.RootKey, ""); res.Status != 200 {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "POST", ingestPath, send.Value, notification), 401)
		if ids := listKeyIDs(t, env, sendDataPath); len(ids) != 0 {
			t.Fatalf("send-data keys after delete %v", ids)
		}
	})
}

// The SendData preset cannot be mixed with other grants, and no update changes a key's kind.
func TestSendDataKeyRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, c := range []struct{ body, where string }{
			{`{"name":"k","keyPermissions":{"presets":["SendData","slos"]}}`, "keyPermissions.presets[1]"},
			{`{"name":"k","keyPermissions":{"presets":["alertmanager","SendData"]}}`, "keyPermissions.presets[0]"},
			{`{"name":"k","keyPermissions":{"presets":["SendData"],"permissions":["slo:ReadConfig"]}}`, "keyPermissions.permissions"},
			{`{"name":"k","keyPermissions":{"presets":["SendData"]},
				"accessPolicy":"{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{}},\"rules\":[]}"}`, "accessPolicy"},
		} {
			apitest.ExpectError(t, env.JSON(t, "POST", createPath, env.RootKey, c.body), 400, c.where)
		}
		if ids := listKeyIDs(t, env, sendDataPath); len(ids) != 0 {
			t.Fatalf("refused creates stored keys: %v", ids)
		}

		send := create(t, env, env.RootKey, `{"name":"collector","keyPermissions":{"presets":["SendData"]}}`)
		for _, c := range []struct{ body, where string }{
			{`{"permissions":{"permissions":["slo:ReadConfig"]}}`, "permissions"},
			{`{"presets":{"presets":["full-access"]}}`, "presets"},
			{`{"presets":{"presets":["SendData"]}}`, "presets"},
			{`{"accessPolicy":"{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{}},\"rules\":[]}"}`, "accessPolicy"},
			{`{"newName":"renamed","presets":{"presets":["slos"]}}`, "presets"},
		} {
			apitest.ExpectError(t, env.JSON(t, "PUT", keyPath+send.KeyID, env.RootKey, c.body), 400, c.where)
		}
		info := apitest.Decode[oas.ApiKeyEnvelope](t, env.JSON(t, "GET", keyPath+send.KeyID, env.RootKey, "")).KeyInfo
		if info.Name != "collector" || len(info.KeyPermissions.Presets) != 1 {
			t.Fatalf("a refused update changed the key: %+v", info)
		}
		apitest.ExpectError(t, env.JSON(t, "GET", listPath, send.Value, ""), 403, "send-data key")

		api := create(t, env, env.RootKey, `{"name":"ops","keyPermissions":{"presets":["slos"]}}`)
		apitest.ExpectError(t, env.JSON(t, "PUT", keyPath+api.KeyID, env.RootKey,
			`{"presets":{"presets":["slos","SendData"]}}`), 400, "presets.presets[1]", "SendData")
		if res := env.JSON(t, "GET", "/mgmt/openapi/4/slo/slos/v1", api.Value, ""); res.Status != 200 {
			t.Fatalf("the API key after a refused update: %d %s", res.Status, res.Body)
		}
		// An API key holding the ingest permission may still ingest, and stays an API key.
		ingest := create(t, env, env.RootKey, `{"name":"am","keyPermissions":{"presets":["alertmanager"]}}`)
		if res := env.JSON(t, "POST", ingestPath, ingest.Value, notification); res.Status != 200 {
			t.Fatalf("ingestion with an API key: %d %s", res.Status, res.Body)
		}
		if ids := listKeyIDs(t, env, sendDataPath); len(ids) != 1 {
			t.Fatalf("send-data keys %v", ids)
		}
	})
}

// The team members' keys are the team's keys that a user owns, by user and then by age; keys of
// the team itself, and other teams' keys, are not among them.
func TestTeamMembersApiKeys(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		empty := apitest.Decode[oas.TeamMembersApiKeysResponse](t, env.JSON(t, "GET", membersPath, env.RootKey, ""))
		if len(empty.Keys) != 0 {
			t.Fatalf("no user-owned keys yet, got %+v", empty.Keys)
		}
		bob := create(t, env, env.RootKey, `{"name":"bob ci","keyPermissions":{"permissions":["case:Read"],"presets":["slos"]},"owner":{"userId":"bob"}}`)
		create(t, env, env.RootKey, `{"name":"team key","keyPermissions":{"permissions":["case:Read"]}}`)
		env.Clock.Advance(time.Second)
		alice := create(t, env, env.RootKey, `{"name":"alice","owner":{"userId":"alice"}}`)
		env.Clock.Advance(time.Second)
		bobSend := create(t, env, env.RootKey, `{"name":"bob collector","keyPermissions":{"presets":["SendData"]},"owner":{"userId":"bob"}}`)
		_, otherKey := env.MustTeam(t, "other")
		create(t, env, otherKey, `{"name":"carol","owner":{"userId":"carol"}}`)

		env.Clock.Advance(time.Minute)
		for _, body := range []string{`{"isActive":false}`, `{"isActive":true}`} {
			if res := env.JSON(t, "PUT", keyPath+alice.KeyID, env.RootKey, body); res.Status != 200 {
				t.Fatalf("update: %d %s", res.Status, res.Body)
			}
		}

		res := env.JSON(t, "GET", membersPath, env.RootKey, "")
		got := apitest.Decode[oas.TeamMembersApiKeysResponse](t, res)
		var order []string
		for _, k := range got.Keys {
			order = append(order, k.ApiKey.Owner.User.UserId+"/"+k.ApiKey.KeyName)
		}
		if strings.Join(order, ",") != "alice/alice,bob/bob ci,bob/bob collector" {
			t.Fatalf("members' keys %v", order)
		}
		if strings.Contains(string(res.Body), "userEmail") || strings.Contains(string(res.Body), `"value"`) {
			t.Fatalf("answer shows what it cannot know or must not tell: %s", res.Body)
		}
		a, b, s := got.Keys[0], got.Keys[1], got.Keys[2]
		// Reactivated a minute after the last creation: the last activation moved, the creation did not.
		if a.ApiKey.ID != alice.KeyID || !a.ApiKey.IsActive ||
			a.ApiKey.CreatedAt.Sub(b.ApiKey.CreatedAt) < time.Second ||
			a.ApiKey.LastActivated.Sub(a.ApiKey.CreatedAt) < time.Minute+time.Second {
			t.Fatalf("alice's key %+v, bob's %+v", a.ApiKey, b.ApiKey)
		}
		if len(a.Permissions) != 0 || len(a.Presets) != 0 {
			t.Fatalf("alice's grants %+v", a)
		}
		if b.ApiKey.ID != bob.KeyID || !b.ApiKey.LastActivated.Equal(b.ApiKey.CreatedAt) || strings.Join(b.Permissions, ",") != "case:Read" ||
			len(b.Presets) != 1 || b.Presets[0].Name != "slos" || len(b.Presets[0].Permissions) != 2 {
			t.Fatalf("bob's key %+v", b)
		}
		if s.ApiKey.ID != bobSend.KeyID || len(s.Presets) != 1 || s.Presets[0].Name != "SendData" {
			t.Fatalf("bob's send-data key %+v", s)
		}

		for path, need := range map[string]string{membersPath: "team-custom-api-keys:ReadConfig", sendDataPath: "data-ingest-api-keys:ReadConfig"} {
			if res := env.JSON(t, "GET", path, env.MustKey(t, env.RootKey, need), ""); res.Status != 200 {
				t.Fatalf("%s with %s: %d %s", path, need, res.Status, res.Body)
			}
			// The retired api-keys:ReadConfig stands for both.
			if res := env.JSON(t, "GET", path, env.MustKey(t, env.RootKey, "api-keys:ReadConfig"), ""); res.Status != 200 {
				t.Fatalf("%s with the old api-keys:ReadConfig: %d %s", path, res.Status, res.Body)
			}
			apitest.ExpectError(t, env.JSON(t, "GET", path, env.MustKey(t, env.RootKey, "team-custom-api-keys:Manage"), ""), 403, need)
			apitest.ExpectError(t, env.JSON(t, "GET", path, "", ""), 401)
		}
	})
}
