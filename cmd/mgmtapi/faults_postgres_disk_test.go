package main

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFaultsPostgresDiskFull runs the server on a private PostgreSQL cluster whose database lives
// in a tablespace on a 64 MiB tmpfs (the write-ahead log stays in the cluster's own directory, so
// PostgreSQL itself keeps running), under load (4 writers and a reader). The rest of the tmpfs is
// filled with a file: PostgreSQL refuses to extend the tables (SQLSTATE 53100, disk_full), and
// every answer is a 2xx or a 507/503 with Retry-After naming "storage full", never a 500, while
// /readyz says not ready naming it. Then the file is deleted: writes succeed again within 10 s,
// /readyz is ready, without a restart, and every acknowledged write is there.
func TestFaultsPostgresDiskFull(t *testing.T) {
	requireFaults(t)
	uid, gid := postgresOwner(t)
	// Not t.TempDir: its parents are root's and closed to the postgres user.
	dir, err := os.MkdirTemp("", "mgmtapi-faults-pgspace-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	space := filepath.Join(dir, "space")
	if err := os.Mkdir(space, 0o700); err != nil {
		t.Fatal(err)
	}
	// Mounted before the cluster starts, so it is unmounted after the cluster's stop: a
	// tablespace in use keeps the tmpfs busy.
	mountTmpfs(t, space, "size=64m,mode=0755")
	tablespace := filepath.Join(space, "pg")
	if err := os.Mkdir(tablespace, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tablespace, uid, gid); err != nil {
		t.Fatal(err)
	}
	cluster := startPrivateCluster(t)
	admin, err := sql.Open("pgx", cluster.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, statement := range []string{
		"CREATE TABLESPACE small LOCATION '" + tablespace + "'",
		"CREATE DATABASE mgmtapi TABLESPACE small",
	} {
		if _, err := admin.Exec(statement); err != nil {
			admin.Close()
			t.Fatalf("%s: %v", statement, err)
		}
	}
	admin.Close()
	databaseURL, err := url.Parse(cluster.url)
	if err != nil {
		t.Fatal(err)
	}
	databaseURL.Path = "/mgmtapi"

	logs := filepath.Join(t.TempDir(), "server.log")
	srv := startServerUnder(t, logs, nil, []string{"--database-url", databaseURL.String()})
	load := startFaultLoad(t, srv.base, 4, faultContract{
		refusals: []int{http.StatusInsufficientStorage, http.StatusServiceUnavailable}, word: "storage full"}, 10*time.Second)
	defer load.finish()
	time.Sleep(time.Second)

	duringFull := fillAndFree(t, srv, load, logs, space, "the tablespace", func() {
		if pgLog, _ := os.ReadFile(cluster.log); !strings.Contains(string(pgLog), "No space left on device") {
			t.Errorf("PostgreSQL's log does not say it ran out of space:\n%s", pgLog)
		}
	})
	if duringFull["507 storage full"] == 0 {
		t.Errorf("no 507 while the tablespace was full: %v", duringFull)
	}
	t.Logf("%s; metrics:\n%s", logSummary(logs), metricLines(srv.base, "mgmtapi_database_", `status="5`))
	verifyAcknowledged(t, srv, load.acks, logs)
	load.verifyAlerts(t, srv.base)
	t.Logf("every acknowledged write is there: %d sets, %d alerts", len(load.acks), len(load.alerts))
}
