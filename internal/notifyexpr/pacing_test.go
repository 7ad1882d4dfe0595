package notifyexpr

import (
	"context"
	"sync/atomic"
	"testing"
)

// A paced evaluation asks its pacing whether foreground work is under way, steps aside while it
// is, and still renders what an unpaced one renders: the time it waited is not counted against
// its time bound.
func TestPacedEvaluationStepsAsideAndStillRenders(t *testing.T) {
	const loop = `{% for i in range(120) %}{% for j in range(120) %}{% endfor %}{% endfor %}{{ alert.status }}`
	want, err := Render(loop, entity())
	if err != nil {
		t.Fatalf("unpaced: %v", err)
	}
	var asked atomic.Int64
	busy := func() bool { asked.Add(1); return true }
	waitedBefore := PacedWaiting()
	got, err := RenderContext(Paced(context.Background(), busy), loop, entity())
	if err != nil {
		t.Fatalf("paced, always busy: %v (the time it waited counts against its bound)", err)
	}
	if got != want {
		t.Fatalf("paced render = %q, unpaced %q", got, want)
	}
	if asked.Load() == 0 {
		t.Fatal("the paced render never asked whether requests were being served")
	}
	if PacedWaiting() == waitedBefore {
		t.Fatal("PacedWaiting did not count the time the paced render stepped aside")
	}

	asked.Store(0)
	holds, err := EvalConditionContext(Paced(context.Background(), busy),
		`alert.status == "Triggered" and (range(300) | map("string") | list | length) > 0`, entity())
	if err != nil || !holds {
		t.Fatalf("paced condition = %v, %v; want true", holds, err)
	}

	// Without pacing in the context nothing is asked.
	asked.Store(0)
	if _, err := RenderContext(context.Background(), loop, entity()); err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 0 {
		t.Fatalf("an unpaced render asked the pacing %d times", asked.Load())
	}
}
