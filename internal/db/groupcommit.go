package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
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
// own savepoint), then commits once and hands the batch to the syncer goroutine, which makes the
// write-ahead log durable (fsync) and answers every caller whose work the batch kept.
//
// The write connection runs with synchronous=NORMAL, so its COMMIT writes the batch's frames to
// the write-ahead log without waiting for the disk; the syncer's fsync of the log is the one that
// makes them durable. The writer does not wait for it: it begins the next batch and runs its
// callers while the disk flushes the previous one, and commits it once that flush is done, so
// that every commit has its flush and the batches stay as large as they were (with
// synchronous=FULL, SQLite fsyncs inside COMMIT: about a third of the writer's time under load
// went to it, with no caller running).
// A batch is visible to readers from its COMMIT, a moment before it is durable; no caller is
// answered before the fsync that covers its commit succeeded.
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
// back on its own (disk full, I/O error), fails every caller whose work the batch held; a failed
// fsync fails every caller of the batches it covered and every write after it (the pages it
// could not write may be gone from the cache: nothing later can be reported durable), until the
// process restarts.
type groupCommitter struct {
	pool      *sql.DB
	walPath   string          // the write-ahead log the syncer flushes
	conn      *sql.Conn       // the write connection, taken from pool by the writer's first batch
	prepared  *preparedWrites // the statements of the batches, prepared on conn
	requests  chan *groupMember
	stop      chan struct{}
	stopOnce  sync.Once
	done      chan struct{}
	commits   atomic.Int64
	committed atomic.Int64
	syncs     atomic.Int64
	busy      atomic.Int64 // nanoseconds the writer spent in batches, from BEGIN to its COMMIT

	// toSync carries a committed batch from the writer to the syncer; flushed says that the
	// syncer answered it. The writer commits a batch only once the previous one is flushed, and
	// meanwhile runs the callers that arrive into the open batch: one flush per commit, and the
	// members' work overlaps the disk's.
	toSync     chan []*groupMember
	flushed    chan struct{}
	flushing   bool // the writer's: a committed batch is waiting for its flush
	syncerDone chan struct{}
	wal        *os.File     // the syncer's descriptor of walPath, opened at its first sync
	flushLog   func() error // flushWAL; tests wrap it
	syncFailed atomic.Value // error: the first failed fsync; every write after it fails
}

// groupMember is one InTx call waiting for, then holding, its turn in a batch.
type groupMember struct {
	ctx      context.Context
	turn     chan groupTurn     // writer → caller: the batch transaction, or why it never starts
	finished chan memberOutcome // caller → writer: what became of its savepoint
	result   chan error         // writer → caller: the outcome of the COMMIT (kept members only)
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

func newGroupCommitter(pool *sql.DB, walPath string) *groupCommitter {
	g := &groupCommitter{
		pool:       pool,
		walPath:    walPath,
		prepared:   newPreparedWrites(),
		requests:   make(chan *groupMember),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
		toSync:     make(chan []*groupMember, 1),
		flushed:    make(chan struct{}, 1),
		syncerDone: make(chan struct{}),
	}
	g.flushLog = g.flushWAL
	go g.write()
	go g.sync()
	return g
}

// close stops the writer after the batch in progress, if any, is committed, waits for the
// syncer to answer every committed batch, closes the prepared statements and gives the write
// connection back to the pool.
func (g *groupCommitter) close() {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
	<-g.syncerDone
	g.prepared.close()
	if g.conn != nil {
		_ = g.conn.Close()
	}
	if g.wal != nil {
		_ = g.wal.Close()
	}
}

// write is the writer goroutine: one batch per loop, starting with the first caller that
// arrives and taking every caller already waiting, up to maxGroup.
func (g *groupCommitter) write() {
	defer close(g.done)
	defer close(g.toSync)
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
	if err := g.syncError(); err != nil {
		first.turn <- groupTurn{err: fmt.Errorf("begin transaction: %w", err)}
		return
	}
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
				for _, k := range kept {
					k.result <- errors.New("commit: the transaction was rolled back by the database")
				}
				return
			}
		}
		m = nil
		if n < maxGroup {
			m = g.next()
		}
	}
	if len(kept) == 0 {
		g.cleanUp(ctx)
		return
	}
	if g.flushing {
		<-g.flushed
		g.flushing = false
	}
	if _, err = sqlTx.ExecContext(ctx, `COMMIT`); err != nil {
		g.cleanUp(ctx)
		for _, k := range kept {
			k.result <- fmt.Errorf("commit: %w", err)
		}
		return
	}
	g.commits.Add(1)
	g.flushing = true
	g.toSync <- kept
}

// next returns the next caller of the batch: one already waiting, or, while the previous batch's
// flush is still running, the first to arrive before it ends (the batch could not commit before
// then anyway); nil when the batch is complete.
func (g *groupCommitter) next() *groupMember {
	select {
	case m := <-g.requests:
		return m
	default:
	}
	if !g.flushing {
		return nil
	}
	select {
	case m := <-g.requests:
		return m
	case <-g.flushed:
		g.flushing = false
	}
	select {
	case m := <-g.requests:
		return m
	default:
		return nil
	}
}

// sync is the syncer goroutine: for each committed batch it flushes the write-ahead log and
// answers the batch's callers, until the writer has stopped and every committed batch is answered.
func (g *groupCommitter) sync() {
	defer close(g.syncerDone)
	for batch := range g.toSync {
		err := g.flush()
		if err == nil {
			g.committed.Add(int64(len(batch)))
		}
		for _, k := range batch {
			k.result <- err
		}
		g.flushed <- struct{}{}
	}
}

// flush makes the write-ahead log durable: every frame the COMMITs before it wrote. The log is
// found by its path each time (two stat calls), so that a log SQLite deleted and created again
// (when every connection to the database closed) is the one flushed. A failure is kept: every
// flush after it fails too.
func (g *groupCommitter) flush() error {
	if err := g.syncError(); err != nil {
		return err
	}
	err := g.flushLog()
	if err != nil {
		err = fmt.Errorf("commit: flush the write-ahead log %s: %w", g.walPath, err)
		g.syncFailed.CompareAndSwap(nil, err)
		return g.syncError()
	}
	g.syncs.Add(1)
	return nil
}

func (g *groupCommitter) flushWAL() error {
	onDisk, err := os.Stat(g.walPath)
	if err != nil {
		return err
	}
	if g.wal != nil {
		if held, err := g.wal.Stat(); err != nil || !os.SameFile(held, onDisk) {
			_ = g.wal.Close()
			g.wal = nil
		}
	}
	if g.wal == nil {
		if g.wal, err = os.OpenFile(g.walPath, os.O_RDWR, 0); err != nil {
			return err
		}
	}
	return g.wal.Sync()
}

// syncError is the failed flush that stops every write, or nil.
func (g *groupCommitter) syncError() error {
	err, _ := g.syncFailed.Load().(error)
	return err
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
			// The syncer's fsync of the write-ahead log, not COMMIT, makes a batch durable
			// (see groupCommitter); the statement journals of the members' savepoints stay in
			// memory instead of a temporary file.
			if _, err := g.conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
				g.discardConn()
				return nil, err
			}
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
		m.finished <- batchBroken
		return fmt.Errorf("begin transaction: %w", err)
	}
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			m.finished <- undo(ctx, sqlTx)
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
		m.finished <- undo(ctx, sqlTx)
		return err
	}
	if _, err := sqlTx.ExecContext(ctx, `RELEASE `+memberSavepoint); err != nil {
		m.finished <- batchBroken
		return fmt.Errorf("commit: %w", err)
	}
	m.finished <- memberKept
	return <-m.result
}

// undo rolls a member's savepoint back. It fails only when SQLite has already rolled the whole
// transaction back, which breaks the batch.
func undo(ctx context.Context, sqlTx Querier) memberOutcome {
	if _, err := sqlTx.ExecContext(ctx, `ROLLBACK TO `+memberSavepoint); err != nil {
		return batchBroken
	}
	if _, err := sqlTx.ExecContext(ctx, `RELEASE `+memberSavepoint); err != nil {
		return batchBroken
	}
	return memberUndone
}

// GroupCommitStats counts SQLite commits, the flushes of the write-ahead log that made them
// durable and the write transactions they carried; all stay 0 on PostgreSQL, where every
// transaction commits on its own.
type GroupCommitStats struct {
	Commits      int64
	Syncs        int64
	Transactions int64 // answered as durable
	// Busy is the time the writer spent in batches, from its BEGIN to the end of its COMMIT:
	// against the wall time, how much of it SQLite's single writer was in use.
	Busy time.Duration
}

// GroupCommitStats returns the figures since Open.
func (d *DB) GroupCommitStats() GroupCommitStats {
	if d.group == nil {
		return GroupCommitStats{}
	}
	return GroupCommitStats{Commits: d.group.commits.Load(), Syncs: d.group.syncs.Load(), Transactions: d.group.committed.Load(),
		Busy: time.Duration(d.group.busy.Load())}
}
