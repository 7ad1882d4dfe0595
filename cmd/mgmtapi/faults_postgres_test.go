package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/prometheustest"
)

// privateCluster is a PostgreSQL cluster of the test's own, on a free port of 127.0.0.1, that the
// test may stop and restart (never the machine's shared one).
type privateCluster struct {
	bin, data, log string
	// url is the connection URL of its postgres database as the postgres user.
	url string
}

// startPrivateCluster makes a cluster in a temporary directory owned by the postgres user (initdb
// as that user), starts it and stops it when the test ends, whatever happened.
func startPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	bin := filepath.Dir(faultTool(t, "/usr/lib/postgresql/*/bin/initdb", "apt-get install postgresql"))
	uid, gid := postgresOwner(t)
	// Not t.TempDir: its parents are root's and closed to the postgres user.
	dir, err := os.MkdirTemp("", "mgmtapi-faults-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	c := &privateCluster{bin: bin, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log")}
	if out, err := exec.Command("runuser", "-u", "postgres", "--", filepath.Join(bin, "initdb"),
		"-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	settings := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n", port, dir)
	conf, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = conf.WriteString(settings)
		conf.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	c.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	c.control(t, "start")
	t.Cleanup(func() {
		// Stopped already when the test ended with it down; pg_ctl then says so, harmlessly.
		_ = exec.Command("runuser", "-u", "postgres", "--", filepath.Join(bin, "pg_ctl"),
			"-D", c.data, "-m", "fast", "-w", "stop").Run()
	})
	return c
}

// postgresOwner is the uid and gid of the postgres user, which owns a cluster's files.
func postgresOwner(t *testing.T) (uid, gid int) {
	t.Helper()
	owner, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("%s=1, but there is no postgres user: %v", faultsVariable, err)
	}
	uid, _ = strconv.Atoi(owner.Uid)
	gid, _ = strconv.Atoi(owner.Gid)
	return uid, gid
}

// control runs pg_ctl with the action (start, stop, restart; stopping the fast way), waiting until
// it is done, and fails t when it fails.
func (c *privateCluster) control(t *testing.T, action string) {
	t.Helper()
	out, err := exec.Command("runuser", "-u", "postgres", "--", filepath.Join(c.bin, "pg_ctl"),
		"-D", c.data, "-l", c.log, "-m", "fast", "-w", "-t", "60", action).CombinedOutput()
	if err != nil {
		pgLog, _ := os.ReadFile(c.log)
		t.Fatalf("pg_ctl %s: %v\n%s\n%s", action, err, out, pgLog)
	}
}

// running reports whether the cluster is up (pg_ctl status).
func (c *privateCluster) running() bool {
	return exec.Command("runuser", "-u", "postgres", "--", filepath.Join(c.bin, "pg_ctl"), "-D", c.data, "status").Run() == nil
}

// TestFaultsPostgreSQL runs the server on a private PostgreSQL cluster and breaks the database
// under it: restarts and a 20 s stop under load, then a 30 s stop while a real Alertmanager
// notifies the server.
func TestFaultsPostgreSQL(t *testing.T) {
	requireFaults(t)
	// Required here: a missing Alertmanager fails instead of skipping.
	t.Setenv(prometheustest.RequireVariable, "1")
	cluster := startPrivateCluster(t)
	logs := filepath.Join(t.TempDir(), "server.log")
	srv := startServerUnder(t, logs, nil, []string{"--database-url", cluster.url})
	t.Run("restarts and a 20 s stop under load", func(t *testing.T) {
		postgresOutagesUnderLoad(t, cluster, srv, logs)
	})
	t.Run("Alertmanager notifying during a 30 s stop", func(t *testing.T) {
		if !cluster.running() {
			cluster.control(t, "start")
		}
		alertmanagerThroughOutage(t, cluster, srv, logs)
	})
}

// postgresOutagesUnderLoad: 8 writers and a reader on keep-alive connections while PostgreSQL is
// restarted twice, then stopped for 20 s and started. Every answer is a 2xx or a 503 with
// Retry-After and a message naming the database (no 401, no 500, no reset: the server never
// restarts); /readyz says not ready, naming the database, during the stop and ready after it; a
// write succeeds within 10 s of each return; every acknowledged write is read back at the end.
func postgresOutagesUnderLoad(t *testing.T, cluster *privateCluster, srv *serverProcess, logs string) {
	load := startFaultLoad(t, srv.base, 8, faultContract{refusals: []int{http.StatusServiceUnavailable}, word: "database"}, 10*time.Second)
	defer load.finish()
	time.Sleep(2 * time.Second) // load before the first fault
	for i := range 2 {
		before, _ := load.snapshot()
		began := time.Now()
		cluster.control(t, "restart")
		back := time.Now()
		first := load.awaitWriteAfter(t, back, 10*time.Second, "a PostgreSQL restart")
		time.Sleep(2 * time.Second)
		after, _ := load.snapshot()
		t.Logf("restart %d: pg_ctl restart took %s; first write acknowledged %s after it; answers from the restart's start to 2 s after the first success: %v",
			i+1, back.Sub(began).Round(time.Millisecond), first.Round(time.Millisecond), countsSince(before, after))
	}

	before, _ := load.snapshot()
	cluster.control(t, "stop")
	stopped := time.Now()
	// During the stop, /readyz says not ready and why, every time it is asked once it has noticed.
	noticed := awaitReadiness(t, srv.base, 5*time.Second, "with PostgreSQL stopped", func(status int, body string) bool {
		return notReady(status, body, "database")
	})
	polls, wrong, first := 0, 0, ""
	for time.Since(stopped) < 20*time.Second {
		polls++
		if status, body := readiness(srv.base); !notReady(status, body, "database") {
			if wrong++; first == "" {
				first = fmt.Sprintf("%d %s", status, body)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if wrong > 0 {
		t.Errorf("/readyz during the stop: %d of %d polls answered otherwise, first %s; want 503 not ready naming the database", wrong, polls, first)
	}
	cluster.control(t, "start")
	returned := time.Now()
	during, _ := load.snapshot()
	firstWrite, readyAfter := load.recovered(t, srv, logs, returned, "PostgreSQL returned from a 20 s stop")
	t.Logf("20 s stop: /readyz not ready %s after it began; answers during it: %v; first write acknowledged %s after PostgreSQL returned, /readyz 200 after %s",
		noticed.Round(time.Millisecond), countsSince(before, during), firstWrite.Round(time.Millisecond), readyAfter.Round(time.Millisecond))
	load.check(t, "PostgreSQL restarted twice and stopped for 20 s")
	verifyAcknowledged(t, srv, load.acks, logs)
	load.verifyAlerts(t, srv.base)
	t.Logf("read back: %d sets, %d alerts; %s; metrics:\n%s", len(load.acks), len(load.alerts),
		logSummary(logs), metricLines(srv.base, "auth_failures", "mgmtapi_db_", "mgmtapi_database_", `status="5`, `status="4`))
}

// countsSince returns the counts that grew from before to after, by how much.
func countsSince(before, after map[string]int) map[string]int {
	grown := maps.Clone(after)
	for label, n := range after {
		if grown[label] = n - before[label]; grown[label] == 0 {
			delete(grown, label)
		}
	}
	return grown
}

// alertmanagerThroughOutage: a real Alertmanager, its webhook receiver pointed at the server with a
// send-data key (group interval 3 min, so a notification refused for good would wait minutes),
// gets 20 distinct alerts while PostgreSQL is stopped for 30 s. Alertmanager must have tried
// during the stop, and every alert must be an incident within 60 s of PostgreSQL's return:
// Alertmanager's own retries of the 503 did it.
func alertmanagerThroughOutage(t *testing.T, cluster *privateCluster, srv *serverProcess, logs string) {
	const alerts = 20
	am := prometheustest.StartAlertmanagerWith(t, prometheustest.AlertmanagerOptions{
		WebhookURL: srv.base + ingestPath, Bearer: createSendDataKey(t, srv.base), GroupInterval: 3 * time.Minute})
	cluster.control(t, "stop")
	stopped := time.Now()
	startsAt := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	for i := range alerts {
		body, _ := json.Marshal([]map[string]any{{
			"labels":      map[string]string{"alertname": fmt.Sprintf("outage%02d", i), "severity": "critical", "service": "faults"},
			"annotations": map[string]string{"summary": "sent during a database outage"},
			"startsAt":    startsAt,
		}})
		res, err := http.Post(am.URL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("post an alert to Alertmanager: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("Alertmanager answered %d to an alert", res.StatusCode)
		}
	}
	time.Sleep(time.Until(stopped.Add(30 * time.Second)))
	failedDuringStop := metricSum(am.URL, "alertmanager_notification_requests_failed_total", `integration="webhook"`)
	cluster.control(t, "start")
	returned := time.Now()
	if failedDuringStop == 0 {
		t.Errorf("Alertmanager made no failed webhook request during the 30 s stop: the outage was not exercised")
	}
	var missing []string
	for {
		names, _, _ := incidentNames(srv.base)
		missing = missing[:0]
		for i := range alerts {
			if name := fmt.Sprintf("outage%02d", i); !names[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Since(returned) > time.Minute {
			t.Fatalf("%d of %d alerts sent to Alertmanager during the stop are not incidents 60 s after PostgreSQL returned: %v\nserver log:\n%s\nAlertmanager log (end):\n%s",
				len(missing), alerts, missing, tail(logs), lastBytes(am.Log(), 4000))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("all %d alerts are incidents %s after PostgreSQL returned from a 30 s stop; Alertmanager's webhook requests: %.0f failed during the stop, %.0f failed and %.0f made in all",
		alerts, time.Since(returned).Round(time.Millisecond), failedDuringStop,
		metricSum(am.URL, "alertmanager_notification_requests_failed_total", `integration="webhook"`),
		metricSum(am.URL, "alertmanager_notification_requests_total", `integration="webhook"`))
}

// metricSum adds up the samples of the metric at base's /metrics whose labels contain filter.
func metricSum(base, metric, filter string) float64 {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	sum := 0.0
	for line := range strings.SplitSeq(string(out), "\n") {
		name, rest, _ := strings.Cut(line, "{")
		if name != metric || !strings.Contains(rest, filter) {
			continue
		}
		_, value, _ := strings.Cut(rest, "} ")
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			sum += v
		}
	}
	return sum
}

// lastBytes returns the end of s, at most n bytes.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
