package server

import (
	"context"
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

// retryAfterSeconds is the Retry-After of a shed request (and of one over the decode budget): the
// queue drains in well under a second, so a client that waits one second finds room.
const retryAfterSeconds = "1"

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
