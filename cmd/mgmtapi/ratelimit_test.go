package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestKeyRateLimitEndToEnd: with --key-rate-limit, a key gets its burst and then 429 with
// Retry-After and the Error body, counted in /metrics; the operator key (never limited) and the
// probes are not affected.
func TestKeyRateLimitEndToEnd(t *testing.T) {
	p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey, "MGMTAPI_OPERATOR_KEY": operatorKey},
		"--data-dir", t.TempDir(), "--key-rate-limit", "0.001", "--key-rate-burst", "3")
	get := func(key string) *http.Response {
		req, _ := http.NewRequest("GET", "http://"+p.addr+crashRulesPath, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 3 {
		res := get(chosenKey)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("request %d of the burst: %d", i+1, res.StatusCode)
		}
	}
	res := get(chosenKey)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &e); err != nil || res.StatusCode != 429 || e.Code != 429 ||
		!strings.Contains(e.Message, "0.001 requests per second (burst 3)") || res.Header.Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d Retry-After %q %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if status, _ := p.get(t, "/healthz", ""); status != 200 {
		t.Fatalf("/healthz: %d", status)
	}
	if status, body := p.call(t, "POST", "/admin/v1/teams", operatorKey, `{"name":"second"}`); status != 200 && status != 201 {
		t.Fatalf("the operator key: %d %s", status, body)
	}
	if _, metrics := p.get(t, "/metrics", ""); !strings.Contains(metrics, "mgmtapi_requests_rate_limited_total 1\n") {
		t.Fatal("/metrics does not count the limited request")
	}
}
