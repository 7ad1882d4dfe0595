// Package db opens the database that holds all of mgmtapi's state: SQLite in a data directory by
// default, PostgreSQL when a URL is given. Both engines run the same SQL text ($n placeholders,
// RETURNING, ON CONFLICT); only the migrations differ per engine.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Engine names the database engine behind a DB.
type Engine string

const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Options says which database to open.
type Options struct {
	// URL selects PostgreSQL when it starts with postgres:// or postgresql://.
	URL string
	// DataDir holds the SQLite file when URL is empty. It is created if missing.
	DataDir string
	// Now is the clock used for transaction timestamps; time.Now when nil.
	Now func() time.Time
	// NewID generates resource identifiers; random UUIDs when nil.
	NewID func() string
	// SharedFile lets other processes open the SQLite database while this one has it open.
	// Without it the connections use SQLite's unix-excl VFS: the first takes a lock on the whole
	// file that keeps every other process out (SQLITE_BUSY) until the last closes, and the WAL
	// index lives in this process's memory, so a read transaction takes no fcntl lock (the unix
	// VFS takes and drops two per read: 8 % of a GET's CPU). Connections of this process share it
	// as before. PostgreSQL ignores it.
	SharedFile bool
	// PostgresAlone promises that this process is the only one using the PostgreSQL database:
	// Open takes an exclusive advisory lock on it (see postgresHold), refused while any other
	// mgmtapi process has it open, and LookupText keeps its answers between write transactions
	// as it does on a SQLite file held alone. Without it Open takes the lock shared, which every
	// other process without PostgresAlone shares. SQLite ignores it.
	PostgresAlone bool
}

// DB is an open database with its migrations applied.
//
// With SQLite, writes go through one connection (SQLite allows one writer at a time, and a single
// connection turns lock contention into queueing instead of busy errors) while reads use a pool.
// With PostgreSQL both are the same pool. On both engines concurrent write transactions share
// commits on one connection (see InTx).
type DB struct {
	Engine Engine
	write  *sql.DB
	read   *sql.DB
	// reads serves Read on SQLite (pgx keeps its own statement cache per connection).
	reads *preparedReads
	// lookups serves LookupText on SQLite (see lookupPool).
	lookups *lookupPool
	// pgLookups serves LookupText on PostgreSQL (see pgLookups).
	pgLookups *pgLookups
	// answers keeps LookupText's answers when no other process may write the database (a SQLite
	// file or a PostgreSQL database held alone); nil otherwise (see answerCache).
	answers *answerCache
	// hold is this process's advisory lock on its PostgreSQL database; nil on SQLite.
	hold *postgresHold
	// pgConfig is the PostgreSQL connection's configuration; nil on SQLite.
	pgConfig *pgx.ConnConfig
	now      func() time.Time
	newID    func() string
	group    *groupCommitter
	// sqliteDSN opens a connection like the others (pragmas, VFS), not query_only; SQLite only
	sqliteDSN string
	// dataDir holds SQLite's files; "" on PostgreSQL. Ready checks its free space.
	dataDir string
	// storageFull is set while the last write that failed for lack of space has not been
	// followed by one that committed (see noteWriteOutcome, Ready).
	storageFull atomic.Bool
	// storageFullAt is when a write last failed for lack of space (Unix nanoseconds, 0 for
	// never); Ready holds PostgreSQL not ready for storageFullHold after it.
	storageFullAt atomic.Int64
}

// Open opens the database, applies pending migrations and returns it ready for use.
func Open(ctx context.Context, opts Options) (*DB, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	var d *DB
	var err error
	if opts.URL != "" {
		d, err = openPostgres(opts.URL)
	} else {
		d, err = openSQLite(opts.DataDir, opts.SharedFile)
	}
	if err != nil {
		return nil, err
	}
	if d.Engine == Postgres {
		if opts.PostgresAlone {
			d.answers = newAnswerCache()
		}
		if d.hold, err = holdPostgres(ctx, d.pgConfig, opts.PostgresAlone, d.answers); err != nil {
			d.Close()
			return nil, err
		}
	}
	d.now = now
	d.newID = opts.NewID
	if d.newID == nil {
		d.newID = newTimeOrderedID
	}
	// Migrations run before the group committer starts: they use the write pool directly, where
	// the committer then holds one connection for good (on SQLite the only one).
	if err := d.migrate(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if d.Engine == SQLite {
		if err := d.openReadConnections(ctx); err != nil {
			d.Close()
			return nil, err
		}
	}
	d.group = newGroupCommitter(d.write, d.Engine, d.answers)
	return d, nil
}

func openPostgres(rawURL string) (*DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("database url: must be a postgres:// or postgresql:// URL")
	}
	config, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	connector := patientConnector{stdlib.GetConnector(*config, stdlib.OptionResetSession(discardClosedConn))}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(20)
	pool.SetMaxIdleConns(20)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	return &DB{Engine: Postgres, write: pool, read: pool, pgConfig: config,
		pgLookups: newPgLookups(connector.Connect)}, nil
}

// readCacheKiB bounds the page cache of each SQLite read connection (the read pool's and
// LookupText's, up to 16 in all) to 256 KiB instead of SQLite's default 2,000 KiB. The page cache
// is memory the SQLite library allocates outside the Go heap, and its allocator gives each cached
// 4 KiB page an 8 KiB slot: at the default, ten concurrent lists of 10,000 policies filled every
// read connection's cache and added ~37 MiB to the process's peak RSS (87 → 55–58 MiB with 256
// KiB; docs/decisions.md, "SQLite read connections keep a 256 KiB page cache"). A larger cache
// would not serve the reads it costs memory for: a list scans a table larger than the cache,
// which evicts its own pages, and in WAL mode a connection's cache is dropped at the start of any
// read transaction after another connection's commit. The write connection keeps the default:
// it is one, and it alone writes, so its cache stays valid between its transactions.
const readCacheKiB = 256

// SQLiteFileName is the name of the SQLite database in the data directory.
const SQLiteFileName = "mgmtapi.db"

// readConnections is the size of SQLite's read pool. Its connections, and LookupText's, are
// opened at start and kept open (see openReadConnections).
const readConnections = 8

func openSQLite(dir string, shared bool) (*DB, error) {
	if dir == "" {
		return nil, errors.New("data dir: must not be empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, SQLiteFileName)
	// The pragmas ride in the DSN so that every connection of the pool gets them.
	pragmas := []string{
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(FULL)",
		"_pragma=busy_timeout(10000)",
		"_pragma=foreign_keys(1)",
	}
	if !shared {
		pragmas = append([]string{"vfs=unix-excl"}, pragmas...)
	}
	base := "file:" + path + "?" + strings.Join(pragmas, "&")
	write, err := sql.Open("sqlite", base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	readDSN := base + "&_pragma=query_only(1)" + fmt.Sprintf("&_pragma=cache_size(%d)", -readCacheKiB)
	read, err := sql.Open("sqlite", readDSN)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	read.SetMaxOpenConns(readConnections)
	read.SetMaxIdleConns(readConnections)
	d := &DB{Engine: SQLite, write: write, read: read, reads: newPreparedReads(read),
		lookups: newLookupPool(read.Driver(), readDSN), sqliteDSN: base, dataDir: dir}
	if !shared {
		if d.answers, err = openAnswerCache(dir); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// Close waits for the write transactions in progress, then releases the connections. Write
// transactions that have not started get an error.
func (d *DB) Close() error {
	if d.group != nil {
		d.group.close()
	}
	if d.reads != nil {
		d.reads.close()
	}
	if d.lookups != nil {
		d.lookups.close()
	}
	if d.pgLookups != nil {
		d.pgLookups.close()
	}
	if d.answers != nil && d.Engine == SQLite {
		closeAnswerCache(d.answers)
		d.answers = nil
	}
	err := d.write.Close()
	if d.hold != nil { // after the pool: the last write has ended
		d.hold.release()
		d.hold = nil
	}
	if d.read != d.write {
		err = errors.Join(err, d.read.Close())
	}
	return err
}

// Ping reports whether the database answers.
func (d *DB) Ping(ctx context.Context) error {
	var one int
	return d.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Stats returns the connection-pool figures of the pool that carries writes.
func (d *DB) Stats() sql.DBStats { return d.write.Stats() }

// Querier is what both a transaction and the read pool offer.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Read returns the pool for queries that change nothing.
func (d *DB) Read() Querier {
	if d.reads != nil {
		return d.reads
	}
	return d.read
}

// Tx is a transaction together with the moment it started, which every timestamp written in it
// uses, so that a change and the events that describe it carry the same time.
type Tx struct {
	Now    time.Time
	Engine Engine
	newID  func() string

	q Querier // the engine's transaction; on SQLite shared with the other transactions of a batch
	// detached statements ignore the caller's cancellation: on SQLite an interrupted write
	// statement rolls back the whole shared transaction, the batch's other members included.
	detached bool

	beforeCommit []func() error
	// atEnd are the statements ExecAtEnd queued, run after the BeforeCommit work.
	atEnd  []queuedStatement
	locals map[any]any
	// emitted are the events recorded before commit (see Emit).
	emitted []Event
	// routable keeps the answers of RoutableCondition this transaction already has (see
	// KnowRoutable), so that recordEvents asks each team once. A transaction has one or two.
	routable []routeAnswer
	// audit is the record this transaction writes last, when it serves an audited request.
	audit *txAudit
	// opened is the row of the transaction's opening (InTxOpening) when the member before it
	// in a PostgreSQL batch sent it; nil when fn's wrapper is to run it.
	opened *openedRow
}

func (tx *Tx) statementContext(ctx context.Context) context.Context {
	if tx.detached {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// ExecContext runs a statement that returns no rows in the transaction.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.q.ExecContext(tx.statementContext(ctx), query, args...)
}

// QueryContext runs a query in the transaction; the caller closes the rows before fn returns.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.q.QueryContext(tx.statementContext(ctx), query, args...)
}

// QueryRowContext runs a query that returns at most one row in the transaction.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.q.QueryRowContext(tx.statementContext(ctx), query, args...)
}

// NewID returns a fresh identifier from the database's generator. In an audited request the id
// is one of the resource ids of the transaction's audit record.
func (tx *Tx) NewID() string {
	id := tx.newID()
	if tx.audit != nil {
		tx.audit.ids = append(tx.audit.ids, id)
	}
	return id
}

// CopyInto writes a consistent copy of the SQLite database to path, which must not exist or be
// an empty file: VACUUM INTO on a connection opened for it, a snapshot of one read transaction
// that never blocks the writer. It is how `mgmtapi backup` copies a database a server holds
// exclusively (see Options.SharedFile). On PostgreSQL it fails: pg_dump copies those.
func (d *DB) CopyInto(ctx context.Context, path string) error {
	if d.Engine != SQLite {
		return errors.New("copy the database: PostgreSQL databases are copied with pg_dump")
	}
	// Its own connection: the read pool's are query_only, which refuses VACUUM INTO, and the
	// write connection would hold the writers back for the copy's length. It opens through this
	// process, so the exclusive lock lets it in.
	conn, err := sql.Open("sqlite", d.sqliteDSN)
	if err != nil {
		return fmt.Errorf("copy the database: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.ExecContext(ctx, `VACUUM INTO $1`, path); err != nil {
		return fmt.Errorf("copy the database to %s: %w", path, err)
	}
	return conn.Close()
}

// NewID returns a fresh identifier from the database's generator, for work done before a
// transaction (on SQLite write transactions run one after another, so what can be done outside
// one should be).
func (d *DB) NewID() string { return d.newID() }

// BeforeCommit adds fn to the work InTx does after its function returned nil and before it
// commits, in the order added. An error from fn rolls the transaction back and is InTx's answer.
// Areas use it to write shared rows (counters) once, in a fixed order, at the end of a
// transaction, so that concurrent transactions cannot lock them in opposite orders.
func (tx *Tx) BeforeCommit(fn func() error) { tx.beforeCommit = append(tx.beforeCommit, fn) }

// queuedStatement is a statement ExecAtEnd queued: what it does (for its error), its text and
// its arguments.
type queuedStatement struct {
	what  string
	query string
	args  []any
}

// ExecAtEnd queues a statement that returns no rows to run at the end of the transaction, after
// fn and its BeforeCommit work, in the order queued, before the audit record. On PostgreSQL the
// queued statements, the audit record and the end of the member's savepoint go to the database
// in one round trip (one pgx batch); on SQLite they run one after the other at that point. An
// error of one fails the transaction, and InTx answers it as "what: error" (translate it with
// Translate like any other). It suits writes whose outcome fn does not need and that nothing
// later in the transaction reads: an appended history row, a recorded event.
func (tx *Tx) ExecAtEnd(what, query string, args ...any) {
	tx.atEnd = append(tx.atEnd, queuedStatement{what: what, query: query, args: args})
}

// finish runs the transaction's BeforeCommit work and, unless the caller sends them itself
// (runPgTurn), the statements ExecAtEnd queued: the work between fn and the audit record.
func (tx *Tx) finish(ctx context.Context, withQueued bool) error {
	for _, before := range tx.beforeCommit {
		if err := before(); err != nil {
			return err
		}
	}
	if !withQueued {
		return nil
	}
	for _, q := range tx.atEnd {
		if _, err := tx.ExecContext(ctx, q.query, q.args...); err != nil {
			return fmt.Errorf("%s: %w", q.what, err)
		}
	}
	return nil
}

// Serialize makes every other transaction that serializes on the same key wait until this one
// ends, across replicas: on PostgreSQL a transaction-level advisory lock on a hash of key; on
// SQLite nothing, since its write transactions run one at a time on the single writer
// connection (those of a batch one after the other, each seeing the earlier ones' work). Areas
// use it to keep what they checked (a count, the existence of a row) true until they commit.
func (tx *Tx) Serialize(ctx context.Context, key string) error {
	if tx.Engine != Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("lock %s: %w", key, err)
	}
	return nil
}

// Local returns the value stored under key for this transaction, made by create the first time.
func (tx *Tx) Local(key any, create func() any) any {
	if v, ok := tx.locals[key]; ok {
		return v
	}
	if tx.locals == nil {
		tx.locals = map[any]any{}
	}
	v := create()
	tx.locals[key] = v
	return v
}

// InTx runs fn in a transaction and commits it when fn returns nil; otherwise it rolls back and
// returns fn's error unchanged. A commit that fails is returned as an error: nothing is durable
// unless InTx returns nil. A panic in fn rolls the transaction back and goes on.
//
// On both engines concurrent calls share one commit (group commit): each fn, with its
// BeforeCommit work, runs in its own savepoint of a batch transaction, after the earlier members
// of the batch and seeing their work, as if they had committed before it. A failing fn rolls back
// its savepoint only; a failing commit fails every member of the batch. ctx cancels the wait for
// a turn; once fn has started, its statements are not interrupted by ctx (an interrupted
// statement would roll back the batch, or on PostgreSQL close its connection) and InTx answers
// the commit's outcome.
//
// On PostgreSQL a call is run again (up to 4 times in all) when PostgreSQL rolls its savepoint
// back for a deadlock (40P01) or a serialization failure (40001), and once when the connection is
// lost before the COMMIT is sent (a restart; see inTxRetried), so fn may run more than once: it
// must set, not accumulate, what it hands out of the transaction.
//
// When ctx carries an authenticated AuditEntry (WithAudit), the transaction's audit record is
// written with the batch's others, after the last member's savepoint and before the COMMIT: a
// committed change has its record, a failed or rolled-back one has none, a PostgreSQL
// transaction run again writes it once, and a record that cannot be written fails the batch.
func (d *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	return d.inTx(ctx, nil, fn)
}

// Row is one row of a query, as *sql.Row answers it: Scan fails with sql.ErrNoRows when there is
// none, and with the query's error when it failed.
type Row interface{ Scan(dest ...any) error }

// Opening builds a write transaction's first statement, a query of at most one row, from the
// transaction's time (Tx.Now). It must only build it: it may be called before the transaction's
// turn, on another goroutine.
type Opening func(now time.Time) (query string, args []any)

// InTxOpening is InTx for a transaction whose first statement is known before its function runs:
// fn receives opening's row and runs the rest. On PostgreSQL the member before it in a batch sends
// opening in the message that ends it (endPgMember), so that the statement costs no round trip of
// its own; otherwise it runs first in the transaction, as fn's own would. A failed opening leaves
// the transaction as any failed statement does: fn returns its error, and nothing of it remains.
func (d *DB) InTxOpening(ctx context.Context, opening Opening, fn func(tx *Tx, first Row) error) error {
	return d.inTx(ctx, opening, func(tx *Tx) error {
		if tx.opened != nil {
			return fn(tx, tx.opened)
		}
		query, args := opening(tx.Now)
		return fn(tx, tx.QueryRowContext(ctx, query, args...))
	})
}

// inTx is InTx, with the transaction's first statement when the caller knows it (InTxOpening).
func (d *DB) inTx(ctx context.Context, opening Opening, fn func(tx *Tx) error) (err error) {
	defer func() { d.noteWriteOutcome(err) }()
	if d.Engine == Postgres {
		if err := d.hold.heldElsewhere(); err != nil {
			return err
		}
		return d.inTxRetried(ctx, opening, fn)
	}
	return d.inTxOnce(ctx, opening, fn)
}

// inTxOnce is one attempt of InTx: a member of the group committer's next batch, or before it
// starts (migrations) a transaction of its own.
func (d *DB) inTxOnce(ctx context.Context, opening Opening, fn func(tx *Tx) error) error {
	if d.group == nil {
		return d.inOwnTx(ctx, fn)
	}
	return d.group.inTx(ctx, d, opening, fn)
}

// inOwnTx runs fn in a transaction of its own on the write pool: the migrations' transactions,
// which run before the group committer takes its connection.
func (d *DB) inOwnTx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if d.answers != nil {
		d.answers.writing()
		defer d.answers.written()
	}
	sqlTx, err := d.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{q: sqlTx, Now: d.Now(), Engine: d.Engine, newID: d.newID}
	tx.startAudit(ctx)
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := tx.finish(ctx, true); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := tx.writeAudit(ctx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// newTimeOrderedID returns a random UUID whose first 48 bits are the current Unix time in
// milliseconds (version 7, RFC 9562), so that rows inserted one after the other land next to each
// other in the (team_id, id) primary keys instead of on a random page of a large index.
func newTimeOrderedID() string {
	id, err := uuid.NewV7()
	if err != nil { // the system's random source failed
		return uuid.NewString()
	}
	return id.String()
}

// Now returns the database clock's current time, truncated to what both engines store.
func (d *DB) Now() time.Time { return d.now().UTC().Truncate(time.Microsecond) }
