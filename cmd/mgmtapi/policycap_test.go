package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

var listeningAddr = regexp.MustCompile(`msg=listening addr=(\S+)`)

// serveProcess builds nothing itself: it starts the mgmtapi binary at bin as its own operating
// system process and returns the address it listens on.
func serveProcess(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := listeningAddr.FindStringSubmatch(lines.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("the process did not start listening:\n%s", stderr.String())
	}
	return ""
}

// TestPolicyCapAcrossTwoProcesses runs two mgmtapi processes over one PostgreSQL database with
// --policy-limit 20, fires 100 concurrent policy creates split across them, and expects exactly
// 20 policies: 20 answers 200, 80 answers 429.
func TestPolicyCapAcrossTwoProcesses(t *testing.T) {
	if os.Getenv(apitest.DatabaseURLVariable) == "" {
		t.Skip("needs PostgreSQL: set " + apitest.DatabaseURLVariable)
	}
	bin := filepath.Join(t.TempDir(), "mgmtapi")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const key = "mgmt_two-processes-share-this-bootstrap-key-000000"
	dbURL := apitest.FreshSchema(t)
	env := []string{"MGMTAPI_BOOTSTRAP_KEY=" + key}
	addrs := []string{
		serveProcess(t, bin, env, "--database-url", dbURL, "--policy-limit", "20"),
		serveProcess(t, bin, env, "--database-url", dbURL, "--policy-limit", "20"),
	}

	statuses := make(chan int, 100)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"name":"p%d","priority":"PRIORITY_TYPE_LOW","logRules":{"severities":["SEVERITY_ERROR"]}}`, i)
			req, _ := http.NewRequest(http.MethodPost, "http://"+addrs[i%2]+"/mgmt/openapi/3/dataplans/policies/v1", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusOK] != 20 || counts[http.StatusTooManyRequests] != 80 {
		t.Fatalf("answers by status: %v, want 20×200 and 80×429", counts)
	}

	for _, addr := range addrs {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/mgmt/openapi/5/dataplans/policies/v1", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Policies []struct {
				Order int `json:"order"`
			} `json:"policies"`
		}
		err = json.NewDecoder(res.Body).Decode(&list)
		res.Body.Close()
		if err != nil || len(list.Policies) != 20 {
			t.Fatalf("%s lists %d policies (%v), want 20", addr, len(list.Policies), err)
		}
		seen := map[int]bool{}
		for _, p := range list.Policies {
			seen[p.Order] = true
		}
		for o := 1; o <= 20; o++ {
			if !seen[o] {
				t.Fatalf("%s: order %d missing: %v", addr, o, seen)
			}
		}
	}
}
