package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The command passes against a live server on either engine, through the default URL built from
// MGMTAPI_ADDR as well as through --url.
func TestHealthcheckPassesAgainstALiveServer(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		p := start(t, nil, args...)
		var out lockedBuffer
		if code := healthcheck([]string{"--url", "http://" + p.addr + "/healthz"}, func(string) string { return "" }, &out); code != 0 {
			t.Fatalf("--url: exit %d, want 0: %s", code, out.String())
		}
		_, port, _ := net.SplitHostPort(p.addr)
		env := map[string]string{"MGMTAPI_ADDR": ":" + port}
		if code := healthcheck(nil, func(k string) string { return env[k] }, &out); code != 0 {
			t.Fatalf("MGMTAPI_ADDR=:%s: exit %d, want 0: %s", port, code, out.String())
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
		code := healthcheck([]string{"--url", "http://" + p.addr + "/healthz"}, func(string) string { return "" }, &out)
		if code != 1 || !strings.Contains(out.String(), "GET http://"+p.addr+"/healthz") {
			t.Fatalf("stopped server: exit %d, want 1 and a message naming the URL: %s", code, out.String())
		}
	})
}

func TestHealthcheckFailsOnAnythingButA200(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusFound, http.StatusNotFound} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if status == http.StatusFound {
				http.Redirect(w, r, "/elsewhere", status)
				return
			}
			w.WriteHeader(status)
		}))
		var out lockedBuffer
		code := healthcheck([]string{"--url", srv.URL + "/healthz"}, func(string) string { return "" }, &out)
		srv.Close()
		if code != 1 || !strings.Contains(out.String(), http.StatusText(status)) || !strings.Contains(out.String(), "want 200") {
			t.Errorf("status %d: exit %d, want 1 and a message with the status: %q", status, code, out.String())
		}
	}
}

func TestHealthcheckRefusesABadCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"--nope"}, want: "flag provided but not defined: -nope"},
		{args: []string{"extra"}, want: `unexpected argument "extra"`},
		{args: []string{"--timeout", "0s"}, want: "--timeout must be positive"},
		{env: map[string]string{"MGMTAPI_ADDR": "8080"}, want: `MGMTAPI_ADDR "8080" is not host:port`},
		{env: map[string]string{"MGMTAPI_ADDR": ":0"}, want: "give --url"},
	} {
		var out lockedBuffer
		code := healthcheck(c.args, func(k string) string { return c.env[k] }, &out)
		if code != 2 || !strings.Contains(out.String(), c.want) {
			t.Errorf("%v %v: exit %d, want 2 and %q in %q", c.args, c.env, code, c.want, out.String())
		}
	}
}

func TestHealthcheckURLFollowsTheListenAddress(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "http://127.0.0.1:8080/healthz"},
		{map[string]string{"MGMTAPI_ADDR": ":9000"}, "http://127.0.0.1:9000/healthz"},
		{map[string]string{"MGMTAPI_ADDR": "0.0.0.0:9001"}, "http://127.0.0.1:9001/healthz"},
		{map[string]string{"MGMTAPI_ADDR": "[::]:9002"}, "http://127.0.0.1:9002/healthz"},
		{map[string]string{"MGMTAPI_ADDR": "10.1.2.3:9003"}, "http://10.1.2.3:9003/healthz"},
		{map[string]string{"MGMTAPI_ADDR": "[::1]:9004"}, "http://[::1]:9004/healthz"},
		{map[string]string{"MGMTAPI_ADDR": ":8443", "MGMTAPI_TLS_CERT_FILE": "/etc/cert.pem"}, "https://127.0.0.1:8443/healthz"},
	} {
		got, err := healthcheckURL(func(k string) string { return c.env[k] })
		if err != nil || got != c.want {
			t.Errorf("%v: got %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}
