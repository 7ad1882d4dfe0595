package db

import (
	"context"
	"database/sql"
	"sync"
)

// maxPreparedWrites bounds how many distinct statement texts preparedWrites keeps prepared on
// SQLite's write connection; texts built at run time beyond it run unprepared, as before.
const maxPreparedWrites = 512

// preparedWrites runs the statements of SQLite write transactions through statements prepared
// once on the single write connection. Preparing a statement cost SQLite about as much CPU as
// running it (40% of the server's CPU under E1 comments, issue 12), and a statement prepared in
// a transaction is finalized with it.
//
// A statement can only be prepared for the pool while the write connection is free, and during
// a batch it is not: a text met in a transaction runs unprepared and is remembered, and the
// group committer prepares the remembered texts between batches (prepareWanted). From then on
// every transaction runs it through Tx.StmtContext, which finds it prepared on the connection.
type preparedWrites struct {
	pool *sql.DB

	mu         sync.Mutex
	statements map[string]*sql.Stmt
	wanted     map[string]struct{}
}

func newPreparedWrites(pool *sql.DB) *preparedWrites {
	return &preparedWrites{pool: pool, statements: map[string]*sql.Stmt{}, wanted: map[string]struct{}{}}
}

// lookup returns the prepared statement of query, or nil after remembering query for the next
// prepareWanted (unless the cache is full).
func (p *preparedWrites) lookup(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stmt, ok := p.statements[query]; ok {
		return stmt
	}
	if len(p.statements)+len(p.wanted) < maxPreparedWrites {
		p.wanted[query] = struct{}{}
	}
	return nil
}

// prepareWanted prepares the texts remembered since its last call. The caller guarantees the
// write connection is free (no transaction is open on it). A text that does not prepare (a
// statement that failed in its transaction too) is forgotten.
func (p *preparedWrites) prepareWanted(ctx context.Context) {
	p.mu.Lock()
	texts := make([]string, 0, len(p.wanted))
	for text := range p.wanted {
		texts = append(texts, text)
	}
	clear(p.wanted)
	p.mu.Unlock()
	for _, text := range texts {
		stmt, err := p.pool.PrepareContext(ctx, text)
		if err != nil {
			continue
		}
		p.mu.Lock()
		p.statements[text] = stmt
		p.mu.Unlock()
	}
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
	clear(p.wanted)
}

// in returns sqlTx's Querier that runs the prepared texts as such.
func (p *preparedWrites) in(sqlTx *sql.Tx) Querier { return preparedTx{tx: sqlTx, cache: p} }

// preparedTx is a write transaction whose statements run prepared where preparedWrites has them.
type preparedTx struct {
	tx    *sql.Tx
	cache *preparedWrites
}

func (t preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if stmt := t.cache.lookup(query); stmt != nil {
		return t.tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if stmt := t.cache.lookup(query); stmt != nil {
		return t.tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if stmt := t.cache.lookup(query); stmt != nil {
		return t.tx.StmtContext(ctx, stmt).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}
