package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestOperationPathsAreThoseTheMuxPassesAsTheyAre checks that the paths the root handler hands
// straight to the API are ones the ServeMux would hand to it unchanged, and that the ones it
// would redirect are left to it.
func TestOperationPathsAreThoseTheMuxPassesAsTheyAre(t *testing.T) {
	const reachedAPI = 299
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(reachedAPI) })
	for target, direct := range map[string]bool{
		"/mgmt/openapi/5/recording-rules/recording-rules/v1/abc": true,
		"/mgmt/openapi/5/x/":          true,
		"/admin/v1/teams":             true,
		"/config/v1/prometheus/rules": true,
		"/config/v1/a/../b":           false,
		"/configx/v1":                 false,
		"/config/v1/export":           true,
		"/config/v1/../export":        false,
		"/ingest/alertmanager/v1":     true,
		"/ingest/../mgmt/x":           false,
		"/mgmt/a%20b/c":               true,
		"/mgmt/a%2Fb":                 true,
		"/mgmt/a//b":                  false,
		"/mgmt/a/./b":                 false,
		"/mgmt/a/../b":                false,
		"/mgmt/a/..":                  false,
		"/mgmt/a/.":                   false,
		"/healthz":                    false,
		"/metrics":                    false,
		"/mgmtx/a":                    false,
		"/":                           false,
		"/mgmt/openapi/5/x?a=b&c[d]=": true,
	} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if got := isOperationPath(req.URL.EscapedPath()); got != direct {
			t.Errorf("%s: isOperationPath %v, want %v", target, got, direct)
		}
		if direct {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != reachedAPI {
				t.Errorf("%s: the mux answers %d itself", target, rec.Code)
			}
		}
	}
}
