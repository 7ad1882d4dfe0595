package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServerHoldsItsSQLiteFileAlone runs `mgmtapi serve` as a process with the default
// --sqlite-file-access exclusive: another process cannot read the database (SQLITE_BUSY), the
// server listens on DATA-DIR/mgmtapi.sock (mode 0600), `mgmtapi backup` from this process gets a
// checked copy through it, the socket refuses what it must, a socket a killed server left is
// passed over by the backup and replaced by the next server, and SIGTERM removes it. A second
// server with --sqlite-file-access shared lets this process read its database and has no socket.
func TestServerHoldsItsSQLiteFileAlone(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv := startServer(t, filepath.Join(dir, "server.log"), []string{"--data-dir", data})
	database := filepath.Join(data, sqliteFileName)

	if err := readSchemaVersion(database); err == nil || !heldElsewhere(err) {
		t.Errorf("another process read the database of a server holding it alone: %v, want SQLITE_BUSY", err)
	}
	socket := filepath.Join(data, backupSocketName)
	info, err := os.Lstat(socket)
	if err != nil || info.Mode()&os.ModeSocket == 0 || info.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v %v, want a socket with mode 0600", socket, info, err)
	}

	file := filepath.Join(dir, "backup.db")
	out, err := runBackup(nil, "--data-dir", data, "--to", file)
	if err != nil || !strings.Contains(out, "integrity ok") {
		t.Fatalf("backup through the server: %v %q", err, out)
	}
	if got := integrityCheck(t, file); got != "ok" {
		t.Errorf("backup integrity_check: %s", got)
	}
	// a relative --to, from a working directory the server does not share
	t.Chdir(dir)
	if out, err := runBackup(nil, "--data-dir", data, "--to", "relative-backup.db"); err != nil {
		t.Errorf("backup to a relative path through the server: %v %q", err, out)
	}

	// What the socket refuses, with the {code, message} body.
	existing := filepath.Join(dir, "not-empty")
	if err := os.WriteFile(existing, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for into, want := range map[string]string{
		"relative.db":                      "into: must be an absolute path",
		existing:                           "must be absent or an empty regular file",
		filepath.Join(dir, "nope", "x.db"): "copy the database to",
		database + "-journal":              "is the database or one of its files",
	} {
		status, message := askCopy(t, socket, into)
		if status == http.StatusOK || !strings.Contains(message, want) {
			t.Errorf("copy into %q: %d %q, want a refusal saying %q", into, status, message, want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "x" {
		t.Errorf("a refused copy changed %s: %q", existing, b)
	}

	// Killed, the server leaves its socket: the backup finds nobody there and opens the database
	// itself; a new server replaces the socket and serves copies again.
	srv.kill(t)
	if _, err := os.Lstat(socket); err != nil {
		t.Fatalf("socket after kill -9: %v, want it left behind", err)
	}
	if out, err := runBackup(nil, "--data-dir", data, "--to", filepath.Join(dir, "after-kill.db")); err != nil {
		t.Errorf("backup beside a dead server's socket: %v %q", err, out)
	}
	srv = startServer(t, filepath.Join(dir, "server.log"), []string{"--data-dir", data})
	if err := readSchemaVersion(database); err == nil || !heldElsewhere(err) {
		t.Errorf("another process read the database of the restarted server: %v, want SQLITE_BUSY", err)
	}
	if out, err := runBackup(nil, "--data-dir", data, "--to", filepath.Join(dir, "after-restart.db")); err != nil {
		t.Errorf("backup through the restarted server: %v %q", err, out)
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("server stopped with %v", err)
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Errorf("socket after the server stopped: %v, want it removed", err)
	}
	if err := readSchemaVersion(database); err != nil {
		t.Errorf("read the database after the server stopped: %v", err)
	}

	shared := filepath.Join(dir, "shared")
	srv = startServer(t, filepath.Join(dir, "shared.log"), []string{"--data-dir", shared, "--sqlite-file-access", "shared"})
	defer srv.kill(t)
	if err := readSchemaVersion(filepath.Join(shared, sqliteFileName)); err != nil {
		t.Errorf("read the database of a server that shares it: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(shared, backupSocketName)); !os.IsNotExist(err) {
		t.Errorf("socket of a server that shares its file: %v, want none", err)
	}
	if out, err := runBackup(nil, "--data-dir", shared, "--to", filepath.Join(dir, "shared-backup.db")); err != nil {
		t.Errorf("backup of a server that shares its file: %v %q", err, out)
	}
}

// readSchemaVersion opens the database read-only in this process, without waiting for a lock,
// and reads its schema version.
func readSchemaVersion(path string) error {
	src, err := openSQLiteFile(path, "&_pragma=busy_timeout(0)")
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = schemaVersion(context.Background(), src, path)
	return err
}

// askCopy posts a copy request to the server's socket and returns the status and message.
func askCopy(t *testing.T, socket, into string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	defer client.CloseIdleConnections()
	body, _ := json.Marshal(backupCopyRequest{Into: into})
	res, err := client.Post("http://mgmtapi"+backupCopyPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var answer struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
		t.Fatalf("copy into %q: decode the answer: %v", into, err)
	}
	if res.StatusCode != http.StatusOK && answer.Code != res.StatusCode {
		t.Errorf("copy into %q: status %d, body code %d", into, res.StatusCode, answer.Code)
	}
	return res.StatusCode, answer.Message
}

// TestBackupSocketRefusesAPathTooLong: a data directory whose socket path does not fit a Unix
// socket address (108 bytes on Linux) gets an error naming the path, which serve logs as a
// warning and goes on without the socket.
func TestBackupSocketRefusesAPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stop, err := serveBackupSocket(dir, nil, slog.New(slog.DiscardHandler))
	if err == nil {
		stop()
		t.Fatal("a socket path of more than 108 bytes was accepted")
	}
	if !strings.Contains(err.Error(), filepath.Join(dir, backupSocketName)) {
		t.Errorf("error %q does not name the socket's path", err)
	}
}
