package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Fault is what kind of failure of the database an error is, when it is one that says nothing
// about the request: the same request may succeed once the database is back, so the API answers
// it with a status a client retries (503 or 507 with Retry-After), never 500, 401 or 403.
type Fault string

const (
	// NoFault: the error is not a failure of the database (a bug, a refused value, a conflict).
	NoFault Fault = ""
	// FaultUnavailable: the server cannot reach or use its database: PostgreSQL refuses
	// connections, restarts, shuts down or closed the connection; SQLite cannot open, read or
	// lock its file.
	FaultUnavailable Fault = "unavailable"
	// FaultStorageFull: the database has no space left to write (SQLite's disk is full,
	// PostgreSQL's 53100 disk_full).
	FaultStorageFull Fault = "storage_full"
)

// FaultOf says which Fault err is, looking through wrapped errors. A context's cancellation or
// deadline is never a fault: it is the caller's.
func FaultOf(err error) Fault {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return NoFault
	}
	if errors.Is(err, ErrHeldElsewhere) { // another server holds the database alone
		return FaultUnavailable
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) { // whatever refused it, PostgreSQL cannot be used now
		return FaultUnavailable
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgFault(pgErr.Code)
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		return sqliteFault(liteErr.Code())
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return FaultStorageFull
	}
	if connectionLost(err) {
		return FaultUnavailable
	}
	return NoFault
}

// pgFault sorts PostgreSQL's SQLSTATE codes: connection exceptions (class 08), the server shutting
// down or starting (57P01–57P03), resource exhaustion (class 53, of which 53100 is a full disk),
// and I/O errors (58030).
func pgFault(code string) Fault {
	switch {
	case code == "53100":
		return FaultStorageFull
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"),
		code == "57P01", code == "57P02", code == "57P03", code == "58030":
		return FaultUnavailable
	}
	return NoFault
}

// sqliteFault sorts SQLite's result codes by their primary code (an extended code carries it in
// its low byte): a full disk, and the file that cannot be opened, read, written or locked.
func sqliteFault(code int) Fault {
	switch code & 0xff {
	case sqlite3.SQLITE_FULL:
		return FaultStorageFull
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return FaultUnavailable
	}
	return NoFault
}

// connectionLost reports whether err says that the connection to PostgreSQL failed or could not
// be made: refused or reset, closed by the server, ended mid-message. pgx reports a closed
// connection it was asked to use as "conn closed", an error it marks safe to retry.
func connectionLost(err error) bool {
	var netErr *net.OpError
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		pgconn.SafeToRetry(err)
}
