package server

import (
	"sync/atomic"
)

// The decode budget bounds the request-body bytes being read and decoded across every API
// request in flight, whatever each request's own limit (--max-body-bytes): sixteen 15 MB bodies at
// once would otherwise hold their bytes and their decoded values together. A request declaring
// its length (Content-Length) takes that many bytes of the budget before anything of its body is
// read, and gives them back when it is answered; a chunked body takes its bytes as they are read.
// A request that does not fit is answered 503 with Retry-After at once: a declared length before
// its body is read, a chunked body as soon as the bytes it has read pass the budget.
//
// A request whose declared length alone is larger than the whole budget still runs when nothing
// else holds any of it, so that a budget smaller than --max-body-bytes cannot refuse a body for
// ever (the configuration refuses such a budget anyway).

// decodeBudget counts the bytes taken; nil means no budget.
type decodeBudget struct {
	limit int64
	used  atomic.Int64
}

// newDecodeBudget returns a budget of limit bytes; nil when limit is 0 (no budget).
func newDecodeBudget(limit int64) *decodeBudget {
	if limit <= 0 {
		return nil
	}
	return &decodeBudget{limit: limit}
}

// take takes n bytes when they fit, and reports whether they did.
func (b *decodeBudget) take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.limit && used > 0 {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// give returns n bytes taken.
func (b *decodeBudget) give(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

// inUse returns the bytes taken now.
func (b *decodeBudget) inUse() int64 { return b.used.Load() }
