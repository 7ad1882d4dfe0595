package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildMgmtapi compiles ./cmd/mgmtapi of this module into dir and returns the binary's path.
func buildMgmtapi(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mgmtapi")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mgmtapi/mgmtapi/cmd/mgmtapi")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/mgmtapi: %w\n%s", err, out)
	}
	return bin, nil
}

// mgmtapiProcess is a mgmtapi server running as a child process, so that its memory is its own.
type mgmtapiProcess struct {
	cmd         *exec.Cmd
	baseURL     string
	operatorKey string
	logPath     string
	exited      chan struct{}
}

// startMgmtapi runs bin serve on a free loopback port with its data in dataDir (SQLite) or in
// databaseURL (PostgreSQL) and waits until it answers /readyz. Its output goes to a log file in
// dataDir, shown when it fails.
func startMgmtapi(ctx context.Context, bin, dataDir, databaseURL string) (*mgmtapiProcess, error) {
	p, err := newMgmtapiProcess(bin, dataDir, databaseURL)
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start mgmtapi: %w", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.baseURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("mgmtapi ended before it was ready:\n%s", p.logTail())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("mgmtapi not ready after 60s:\n%s", p.logTail())
		}
	}
}

// stop ends the server gracefully (SIGTERM), or kills it when it does not end within 20 s.
// newMgmtapiProcess prepares bin serve on a free loopback port with its data in dataDir (SQLite)
// or in databaseURL (PostgreSQL), its output in a log file in dataDir; the caller starts it.
func newMgmtapiProcess(bin, dataDir, databaseURL string) (*mgmtapiProcess, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	p := &mgmtapiProcess{
		baseURL:     "http://127.0.0.1:" + strconv.Itoa(port),
		operatorKey: "mgmtload-" + hex.EncodeToString(key),
		logPath:     filepath.Join(dataDir, "mgmtapi.log"),
		exited:      make(chan struct{}),
	}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	args := []string{"serve", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--data-dir", dataDir,
		"--log-level", "warn", "--policy-limit", "1000000000"}
	if databaseURL != "" {
		args = append(args, "--database-url", databaseURL)
	}
	p.cmd = exec.Command(bin, args...)
	// No load balancer watches this server's /readyz: it may stop as soon as it is told to.
	p.cmd.Env = append(os.Environ(), "MGMTAPI_OPERATOR_KEY="+p.operatorKey, "MGMTAPI_SHUTDOWN_DELAY=0s")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	return p, nil
}

// stop ends the server gracefully (SIGTERM), or kills it when it does not end within 20 s.
func (p *mgmtapiProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// logTail is the end of the server's output.
func (p *mgmtapiProcess) logTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// resetPeakRSS asks the kernel to restart the process's peak resident set size (VmHWM) from its
// current size, so that the next peakRSS covers only what follows. It reports whether it could.
func (p *mgmtapiProcess) resetPeakRSS() bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0) == nil
}

// peakRSS is the process's peak resident set size in bytes (VmHWM), or -1 when it cannot be read.
func (p *mgmtapiProcess) peakRSS() int64 { return p.status("VmHWM:") }

// rss is the process's resident set size in bytes (VmRSS), or -1 when it cannot be read.
func (p *mgmtapiProcess) rss() int64 { return p.status("VmRSS:") }

// status reads one size field of /proc/<pid>/status in bytes, or -1.
func (p *mgmtapiProcess) status(field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// call sends one setup request and decodes a 2xx answer into out (when not nil).
func call(ctx context.Context, baseURL, authorization, method, path string, body any, out any) error {
	var reader *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(b)
	} else {
		reader = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, baseURL+path, reader)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+authorization)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(buf.String()))
	}
	if out != nil {
		return json.Unmarshal(buf.Bytes(), out)
	}
	return nil
}
