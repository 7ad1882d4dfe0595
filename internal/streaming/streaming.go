// Package streaming writes a list answer while its rows are read from the database, so that the
// memory one list takes stays flat in the number of rows instead of holding the whole answer
// (every row decoded, then the whole body encoded) before the first byte leaves.
//
// The bytes are those the generated encoder writes for the same list: the areas encode each
// item with its generated Encode method on the answer's jx encoder, inside the same envelope.
package streaming

import (
	"context"
	"net/http"

	"github.com/go-faster/jx"
)

// BufferBytes is how much of an answer is held before it is written to the client. An answer
// that fits in it behaves exactly as a buffered one: an error while producing it still becomes
// an ordinary error answer.
const BufferBytes = 32 << 10

// List produces one operation's 200 answer on a; it runs after the request is authenticated, so
// ctx carries the caller. An error it returns before a.Started() is answered as the operation's
// errors are; after, the answer can no longer change (see Serve).
type List func(ctx context.Context, a *Answer) error

// Answer is one application/json 200 answer being written.
type Answer struct {
	enc *jx.Encoder
	out clientWriter
}

// Encoder is the encoder the answer is written with; it writes to the client every BufferBytes.
func (a *Answer) Encoder() *jx.Encoder { return a.enc }

// Array writes {"field":[ … ]} with items writing the elements (through Item); items' error,
// or none, is returned.
func (a *Answer) Array(field string, items func() error) error {
	a.enc.ObjStart()
	a.enc.FieldStart(field)
	a.enc.ArrStart()
	if err := items(); err != nil {
		return err
	}
	a.enc.ArrEnd()
	a.enc.ObjEnd()
	return nil
}

// Item encodes one element. It returns the error of a failed write to the client (the client
// went away), so that the producer stops reading rows.
func (a *Answer) Item(item interface{ Encode(e *jx.Encoder) }) error {
	item.Encode(a.enc)
	return a.out.err
}

// Started reports whether the status and the first bytes have been written to the client.
func (a *Answer) Started() bool { return a.out.started }

// Serve writes list's answer to w. It returns list's error when nothing was written yet, for the
// caller to answer as usual. When list fails after the first bytes left (a database error in the
// middle of a long list), the status is sent and the body cannot be corrected: Serve calls fail
// (to log it) and aborts the connection with http.ErrAbortHandler, so the client sees a truncated
// body and a broken connection, never a complete-looking wrong answer. A client that goes away
// is not an error.
func Serve(ctx context.Context, w http.ResponseWriter, list List, fail func(error)) error {
	a := &Answer{out: clientWriter{w: w}}
	a.enc = jx.NewStreamingEncoder(&a.out, BufferBytes)
	err := list(ctx, a)
	if err == nil {
		err = a.enc.Close()
	}
	switch {
	case err == nil:
		return nil
	case !a.out.started:
		return err
	case a.out.err != nil:
		return nil // the client went away; nothing to answer
	default:
		fail(err)
		panic(http.ErrAbortHandler)
	}
}

// clientWriter writes the 200 status and Content-Type before the first bytes, and remembers the
// first write error.
type clientWriter struct {
	w       http.ResponseWriter
	started bool
	err     error
}

func (c *clientWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if !c.started {
		c.started = true
		c.w.Header().Set("Content-Type", "application/json; charset=utf-8")
		c.w.WriteHeader(http.StatusOK)
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}
