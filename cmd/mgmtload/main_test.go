package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunPrintsTheTable runs the command for a very short round on SQLite and checks that it
// prints the table with a row for the scenario and ends without error. It measures nothing.
func TestRunPrintsTheTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"-duration", "300ms", "-rounds", "1", "-connections", "4", "-scenarios", "get,list-policies", "-policies", "20"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"mgmtapi req/s", "bare req/s", "ratio", "peak RSS", "non-2xx", "\nget ", "\nlist-policies ", " MiB",
		"peak RSS under normal load: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestGeneratorCountsWhatIsNot2xx shows that every answer outside 2xx is counted by status, which
// is what makes the command exit non-zero.
func TestGeneratorCountsWhatIsNot2xx(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	gen := generator{connections: 2, header: http.Header{}}
	r := gen.run(context.Background(), srv.URL, 100*time.Millisecond, func(int, int) request {
		return request{method: "GET", path: "/"}
	})
	if r.requests == 0 || r.statuses[http.StatusTooManyRequests] == 0 || r.unsuccessful() != r.statuses[http.StatusTooManyRequests] {
		t.Fatalf("requests %d, statuses %v, unsuccessful %d", r.requests, r.statuses, r.unsuccessful())
	}
	var out bytes.Buffer
	if got := printFailures(&out, "get", "mgmtapi", r); got != r.unsuccessful() || !strings.Contains(out.String(), "× 429") {
		t.Fatalf("printFailures = %d, %q", got, out.String())
	}
}

// TestFlagsAreChecked shows that a scenario that does not exist and bounds out of range are refused.
func TestFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{
		{"-scenarios", "get,nope"},
		{"-duration", "0s"},
		{"-connections", "0"},
		{"-rounds", "0"},
		{"-incidents", "0"},
		{"-policies", "0"},
		{"-ready-starts", "0"},
		{"-ready-db-size", "1TB"},
		{"extra"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
	o, err := parseFlags([]string{"-scenarios", "mixed, get"}, &bytes.Buffer{})
	if err != nil || len(o.scenarios) != 2 || o.scenarios[0].name != "mixed" || o.scenarios[1].name != "get" {
		t.Fatalf("parseFlags: %v %+v", err, o.scenarios)
	}
}

// TestMain lets the test binary serve the bare handler when the command runs itself as one.
func TestMain(m *testing.M) {
	if os.Getenv(serveBareVariable) == "1" {
		if err := serveBare(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestReadyMeasuresStarts builds a small database, starts mgmtapi on it twice and checks that the
// command prints the start-to-ready figures; a second run reuses the database. It measures nothing.
func TestReadyMeasuresStarts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, want := range []string{"built in", "already built"} {
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"-scenarios", "ready", "-ready-db-size", "2MiB", "-ready-starts", "2", "-ready-dir", dir}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		}
		for _, w := range []string{"start to ready: median ", ", max ", "RSS at ready: median ", want, "2 starts"} {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("the output lacks %q:\n%s", w, &stdout)
			}
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "512MiB": 512 << 20, "3KiB": 3 << 10, "100B": 100, "7": 7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1GB", "-1MiB", "x"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// TestFloodPrintsItsChecks runs a small flood against a server with 16 slots and no queue and
// checks that the command prints both latency rows and the half-applied check, and ends without
// error (nothing half-applied, every answer 2xx or a refusal). It measures nothing.
func TestFloodPrintsItsChecks(t *testing.T) {
	t.Setenv("MGMTAPI_MAX_CONCURRENT_REQUESTS", "16") // the server started by the command inherits them (the set-up creates 8 at a time)
	t.Setenv("MGMTAPI_QUEUE_LENGTH", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"-scenarios", "flood", "-flood-connections", "40", "-duration", "500ms"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	for _, want := range []string{"40 connections", "admitted (2xx)", "refused (503, 429)", "the server's own time",
		"0 of them missing", "0 of them left behind", "0 sets nobody created",
		"shedding: MGMTAPI_MAX_CONCURRENT_REQUESTS=16 MGMTAPI_QUEUE_LENGTH=0, the rest the server's defaults", "load average ",
		"not pinned", "mgmtapi's GOMAXPROCS ", "where the time went", "goroutines runnable before running"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, &stdout)
		}
	}
}

// TestNormalLoadRSS: the highest peak of the scenarios is held against 100 MiB.
func TestNormalLoadRSS(t *testing.T) {
	for _, c := range []struct {
		peaks []int64
		want  string
	}{
		{[]int64{40 << 20, 60 << 20}, "peak RSS under normal load: 60 MiB (b), target ≤ 100 MiB: met"},
		{[]int64{101 << 20, 60 << 20}, "peak RSS under normal load: 101 MiB (a), target ≤ 100 MiB: MISSED"},
		{[]int64{-1}, "peak RSS under normal load: unknown (target ≤ 100 MiB)"},
	} {
		var measured []measurement
		for i, p := range c.peaks {
			measured = append(measured, measurement{scenario: scenario{name: string(rune('a' + i))}, peakRSS: p})
		}
		if got := normalLoadRSS(measured); got != c.want {
			t.Errorf("%v: %q, want %q", c.peaks, got, c.want)
		}
	}
}
