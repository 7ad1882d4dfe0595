package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// serveBareVariable, set to 1 in the environment, makes this program serve the bare handler
// instead of measuring: the baseline runs as a process of its own, like mgmtapi, so that neither
// server shares a Go runtime with the load generator.
const serveBareVariable = "MGMTLOAD_SERVE_BARE"

// serveBare serves the bare handler on a free loopback port, writes "listening on <address>" to
// stdout and serves until stdin ends, which happens when the measuring process ends.
func serveBare() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", l.Addr())
	srv := &http.Server{Handler: newBareHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// bareProcess is the bare handler running as a child process.
type bareProcess struct {
	cmd     *exec.Cmd
	stdin   io.Closer
	baseURL string
}

// startBareProcess runs this program again as the bare handler and waits for its address.
func startBareProcess(ctx context.Context) (*bareProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), serveBareVariable+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the bare handler: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the bare handler did not start: %q %v", line, err)
	}
	return &bareProcess{cmd: cmd, stdin: stdin, baseURL: "http://" + addr}, nil
}

// stop ends the bare handler by closing its stdin and waits for it.
func (b *bareProcess) stop() {
	_ = b.stdin.Close()
	_ = b.cmd.Wait()
}

// bareHandler is the baseline: a plain net/http handler holding JSON objects in a map. A GET
// encodes the object stored under its path; a POST decodes its body, stores it under a new id and
// answers it with that id; a PUT (used only to set the baseline up) stores its body under its path.
// It checks nothing and stores nothing durably: it is the cost of HTTP and JSON alone, for the
// same request and answer shapes as mgmtapi's.
type bareHandler struct {
	mu      sync.RWMutex
	objects map[string]any
	nextID  int64
}

func newBareHandler() *bareHandler { return &bareHandler{objects: map[string]any{}} }

func (h *bareHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.URL.Query() // parsed as a real handler would
	switch r.Method {
	case http.MethodGet:
		h.mu.RLock()
		object, ok := h.objects[r.URL.Path]
		h.mu.RUnlock()
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"code": "NOT_FOUND", "message": "no such object"})
			return
		}
		writeJSON(w, http.StatusOK, object)
	case http.MethodPost:
		var object map[string]any
		if err := json.NewDecoder(r.Body).Decode(&object); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"code": "INVALID_ARGUMENT", "message": err.Error()})
			return
		}
		h.mu.Lock()
		h.nextID++
		id := strconv.FormatInt(h.nextID, 10)
		object["id"] = id
		h.objects[r.URL.Path+"/"+id] = object
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, object)
	case http.MethodPut:
		var object any
		if err := json.NewDecoder(r.Body).Decode(&object); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"code": "INVALID_ARGUMENT", "message": err.Error()})
			return
		}
		h.mu.Lock()
		h.objects[r.URL.Path] = object
		h.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{})
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"code": "METHOD_NOT_ALLOWED", "message": r.Method})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"INTERNAL","message":"encode"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
