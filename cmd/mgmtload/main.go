// Command mgmtload measures mgmtapi against a bare net/http handler on this machine.
//
//	go run ./cmd/mgmtload [flags]
//
// It builds ./cmd/mgmtapi and runs it as a child process (SQLite in a temporary directory, or
// PostgreSQL with -database-url), runs a bare handler that decodes and encodes the same JSON
// from a map as another child process, and drives both with the same number of keep-alive connections, in rounds that
// alternate bare handler and mgmtapi. Per scenario it prints requests per second, the median and
// 99th-percentile latency of both, the ratio mgmtapi/bare and the peak resident memory (VmHWM) of
// the mgmtapi process during the scenario. It exits with status 1 when any answer was not 2xx.
//
// Both servers and the load generator share the machine's cores, so the absolute figures depend
// on the machine and on what else runs on it; the ratio, measured in the same run, is the figure
// to compare.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if os.Getenv(serveBareVariable) == "1" {
		if err := serveBare(); err != nil {
			fmt.Fprintln(os.Stderr, "mgmtload: bare handler:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "mgmtload:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	duration    time.Duration
	rounds      int
	connections int
	scenarios   []scenario
	databaseURL string
	binary      string
	incidents   int
	sets        int
	policies    int
	// ready selects the start-up measurement (-scenarios ready), which runs after the others.
	ready       bool
	readyStarts int
	readyDBSize int64
	readyDir    string
	// standalone names the standalone measurements chosen, in order.
	standalone []string
	// flood selects the flood measurement (-scenarios flood, see flood.go), which runs alone.
	flood                 bool
	floodConnections      int
	floodIgnoreRetryAfter bool
	floodPin              bool
	floodRefusalsOnly     bool
	// mutationRequests is how many requests the mutation measurement (-scenarios mutation) sends.
	mutationRequests int
}

func parseFlags(args []string, stderr io.Writer) (o options, err error) {
	var names string
	fs := flag.NewFlagSet("mgmtload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "length of one round against one server")
	fs.IntVar(&o.rounds, "rounds", 2, "rounds per server and scenario, alternating bare handler and mgmtapi")
	fs.IntVar(&o.connections, "connections", 64, "keep-alive connections, each with one request in flight")
	fs.StringVar(&names, "scenarios", "all", "comma-separated scenarios to run, or all: "+scenarioNames()+
		"; and ready (not in all): the time from start to ready on a database of -ready-db-size"+
		"; and overbound (not in all): concurrent over-bound bodies, their answers' time and the peak RSS"+
		"; and mutation (not in all): -mutation-requests mutated requests over every operation, their statuses and the peak RSS"+
		"; and flood (not in all): -flood-connections at once, half lists half creates, admitted and refused latency apart")
	fs.StringVar(&o.databaseURL, "database-url", "", "postgres:// URL; measure mgmtapi on PostgreSQL instead of SQLite")
	fs.StringVar(&o.binary, "mgmtapi", "", "mgmtapi binary to run (default: build ./cmd/mgmtapi)")
	fs.IntVar(&o.incidents, "incidents", 10000, "incidents ingested for the e18 scenario")
	fs.IntVar(&o.sets, "sets", 10000, "recording-rule sets the list scenario lists")
	fs.IntVar(&o.policies, "policies", 10000, "policies the list-policies scenario lists")
	fs.IntVar(&o.floodConnections, "flood-connections", 5000, "connections the flood measurement holds at once")
	fs.BoolVar(&o.floodPin, "flood-pin", false, "flood: run mgmtapi on CPU 1 and the load generator on CPU 0, each with GOMAXPROCS 1")
	fs.BoolVar(&o.floodRefusalsOnly, "flood-refusals-only", false, "flood: first hold every slot of the server (MGMTAPI_MAX_CONCURRENT_REQUESTS, or 64) with a create whose body never comes, and send only lists, so that every flood request is refused: what a refusal costs (with MGMTAPI_QUEUE_LENGTH=0 none waits in the queue)")
	fs.BoolVar(&o.floodIgnoreRetryAfter, "flood-ignore-retry-after", false, "flood clients send their next request at once after 503 or 429")
	fs.IntVar(&o.mutationRequests, "mutation-requests", 250_000, "requests the mutation measurement sends, spread over every operation of api/openapi.yaml")
	fs.IntVar(&o.readyStarts, "ready-starts", 10, "starts of mgmtapi the ready measurement times")
	readySize := fs.String("ready-db-size", "1GiB", "size of the database the ready measurement starts on (built once, then kept)")
	fs.StringVar(&o.readyDir, "ready-dir", filepath.Join(os.TempDir(), "mgmtload-ready"),
		"directory that keeps the ready measurement's SQLite database (and the server's log) between runs")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./cmd/mgmtload [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.duration <= 0:
		return o, errors.New("-duration: must be positive")
	case o.rounds < 1:
		return o, errors.New("-rounds: must be at least 1")
	case o.connections < 1:
		return o, errors.New("-connections: must be at least 1")
	case o.incidents < 1:
		return o, errors.New("-incidents: must be at least 1")
	case o.sets < 1:
		return o, errors.New("-sets: must be at least 1")
	case o.policies < 1:
		return o, errors.New("-policies: must be at least 1")
	case o.floodConnections < 2:
		return o, errors.New("-flood-connections: must be at least 2")
	case o.mutationRequests < 1:
		return o, errors.New("-mutation-requests: must be at least 1")
	case o.readyStarts < 1:
		return o, errors.New("-ready-starts: must be at least 1")
	}
	if o.readyDBSize, err = parseSize(*readySize); err != nil {
		return o, fmt.Errorf("-ready-db-size: %w", err)
	}
	if names == "all" {
		o.scenarios = scenarios
		return o, nil
	}
	for name := range strings.SplitSeq(names, ",") {
		if strings.TrimSpace(name) == "ready" {
			o.ready = true
			continue
		}
		if strings.TrimSpace(name) == "flood" {
			o.flood = true
			continue
		}
		if _, ok := standalone[strings.TrimSpace(name)]; ok {
			o.standalone = append(o.standalone, strings.TrimSpace(name))
			continue
		}
		i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == strings.TrimSpace(name) })
		if i < 0 {
			return o, fmt.Errorf("-scenarios: no scenario %q; the scenarios are %s", name, scenarioNames())
		}
		o.scenarios = append(o.scenarios, scenarios[i])
	}
	return o, nil
}

func scenarioNames() string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// measurement is what one scenario measured on both servers.
type measurement struct {
	scenario      scenario
	connections   int
	mgmtapi, bare result
	peakRSS       int64 // bytes; -1 when unknown
	// peakOverLife says that peakRSS is the peak since the process started, because the kernel
	// did not let the peak be reset before the scenario.
	peakOverLife bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	workDir, err := os.MkdirTemp("", "mgmtload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workDir)

	bin := o.binary
	if bin == "" {
		fmt.Fprintln(stderr, "mgmtload: building ./cmd/mgmtapi")
		if bin, err = buildMgmtapi(ctx, workDir); err != nil {
			return err
		}
	}
	engine := "SQLite"
	if o.databaseURL != "" {
		engine = "PostgreSQL"
	}
	if len(o.scenarios) > 0 {
		if err := runScenarios(ctx, o, bin, workDir, engine, stdout, stderr); err != nil {
			return err
		}
	}
	for _, name := range o.standalone {
		if err := standalone[name](ctx, o, bin, workDir, stdout, stderr); err != nil {
			return err
		}
	}
	if o.flood {
		floodDir := filepath.Join(workDir, "flood")
		if err := os.Mkdir(floodDir, 0o700); err != nil {
			return err
		}
		if err := measureFlood(ctx, o, bin, floodDir, engine, stdout, stderr); err != nil {
			return fmt.Errorf("flood: %w", err)
		}
	}
	if o.ready {
		m, err := measureReady(ctx, o, bin, stderr)
		if err != nil {
			return err
		}
		printReady(stdout, engine, m)
	}
	return nil
}

// runScenarios measures the load scenarios of o.
func runScenarios(ctx context.Context, o options, bin, workDir, engine string, stdout, stderr io.Writer) error {
	server, err := startMgmtapi(ctx, bin, workDir, o.databaseURL)
	if err != nil {
		return err
	}
	defer server.stop()

	bare, err := startBareProcess(ctx)
	if err != nil {
		return err
	}
	defer bare.stop()
	bareURL := bare.baseURL

	chosen := func(name string) bool {
		return slices.ContainsFunc(o.scenarios, func(s scenario) bool { return s.name == name })
	}
	incidents, sets := 0, 0
	if chosen("e18") {
		incidents = o.incidents
	}
	if chosen("list") {
		sets = o.sets
	}
	fmt.Fprintln(stderr, "mgmtload: creating the load teams and their data")
	withCases := chosen("comment") || chosen("mixed") || chosen("comment-one-case")
	policies := 0
	if chosen("list-policies") {
		policies = o.policies
	}
	f, err := newFixture(ctx, server, bareURL, withCases, incidents, sets, policies)
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "mgmtload %s: mgmtapi on %s vs a bare net/http handler; %d connections unless the scenario has fewer, %d × %s rounds each, interleaved; %d CPUs (shared with the load generator)\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), engine, o.connections, o.rounds, o.duration, runtime.NumCPU())

	header := http.Header{"Authorization": {"Bearer " + f.key}}
	warmUp := min(time.Second, o.duration/5)
	var measured []measurement
	for _, s := range o.scenarios {
		fmt.Fprintf(stderr, "mgmtload: %s\n", s.name)
		next := s.next(f)
		gen := generator{connections: o.connections, header: header}
		if s.maxConnections > 0 {
			gen.connections = min(gen.connections, s.maxConnections)
		}
		gen.run(ctx, bareURL, warmUp, next)
		gen.run(ctx, server.baseURL, warmUp, next)
		m := measurement{scenario: s, connections: gen.connections, peakOverLife: !server.resetPeakRSS()}
		for range o.rounds {
			m.bare.merge(gen.run(ctx, bareURL, o.duration, next))
			m.mgmtapi.merge(gen.run(ctx, server.baseURL, o.duration, next))
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		m.peakRSS = server.peakRSS()
		measured = append(measured, m)
	}

	printTable(stdout, measured)
	failed := 0
	for _, m := range measured {
		failed += printFailures(stdout, m.scenario.name, "mgmtapi", m.mgmtapi)
		failed += printFailures(stdout, m.scenario.name, "bare handler", m.bare)
	}
	if failed > 0 {
		return fmt.Errorf("%d requests were not answered with 2xx", failed)
	}
	return nil
}
