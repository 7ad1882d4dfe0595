package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// runOnce runs the program with args and the given variables, with no ready channel.
func runOnce(args []string, env map[string]string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut, nil)
	return out.String(), errOut.String(), err
}

func TestHelpExitsCleanlyAndListsEverything(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"-help"}, {"serve", "--help"}, {"serve", "-h"}} {
		stdout, _, err := runOnce(args, nil)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		for _, want := range []string{"mgmtapi serve", "mgmtapi version", "mgmtapi sync-rules", "--addr", "--external-url", "--tls-cert-file",
			"--tls-key-file", "--database-wait", "--shutdown-delay", "--access-log", "MGMTAPI_POLICY_LIMIT",
			"MGMTAPI_BOOTSTRAP_KEY, MGMTAPI_BOOTSTRAP_KEY_FILE", "MGMTAPI_OPERATOR_KEY, MGMTAPI_OPERATOR_KEY_FILE"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: the help lacks %q", args, want)
			}
		}
	}
	for _, args := range [][]string{{"bogus"}, {"--verbose"}, nil} {
		_, _, err := runOnce(args, nil)
		var usage usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "the commands are serve, backup, restore, keys, export, apply, sync-rules, healthcheck, version and help") {
			t.Errorf("%v: error %v, want a usage error listing the commands", args, err)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, _, err := runOnce(args, nil)
		if err != nil || !strings.HasPrefix(stdout, "mgmtapi ") || !strings.Contains(stdout, " revision ") ||
			!strings.HasSuffix(stdout, " "+runtime.Version()+"\n") {
			t.Errorf("%v: %q, %v", args, stdout, err)
		}
	}
}

// TestVersionOfABuiltBinary builds the command with VCS stamping and checks that `version` prints
// the checkout's revision. The go command stamps nothing in a git worktree (its .git is a file),
// where the line must say so with "unknown" rather than invent a revision.
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "mgmtapi")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	line := string(out)
	top, _ := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	gitDir, statErr := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git"))
	if statErr == nil && !gitDir.IsDir() {
		if !strings.Contains(line, " revision unknown ") {
			t.Fatalf("in a worktree, version printed %q", line)
		}
		t.Logf("git worktree: the go command stamped no revision: %s", line)
		return
	}
	if !strings.Contains(line, " revision "+strings.TrimSpace(string(head))+" ") {
		t.Fatalf("version printed %q, want the revision %s", line, head)
	}
}

func TestBuildInfoMetric(t *testing.T) {
	p := start(t, nil, "--data-dir", t.TempDir())
	status, body := p.get(t, "/metrics", "")
	m := regexp.MustCompile(`(?m)^mgmtapi_build_info\{goversion="([^"]+)",revision="([^"]+)",version="([^"]+)"\} 1$`).FindStringSubmatch(body)
	if status != 200 || m == nil || m[1] != runtime.Version() {
		t.Fatalf("/metrics: %d, build info %q", status, m)
	}
}

// servers returns the URL of the servers entry of the served JSON document.
func servers(t *testing.T, p *process, client *http.Client, scheme string) string {
	t.Helper()
	res, err := client.Get(scheme + "://" + p.addr + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`"servers":\[\{[^}]*"url":"([^"]*)"`).FindSubmatch(body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("openapi.json: %d %.300s", res.StatusCode, body)
	}
	return string(m[1])
}

func TestExternalURL(t *testing.T) {
	p := start(t, nil, "--data-dir", t.TempDir(), "--external-url", "https://mgmt.example.com/observability/")
	if got := servers(t, p, http.DefaultClient, "http"); got != "https://mgmt.example.com/observability" {
		t.Errorf("--external-url: servers %q", got)
	}
	status, body := p.get(t, "/openapi.yaml", "")
	if status != 200 || !strings.Contains(body, "url: https://mgmt.example.com/observability\n") {
		t.Errorf("openapi.yaml: %d %.400s", status, body)
	}
	_ = p.stop()

	p = start(t, map[string]string{"MGMTAPI_EXTERNAL_URL": "http://10.0.0.7:8080"}, "--data-dir", t.TempDir())
	if got := servers(t, p, http.DefaultClient, "http"); got != "http://10.0.0.7:8080" {
		t.Errorf("MGMTAPI_EXTERNAL_URL: servers %q", got)
	}
	_ = p.stop()

	// A wildcard bind never shows as [::] or 0.0.0.0.
	p = start(t, nil, "--data-dir", t.TempDir(), "--addr", ":0")
	_, port, _ := net.SplitHostPort(p.addr)
	if got := servers(t, p, http.DefaultClient, "http"); got != "http://127.0.0.1:"+port {
		t.Errorf("--addr :0: servers %q, want http://127.0.0.1:%s", got, port)
	}

	_, _, err := runOnce([]string{"serve", "--data-dir", t.TempDir(), "--external-url", "https://x.example.com/?q=1"}, nil)
	if err == nil || !strings.Contains(err.Error(), "--external-url: must have no query or fragment") {
		t.Errorf("bad --external-url: %v", err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its key, and returns their paths
// and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "mgmtapi test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLSServesHTTP2(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	p := start(t, map[string]string{"MGMTAPI_TLS_KEY_FILE": keyFile}, "--data-dir", t.TempDir(), "--tls-cert-file", certFile)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	res, err := client.Get("https://" + p.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != `{"status":"ok"}` {
		t.Fatalf("GET /healthz over TLS: %d %s", res.StatusCode, body)
	}
	if res.ProtoMajor != 2 || res.TLS == nil || res.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("protocol %s, ALPN %v: want HTTP/2", res.Proto, res.TLS)
	}
	if got := servers(t, p, client, "https"); got != "https://"+p.addr {
		t.Errorf("servers under TLS: %q, want https://%s", got, p.addr)
	}
	// Plain HTTP on the TLS port is not served: a 400 with the Error body.
	res, err = http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		t.Fatalf("plain HTTP on the TLS port: %v", err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || res.Header.Get("Content-Type") != "application/json; charset=utf-8" ||
		!strings.Contains(string(body), `"message":"request: this port serves HTTPS`) {
		t.Fatalf("plain HTTP on the TLS port: %d %q %s; want 400 with the Error body", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	_ = p.stop()

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert-file", certFile}, "--tls-cert-file and --tls-key-file: give both"},
		{[]string{"--tls-cert-file", certFile, "--tls-key-file", certFile}, "--tls-cert-file " + certFile + " and --tls-key-file " + certFile},
		{[]string{"--tls-cert-file", filepath.Join(t.TempDir(), "none.pem"), "--tls-key-file", keyFile}, "none.pem: no such file"},
	} {
		_, _, err := runOnce(append([]string{"serve", "--data-dir", t.TempDir()}, c.args...), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestSecretsFromFilesAndTheirLength(t *testing.T) {
	dir := t.TempDir()
	opFile := filepath.Join(dir, "operator-key")
	if err := os.WriteFile(opFile, []byte(operatorKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bootFile := filepath.Join(dir, "bootstrap-key")
	if err := os.WriteFile(bootFile, []byte(chosenKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, map[string]string{"MGMTAPI_OPERATOR_KEY_FILE": opFile, "MGMTAPI_BOOTSTRAP_KEY_FILE": bootFile}, "--data-dir", t.TempDir())
	if status, body := p.get(t, "/admin/v1/teams", operatorKey); status != 200 {
		t.Errorf("operator key from its file: %d %s", status, body)
	}
	if status, body := p.get(t, "/mgmt/openapi/5/aaa/api-keys/v3/list/all", chosenKey); status != 200 {
		t.Errorf("bootstrap key from its file: %d %s", status, body)
	}
	if strings.Contains(p.stdout.String()+p.stderr.String(), chosenKey) || strings.Contains(p.stdout.String(), operatorKey) {
		t.Error("a secret was written out")
	}
	_ = p.stop()

	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MGMTAPI_BOOTSTRAP_KEY": "k"}, "MGMTAPI_BOOTSTRAP_KEY: must be at least 32 characters, not 1"},
		{map[string]string{"MGMTAPI_OPERATOR_KEY": "op-secret"}, "MGMTAPI_OPERATOR_KEY: must be at least 32 characters, not 9"},
		{map[string]string{"MGMTAPI_OPERATOR_KEY": operatorKey, "MGMTAPI_OPERATOR_KEY_FILE": opFile}, "set one or the other, not both"},
		{map[string]string{"MGMTAPI_BOOTSTRAP_KEY_FILE": filepath.Join(dir, "absent")}, "cannot read the key file " + filepath.Join(dir, "absent")},
	} {
		_, _, err := runOnce([]string{"serve", "--data-dir", t.TempDir()}, c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.env, err, c.want)
		}
	}
}

func TestFlagWinsOverABadVariable(t *testing.T) {
	env := map[string]string{"MGMTAPI_POLICY_LIMIT": "abc"}
	p := start(t, env, "--data-dir", t.TempDir(), "--policy-limit", "5")
	if status, _ := p.get(t, "/healthz", ""); status != 200 {
		t.Fatalf("healthz %d", status)
	}
	_ = p.stop()
	_, _, err := runOnce([]string{"serve", "--data-dir", t.TempDir()}, env)
	if err == nil || !strings.Contains(err.Error(), `MGMTAPI_POLICY_LIMIT (the variable of --policy-limit): must be an integer, not "abc"`) {
		t.Fatalf("bad variable alone: %v", err)
	}
}

func TestDataDirErrorsNameThePath(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(file, "data")
	_, _, err := runOnce([]string{"serve", "--data-dir", under}, nil)
	if err == nil || !strings.Contains(err.Error(), "data dir "+under+": cannot create it: not a directory") {
		t.Errorf("data dir under a file: %v", err)
	}

	// The database file cannot be opened (here a directory stands in its place): SQLite's own
	// message comes with the path.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mgmtapi.db"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, err = runOnce([]string{"serve", "--data-dir", dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "data dir "+dir+": SQLite database "+filepath.Join(dir, "mgmtapi.db")+": ") {
		t.Errorf("database file unusable: %v", err)
	}

	readOnly := t.TempDir()
	if err := os.Chmod(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	if probe, err := os.CreateTemp(readOnly, "probe"); err == nil {
		probe.Close()
		t.Skip("this user (root?) writes in a read-only directory; the read-only case cannot be shown here")
	}
	_, _, err = runOnce([]string{"serve", "--data-dir", readOnly}, nil)
	if err == nil || !strings.Contains(err.Error(), "data dir "+readOnly+": cannot write in it: permission denied") {
		t.Errorf("read-only data dir: %v", err)
	}
}

// TestUnreachablePostgres starts against a port where nothing listens, with a short wait: the
// start retries, logs each attempt with the host and gives up with an error naming the host; the
// password shows nowhere.
func TestUnreachablePostgres(t *testing.T) {
	const url = "postgres://postgres:hunter2-secret@127.0.0.1:1/test?sslmode=disable"
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--database-wait", "1s",
		"--log-format", "json"}, func(string) string { return "" }, &stdout, &stderr, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "database 127.0.0.1:1/test: not reachable after ") ||
		!strings.Contains(err.Error(), "attempts in 1s (--database-wait)") || strings.Contains(err.Error(), "schema_migrations") {
		t.Fatalf("error %v", err)
	}
	attempts := regexp.MustCompile(`"msg":"database not reachable; retrying","host":"127.0.0.1:1/test","attempt":\d+`).FindAllString(stdout.String(), -1)
	if len(attempts) < 2 {
		t.Fatalf("%d logged attempts, want 2 or more in 1s:\n%s", len(attempts), stdout.String())
	}
	if strings.Contains(stdout.String()+stderr.String()+err.Error(), "hunter2") {
		t.Fatal("the password was written out")
	}

	_, _, err = runOnce([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--database-wait", "0s"}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "database 127.0.0.1:1/test: not reachable after 1 attempt in 0s") {
		t.Fatalf("--database-wait 0s: %v", err)
	}
}

// TestWrongDatabaseIsNotRetried: a server that answers "no such database" will not change its
// mind, so the start ends at once with the host named.
func TestWrongDatabaseIsNotRetried(t *testing.T) {
	base := os.Getenv(apitest.DatabaseURLVariable)
	if base == "" {
		t.Skip("needs PostgreSQL: set " + apitest.DatabaseURLVariable)
	}
	url := strings.Replace(base, "/test?", "/mgmtapi_ops_no_such_database?", 1)
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--database-url", url, "--database-wait", "1h"},
		func(string) string { return "" }, &stdout, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "/mgmtapi_ops_no_such_database: ") || !strings.Contains(err.Error(), "3D000") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(stdout.String(), "retrying") {
		t.Fatal("a missing database was retried")
	}
}

// readyz returns the status of GET /readyz and whether the answer asked to close the connection.
func readyz(t *testing.T, base string) (int, bool) {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	res.Body.Close()
	return res.StatusCode, res.Close
}

// TestReadyzDuringShutdownDelay ends run as SIGTERM does: /readyz answers 503 with Connection:
// close at once, while the API still answers, until the delay ends and run returns.
func TestReadyzDuringShutdownDelay(t *testing.T) {
	p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey}, "--data-dir", t.TempDir(), "--shutdown-delay", "3s")
	if status, closing := readyz(t, "http://"+p.addr); status != 200 || closing {
		t.Fatalf("before: %d close=%t", status, closing)
	}
	p.terminate()
	deadline := time.Now().Add(3 * time.Second)
	for {
		status, closing := readyz(t, "http://"+p.addr)
		if status == 503 {
			if !closing {
				t.Fatal("a draining answer without Connection: close")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not turn 503")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, body := p.get(t, "/mgmt/openapi/5/recording-rules/recording-rules/v1", chosenKey); status != 200 {
		t.Fatalf("the API while draining: %d %s", status, body)
	}
	if err := p.wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.stdout.String(), "msg=\"draining: /readyz answers 503") {
		t.Fatalf("no draining line:\n%s", p.stdout)
	}
}

// TestSIGTERMDrainsAProcess sends SIGTERM to a real process: /readyz answers 503 before the
// listener closes, and the process exits with status 0.
func TestSIGTERMDrainsAProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--shutdown-delay", "3s")
	cmd.Env = append(os.Environ(), serveVariable+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	var addr string
	for addr == "" && lines.Scan() {
		if m := listeningAddr.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if addr == "" {
		t.Fatal("the process did not listen")
	}
	if status, _ := readyz(t, "http://"+addr); status != 200 {
		t.Fatalf("before SIGTERM: %d", status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		status, closing := readyz(t, "http://"+addr)
		if status == 503 && closing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d after SIGTERM", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
