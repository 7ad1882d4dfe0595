package apikeys_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	createPath = "/mgmt/openapi/4/aaa/api-keys/v3"
	listPath   = "/mgmt/openapi/5/aaa/api-keys/v3/list/all"
	keyPath    = "/mgmt/openapi/5/aaa/api-keys/v3/"
	rulesPath  = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
)

type created struct {
	KeyID string `json:"keyId"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

func create(t *testing.T, env *apitest.Env, key, body string) created {
	t.Helper()
	res := env.JSON(t, "POST", createPath, key, body)
	if res.Status != 200 {
		t.Fatalf("create key: %d %s", res.Status, res.Body)
	}
	var c created
	if err := json.Unmarshal(res.Body, &c); err != nil {
		t.Fatal(err)
	}
	if c.KeyID == "" || !strings.HasPrefix(c.Value, "mgmt_") || len(c.Value) < 40 {
		t.Fatalf("created key %+v", c)
	}
	return c
}

func TestCreateKeyAndUseIt(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"ci","hashed":true,
			"keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"],"presets":["api-keys"]},
			"owner":{"userId":"u-1"}}`)
		if c.Name != "ci" {
			t.Fatalf("name %q", c.Name)
		}
		if res := env.JSON(t, "GET", rulesPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("granted permission: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "POST", rulesPath, c.Value, `{"name":"x"}`), 403, "metrics.recording-rules:UpdateConfig")
		// The preset grants the API key permissions.
		res := env.JSON(t, "GET", keyPath+c.KeyID, c.Value, "")
		if res.Status != 200 {
			t.Fatalf("get: %d %s", res.Status, res.Body)
		}
		var got oas.ApiKeyEnvelope
		if err := got.UnmarshalJSON(res.Body); err != nil {
			t.Fatal(err)
		}
		info := got.KeyInfo
		if info.ID != c.KeyID || info.Name != "ci" || !info.Active || !info.Hashed {
			t.Fatalf("key info %+v", info)
		}
		if strings.Contains(string(res.Body), c.Value) || strings.Contains(string(res.Body), `"value"`) {
			t.Fatal("get shows the secret value")
		}
		if len(info.KeyPermissions.Permissions) != 1 || info.KeyPermissions.Permissions[0] != "metrics.recording-rules:ReadConfig" {
			t.Fatalf("permissions %v", info.KeyPermissions.Permissions)
		}
		if len(info.KeyPermissions.Presets) != 1 || info.KeyPermissions.Presets[0].Name != "api-keys" ||
			!slices.Equal(info.KeyPermissions.Presets[0].Permissions, auth.PresetPermissions("api-keys")) ||
			!slices.Contains(info.KeyPermissions.Presets[0].Permissions, "team-custom-api-keys:Manage") {
			t.Fatalf("presets %+v", info.KeyPermissions.Presets)
		}
		if info.Owner.UserId.Or("") != "u-1" {
			t.Fatalf("owner %+v", info.Owner)
		}
		// The list has the bootstrap key and this one, and no values.
		res = env.JSON(t, "GET", listPath, c.Value, "")
		if res.Status != 200 || strings.Contains(string(res.Body), c.Value) || strings.Contains(string(res.Body), env.RootKey) {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}
		var list oas.ApiKeyList
		if err := list.UnmarshalJSON(res.Body); err != nil {
			t.Fatal(err)
		}
		if len(list.Keys) != 2 || list.Keys[1].ID != c.KeyID || list.Keys[0].Owner.TeamId.Or(0) != 1 {
			t.Fatalf("list %+v", list.Keys)
		}
	})
}

func TestCreateKeyRejectsBadInput(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		cases := []struct{ body, fragment string }{
			{`{}`, "name: is required"},
			{`{"name":""}`, "name: must have at least 1 character"},
			{`{"name":"` + strings.Repeat("é", 256) + `"}`, "name: must have at most 255 characters"},
			{`{"name":"k","keyPermissions":{"permissions":["nope:Read"]}}`, `keyPermissions.permissions[0]: unknown permission "nope:Read"`},
			{`{"name":"k","keyPermissions":{"presets":["api-keys","nope"]}}`, `keyPermissions.presets[1]: unknown preset "nope"`},
			{`{"name":"k","owner":{"userId":"u","teamId":1}}`, "owner: set at most one"},
			{`{"name":"k","owner":{"teamId":2}}`, "owner.teamId: must be the caller's team (1)"},
			{`{"name":"k","owner":{"userId":""}}`, "owner.userId"},
			{`{"name":"k","accessPolicy":"{"}`, "accessPolicy: must be a JSON object"},
			{`{"name":"k","accessPolicy":"[]"}`, "accessPolicy: must be a JSON object"},
			{`{"name":"k","accessPolicy":"{\"default\":{}}"}`, "accessPolicy.version: is required"},
			{`{"name":"k","accessPolicy":"{\"version\":\"yesterday\"}"}`, "accessPolicy.version: must be a date"},
			{`{"name":"k","accessPolicy":"{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"x:Y\":\"grant\"}}}"}`, `unknown permission "x:Y"`},
			{`{"name":"k","accessPolicy":"{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"team-custom-api-keys:Manage\":\"allow\"}}}"}`, `must be "grant" or "deny"`},
			{`{"name":"k","accessPolicy":"{\"version\":\"2025-01-01\",\"rules\":[{}]}"}`, "accessPolicy.rules: must be empty"},
			{`{"name":"k","accessPolicy":"{\"version\":\"2025-01-01\"} {}"}`, "exactly one JSON object"},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, "POST", createPath, env.RootKey, c.body), 400, c.fragment)
		}
		// Nothing was created.
		keys, err := env.Client(t, env.RootKey).ListApiKeys(context.Background())
		if err != nil || len(keys.Keys) != 1 {
			t.Fatalf("keys after rejected creates: %v %v", keys, err)
		}
		// The edges that are allowed.
		create(t, env, env.RootKey, `{"name":"`+strings.Repeat("é", 255)+`"}`)
		create(t, env, env.RootKey, `{"name":"k","owner":{"teamId":1},"accessPolicy":""}`)
		create(t, env, env.RootKey, `{"name":"k","owner":{"organisationId":"org"},"unknownField":{"x":1}}`)
	})
}

func TestAccessPolicyDenyWins(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		policy := `{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"metrics.recording-rules:UpdateConfig\":\"deny\",\"team-custom-api-keys:ReadConfig\":\"grant\"}},\"rules\":[]}`
		c := create(t, env, env.RootKey, `{"name":"p","keyPermissions":{"presets":["recording-rules"]},"accessPolicy":"`+policy+`"}`)
		if res := env.JSON(t, "GET", rulesPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("preset permission: %d", res.Status)
		}
		apitest.ExpectError(t, env.JSON(t, "POST", rulesPath, c.Value, `{"name":"x"}`), 403, "metrics.recording-rules:UpdateConfig")
		if res := env.JSON(t, "GET", listPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("granted by policy: %d", res.Status)
		}
		res := env.JSON(t, "GET", keyPath+c.KeyID, c.Value, "")
		if !strings.Contains(string(res.Body), `"accessPolicy":"{\"version\":\"2025-01-01\"`) {
			t.Fatalf("policy not returned: %s", res.Body)
		}
	})
}

// Each operation of this area requires its permission.
func TestApiKeyPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		target := create(t, env, env.RootKey, `{"name":"target"}`)
		ops := []struct {
			method, path, body, permission string
		}{
			{"POST", createPath, `{"name":"x"}`, "team-custom-api-keys:Manage"},
			{"GET", listPath, "", "team-custom-api-keys:ReadConfig"},
			{"GET", keyPath + target.KeyID, "", "team-custom-api-keys:ReadConfig"},
			{"PUT", keyPath + target.KeyID, `{"newName":"y"}`, "team-custom-api-keys:Manage"},
			{"DELETE", keyPath + target.KeyID, "", "team-custom-api-keys:Manage"},
		}
		for _, op := range ops {
			others := []string{"metrics.recording-rules:ReadConfig", "metrics.recording-rules:UpdateConfig"}
			for _, p := range []string{"team-custom-api-keys:ReadConfig", "team-custom-api-keys:Manage"} {
				if p != op.permission {
					others = append(others, p)
				}
			}
			without := env.MustKey(t, env.RootKey, others...)
			apitest.ExpectError(t, env.JSON(t, op.method, op.path, without, op.body), 403, op.permission)
			with := env.MustKey(t, env.RootKey, op.permission)
			if res := env.JSON(t, op.method, op.path, with, op.body); res.Status != 200 {
				t.Fatalf("%s %s with %s: %d %s", op.method, op.path, op.permission, res.Status, res.Body)
			}
		}
	})
}

func TestUpdateKey(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"k","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		apitest.ExpectError(t, env.JSON(t, "GET", listPath, c.Value, ""), 403)

		// New permissions apply to the very next request.
		upd := `{"newName":"renamed","permissions":{"permissions":["team-custom-api-keys:ReadConfig"]},"presets":{"presets":["read-only"]}}`
		if res := env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, upd); res.Status != 200 || string(res.Body) != "{}" {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, "GET", listPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("after update: %d", res.Status)
		}
		info, err := env.Client(t, env.RootKey).GetApiKey(context.Background(), oas.GetApiKeyParams{KeyID: c.KeyID})
		if err != nil || info.KeyInfo.Name != "renamed" || info.KeyInfo.KeyPermissions.Permissions[0] != "team-custom-api-keys:ReadConfig" ||
			info.KeyInfo.KeyPermissions.Presets[0].Name != "read-only" {
			t.Fatalf("after update: %+v %v", info, err)
		}

		// A policy can be set and removed.
		deny := `{"accessPolicy":"{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"team-custom-api-keys:ReadConfig\":\"deny\"}}}"}`
		env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, deny)
		apitest.ExpectError(t, env.JSON(t, "GET", listPath, c.Value, ""), 403)
		env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, `{"accessPolicy":""}`)
		if res := env.JSON(t, "GET", listPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("after removing the policy: %d", res.Status)
		}

		// Deactivated keys do not authenticate; reactivated ones do.
		env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, `{"isActive":false}`)
		apitest.ExpectError(t, env.JSON(t, "GET", listPath, c.Value, ""), 401, "deactivated")
		env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, `{"isActive":true}`)
		if res := env.JSON(t, "GET", listPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("after reactivation: %d", res.Status)
		}

		// Bad updates change nothing.
		for body, fragment := range map[string]string{
			`{"newName":""}`: "newName",
			`{"permissions":{"permissions":["nope"]}}`: "permissions.permissions[0]",
			`{"presets":{"presets":["nope"]}}`:         "presets.presets[0]",
			`{"newName":"zz","accessPolicy":"{"}`:      "accessPolicy",
		} {
			apitest.ExpectError(t, env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, body), 400, fragment)
		}
		info, _ = env.Client(t, env.RootKey).GetApiKey(context.Background(), oas.GetApiKeyParams{KeyID: c.KeyID})
		if info.KeyInfo.Name != "renamed" {
			t.Fatalf("a rejected update changed the name to %q", info.KeyInfo.Name)
		}
		apitest.ExpectError(t, env.JSON(t, "PUT", keyPath+"missing", env.RootKey, `{"newName":"x"}`), 404)
	})
}

func TestDeletedKeyStopsAtOnce(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"k","keyPermissions":{"presets":["full-access"]}}`)
		if res := env.JSON(t, "GET", listPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("before delete: %d", res.Status)
		}
		if res := env.JSON(t, "DELETE", keyPath+c.KeyID, env.RootKey, ""); res.Status != 200 || string(res.Body) != "{}" {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "GET", listPath, c.Value, ""), 401)
		apitest.ExpectError(t, env.JSON(t, "DELETE", keyPath+c.KeyID, env.RootKey, ""), 404)
		apitest.ExpectError(t, env.JSON(t, "GET", keyPath+c.KeyID, env.RootKey, ""), 404)
	})
}

// A replica that did not serve the delete stops accepting the key once its cache entry expires,
// which is within auth.CacheTTL (and so within 5 seconds).
func TestDeletedKeyStopsOnOtherReplicas(t *testing.T) {
	if auth.CacheTTL > 5*time.Second {
		t.Fatalf("CacheTTL %v is longer than the promised 5 seconds", auth.CacheTTL)
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"k","keyPermissions":{"presets":["api-keys"]}}`)
		replica := apitest.Serve(t, env.Handler(t, env.DB, auth.NewAuthenticator(env.DB, env.Clock.Now)))
		get := func() apitest.Response {
			return replica.Do(t, "GET", listPath, "Bearer "+c.Value, "", "")
		}
		if res := get(); res.Status != 200 {
			t.Fatalf("replica before delete: %d", res.Status)
		}
		env.JSON(t, "DELETE", keyPath+c.KeyID, env.RootKey, "")
		env.Clock.Advance(auth.CacheTTL + time.Millisecond)
		apitest.ExpectError(t, get(), 401)
	})
}

func TestKeysAreTeamScoped(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, other := env.MustTeam(t, "other")
		mine := create(t, env, env.RootKey, `{"name":"mine"}`)
		for _, req := range []struct{ method, body string }{{"GET", ""}, {"PUT", `{"newName":"x"}`}, {"DELETE", ""}} {
			apitest.ExpectError(t, env.JSON(t, req.method, keyPath+mine.KeyID, other, req.body), 404)
		}
		res := env.JSON(t, "GET", listPath, other, "")
		if strings.Contains(string(res.Body), mine.KeyID) {
			t.Fatal("another team's list shows the key")
		}
		info, err := env.Client(t, env.RootKey).GetApiKey(context.Background(), oas.GetApiKeyParams{KeyID: mine.KeyID})
		if err != nil || info.KeyInfo.Name != "mine" {
			t.Fatalf("key changed by another team: %+v %v", info, err)
		}
	})
}
