package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveVariable, set in the environment of this test binary, makes it run the program itself
// (main, with the arguments it was given) instead of the tests: the crash test starts the server
// as a separate OS process that it can kill -9.
const serveVariable = "MGMTAPI_CRASH_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveVariable) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	crashRounds    = 20
	crashWriters   = 8
	crashKey       = "mgmt_crash_test_key_0123456789abcdef"
	crashOperator  = "mgmt_crash_test_operator_0123456789abcdef"
	crashRulesPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
)

// acknowledged is a write the server answered with a 2xx: it must survive any crash after that.
type acknowledged struct {
	id, name, expr string
}

// TestKillDuringWrites runs `mgmtapi serve` as a process, has 8 writers create recording-rule sets
// through the API, kills the process with SIGKILL at a random moment, restarts it on the same
// database and reads every acknowledged set back through the API, unchanged; 20 rounds on SQLite
// and, when MGMTAPI_TEST_DATABASE_URL is set, on PostgreSQL. At the end the audit log is checked
// both ways: every acknowledged creation has its record, and every creation recorded is there
// (a write committed but killed before its answer has both or neither).
func TestKillDuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the server 21 times per engine")
	}
	engines(t, killDuringWrites)
}

func killDuringWrites(t *testing.T, database []string) {
	logs := filepath.Join(t.TempDir(), "server.log")
	var all []acknowledged
	for round := range crashRounds {
		srv := startServer(t, logs, database)
		// Everything acknowledged before the last kill is there, unchanged.
		if round > 0 {
			verifyAcknowledged(t, srv, all, logs)
		}
		acks := writeUntilKilled(t, srv, round)
		if len(acks) == 0 {
			t.Logf("round %d: no write was acknowledged before the kill", round)
		}
		all = append(all, acks...)
	}
	srv := startServer(t, logs, database)
	verifyAcknowledged(t, srv, all, logs)
	recorded := verifyAuditRecords(t, srv, all)
	t.Logf("%d rounds, %d acknowledged writes, all present after kill -9; %d audit records, each of a present set, one for every acknowledged write",
		crashRounds, len(all), recorded)
}

type serverProcess struct {
	cmd  *exec.Cmd
	base string
}

// kill sends SIGKILL and waits for the process to end; a process already ended is left alone.
func (s *serverProcess) kill(t *testing.T) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill: %v", err)
	}
	_ = s.cmd.Wait()
}

// startServer runs this binary as `mgmtapi serve` on a free port and waits until it is ready.
func startServer(t *testing.T, logs string, database []string) *serverProcess {
	t.Helper()
	return startServerUnder(t, logs, nil, database)
}

// startServerUnder is startServer with the server run under wrapper, a command line that executes
// the one after it (such as prlimit --nofile=256:256 --), and args passed to serve (the database's
// flags and any others). The process started is the wrapper's, which becomes the server.
func startServerUnder(t *testing.T, logs string, wrapper, args []string) *serverProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	log, err := os.OpenFile(logs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	line := append(append(append([]string{}, wrapper...), os.Args[0], "serve", "--addr", addr, "--log-level", "warn", "--kpi-interval", "1h"), args...)
	cmd := exec.Command(line[0], line[1:]...)
	cmd.Env = append(os.Environ(), serveVariable+"=1", "MGMTAPI_BOOTSTRAP_KEY="+crashKey, "MGMTAPI_OPERATOR_KEY="+crashOperator)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	srv := &serverProcess{cmd: cmd, base: "http://" + addr}
	t.Cleanup(func() { srv.kill(t) }) // when the test stops early
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(srv.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return srv
			}
		}
		if time.Now().After(deadline) {
			srv.kill(t)
			t.Fatalf("server not ready after 30 s: %v\n%s", err, tail(logs))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeUntilKilled has crashWriters writers create sets until the server dies, kills it at a
// random moment and returns the acknowledged creations.
func writeUntilKilled(t *testing.T, srv *serverProcess, round int) []acknowledged {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashWriters}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var acks []acknowledged
	var unexpected []string
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("round %d writer %d set %d", round, w, i)
				expr := fmt.Sprintf(`sum(up{round="%d",writer="%d",set="%d"})`, round, w, i)
				body, _ := json.Marshal(map[string]any{"name": name, "groups": []any{
					map[string]any{"name": "g", "rules": []any{map[string]any{"record": "r", "expr": expr}}}}})
				req, _ := http.NewRequest("POST", srv.base+crashRulesPath, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+crashKey)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				out, readErr := io.ReadAll(res.Body)
				res.Body.Close()
				if readErr != nil {
					return // killed while answering: not acknowledged
				}
				var created struct {
					ID string `json:"id"`
				}
				mu.Lock()
				if res.StatusCode != http.StatusOK || json.Unmarshal(out, &created) != nil || created.ID == "" {
					unexpected = append(unexpected, fmt.Sprintf("%d %s", res.StatusCode, out))
				} else {
					acks = append(acks, acknowledged{id: created.ID, name: name, expr: expr})
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Duration(20+rand.IntN(280)) * time.Millisecond)
	srv.kill(t)
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("round %d: %d creations were answered with an error, first: %s", round, len(unexpected), unexpected[0])
	}
	return acks
}

// verifyAcknowledged reads every acknowledged set back by id and compares its name and rule.
func verifyAcknowledged(t *testing.T, srv *serverProcess, acks []acknowledged, logs string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashWriters}}
	defer client.CloseIdleConnections()
	next := make(chan acknowledged)
	var mu sync.Mutex
	var problems []string
	var wg sync.WaitGroup
	for range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range next {
				if problem := readBack(client, srv.base, a); problem != "" {
					mu.Lock()
					problems = append(problems, problem)
					mu.Unlock()
				}
			}
		}()
	}
	for _, a := range acks {
		next <- a
	}
	close(next)
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("%d of %d acknowledged writes are missing or changed, first: %s\nserver log:\n%s",
			len(problems), len(acks), problems[0], tail(logs))
	}
}

func readBack(client *http.Client, base string, a acknowledged) string {
	req, _ := http.NewRequest("GET", base+crashRulesPath+"/"+url.PathEscape(a.id), nil)
	req.Header.Set("Authorization", "Bearer "+crashKey)
	res, err := client.Do(req)
	if err != nil {
		return fmt.Sprintf("%s: %v", a.id, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Sprintf("%s (%s): %d %s", a.id, a.name, res.StatusCode, body)
	}
	var got struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Groups []struct {
			Rules []struct {
				Expr string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.ID != a.id || got.Name != a.name ||
		len(got.Groups) != 1 || len(got.Groups[0].Rules) != 1 || got.Groups[0].Rules[0].Expr != a.expr {
		return fmt.Sprintf("%s: got %s, want name %q and expr %q", a.id, body, a.name, a.expr)
	}
	return ""
}

// verifyAuditRecords reads the bootstrap team's audit log and checks it both ways: every
// acknowledged creation has exactly one CreateRecordingRuleSet record naming its set, and every
// such record names a set that is there (read back through the API). It returns how many records
// it read.
func verifyAuditRecords(t *testing.T, srv *serverProcess, acks []acknowledged) int {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	recordsOf := map[string]int{} // set id → its creation records
	total := 0
	for token := ""; ; {
		u := srv.base + "/admin/v1/teams/1/audit?operation=CreateRecordingRuleSet&pageSize=1000"
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+crashOperator)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("list audit records: %v", err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var page struct {
			Records []struct {
				ResourceIds []string `json:"resourceIds"`
				Status      int      `json:"status"`
			} `json:"records"`
			NextPageToken string `json:"nextPageToken"`
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &page) != nil {
			t.Fatalf("list audit records: %d %s", res.StatusCode, body)
		}
		for _, r := range page.Records {
			if len(r.ResourceIds) == 0 || r.Status != http.StatusOK {
				t.Fatalf("audit record %+v: want the set's id and status 200", r)
			}
			recordsOf[r.ResourceIds[0]]++
			total++
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	for _, a := range acks {
		if n := recordsOf[a.id]; n != 1 {
			t.Errorf("acknowledged set %s has %d creation records, want 1", a.id, n)
		}
	}
	for id := range recordsOf {
		req, _ := http.NewRequest("GET", srv.base+crashRulesPath+"/"+url.PathEscape(id), nil)
		req.Header.Set("Authorization", "Bearer "+crashKey)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("read set %s: %v", id, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("set %s has a creation record but reading it answers %d", id, res.StatusCode)
		}
	}
	return total
}

// tail returns the end of the server log, for failure messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
