package server

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// The bounds of the lingering close (lingerAfterAnswer): whichever comes first ends it.
const (
	// lingerTime bounds the time spent draining one request's body after its answer (nginx's
	// lingering_time is 30 s; we hold a connection and a goroutine for less, since a client that
	// reads its answer closes at once and ends the drain sooner).
	lingerTime = 5 * time.Second
	// lingerFloorBytes is the least a drain reads, even under a smaller --max-body-bytes: a
	// client that sent a declared body many times over the limit still reads its 413. Discarding
	// costs a copy into a pooled buffer, about 1 ms per MiB on loopback here.
	lingerFloorBytes = 64 << 20
)

// lingerAfterAnswer is the lingering close of a request answered before its body was read to the
// end (a body over a bound, refused by the API at the item that broke it; a declared length over
// --max-body-bytes, answered 413 unread; a request shed or answered 408): it sends the answer at
// once, then reads and discards the rest of the body, at most max(--max-body-bytes, 64 MiB) and
// at most lingerTime, before net/http closes the connection. Without it, the connection would
// close with the body still arriving; the client's kernel answers the data it sends next with a
// reset, which discards the answer waiting in its receive buffer: clients that write the whole
// body before reading (Python's http.client and urllib, many raw-socket clients) and Go's with
// Expect: 100-continue saw a reset instead of the {code, message} answer.
//
// A request whose body was read to its end (every normal request), or that has none, costs two
// field loads. It does nothing over HTTP/2 (a stream ends with RST_STREAM, never the
// connection), when the handler aborted the connection, when the body's reading failed (the
// client is gone or sent a malformed chunk), or when the client asked Expect: 100-continue and
// nothing read the body (no 100 Continue was sent: the client sends no body, and net/http
// answers with Connection: close).
//
// Whether the connection is kept after a complete drain is net/http's choice, made when the
// answer's header was written: with more than 256 KiB unread, or an unread Expect body, it answers
// Connection: close (and closes: the drain only makes that close clean); with less, it has
// discarded the rest itself and the drain finds the end at once.
func (h *Handler) lingerAfterAnswer(w http.ResponseWriter, r *http.Request, x *exchange) {
	b := x.body
	if b == nil || b.sawEOF || b.broken || x.aborted || r.ProtoMajor >= 2 {
		return
	}
	if !b.touched && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	if rc.SetReadDeadline(time.Now().Add(lingerTime)) != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, b.ReadCloser, max(h.opts.MaxBodyBytes, lingerFloorBytes))
	// The next request on a kept connection gets the server's own deadline (net/http sets it
	// before reading one, when the server has a timeout; when it has none, this is its deadline).
	_ = rc.SetReadDeadline(time.Time{})
}
