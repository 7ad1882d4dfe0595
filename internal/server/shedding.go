package server

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Load shedding: at most a fixed number of API requests are in the handler at once. A request
// that finds every slot taken waits in a short queue — bounded in length and in time — for one to
// free; a request that finds the queue full, or waits its whole turn in vain, is refused at once
// with 503 and Retry-After, before anything of it is read. Refusing fast is the point: under a
// flood the requests that are admitted keep their latency, and the others learn in a few
// milliseconds that they should come back, instead of all waiting seconds together.
//
// Only the API's operations are counted: the probes (/healthz, /readyz), /metrics, the served
// documents and the reference page are never shed.

// retryAfter is the Retry-After of a shed request (and of one over the decode budget): 1, 2 or 3
// seconds at random. The queue drains in well under a second, so a client that waits finds room;
// the spread keeps the clients refused by one burst from all coming back in the same instant as
// the next burst.
func retryAfter() string { return retryAfterValues()[0] }

// retryAfterValues is retryAfter as a header's values: one of a few slices shared by every
// refusal (net/http only reads them), so that a refusal allocates none.
func retryAfterValues() []string {
	return retryAfterChoices[rand.IntN(len(retryAfterChoices))]
}

var retryAfterChoices = [][]string{{"1"}, {"2"}, {"3"}}

// shedAnswer is the answer to a request refused by admission, written once by WriteError when the
// handler is made and replayed: under a flood most answers are this one, and replaying it costs no
// formatting, encoding or allocation of its own.
type shedAnswer struct {
	header http.Header
	status int
	body   []byte
}

// newShedAnswer records what writeError writes for a refusal by admission of at most limit
// requests with queueLength waiting.
func newShedAnswer(writeError func(w http.ResponseWriter, status int, message string), limit, queueLength int) *shedAnswer {
	rec := &answerRecorder{header: http.Header{}, status: http.StatusOK}
	writeError(rec, http.StatusServiceUnavailable, fmt.Sprintf(
		"the server is answering as many requests as it can (%d, and %d waiting); retry later", limit, queueLength))
	return &shedAnswer{header: rec.header, status: rec.status, body: rec.body.Bytes()}
}

// answerRecorder keeps what is written to it.
type answerRecorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *answerRecorder) Header() http.Header { return r.header }

func (r *answerRecorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
}

func (r *answerRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.body.Write(b)
}

// refuseShed answers a request that admission refused: 503, a Retry-After of 1 to 3 seconds and
// the Error body; req is marked shed (no log line of its own, see shedLog) and counted.
func (h *Handler) refuseShed(w http.ResponseWriter, req *request) {
	req.shed = true
	h.metrics.shedByConcurrency.Inc()
	header := w.Header()
	for name, values := range h.shedAnswer.header {
		header[name] = values
	}
	header["Retry-After"] = retryAfterValues()
	w.WriteHeader(h.shedAnswer.status)
	_, _ = w.Write(h.shedAnswer.body)
}

// shedLog says, at most once a second, how many requests were shed since it last said so: a
// refused request gets no access log line of its own, for under a flood writing one line per
// refusal would cost more than the refusal.
type shedLog struct {
	shed   atomic.Int64
	lastAt atomic.Int64 // unix nanoseconds of the last line
}

// count counts a shed request and reports whether a line is due, with the count to put in it.
func (l *shedLog) count(now time.Time) (int64, bool) {
	l.shed.Add(1)
	last := l.lastAt.Load()
	if now.UnixNano()-last < int64(time.Second) || !l.lastAt.CompareAndSwap(last, now.UnixNano()) {
		return 0, false
	}
	return l.shed.Swap(0), true
}

// admission bounds the API requests in the handler. The zero of its fields is not usable; make it
// with newAdmission.
//
// The bound is limit, between floor and max. A fixed admission (no latency target) keeps it at
// max. An adaptive one (target above 0) moves it, additive increase and multiplicative
// decrease: it falls by a quarter, at most once per target, when a request leaves the handler
// after more than target and a request was refused since the last fall (demand is above what the
// handler admits, and what it admits is slow: too many requests share the cores); it grows by
// one per limit requests that leave within target, or that leave with no refusal since the last
// fall. Under ordinary load nothing is refused, so the limit stays at max whatever the latency;
// under a flood it settles where the handler's latency is about target, but never below floor.
// Fewer requests in the handler leave the cores to fewer goroutines, so each admitted request
// is answered sooner; the price is fewer admitted requests (docs/performance.md, "Flood, second
// part").
type admission struct {
	mu sync.Mutex
	// inHandler counts the requests holding a slot; waiters are the queued requests, first come
	// first served; limit is the bound now.
	inHandler  int
	waiters    []*admissionWaiter
	limit      float64
	max, floor int
	// queued counts the requests waiting for a slot (waiters' length, readable without mu); at
	// most maxQueued wait, each at most wait.
	queued    atomic.Int64
	maxQueued int64
	wait      time.Duration

	// target is the adaptive admission's latency target; 0 keeps limit at max.
	target time.Duration
	// refusedSinceDecrease is set by every refusal and cleared by a decrease; lastDecrease is when
	// the limit last fell.
	refusedSinceDecrease bool
	lastDecrease         time.Time
	// now is the clock (time.Now; tests set their own).
	now func() time.Time
}

// admissionWaiter is one queued request; granted is closed when leave hands it a slot.
type admissionWaiter struct {
	granted chan struct{}
}

// newAdmission returns an admission of limit concurrent requests with a queue of queueLength
// requests waiting at most wait; nil when limit is 0 (no bound). With target above 0 the bound
// adapts (see admission) between floor and limit; a floor of 0 is two per GOMAXPROCS, and a floor
// above limit is limit.
func newAdmission(limit, queueLength int, wait, target time.Duration, floor int) *admission {
	if limit <= 0 {
		return nil
	}
	if floor <= 0 {
		floor = 2 * runtime.GOMAXPROCS(0)
	}
	floor = min(floor, limit)
	return &admission{limit: float64(limit), max: limit, floor: floor, maxQueued: int64(queueLength), wait: wait,
		target: target, now: time.Now}
}

// enter takes a slot, waiting in the queue if there is room in it, and reports whether it got
// one, with the instant it got it; the caller who got one calls leave with that instant when the
// request is answered. It gives up when ctx ends (the client went away).
func (a *admission) enter(ctx context.Context) (time.Time, bool) {
	a.mu.Lock()
	if a.inHandler < a.bound() && len(a.waiters) == 0 {
		a.inHandler++
		a.mu.Unlock()
		return a.now(), true
	}
	if a.maxQueued == 0 || a.wait <= 0 || int64(len(a.waiters)) >= a.maxQueued {
		a.refusedSinceDecrease = true
		a.mu.Unlock()
		return time.Time{}, false
	}
	w := &admissionWaiter{granted: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	a.queued.Store(int64(len(a.waiters)))
	a.mu.Unlock()

	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	select {
	case <-w.granted:
		return a.now(), true
	case <-timer.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := slices.Index(a.waiters, w); i >= 0 {
		a.waiters = slices.Delete(a.waiters, i, i+1)
		a.queued.Store(int64(len(a.waiters)))
		a.refusedSinceDecrease = true
		return time.Time{}, false
	}
	// leave granted the slot as the wait ended: it is this request's.
	return a.now(), true
}

// bound is the whole number of slots now; a.mu is held.
func (a *admission) bound() int { return int(a.limit) }

// leave frees the slot taken by enter at entered, adapts the bound to the time the request held
// it, and hands the slot to the first queued request if the bound allows.
func (a *admission) leave(entered time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inHandler--
	if a.target > 0 {
		now := a.now()
		a.adapt(now, now.Sub(entered))
	}
	for len(a.waiters) > 0 && a.inHandler < a.bound() {
		w := a.waiters[0]
		a.waiters = slices.Delete(a.waiters, 0, 1)
		a.inHandler++
		close(w.granted)
	}
	a.queued.Store(int64(len(a.waiters)))
}

// adapt moves the bound after a request held a slot for held; a.mu is held.
func (a *admission) adapt(now time.Time, held time.Duration) {
	switch {
	case held > a.target && a.refusedSinceDecrease:
		if now.Sub(a.lastDecrease) >= a.target {
			a.limit = max(float64(a.floor), a.limit*0.75)
			a.lastDecrease = now
			a.refusedSinceDecrease = false
		}
	case a.limit < float64(a.max):
		a.limit = min(float64(a.max), a.limit+1/a.limit)
	}
}

// admitted returns the requests holding a slot now.
func (a *admission) admitted() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inHandler
}

// currentLimit returns the bound now: max for a fixed admission.
func (a *admission) currentLimit() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bound()
}
