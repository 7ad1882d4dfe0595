package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// backupSocketName is the Unix socket, in the data directory, on which `mgmtapi serve` copies
// its SQLite database for `mgmtapi backup`. The server holds the database file alone (the
// default --sqlite-file-access exclusive), so another process cannot read it; the socket, in a
// directory only the server's user may enter, lets the backup command ask the server instead.
const backupSocketName = "mgmtapi.sock"

// backupCopyPath is the one request the socket serves: POST {"into": FILE}, FILE an absolute path
// to a file that is absent or empty; the server writes the copy there (db.CopyInto) and answers
// 200 {"into": FILE}, or 400/500 with {code, message}.
const backupCopyPath = "/v1/copy"

// backupCopyRequest is the body of a copy request and of its answer.
type backupCopyRequest struct {
	Into string `json:"into"`
}

// serveBackupSocket serves copy requests on DIR/mgmtapi.sock until stop is called (which
// removes the socket). A socket file left there by a server that was killed is replaced: the
// database's exclusive lock, already taken, says no other server runs on this directory.
func serveBackupSocket(dataDir string, database *db.DB, logger *slog.Logger) (stop func(), err error) {
	path := filepath.Join(dataDir, backupSocketName)
	if info, err := os.Lstat(path); err == nil {
		if info.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s: exists and is not a socket; move it away", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("%s: remove the socket a stopped server left: %w", path, unwrapPath(err))
		}
	}
	listener, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("%s: listen for mgmtapi backup: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		listener.Close()
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	databasePath, err := filepath.Abs(filepath.Join(dataDir, sqliteFileName))
	if err != nil {
		listener.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+backupCopyPath, func(w http.ResponseWriter, r *http.Request) {
		answerCopy(w, r, database, databasePath, logger)
	})
	mux.HandleFunc("POST "+keysCreatePath, func(w http.ResponseWriter, r *http.Request) {
		answerKeysCreate(w, r, database, logger) // mgmtapi keys create
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(listener) }()
	return func() { _ = srv.Close() }, nil
}

// answerCopy runs one copy request; databasePath is the database's file (absolute), which (with
// its -wal, -shm and -journal files) is never a target.
func answerCopy(w http.ResponseWriter, r *http.Request, database *db.DB, databasePath string, logger *slog.Logger) {
	answer := func(status int, body any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	refuse := func(status int, format string, args ...any) {
		answer(status, map[string]any{"code": status, "message": fmt.Sprintf(format, args...)})
	}
	var req backupCopyRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		refuse(http.StatusBadRequest, "body: must be a JSON object {\"into\": FILE}: %v", err)
		return
	}
	switch info, err := os.Lstat(req.Into); {
	case !filepath.IsAbs(req.Into):
		refuse(http.StatusBadRequest, "into: must be an absolute path, not %q", req.Into)
		return
	case err != nil && !errors.Is(err, os.ErrNotExist):
		refuse(http.StatusBadRequest, "into %s: %v", req.Into, unwrapPath(err))
		return
	case err == nil && (!info.Mode().IsRegular() || info.Size() != 0):
		refuse(http.StatusBadRequest, "into %s: must be absent or an empty regular file", req.Into)
		return
	case strings.HasPrefix(filepath.Clean(req.Into), databasePath):
		refuse(http.StatusBadRequest, "into %s: is the database or one of its files", req.Into)
		return
	}
	started := time.Now()
	if err := database.CopyInto(r.Context(), req.Into); err != nil {
		logger.Warn("backup copy failed", "into", req.Into, "error", err.Error())
		refuse(http.StatusInternalServerError, "%v", err)
		return
	}
	logger.Info("backup copy written", "into", req.Into, "took", time.Since(started).Round(time.Millisecond).String())
	answer(http.StatusOK, backupCopyRequest{Into: req.Into})
}

// copyThroughServer asks the server that serves dataDir's socket to copy its database into
// into. served=false, with no error, when no server answers there (no socket, or one a stopped
// server left): the caller then opens the database itself.
func copyThroughServer(ctx context.Context, dataDir, into string) (served bool, err error) {
	served, status, answer, err := askServer(ctx, dataDir, backupCopyPath, backupCopyRequest{Into: into})
	if !served || err != nil {
		return served, err
	}
	if status != http.StatusOK {
		return false, fmt.Errorf("the server on %s refused the copy (%d): %s", filepath.Join(dataDir, backupSocketName), status, refusalMessage(answer))
	}
	return true, nil
}

// askServer POSTs req as JSON to path on the socket of the server that serves dataDir, and
// answers its status and (at most 64 KiB of) its body. served=false, with no error, when no server
// answers there (no socket, or one a stopped server left).
func askServer(ctx context.Context, dataDir, path string, req any) (served bool, status int, answer []byte, err error) {
	socket := filepath.Join(dataDir, backupSocketName)
	if _, err := os.Lstat(socket); errors.Is(err, os.ErrNotExist) {
		return false, 0, nil, nil
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "unix", socket)
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) {
		return false, 0, nil, nil
	}
	if err != nil {
		return false, 0, nil, fmt.Errorf("ask the server on %s: %w", socket, err)
	}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil },
	}}
	defer client.CloseIdleConnections()
	body, _ := json.Marshal(req)
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://mgmtapi"+path, bytes.NewReader(body))
	if err != nil {
		return false, 0, nil, err
	}
	httpReq.Header.Set("Content-Type", "application/json")
	res, err := client.Do(httpReq)
	if err != nil {
		return false, 0, nil, fmt.Errorf("ask the server on %s: %w", socket, err)
	}
	defer res.Body.Close()
	answer, _ = io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return true, res.StatusCode, answer, nil
}

// refusalMessage is the message of a refusal the server's socket answered (its JSON body's
// message, else the body itself).
func refusalMessage(answer []byte) string {
	var refusal struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(answer, &refusal) != nil || refusal.Message == "" {
		return string(bytes.TrimSpace(answer))
	}
	return refusal.Message
}
