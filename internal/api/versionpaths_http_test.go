package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// A client with one base URL reaches every operation: E3 lives under 4, yet a client whose base is
// …/5 or …/latest creates keys, and the key it gets works.
func TestOneBaseURLCreatesKeys(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, base := range []string{"/mgmt/openapi/latest", "/mgmt/openapi/5", "/mgmt/openapi/3", "/mgmt/openapi/4"} {
			res := env.JSON(t, http.MethodPost, base+"/aaa/api-keys/v3", env.RootKey,
				`{"name":"from `+base+`","keyPermissions":{"permissions":["TEAM-CUSTOM-API-KEYS:READCONFIG"]}}`)
			key := apitest.Decode[struct{ KeyID, Value string }](t, res)
			if key.Value == "" || key.KeyID == "" {
				t.Fatalf("%s: %s", base, res.Body)
			}
			got := env.JSON(t, http.MethodGet, base+"/aaa/api-keys/v3/"+key.KeyID, key.Value, "")
			if got.Status != http.StatusOK || !bytes.Contains(got.Body, []byte(`"from `+base+`"`)) {
				t.Fatalf("%s: read back with the new key: %d %s", base, got.Status, got.Body)
			}
		}
	})
}

// E25 keeps the version 4 shape under 4; under latest, 5 and 3 the same operation answers the
// newest shape, whose rules carry allocationType and platformManaged.
func TestQuotaRuleSetCreateShapePerSegment(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		body := `{"ruleSet":{"rules":[{"entityType":"logs","allocation":60,"enabled":true,"canOverflow":true}]}}`
		for _, c := range []struct {
			segment string
			newest  bool
		}{{"4", false}, {"latest", true}, {"5", true}, {"3", true}} {
			res := env.JSON(t, http.MethodPost, "/mgmt/openapi/"+c.segment+"/dataplan/quota-rules/v1", env.RootKey, body)
			if res.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", c.segment, res.Status, res.Body)
			}
			for _, field := range []string{`"allocationType"`, `"platformManaged"`} {
				if bytes.Contains(res.Body, []byte(field)) != c.newest {
					t.Errorf("%s: %s present is %v, want %v: %s", c.segment, field, !c.newest, c.newest, res.Body)
				}
			}
			if del := env.JSON(t, http.MethodDelete, "/mgmt/openapi/latest/dataplan/quota-rules/v1", env.RootKey, ""); del.Status != http.StatusOK {
				t.Fatalf("delete: %d %s", del.Status, del.Body)
			}
		}
	})
}

// The operations renamed in the newest public documents answer at both names, and both names
// read and change the same state.
func TestRenamedOperationsShareState(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		res := env.JSON(t, http.MethodPut, "/mgmt/openapi/latest/aaa/custom-roles/v1", key,
			`{"name":"auditor","description":"reads","parentRoleId":3,"permissions":[]}`)
		id := apitest.Decode[struct{ ID int64 }](t, res).ID
		if id == 0 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		newName := "/mgmt/openapi/latest/aaa/custom-roles/v1/" + strconv.FormatInt(id, 10)
		oldName := "/mgmt/openapi/5/aaa/team-roles/v1/custom-roles/" + strconv.FormatInt(id, 10)
		a, b := env.JSON(t, http.MethodGet, newName, key, ""), env.JSON(t, http.MethodGet, oldName, key, "")
		if a.Status != http.StatusOK || !bytes.Equal(a.Body, b.Body) || !bytes.Contains(a.Body, []byte(`"auditor"`)) {
			t.Fatalf("read by both names:\n%d %s\n%d %s", a.Status, a.Body, b.Status, b.Body)
		}
		list := env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/aaa/custom-roles/v1", key, "")
		if !bytes.Contains(list.Body, []byte(`"auditor"`)) {
			t.Fatalf("list under the new name: %d %s", list.Status, list.Body)
		}
		if del := env.JSON(t, http.MethodDelete, newName, key, ""); del.Status/100 != 2 {
			t.Fatalf("delete under the new name: %d %s", del.Status, del.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, oldName, key, ""), http.StatusNotFound)

		system := env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/aaa/system-roles/v1", key, "")
		if old := env.JSON(t, http.MethodGet, "/mgmt/openapi/5/aaa/team-roles/v1/system-roles", key, ""); system.Status != http.StatusOK ||
			!bytes.Equal(system.Body, old.Body) {
			t.Fatalf("system roles by both names:\n%d %s\n%d %s", system.Status, system.Body, old.Status, old.Body)
		}

		byNew := env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/integrations/extensions/v1/catalog/kubernetes", key, "")
		byOld := env.JSON(t, http.MethodGet, "/mgmt/openapi/3/integrations/extensions/v1/kubernetes", key, "")
		if byNew.Status != http.StatusOK || !sameJSON(t, byNew.Body, byOld.Body) {
			t.Fatalf("extension by both names:\n%d %s\n%d %s", byNew.Status, byNew.Body, byOld.Status, byOld.Body)
		}
		all := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/integrations/extensions/v1", key, `{}`)
		if oldAll := env.JSON(t, http.MethodPost, "/mgmt/openapi/3/integrations/extensions/v1/all", key, `{}`); all.Status != http.StatusOK ||
			!sameJSON(t, all.Body, oldAll.Body) {
			t.Fatalf("extension list by both names: %d, %d", all.Status, oldAll.Status)
		}

		preset := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/notifications/notification-center/v1/presets:createCustom", key,
			`{"preset":{"name":"pager","connectorType":"GENERIC_HTTPS","entityType":"ALERTS"}}`)
		presetID := apitest.Decode[struct{ Preset struct{ ID string } }](t, preset).Preset.ID
		if presetID == "" {
			t.Fatalf("create preset under the new name: %d %s", preset.Status, preset.Body)
		}
		if got := env.JSON(t, http.MethodGet, "/mgmt/openapi/4/notifications/notification-center/v1/presets/"+presetID, key, ""); got.Status != http.StatusOK {
			t.Fatalf("read the preset: %d %s", got.Status, got.Body)
		}
	})
}

// sameJSON reports whether a and b hold the same JSON value (free-form objects, such as an
// extension item's data, have no fixed member order).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}
