// Package smtptest runs a real SMTP server for tests: aiosmtpd (Debian's python3-aiosmtpd) on a
// free port of 127.0.0.1, with a handler of ours (mgmtapi_smtp_handler.py) that keeps every
// message it accepts and refuses some recipients on purpose (see the handler's comment):
// refused@… (RCPT 550), busy@… (RCPT 450), rejected@… (DATA 554), flaky@… (DATA 451 once per
// Message-ID).
//
// Without aiosmtpd the tests that need it are skipped, saying so; with MGMTAPI_REQUIRE_SMTP=1
// (.ci/run sets it) they fail instead.
package smtptest

import (
	_ "embed"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// RequireVariable, set to 1, makes a missing aiosmtpd fail the test instead of skipping it.
const RequireVariable = "MGMTAPI_REQUIRE_SMTP"

//go:embed mgmtapi_smtp_handler.py
var handler []byte

// Server is a running aiosmtpd; it stops when the test ends.
type Server struct {
	// Host and Port are where it listens (127.0.0.1).
	Host string
	Port int
	dir  string
}

// Message is one message the server accepted.
type Message struct {
	// From and To are the envelope's (MAIL FROM, the accepted RCPT TO).
	From string
	To   []string
	// Header is the message's header, Raw the whole message as received, Body its body decoded
	// from quoted-printable.
	Header mail.Header
	Raw    string
	Body   string
}

// python returns an interpreter that imports aiosmtpd, or skips (fails, under RequireVariable) t.
func python(t testing.TB) string {
	t.Helper()
	for _, candidate := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(candidate)
		if err != nil {
			continue
		}
		if exec.Command(p, "-c", "import aiosmtpd").Run() == nil {
			return p
		}
	}
	if os.Getenv(RequireVariable) == "1" {
		t.Fatalf("no python3 imports aiosmtpd and %s=1 (apt-get install python3-aiosmtpd)", RequireVariable)
	}
	t.Skipf("aiosmtpd is not installed (apt-get install python3-aiosmtpd); .ci/run installs it and sets %s=1", RequireVariable)
	return ""
}

// Start runs an aiosmtpd on a free port of 127.0.0.1 and waits (at most 30 s) until it greets.
func Start(t testing.TB) *Server {
	t.Helper()
	py := python(t)
	dir := t.TempDir()
	mailDir := filepath.Join(dir, "mail")
	if err := os.Mkdir(mailDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mgmtapi_smtp_handler.py"), handler, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(py, "-m", "aiosmtpd", "-n", "-l", "127.0.0.1:"+strconv.Itoa(port),
		"-c", "mgmtapi_smtp_handler.Recorder", mailDir)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start aiosmtpd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s := &Server{Host: "127.0.0.1", Port: port, dir: mailDir}
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(s.Host, strconv.Itoa(port)), time.Second)
		if err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			greeting := make([]byte, 3)
			_, rerr := io.ReadFull(conn, greeting)
			conn.Close()
			if rerr == nil && string(greeting) == "220" {
				return s
			}
		}
		select {
		case <-exited:
			t.Fatalf("aiosmtpd ended at its start: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("aiosmtpd did not greet within 30 s: %s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SMTPServer is the server as deliveries use it, From being from.
func (s *Server) SMTPServer(from string) *delivery.SMTPServer {
	return &delivery.SMTPServer{Host: s.Host, Port: s.Port, From: from}
}

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(s.dir, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(names, func(i, j int) bool { return number(names[i]) < number(names[j]) })
	out := make([]Message, 0, len(names))
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var envelope struct {
			From string   `json:"from"`
			To   []string `json:"to"`
		}
		b, err := os.ReadFile(strings.TrimSuffix(name, ".eml") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &envelope); err != nil {
			t.Fatal(err)
		}
		m, err := mail.ReadMessage(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatalf("%s is not a message: %v\n%s", name, err, raw)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(m.Body))
		if err != nil {
			t.Fatalf("%s: the body is not quoted-printable: %v", name, err)
		}
		out = append(out, Message{From: envelope.From, To: envelope.To, Header: m.Header, Raw: string(raw), Body: string(body)})
	}
	return out
}

// WaitMessages waits (at most 30 s) until the server has accepted n messages and returns them.
func (s *Server) WaitMessages(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := s.Messages(t)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the SMTP server accepted %d messages in 30 s, want %d", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Attempts returns the Message-ID of every DATA command the server got (accepted or refused),
// in order.
func (s *Server) Attempts(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "attempts.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func number(name string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(name), ".eml"))
	return n
}
