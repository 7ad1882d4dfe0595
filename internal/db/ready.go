package db

import (
	"context"
	"fmt"
	"time"
)

// minFreeBytes is the free space, on the file system of SQLite's data directory, below which the
// database is not ready: a write transaction needs room for its WAL frames and a checkpoint room
// to grow the database file, and with less than this most writes fail with a full disk.
const minFreeBytes = 1 << 20

// storageFullHold is how long PostgreSQL stays not ready after a write failed for lack of space.
// A write that commits does not show that PostgreSQL's disk has room again: an update, or an
// insert into a page with free space, needs no new space while every write that must grow a
// table fails (SQLSTATE 53100). So the last such failure, not the last success, decides, until
// none has happened for this long; and mgmtapi cannot see the free space of PostgreSQL's disk.
const storageFullHold = 5 * time.Second

// Ready reports whether a write can succeed now, for /readyz; its error is a *NotReadyError,
// whose reason starts with "database" (it does not answer) or "storage full":
//   - the database answers a query (SELECT 1 on the read pool; a new connection is tried once,
//     without the wait of patientConnector);
//   - on PostgreSQL, no other mgmtapi process holds the database in a way this one may not
//     share (see postgresHold);
//   - on SQLite, the data directory's file system has at least 1 MiB free;
//   - on PostgreSQL, no write failed for lack of space in the last storageFullHold;
//   - after a write failed for lack of space (FaultStorageFull) and none succeeded since, a write
//     of its own succeeds (one row of write_probe updated in a transaction); it clears the mark.
func (d *DB) Ready(ctx context.Context) error {
	if err := d.Ping(withoutConnectWait(ctx)); err != nil {
		return &NotReadyError{Reason: "database: does not answer", Cause: err}
	}
	if err := d.hold.heldElsewhere(); err != nil {
		return &NotReadyError{Reason: "database: held by another mgmtapi process", Cause: err}
	}
	if at := d.storageFullAt.Load(); d.Engine == Postgres && at != 0 && time.Since(time.Unix(0, at)) < storageFullHold {
		return &NotReadyError{Reason: fmt.Sprintf("storage full: writes failed for lack of space in the last %s", storageFullHold)}
	}
	if d.dataDir != "" {
		if free, ok := freeBytes(d.dataDir); ok && free < minFreeBytes {
			return &NotReadyError{Reason: fmt.Sprintf("storage full: %d bytes free on the data directory's file system, fewer than %d",
				free, minFreeBytes)}
		}
	}
	if !d.storageFull.Load() {
		return nil
	}
	err := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE write_probe SET written_at = $1 WHERE id = 1`, tx.Now.Format(time.RFC3339Nano))
		return err
	})
	switch {
	case err == nil:
		return nil
	case FaultOf(err) == FaultStorageFull:
		return &NotReadyError{Reason: "storage full: writes fail for lack of space", Cause: err}
	default:
		return &NotReadyError{Reason: "database: a test write failed", Cause: err}
	}
}

// NotReadyError is Ready's answer. Reason is for anyone who asks (/readyz is served without a
// key): it names the condition, never a host, user or file. Cause, when set, is the database's
// error, for the log.
type NotReadyError struct {
	Reason string
	Cause  error
}

func (e *NotReadyError) Error() string {
	if e.Cause == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Cause.Error()
}

func (e *NotReadyError) Unwrap() error { return e.Cause }

// PublicReason is the reason without the cause.
func (e *NotReadyError) PublicReason() string { return e.Reason }

// noteWriteOutcome keeps the storage-full mark Ready reads: set by a write transaction that
// failed for lack of space, cleared by one that committed.
func (d *DB) noteWriteOutcome(err error) {
	switch {
	case err == nil:
		if d.storageFull.Load() {
			d.storageFull.Store(false)
		}
	case FaultOf(err) == FaultStorageFull:
		d.storageFull.Store(true)
		d.storageFullAt.Store(time.Now().UnixNano())
	}
}

// openReadConnections opens every connection of SQLite's read pools at start, each with one read
// (which opens the WAL too), so that the files they use are open before clients can take every
// descriptor the process may have: a read then never fails for a file it cannot open.
func (d *DB) openReadConnections(ctx context.Context) error {
	conns := make([]*lookupConn, 0, lookupConnections)
	defer func() {
		for _, c := range conns {
			d.lookups.put(c, false)
		}
	}()
	for range lookupConnections {
		c, err := d.lookups.get()
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := c.touch(ctx); err != nil {
			return fmt.Errorf("open sqlite: %w", err)
		}
	}
	pooled := make([]interface{ Close() error }, 0, readConnections)
	defer func() {
		for _, c := range pooled {
			_ = c.Close()
		}
	}()
	for range readConnections {
		c, err := d.read.Conn(ctx)
		if err != nil {
			return fmt.Errorf("open sqlite: %w", err)
		}
		pooled = append(pooled, c)
		var n int
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
			return fmt.Errorf("open sqlite: %w", err)
		}
	}
	return nil
}
