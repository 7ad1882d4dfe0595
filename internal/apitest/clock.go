package apitest

import (
	"sync"
	"time"
)

// Clock is a settable clock for the parts of the server that measure time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that starts at the real current time.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
