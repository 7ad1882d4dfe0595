package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// timedWrite is a creation with the moments its request was sent and its answer received.
type timedWrite struct {
	acknowledged
	sent, answered time.Time
}

// TestBackupUnderWriteLoadRestores runs `mgmtapi serve` as a process on SQLite with writers
// creating recording-rule sets, runs `mgmtapi backup` as a second process in the middle of the
// writes, keeps writing, stops the server, restores the backup into a fresh data directory with
// `mgmtapi restore` and starts a server on it: every set acknowledged before the backup
// began is there unchanged, none sent after it finished is, and integrity_check says ok.
func TestBackupUnderWriteLoadRestores(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	logs := filepath.Join(dir, "server.log")
	srv := startServer(t, logs, []string{"--data-dir", data})

	var mu sync.Mutex
	var writes []timedWrite
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a := acknowledged{name: fmt.Sprintf("writer %d set %d", w, i),
					expr: fmt.Sprintf(`sum(up{writer="%d",set="%d"})`, w, i)}
				sent := time.Now()
				id, err := createSet(client, srv.base, a)
				answered := time.Now()
				mu.Lock()
				if err != nil {
					failures = append(failures, err.Error())
				} else {
					a.id = id
					writes = append(writes, timedWrite{a, sent, answered})
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	// waitFor waits until cond holds of the writes so far, or fails after 60 s.
	waitFor := func(what string, cond func([]timedWrite) bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			ok, failed := cond(writes), len(failures) > 0
			mu.Unlock()
			if ok {
				return
			}
			if failed || time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("waiting for %s: failures %q\n%s", what, failures, tail(logs))
			}
		}
	}
	waitFor("100 writes", func(w []timedWrite) bool { return len(w) >= 100 })

	file := filepath.Join(dir, "backups", "mgmtapi-backup.db")
	if err := os.Mkdir(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	cmd := exec.Command(os.Args[0], "backup", "--data-dir", data, "--to", file)
	cmd.Env = append(os.Environ(), serveVariable+"=1")
	out, err := cmd.CombinedOutput()
	finished := time.Now()
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("backup: %v\n%s", err, out)
	}
	report := regexp.MustCompile(`^mgmtapi: backed up (\S+) to (\S+): (\d+) bytes, schema version (\d+), integrity ok, \S+\n$`).
		FindStringSubmatch(string(out))
	if report == nil || report[1] != filepath.Join(data, "mgmtapi.db") || report[2] != file {
		t.Errorf("backup printed %q, want the source, the target, the size and the schema version", out)
	}
	if info, err := os.Stat(file); err != nil || report != nil && strconv.FormatInt(info.Size(), 10) != report[3] {
		t.Errorf("backup file: %v; printed size %v", err, report)
	}
	waitFor("100 writes sent after the backup", func(w []timedWrite) bool {
		n := 0
		for _, x := range w {
			if x.sent.After(finished) {
				n++
			}
		}
		return n >= 100
	})
	close(stop)
	wg.Wait()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("server stopped with %v\n%s", err, tail(logs))
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the backup directory holds %d entries, want only the backup", len(entries))
	}

	// Restore with mgmtapi restore into a data directory that does not exist yet.
	restored := filepath.Join(dir, "restored")
	cmd = exec.Command(os.Args[0], "restore", "--from", file, "--data-dir", restored)
	cmd.Env = append(os.Environ(), serveVariable+"=1")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "mgmtapi: restored "+file) {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(restored); len(entries) != 1 || entries[0].Name() != "mgmtapi.db" {
		t.Fatalf("the restored data directory holds %v, want only mgmtapi.db", entries)
	}
	if verdict := integrityCheck(t, filepath.Join(restored, "mgmtapi.db")); verdict != "ok" {
		t.Fatalf("integrity_check of the restored database: %s", verdict)
	}
	srv = startServer(t, logs, []string{"--data-dir", restored})
	listed := listSets(t, srv.base)

	var before, during, after int
	for _, w := range writes {
		got, present := listed[w.id]
		delete(listed, w.id)
		switch {
		case w.answered.Before(began):
			before++
			if !present {
				t.Errorf("set %s (%s), acknowledged before the backup began, is missing", w.id, w.name)
			} else if got != w.acknowledged {
				t.Errorf("set %s: restored as %+v, written as %+v", w.id, got, w.acknowledged)
			}
		case w.sent.After(finished):
			after++
			if present {
				t.Errorf("set %s (%s), sent after the backup finished, is in the backup", w.id, w.name)
			}
		default:
			during++
			if present && got != w.acknowledged {
				t.Errorf("set %s: restored as %+v, written as %+v", w.id, got, w.acknowledged)
			}
		}
	}
	for id, got := range listed {
		t.Errorf("set %s (%s) was restored but never acknowledged", id, got.name)
	}
	t.Logf("%d sets acknowledged before the backup, %d during it, %d after it; backup took %s",
		before, during, after, finished.Sub(began).Round(time.Millisecond))
}

// createSet creates a recording-rule set with one rule and returns its id.
func createSet(client *http.Client, base string, a acknowledged) (string, error) {
	body, _ := json.Marshal(map[string]any{"name": a.name, "groups": []any{
		map[string]any{"name": "g", "rules": []any{map[string]any{"record": "r", "expr": a.expr}}}}})
	req, _ := http.NewRequest("POST", base+crashRulesPath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+crashKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	var created struct {
		ID string `json:"id"`
	}
	if err != nil || res.StatusCode != http.StatusOK || json.Unmarshal(out, &created) != nil || created.ID == "" {
		return "", fmt.Errorf("create %q: %d %s %v", a.name, res.StatusCode, out, err)
	}
	return created.ID, nil
}

// listSets returns every recording-rule set of the team by id, with its name and only rule.
func listSets(t *testing.T, base string) map[string]acknowledged {
	t.Helper()
	req, _ := http.NewRequest("GET", base+crashRulesPath, nil)
	req.Header.Set("Authorization", "Bearer "+crashKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var list struct {
		Sets []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Groups []struct {
				Rules []struct {
					Expr string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"sets"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil {
		t.Fatalf("list sets: %d %.300s", res.StatusCode, body)
	}
	sets := map[string]acknowledged{}
	for _, s := range list.Sets {
		a := acknowledged{id: s.ID, name: s.Name}
		if len(s.Groups) == 1 && len(s.Groups[0].Rules) == 1 {
			a.expr = s.Groups[0].Rules[0].Expr
		}
		sets[s.ID] = a
	}
	return sets
}

// integrityCheck returns the verdict of PRAGMA integrity_check on the SQLite file at path, opened
// read-only.
func integrityCheck(t *testing.T, path string) string {
	t.Helper()
	return integrityCheckOf(t, path, "file:"+path+"?mode=ro")
}

// integrityCheckOf returns the verdict of PRAGMA integrity_check on the SQLite file at path, opened
// with the DSN.
func integrityCheckOf(t *testing.T, path, dsn string) string {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var verdict string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&verdict); err != nil {
		t.Fatalf("integrity_check %s: %v", path, err)
	}
	return verdict
}

// runBackup runs `mgmtapi backup` in this process with the given variables.
func runBackup(env map[string]string, args ...string) (stdout string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), append([]string{"backup"}, args...), func(k string) string { return env[k] },
		&out, &errOut, nil)
	return out.String(), err
}

func TestBackupRefuses(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	p := start(t, nil, "--data-dir", data)
	backups := filepath.Join(dir, "backups")
	if err := os.Mkdir(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(backups, "b.db")

	t.Run("an existing target unless --force", func(t *testing.T) {
		if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := runBackup(nil, "--data-dir", data, "--to", target)
		if err == nil || !strings.Contains(err.Error(), target+": already exists") || !strings.Contains(err.Error(), "--force") {
			t.Fatalf("got %v, want the target named as existing and --force suggested", err)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep me" {
			t.Fatalf("the refused target was changed to %.20q", b)
		}
		out, err := runBackup(nil, "--data-dir", data, "--to", target, "--force")
		if err != nil || !strings.Contains(out, "to "+target+":") {
			t.Fatalf("with --force: %v %q", err, out)
		}
		if verdict := integrityCheck(t, target); verdict != "ok" {
			t.Fatalf("integrity_check of the forced backup: %s", verdict)
		}
	})

	t.Run("a target that cannot be written, naming the path", func(t *testing.T) {
		notADir := filepath.Join(backups, "plain-file")
		if err := os.WriteFile(notADir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, to := range []string{filepath.Join(dir, "missing", "b.db"), filepath.Join(notADir, "b.db"), backups} {
			_, err := runBackup(nil, "--data-dir", data, "--to", to)
			if err == nil || !strings.Contains(err.Error(), to) {
				t.Errorf("--to %s: got %v, want an error naming the path", to, err)
			}
		}
		if os.Geteuid() != 0 { // root writes to any directory
			locked := filepath.Join(dir, "locked")
			if err := os.Mkdir(locked, 0o500); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(locked, "b.db")
			if _, err := runBackup(nil, "--data-dir", data, "--to", to); err == nil ||
				!strings.Contains(err.Error(), to) || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("--to %s: got %v, want permission denied naming the path", to, err)
			}
		}
	})

	t.Run("PostgreSQL, pointing to pg_dump", func(t *testing.T) {
		url := "postgres://backup:s3cret@db.example:5432/mgmt"
		for _, c := range []struct {
			env  map[string]string
			args []string
			from string
		}{
			{nil, []string{"--database-url", url}, "--database-url"},
			{map[string]string{"MGMTAPI_DATABASE_URL": url}, nil, "MGMTAPI_DATABASE_URL"},
		} {
			_, err := runBackup(c.env, append(c.args, "--to", filepath.Join(dir, "pg.db"))...)
			if err == nil || !strings.Contains(err.Error(), "pg_dump") || !strings.Contains(err.Error(), c.from) ||
				strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: got %v, want a refusal naming %s and pg_dump, without the password", c.from, err, c.from)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "pg.db")); !os.IsNotExist(err) {
			t.Errorf("a refused backup left a file: %v", err)
		}
	})

	t.Run("a data directory without a database, creating nothing", func(t *testing.T) {
		empty := filepath.Join(dir, "empty")
		_, err := runBackup(nil, "--data-dir", empty, "--to", filepath.Join(dir, "e.db"))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(empty, "mgmtapi.db")) {
			t.Errorf("got %v, want an error naming %s", err, filepath.Join(empty, "mgmtapi.db"))
		}
		if _, err := os.Stat(empty); !os.IsNotExist(err) {
			t.Errorf("the backup created the data directory: %v", err)
		}
		// An SQLite file that is not an mgmtapi database.
		other := filepath.Join(dir, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+filepath.Join(other, "mgmtapi.db"))
		if err == nil {
			_, err = db.Exec("CREATE TABLE t (x)")
			db.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = runBackup(nil, "--data-dir", other, "--to", filepath.Join(dir, "o.db"))
		if err == nil || !strings.Contains(err.Error(), "not an mgmtapi database") {
			t.Errorf("got %v, want 'not an mgmtapi database'", err)
		}
	})

	// Nothing but the backup, the refused file and the plain file is left: no temporary file.
	entries, _ := os.ReadDir(backups)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "b.db plain-file" {
		t.Errorf("the backup directory holds %q", names)
	}
	if status, _ := p.get(t, "/readyz", ""); status != http.StatusOK {
		t.Errorf("the server is not ready after the backups: %d", status)
	}
}

// runRestore runs `mgmtapi restore` in this process.
func runRestore(args ...string) (stdout string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), append([]string{"restore"}, args...), func(string) string { return "" },
		&out, &errOut, nil)
	return out.String(), err
}

// TestRestore takes a backup, writes one more set, and restores: refused while the server runs
// and without --force, both leaving the database as it was; then the restored database lacks the
// later set and the replaced one, kept beside it, still has it.
func TestRestore(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	env := map[string]string{"MGMTAPI_BOOTSTRAP_KEY": crashKey}
	p := start(t, env, "--data-dir", data)
	client := &http.Client{}
	before, err := createSet(client, "http://"+p.addr, acknowledged{name: "before", expr: "up"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "b.db")
	if _, err := runBackup(nil, "--data-dir", data, "--to", file); err != nil {
		t.Fatal(err)
	}
	later, err := createSet(client, "http://"+p.addr, acknowledged{name: "later", expr: "up"})
	if err != nil {
		t.Fatal(err)
	}
	backupBytes, _ := os.ReadFile(file)

	_, err = runRestore("--from", file, "--data-dir", data, "--force")
	if err == nil || !strings.Contains(err.Error(), "running server: stop it first") {
		t.Fatalf("restore under a running server: got %v, want a refusal", err)
	}
	if status, _ := p.get(t, crashRulesPath+"/"+later, crashKey); status != http.StatusOK {
		t.Fatalf("after the refused restore the server answers %d for the later set", status)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := runRestore("--from", file, "--data-dir", data); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("restore over a database without --force: got %v, want a refusal naming --force", err)
	}

	t.Run("a file that is not a backup, changing nothing", func(t *testing.T) {
		notSQLite := filepath.Join(dir, "notes.txt")
		other := filepath.Join(dir, "other.db")
		live := filepath.Join(dir, "live.db")
		for _, f := range []string{notSQLite, live, live + "-wal"} {
			if err := os.WriteFile(f, []byte("not a database"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		db, err := sql.Open("sqlite", "file:"+other)
		if err == nil {
			_, err = db.Exec("CREATE TABLE t (x)")
			db.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		for from, want := range map[string]string{
			notSQLite:                     "not a database",
			other:                         "not an mgmtapi database",
			live:                          "-wal file beside it",
			filepath.Join(dir, "missing"): "no such file",
		} {
			_, err := runRestore("--from", from, "--data-dir", data, "--force")
			if err == nil || !strings.Contains(err.Error(), "--from "+from) || !strings.Contains(err.Error(), want) {
				t.Errorf("--from %s: got %v, want an error naming it and %q", from, err, want)
			}
		}
		entries, _ := os.ReadDir(data)
		for _, e := range entries {
			if e.Name() != "mgmtapi.db" {
				t.Errorf("a refused restore left %s in the data directory", e.Name())
			}
		}
	})

	t.Run("PostgreSQL, pointing to pg_restore", func(t *testing.T) {
		_, err := runRestore("--from", file, "--database-url", "postgres://u:s3cret@db.example/mgmt")
		if err == nil || !strings.Contains(err.Error(), "pg_restore") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("got %v, want a refusal naming pg_restore without the password", err)
		}
	})

	out, err := runRestore("--from", file, "--data-dir", data, "--force")
	if err != nil {
		t.Fatalf("restore --force: %v", err)
	}
	kept := regexp.MustCompile(`(?m)^mgmtapi: the database it replaced is kept as (\S+)$`).FindStringSubmatch(out)
	if kept == nil {
		t.Fatalf("restore did not say where the replaced database is: %q", out)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, backupBytes) {
		t.Error("restore changed the backup file")
	}
	p = start(t, env, "--data-dir", data)
	if status, _ := p.get(t, crashRulesPath+"/"+before, crashKey); status != http.StatusOK {
		t.Errorf("the set written before the backup: %d after the restore, want 200", status)
	}
	if status, _ := p.get(t, crashRulesPath+"/"+later, crashKey); status != http.StatusNotFound {
		t.Errorf("the set written after the backup: %d after the restore, want 404", status)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}

	// The replaced database, checkpointed before it was moved, holds the later set on its own;
	// stale -wal and -shm files in a new data directory do not stay beside the restored database.
	again := filepath.Join(dir, "again")
	if err := os.Mkdir(again, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.WriteFile(filepath.Join(again, "mgmtapi.db"+suffix), []byte("stale"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(kept[1] + "-wal"); err == nil {
		t.Errorf("the replaced database kept a -wal file: it was not checkpointed")
	}
	if _, err := runRestore("--from", kept[1], "--data-dir", again); err != nil {
		t.Fatalf("restore of the replaced database: %v", err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(filepath.Join(again, "mgmtapi.db"+suffix)); err == nil {
			t.Errorf("a stale mgmtapi.db%s stayed beside the restored database", suffix)
		}
	}
	p = start(t, env, "--data-dir", again)
	if status, _ := p.get(t, crashRulesPath+"/"+later, crashKey); status != http.StatusOK {
		t.Errorf("the replaced database lacks the set written after the backup: %d", status)
	}

	// A damaged database, which cannot even be opened, is replaced with --force and kept.
	damaged := filepath.Join(dir, "damaged")
	if err := os.Mkdir(damaged, 0o700); err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte("damaged "), 1024)
	if err := os.WriteFile(filepath.Join(damaged, "mgmtapi.db"), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runRestore("--from", file, "--data-dir", damaged); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("restore over a damaged database without --force: got %v, want a refusal naming --force", err)
	}
	out, err = runRestore("--from", file, "--data-dir", damaged, "--force")
	kept = regexp.MustCompile(`(?m)^mgmtapi: the database it replaced is kept as (\S+)$`).FindStringSubmatch(out)
	if err != nil || kept == nil || !strings.Contains(out, "could not be opened") {
		t.Fatalf("restore over a damaged database: %v %q", err, out)
	}
	if b, _ := os.ReadFile(kept[1]); !bytes.Equal(b, garbage) {
		t.Error("the damaged database was not kept as it was")
	}
	// Two more restores in the same second keep what each one replaced.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, want := range []string{"", "-2"} {
		res, err := restoreSQLite(context.Background(), file, damaged, true, now)
		name := filepath.Join(damaged, "mgmtapi.db.replaced-"+now.UTC().Format("20060102T150405Z")) + want
		if err != nil || res.replaced != name {
			t.Fatalf("a restore in the same second: %v, kept as %q, want %q", err, res.replaced, name)
		}
	}
	if b, _ := os.ReadFile(kept[1]); !bytes.Equal(b, garbage) {
		t.Error("a later restore overwrote what the first one kept")
	}
	p = start(t, env, "--data-dir", damaged)
	if status, _ := p.get(t, crashRulesPath+"/"+before, crashKey); status != http.StatusOK {
		t.Errorf("after restoring over a damaged database the set written before the backup answers %d", status)
	}
}
