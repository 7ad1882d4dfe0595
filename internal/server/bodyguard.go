package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

// guardedBody is every request body as the API reads it. It answers for the server, before the
// API can, when reading the body fails for a reason of the server's and not of the request's
// content:
//
//   - the body did not arrive before the read deadline (http.Server's ReadTimeout, or one set
//     for the request): 408 Request Timeout with the Error body, where the reader would otherwise
//     see an i/o error and call the body unreadable (400), or nothing would be answered;
//   - a chunked body read past the decode budget: 503 with Retry-After.
//
// Once it has answered, the exchange's recorder drops whatever the API writes after (see
// statusRecorder.answered), and the read returns errAnsweredByServer.
type guardedBody struct {
	io.ReadCloser
	h *Handler
	x *exchange
	// budget, when not nil, takes the bytes read (a body without a declared length); taken is
	// what it took, given back when the request is answered.
	budget *decodeBudget
	taken  int64
	// touched is set by the first read, sawEOF by the read that reached the body's end, broken by
	// a read that failed otherwise than by the deadline: what the lingering close needs to know
	// (lingering.go). closed is set by Close.
	touched, sawEOF, broken, closed bool
}

// Close ends the API's reading of the body; the body under it stays open, for net/http closes it
// after the handler returns: a body closed now could no longer be drained by the lingering close
// (the generated decoder closes every body it reads, at an early answer too).
func (b *guardedBody) Close() error {
	b.closed = true
	return nil
}

// errAnsweredByServer is what a body read returns after the server answered the request itself.
var errAnsweredByServer = errors.New("body: the server already answered this request")

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.x.answered {
		return 0, errAnsweredByServer
	}
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	b.touched = true
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		if err == io.EOF {
			b.sawEOF = true
		} else if !isTimeout(err) {
			b.broken = true
		}
	}
	if n > 0 && b.budget != nil {
		if !b.budget.take(int64(n)) {
			b.h.metrics.shed.WithLabelValues(shedDecodeBudget).Inc()
			b.h.answerEarly(b.x, http.StatusServiceUnavailable, true,
				fmt.Sprintf("body: the server is decoding %d bytes of other requests' bodies, its budget; retry later",
					b.budget.limit))
			return 0, errAnsweredByServer
		}
		b.taken += int64(n)
	}
	if err != nil && isTimeout(err) {
		b.h.answerEarly(b.x, http.StatusRequestTimeout, false,
			"body: not received within the server's read timeout; send the whole body without pauses")
		return n, errAnsweredByServer
	}
	return n, err
}

// isTimeout reports whether err is a read deadline passing.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// answerEarly answers the request with the Error body before the API does, and closes the
// connection after (the rest of the body is drained for a bounded time first: lingering.go).
// retry adds Retry-After.
func (h *Handler) answerEarly(x *exchange, status int, retry bool, message string) {
	rec := &x.statusRecorder
	if rec.status != 0 {
		// The API answered already (it may read a body after answering); nothing to add.
		x.answered = true
		return
	}
	header := rec.Header()
	header.Set("Connection", "close")
	if retry {
		header.Set("Retry-After", retryAfter())
	}
	h.opts.WriteError(rec, status, message)
	x.answered = true
}
