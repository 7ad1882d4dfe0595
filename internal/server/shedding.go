package server

import (
	"context"
	"math/rand/v2"
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
func retryAfter() string {
	return retryAfterChoices[rand.IntN(len(retryAfterChoices))]
}

var retryAfterChoices = []string{"1", "2", "3"}

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
type admission struct {
	// slots holds a token per request in the handler; its capacity is the bound.
	slots chan struct{}
	// queued counts the requests waiting for a slot; at most maxQueued wait, each at most wait.
	queued    atomic.Int64
	maxQueued int64
	wait      time.Duration
}

// newAdmission returns an admission of limit concurrent requests with a queue of queueLength
// requests waiting at most wait; nil when limit is 0 (no bound).
func newAdmission(limit, queueLength int, wait time.Duration) *admission {
	if limit <= 0 {
		return nil
	}
	return &admission{slots: make(chan struct{}, limit), maxQueued: int64(queueLength), wait: wait}
}

// enter takes a slot, waiting in the queue if there is room in it, and reports whether it got
// one; the caller who got one calls leave when the request is answered. It gives up when ctx
// ends (the client went away).
func (a *admission) enter(ctx context.Context) bool {
	select {
	case a.slots <- struct{}{}:
		return true
	default:
	}
	if a.maxQueued == 0 || a.wait <= 0 {
		return false
	}
	if a.queued.Add(1) > a.maxQueued {
		a.queued.Add(-1)
		return false
	}
	defer a.queued.Add(-1)
	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	select {
	case a.slots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// leave frees the slot taken by enter.
func (a *admission) leave() { <-a.slots }

// inHandler returns the requests holding a slot now.
func (a *admission) inHandler() int { return len(a.slots) }
