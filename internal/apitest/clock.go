package apitest

import (
	"sync"
	"time"
)

// Clock is the server's clock in tests (the database's and the authenticator's): real time,
// moved forward by Advance. It keeps running so that writes made one after the other get
// increasing timestamps, as they would in production.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// NewClock returns a clock that starts at the real current time.
func NewClock() *Clock { return &Clock{} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
