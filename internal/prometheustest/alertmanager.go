package prometheustest

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
	bin := AlertmanagerBinary(t)
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
      - url: %q
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: %q
`, webhookURL, bearer)
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
	cmd.Stdout, cmd.Stderr = a.log, a.log
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start alertmanager: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("alertmanager log:\n%s", a.log.String())
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("alertmanager exited before it was ready (%v); its log:\n%s", err, a.log.String())
		default:
		}
		if res, err := http.Get(a.URL + "/-/ready"); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return a
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager not ready within a minute; its log:\n%s", a.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Log returns what the Alertmanager has logged so far.
func (a *Alertmanager) Log() string { return a.log.String() }
