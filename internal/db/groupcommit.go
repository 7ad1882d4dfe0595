package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// maxGroup is the most transactions one SQLite commit carries. Under 64 concurrent writers a
// batch rarely reaches it; it bounds how long the first transaction of a batch waits for its
// commit when writers keep arriving.
const maxGroup = 128

// memberSavepoint names the savepoint each transaction of a batch runs in. Areas do not use
// savepoints; one of theirs with another name would nest inside it.
const memberSavepoint = "group_member"

// errClosed answers transactions that arrive after Close.
var errClosed = errors.New("begin transaction: the database is closed")

// groupCommitter gives concurrent SQLite write transactions one commit (one fsync) between
// them. A writer goroutine owns the single write connection: it opens a transaction, hands it
// to the queued callers one at a time (each runs its function in its own goroutine, inside its
// own savepoint), then commits once and answers every caller whose work it kept.
//
// The writer holds the connection as a *sql.Conn for as long as it runs and drives the
// transaction with BEGIN IMMEDIATE, COMMIT and ROLLBACK statements of its own instead of a
// *sql.Tx: statements prepared on the connection stay usable across batches and can be prepared
// in the middle of one, and a query on it starts no goroutine to watch a transaction's context
// (database/sql starts one per query of a *sql.Tx).
//
// Promises: a caller's InTx returns nil only after the COMMIT that holds its work succeeded; a
// caller whose function fails (error or panic) has its savepoint rolled back and its own error
// (or panic) answered, and the batch goes on; a failed COMMIT, or a transaction SQLite rolled
// back on its own (disk full, I/O error), fails every caller whose work the batch held.
type groupCommitter struct {
	pool      *sql.DB
	conn      *sql.Conn       // the write connection, taken from pool by the writer's first batch
	prepared  *preparedWrites // the statements of the batches, prepared on conn
	requests  chan *groupMember
	stop      chan struct{}
	stopOnce  sync.Once
	done      chan struct{}
	commits   atomic.Int64
	committed atomic.Int64
	busy      atomic.Int64 // nanoseconds the writer spent in batches, from BEGIN to the answers
}

// groupMember is one InTx call waiting for, then holding, its turn in a batch.
type groupMember struct {
	ctx      context.Context
	turn     chan groupTurn     // writer → caller: the batch transaction, or why it never starts
	finished chan memberOutcome // caller → writer: what became of its savepoint
	result   chan error         // writer → caller: the outcome of the COMMIT (kept members only)
	// broke is, when the member sends batchBroken, the error that broke the batch: when it is a
	// fault (a full disk, an I/O error), the members kept before it fail with it, so that they
	// are answered for what it is (see FaultOf). Written before the send, read after the receive.
	broke error
}

type groupTurn struct {
	tx  Querier
	err error
}

// memberOutcome is what a caller's turn left in the batch transaction.
type memberOutcome int

const (
	memberKept   memberOutcome = iota // its savepoint was released: its work rides on the commit
	memberUndone                      // its savepoint was rolled back: nothing of it remains
	batchBroken                       // the batch transaction is gone (SQLite rolled it back)
)

func newGroupCommitter(pool *sql.DB) *groupCommitter {
	g := &groupCommitter{
		pool:     pool,
		prepared: newPreparedWrites(),
		requests: make(chan *groupMember),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go g.write()
	return g
}

// close stops the writer after the batch in progress, if any, is answered, closes the prepared
// statements and gives the write connection back to the pool.
func (g *groupCommitter) close() {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
	g.prepared.close()
	if g.conn != nil {
		_ = g.conn.Close()
	}
}

// write is the writer goroutine: one batch per loop, starting with the first caller that
// arrives and taking every caller already waiting, up to maxGroup.
func (g *groupCommitter) write() {
	defer close(g.done)
	for {
		select {
		case first := <-g.requests:
			g.batch(first)
		case <-g.stop:
			return
		}
	}
}

func (g *groupCommitter) batch(first *groupMember) {
	// The writer's own context: no caller's cancellation may interrupt the shared connection,
	// since SQLite rolls back the whole transaction when a write statement is interrupted.
	ctx := context.Background()
	start := time.Now()
	defer func() { g.busy.Add(int64(time.Since(start))) }()
	sqlTx, err := g.begin(ctx)
	if err != nil {
		first.turn <- groupTurn{err: fmt.Errorf("begin transaction: %w", err)}
		return
	}
	var kept []*groupMember
	for n, m := 1, first; m != nil; n++ {
		if err := m.ctx.Err(); err != nil {
			m.turn <- groupTurn{err: err}
		} else {
			m.turn <- groupTurn{tx: sqlTx}
			switch <-m.finished {
			case memberKept:
				kept = append(kept, m)
			case batchBroken:
				g.cleanUp(ctx)
				broken := errors.New("commit: the transaction was rolled back by the database")
				if FaultOf(m.broke) != NoFault { // never another member's refusal (a 400 of its own)
					broken = fmt.Errorf("%w: %w", broken, m.broke)
				}
				for _, k := range kept {
					k.result <- broken
				}
				return
			}
		}
		m = nil
		if n < maxGroup {
			select {
			case m = <-g.requests:
			default:
			}
		}
	}
	if len(kept) == 0 {
		g.cleanUp(ctx)
		return
	}
	_, err = sqlTx.ExecContext(ctx, `COMMIT`)
	if err != nil {
		g.cleanUp(ctx)
		err = fmt.Errorf("commit: %w", err)
	} else {
		g.commits.Add(1)
		g.committed.Add(int64(len(kept)))
	}
	for _, k := range kept {
		k.result <- err
	}
}

// begin opens the batch's transaction on the write connection, taking the connection from the
// pool the first time. When BEGIN fails on a connection the writer already held (a transaction
// left open by a failed ROLLBACK, a broken connection), that connection is discarded with its
// prepared statements and BEGIN is tried once more on a fresh one.
func (g *groupCommitter) begin(ctx context.Context) (Querier, error) {
	for attempt := 1; ; attempt++ {
		fresh := g.conn == nil
		if fresh {
			conn, err := g.pool.Conn(ctx)
			if err != nil {
				return nil, err
			}
			g.conn = conn
		}
		if fresh {
			// The statement journals of the members' savepoints stay in memory: past 64 KiB
			// SQLite spills them to a temporary file, one write call per page.
			if _, err := g.conn.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
				g.discardConn()
				return nil, err
			}
		}
		sqlTx := g.prepared.on(g.conn)
		_, err := sqlTx.ExecContext(ctx, `BEGIN IMMEDIATE`)
		if err == nil {
			return sqlTx, nil
		}
		if fresh || attempt == 2 {
			return nil, err
		}
		g.discardConn()
	}
}

// discardConn closes the write connection instead of giving it back to the pool, and the
// statements prepared on it.
func (g *groupCommitter) discardConn() {
	g.prepared.close()
	_ = g.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = g.conn.Close()
	g.conn = nil
}

// cleanUp ends the batch's transaction without keeping anything of it: the one SQLite may still
// hold open on the write connection after a failed COMMIT (a deferred constraint keeps it open),
// or one whose members all failed, so that the next batch can begin. When no transaction is open
// (SQLite rolled it back itself) the ROLLBACK fails harmlessly.
func (g *groupCommitter) cleanUp(ctx context.Context) {
	_, _ = g.conn.ExecContext(ctx, `ROLLBACK`)
}

// inTx is InTx on SQLite: it queues the caller, runs fn in its turn and waits for the commit.
// ctx cancels the wait for a turn; once fn has started, the transaction runs to its end and its
// answer is the commit's.
func (g *groupCommitter) inTx(ctx context.Context, d *DB, fn func(tx *Tx) error) error {
	m := &groupMember{
		ctx:      ctx,
		turn:     make(chan groupTurn, 1),
		finished: make(chan memberOutcome, 1),
		result:   make(chan error, 1),
	}
	select {
	case g.requests <- m:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.stop:
		return errClosed
	}
	turn := <-m.turn
	if turn.err != nil {
		return turn.err
	}
	tx := &Tx{q: turn.tx, Now: d.Now(), Engine: d.Engine, newID: d.newID, detached: true}
	tx.startAudit(ctx)
	return g.runTurn(m, turn.tx, tx, fn)
}

// runTurn runs fn and its BeforeCommit work inside the member's savepoint, tells the writer what
// remains of it, and, when its work was kept, waits for the commit. A panic in fn rolls back the
// savepoint and goes on in the caller's goroutine.
func (g *groupCommitter) runTurn(m *groupMember, sqlTx Querier, tx *Tx, fn func(tx *Tx) error) error {
	ctx := context.Background()
	if _, err := sqlTx.ExecContext(ctx, `SAVEPOINT `+memberSavepoint); err != nil {
		m.broke = err
		m.finished <- batchBroken
		return fmt.Errorf("begin transaction: %w", err)
	}
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			m.finished <- m.undo(ctx, sqlTx, errors.New("a transaction of the batch panicked"))
		}
	}()
	err := fn(tx)
	if err == nil {
		for _, before := range tx.beforeCommit {
			if err = before(); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = tx.writeAudit(ctx)
	}
	returned = true
	if err != nil {
		m.finished <- m.undo(ctx, sqlTx, err)
		return err
	}
	if _, err := sqlTx.ExecContext(ctx, `RELEASE `+memberSavepoint); err != nil {
		m.broke = err
		m.finished <- batchBroken
		return fmt.Errorf("commit: %w", err)
	}
	m.finished <- memberKept
	return <-m.result
}

// undo rolls a member's savepoint back after cause (what made the member fail). It fails only
// when SQLite has already rolled the whole transaction back (as it may on a full disk or an I/O
// error, cause), which breaks the batch: cause is then what broke it.
func (m *groupMember) undo(ctx context.Context, sqlTx Querier, cause error) memberOutcome {
	if _, err := sqlTx.ExecContext(ctx, `ROLLBACK TO `+memberSavepoint); err != nil {
		m.broke = cause
		return batchBroken
	}
	if _, err := sqlTx.ExecContext(ctx, `RELEASE `+memberSavepoint); err != nil {
		m.broke = cause
		return batchBroken
	}
	return memberUndone
}

// GroupCommitStats counts SQLite commits and the write transactions they carried; both stay 0 on
// PostgreSQL, where every transaction commits on its own.
type GroupCommitStats struct {
	Commits      int64
	Transactions int64
	// Busy is the time the writer spent in batches, from its BEGIN to the answers of its COMMIT:
	// against the wall time, how much of it SQLite's single writer was in use.
	Busy time.Duration
}

// GroupCommitStats returns the figures since Open.
func (d *DB) GroupCommitStats() GroupCommitStats {
	if d.group == nil {
		return GroupCommitStats{}
	}
	return GroupCommitStats{Commits: d.group.commits.Load(), Transactions: d.group.committed.Load(),
		Busy: time.Duration(d.group.busy.Load())}
}
