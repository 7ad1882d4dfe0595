package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mgmtapi/mgmtapi/internal/config"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// Backoff between attempts to reach PostgreSQL at start: it doubles from the first to the most.
const (
	firstDatabaseRetry = 250 * time.Millisecond
	mostDatabaseRetry  = 5 * time.Second
	databaseAttempt    = 5 * time.Second // the longest one connection attempt may take
)

// openDatabase opens the configured database and migrates it. PostgreSQL is first waited for, up
// to cfg.DatabaseWait. Every error names the data directory or the database host (never the
// password).
func openDatabase(ctx context.Context, cfg config.Config, logger *slog.Logger) (*db.DB, error) {
	if cfg.DatabaseURL == "" {
		if err := checkDataDir(cfg.DataDir); err != nil {
			return nil, err
		}
		dir, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data dir %s: %w", cfg.DataDir, err)
		}
		file := filepath.Join(dir, sqliteFileName)
		_, statErr := os.Stat(file)
		isNew := errors.Is(statErr, os.ErrNotExist)
		database, err := db.Open(ctx, db.Options{DataDir: cfg.DataDir, SharedFile: cfg.SQLiteSharedFile})
		if err != nil {
			if heldElsewhere(err) {
				err = fmt.Errorf("%w (another process holds it: a running mgmtapi serve on this data dir?)", err)
			}
			return nil, fmt.Errorf("data dir %s: SQLite database %s: %w", dir, file, err)
		}
		logDatabaseOpened(logger, isNew, "engine", "sqlite", "data_dir", dir, "file", file)
		return database, nil
	}
	host := config.DatabaseHost(cfg.DatabaseURL)
	if err := waitForPostgres(ctx, cfg.DatabaseURL, host, cfg.DatabaseWait, logger); err != nil {
		return nil, err
	}
	isNew, err := postgresIsNew(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", host, err)
	}
	database, err := db.Open(ctx, db.Options{URL: cfg.DatabaseURL, PostgresAlone: cfg.PostgresAlone})
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", host, err)
	}
	logDatabaseOpened(logger, isNew, "engine", "postgres", "host", host, "access", cfg.PostgresAccess())
	return database, nil
}

// logDatabaseOpened says at start which database the server uses, by its absolute path or host,
// and whether this start created it: a server started from another directory than usual creates
// a new ./data there, with a new team and key, and this line is where that shows.
func logDatabaseOpened(logger *slog.Logger, isNew bool, attrs ...any) {
	if isNew {
		logger.Info("created a new database (none was there): a new default team and key follow", attrs...)
		return
	}
	logger.Info("opened the existing database", attrs...)
}

// checkDataDir creates the data directory when it is absent and checks that a file can be created
// in it, so that the error names the path instead of SQLite's "unable to open database file".
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data dir %s: cannot create it: %w", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".mgmtapi-write-check-*")
	if err != nil {
		return fmt.Errorf("data dir %s: cannot write in it: %w", dir, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// unwrapPath drops the path and operation of an *os.PathError, which the message names already.
func unwrapPath(err error) error {
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
}

// waitForPostgres connects to PostgreSQL until it answers or wait has passed, logging each failed
// attempt with the host. An answer that retrying cannot change (a wrong password, a missing
// database) ends the wait at once.
func waitForPostgres(ctx context.Context, rawURL, host string, wait time.Duration, logger *slog.Logger) error {
	deadline := time.Now().Add(wait)
	backoff := firstDatabaseRetry
	for attempt := 1; ; attempt++ {
		err := pingPostgres(ctx, rawURL)
		if err == nil {
			if attempt > 1 {
				logger.Info("database reachable", "host", host, "attempt", attempt)
			}
			return nil
		}
		if !worthRetrying(err) {
			return fmt.Errorf("database %s: %w", host, err)
		}
		remaining := time.Until(deadline)
		if remaining <= 0 || ctx.Err() != nil {
			attempts := "1 attempt"
			if attempt > 1 {
				attempts = fmt.Sprintf("%d attempts", attempt)
			}
			return fmt.Errorf("database %s: not reachable after %s in %s (--database-wait): %w", host, attempts, wait, err)
		}
		pause := min(backoff, remaining)
		logger.Warn("database not reachable; retrying", "host", host, "attempt", attempt,
			"retry_in", pause.String(), "gives_up_in", remaining.Round(time.Millisecond).String(), "error", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		backoff = min(2*backoff, mostDatabaseRetry)
	}
}

// pingPostgres opens one connection and closes it.
func pingPostgres(ctx context.Context, rawURL string) error {
	pool, err := sql.Open("pgx", rawURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(ctx, databaseAttempt)
	defer cancel()
	return pool.PingContext(ctx)
}

// worthRetrying reports whether a failed connection may succeed later: the server was not reached,
// or answered that it cannot take the connection yet (starting, shutting down, full).
func worthRetrying(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return true
	}
	switch pgErr.Code {
	case "57P03", "57P01", "53300": // cannot_connect_now, admin_shutdown, too_many_connections
		return true
	}
	return false
}

// heldElsewhere reports whether an SQLite error says another process holds the database's lock.
func heldElsewhere(err error) bool {
	return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "locked")
}
