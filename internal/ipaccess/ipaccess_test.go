package ipaccess_test

import (
	"net/http"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	settingsPath = "/mgmt/openapi/latest/aaa/team-sec-ip-access/v1"
	keysPath     = "/mgmt/openapi/5/aaa/api-keys/v3/list/all"
)

// behindProxy is a server that believes X-Forwarded-For from 127.0.0.1, where the tests run.
var behindProxy = apitest.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// from sends a request with key as if from the client address forwardedFor ("" sends no
// X-Forwarded-For header).
func from(t *testing.T, env *apitest.Env, forwardedFor, method, path, key, body string) apitest.Response {
	t.Helper()
	var headers map[string]string
	if forwardedFor != "" {
		headers = map[string]string{"X-Forwarded-For": forwardedFor}
	}
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return env.DoWith(t, method, path, "Bearer "+key, contentType, body, headers)
}

type settings struct {
	Settings struct {
		ID                                  string
		EnablePlatformCustomerSupportAccess string
		IPAccess                            map[string]struct {
			Name, IPRange string
			Enabled       bool
		} `json:"ipAccess"`
	}
}

func expectOK(t *testing.T, res apitest.Response) {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}

// TestDefaultsAndAnswers: a team that set nothing answers the defaults with its id; a create
// answers the ranges keyed by place, as stored; a replace and a delete change what the get reads.
func TestDefaultsAndAnswers(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		got := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, env.RootKey, ""))
		if got.Settings.ID != "1" || got.Settings.EnablePlatformCustomerSupportAccess != "PLATFORM_CUSTOMER_SUPPORT_ACCESS_DISABLED" || len(got.Settings.IPAccess) != 0 {
			t.Fatalf("defaults: %+v", got)
		}
		res := env.JSON(t, http.MethodPost, settingsPath, env.RootKey,
			`{"enablePlatformCustomerSupportAccess":"PLATFORM_CUSTOMER_SUPPORT_ACCESS_ENABLED","ipAccess":[`+
				`{"name":"office","ipRange":"203.0.113.0/24","enabled":true},{"ipRange":"127.0.0.1"},{"name":"loopback","ipRange":"127.0.0.0/8","enabled":true}]}`)
		expectOK(t, res)
		created := apitest.Decode[settings](t, res)
		if created.Settings.EnablePlatformCustomerSupportAccess != "PLATFORM_CUSTOMER_SUPPORT_ACCESS_ENABLED" || len(created.Settings.IPAccess) != 3 ||
			created.Settings.IPAccess["0"].Name != "office" || created.Settings.IPAccess["1"].Enabled || created.Settings.IPAccess["1"].IPRange != "127.0.0.1" ||
			created.Settings.IPAccess["2"].IPRange != "127.0.0.0/8" {
			t.Fatalf("created: %s", res.Body)
		}
		if read := env.JSON(t, http.MethodGet, settingsPath+"?id=1", env.RootKey, ""); !reflect.DeepEqual(apitest.Decode[settings](t, read), created) {
			t.Fatalf("the get reads %s, the create answered %s", read.Body, res.Body)
		}
		res = env.JSON(t, http.MethodPut, settingsPath, env.RootKey, `{"id":"1","ipAccess":[{"ipRange":"127.0.0.1/32","enabled":true}]}`)
		expectOK(t, res)
		replaced := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, env.RootKey, ""))
		if replaced.Settings.EnablePlatformCustomerSupportAccess != "PLATFORM_CUSTOMER_SUPPORT_ACCESS_DISABLED" || len(replaced.Settings.IPAccess) != 1 {
			t.Fatalf("replaced: %+v", replaced)
		}
		expectOK(t, env.JSON(t, http.MethodDelete, settingsPath, env.RootKey, ""))
		if after := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, env.RootKey, "")); len(after.Settings.IPAccess) != 0 {
			t.Fatalf("after the delete: %+v", after)
		}
		// Deleting settings that are not there succeeds too.
		expectOK(t, env.JSON(t, http.MethodDelete, settingsPath, env.RootKey, ""))
	})
}

// TestBadInputChangesNothing: every refusal names the field and leaves the settings as they were.
func TestBadInputChangesNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		expectOK(t, env.JSON(t, http.MethodPost, settingsPath, env.RootKey, `{"ipAccess":[{"name":"here","ipRange":"127.0.0.0/8","enabled":true}]}`))
		before := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, env.RootKey, ""))
		for _, c := range []struct {
			method, path, body string
			status             int
			fragments          []string
		}{
			{http.MethodPost, settingsPath, `{"ipAccess":[{"ipRange":"127.0.0.0/8","enabled":true},{"ipRange":"10.0.0.0/33"}]}`, 400, []string{"ipAccess[1].ipRange", `"10.0.0.0/33"`}},
			{http.MethodPost, settingsPath, `{"ipAccess":[{"ipRange":"office","enabled":true}]}`, 400, []string{"ipAccess[0].ipRange", "CIDR"}},
			{http.MethodPut, settingsPath, `{"ipAccess":[{"name":"no range","enabled":true}]}`, 400, []string{"ipAccess[0].ipRange: required"}},
			{http.MethodPut, settingsPath, `{"ipAccess":[{"name":"a\u0007b","ipRange":"127.0.0.1"}]}`, 400, []string{"ipAccess[0].name", "control"}},
			{http.MethodPost, settingsPath, `{"enablePlatformCustomerSupportAccess":"MAYBE"}`, 400, []string{"enablePlatformCustomerSupportAccess"}},
			{http.MethodPut, settingsPath, `{"id":"999","ipAccess":[]}`, 404, []string{`id: no IP access settings "999"`}},
			{http.MethodGet, settingsPath + "?id=999", "", 404, []string{"id"}},
			{http.MethodDelete, settingsPath + "?id=2", "", 404, []string{"id"}},
			// The caller at 127.0.0.1 would lock itself out.
			{http.MethodPut, settingsPath, `{"ipAccess":[{"ipRange":"203.0.113.0/24","enabled":true}]}`, 400,
				[]string{"ipAccess: no enabled range holds this request's address 127.0.0.1", "acceptLockout=true"}},
		} {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, env.RootKey, c.body), c.status, c.fragments...)
			if after := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, env.RootKey, "")); !reflect.DeepEqual(after, before) {
				t.Fatalf("%s %s %s changed the settings: %+v", c.method, c.path, c.body, after)
			}
		}
		// A range that leaves the caller out is taken when disabled (nothing is enforced then).
		expectOK(t, env.JSON(t, http.MethodPut, settingsPath, env.RootKey, `{"ipAccess":[{"ipRange":"203.0.113.0/24","enabled":false}]}`))
		expectOK(t, env.JSON(t, http.MethodGet, keysPath, env.RootKey, ""))
	})
}

// TestEnforcedThroughATrustedProxy: with 127.0.0.1 trusted, X-Forwarded-For names the client;
// a client outside the enabled ranges gets 403 before any operation runs (a write included:
// nothing changes), a client inside is served, and another team is not concerned.
func TestEnforcedThroughATrustedProxy(t *testing.T) {
	apitest.EnginesWith(t, behindProxy, func(t *testing.T, env *apitest.Env) {
		_, otherKey := env.MustTeam(t, "other")
		// The caller, at 203.0.113.5, keeps itself in.
		expectOK(t, from(t, env, "203.0.113.5", http.MethodPost, settingsPath, env.RootKey,
			`{"ipAccess":[{"name":"office","ipRange":"203.0.113.0/24","enabled":true},{"name":"old","ipRange":"198.51.100.0/24","enabled":false}]}`))
		// The change is audited, with the client the proxy named.
		audit := env.Get(t, "/admin/v1/teams/1/audit?operation=CreateIpAccessSettings", apitest.OperatorKey, nil)
		records := apitest.Decode[struct {
			Records []struct{ ClientAddress, Operation string }
		}](t, audit).Records
		if len(records) != 1 || records[0].ClientAddress != "203.0.113.5" {
			t.Fatalf("audit records: %s", audit.Body)
		}
		expectOK(t, from(t, env, "203.0.113.77", http.MethodGet, keysPath, env.RootKey, ""))
		// A client the last proxy names, whatever the client claimed before it.
		expectOK(t, from(t, env, "192.0.2.1, 203.0.113.9", http.MethodGet, keysPath, env.RootKey, ""))
		for _, outside := range []string{"198.51.100.7", "203.0.113.9, 198.51.100.7", ""} {
			res := from(t, env, outside, http.MethodGet, keysPath, env.RootKey, "")
			want := outside
			if i := strings.LastIndex(want, ", "); i >= 0 {
				want = want[i+2:]
			}
			if want == "" {
				want = "127.0.0.1"
			}
			apitest.ExpectError(t, res, http.StatusForbidden, "IP access", want+" is in none of them")
		}
		// A refused write changes nothing.
		apitest.ExpectError(t, from(t, env, "198.51.100.7", http.MethodDelete, settingsPath, env.RootKey, ""), http.StatusForbidden, "IP access")
		if got := apitest.Decode[settings](t, from(t, env, "203.0.113.5", http.MethodGet, settingsPath, env.RootKey, "")); len(got.Settings.IPAccess) != 2 {
			t.Fatalf("the refused delete removed the settings: %+v", got)
		}
		// Another team is not restricted.
		expectOK(t, from(t, env, "198.51.100.7", http.MethodGet, keysPath, otherKey, ""))
		// A bad key is still a 401 from anywhere: the address is checked once the key is known.
		apitest.ExpectError(t, from(t, env, "198.51.100.7", http.MethodGet, keysPath, "nope", ""), http.StatusUnauthorized)
		// Accepting a lockout: the caller shuts itself out, and is refused from the next request on.
		apitest.ExpectError(t, from(t, env, "203.0.113.5", http.MethodPut, settingsPath, env.RootKey,
			`{"ipAccess":[{"ipRange":"198.51.100.0/24","enabled":true}]}`), http.StatusBadRequest, "203.0.113.5", "acceptLockout")
		expectOK(t, from(t, env, "203.0.113.5", http.MethodPut, settingsPath+"?acceptLockout=true", env.RootKey,
			`{"ipAccess":[{"ipRange":"198.51.100.0/24","enabled":true}]}`))
		apitest.ExpectError(t, from(t, env, "203.0.113.5", http.MethodGet, keysPath, env.RootKey, ""), http.StatusForbidden, "203.0.113.5")
		// From the new range the settings are lifted, and every address is served again.
		expectOK(t, from(t, env, "198.51.100.7", http.MethodDelete, settingsPath, env.RootKey, ""))
		expectOK(t, from(t, env, "192.0.2.200", http.MethodGet, keysPath, env.RootKey, ""))
	})
}

// TestUntrustedPeerCannotChooseItsAddress: without trusted proxies, X-Forwarded-For is ignored.
func TestUntrustedPeerCannotChooseItsAddress(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		expectOK(t, env.JSON(t, http.MethodPost, settingsPath+"?acceptLockout=true", env.RootKey,
			`{"ipAccess":[{"ipRange":"203.0.113.0/24","enabled":true}]}`))
		apitest.ExpectError(t, from(t, env, "203.0.113.5", http.MethodGet, keysPath, env.RootKey, ""), http.StatusForbidden, "127.0.0.1 is in none of them")
	})
}

// TestConfigurationAsCode: the settings are exported as the create's body and applied as it
// stores them; a document that would lock the applier out is refused and changes nothing.
func TestConfigurationAsCode(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		expectOK(t, env.JSON(t, http.MethodPost, settingsPath, env.RootKey,
			`{"ipAccess":[{"name":"office","ipRange":"203.0.113.0/24","enabled":true},{"ipRange":"127.0.0.0/8","enabled":true}]}`))
		export := env.Get(t, "/config/v1/export", env.RootKey, map[string]string{"Accept": "application/json"})
		exported := apitest.Decode[struct {
			IPAccess struct {
				EnablePlatformCustomerSupportAccess string
				IPAccess                            []struct {
					Name, IPRange string
					Enabled       bool
				} `json:"ipAccess"`
			} `json:"ipAccess"`
		}](t, export)
		if a := exported.IPAccess; a.EnablePlatformCustomerSupportAccess != "PLATFORM_CUSTOMER_SUPPORT_ACCESS_DISABLED" || len(a.IPAccess) != 2 ||
			a.IPAccess[0].Name != "office" || a.IPAccess[0].IPRange != "203.0.113.0/24" || !a.IPAccess[1].Enabled || a.IPAccess[1].Name != "" {
			t.Fatalf("export: %s", export.Body)
		}
		teamID, key := env.MustTeam(t, "copy")
		doc := `{"version":1,"ipAccess":{"ipAccess":[{"name":"office","ipRange":"203.0.113.0/24","enabled":true},{"ipRange":"127.0.0.0/8","enabled":true}]}}`
		res := env.JSON(t, http.MethodPost, "/config/v1/apply", key, doc)
		expectOK(t, res)
		got := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, key, ""))
		if got.Settings.ID != strconv.FormatInt(teamID, 10) || len(got.Settings.IPAccess) != 2 || got.Settings.IPAccess["0"].Name != "office" {
			t.Fatalf("applied: %+v", got)
		}
		if res := env.JSON(t, http.MethodPost, "/config/v1/apply", key, doc); !strings.Contains(string(res.Body), `"unchanged":1`) {
			t.Fatalf("the same document again: %s", res.Body)
		}
		lockout := `{"version":1,"ipAccess":{"ipAccess":[{"ipRange":"203.0.113.0/24","enabled":true}]}}`
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, "/config/v1/apply", key, lockout), http.StatusBadRequest, "ipAccess", "127.0.0.1")
		if after := apitest.Decode[settings](t, env.JSON(t, http.MethodGet, settingsPath, key, "")); len(after.Settings.IPAccess) != 2 {
			t.Fatalf("the refused apply changed the settings: %+v", after)
		}
	})
}
