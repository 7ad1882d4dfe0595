package db

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound reports that a query found no row.
var ErrNotFound = errors.New("not found")

// ErrConflict reports that a write broke a uniqueness rule.
var ErrConflict = errors.New("conflict")

// ErrReferenceGone reports that a write referred to a row that is not there (a foreign key): the
// team of the request, or a resource it names, was deleted while the request was served.
var ErrReferenceGone = errors.New("a row the write refers to is gone")

// Translate turns a driver error into ErrNotFound, ErrConflict or ErrReferenceGone where it is
// one of those, so that areas never look at driver error types. Other errors are returned
// unchanged.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return errors.Join(ErrConflict, err)
		case "23503":
			return errors.Join(ErrReferenceGone, err)
		}
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errors.Join(ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errors.Join(ErrReferenceGone, err)
		}
	}
	return err
}

// IsReferenceGone reports whether err is, or translates to, a write referring to a row that is
// not there.
func IsReferenceGone(err error) bool { return errors.Is(Translate(err), ErrReferenceGone) }

// IsConflict reports whether err is, or translates to, a uniqueness violation.
func IsConflict(err error) bool { return errors.Is(Translate(err), ErrConflict) }

// IsNotFound reports whether err is, or translates to, a missing row.
func IsNotFound(err error) bool { return errors.Is(Translate(err), ErrNotFound) }

// OneRow finishes an UPDATE or DELETE that must change a row: it returns ErrNotFound when the
// statement changed none, and otherwise the statement's error (translated), both prefixed with
// what.
func OneRow(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, Translate(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
