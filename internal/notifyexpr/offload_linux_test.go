package notifyexpr

import (
	"context"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/foreground"
)

// A paced evaluation in the child steps aside while the server's process answers a request (the
// count it shares with the child), and only then, and reports the time it stepped aside, which
// PacedWaiting counts here. It still renders what it renders unpaced.
func TestOffloadedPacedEvaluationStepsAsideWhileRequestsAreAnswered(t *testing.T) {
	// about 10 ms of the child's CPU on a quiet machine: a paced render asks at its first step
	// whether a request is being answered, and steps aside for pacedAside while one is
	const loop = `{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}{{ alert.status }}`
	entity, pid := runningChild(t)
	want, err := Render(`{{ alert.status }}`, entity) // the loops render nothing
	if err != nil {
		t.Fatal(err)
	}
	paced := Offloaded(Paced(context.Background(), foreground.Serving))
	render := func(serving bool) time.Duration {
		t.Helper()
		if serving {
			foreground.Enter() // a request is being answered
			defer foreground.Leave()
		}
		before := PacedWaiting()
		got, err := RenderContext(paced, loop, entity)
		if err != nil || got != want {
			t.Fatalf("paced offloaded render = %q, %v; want %q", got, err, want)
		}
		if now := childPID(t); now != pid {
			t.Fatalf("the evaluation child was replaced (%d, then %d): the render may have run here", pid, now)
		}
		return PacedWaiting() - before
	}
	if idle := render(false); idle != 0 {
		t.Errorf("with no request answered the paced render stepped aside for %s", idle)
	}
	busy := render(true)
	if busy < pacedAside {
		t.Errorf("while a request was answered the paced render stepped aside for %s: it did not step aside in the child", busy)
	}
	t.Logf("the paced render stepped aside for %s while a request was answered", busy)
}
