package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

const restoreUsage = `usage: mgmtapi restore --from FILE [--data-dir DIR] [--force]

Makes FILE, a backup written by "mgmtapi backup", the SQLite database of DIR. The server must be
stopped. FILE is copied and checked before anything in DIR changes; a database already in DIR is
replaced only with --force and is kept beside it as mgmtapi.db.replaced-<time>.
PostgreSQL deployments are restored with pg_restore.

`

// restore is `mgmtapi restore`: it copies FILE to a temporary file in the data directory
// (created if missing), checks the copy with PRAGMA integrity_check and its schema_migrations
// table, then gives it the database's name. It refuses, changing nothing, when a server holds the
// data directory's database (an exclusive lock cannot be taken), when the directory already holds
// a database and --force is not given, or with a PostgreSQL URL (naming pg_restore). With --force
// a database that cannot be opened at all (damaged) is replaced too. A replaced
// database is first checkpointed, then renamed to mgmtapi.db.replaced-<UTC time>; its -wal and
// -shm files, or stale ones without a database, never stay beside the restored file, where
// SQLite would apply them to it.
func restore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mgmtapi restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir, databaseURL := databaseFlags(fs, getenv, restoreUsage)
	from := fs.String("from", "", "backup file to restore (required)")
	force := fs.Bool("force", false, "replace the database the data directory holds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("restore: unexpected argument %q; the file is given with --from", fs.Arg(0))
	case *databaseURL != "":
		return fmt.Errorf("restore: the database is PostgreSQL (%s); mgmtapi restore writes SQLite only: "+
			"use pg_restore, e.g. pg_restore --clean --dbname='URL' FILE", databaseURLSource(fs, *databaseURL))
	case *from == "":
		return errors.New("restore: --from: must name the backup file")
	case *dataDir == "":
		return errors.New("restore: --data-dir: must not be empty")
	}
	res, err := restoreSQLite(ctx, *from, *dataDir, *force, time.Now())
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "mgmtapi: restored %s to %s: %d bytes, schema version %d, integrity ok\n",
		res.source, res.target, res.size, res.schemaVersion)
	if res.replaced != "" {
		fmt.Fprintf(stdout, "mgmtapi: the database it replaced is kept as %s\n", res.replaced)
	}
	if res.unreadable != nil {
		fmt.Fprintf(stdout, "mgmtapi: the replaced database could not be opened (%v); it was moved aside as it was\n", res.unreadable)
	}
	return nil
}

type restoreResult struct {
	backupResult
	replaced   string // where the previous database went, if there was one
	unreadable error  // why the previous database could not be opened, if it could not
}

// errDatabaseInUse says that another connection, a running server's most likely, holds the
// database.
var errDatabaseInUse = errors.New("in use, most likely by a running server: stop it first")

func restoreSQLite(ctx context.Context, from, dataDir string, force bool, now time.Time) (restoreResult, error) {
	live := filepath.Join(dataDir, sqliteFileName)
	res := restoreResult{backupResult: backupResult{source: from, target: live}}
	info, err := os.Stat(from)
	switch {
	case err != nil:
		return res, fmt.Errorf("--from %s: %w", from, unwrapPathError(err))
	case !info.Mode().IsRegular():
		return res, fmt.Errorf("--from %s: not a regular file", from)
	}
	if abs, err := filepath.Abs(from); err == nil {
		res.source = abs
	}
	if abs, err := filepath.Abs(live); err == nil {
		res.target = abs
	}
	if res.source == res.target {
		return res, fmt.Errorf("--from %s: is the data directory's database itself", from)
	}
	if _, err := os.Stat(from + "-wal"); err == nil {
		return res, fmt.Errorf("--from %s: has a -wal file beside it, so it is a live database, not a backup: "+
			"make one with mgmtapi backup", from)
	}

	// Copy, then check the copy: what is checked is what gets installed.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return res, fmt.Errorf("--data-dir %s: %w", dataDir, unwrapPathError(err))
	}
	tmp, err := os.CreateTemp(dataDir, "."+sqliteFileName+".restore-*")
	if err != nil {
		return res, fmt.Errorf("--data-dir %s: create a temporary file: %w", dataDir, unwrapPathError(err))
	}
	tmpName := tmp.Name()
	installed := false
	defer func() {
		if !installed {
			os.Remove(tmpName)
		}
	}()
	res.size, err = copyInto(tmp, from)
	if err != nil {
		return res, err
	}
	if res.schemaVersion, err = verifyBackup(ctx, tmpName); err != nil {
		return res, fmt.Errorf("--from %s: %w", from, err)
	}

	// The database in place, if any: free (no server), checkpointed, then moved aside with its
	// -wal and -shm files.
	if _, err := os.Stat(live); err == nil {
		err := releaseLive(ctx, live, force)
		switch {
		case errors.Is(err, errDatabaseInUse):
			return res, err
		case !force:
			return res, fmt.Errorf("--data-dir %s: already holds a database; give --force to replace it "+
				"(it is then kept as %s.replaced-<time>)", dataDir, sqliteFileName)
		case err != nil:
			// A damaged database, the usual reason for a restore, cannot be opened or locked:
			// with --force it is moved aside as it is.
			res.unreadable = err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return res, fmt.Errorf("database %s: %w", live, unwrapPathError(err))
	}
	aside := freeName(live + ".replaced-" + now.UTC().Format("20060102T150405Z"))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := os.Rename(live+suffix, aside+suffix)
		switch {
		case err == nil:
			if suffix == "" {
				res.replaced = aside
			}
		case !errors.Is(err, os.ErrNotExist):
			return res, fmt.Errorf("move %s aside: %w", live+suffix, unwrapPathError(err))
		}
	}
	if err := os.Rename(tmpName, live); err != nil {
		return res, fmt.Errorf("install %s: %w", live, unwrapPathError(err))
	}
	installed = true
	if err := syncDir(dataDir); err != nil {
		return res, fmt.Errorf("--data-dir %s: the database is restored but the directory could not be synced: %w", dataDir, err)
	}
	return res, nil
}

// freeName returns name, or name-2, name-3… when it or its -wal/-shm is taken: a second restore
// in the same second must not overwrite what the first one kept.
func freeName(name string) string {
	taken := func(n string) bool {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if _, err := os.Lstat(n + suffix); !errors.Is(err, os.ErrNotExist) {
				return true
			}
		}
		return false
	}
	candidate := name
	for i := 2; taken(candidate); i++ {
		candidate = fmt.Sprintf("%s-%d", name, i)
	}
	return candidate
}

// copyInto copies the file at path into f, syncs and closes f, and returns the size.
func copyInto(f *os.File, path string) (int64, error) {
	defer f.Close()
	src, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("--from %s: %w", path, unwrapPathError(err))
	}
	defer src.Close()
	n, err := io.Copy(f, src)
	if err != nil {
		return 0, fmt.Errorf("copy %s to %s: %w", path, f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return n, f.Close()
}

// releaseLive takes an exclusive lock on the database at path, which fails while a server has it
// open; with checkpoint it folds the write-ahead log into the file, so that the file alone holds
// the data.
func releaseLive(ctx context.Context, path string, checkpoint bool) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw&_pragma=locking_mode(EXCLUSIVE)&_pragma=busy_timeout(0)")
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `BEGIN EXCLUSIVE; COMMIT`); err != nil {
		if heldElsewhere(err) {
			return fmt.Errorf("%s is %w", path, errDatabaseInUse)
		}
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if !checkpoint {
		return db.Close()
	}
	var busy, logFrames, checkpointed int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &checkpointed); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint %s: %w", path, errDatabaseInUse)
	}
	return db.Close()
}
