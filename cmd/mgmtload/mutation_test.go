package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
)

// TestMutationRequestsCoverEveryOperation builds a target for every operation of the document and
// draws requests from them: every operation is drawn, every kind of mutation is drawn and only
// where it applies, and a body mutation changes the body.
func TestMutationRequestsCoverEveryOperation(t *testing.T) {
	doc, err := apidocument.Load()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := doc.Operations()
	if err != nil {
		t.Fatal(err)
	}
	ids := []seededID{{path: "/mgmt/openapi/5/cases/cases/v1", key: "id", id: "case-1"}}
	targets := make([]mutationTarget, len(ops))
	for i, op := range ops {
		targets[i] = newMutationTarget(doc, op, ids, "Bearer team", "Bearer operator")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := map[string]int{}
	drawn := map[string]bool{}
	for range 40 * len(targets) {
		tg := &targets[rng.IntN(len(targets))]
		req := tg.mutate(rng, doc)
		drawn[tg.op.ID] = true
		kinds[req.kind]++
		if !tg.applies(req.kind) {
			t.Fatalf("%s: drew %q, which does not apply", tg.op, req.kind)
		}
		if strings.Contains(req.target, "{") {
			t.Fatalf("%s: a path parameter left unfilled: %s", tg.op, req.target)
		}
		if req.kind == "bytes" && bytes.Equal(req.body, tg.bodyJSON) {
			t.Errorf("%s: the bytes mutation left the body as it was", tg.op)
		}
		if req.kind == "array past its bound" && !strings.Contains(string(req.body), "[") {
			t.Errorf("%s: no array in %s", tg.op, shorten(string(req.body), 200))
		}
		if tg.op.Operator != (req.authorization == "Bearer operator") {
			t.Errorf("%s: authorization %q", tg.op, req.authorization)
		}
	}
	if len(drawn) != len(targets) {
		t.Errorf("%d of %d operations drawn", len(drawn), len(targets))
	}
	for _, k := range mutationKinds {
		if kinds[k.name] == 0 {
			t.Errorf("the mutation %q was never drawn: %v", k.name, kinds)
		}
	}
}

// TestOverBoundArrayPassesTheBound: an array with maxItems gets more than maxItems items.
func TestOverBoundArrayPassesTheBound(t *testing.T) {
	doc, err := apidocument.Parse([]byte(`
components:
  schemas:
    Batch:
      type: object
      properties:
        items: {type: array, maxItems: 100, items: {type: object, required: [id], properties: {id: {type: string}}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	paths := doc.PropertyPaths(doc.Lookup("#/components/schemas/Batch"))
	if len(paths) == 0 || paths[0].String() != "items" {
		t.Fatalf("paths %v", paths)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10 {
		got := overBoundArray(rng, doc, paths[0])
		if len(got) != 101 && len(got) != 10001 {
			t.Fatalf("%d items", len(got))
		}
		if b, _ := json.Marshal(got[0]); string(b) != `{"id":"a"}` {
			t.Fatalf("item %s", b)
		}
	}
}

// TestMutationRunCountsAnswers shows what the run counts against its targets: a 500 and a 4xx
// that is not the Error body are failures, a 503 with Retry-After is shedding, not a failure.
func TestMutationRunCountsAnswers(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.WriteHeader(http.StatusInternalServerError)
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":400,"message":"name: must not be empty"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`not found`))
		}
	}))
	defer srv.Close()
	doc, err := apidocument.Load()
	if err != nil {
		t.Fatal(err)
	}
	ops, _ := doc.Operations()
	run := &mutationRun{targets: []mutationTarget{newMutationTarget(doc, ops[0], nil, "Bearer k", "Bearer o")}, doc: doc, total: 40,
		statuses: map[int]int{}, kinds: map[string]*kindCount{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run.work(ctx, srv.Client(), srv.URL, rand.New(rand.NewPCG(5, 6)))
	var out bytes.Buffer
	err = run.report(&out, time.Second, 1<<20, 2<<20, 2<<20, true)
	if err == nil || !strings.Contains(err.Error(), "10 answers were 5xx") || !strings.Contains(err.Error(), "10 refusals were not the Error body") {
		t.Fatalf("report: %v\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "503 with Retry-After (shed): 10") || !strings.Contains(out.String(), "target ≤ 256 MiB met") {
		t.Fatalf("report:\n%s", &out)
	}
}

// TestMutationScenarioRuns runs -scenarios mutation briefly against a real mgmtapi on SQLite:
// every answer must meet the run's targets (no 5xx, every refusal the Error body).
func TestMutationScenarioRuns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"-scenarios", "mutation", "-mutation-requests", "600", "-connections", "4"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"600 mutated requests over the ", "sent 600 in ", "5xx: 0;", "no answer: 0", "target ≤ 256 MiB met"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
