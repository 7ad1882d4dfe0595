package notifyexpr

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/foreground"
)

// A paced evaluation in the child steps aside while the server's process answers a request (the
// count it shares with the child): it sleeps about three times as long as it runs, so it takes
// at least twice its CPU time. It still renders what an evaluation here renders.
func TestOffloadedPacedEvaluationStepsAsideWhileRequestsAreAnswered(t *testing.T) {
	const loop = `{% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}{{ alert.status }}`
	entity, pid := runningChild(t)
	want, err := Render(loop, entity)
	if err != nil {
		t.Fatal(err)
	}
	foreground.Enter() // a request is being answered
	defer foreground.Leave()
	cpuBefore := processCPU(t, pid)
	start := time.Now()
	got, err := RenderContext(Offloaded(Paced(context.Background(), foreground.Serving)), loop, entity)
	wall := time.Since(start)
	cpu := processCPU(t, pid) - cpuBefore
	if err != nil || got != want {
		t.Fatalf("paced offloaded render = %q, %v; in process %q", got, err, want)
	}
	if cpu < 30*time.Millisecond {
		t.Fatalf("the child used %s of CPU: too little to tell pacing from its clock's ticks", cpu)
	}
	if wall < 2*cpu {
		t.Fatalf("the paced render took %s for %s of the child's CPU: it did not step aside while a request was answered", wall, cpu)
	}
	t.Logf("paced in the child: %s for %s of CPU", wall.Round(time.Millisecond), cpu)
}

// processCPU is the CPU time process pid has used, user and system, from /proc (in clock ticks
// of 10 ms).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// the fields after the command's closing parenthesis: utime and stime are the 12th and 13th
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
