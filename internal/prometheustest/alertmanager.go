package prometheustest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Alertmanager is a running Alertmanager (Debian's `prometheus-alertmanager`, or an upstream
// `alertmanager`) whose one route sends every alert group to a webhook.
type Alertmanager struct {
	URL string
	log *lockedBuffer
}

// AlertmanagerBinary returns the path of the Alertmanager binary on the PATH; when it is missing
// it skips t, or fails it when RequireVariable is 1.
func AlertmanagerBinary(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"prometheus-alertmanager", "alertmanager"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(RequireVariable) == "1" {
		t.Fatalf("prometheus-alertmanager is not on the PATH and %s=1 (apt-get install prometheus-alertmanager)", RequireVariable)
	}
	t.Skipf("prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager); .ci/run installs it and sets %s=1", RequireVariable)
	return ""
}

// StartAlertmanager runs an Alertmanager on a free port of 127.0.0.1, clustering off, whose one
// receiver, "mgmtapi", posts every alert group (grouped by alertname, after 1 s, resolved ones
// too) to webhookURL with bearer as its Authorization credentials. It fails t when the server is
// not ready within a minute, and stops it when the test ends.
func StartAlertmanager(t testing.TB, webhookURL, bearer string) *Alertmanager {
	t.Helper()
	return StartAlertmanagerWith(t, AlertmanagerOptions{WebhookURL: webhookURL, Bearer: bearer})
}

// AlertmanagerOptions are what StartAlertmanagerWith sets up.
type AlertmanagerOptions struct {
	// WebhookURL is where the one receiver, "mgmtapi", posts every alert group, with Bearer as its
	// Authorization credentials.
	WebhookURL, Bearer string
	// GroupInterval is how long after a group's notification its next one may go, in whole
	// seconds (0: 1 s). It is also the flush's timeout (at least 10 s), within which Alertmanager
	// retries a notification answered 5xx or not at all, with backoff; one answered 4xx is not
	// retried until the next flush.
	GroupInterval time.Duration
}

// StartAlertmanagerWith is StartAlertmanager with the options.
func StartAlertmanagerWith(t testing.TB, o AlertmanagerOptions) *Alertmanager {
	t.Helper()
	webhookURL, bearer := o.WebhookURL, o.Bearer
	groupInterval := o.GroupInterval
	if groupInterval == 0 {
		groupInterval = time.Second
	}
	bin := AlertmanagerBinary(t)
	dir := t.TempDir()
	config := fmt.Sprintf(`route:
  receiver: mgmtapi
  group_by: [alertname]
  group_wait: 1s
  group_interval: %ds
  repeat_interval: 1h
receivers:
  - name: mgmtapi
    webhook_configs:
      - url: %q
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: %q
`, groupInterval/time.Second, webhookURL, bearer)
	configPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	a := &Alertmanager{URL: "http://127.0.0.1:" + strconv.Itoa(port), log: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+configPath,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port),
		"--cluster.listen-address=",
		"--log.level=debug",
	)
	run(t, "alertmanager", cmd, cancel, a.URL+"/-/ready", a.log)
	return a
}

// Log returns what the Alertmanager has logged so far.
func (a *Alertmanager) Log() string { return a.log.String() }

// AlertingRule returns a function that writes, into a rules directory, the file <alert>.yml: one
// group holding one alerting rule named alert with expr, labels and annotations. Pass it to
// StartAlerting, or call it on Server.RulesDir (then reload) to change the rule.
func AlertingRule(t testing.TB, alert, expr string, labels, annotations map[string]string) func(rulesDir string) {
	return func(rulesDir string) {
		t.Helper()
		l, _ := json.Marshal(labels) // JSON is YAML's flow style
		a, _ := json.Marshal(annotations)
		doc := fmt.Sprintf("groups:\n  - name: %s\n    rules:\n      - alert: %s\n        expr: %q\n        labels: %s\n        annotations: %s\n",
			alert, alert, expr, l, a)
		if err := os.WriteFile(filepath.Join(rulesDir, alert+".yml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
