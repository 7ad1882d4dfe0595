package apitest

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// HoldWriter starts a write transaction that holds the group committer's writer until release
// is called, and returns once it runs: the write transactions started meanwhile queue (see
// WhenQueued) and then share the batches after it. The held transaction runs then (nil for
// nothing) once released; its InTx answer arrives on the returned channel.
func HoldWriter(t testing.TB, d *db.DB, then func(tx *db.Tx) error) (release func(), answer <-chan error) {
	t.Helper()
	running, gate, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- d.InTx(context.Background(), func(tx *db.Tx) error {
			close(running)
			<-gate
			if then == nil {
				return nil
			}
			return then(tx)
		})
	}()
	<-running
	return func() { close(gate) }, done
}

// WhenQueued waits until n callers wait in InTx for their turn (blocked behind the writer that
// HoldWriter holds), read from the goroutines' stacks: then they all join the next batches.
func WhenQueued(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		waiting := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "[select") && strings.Contains(g, "groupCommitter).inTx(") {
				waiting++
			}
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait for a turn, want %d", waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}
