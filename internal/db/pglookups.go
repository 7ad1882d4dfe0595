package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgLookups serves LookupText on PostgreSQL. The lookups that wait at the same time travel
// together: one of pgLookupReaders goroutines, each with a connection of its own, takes every
// lookup queued (up to pgLookupBatch), writes their statements to PostgreSQL in one message ended
// by one Sync, and reads their answers back from one reply. A lookup by key costs PostgreSQL and
// this process a few microseconds of work and tens of microseconds of system calls, wake-ups and
// transaction starts on each side of the socket; gathered, the lookups of one message share those
// (docs/decisions.md, "PostgreSQL lookups by key travel together").
//
// The statements of one message are one implicit transaction, which only reads: each sees every
// write committed before the message was sent, which is after each of its lookups began. A
// statement's own error (a PgError) is its lookup's answer; PostgreSQL skips the statements after
// it, and the reader sends those again. A connection that fails is closed and the lookups it had
// not answered are sent once more on a new one: they are reads, so sending one twice is harmless.
type pgLookups struct {
	connect func(context.Context) (driver.Conn, error)
	queue   chan *pgLookup
	// mu orders close after every lookup that got into the queue: a lookup holds it shared
	// from its check of closed to its place in the queue.
	mu     sync.RWMutex
	closed bool
	quit   chan struct{}
	done   sync.WaitGroup
	// spare holds lookups to reuse, each with its answered channel.
	spare sync.Pool
}

// pgLookupReaders is how many connections read lookups. Two let one message be gathered and sent
// while PostgreSQL answers another; one, or four, were no faster under wrk (docs/performance.md).
const pgLookupReaders = 2

// pgLookupBatch bounds the lookups of one message (each answer is a row of one text column).
const pgLookupBatch = 64

// pgLookupDeadline bounds one message's round trip: past it the connection is taken as lost.
const pgLookupDeadline = 30 * time.Second

// pgLookup is one LookupText call on its way to PostgreSQL and back.
type pgLookup struct {
	query string
	args  [][]byte
	// answered is signaled once text, found and err are set.
	answered chan struct{}
	text     []byte
	found    bool
	err      error
}

// errLookupNotText answers a lookup whose query's first column is not of a text type.
var errLookupNotText = errors.New("lookup: the query's first column is not text")

// lookupsOwnError reports whether err is a lookup's own answer, not a failure of its connection:
// an error PostgreSQL gave its statement, other than one that ends the connection.
func lookupsOwnError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, errLookupNotText) || errors.As(err, &pgErr) && pgFault(pgErr.Code) != FaultUnavailable
}

// errLookupsClosed answers a lookup made after Close.
var errLookupsClosed = errors.New("lookup: the database is closed")

func newPgLookups(connect func(context.Context) (driver.Conn, error)) *pgLookups {
	l := &pgLookups{connect: connect, queue: make(chan *pgLookup, 4*pgLookupBatch), quit: make(chan struct{})}
	l.spare.New = func() any { return &pgLookup{answered: make(chan struct{}, 1)} }
	for range pgLookupReaders {
		l.done.Add(1)
		go l.read()
	}
	return l
}

// close stops the readers once the lookups already queued are answered, and closes their
// connections. Lookups made after it get errLookupsClosed. A second close does nothing.
func (l *pgLookups) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	close(l.quit)
	l.done.Wait()
}

// pgLookupArgs turns LookupText's arguments into PostgreSQL's text format; ok is false for an
// argument of a type it does not write (the lookup then goes through the pool).
func pgLookupArgs(args []any) (values [][]byte, ok bool) {
	values = make([][]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			values[i] = []byte(v)
		case int64:
			values[i] = strconv.AppendInt(nil, v, 10)
		case int:
			values[i] = strconv.AppendInt(nil, int64(v), 10)
		case bool:
			values[i] = []byte(strconv.FormatBool(v))
		default:
			return nil, false
		}
	}
	return values, true
}

// lookup sends query with args (in text format) and calls use with the text of the first row's
// first column; ErrNotFound when there is no row.
func (l *pgLookups) lookup(query string, args [][]byte, use func(text []byte) error) error {
	q := l.spare.Get().(*pgLookup)
	q.query, q.args = query, args
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		l.spare.Put(q)
		return errLookupsClosed
	}
	l.queue <- q // the readers run until close, which waits for mu
	l.mu.RUnlock()
	<-q.answered
	text, found, err := q.text, q.found, q.err
	*q = pgLookup{answered: q.answered}
	l.spare.Put(q)
	switch {
	case err != nil:
		return err
	case !found:
		return ErrNotFound
	}
	return use(text)
}

// read is one reader: it waits for a lookup, takes the others queued behind it, and answers
// them all with one message.
func (l *pgLookups) read() {
	defer l.done.Done()
	r := &pgLookupReader{connect: l.connect}
	defer r.close()
	batch := make([]*pgLookup, 0, pgLookupBatch)
	for {
		var first *pgLookup
		select {
		case first = <-l.queue:
		case <-l.quit:
			// Answer what is still queued: its senders wait for it.
			for {
				select {
				case q := <-l.queue:
					q.err = errLookupsClosed
					q.answered <- struct{}{}
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	gather:
		for len(batch) < pgLookupBatch {
			select {
			case q := <-l.queue:
				batch = append(batch, q)
			default:
				break gather
			}
		}
		r.answer(batch)
		for _, q := range batch {
			q.answered <- struct{}{}
		}
		clear(batch)
	}
}

// pgLookupReader is a reader's connection and the statements prepared on it.
type pgLookupReader struct {
	connect  func(context.Context) (driver.Conn, error)
	conn     driver.Conn // nil until needed, and after a failure
	pg       *pgconn.PgConn
	prepared map[string]*pgconn.StatementDescription
}

func (r *pgLookupReader) close() {
	if r.conn != nil {
		_ = r.conn.Close()
		r.conn, r.pg, r.prepared = nil, nil, nil
	}
}

// answer sets the answer of every lookup of batch. A connection that fails is replaced once;
// the lookups after one whose statement failed are sent again (see send).
func (r *pgLookupReader) answer(batch []*pgLookup) {
	retried := false
	for len(batch) > 0 {
		answered, err := r.send(batch)
		batch = batch[answered:]
		if err == nil {
			continue
		}
		r.close()
		if retried || FaultOf(err) != FaultUnavailable {
			for _, q := range batch {
				q.err = err
			}
			return
		}
		retried = true
	}
}

// send writes the lookups of batch to PostgreSQL in one message, ended by one Sync, and reads
// their answers. It returns how many lookups it answered, in order, and an error only when the
// connection failed. A statement's own error (a PgError) is its lookup's answer; PostgreSQL then
// skips the statements after it, which are left unanswered for the next send.
func (r *pgLookupReader) send(batch []*pgLookup) (answered int, err error) {
	ctx := context.Background()
	if r.conn == nil {
		conn, err := r.connect(ctx)
		if err != nil {
			return 0, err
		}
		std, ok := conn.(*stdlib.Conn)
		if !ok {
			_ = conn.Close()
			return 0, fmt.Errorf("lookup: the connection is a %T", conn)
		}
		r.conn, r.pg, r.prepared = conn, std.Conn().PgConn(), map[string]*pgconn.StatementDescription{}
	}
	if err := r.pg.Conn().SetDeadline(time.Now().Add(pgLookupDeadline)); err != nil {
		return 0, err
	}
	var message pgconn.Batch
	for i, q := range batch {
		sd, err := r.prepare(q.query)
		if err != nil {
			if !lookupsOwnError(err) {
				return 0, err
			}
			if i == 0 {
				q.err = err
				return 1, nil
			}
			batch = batch[:i] // this lookup leads the next send, and gets its error there
			break
		}
		message.ExecStatement(sd, q.args, nil, nil)
	}
	results := r.pg.ExecBatch(ctx, &message)
	for _, q := range batch {
		if !results.NextResult() {
			break
		}
		rr := results.ResultReader()
		q.text, q.found, q.err = nil, false, nil
		if rr.NextRow() {
			if values := rr.Values(); len(values) > 0 && values[0] != nil {
				q.text, q.found = append([]byte(nil), values[0]...), true
			} else {
				q.err = errors.New("lookup: the query selects a null")
			}
		}
		if _, err := rr.Close(); err != nil {
			break
		}
		answered++
	}
	err = results.Close()
	switch {
	case err == nil && answered < len(batch):
		return answered, fmt.Errorf("lookup: PostgreSQL answered %d statements of %d", answered, len(batch))
	case err == nil:
		return answered, nil
	case lookupsOwnError(err) && answered < len(batch):
		batch[answered].text, batch[answered].found, batch[answered].err = nil, false, err
		return answered + 1, nil
	}
	return answered, err
}

// prepare returns the statement of query, preparing it on the connection the first time.
func (r *pgLookupReader) prepare(query string) (*pgconn.StatementDescription, error) {
	sd, ok := r.prepared[query]
	if !ok {
		var err error
		sd, err = r.pg.Prepare(context.Background(), "mgmtapi_lookup_"+strconv.Itoa(len(r.prepared)), query, nil)
		if err != nil {
			return nil, err
		}
		r.prepared[query] = sd
	}
	if len(sd.Fields) == 0 || !pgTextColumn(sd.Fields[0].DataTypeOID) {
		return nil, errLookupNotText
	}
	return sd, nil
}

// pgTextColumn reports whether a column of type oid reads in PostgreSQL's text format as its
// own text: text, varchar, json.
func pgTextColumn(oid uint32) bool {
	const text, varchar, json = 25, 1043, 114
	return oid == text || oid == varchar || oid == json
}
