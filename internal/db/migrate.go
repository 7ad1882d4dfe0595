package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations
var migrations embed.FS

// migrate applies, in order, every migration of the engine that the database has not seen. Each
// migration runs in its own transaction with its version record, so a crash leaves either all of
// it or none. On PostgreSQL an advisory lock keeps replicas that start together from racing.
func (d *DB) migrate(ctx context.Context) error {
	ctx = WithoutAudit(ctx) // schema changes are no request's change (and come before the audit table)
	dir := "migrations/" + string(d.Engine)
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	type migration struct {
		version int
		name    string
	}
	var list []migration
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return fmt.Errorf("migration %s: name must be NNNN_description.sql", e.Name())
		}
		list = append(list, migration{v, e.Name()})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].version < list[j].version })

	// A database that has seen every migration, as at almost every start, is left with one read:
	// no transaction, no lock, no write.
	applied, err := d.appliedMigrations(ctx)
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(m migration) bool { return applied[m.version] })
	if len(list) == 0 {
		return nil
	}
	// The bookkeeping table is created under the same lock as the migrations: replicas starting
	// together on an empty PostgreSQL database would otherwise race on CREATE TABLE IF NOT EXISTS
	// (which is not atomic there: the loser fails on pg_type's unique index).
	if err := d.InTx(ctx, func(tx *Tx) error {
		if err := lockMigrations(ctx, d, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`)
		return err
	}); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	// Each pending migration checks again under the lock: another replica may have applied it
	// since the read above.
	for _, m := range list {
		body, err := migrations.ReadFile(dir + "/" + m.name)
		if err != nil {
			return err
		}
		err = d.InTx(ctx, func(tx *Tx) error {
			if err := lockMigrations(ctx, d, tx); err != nil {
				return err
			}
			var seen int
			if err := tx.QueryRowContext(ctx,
				`SELECT count(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&seen); err != nil {
				return err
			}
			if seen > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, m.version)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// lockMigrations takes, on PostgreSQL, the lock that lets one replica at a time create the
// bookkeeping table or apply a migration; it is released when tx ends. SQLite has one writer
// per database file already.
func lockMigrations(ctx context.Context, d *DB, tx *Tx) error {
	if d.Engine != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7262011)`)
	return err
}

// appliedMigrations returns the versions schema_migrations records; none when the table does not
// exist yet (a new database).
func (d *DB) appliedMigrations(ctx context.Context) (map[int]bool, error) {
	var exists bool
	query := `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations')`
	if d.Engine == Postgres {
		query = `SELECT to_regclass('schema_migrations') IS NOT NULL`
	}
	if err := d.write.QueryRowContext(ctx, query).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	if !exists {
		return applied, nil
	}
	rows, err := d.write.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}
