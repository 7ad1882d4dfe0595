package notifyexpr

import (
	"context"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Offloaded evaluations answer what the same evaluations answer in this process, renderings,
// condition values and failures alike, for the sample entities of every type: the entity crosses
// to the child and back unchanged. They ran in the child, which runs at nice 19 on Linux.
func TestOffloadedEvaluationsAnswerAsInProcess(t *testing.T) {
	templates := []string{
		`{{ alert.status }} {{ alertDef.priority }} {{ alertDef.entityLabels | tojson }}`,
		`{{ case.alertCount }} {{ case.alertCount + 1 }} {{ case.labels | tojson }} {{ case.acknowledgeTime }}`,
		`{% for g in alert.groups %}{{ g | tojson }}{% endfor %}`,
		`{{ alert.nosuchfield.deeper }}`, // fails: not found
		`{{ alert.status `,               // fails: syntax
	}
	// Fails on its steps or its time, whichever bound it meets first here or there.
	const tooLong = `{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}`
	conditions := []string{`alert.status == "Triggered"`, `case.alertCount > 0`, `alertDef.priority in ["P1", "P2"]`, `alert.status ==`}
	templates = append(templates, `{{ alertDef.entityLabels.team }} {{ alertDef.groupByKeys | join(",") }}`)
	offloaded := Offloaded(context.Background())
	for _, typ := range []string{EntityAlerts, EntityCases} {
		entity, err := SampleEntity(typ, "")
		if err != nil {
			t.Fatal(err)
		}
		if typ == EntityAlerts { // as the routing decorates an alert with its definition
			ad := entity["alertDef"].(map[string]any)
			ad["entityLabels"], ad["groupByKeys"] = map[string]string{"team": "storage"}, []string{"host", "pod"}
		}
		for _, src := range templates {
			want, wantErr := Render(src, entity)
			got, gotErr := RenderContext(offloaded, src, entity)
			if got != want || !sameFailure(gotErr, wantErr) {
				t.Errorf("%s, template %q: offloaded %q, %v; in process %q, %v", typ, src, got, gotErr, want, wantErr)
			}
		}
		if _, err := RenderContext(offloaded, tooLong, entity); !isReason(err, ReasonTooExpensive) {
			t.Errorf("%s, a template past the bounds: offloaded %v, want it too expensive", typ, err)
		}
		for _, src := range conditions {
			want, wantErr := EvalCondition(src, entity)
			got, gotErr := EvalConditionContext(offloaded, src, entity)
			if got != want || !sameFailure(gotErr, wantErr) {
				t.Errorf("%s, condition %q: offloaded %v, %v; in process %v, %v", typ, src, got, gotErr, want, wantErr)
			}
		}
	}
	pid := childPID(t)
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// the fields after the command's closing parenthesis; nice is the 19th of the line
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if nice := fields[16]; nice != "19" {
			t.Errorf("the evaluation child runs at nice %s, want 19", nice)
		}
	}
}

// A child that dies is replaced at the next evaluation, which still answers.
func TestOffloadedEvaluationOutlivesItsChild(t *testing.T) {
	offloaded := Offloaded(context.Background())
	entity, first := runningChild(t)
	p, err := os.FindProcess(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	for i := range 2 { // the first may meet the dead child and be evaluated here
		got, err := RenderContext(offloaded, `{{ alert.status }}`, entity)
		if err != nil || got != "Triggered" {
			t.Fatalf("evaluation %d after the child died: %q, %v", i, got, err)
		}
	}
	if second := childPID(t); second == first {
		t.Fatalf("the child %d was not replaced", first)
	}
}

// The child's time bound counts the CPU the evaluation got: a wall clock past the deadline
// fails the evaluation only when the CPU clock is past it too.
func TestCPUClockedBudgetCountsTheCPU(t *testing.T) {
	var used time.Duration
	ctx := context.WithValue(context.Background(), cpuClockKey{}, func() time.Duration { return used })
	b := newBudget(ctx)
	b.deadline = time.Now().Add(-time.Second) // the wall clock is past it
	used = Timeout / 10
	if err := b.spend(1); err != nil {
		t.Fatalf("a tenth of the bound in CPU: %v", err)
	}
	if !b.deadline.After(time.Now()) {
		t.Fatalf("the deadline did not move on: %s", b.deadline)
	}
	b.deadline = time.Now().Add(-time.Second)
	used = Timeout + time.Millisecond
	if err := b.spend(1); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("past the bound in CPU: %v", err)
	}
	// Without a CPU clock the wall clock is the bound.
	b = newBudget(context.Background())
	b.deadline = time.Now().Add(-time.Second)
	if err := b.spend(1); err == nil {
		t.Fatal("past the wall clock's deadline without a CPU clock: no failure")
	}
}

// The CPU a paced evaluation uses while it steps aside (its sleeps and wakes) does not count
// against its time bound: beside an endless request those would fail a template the bound
// allows.
func TestSteppingAsideCountsNoCPUAgainstTheBound(t *testing.T) {
	var used time.Duration
	asks := 0
	busy := func() bool { // each ask costs a quarter of the bound; the third finds no request
		asks++
		used += Timeout / 4
		return asks < 3
	}
	ctx := context.WithValue(Paced(context.Background(), busy), cpuClockKey{}, func() time.Duration { return used })
	b := newBudget(ctx)
	if err := b.spend(1); err != nil {
		t.Fatal(err)
	}
	if asks != 3 {
		t.Fatalf("the evaluation asked %d times; want once at its step and twice stepping aside", asks)
	}
	if got := b.cpuUsed(); got != Timeout/4 {
		t.Fatalf("the bound counts %s of CPU; want %s, the step's, not the %s used stepping aside", got, Timeout/4, Timeout/2)
	}
}

func isReason(err error, r Reason) bool {
	e, ok := err.(*Error)
	return ok && e.Reason == r
}

func sameFailure(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	ea, oka := a.(*Error)
	eb, okb := b.(*Error)
	if oka != okb {
		return false
	}
	if oka {
		return reflect.DeepEqual(*ea, *eb)
	}
	return a.Error() == b.Error()
}

// runningChild has the evaluation child answer one evaluation, and answers a sample alert entity
// and the child's process id.
func runningChild(t *testing.T) (map[string]any, int) {
	t.Helper()
	entity, _ := SampleEntity(EntityAlerts, "")
	if _, err := RenderContext(Offloaded(context.Background()), `{{ alert.status }}`, entity); err != nil {
		t.Fatal(err)
	}
	return entity, childPID(t)
}

// childPID is the process id of the evaluation child, which must be running.
func childPID(t *testing.T) int {
	t.Helper()
	evaluationChild.mu.Lock()
	defer evaluationChild.mu.Unlock()
	if evaluationChild.cmd == nil {
		t.Fatal("no evaluation child runs: the evaluations ran in this process")
	}
	return evaluationChild.cmd.Process.Pid
}

// An evaluation whose caller goes away answers the caller's context's end at once; the child
// keeps running, and the next evaluation gets its own answer, not the one left behind.
func TestAbandonedOffloadedEvaluationLeavesTheChildToTheNext(t *testing.T) {
	entity, first := runningChild(t)
	ctx, cancel := context.WithTimeout(Offloaded(context.Background()), time.Millisecond)
	defer cancel()
	const slow = `{% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}slow`
	if out, err := RenderContext(ctx, slow, entity); err != context.DeadlineExceeded {
		t.Fatalf("abandoned evaluation: %q, %v; want the context's end", out, err)
	}
	got, err := RenderContext(Offloaded(context.Background()), `{{ alert.status }}`, entity)
	if err != nil || got != "Triggered" {
		t.Fatalf("the next evaluation: %q, %v; want its own answer", got, err)
	}
	if childPID(t) != first {
		t.Fatal("the child was replaced")
	}
}

// An entity holding a value the child's encoding cannot carry is evaluated in this process, with
// the same answer, and leaves the child as it was.
func TestAnEntityTheChildCannotTakeIsEvaluatedHere(t *testing.T) {
	offloaded := Offloaded(context.Background())
	entity, first := runningChild(t)
	type unregistered struct{ A int }
	entity["extra"] = unregistered{A: 7}
	got, err := RenderContext(offloaded, `{{ alert.status }} {{ extra.A }}`, entity)
	if want, wantErr := Render(`{{ alert.status }} {{ extra.A }}`, entity); got != want || !sameFailure(err, wantErr) {
		t.Fatalf("offloaded %q, %v; in process %q, %v", got, err, want, wantErr)
	}
	delete(entity, "extra")
	if got, err := RenderContext(offloaded, `{{ alert.status }}`, entity); err != nil || got != "Triggered" {
		t.Fatalf("the next evaluation: %q, %v", got, err)
	}
	if childPID(t) != first {
		t.Fatal("the child was replaced")
	}
}
