package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgCommitters is how many PostgreSQL batches run at once, each on a connection of the pool; 0
// turns the group commit off: every InTx is a transaction of its own (DB.inTxAlone). Off, since on
// this 2-core machine it cost sets and comments more than it gave policies; with several
// committers batches wait for each other's case locks (docs/decisions.md, "PostgreSQL group
// commit").
const pgCommitters = 0

// pgMaxGroup is the most transactions one PostgreSQL batch carries. Each member that writes gets
// a subtransaction id, and PostgreSQL caches 64 of them per transaction: past that every snapshot
// of every session consults pg_subtrans, which slows the whole server.
const pgMaxGroup = 32

// pgBatchLockTimeout bounds how long a member of a batch waits for a lock. A batch holds the
// locks of all its members until its COMMIT, so two batches (of two replicas, or of two
// committers) can wait for each other (a deadlock
// PostgreSQL would only detect after deadlock_timeout, 1 s by default); the member that times out
// leaves the batch and runs alone, where it waits as long as it must.
const pgBatchLockTimeout = "50ms"

// pgGroupCommitter gives concurrent PostgreSQL write transactions one commit between several of
// them, the design of the SQLite group commit (groupCommitter): pgCommitters committer
// goroutines, each with a connection of the pool for the time of a batch, open a transaction and
// hand it to the queued callers one at a time; each caller runs its function in its own goroutine inside the savepoint
// group_member; then the committer commits once and answers every caller whose work it kept.
//
// Promises:
//   - a caller's InTx returns nil only after the COMMIT that holds its work succeeded;
//   - a caller whose function fails has its savepoint rolled back and gets its own error; the
//     batch goes on (a panic is rolled back the same way and goes on in the caller's goroutine);
//   - a caller whose function fails with a deadlock (40P01), a serialization failure (40001) or a
//     lock timeout (55P03) inside a batch, and every caller of a batch that fails as a whole before
//     its COMMIT or whose COMMIT PostgreSQL refuses, runs its function again alone, in a
//     transaction of its own (see DB.inTxAlone): nothing of the batch was committed;
//   - a COMMIT whose answer is lost (the connection broke) fails every caller of the batch with a
//     commit error, since its outcome is unknown; none is reported durable;
//   - locks taken by a member (Serialize, SELECT … FOR UPDATE) are held until the batch commits,
//     and the later members of the batch see the earlier members' work, as if committed.
type pgGroupCommitter struct {
	pool       *sql.DB
	committers int
	requests   chan *pgMember
	stop       chan struct{}
	stopOnce   sync.Once
	writers    sync.WaitGroup
	// commits and committed count the batches committed and the transactions they carried.
	commits   atomic.Int64
	committed atomic.Int64
}

// pgMember is one InTx call waiting for, then holding, its turn in a batch.
type pgMember struct {
	ctx      context.Context
	turn     chan pgTurn   // committer → caller: the batch's connection, or why the caller gets none
	finished chan error    // caller → committer: fn's error; nil when its work is to be kept
	outcome  chan pgAnswer // committer → caller: what became of its work
}

type pgTurn struct {
	conn  *sql.Conn
	err   error // the caller's answer, fn never ran
	alone bool  // no batch for this caller: run alone
}

type pgAnswer struct {
	err   error
	alone bool // nothing of the caller's work remains: run it again alone
}

func newPgGroupCommitter(pool *sql.DB, committers int) *pgGroupCommitter {
	g := &pgGroupCommitter{
		pool:       pool,
		committers: committers,
		requests:   make(chan *pgMember),
		stop:       make(chan struct{}),
	}
	for range committers {
		g.writers.Add(1)
		go g.write()
	}
	return g
}

// close stops the committers after the batches in progress are answered.
func (g *pgGroupCommitter) close() {
	g.stopOnce.Do(func() { close(g.stop) })
	g.writers.Wait()
}

// write is one committer goroutine: one batch per loop.
func (g *pgGroupCommitter) write() {
	defer g.writers.Done()
	for {
		select {
		case first := <-g.requests:
			g.batch(first)
		case <-g.stop:
			return
		}
	}
}

// batch runs first and the callers that queue meanwhile, up to pgMaxGroup, in one transaction.
// The round trips are: BEGIN with the first savepoint; each member's statements; between two
// members whose work is kept, RELEASE and SAVEPOINT in one message (after a member that failed,
// ROLLBACK TO leaves the savepoint in place for the next); COMMIT.
func (g *pgGroupCommitter) batch(first *pgMember) {
	// The committer's own context: a caller's cancellation must not break the shared connection.
	ctx := context.Background()
	conn, err := g.pool.Conn(ctx)
	if err != nil {
		first.turn <- pgTurn{alone: true}
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN; SET LOCAL lock_timeout = '`+pgBatchLockTimeout+`'; SAVEPOINT `+memberSavepoint); err != nil {
		_, _ = conn.ExecContext(ctx, `ROLLBACK`)
		first.turn <- pgTurn{alone: true}
		return
	}
	var kept []*pgMember
	// broken ends the batch before its COMMIT: nothing of it was committed, so every member kept
	// so far, and m, run again alone.
	broken := func(m *pgMember) {
		_, _ = conn.ExecContext(ctx, `ROLLBACK`)
		for _, k := range kept {
			k.outcome <- pgAnswer{alone: true}
		}
		if m != nil {
			m.outcome <- pgAnswer{alone: true}
		}
	}
	pending := false // the savepoint holds kept work: RELEASE and SAVEPOINT before the next member
	for n, m := 1, first; m != nil; n++ {
		if err := m.ctx.Err(); err != nil {
			m.turn <- pgTurn{err: err}
		} else {
			if pending {
				if _, err := conn.ExecContext(ctx, `RELEASE `+memberSavepoint+`; SAVEPOINT `+memberSavepoint); err != nil {
					m.turn <- pgTurn{alone: true}
					broken(nil)
					return
				}
				pending = false
			}
			m.turn <- pgTurn{conn: conn}
			if ferr := <-m.finished; ferr == nil {
				kept = append(kept, m)
				pending = true
			} else {
				if _, err := conn.ExecContext(ctx, `ROLLBACK TO SAVEPOINT `+memberSavepoint); err != nil {
					broken(m)
					return
				}
				m.outcome <- pgAnswer{err: ferr, alone: retryable(ferr)}
			}
		}
		m = nil
		if n < pgMaxGroup {
			select {
			case m = <-g.requests:
			default:
			}
		}
	}
	if len(kept) == 0 {
		_, _ = conn.ExecContext(ctx, `ROLLBACK`)
		return
	}
	_, err = conn.ExecContext(ctx, `COMMIT`)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		g.commits.Add(1)
		g.committed.Add(int64(len(kept)))
	case errors.As(err, &pgErr):
		// PostgreSQL answered: the transaction was rolled back (a deferred constraint, a
		// serialization failure). Each member runs again alone and meets its own fate.
		for _, k := range kept {
			k.outcome <- pgAnswer{alone: true}
		}
		return
	default:
		err = fmt.Errorf("commit: %w", err)
	}
	for _, k := range kept {
		k.outcome <- pgAnswer{err: err}
	}
}

// retryable says whether err, a member's own error inside a batch, comes from the batch rather
// than from the member: a deadlock or serialization failure with another transaction holding
// locks for a batch, or the batch's lock timeout.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "40P01", "40001", "55P03":
		return true
	}
	return false
}

// inTx is InTx on PostgreSQL: it queues the caller, runs fn in its turn and waits for the commit;
// when the batch cannot carry it, it runs fn again alone. ctx cancels the wait for a turn; once fn
// has started in a batch, its statements are not interrupted by ctx (an interrupted statement
// would break the batch's connection) and InTx answers the commit's outcome.
func (g *pgGroupCommitter) inTx(ctx context.Context, d *DB, fn func(tx *Tx) error) error {
	m := &pgMember{
		ctx:      ctx,
		turn:     make(chan pgTurn, 1),
		finished: make(chan error, 1),
		outcome:  make(chan pgAnswer, 1),
	}
	select {
	case g.requests <- m:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.stop:
		return errClosed
	}
	turn := <-m.turn
	switch {
	case turn.err != nil:
		return turn.err
	case turn.alone:
		return d.inTxAlone(ctx, fn)
	}
	tx := &Tx{q: turn.conn, Now: d.Now(), Engine: d.Engine, newID: d.newID, detached: true}
	answer := runPgTurn(m, tx, fn)
	if answer.alone {
		return d.inTxAlone(ctx, fn)
	}
	return answer.err
}

// runPgTurn runs fn and its BeforeCommit work, tells the committer whether to keep it, and waits
// for the answer. A panic in fn is reported to the committer, which rolls the savepoint back, and
// goes on in the caller's goroutine.
func runPgTurn(m *pgMember, tx *Tx, fn func(tx *Tx) error) pgAnswer {
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			m.finished <- errors.New("the transaction's function panicked")
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
	returned = true
	m.finished <- err
	return <-m.outcome
}

// pgAloneAttempts is how many times a transaction running alone on PostgreSQL is tried when it
// fails with a deadlock or a serialization failure.
const pgAloneAttempts = 3

// inTxAlone runs fn in a transaction of its own on PostgreSQL, again (up to pgAloneAttempts in
// all) when PostgreSQL rolls it back for a deadlock or a serialization failure.
func (d *DB) inTxAlone(ctx context.Context, fn func(tx *Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := d.inOwnTx(ctx, fn)
		var pgErr *pgconn.PgError
		if err == nil || attempt == pgAloneAttempts || !errors.As(err, &pgErr) ||
			(pgErr.Code != "40P01" && pgErr.Code != "40001") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}
