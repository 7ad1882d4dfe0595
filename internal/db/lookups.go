package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
)

// lookupConnections is how many SQLite connections serve LookupText at most, as many as the read
// pool has: more gave nothing on two cores, and fewer made the reads overlap less, so that each
// took and released the WAL read lock with system calls of its own.
const lookupConnections = 8

// lookupPool serves LookupText on SQLite with connections of its own, driven through the driver
// directly: on the GET by id hot path, database/sql's pool and prepared-statement bookkeeping
// (its locks, contended by 64 requests in flight, the Rows and its close) cost as much as the
// lookup itself. Each connection is opened with the read pool's DSN (so with the same pragmas,
// query_only included) and keeps its statements prepared. A query outside a transaction is, as
// through database/sql, a read transaction of its own: it sees every write committed before it.
type lookupPool struct {
	open  func() (driver.Conn, error)
	slots chan struct{}    // one per open connection
	idle  chan *lookupConn // connections not in use

	mu     sync.Mutex
	closed bool
}

type lookupConn struct {
	conn       driver.Conn
	statements map[string]driver.Stmt
}

func newLookupPool(d driver.Driver, dsn string) *lookupPool {
	return &lookupPool{
		open:  func() (driver.Conn, error) { return d.Open(dsn) },
		slots: make(chan struct{}, lookupConnections),
		idle:  make(chan *lookupConn, lookupConnections),
	}
}

// get returns an idle connection, opens one when fewer than lookupConnections are open, or waits
// for one to be put back (a lookup holds one for microseconds).
func (p *lookupPool) get() (*lookupConn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	select {
	case c := <-p.idle:
		return c, nil
	case p.slots <- struct{}{}:
		conn, err := p.open()
		if err != nil {
			<-p.slots
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		return &lookupConn{conn: conn, statements: map[string]driver.Stmt{}}, nil
	}
}

// put gives c back; broken (a driver.ErrBadConn) or after close, it is closed instead.
func (p *lookupPool) put(c *lookupConn, broken bool) {
	// Under mu, so that close cannot drain idle between the check and the send (the send does
	// not block: idle holds as many connections as may be open).
	p.mu.Lock()
	defer p.mu.Unlock()
	if broken || p.closed {
		c.close()
		<-p.slots
		return
	}
	p.idle <- c
}

// close closes the idle connections; those in use are closed when put back.
func (p *lookupPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case c := <-p.idle:
			c.close()
			<-p.slots
		default:
			return
		}
	}
}

func (c *lookupConn) close() {
	for _, stmt := range c.statements {
		_ = stmt.Close()
	}
	_ = c.conn.Close()
}

// statement returns query prepared on c, preparing it the first time (at most
// maxPreparedReads texts are kept; beyond, the statement is prepared for this call only and
// kept is false).
func (c *lookupConn) statement(ctx context.Context, query string) (stmt driver.Stmt, kept bool, err error) {
	if stmt, ok := c.statements[query]; ok {
		return stmt, true, nil
	}
	if prep, ok := c.conn.(driver.ConnPrepareContext); ok {
		stmt, err = prep.PrepareContext(ctx, query)
	} else {
		stmt, err = c.conn.Prepare(query)
	}
	if err != nil {
		return nil, false, err
	}
	if len(c.statements) >= maxPreparedReads {
		return stmt, false, nil
	}
	c.statements[query] = stmt
	return stmt, true, nil
}

// touch reads the schema on c, which opens the database's files (the WAL included), without
// keeping the statement.
func (c *lookupConn) touch(ctx context.Context) error {
	const query = `SELECT printf('%d', count(*)) FROM sqlite_schema`
	_, err := c.lookupText(ctx, query, nil, func([]byte) error { return nil })
	if stmt, ok := c.statements[query]; ok {
		_ = stmt.Close()
		delete(c.statements, query)
	}
	return err
}

// lookupText runs query on c and calls use with the first column of its first row.
func (c *lookupConn) lookupText(ctx context.Context, query string, args []driver.NamedValue, use func(text []byte) error) (found bool, err error) {
	stmt, kept, err := c.statement(ctx, query)
	if err != nil {
		return false, err
	}
	if !kept {
		defer stmt.Close()
	}
	q, ok := stmt.(driver.StmtQueryContext)
	if !ok {
		return false, errors.New("sqlite driver: statements do not take a context")
	}
	rows, err := q.QueryContext(ctx, args)
	if err != nil {
		return false, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	if len(dest) == 0 {
		_ = rows.Close()
		return false, errors.New("lookup: the query selects no column")
	}
	if err := rows.Next(dest); err != nil {
		closeErr := rows.Close()
		if err == io.EOF {
			return false, closeErr
		}
		return false, err
	}
	var text []byte
	switch v := dest[0].(type) {
	case string:
		text = []byte(v)
	case []byte:
		text = v
	default:
		_ = rows.Close()
		return false, fmt.Errorf("lookup: the column is %T, not text", dest[0])
	}
	if err := rows.Close(); err != nil {
		return false, err
	}
	return true, use(text)
}

// LookupText runs query, which selects a text column, and calls use with the value of its first
// row; text is valid only during the call. It returns use's error, or ErrNotFound, without
// calling use, when the query selects no row.
//
// It is the read of a row by key on a hot path: the query does not watch ctx's cancellation (a
// lookup by key ends in microseconds, and for a context that can be canceled — a served
// request's always can — both database/sql and the drivers start a goroutine per query to watch
// it, which costs more than the lookup), and it runs on connections of its own, outside
// database/sql: on SQLite see lookupPool; on PostgreSQL the lookups waiting at the same time
// are sent together, in one message (see pgLookups). Like every read outside a transaction it
// sees every write committed before it began. Where this process holds the database alone (a
// SQLite file by default, PostgreSQL with Options.PostgresAlone), its answers are kept between
// write transactions (see answerCache): use must not change text.
func (d *DB) LookupText(ctx context.Context, query string, use func(text []byte) error, args ...any) error {
	ctx = context.WithoutCancel(ctx)
	if d.Engine == Postgres && d.answers == nil { // shared: no kept answers
		return d.lookupPostgres(ctx, query, use, args)
	}
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return fmt.Errorf("lookup argument $%d: %w", i+1, err)
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	read := use
	if d.answers != nil {
		if key, ok := answerKey(make([]byte, 0, 128), query, named); ok {
			if text, hit := d.answers.get(key); hit {
				return use(text)
			}
			if gen, keep := d.answers.before(); keep {
				read = func(text []byte) error {
					d.answers.keep(key, gen, text)
					return use(text)
				}
			}
		}
	}
	if d.Engine == Postgres {
		return d.lookupPostgres(ctx, query, read, args)
	}
	c, err := d.lookups.get()
	if err != nil {
		return err
	}
	var found bool
	found, err = c.lookupText(ctx, query, named, read)
	d.lookups.put(c, errors.Is(err, driver.ErrBadConn))
	if err == nil && !found {
		return ErrNotFound
	}
	return err
}

// lookupPostgres is LookupText on PostgreSQL, without kept answers: through pgLookups, or
// through the pool for an argument of a type pgLookups does not write.
func (d *DB) lookupPostgres(ctx context.Context, query string, use func(text []byte) error, args []any) error {
	if values, ok := pgLookupArgs(args); ok {
		return d.pgLookups.lookup(query, values, use)
	}
	return lookupThroughPool(ctx, d.Read(), query, use, args)
}

func lookupThroughPool(ctx context.Context, q Querier, query string, use func(text []byte) error, args []any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return ErrNotFound
	}
	var text sql.RawBytes
	if err := rows.Scan(&text); err != nil {
		return err
	}
	if err := use(text); err != nil {
		return err
	}
	return rows.Close()
}
