package apikeys_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func keyInfo(t *testing.T, env *apitest.Env, id string) oas.ApiKeyInfo {
	t.Helper()
	info, err := env.Client(t, env.RootKey).GetApiKey(context.Background(), oas.GetApiKeyParams{KeyID: id})
	if err != nil {
		t.Fatalf("get key %s: %v", id, err)
	}
	return info.KeyInfo
}

// A key takes every public permission name, and answers them as sent.
func TestKeyTakesEveryPublicName(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		all := auth.PermissionNames()
		if len(all) != 293 {
			t.Fatalf("the catalog has %d names, want the 293 public ones", len(all))
		}
		c := create(t, env, env.RootKey, apitest.JSONOf(t, map[string]any{"name": "all", "keyPermissions": map[string]any{"permissions": all}}))
		if got := keyInfo(t, env, c.KeyID).KeyPermissions.Permissions; !slices.Equal(got, all) {
			t.Fatalf("stored %d names, want %d", len(got), len(all))
		}
		// One at a time through the update, in upper case: each comes back in its public spelling.
		for _, name := range all {
			body := apitest.JSONOf(t, map[string]any{"permissions": map[string]any{"permissions": []string{strings.ToUpper(name)}}})
			if res := env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, body); res.Status != 200 {
				t.Fatalf("update with %q: %d %s", strings.ToUpper(name), res.Status, res.Body)
			}
			if got := keyInfo(t, env, c.KeyID).KeyPermissions.Permissions; !slices.Equal(got, []string{name}) {
				t.Fatalf("update with %q stored %v", strings.ToUpper(name), got)
			}
		}
	})
}

// Names match in any case; the key stores and answers the public spelling, and holds the right.
func TestKeyNamesMatchInAnyCase(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"k","keyPermissions":{"permissions":["ALERTS-MAP:READ","Metrics.Recording-Rules:readconfig","alerts-map:Read"]}}`)
		if got := keyInfo(t, env, c.KeyID).KeyPermissions.Permissions; !slices.Equal(got, []string{"alerts-map:Read", "metrics.recording-rules:ReadConfig"}) {
			t.Fatalf("stored %v", got)
		}
		if res := env.JSON(t, "GET", rulesPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("granted in another case: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "POST", rulesPath, c.Value, `{"name":"x"}`), 403, "metrics.recording-rules:UpdateConfig")

		// An access policy's names match in any case too, and the stored text names them publicly.
		policy := `{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"METRICS.RECORDING-RULES:READCONFIG\":\"deny\"}},\"rules\":[]}`
		d := create(t, env, env.RootKey, `{"name":"d","keyPermissions":{"presets":["full-access"]},"accessPolicy":"`+policy+`"}`)
		apitest.ExpectError(t, env.JSON(t, "GET", rulesPath, d.Value, ""), 403, "metrics.recording-rules:ReadConfig")
		stored := keyInfo(t, env, d.KeyID).AccessPolicy.Or("")
		if !strings.Contains(stored, `"metrics.recording-rules:ReadConfig":"deny"`) || strings.Contains(stored, "READCONFIG") {
			t.Fatalf("stored policy %s", stored)
		}
	})
}

// A retired name is taken, for one release, as the public names it stands for: in a key's
// permissions (create and update) and in an access policy, where a deny covers them all.
func TestKeyTakesOldNamesAsAliases(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"old","keyPermissions":{"permissions":["recording-rules:Manage","recording-rules:ReadConfig","policies:ReadConfig","incidents:read"]}}`)
		want := []string{"metrics.recording-rules:UpdateConfig", "metrics.recording-rules:ReadConfig",
			"logs.tco:ReadPolicies", "spans.tco:ReadPolicies", "metrics.tco:ReadPolicies", "incidents:Read"}
		if got := keyInfo(t, env, c.KeyID).KeyPermissions.Permissions; !slices.Equal(got, want) {
			t.Fatalf("stored %v, want %v", got, want)
		}
		if res := env.JSON(t, "POST", rulesPath, c.Value, `{"name":"by alias"}`); res.Status != 200 {
			t.Fatalf("the alias grants the public right: %d %s", res.Status, res.Body)
		}
		upd := `{"permissions":{"permissions":["VIEWS:MANAGE","events2metrics:ReadConfig"]}}`
		if res := env.JSON(t, "PUT", keyPath+c.KeyID, env.RootKey, upd); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		want = []string{"team-saved-views:Update", "logs.events2metrics:ReadConfig", "spans.events2metrics:ReadConfig"}
		if got := keyInfo(t, env, c.KeyID).KeyPermissions.Permissions; !slices.Equal(got, want) {
			t.Fatalf("updated %v, want %v", got, want)
		}

		policy := `{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"policies:Manage\":\"deny\",\"logs.tco:UpdatePolicies\":\"grant\"}},\"rules\":[]}`
		d := create(t, env, env.RootKey, `{"name":"d","keyPermissions":{"presets":["full-access"]},"accessPolicy":"`+policy+`"}`)
		apitest.ExpectError(t, env.JSON(t, "PUT", "/mgmt/openapi/4/dataplans/span-policies/v1", d.Value, `{}`), 403, "spans.tco:UpdatePolicies")
		apitest.ExpectError(t, env.JSON(t, "PUT", "/mgmt/openapi/5/dataplans/log-policies/v1", d.Value, `{}`), 403, "logs.tco:UpdatePolicies")
		stored := keyInfo(t, env, d.KeyID).AccessPolicy.Or("")
		for _, name := range []string{"logs.tco:UpdatePolicies", "spans.tco:UpdatePolicies", "metrics.tco:UpdatePolicies"} {
			if !strings.Contains(stored, `"`+name+`":"deny"`) {
				t.Fatalf("stored policy %s lacks a deny of %s", stored, name)
			}
		}
		if strings.Contains(stored, "policies:Manage") {
			t.Fatalf("stored policy keeps the old name: %s", stored)
		}
	})
}

// Unknown names are still refused, in every place a key takes names.
func TestKeyRefusesUnknownNames(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"k","keyPermissions":{"permissions":["case:Read"]}}`)
		for _, bad := range []struct{ method, path, body, want string }{
			{"POST", createPath, `{"name":"k","keyPermissions":{"permissions":["alerts-map:Read","alerts-map:Write"]}}`, `keyPermissions.permissions[1]: unknown permission "alerts-map:Write"`},
			{"POST", createPath, `{"name":"k","keyPermissions":{"permissions":["alerts-map"]}}`, `keyPermissions.permissions[0]`},
			{"POST", createPath, `{"name":"k","accessPolicy":"{\"version\":\"2025-01-01\",\"default\":{\"permissions\":{\"alerts-map:Fly\":\"deny\"}}}"}`, `accessPolicy.default.permissions: unknown permission "alerts-map:Fly"`},
			{"PUT", keyPath + c.KeyID, `{"permissions":{"permissions":["case:Read","ALERTS:INGESTION"]}}`, `permissions.permissions[1]: unknown permission "ALERTS:INGESTION"`},
			{"POST", createPath, `{"name":"k","keyPermissions":{"presets":["apm"]}}`, `keyPermissions.presets[0]: unknown preset "apm"`},
		} {
			apitest.ExpectError(t, env.JSON(t, bad.method, bad.path, env.RootKey, bad.body), 400, bad.want)
		}
		if got := keyInfo(t, env, c.KeyID).KeyPermissions.Permissions; !slices.Equal(got, []string{"case:Read"}) {
			t.Fatalf("a refused update changed the key: %v", got)
		}
	})
}

// The public presets are taken by their public names and hold public names only.
func TestKeyTakesPublicPresets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		c := create(t, env, env.RootKey, `{"name":"apm","keyPermissions":{"presets":["APM","Alerts","TCOPolicies"],"permissions":["livetail:Read"]}}`)
		info := keyInfo(t, env, c.KeyID)
		if len(info.KeyPermissions.Presets) != 3 {
			t.Fatalf("presets %+v", info.KeyPermissions.Presets)
		}
		for _, p := range info.KeyPermissions.Presets {
			if len(p.Permissions) == 0 || !slices.Equal(p.Permissions, auth.PresetPermissions(p.Name)) {
				t.Fatalf("preset %s: %v", p.Name, p.Permissions)
			}
		}
		if !slices.Contains(info.KeyPermissions.Presets[0].Permissions, "service-map:Read") ||
			!slices.Contains(info.KeyPermissions.Presets[1].Permissions, "alerts:UpdateConfig") {
			t.Fatalf("APM and Alerts presets %+v", info.KeyPermissions.Presets)
		}
		// TCOPolicies grants the policies' permissions.
		if res := env.JSON(t, "GET", "/mgmt/openapi/5/dataplans/policies/v1", c.Value, ""); res.Status != 200 {
			t.Fatalf("list policies with TCOPolicies: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, "GET", rulesPath, c.Value, ""), 403, "metrics.recording-rules:ReadConfig")
		for _, p := range auth.Presets() {
			if p.Name == auth.SendData {
				continue // a send-data key: see TestSendDataKeyOnlyIngests
			}
			create(t, env, env.RootKey, apitest.JSONOf(t, map[string]any{"name": p.Name, "keyPermissions": map[string]any{"presets": []string{p.Name}}}))
		}
	})
}

// An access policy takes every public name, in any case: granting all of them to a key that holds
// nothing else lets it call every operation's permission, and the stored policy names them publicly.
func TestAccessPolicyTakesEveryPublicName(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		grants := map[string]string{}
		for i, name := range auth.PermissionNames() {
			if i%2 == 1 {
				name = strings.ToUpper(name)
			}
			grants[name] = "grant"
		}
		policy := apitest.JSONOf(t, map[string]any{"version": "2025-01-01", "default": map[string]any{"permissions": grants}, "rules": []any{}})
		c := create(t, env, env.RootKey, apitest.JSONOf(t, map[string]any{"name": "policy", "accessPolicy": policy}))
		stored := keyInfo(t, env, c.KeyID).AccessPolicy.Or("")
		p, err := auth.ParseAccessPolicy("accessPolicy", stored)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Default.Permissions) != 293 || strings.Contains(stored, "ALERTS-MAP") {
			t.Fatalf("stored policy names %d permissions: %.200s", len(p.Default.Permissions), stored)
		}
		for name := range p.Default.Permissions {
			if c, ok := auth.Canonical(name); !ok || c != name {
				t.Fatalf("stored policy names %q", name)
			}
		}
		if res := env.JSON(t, "GET", rulesPath, c.Value, ""); res.Status != 200 {
			t.Fatalf("granted by the policy: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, "GET", "/mgmt/openapi/5/dataplans/policies/v1", c.Value, ""); res.Status != 200 {
			t.Fatalf("granted by the policy: %d %s", res.Status, res.Body)
		}
	})
}
