package notifyexpr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/foreground"
)

// Offloaded evaluations run in a child process.
//
// A template that renders for 200 ms in the delivery worker takes that CPU, and leaves its
// garbage, in the process that serves the requests: pacing it there (Paced) still left ingest's
// p99 1.4 to 1.5 times higher (docs/performance.md). An offloaded evaluation runs in a child
// process of the same executable instead, at the lowest CPU priority (nice 19), with a garbage
// collector of its own: the kernel gives the cores to the server's threads first, and the
// child's time bound counts the CPU it got, not the time it waited for it. A paced evaluation is
// paced in the child too, by the count of requests the server is answering
// (internal/foreground), which the child reads from memory the two processes share: even at
// nice 19 a child that computes without pause cost ingest's p99 a fifth to two fifths more on a
// 2-core machine. So the child computes between requests, stops at its next step once one
// begins, and takes about 2 % of a core while requests never stop (docs/performance.md). The
// share is of the time that passes, not of the CPU the child got: on saturated cores the child,
// at nice 19, gets a sliver of that time; pacing by its CPU instead cost the requests more.

// childVariable set to "1" in a process's environment makes it an evaluation child: package
// initialisation serves evaluations on stdin and stdout and exits, before main or the tests.
const childVariable = "MGMTAPI_NOTIFYEXPR_CHILD"

// foregroundVariable in a child's environment is the descriptor of the parent's request count
// (foreground.File), which the child inherits.
const foregroundVariable = "MGMTAPI_NOTIFYEXPR_FOREGROUND_FD"

func init() {
	// what entities hold inside interfaces (routers add a definition's labels as a
	// map[string]string); []string and the other basic types gob knows already
	gob.Register(map[string]any{})
	gob.Register([]any{})
	gob.Register(map[string]string{})
	if os.Getenv(childVariable) == "1" {
		os.Exit(serveChild(os.Stdin, os.Stdout))
	}
}

type offloadKey struct{}

// Offloaded returns ctx under which RenderContext and EvalConditionContext evaluate in the
// process's evaluation child (started at the first use, and again after it fails), with the
// same bounds and the same answers as here. When the child cannot be started, fails, or keeps an
// evaluation longer than childWait, the evaluation runs in this process, paced as ctx says.
func Offloaded(ctx context.Context) context.Context {
	return context.WithValue(ctx, offloadKey{}, true)
}

// offload evaluates req in the child when ctx asks for it; ok is false when the caller must
// evaluate it itself.
func offload(ctx context.Context, req childRequest) (a childAnswer, ok bool) {
	if on, _ := ctx.Value(offloadKey{}).(bool); !on {
		return childAnswer{}, false
	}
	req.Paced = ctx.Value(pacedKey{}) != nil
	return evaluationChild.evaluate(ctx, req)
}

// childRequest is one evaluation sent to the child: src as a condition, or as a template. Paced
// asks the child to pace it by the parent's requests (as Paced does here, with
// foreground.Serving for busy).
type childRequest struct {
	Condition bool
	Paced     bool
	Src       string
	Entity    map[string]any
}

// childAnswer is the child's answer: the rendering or the condition's value, or the failure (an
// *Error, or Other's text for any other), and the time the evaluation stepped aside (Waited,
// counted in PacedWaiting here). cancelled is the caller's context's end, when it ended before
// the answer came (never sent).
type childAnswer struct {
	Out       string
	Holds     bool
	Err       *Error
	Other     string
	Waited    time.Duration
	cancelled error
}

func (a childAnswer) err() error {
	switch {
	case a.cancelled != nil:
		return a.cancelled
	case a.Err != nil:
		return a.Err
	case a.Other != "":
		return errors.New(a.Other)
	}
	return nil
}

// childWait bounds how long an offloaded evaluation waits for the child's answer: the child's
// own bound is Timeout of CPU, which at the lowest priority on busy cores can take much longer
// than Timeout of wall time, but not this long unless the child is stuck.
const childWait = 30 * time.Second

// childRestartDelay is how long after a failed start no other start is tried.
const childRestartDelay = 10 * time.Second

// child is the process's evaluation child; one evaluation at a time.
type child struct {
	mu       sync.Mutex
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	answers  chan childAnswer // closed when the child's stdout ends
	owed     int              // requests sent whose answers were not read
	failedAt time.Time
}

var evaluationChild child

func (c *child) evaluate(ctx context.Context, req childRequest) (childAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		if !c.failedAt.IsZero() && time.Since(c.failedAt) < childRestartDelay {
			return childAnswer{}, false
		}
		if err := c.start(); err != nil {
			c.failedAt = time.Now()
			slog.Warn("notification templates are evaluated in the server's process: their child process does not start", "error", err.Error())
			return childAnswer{}, false
		}
	}
	wait := time.NewTimer(childWait)
	defer wait.Stop()
	// The answers to evaluations whose callers went away come first; they are dropped.
	for c.owed > 0 {
		if a, ok, done := c.answer(ctx, wait.C); !ok || done {
			return a, ok
		}
	}
	msg, err := requestMessage(req)
	if err != nil { // a value gob cannot carry: evaluated here, the child untouched
		return childAnswer{}, false
	}
	if _, err := c.stdin.Write(msg); err != nil {
		c.stop()
		return childAnswer{}, false
	}
	c.owed++
	a, ok, _ := c.answer(ctx, wait.C)
	return a, ok
}

// requestMessage is req as the child reads it: its length (4 bytes, big-endian), then req in gob
// by an encoder of its own, so that a request that cannot be encoded leaves nothing half-sent.
func requestMessage(req childRequest) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(make([]byte, 4))
	if err := gob.NewEncoder(&buf).Encode(req); err != nil {
		return nil, err
	}
	msg := buf.Bytes()
	binary.BigEndian.PutUint32(msg, uint32(len(msg)-4))
	return msg, nil
}

// maxRequestBytes bounds a request the child reads (a template is at most MaxSourceLen, an entity
// a few kilobytes).
const maxRequestBytes = 16 << 20

// readRequest reads one request of requestMessage's form.
func readRequest(in *bufio.Reader) (childRequest, error) {
	var head [4]byte
	if _, err := io.ReadFull(in, head[:]); err != nil {
		return childRequest{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxRequestBytes {
		return childRequest{}, fmt.Errorf("a request of %d bytes", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(in, msg); err != nil {
		return childRequest{}, err
	}
	var req childRequest
	err := gob.NewDecoder(bytes.NewReader(msg)).Decode(&req)
	return req, err
}

// answer waits for the child's next answer, which settles one owed. done is true when it ends
// the evaluation instead: ctx ended (the answer stays owed, the child goes on), or the child
// failed or kept it past timeout (the child is stopped, and ok is false: evaluate here).
func (c *child) answer(ctx context.Context, timeout <-chan time.Time) (a childAnswer, ok, done bool) {
	select {
	case a, open := <-c.answers:
		if !open {
			c.stop()
			return childAnswer{}, false, true
		}
		c.owed--
		pacedWaiting.Add(int64(a.Waited))
		return a, true, false
	case <-ctx.Done():
		return childAnswer{cancelled: ctx.Err()}, true, true
	case <-timeout:
		c.stop()
		slog.Warn("a notification template's child process did not answer; the evaluation runs in the server's process", "waited", childWait.String())
		return childAnswer{}, false, true
	}
}

// start runs this executable as the child, with pipes for its stdin and stdout and its stderr
// copied to this process's.
func (c *child) start() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childVariable+"=1", "GOMAXPROCS=1")
	if f := foreground.File(); f != nil {
		cmd.ExtraFiles = []*os.File{f} // the child's descriptor 3
		cmd.Env = append(cmd.Env, foregroundVariable+"=3")
	}
	cmd.Stderr = stderrCopy{}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	// The child is started from a thread of its own set to the lowest priority, which it
	// inherits from its first instruction (its runtime's start and its packages' initialisation
	// included); the thread ends with the goroutine, as its priority cannot be raised back
	// without privileges (when that was the main thread, the runtime parks it for good instead:
	// it runs nothing more, though ps shows the process's nice as 19).
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked
		lowerThreadPriority()
		started <- cmd.Start()
	}()
	if err := <-started; err != nil {
		return err
	}
	answers := make(chan childAnswer)
	go func() {
		defer close(answers)
		dec := gob.NewDecoder(bufio.NewReader(stdout))
		for {
			var a childAnswer
			if err := dec.Decode(&a); err != nil {
				return
			}
			answers <- a
		}
	}()
	c.cmd, c.stdin, c.answers = cmd, stdin, answers
	return nil
}

// stop ends the child; the next evaluation starts another.
func (c *child) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.stdin.Close()
	_ = c.cmd.Process.Kill()
	cmd, answers := c.cmd, c.answers
	go func() {
		for range answers { // an answer in flight: the reader goroutine must not block on it
		}
		_ = cmd.Wait()
	}()
	c.cmd, c.stdin, c.answers, c.owed = nil, nil, nil, 0
}

// stderrCopy copies the child's stderr (a panic's trace) to this process's; being no *os.File,
// it leaves the child no descriptor of this process's stderr to hold open after it exits.
type stderrCopy struct{}

func (stderrCopy) Write(p []byte) (int, error) { return os.Stderr.Write(p) }

// serveChild is the child's life: it lowers its own priority and attaches to the parent's
// request count, then answers the evaluations it reads until its stdin ends (the parent is gone).
// Interrupts are the parent's to handle: the child ends with its stdin, so that a parent shutting
// down can still evaluate. Without the parent's count, paced evaluations run unpaced.
func serveChild(in io.Reader, out io.Writer) int {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	runtime.LockOSThread() // the CPU clock of the time bound is this thread's
	lowerPriority()
	if fd, err := strconv.Atoi(os.Getenv(foregroundVariable)); err == nil {
		if err := foreground.Attach(os.NewFile(uintptr(fd), "foreground")); err != nil {
			fmt.Fprintln(os.Stderr, "notification template child: evaluations are not paced:", err)
		}
	}
	requests := bufio.NewReader(in)
	output := bufio.NewWriter(out)
	answers := gob.NewEncoder(output)
	ctx := context.Background()
	if threadCPU != nil {
		ctx = context.WithValue(ctx, cpuClockKey{}, threadCPU)
	}
	for {
		req, err := readRequest(requests)
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "notification template child:", err)
			return 1
		}
		var a childAnswer
		waited := pacedWaiting.Load()
		evalCtx := ctx
		if req.Paced {
			evalCtx = Paced(ctx, foreground.Serving)
		}
		if req.Condition {
			a.Holds, err = EvalConditionContext(evalCtx, req.Src, req.Entity)
		} else {
			a.Out, err = RenderContext(evalCtx, req.Src, req.Entity)
		}
		a.Waited = time.Duration(pacedWaiting.Load() - waited)
		if e, ok := err.(*Error); ok {
			a.Err = e
		} else if err != nil {
			a.Other = err.Error()
		}
		if answers.Encode(a) != nil || output.Flush() != nil {
			return 1
		}
	}
}

// cpuClockKey carries the clock an evaluation's time bound counts instead of the wall clock:
// the CPU time of the child's evaluating thread, since at the lowest priority its wall time is
// mostly others' time.
type cpuClockKey struct{}
