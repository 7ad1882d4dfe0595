package server

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// fakeClock is a clock the tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock               { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }
func adaptiveForTest(clock *fakeClock, max, floor int) *admission {
	a := newAdmission(max, 0, 0, 50*time.Millisecond, floor)
	a.now = clock.now
	return a
}

// fill takes n slots and returns the instants they were taken at; every one must be granted.
func fill(t *testing.T, a *admission, n int) []time.Time {
	t.Helper()
	entered := make([]time.Time, n)
	for i := range entered {
		at, ok := a.enter(context.Background())
		if !ok {
			t.Fatalf("slot %d of %d refused (limit %d, %d in the handler)", i+1, n, a.currentLimit(), a.admitted())
		}
		entered[i] = at
	}
	return entered
}

// slowRounds runs rounds rounds of n requests that each hold their slot a second; when n is the
// bound, each round also has one request refused.
func slowRounds(t *testing.T, a *admission, clock *fakeClock, rounds, n int) {
	t.Helper()
	for range rounds {
		entered := fill(t, a, n)
		if n == a.currentLimit() {
			if _, ok := a.enter(context.Background()); ok {
				t.Fatalf("request %d admitted over a bound of %d", n+1, n)
			}
		}
		clock.advance(time.Second)
		for _, at := range entered {
			a.leave(at)
		}
	}
}

// TestAdaptiveAdmissionKeepsItsMaximumWithoutRefusals: requests far slower than the target do not
// lower the bound while nothing is refused — ordinary load on a slow database keeps every slot.
func TestAdaptiveAdmissionKeepsItsMaximumWithoutRefusals(t *testing.T) {
	clock := newFakeClock()
	a := adaptiveForTest(clock, 64, 4)
	slowRounds(t, a, clock, 1000, 32)
	if got := a.currentLimit(); got != 64 {
		t.Fatalf("limit %d after slow requests without refusals, want 64", got)
	}
}

// TestAdaptiveAdmissionFallsUnderAFloodAndClimbsBack: while requests are refused and the admitted
// ones take longer than the target, the bound falls by a quarter at most once per target, never
// below the floor; a lowered bound refuses requests beyond it; requests within the target raise
// it back to the maximum, one slot per bound's worth of them.
func TestAdaptiveAdmissionFallsUnderAFloodAndClimbsBack(t *testing.T) {
	clock := newFakeClock()
	a := adaptiveForTest(clock, 64, 4)
	entered := fill(t, a, 64)
	leaveOne := func() {
		a.leave(entered[len(entered)-1])
		entered = entered[:len(entered)-1]
	}
	if _, ok := a.enter(context.Background()); ok {
		t.Fatal("a 65th request was admitted")
	}
	clock.advance(100 * time.Millisecond)
	leaveOne()
	if got := a.currentLimit(); got != 48 {
		t.Fatalf("after a slow request during refusals: limit %d, want 48", got)
	}
	// No refusal since that decrease, and then no target's time since it: no further fall.
	leaveOne()
	if _, ok := a.enter(context.Background()); ok {
		t.Fatal("admitted beyond the lowered bound")
	}
	leaveOne()
	if got := a.currentLimit(); got != 48 {
		t.Fatalf("two decreases within one target: limit %d, want 48", got)
	}

	// A flood that goes on: a refusal and a slow request every target.
	for _, want := range []int{36, 27, 20, 15, 11, 8, 6, 4, 4, 4} {
		clock.advance(50 * time.Millisecond)
		if _, ok := a.enter(context.Background()); ok {
			t.Fatalf("admitted with %d in the handler and limit %d", a.admitted(), a.currentLimit())
		}
		leaveOne()
		if got := a.currentLimit(); got != want {
			t.Fatalf("limit %d, want %d", got, want)
		}
	}
	for len(entered) > 0 {
		leaveOne()
	}
	if a.admitted() != 0 {
		t.Fatalf("%d still in the handler", a.admitted())
	}
	// The 51 requests left after the refusals stopped: each raised the bound by 1/bound.
	if got := a.currentLimit(); got <= 4 || got >= 16 {
		t.Fatalf("after the flood's last requests left, with no refusal: limit %d, want 5 to 15", got)
	}

	// The flood is over: requests within the target raise the bound to the maximum again.
	fast := 0
	for a.currentLimit() < 64 {
		at := fill(t, a, 1)[0]
		clock.advance(10 * time.Millisecond)
		a.leave(at)
		fast++
		if fast > 10000 {
			t.Fatalf("limit %d after 10000 fast requests", a.currentLimit())
		}
	}
	// Additive increase: about the sum of the bounds passed through, 4+5+…+63, ≈ 1,980.
	if fast < 1500 || fast > 2500 {
		t.Fatalf("back to 64 after %d fast requests, want about 2,000", fast)
	}
	fill(t, a, 64)
}

// TestAdaptiveAdmissionClimbsBackWhenNothingIsRefused: once refusals stop, even slow requests
// raise a lowered bound (a slow operation alone is not a flood).
func TestAdaptiveAdmissionClimbsBackWhenNothingIsRefused(t *testing.T) {
	clock := newFakeClock()
	a := adaptiveForTest(clock, 16, 2)
	a.limit = 2
	for range 500 {
		at := fill(t, a, 1)[0]
		clock.advance(time.Second)
		a.leave(at)
	}
	if got := a.currentLimit(); got != 16 {
		t.Fatalf("limit %d, want 16", got)
	}
}

// TestFixedAdmissionNeverMoves: without a target the bound stays at the maximum through refusals
// and slow requests.
func TestFixedAdmissionNeverMoves(t *testing.T) {
	clock := newFakeClock()
	a := newAdmission(8, 0, 0, 0, 2)
	a.now = clock.now
	slowRounds(t, a, clock, 100, 8)
	if got := a.currentLimit(); got != 8 {
		t.Fatalf("limit %d, want 8", got)
	}
}

// TestAdmissionFloor: a floor of 0 is two per GOMAXPROCS, capped at the maximum.
func TestAdmissionFloor(t *testing.T) {
	if a := newAdmission(64, 0, 0, time.Millisecond, 0); a.floor < 2 || a.floor%2 != 0 {
		t.Fatalf("default floor %d", a.floor)
	}
	if a := newAdmission(3, 0, 0, time.Millisecond, 10); a.floor != 3 {
		t.Fatalf("floor above the maximum: %d, want 3", a.floor)
	}
}

// TestLoweredBoundHoldsTheQueue: a queued request is handed a slot only when the requests in
// the handler are under the bound now, not the maximum.
func TestLoweredBoundHoldsTheQueue(t *testing.T) {
	clock := newFakeClock()
	a := newAdmission(4, 1, time.Hour, 50*time.Millisecond, 2)
	a.now = clock.now
	entered := fill(t, a, 4)
	a.limit = 2 // as a flood would have left it
	got := make(chan bool)
	go func() {
		_, ok := a.enter(context.Background())
		got <- ok
	}()
	waitFor(t, "queued", func() bool { return a.queued.Load() == 1 })
	a.leave(entered[0]) // 3 in the handler, bound 2: stays queued
	a.leave(entered[1]) // 2: stays queued
	select {
	case <-got:
		t.Fatal("the queued request got a slot over the bound")
	default:
	}
	if a.queued.Load() != 1 || a.admitted() != 2 {
		t.Fatalf("%d queued, %d in the handler; want 1 and 2", a.queued.Load(), a.admitted())
	}
	a.leave(entered[2]) // 1 in the handler: the queued request takes the slot
	if !<-got {
		t.Fatal("the queued request was refused")
	}
	if a.queued.Load() != 0 || a.admitted() != 2 {
		t.Fatalf("%d queued, %d in the handler; want 0 and 2", a.queued.Load(), a.admitted())
	}
}

// TestShedAnswerIsWriteErrorsAnswer: the pre-recorded refusal is what WriteError writes (its
// Content-Type and Error body), with a Retry-After of 1 to 3 s, and keeps the headers set before
// it (Connection: close while draining).
func TestShedAnswerIsWriteErrorsAnswer(t *testing.T) {
	api := newBlockingAPI()
	h := testHandler(api, Options{MaxConcurrent: 1})
	done := make(chan struct{})
	go func() {
		serve(h, "GET", "/mgmt/openapi/5/x", nil)
		close(done)
	}()
	<-api.entered
	h.Drain()
	for range 20 {
		rec := serve(h, "GET", "/mgmt/openapi/5/y", nil)
		refused(t, "while the slot is taken", rec, http.StatusServiceUnavailable, "as many requests as it can (1, and 0 waiting); retry later")
		if got := rec.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
			t.Fatalf("Content-Type %q", got)
		}
		if got := rec.Header().Get("Retry-After"); got != "1" && got != "2" && got != "3" {
			t.Fatalf("Retry-After %q", got)
		}
		if got := rec.Header().Get("Connection"); got != "close" {
			t.Fatalf("Connection %q while draining", got)
		}
	}
	close(api.release)
	<-done
}
