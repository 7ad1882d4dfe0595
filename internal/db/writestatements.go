package db

import (
	"context"
	"database/sql"
	"sync"
)

// maxPreparedWrites bounds how many distinct statement texts preparedWrites keeps prepared on
// SQLite's write connection; texts built at run time beyond it run unprepared.
const maxPreparedWrites = 512

// preparedWrites runs the statements of SQLite write transactions through statements prepared
// once on the single write connection. Preparing a statement cost SQLite about as much CPU as
// running it (40% of the server's CPU under E1 comments, issue 12).
//
// The group committer holds the write connection as a *sql.Conn for its whole life, so a text is
// prepared on it the first time a transaction runs it, in the middle of a batch if need be
// (SQLite prepares statements inside a transaction; they outlive it), and run prepared from then
// on. A text that does not prepare runs unprepared, so that its error is the statement's own.
type preparedWrites struct {
	mu         sync.Mutex
	statements map[string]*sql.Stmt
}

func newPreparedWrites() *preparedWrites {
	return &preparedWrites{statements: map[string]*sql.Stmt{}}
}

// statement returns the statement of query prepared on conn, preparing it the first time; nil
// when it does not prepare or the cache is full.
func (p *preparedWrites) statement(ctx context.Context, conn *sql.Conn, query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stmt, ok := p.statements[query]; ok {
		return stmt
	}
	if len(p.statements) >= maxPreparedWrites {
		return nil
	}
	stmt, err := conn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.statements[query] = stmt
	return stmt
}

// prepared returns how many texts are prepared.
func (p *preparedWrites) prepared() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.statements)
}

// close closes every prepared statement.
func (p *preparedWrites) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, stmt := range p.statements {
		_ = stmt.Close()
	}
	clear(p.statements)
}

// on returns the Querier that runs statements on conn, prepared where preparedWrites can.
func (p *preparedWrites) on(conn *sql.Conn) Querier { return preparedConn{conn: conn, cache: p} }

// preparedConn is the write connection whose statements run prepared where preparedWrites has
// them. It is used by one goroutine at a time: the writer, or the member whose turn it is.
type preparedConn struct {
	conn  *sql.Conn
	cache *preparedWrites
}

func (c preparedConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if stmt := c.cache.statement(ctx, c.conn, query); stmt != nil {
		return stmt.ExecContext(ctx, args...)
	}
	return c.conn.ExecContext(ctx, query, args...)
}

func (c preparedConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if stmt := c.cache.statement(ctx, c.conn, query); stmt != nil {
		return stmt.QueryContext(ctx, args...)
	}
	return c.conn.QueryContext(ctx, query, args...)
}

func (c preparedConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if stmt := c.cache.statement(ctx, c.conn, query); stmt != nil {
		return stmt.QueryRowContext(ctx, args...)
	}
	return c.conn.QueryRowContext(ctx, query, args...)
}
