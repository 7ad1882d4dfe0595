package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// alertmanagerBinary finds Debian's prometheus-alertmanager (or an upstream alertmanager).
func alertmanagerBinary() string {
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRealAlertmanager runs a real Alertmanager whose webhook receiver points at the server with
// a team key as bearer credentials, posts alerts to Alertmanager's own API, and follows the case
// and incidents through firing and resolution.
func TestRealAlertmanager(t *testing.T) {
	bin := alertmanagerBinary()
	if bin == "" {
		t.Skip("prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager); .ci/run installs it")
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		dir := t.TempDir()
		config := fmt.Sprintf(`route:
  receiver: mgmtapi
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: mgmtapi
    webhook_configs:
      - url: %s/ingest/alertmanager/v1
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: %s
`, env.URL, key)
		configPath := filepath.Join(dir, "alertmanager.yml")
		if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		port := freePort(t)
		amURL := fmt.Sprintf("http://127.0.0.1:%d", port)
		var logs bytes.Buffer
		cmd := exec.Command(bin,
			"--config.file="+configPath,
			"--storage.path="+filepath.Join(dir, "data"),
			fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
			"--cluster.listen-address=",
			"--log.level=debug",
		)
		cmd.Stdout = &logs
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("start alertmanager: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("alertmanager log:\n%s", logs.String())
			}
		})
		waitFor(t, "alertmanager ready", func() bool {
			res, err := http.Get(amURL + "/-/ready")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})

		start := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
		alerts := func(endsAt time.Time) []map[string]any {
			var out []map[string]any
			for _, svc := range []string{"checkout", "search"} {
				a := map[string]any{
					"labels": map[string]string{"alertname": "DiskFull", "severity": "critical",
						"service": svc, "applicationName": "shop", "subsystemName": svc},
					"annotations":  map[string]string{"summary": "disk almost full"},
					"startsAt":     start.Format(time.RFC3339),
					"generatorURL": "http://prometheus.example/graph",
				}
				if !endsAt.IsZero() {
					a["endsAt"] = endsAt.Format(time.RFC3339)
				}
				out = append(out, a)
			}
			return out
		}
		postAlerts := func(body []map[string]any) {
			b, _ := json.Marshal(body)
			res, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatalf("post alerts to alertmanager: %v", err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("alertmanager answered %d", res.StatusCode)
			}
		}

		postAlerts(alerts(time.Time{}))
		var c caseView
		waitFor(t, "a case with both alerts", func() bool {
			all := listCases(t, env, env.RootKey)
			if len(all) != 1 {
				return false
			}
			c = all[0]
			return len(listIncidents(t, env, env.RootKey)) == 2
		})
		if c.ReadableID != "CASE-1" || c.Status != "CASE_STATUS_ACTIVE" || c.Priority != "CASE_PRIORITY_P1" ||
			c.Title != "disk almost full" {
			t.Fatalf("case opened by alertmanager: %+v", c)
		}
		for _, inc := range listIncidents(t, env, env.RootKey) {
			if inc.Severity != "INCIDENT_SEVERITY_CRITICAL" || inc.State != "INCIDENT_STATE_TRIGGERED" ||
				inc.ContextualLabels["applicationName"] != "shop" {
				t.Fatalf("incident: %+v", inc)
			}
		}

		postAlerts(alerts(time.Now().UTC().Add(-time.Second)))
		waitFor(t, "the case resolved", func() bool {
			return getCase(t, env, env.RootKey, c.ID).Status == "CASE_STATUS_RESOLVED"
		})
		for _, inc := range listIncidents(t, env, env.RootKey) {
			if inc.State != "INCIDENT_STATE_RESOLVED" {
				t.Fatalf("incident not resolved: %+v", inc)
			}
		}
		events := caseEvents(t, env, env.RootKey, c.ID)
		if k := kinds(events); k != "created,statusChanged" {
			t.Fatalf("case events: %s", k)
		}
		var actor struct{ ReceiverName string }
		if err := json.Unmarshal(events[1].Actor["prometheusAlertManager"], &actor); err != nil || actor.ReceiverName != "mgmtapi" {
			t.Fatalf("actor: %v", events[1].Actor)
		}
	})
}

// waitFor polls cond every 100 ms for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
