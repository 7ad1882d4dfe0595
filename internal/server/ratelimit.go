package server

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
)

// The per-key rate limit (off unless configured) gives every API key a token bucket: a request
// authenticated by the key takes a token, tokens come back at a fixed rate up to the burst, and a
// request finding the bucket empty is refused with 429, Retry-After (the seconds until a token is
// back) and the Error body. The buckets live in the process: with several replicas each holds its
// own, so a key's rate across the deployment is at most the replicas times the rate.

// keyLimiter holds the buckets of the keys seen.
type keyLimiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*tokenBucket
	// sweepAt is the bucket count at which full buckets are dropped (a full bucket is the same as
	// none), so that the map does not grow with every key ever seen.
	sweepAt int
}

type tokenBucket struct {
	tokens float64
	at     time.Time
}

// newKeyLimiter returns a limiter of rate requests per second and burst per key; nil when rate is
// 0 (no limit).
func newKeyLimiter(rate float64, burst int) *keyLimiter {
	if rate <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &keyLimiter{rate: rate, burst: float64(burst), now: time.Now,
		buckets: map[string]*tokenBucket{}, sweepAt: 1024}
}

// take takes a token of key's bucket. When there is none it returns false and how long until one
// is back.
func (l *keyLimiter) take(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.sweepAt {
			l.sweep(now)
		}
		b = &tokenBucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	if elapsed := now.Sub(b.at).Seconds(); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed*l.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// sweep drops the buckets that are full by now, and doubles the next sweep's threshold when most
// buckets stay (many keys in use).
func (l *keyLimiter) sweep(now time.Time) {
	for key, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, key)
		}
	}
	if len(l.buckets) >= l.sweepAt/2 {
		l.sweepAt *= 2
	}
}

// LimitKey counts a request against the rate limit of the API key keyID (its id, never its
// value), once the key is authenticated. When the key is over its rate it sets Retry-After on the
// request's answer and returns an apierror.LimitExceeded (429) naming the limit; otherwise, and
// when no limit is configured or ctx is not a request served by New's handler, nil.
func LimitKey(ctx context.Context, keyID string) error {
	req, ok := ctx.Value(requestKey{}).(*request)
	if !ok || req.limiter == nil {
		return nil
	}
	ok, wait := req.limiter.take(keyID)
	if ok {
		return nil
	}
	req.handler.metrics.rateLimited.Inc()
	seconds := int(math.Ceil(wait.Seconds()))
	if seconds < 1 {
		seconds = 1
	}
	req.header.Set("Retry-After", strconv.Itoa(seconds))
	return apierror.LimitExceededf("Authorization: the API key made more than %s requests per second (burst %d); retry after %d s",
		strconv.FormatFloat(req.limiter.rate, 'f', -1, 64), int(req.limiter.burst), seconds)
}
