package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A team whose first key was lost gets a new one from `mgmtapi keys create`, on a running
// server's database (through its socket on SQLite, beside it on PostgreSQL) and on a stopped
// one's; the start log names the absolute data directory and says whether the database was new.
func TestKeysCreateRecoversATeam(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		p := start(t, nil, args...)
		log := p.stdout.String()
		if !strings.Contains(log, "created a new database") || strings.Contains(log, "opened the existing database") {
			t.Fatalf("the first start does not say it created the database:\n%s", log)
		}
		if args[0] == "--data-dir" {
			abs, _ := filepath.Abs(args[1])
			if !strings.Contains(log, "data_dir="+abs) {
				t.Fatalf("the start log does not name the absolute data directory %s:\n%s", abs, log)
			}
		}

		createKey := func(extra ...string) string {
			t.Helper()
			stdout, stderr, err := runOnce(append(append([]string{"keys", "create"}, extra...), args...), nil)
			if err != nil {
				t.Fatalf("keys create %v: %v\n%s", extra, err, stderr)
			}
			key := strings.TrimSpace(stdout)
			if !strings.HasPrefix(key, "mgmt_") || strings.Contains(stderr, key) {
				t.Fatalf("keys create %v: stdout %q (want the key alone), stderr %q", extra, stdout, stderr)
			}
			if !strings.Contains(stderr, `for team "default" (id 1)`) || !strings.Contains(stderr, "only time the key is shown") {
				t.Fatalf("keys create %v: stderr does not say what was done: %q", extra, stderr)
			}
			return key
		}
		const rules = "/mgmt/openapi/latest/recording-rules/recording-rules/v1"
		running := createKey("--team", "default")
		if status, body := p.get(t, rules, running); status != 200 {
			t.Fatalf("the key made while the server runs: %d %s", status, body)
		}
		_, _, err := runOnce(append([]string{"keys", "create", "--team", "nobody"}, args...), nil)
		if err == nil || !strings.Contains(err.Error(), `no team whose id or name is "nobody"`) || !strings.Contains(err.Error(), `"default" (id 1)`) {
			t.Fatalf("an unknown team: %v, want an error naming the teams there are", err)
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}

		stopped := createKey("--team", "1", "--name", "after the loss")
		p = start(t, map[string]string{"MGMTAPI_OPERATOR_KEY": operatorKey}, args...)
		if log := p.stdout.String(); !strings.Contains(log, "opened the existing database") || strings.Contains(log, "created a new database") {
			t.Fatalf("a restart does not say it opened the existing database:\n%s", log)
		}
		for _, key := range []string{running, stopped} {
			if status, body := p.get(t, rules, key); status != 200 {
				t.Fatalf("a key made by keys create after a restart: %d %s", status, body)
			}
		}
		if status, body := p.get(t, "/admin/v1/teams/1/audit", operatorKey); status != 200 || strings.Count(body, "mgmtapi keys create") != 2 {
			t.Fatalf("the team's audit log does not show the two keys made by keys create: %d %s", status, body)
		}
	})
}

// keys create never creates a database, and a server sharing its SQLite file is written beside.
func TestKeysCreateRefusesAMissingDatabaseAndSharesAFile(t *testing.T) {
	empty := t.TempDir()
	_, _, err := runOnce([]string{"keys", "create", "--team", "default", "--data-dir", empty}, nil)
	if err == nil || !strings.Contains(err.Error(), "no mgmtapi database at "+filepath.Join(empty, sqliteFileName)) {
		t.Fatalf("a data dir without a database: %v", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("keys create left files in an empty data dir: %v", entries)
	}
	var usage usageError
	if _, _, err := runOnce([]string{"keys", "create", "--data-dir", empty}, nil); !errors.As(err, &usage) || !strings.Contains(err.Error(), "--team") {
		t.Fatalf("no --team: %v, want a usage error naming --team", err)
	}

	dir := t.TempDir()
	p := start(t, nil, "--data-dir", dir, "--sqlite-file-access", "shared")
	stdout, stderr, err := runOnce([]string{"keys", "create", "--team", "default", "--data-dir", dir}, nil)
	if err != nil || strings.Contains(stderr, "through the running server") {
		t.Fatalf("keys create beside a server sharing its file: %v %s", err, stderr)
	}
	if status, body := p.get(t, "/mgmt/openapi/latest/recording-rules/recording-rules/v1", strings.TrimSpace(stdout)); status != 200 {
		t.Fatalf("the key made beside a sharing server: %d %s", status, body)
	}
}
