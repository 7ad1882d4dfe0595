package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// sqliteFileName is the name of the database file in the data directory.
const sqliteFileName = db.SQLiteFileName

// backupCommand runs `mgmtapi backup` or `mgmtapi restore`, named by args[0].
func backupCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if args[0] == "restore" {
		return restore(ctx, args[1:], getenv, stdout, stderr)
	}
	return backup(ctx, args[1:], getenv, stdout, stderr)
}

const backupUsage = `usage: mgmtapi backup --to FILE [--data-dir DIR] [--force]

Writes a consistent copy of the SQLite database of DIR to FILE while the server may be running.
A server that holds the database alone (--sqlite-file-access exclusive, the default) writes the
copy itself, asked through DIR/mgmtapi.sock. FILE is written under a temporary name beside it and
renamed once complete and checked.
PostgreSQL deployments are backed up with pg_dump.

`

// databaseFlags declares the flags that say where the database is, with serve's defaults.
func databaseFlags(fs *flag.FlagSet, getenv func(string) string, usage string) (dataDir, databaseURL *string) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	dir := getenv("MGMTAPI_DATA_DIR")
	if dir == "" {
		dir = "./data"
	}
	dataDir = fs.String("data-dir", dir, "directory of the SQLite database (MGMTAPI_DATA_DIR)")
	databaseURL = fs.String("database-url", getenv("MGMTAPI_DATABASE_URL"),
		"PostgreSQL URL; refused: PostgreSQL has pg_dump and pg_restore (MGMTAPI_DATABASE_URL)")
	return dataDir, databaseURL
}

// backup is `mgmtapi backup`: it copies the SQLite database of the data directory to a new file
// with VACUUM INTO, a snapshot of one read transaction, so a server writing to the same database
// meanwhile is neither stopped nor seen half-way. When a server holds the database alone, it
// runs the VACUUM INTO itself, asked through its socket (copyThroughServer). The copy is written
// to a temporary file in the target's directory, checked with PRAGMA integrity_check, synced,
// then renamed to the target and
// the directory synced: the target name only ever holds a complete, checked backup. An existing
// target is refused unless --force is given. The source database is opened read-only and never
// created. With a PostgreSQL URL (--database-url or MGMTAPI_DATABASE_URL) it refuses and names
// pg_dump. On success it prints the path, size and schema version on stdout.
func backup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mgmtapi backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir, databaseURL := databaseFlags(fs, getenv, backupUsage)
	to := fs.String("to", "", "file to write the backup to (required; must not exist unless --force)")
	force := fs.Bool("force", false, "replace FILE if it exists")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("backup: unexpected argument %q; the file is given with --to", fs.Arg(0))
	case *databaseURL != "":
		return fmt.Errorf("backup: the database is PostgreSQL (%s); mgmtapi backup copies SQLite only: "+
			"use pg_dump, e.g. pg_dump --format=custom --file=FILE 'URL'", databaseURLSource(fs, *databaseURL))
	case *to == "":
		return errors.New("backup: --to: must name the file to write")
	case *dataDir == "":
		return errors.New("backup: --data-dir: must not be empty")
	}

	started := time.Now()
	result, err := backupSQLite(ctx, filepath.Join(*dataDir, sqliteFileName), *to, *force)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "mgmtapi: backed up %s to %s: %d bytes, schema version %d, integrity ok, %s\n",
		result.source, result.target, result.size, result.schemaVersion, time.Since(started).Round(time.Millisecond))
	return nil
}

// databaseURLSource says where the PostgreSQL URL came from and its host, never its password.
func databaseURLSource(fs *flag.FlagSet, rawURL string) string {
	from := "MGMTAPI_DATABASE_URL"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "database-url" {
			from = "--database-url"
		}
	})
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		return from + ", host " + u.Host
	}
	return from
}

type backupResult struct {
	source, target string
	size           int64
	schemaVersion  int
}

// backupSQLite copies the database at source to target; see backup.
func backupSQLite(ctx context.Context, source, target string, force bool) (backupResult, error) {
	res := backupResult{source: source, target: target}
	info, err := os.Stat(source)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return res, fmt.Errorf("no mgmtapi database at %s (is --data-dir right?)", source)
	case err != nil:
		return res, fmt.Errorf("database %s: %w", source, err)
	case !info.Mode().IsRegular():
		return res, fmt.Errorf("database %s: not a regular file", source)
	}
	if err := checkTarget(target, force); err != nil {
		return res, err
	}
	if abs, err := filepath.Abs(target); err == nil {
		res.target = abs
	}
	if abs, err := filepath.Abs(source); err == nil {
		res.source = abs
	}
	if res.source == res.target {
		return res, fmt.Errorf("--to %s: is the database itself", target)
	}

	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return res, fmt.Errorf("--to %s: create a temporary file in %s: %w", target, dir, unwrapPathError(err))
	}
	tmpName := tmp.Name()
	tmp.Close()
	completed := false
	defer func() {
		if !completed {
			os.Remove(tmpName)
		}
	}()

	// A server holding the database alone (--sqlite-file-access exclusive) writes the copy
	// itself, asked through its socket in the data directory; the copy is checked below as
	// any other.
	// (an absolute path: the server's working directory is not this one)
	absTmp, err := filepath.Abs(tmpName)
	if err != nil {
		return res, err
	}
	served, err := copyThroughServer(ctx, filepath.Dir(source), absTmp)
	if err != nil {
		return res, err
	}
	if !served {
		if err := copySQLiteFile(ctx, source, tmpName); err != nil {
			return res, err
		}
	}

	if res.schemaVersion, err = verifyBackup(ctx, tmpName); err != nil {
		return res, err
	}
	if res.size, err = syncFile(tmpName); err != nil {
		return res, err
	}
	if err := publish(tmpName, target, force); err != nil {
		return res, err
	}
	completed = true
	if err := syncDir(dir); err != nil {
		return res, fmt.Errorf("--to %s: the backup is complete but its directory could not be synced: %w", target, err)
	}
	return res, nil
}

// copySQLiteFile copies the database at source into tmpName (an empty file) with VACUUM INTO
// through a read-only connection of this process, after checking that it is an mgmtapi database
// (its schema_migrations table).
func copySQLiteFile(ctx context.Context, source, tmpName string) error {
	src, err := openSQLiteFile(source, "&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := schemaVersion(ctx, src, source); err != nil {
		if heldElsewhere(err) {
			return fmt.Errorf("%w (a running mgmtapi serve holds it and did not answer on %s)", err,
				filepath.Join(filepath.Dir(source), backupSocketName))
		}
		return err
	}
	// VACUUM INTO accepts an existing empty file; the snapshot is one read transaction, which in
	// WAL mode never blocks the server's writer.
	if _, err := src.ExecContext(ctx, `VACUUM INTO $1`, tmpName); err != nil {
		return fmt.Errorf("copy %s to %s: %w", source, tmpName, err)
	}
	if err := src.Close(); err != nil {
		return fmt.Errorf("close %s: %w", source, err)
	}
	return nil
}

// publish gives the complete copy its final name. Without force a hard link makes the name only
// if nothing took it meanwhile; a file system without hard links gets a check and a rename.
func publish(tmpName, target string, force bool) error {
	if !force {
		err := os.Link(tmpName, target)
		if err == nil {
			_ = os.Remove(tmpName) // on failure only a dot-file is left beside the backup
			return nil
		}
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("--to %s: already exists; give --force to replace it", target)
		}
		if err := checkTarget(target, false); err != nil {
			return err
		}
	}
	if err := os.Rename(tmpName, target); err != nil {
		return fmt.Errorf("--to %s: %w", target, unwrapPathError(err))
	}
	return nil
}

// checkTarget refuses a target that exists (unless force) or that is not a regular file.
func checkTarget(target string, force bool) error {
	info, err := os.Lstat(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--to %s: %w", target, unwrapPathError(err))
	case !info.Mode().IsRegular():
		return fmt.Errorf("--to %s: exists and is not a regular file", target)
	case !force:
		return fmt.Errorf("--to %s: already exists; give --force to replace it", target)
	}
	return nil
}

// openSQLiteFile opens path read-only; it never creates the file.
func openSQLiteFile(path, pragmas string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro"+pragmas)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// schemaVersion returns the highest migration recorded in the database at path, or an error
// saying the file is not an mgmtapi database.
func schemaVersion(ctx context.Context, db *sql.DB, path string) (int, error) {
	var version sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version)
	if err != nil || !version.Valid {
		reason := "no migration recorded"
		if err != nil {
			reason = err.Error()
		}
		return 0, fmt.Errorf("%s: not an mgmtapi database (schema_migrations: %s)", path, reason)
	}
	return int(version.Int64), nil
}

// verifyBackup runs PRAGMA integrity_check on the copy and returns its schema version. The copy
// is opened immutable: nothing else writes it, and no -wal or -shm file is made beside it.
func verifyBackup(ctx context.Context, path string) (int, error) {
	db, err := openSQLiteFile(path, "&immutable=1")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var verdict string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check(1)`).Scan(&verdict); err != nil {
		return 0, fmt.Errorf("check the copy %s: %w", path, err)
	}
	if verdict != "ok" {
		return 0, fmt.Errorf("check the copy %s: integrity_check: %s", path, verdict)
	}
	version, err := schemaVersion(ctx, db, path)
	if err != nil {
		return 0, err
	}
	return version, db.Close()
}

// syncFile flushes path to stable storage and returns its size.
func syncFile(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync %s: %w", path, err)
	}
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), f.Close()
}

// syncDir flushes a directory's entries, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// unwrapPathError drops the *os.PathError wrapper whose path the message already names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
