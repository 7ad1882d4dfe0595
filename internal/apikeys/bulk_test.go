package apikeys_test

import (
	"net/http"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	bulkDelete = "/mgmt/openapi/latest/aaa/api-keys/v3/all/delete"
	bulkStatus = "/mgmt/openapi/latest/aaa/api-keys/v3/all/status"
)

type keyState struct {
	KeyInfo struct {
		Active bool `json:"active"`
	} `json:"keyInfo"`
}

func active(t *testing.T, env *apitest.Env, id string) bool {
	t.Helper()
	res := env.JSON(t, http.MethodGet, keyPath+id, env.RootKey, "")
	if res.Status != http.StatusOK {
		t.Fatalf("get key %s: %d %s", id, res.Status, res.Body)
	}
	return apitest.Decode[keyState](t, res).KeyInfo.Active
}

// TestBulkStatus: keys deactivated in bulk are refused at once with a 401 that says so (the
// key cache is told), and reactivated in bulk they work again; `active` left out is false.
func TestBulkStatus(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := create(t, env, env.RootKey, `{"name":"a","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		b := create(t, env, env.RootKey, `{"name":"b","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		// Both keys are used (and so cached) before the change.
		for _, k := range []created{a, b} {
			if res := env.JSON(t, http.MethodGet, rulesPath, k.Value, ""); res.Status != http.StatusOK {
				t.Fatalf("key %s before: %d %s", k.Name, res.Status, res.Body)
			}
		}
		res := env.JSON(t, http.MethodPost, bulkStatus, env.RootKey,
			`{"updates":[{"keyId":"`+a.KeyID+`","active":false},{"keyId":"`+b.KeyID+`"},{"keyId":"`+a.KeyID+`","active":false}]}`)
		if res.Status != http.StatusOK || string(res.Body) != "{}" {
			t.Fatalf("deactivate: %d %s", res.Status, res.Body)
		}
		for _, k := range []created{a, b} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath, k.Value, ""), http.StatusUnauthorized, "deactivated")
			if active(t, env, k.KeyID) {
				t.Fatalf("key %s reads active", k.Name)
			}
		}
		res = env.JSON(t, http.MethodPost, bulkStatus, env.RootKey,
			`{"updates":[{"keyId":"`+a.KeyID+`","active":true},{"keyId":"`+b.KeyID+`","active":true}]}`)
		if res.Status != http.StatusOK {
			t.Fatalf("reactivate: %d %s", res.Status, res.Body)
		}
		for _, k := range []created{a, b} {
			if res := env.JSON(t, http.MethodGet, rulesPath, k.Value, ""); res.Status != http.StatusOK {
				t.Fatalf("key %s reactivated: %d %s", k.Name, res.Status, res.Body)
			}
		}
		// An empty list changes nothing and succeeds.
		if res := env.JSON(t, http.MethodPost, bulkStatus, env.RootKey, `{"updates":[]}`); res.Status != http.StatusOK {
			t.Fatalf("empty: %d %s", res.Status, res.Body)
		}
	})
}

// TestBulkIsAllOrNothing: one unknown id, another team's key, a missing keyId or a key given two
// states refuses the whole request, naming the place, and changes no key.
func TestBulkIsAllOrNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := create(t, env, env.RootKey, `{"name":"a","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		_, otherKey := env.MustTeam(t, "other")
		other := create(t, env, otherKey, `{"name":"theirs","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		for _, c := range []struct {
			path, body string
			status     int
			fragments  []string
		}{
			{bulkStatus, `{"updates":[{"keyId":"` + a.KeyID + `","active":false},{"keyId":"missing","active":false}]}`, 404, []string{`updates[1].keyId: no API key "missing"`}},
			{bulkStatus, `{"updates":[{"keyId":"` + a.KeyID + `"},{"keyId":"` + other.KeyID + `"}]}`, 404, []string{"updates[1].keyId", other.KeyID}},
			{bulkStatus, `{"updates":[{"keyId":"` + a.KeyID + `"},{"active":true}]}`, 400, []string{"updates[1].keyId: required"}},
			{bulkStatus, `{"updates":[{"keyId":"` + a.KeyID + `","active":true},{"keyId":"` + a.KeyID + `"}]}`, 400, []string{"updates[1].active", "both active and inactive"}},
			{bulkStatus, `{"updates":[{"keyId":""}]}`, 400, []string{"updates[0].keyId"}},
			{bulkDelete, `{"keyIds":["` + a.KeyID + `","missing"]}`, 404, []string{`keyIds[1]: no API key "missing"`}},
			{bulkDelete, `{"keyIds":["` + a.KeyID + `","` + other.KeyID + `"]}`, 404, []string{"keyIds[1]"}},
			{bulkDelete, `{"keyIds":"` + a.KeyID + `"}`, 400, []string{"keyIds"}},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, c.path, env.RootKey, c.body), c.status, c.fragments...)
			if !active(t, env, a.KeyID) {
				t.Fatalf("%s %s changed key a", c.path, c.body)
			}
			if res := env.JSON(t, http.MethodGet, rulesPath, other.Value, ""); res.Status != http.StatusOK {
				t.Fatalf("%s %s changed the other team's key: %d", c.path, c.body, res.Status)
			}
		}
	})
}

// TestBulkDelete: the named keys are gone and refused at once; repeats count once; the other
// keys stay.
func TestBulkDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := create(t, env, env.RootKey, `{"name":"a","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		b := create(t, env, env.RootKey, `{"name":"b","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		kept := create(t, env, env.RootKey, `{"name":"kept","keyPermissions":{"permissions":["metrics.recording-rules:ReadConfig"]}}`)
		for _, k := range []created{a, b} {
			if res := env.JSON(t, http.MethodGet, rulesPath, k.Value, ""); res.Status != http.StatusOK {
				t.Fatalf("key %s before: %d", k.Name, res.Status)
			}
		}
		res := env.JSON(t, http.MethodPost, bulkDelete, env.RootKey, `{"keyIds":["`+a.KeyID+`","`+b.KeyID+`","`+a.KeyID+`"]}`)
		if res.Status != http.StatusOK || string(res.Body) != "{}" {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		for _, k := range []created{a, b} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath, k.Value, ""), http.StatusUnauthorized, "not valid")
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, keyPath+k.KeyID, env.RootKey, ""), http.StatusNotFound)
		}
		if res := env.JSON(t, http.MethodGet, rulesPath, kept.Value, ""); res.Status != http.StatusOK {
			t.Fatalf("the kept key: %d %s", res.Status, res.Body)
		}
	})
}
