package db

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// maxGroup is the most transactions one SQLite commit carries. Under 64 concurrent writers a
// batch rarely reaches it; it bounds how long the first transaction of a batch waits for its
// commit when writers keep arriving.
const maxGroup = 128

// maxPgGroup is the most transactions one PostgreSQL commit carries. Each member that writes runs
// in a subtransaction with an id of its own; PostgreSQL keeps up to 64 of a transaction's
// subtransaction ids in shared memory, and past them every other session's snapshot checks must
// read pg_subtrans (the "suboverflowed" state). 63 members and the savepoint left open for the
// next one stay within it.
const maxPgGroup = 63

// pgWriteConns is the most connections the PostgreSQL writer holds: the one its running batch
// uses and those whose batch's COMMIT is in flight, each held by that batch's last member until
// PostgreSQL answers it. The next batch runs while earlier ones wait for their WAL flush.
const pgWriteConns = 4

// memberSavepoint names the savepoint each transaction of a batch runs in. Areas do not use
// savepoints; one of theirs with another name would nest inside it.
const memberSavepoint = "group_member"

// errClosed answers transactions that arrive after Close.
var errClosed = errors.New("begin transaction: the database is closed")

// groupCommitter gives concurrent write transactions one commit (one fsync) between them, on
// SQLite and on PostgreSQL. A writer goroutine owns the write connection: it opens a transaction,
// runs the queued callers' functions one at a time, each inside its own savepoint (on SQLite on
// the writer's own goroutine, see runMember; on PostgreSQL in the caller's, which waits for
// PostgreSQL's answers), then commits once and answers every caller whose work it kept.
//
// The writer holds the connection as a *sql.Conn for as long as it runs and drives the
// transaction with BEGIN IMMEDIATE, COMMIT and ROLLBACK statements of its own instead of a
// *sql.Tx: statements prepared on the connection stay usable across batches and can be prepared
// in the middle of one, and a query on it starts no goroutine to watch a transaction's context
// (database/sql starts one per query of a *sql.Tx).
//
// On PostgreSQL the writer holds connections of the pool the same way, so that a row every
// request changes (a case its comments touch, a team's counter) is locked once per batch instead
// of once per request, and its lock is held through one commit's fsync for the whole batch. The
// savepoint of the next member is opened in the same message that releases the previous one, and
// BEGIN with the first one: a member costs its own statements and one round trip more, and none
// more when its first statement is known before it runs (InTxOpening), since that message
// carries it too. The batch's audit records go in its last member's message, whose COMMIT they
// precede. A member the writer tells that nobody waits to follow it sends the batch's COMMIT in
// that message, then takes the batch over and answers its members when the COMMIT is
// answered, while the writer runs the next batch on another of its connections (up to
// pgWriteConns). Statements run through pgx's per-connection statement cache, not
// preparedWrites. A PostgreSQL batch runs its members one after the other like SQLite's, and the
// batches waiting for their COMMIT wait for no lock, so two batches never wait for each other (the
// writers of other replicas can: a deadlock rolls back the member PostgreSQL picks, to its
// savepoint, and InTx runs it again).
//
// Promises: a caller's InTx returns nil only after the COMMIT that holds its work succeeded; a
// caller whose function fails (error or panic) has its savepoint rolled back and its own error
// (or panic) answered, and the batch goes on; a failed COMMIT, or a transaction the database
// rolled back on its own (SQLite's disk full or I/O error, a lost PostgreSQL connection), fails
// every caller whose work the batch held.
type groupCommitter struct {
	engine   Engine
	maxGroup int
	pool     *sql.DB
	conn     *sql.Conn // the write connection of the next batch, taken from pool by the writer's first batch
	// open counts the write connections the writer holds (conn and, on PostgreSQL, those whose
	// batch's COMMIT is in flight); returned gives back a committed batch's connection (nil
	// when it was discarded), committing counts the batches whose COMMIT is in flight.
	open       int
	returned   chan *sql.Conn
	committing sync.WaitGroup
	prepared   *preparedWrites // the statements of SQLite's batches, prepared on conn
	requests   chan *groupMember
	stop       chan struct{}
	stopOnce   sync.Once
	done       chan struct{}
	commits    atomic.Int64
	committed  atomic.Int64
	ahead      atomic.Int64 // openings run in the message of the member before theirs
	busy       atomic.Int64 // nanoseconds the writer spent in batches, from BEGIN to the answers

	// lazyConn says that SQLite's conn is set to commit without its fsync (synchronous NORMAL),
	// for a batch of lazy members only (see WithLazyCommit).
	lazyConn bool
	// answers is told when each batch begins and ends (nil when there is no answer cache).
	answers *answerCache
	// running are the members a SQLite batch in progress has kept so far: the ones to fail when a
	// member's function ends the writer's goroutine (see write). Used by the writer alone.
	running []*groupMember
}

// groupMember is one InTx call waiting for, then holding, its turn in a batch.
type groupMember struct {
	ctx context.Context
	// fn and tx are, on SQLite, the member's function and its transaction, which the writer runs
	// itself (runMember); the caller waits for result alone. nil on PostgreSQL.
	fn func(tx *Tx) error
	tx *Tx
	// now gives tx its time when its turn comes (on PostgreSQL when its opening is built).
	now func() time.Time
	// err is, on SQLite, what the member's function or its savepoint failed with; panicked the
	// value its function panicked with, and exited that it called runtime.Goexit: the caller
	// panics, or exits, in its own goroutine. Written by the writer before it sends on result.
	err      error
	panicked any
	exited   bool
	turn     chan groupTurn     // writer → caller (PostgreSQL): the batch transaction, or why it never starts
	finished chan memberOutcome // caller → writer: what became of its savepoint
	result   chan error         // writer → caller: the outcome of the COMMIT (kept members only)
	// last answers memberReady (PostgreSQL): whether a caller waits to follow the member in the
	// batch (else its last message commits it), and whether its message carries that caller's
	// opening.
	last chan pgFollow
	// opening is, on PostgreSQL, the member's first statement when it has one (InTxOpening). The
	// writer may have the member before it send it, built at the time at (then the member's
	// Tx.Now); opened is its row, set by that member before it sends memberKept when the
	// statement ran (nil when it did not), and read by the member after its turn. A member whose
	// opening ran is not refused for its context: its statement is in the batch, and only its own
	// function's failure rolls it back.
	opening Opening
	at      time.Time
	opened  *openedRow
	// handover answers memberCommitting (PostgreSQL): the batch's connection and the members
	// whose work its COMMIT carries, now the member's to answer.
	handover chan committingBatch
	// lazyBatch tells the last member of a PostgreSQL batch that every member kept asked for
	// WithLazyCommit: its COMMIT runs with synchronous_commit off. Written before the send on
	// last, read after the receive.
	lazyBatch bool
	// audit is the arguments of auditInsert for the member's audit record (nil when it has none),
	// written with the other kept members' before the batch's COMMIT: by the writer on SQLite
	// (writeAudits), by the last member's message on PostgreSQL (endPgMember). Written before the
	// member sends memberKept (on PostgreSQL memberReady), read after the receive.
	audit []any
	// broke is, when the member sends batchBroken, the error that broke the batch: when it is a
	// fault (a full disk, an I/O error), the members kept before it fail with it, so that they
	// are answered for what it is (see FaultOf). Written before the send, read after the receive.
	broke error
}

// pgFollow is the writer's answer to a PostgreSQL member's memberReady: last when no caller waits
// to follow it (its message commits the batch, and writes the audit records of kept and its
// own); else opens is the member after it when its message is to carry that member's opening
// (nil when it has none).
type pgFollow struct {
	last  bool
	kept  []*groupMember
	opens *groupMember
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
	// memberReady (PostgreSQL): fn and its BeforeCommit work are done; the member asks whether
	// it is the last of the batch (see groupMember.last) and then sends one of the others.
	memberReady
	// memberCommitting (PostgreSQL): the last member's message released its savepoint and
	// carried the batch's COMMIT, whose answer the member waits for; the writer hands it the
	// batch (handover) and runs the next batch on another connection meanwhile.
	memberCommitting
)

// committingBatch is a PostgreSQL batch whose COMMIT is in flight: its connection, and the
// members its COMMIT carries (the last one included).
type committingBatch struct {
	conn *sql.Conn
	kept []*groupMember
	// fenced: the batch began a fence of the answer cache, which the member ends when
	// PostgreSQL answers the COMMIT (the batch's work is visible to reads from then on).
	fenced bool
}

func newGroupCommitter(pool *sql.DB, engine Engine, answers *answerCache) *groupCommitter {
	g := &groupCommitter{
		answers:  answers,
		engine:   engine,
		maxGroup: maxGroup,
		pool:     pool,
		prepared: newPreparedWrites(),
		returned: make(chan *sql.Conn, pgWriteConns),
		requests: make(chan *groupMember),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if engine == Postgres {
		g.maxGroup = maxPgGroup
	}
	go g.write()
	return g
}

// close stops the writer after the batch in progress, if any, is answered and the COMMITs in
// flight are, closes the prepared statements and gives the write connections back to the pool.
func (g *groupCommitter) close() {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
	g.committing.Wait()
	g.prepared.close()
	if g.conn != nil {
		_ = g.conn.Close()
	}
	for {
		select {
		case conn := <-g.returned:
			if conn != nil {
				_ = conn.Close()
			}
		default:
			return
		}
	}
}

// write is the writer goroutine: one batch per loop, starting with the first caller that
// arrives and taking every caller already waiting, up to its maxGroup.
func (g *groupCommitter) write() {
	stopped := false
	defer func() {
		if stopped {
			close(g.done)
			return
		}
		// A SQLite member's function called runtime.Goexit on this goroutine (runMember): its
		// savepoint is rolled back and its caller answered; the batch's kept members fail, and
		// another goroutine goes on writing. (A panic of the writer's own is not recovered: it
		// ends the process.)
		go func() {
			g.breakBatch(context.Background(), g.running, nil)
			g.write()
		}()
	}()
	for {
		select {
		case first := <-g.requests:
			for first != nil {
				first = g.batch(first)
			}
		case <-g.stop:
			stopped = true
			return
		}
	}
}

// batch runs one batch starting with first. It returns a caller it took from the queue but did
// not serve (the batch broke after it was told to follow), which starts the next batch.
func (g *groupCommitter) batch(first *groupMember) (left *groupMember) {
	// The writer's own context: no caller's cancellation may interrupt the shared connection,
	// since SQLite rolls back the whole transaction when a write statement is interrupted, and
	// pgx closes a connection whose statement is interrupted.
	ctx := context.Background()
	start := time.Now()
	defer func() { g.busy.Add(int64(time.Since(start))) }()
	// Every statement of the batch, BEGIN to the answer of its COMMIT or ROLLBACK, is fenced;
	// a PostgreSQL batch whose COMMIT is in flight when the writer hands it over ends its fence
	// when PostgreSQL answers (runPgTurn).
	fenced := g.answers != nil
	if fenced {
		g.answers.writing()
		defer func() {
			if fenced {
				g.answers.written()
			}
		}()
	}
	// A SQLite batch whose first member asked for a lazy commit takes only such members: its
	// connection is set to skip the fsync before BEGIN (SQLite refuses to change it inside a
	// transaction), and the first member that waits for the disk starts the next batch.
	lazy := g.engine == SQLite && lazyCommit(first.ctx)
	sqlTx, err := g.begin(ctx, lazy)
	if err != nil {
		// Every caller already waiting gets the failure too: each would otherwise wait for a
		// BEGIN of its own, one after the other (on PostgreSQL up to pgConnectWait each while
		// the database is down).
		err = &beginError{err}
		first.refuse(err)
		for {
			select {
			case m := <-g.requests:
				m.refuse(err)
			default:
				return nil
			}
		}
	}
	g.running = nil
	var kept []*groupMember
	for n, m := 1, first; m != nil; n++ {
		var next *groupMember
		asked := false
		if err := m.ctx.Err(); err != nil && m.opened == nil {
			m.refuse(err)
		} else if m.fn != nil {
			switch g.runMember(m, sqlTx) {
			case memberKept:
				kept = append(kept, m)
				g.running = kept
			case memberUndone:
				m.result <- m.err
			case batchBroken:
				m.result <- m.err
				g.breakBatch(ctx, kept, m.broke)
				return nil
			}
		} else {
			m.turn <- groupTurn{tx: sqlTx}
			outcome := <-m.finished
			if outcome == memberReady {
				asked = true
				if n < g.maxGroup {
					select {
					case next = <-g.requests:
					default:
					}
				}
				// the member's COMMIT may skip the WAL flush when no member of the batch waits for it
				m.lazyBatch = next == nil && lazyCommit(m.ctx) && everyLazy(kept)
				follow := pgFollow{last: next == nil}
				if follow.last {
					follow.kept = kept
				}
				if next != nil && next.opening != nil && next.ctx.Err() == nil {
					next.at = next.now()
					follow.opens = next
				}
				m.last <- follow
				outcome = <-m.finished
			}
			switch outcome {
			case memberKept:
				kept = append(kept, m)
			case memberCommitting:
				g.committing.Add(1)
				m.handover <- committingBatch{conn: g.conn, kept: append(kept, m), fenced: fenced}
				fenced = false
				g.conn = nil
				return nil
			case batchBroken:
				g.breakBatch(ctx, kept, m.broke)
				if next != nil {
					next.opened = nil // it ran in the batch rolled back: the next batch runs it again
				}
				return next
			}
		}
		m = next
		if !asked && n < g.maxGroup {
			select {
			case m = <-g.requests:
			default:
			}
		}
		if m != nil && lazy && !lazyCommit(m.ctx) {
			left, m = m, nil
		}
	}
	g.running = nil
	if len(kept) == 0 {
		g.cleanUp(ctx)
		return left
	}
	commitErr := g.writeAudits(ctx, sqlTx, kept)
	if commitErr == nil {
		commitErr = g.commit(ctx, sqlTx)
	}
	if commitErr != nil {
		g.cleanUp(ctx)
	}
	g.finish(kept, commitErr)
	return left
}

// auditRowsPerStatement is the most audit records one INSERT of a batch's carries: the texts of
// 1 to auditRowsPerStatement rows are the ones prepared on the write connection.
const auditRowsPerStatement = 32

// writeAudits writes the audit records of a batch's kept members, in their order, with one
// INSERT of many rows where a member's own would cost a statement each. It runs after every
// member released its savepoint and before the COMMIT: a failure fails the batch, as its COMMIT
// would (only a full disk or an I/O error can fail it). A PostgreSQL batch writes them in its
// last member's message, before its COMMIT (endPgMember), and here only when that member was
// undone, before the writer commits the batch itself.
func (g *groupCommitter) writeAudits(ctx context.Context, sqlTx Querier, kept []*groupMember) error {
	return batchAuditInserts(g.engine, kept, func(query string, args []any) error {
		if _, err := sqlTx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("audit record: %w", err)
		}
		return nil
	})
}

// breakBatch ends a batch the database rolled back, or whose member left it unusable: the kept
// members fail, with the fault that broke it when it is one (broke), so that they are answered
// for what it is (see FaultOf), never with another member's refusal (a 400 of its own).
func (g *groupCommitter) breakBatch(ctx context.Context, kept []*groupMember, broke error) {
	g.running = nil
	g.cleanUp(ctx)
	broken := errors.New("commit: the transaction was rolled back by the database")
	if FaultOf(broke) != NoFault {
		broken = fmt.Errorf("%w: %w", broken, broke)
	}
	for _, k := range kept {
		k.result <- broken
	}
}

// refuse answers a member whose turn never comes: its context ended while it waited, or the
// batch's BEGIN failed.
func (m *groupMember) refuse(err error) {
	if m.fn != nil {
		m.err = err
		m.result <- err
		return
	}
	m.turn <- groupTurn{err: err}
}

// everyLazy says whether every one of members asked for WithLazyCommit (true for none).
func everyLazy(members []*groupMember) bool {
	for _, m := range members {
		if !lazyCommit(m.ctx) {
			return false
		}
	}
	return true
}

// finish tells each kept member its batch's outcome: nil once the COMMIT succeeded (counted), else
// a *commitError. The caller has cleaned up the connection after a failed COMMIT.
func (g *groupCommitter) finish(kept []*groupMember, commitErr error) {
	var err error
	if commitErr != nil {
		err = &commitError{commitErr}
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
// prepared statements and BEGIN is tried once more on a fresh one. On SQLite, lazy sets the
// connection's synchronous level for the batch's COMMIT first: NORMAL (no fsync) when lazy, else
// FULL; a connection whose level cannot be set is discarded (a fresh one is FULL, from the DSN).
func (g *groupCommitter) begin(ctx context.Context, lazy bool) (Querier, error) {
	for attempt := 1; ; attempt++ {
		g.takeReturned()
		fresh := g.conn == nil
		if fresh {
			conn, err := g.pool.Conn(ctx)
			if err != nil {
				return nil, err
			}
			g.conn = conn
			g.open++
		}
		if g.engine == Postgres {
			if !fresh && pgConnUnusable(g.conn) {
				g.discardConn()
				continue
			}
			// The first member's savepoint opens with the transaction, in the same message.
			if err := pgExec(ctx, g.conn, `SAVEPOINT`, `BEGIN; SAVEPOINT `+memberSavepoint); err != nil {
				if fresh || attempt == 2 {
					return nil, err
				}
				g.discardConn()
				continue
			}
			return g.conn, nil
		}
		if fresh {
			// The statement journals of the members' savepoints stay in memory: past 64 KiB
			// SQLite spills them to a temporary file, one write call per page.
			if _, err := g.conn.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
				g.discardConn()
				return nil, err
			}
			g.lazyConn = false
		}
		if lazy != g.lazyConn {
			level := `PRAGMA synchronous = FULL`
			if lazy {
				level = `PRAGMA synchronous = NORMAL`
			}
			if _, err := g.conn.ExecContext(ctx, level); err != nil {
				g.discardConn()
				if fresh || attempt == 2 {
					return nil, err
				}
				continue
			}
			g.lazyConn = lazy
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

// takeReturned makes a connection given back by a batch whose COMMIT was answered the next
// batch's, when the writer holds none, waiting for one when pgWriteConns are open (on SQLite the
// writer holds its one connection and nothing is given back).
func (g *groupCommitter) takeReturned() {
	for g.conn == nil {
		var conn *sql.Conn
		if g.open < pgWriteConns {
			select {
			case conn = <-g.returned:
			default:
				return // begin takes a fresh one
			}
		} else {
			conn = <-g.returned
		}
		if conn == nil {
			g.open-- // discarded by the member that committed on it
			continue
		}
		g.conn = conn
	}
}

// commit commits the batch's transaction. On PostgreSQL a COMMIT answered with ROLLBACK (the
// transaction was aborted and no member noticed) is an error: nothing was committed.
func (g *groupCommitter) commit(ctx context.Context, sqlTx Querier) error {
	if g.engine == Postgres {
		return pgExec(ctx, g.conn, `COMMIT`, `COMMIT`)
	}
	_, err := sqlTx.ExecContext(ctx, `COMMIT`)
	return err
}

// discardConn closes the write connection instead of giving it back to the pool, and the
// statements prepared on it.
func (g *groupCommitter) discardConn() {
	g.prepared.close()
	discard(g.conn)
	g.conn = nil
	g.open--
}

// discard closes conn instead of giving it back to the pool.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// cleanUp ends the batch's transaction without keeping anything of it: the one SQLite may still
// hold open on the write connection after a failed COMMIT (a deferred constraint keeps it open),
// or one whose members all failed, so that the next batch can begin. When no transaction is open
// (SQLite rolled it back itself) the ROLLBACK fails harmlessly. On PostgreSQL a connection whose
// ROLLBACK fails (it was lost) is discarded: the next batch begins on a fresh one.
func (g *groupCommitter) cleanUp(ctx context.Context) {
	if g.engine == Postgres {
		if err := pgExec(ctx, g.conn, `ROLLBACK`, `ROLLBACK`); err != nil {
			g.discardConn()
		}
		return
	}
	_, _ = g.conn.ExecContext(ctx, `ROLLBACK`)
}

// inTx is one attempt of InTx: it queues the caller, runs fn in its turn and waits for the commit.
// ctx cancels the wait for a turn; once fn has started, the transaction runs to its end and its
// answer is the commit's.
func (g *groupCommitter) inTx(ctx context.Context, d *DB, opening Opening, fn func(tx *Tx) error) error {
	m := &groupMember{ctx: ctx, result: make(chan error, 1), now: d.Now}
	if g.engine == SQLite {
		m.fn = fn
		m.tx = &Tx{Engine: d.Engine, newID: d.newID, detached: true}
		m.tx.startAudit(ctx)
	} else {
		m.opening = opening
		m.turn = make(chan groupTurn, 1)
		m.finished = make(chan memberOutcome, 1)
		m.last = make(chan pgFollow, 1)
		m.handover = make(chan committingBatch, 1)
	}
	select {
	case g.requests <- m:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.stop:
		return errClosed
	}
	if m.fn != nil {
		err := <-m.result
		switch {
		case m.panicked != nil:
			panic(m.panicked)
		case m.exited:
			runtime.Goexit()
		}
		return err
	}
	turn := <-m.turn
	if turn.err != nil {
		return turn.err
	}
	now := m.at // the time its opening was built with, when the member before it sent it
	if now.IsZero() {
		now = d.Now()
	}
	tx := &Tx{q: turn.tx, Now: now, Engine: d.Engine, newID: d.newID, detached: true, opened: m.opened}
	tx.startAudit(ctx)
	return g.runPgTurn(m, tx, fn)
}

// runMember runs, on the writer's goroutine, a SQLite member's function and its BeforeCommit
// work inside the member's savepoint, and says what remains of it: kept (its audit record's
// arguments in m.audit, for writeAudits), undone (m.err says why) or the batch broken. Running
// it here costs no hand-off between goroutines per member: the batch's statements run one after
// the other on one goroutine. A panic in the function is recovered and rolls the savepoint back;
// the caller panics with the same value in its own goroutine (m.panicked). A function that calls
// runtime.Goexit (a test's t.FailNow) ends the writer's goroutine: write starts another, which
// rolls the batch back (see write).
func (g *groupCommitter) runMember(m *groupMember, sqlTx Querier) (outcome memberOutcome) {
	ctx := context.Background()
	if _, err := sqlTx.ExecContext(ctx, `SAVEPOINT `+memberSavepoint); err != nil {
		m.broke = err
		m.err = fmt.Errorf("begin transaction: %w", err)
		return batchBroken
	}
	tx := m.tx
	tx.q, tx.Now = sqlTx, m.now()
	returned := false
	defer func() {
		if returned {
			return
		}
		m.panicked = recover()
		if m.panicked == nil {
			m.exited = true
			m.err = errors.New("a transaction of the batch called runtime.Goexit")
		} else {
			m.err = errors.New("a transaction of the batch panicked")
		}
		outcome = m.undo(ctx, sqlTx, m.err)
		if m.exited {
			// The goroutine ends after this: the caller is answered here, the batch by write.
			m.result <- m.err
		}
	}()
	err := m.fn(tx)
	if err == nil {
		err = tx.finish(ctx, true)
	}
	if err == nil {
		m.audit, err = tx.auditArgs() // written with the batch's others (writeAudits)
	}
	returned = true
	if err != nil {
		m.err = err
		return m.undo(ctx, sqlTx, err)
	}
	if _, err := sqlTx.ExecContext(ctx, `RELEASE `+memberSavepoint); err != nil {
		m.broke = err
		m.err = fmt.Errorf("commit: %w", err)
		return batchBroken
	}
	return memberKept
}

// runPgTurn runs a PostgreSQL member in its caller's goroutine (runMember is SQLite's), inside the
// member's savepoint, already open when its turn comes (opened with BEGIN or by the previous
// member). fn and its BeforeCommit work run in it;
// then one message writes the audit record, releases the savepoint and opens the next member's.
// PostgreSQL refuses every statement of a transaction after one failed until the savepoint is
// rolled back to, so a member that went on after a failed statement fails there, and is undone.
// ROLLBACK TO keeps the savepoint open for the next member. The last member of a batch sends its
// COMMIT, takes the batch over from the writer once the rest of its message is answered, and
// answers the batch's members when PostgreSQL answers the COMMIT.
func (g *groupCommitter) runPgTurn(m *groupMember, tx *Tx, fn func(tx *Tx) error) error {
	ctx := context.Background()
	returned := false
	defer func() {
		if !returned { // fn panicked or called runtime.Goexit
			m.finished <- g.undoPg(ctx, m, errors.New("a transaction of the batch panicked"))
		}
	}()
	err := fn(tx)
	if err == nil {
		err = tx.finish(ctx, false)
	}
	if err == nil {
		m.audit, err = tx.auditArgs() // written by the batch's last member (endPgMember)
	}
	returned = true
	var committed *committingBatch
	var commitErr, broken error
	if err == nil {
		m.finished <- memberReady
		follow := <-m.last
		committed, commitErr, broken, err = g.endPgMember(ctx, m, tx, follow)
	}
	if broken != nil {
		m.broke = broken
		m.finished <- batchBroken
		return fmt.Errorf("commit: the transaction was rolled back: %w", broken)
	}
	if err != nil {
		m.finished <- g.undoPg(ctx, m, err)
		return err
	}
	if committed == nil {
		m.finished <- memberKept
		return <-m.result
	}
	conn := committed.conn
	if commitErr != nil && pgExec(ctx, conn, `ROLLBACK`, `ROLLBACK`) != nil {
		discard(conn)
		conn = nil
	}
	if committed.fenced {
		g.answers.written()
	}
	g.finish(committed.kept, commitErr)
	g.returned <- conn
	g.committing.Done()
	return <-m.result
}

// endPgMember sends, in one round trip (a pgx batch), the statements the member queued with
// ExecAtEnd, the release of its savepoint and then either the savepoint of the next member, with
// that member's opening when follow.opens says so, or, when it is the last of the batch, the
// audit records of the batch's kept members and its own, then the batch's COMMIT: a batch of one
// costs no round trip more than a transaction of its own, and a member with an opening none of
// its own. When the message holds nothing but the two savepoint statements they go as one
// simple query. PostgreSQL runs nothing after a failed statement. err is the failure of the
// member's own part (the savepoint is then rolled back to), or of the audit records, which
// breaks the batch (its savepoint is released: undoPg fails). broken is a failure after its
// savepoint was released, reading the next member's opening: the batch cannot tell what it
// holds, and is rolled back.
// When the message carried the COMMIT and everything before it succeeded, the member has taken
// the batch over from the writer (committed) and commitErr is the COMMIT's failure.
func (g *groupCommitter) endPgMember(ctx context.Context, m *groupMember, tx *Tx, follow pgFollow) (committed *committingBatch, commitErr, broken, err error) {
	const release = `RELEASE ` + memberSavepoint
	const open = `SAVEPOINT ` + memberSavepoint
	var opening string
	var openingArgs []any
	if follow.opens != nil {
		opening, openingArgs = buildOpening(follow.opens)
	}
	if !follow.last && len(tx.atEnd) == 0 && opening == "" {
		if err := pgExec(ctx, g.conn, `SAVEPOINT`, release+`; `+open); err != nil {
			return nil, nil, nil, fmt.Errorf("commit: %w", err)
		}
		return nil, nil, nil, nil
	}
	whats := make([]string, 0, len(tx.atEnd)+3)
	batch := &pgx.Batch{}
	for _, q := range tx.atEnd {
		batch.Queue(q.query, q.args...)
		whats = append(whats, q.what)
	}
	batch.Queue(release)
	whats = append(whats, "commit")
	if follow.last {
		_ = batchAuditInserts(Postgres, append(slices.Clip(follow.kept), m), func(query string, args []any) error {
			batch.Queue(query, args...)
			whats = append(whats, "audit record")
			return nil
		})
	}
	if follow.last && m.lazyBatch {
		batch.Queue(`SET LOCAL synchronous_commit = off`)
		whats = append(whats, "commit")
	}
	if follow.last {
		batch.Queue(`COMMIT`)
	} else {
		batch.Queue(open)
		if opening != "" {
			batch.Queue(opening, openingArgs...)
		}
	}
	err = g.conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", driverConn)
		}
		results := pc.Conn().SendBatch(ctx, batch)
		defer results.Close()
		for _, what := range whats {
			if _, err := results.Exec(); err != nil {
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == "25P02" { // fn went on after a failed statement
					return fmt.Errorf("commit: the transaction was rolled back by the database: %w", err)
				}
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		if !follow.last {
			if _, err := results.Exec(); err != nil { // the next member's SAVEPOINT
				return fmt.Errorf("commit: %w", err)
			}
			if opening == "" {
				return results.Close()
			}
			// The member's work is released into the batch: from here on a failure that is not
			// the opening's own breaks the batch.
			row, err := readOpened(pc.Conn(), results)
			if err == nil {
				err = results.Close()
			}
			var pgErr *pgconn.PgError
			if err != nil && !errors.As(err, &pgErr) {
				broken = fmt.Errorf("the next transaction's first statement: %w", err)
				return nil
			}
			follow.opens.opened = row
			g.ahead.Add(1)
			return nil
		}
		// Everything but the COMMIT is answered: the batch is the member's to finish, and the
		// writer runs the next one on another connection while PostgreSQL flushes this one.
		m.finished <- memberCommitting
		handed := <-m.handover
		committed = &handed
		tag, err := results.Exec()
		if err == nil && tag.String() != "COMMIT" {
			err = errors.New("the transaction was rolled back by the database")
		}
		if err == nil {
			err = results.Close()
		}
		commitErr = err
		return nil
	})
	if committed != nil && err != nil { // Raw itself failed after the handover
		commitErr, err = err, nil
	}
	return committed, commitErr, broken, err
}

// buildOpening builds the opening of next, a member whose turn comes after the calling member's,
// at the time the writer gave it. An opening that panics is not sent: the member's own goroutine
// builds it again, and panics there (InTxOpening).
func buildOpening(next *groupMember) (query string, args []any) {
	defer func() {
		if recover() != nil {
			query, args = "", nil
		}
	}()
	return next.opening(next.at)
}

// openedRow is a member's opening answered in the message of the member before it: the first of
// its rows, kept as PostgreSQL sent it, or the statement's failure. Scan decodes it with the
// connection's types, as the member's own query would, when the member's turn comes: the member
// is then the only one using the connection.
type openedRow struct {
	types  *pgtype.Map
	fields []pgconn.FieldDescription
	values [][]byte // nil for NULL
	found  bool
	err    error
}

// readOpened reads the opening's answer from results. Only a failure to read it is an error: a
// failed statement is the row's (PostgreSQL's error, which Scan answers).
func readOpened(conn *pgx.Conn, results pgx.BatchResults) (*openedRow, error) {
	row := &openedRow{types: conn.TypeMap()}
	rows, _ := results.Query()
	if rows.Next() {
		row.found = true
		row.fields = slices.Clone(rows.FieldDescriptions())
		for _, v := range rows.RawValues() {
			row.values = append(row.values, bytes.Clone(v))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) {
			return nil, err
		}
		row.found, row.err = false, err
	}
	return row, nil
}

// Scan copies the row's columns into dest, as *sql.Row's Scan does.
func (r *openedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if !r.found {
		return sql.ErrNoRows
	}
	if len(dest) != len(r.values) {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), len(r.values))
	}
	for i, d := range dest {
		if err := r.types.Scan(r.fields[i].DataTypeOID, r.fields[i].Format, r.values[i], d); err != nil {
			return fmt.Errorf("scan column %s: %w", r.fields[i].Name, err)
		}
	}
	return nil
}

// undoPg rolls a member's PostgreSQL savepoint back after cause, keeping the savepoint open for
// the next member. It fails only when the connection is lost, which breaks the batch.
func (g *groupCommitter) undoPg(ctx context.Context, m *groupMember, cause error) memberOutcome {
	if err := pgExec(ctx, g.conn, `ROLLBACK`, `ROLLBACK TO `+memberSavepoint); err != nil {
		m.broke = errors.Join(cause, err)
		return batchBroken
	}
	return memberUndone
}

// pgExec runs query on the PostgreSQL connection conn in one message (several statements when
// it has no arguments or asks for pgx.QueryExecModeSimpleProtocol) and fails unless PostgreSQL
// answers the last of them with the command tag want: a COMMIT of an aborted transaction is
// answered ROLLBACK.
func pgExec(ctx context.Context, conn *sql.Conn, want, query string, args ...any) error {
	return conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", driverConn)
		}
		tag, err := pc.Conn().Exec(ctx, query, args...)
		if err == nil && tag.String() != want {
			err = errors.New("the transaction was rolled back by the database")
		}
		return err
	})
}

// pgConnUnusable says whether the PostgreSQL connection the writer holds cannot carry the next
// batch: it is still in a transaction (a ROLLBACK that never ran), or PostgreSQL closed it (see
// peerClosed). No round trip.
func pgConnUnusable(conn *sql.Conn) bool {
	unusable := false
	_ = conn.Raw(func(driverConn any) error {
		pc, ok := driverConn.(*stdlib.Conn)
		unusable = !ok || pc.Conn().PgConn().TxStatus() != 'I' || discardClosedConn(context.Background(), pc.Conn()) != nil
		return nil
	})
	return unusable
}

// beginError is a failure to begin a batch's transaction, after begin tried a fresh connection
// when the one it held failed (on PostgreSQL waiting up to pgConnectWait for the database): it is
// not run again (see inTxRetried).
type beginError struct{ err error }

func (e *beginError) Error() string { return "begin transaction: " + e.err.Error() }
func (e *beginError) Unwrap() error { return e.err }

// commitError is a failure of a batch's COMMIT itself, after which its transaction may or may
// not have been committed: it is never run again (see inTxRetried).
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

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

// GroupCommitStats counts the commits of batches and the write transactions they carried.
type GroupCommitStats struct {
	Commits      int64
	Transactions int64
	// Busy is the time the writer spent in batches, from its BEGIN to the answers of its COMMIT:
	// against the wall time, how much of it the single writer was in use.
	Busy time.Duration
	// OpeningsAhead counts the openings (InTxOpening) that ran in the message of the member
	// before theirs, on PostgreSQL, instead of in a round trip of their own.
	OpeningsAhead int64
}

// GroupCommitStats returns the figures since Open.
func (d *DB) GroupCommitStats() GroupCommitStats {
	if d.group == nil {
		return GroupCommitStats{}
	}
	return GroupCommitStats{Commits: d.group.commits.Load(), Transactions: d.group.committed.Load(),
		Busy: time.Duration(d.group.busy.Load()), OpeningsAhead: d.group.ahead.Load()}
}
