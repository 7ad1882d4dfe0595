package db

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestFaultOf sorts real errors of both drivers: the database that cannot be reached or is full
// is a fault, a refused value or a missing row is not.
func TestFaultOf(t *testing.T) {
	lite, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	lite.SetMaxOpenConns(1)
	mustExec := func(q string) {
		t.Helper()
		if _, err := lite.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)`)
	mustExec(`INSERT INTO t (id, v) VALUES (1, 'a')`)
	var pages int
	if err := lite.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	mustExec(`PRAGMA max_page_count = ` + itoa(pages))
	_, full := lite.Exec(`INSERT INTO t (v) VALUES ($1)`, strings.Repeat("x", 64<<10))
	_, unique := lite.Exec(`INSERT INTO t (id, v) VALUES (2, 'a')`)
	_, syntax := lite.Exec(`SELEC 1`)
	noRow := lite.QueryRow(`SELECT v FROM t WHERE id = 99`).Scan(new(string))

	pg, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	refused := pg.Ping()
	// A connection attempt the caller gave up on: a server that accepts and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	hanging, err := sql.Open("pgx", "postgres://postgres@"+silent.Addr().String()+"/none?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer hanging.Close()
	gone, leave := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer leave()
	connectCanceled := hanging.PingContext(gone)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		err  error
		want Fault
	}{
		{"sqlite full", full, FaultStorageFull},
		{"sqlite full, wrapped", wrapped(full), FaultStorageFull},
		{"postgres refused", refused, FaultUnavailable},
		{"postgres refused, wrapped", wrapped(refused), FaultUnavailable},
		{"sqlite unique", unique, NoFault},
		{"sqlite syntax", syntax, NoFault},
		{"no row", noRow, NoFault},
		{"canceled", canceled.Err(), NoFault},
		{"deadline", context.DeadlineExceeded, NoFault},
		{"connection attempt canceled", connectCanceled, NoFault},
		{"not found", ErrNotFound, NoFault},
	} {
		if c.err == nil {
			t.Errorf("%s: the statement succeeded; it was meant to fail", c.name)
			continue
		}
		if got := FaultOf(c.err); got != c.want {
			t.Errorf("%s: FaultOf(%v) = %q, want %q", c.name, c.err, got, c.want)
		}
	}
}

func wrapped(err error) error { return errors.Join(errors.New("create set"), err) }

func itoa(n int) string { return strconv.Itoa(n) }

// TestPostgresRestartIsNotSeen: after PostgreSQL terminated every connection of the pool (as a
// restart does), the next reads and write transactions succeed: the pool discards the closed
// connections instead of failing a request on each (discardClosedConn, inTxRetried).
func TestPostgresRestartIsNotSeen(t *testing.T) {
	base := os.Getenv("MGMTAPI_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("MGMTAPI_TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	app := "mgmtapi_restart_" + itoa(os.Getpid()) + "_" + itoa(int(time.Now().UnixNano()%1e9))
	url := base + "&application_name=" + app
	if !strings.Contains(base, "?") {
		url = base + "?application_name=" + app
	}
	d, err := Open(ctx, Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	// Open several connections, all idle in the pool afterwards.
	conns := make([]*sql.Conn, 6)
	for i := range conns {
		if conns[i], err = d.write.Conn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
	for round := range 3 {
		var terminated int
		if err := admin.QueryRow(`SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) x`, app).Scan(&terminated); err != nil {
			t.Fatal(err)
		}
		if terminated == 0 {
			t.Fatalf("round %d: no connection of the pool to terminate", round)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			// The pool's connections, not the hold's, which is taken again at once (postgresHold).
			var left int
			if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> $2`,
				app, d.hold.pid.Load()).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d backends still there 10 s after pg_terminate_backend", round, left)
			}
			time.Sleep(10 * time.Millisecond)
		}
		for i := range 8 {
			if err := d.Ping(ctx); err != nil {
				t.Fatalf("round %d (%d terminated): read %d: %v", round, terminated, i, err)
			}
			if err := d.InTx(ctx, func(tx *Tx) error {
				_, err := tx.ExecContext(ctx, `SELECT 1`)
				return err
			}); err != nil {
				t.Fatalf("round %d (%d terminated): write transaction %d: %v", round, terminated, i, err)
			}
		}
	}
}

// TestFullDiskFailsTheWholeBatchAsAFault: on SQLite, concurrent writes share a batch transaction;
// when one of them fills the database (SQLITE_FULL, from max_page_count here), the writes of the
// batch that fail are all told it is a full disk, never a bare error (which the API would answer
// 500), and the writes that fit in another batch succeed.
func TestFullDiskFailsTheWholeBatchAsAFault(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE filler (v TEXT)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := d.Read().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages+8))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	faults, failures := 0, 0
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for i := range errs {
			size := 100 // most fit, one in four does not
			if i%4 == 3 {
				size = 64 << 10
			}
			wg.Go(func() {
				errs[i] = d.InTx(ctx, func(tx *Tx) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO filler (v) VALUES ($1)`, strings.Repeat("x", size))
					return err
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err == nil {
				continue
			}
			failures++
			if FaultOf(err) != FaultStorageFull {
				t.Errorf("round %d, write %d: %v, which is not a storage-full fault", round, i, err)
			} else {
				faults++
			}
		}
		if err := d.InTx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM filler`)
			return err
		}); err != nil {
			t.Fatalf("round %d: empty the table: %v", round, err)
		}
	}
	if faults == 0 {
		t.Fatal("no write failed for lack of space; the test did not fill the database")
	}
	t.Logf("%d writes failed, all for a full disk", failures)
}

// TestPostgresStaysNotReadyWhileWritesFailForSpace: on PostgreSQL a write that commits does not
// make a full disk ready again (it may have fit in a page's free space while inserts that grow a
// table fail), so Ready answers "storage full" until no write failed for lack of space for
// storageFullHold.
func TestPostgresStaysNotReadyWhileWritesFailForSpace(t *testing.T) {
	base := os.Getenv("MGMTAPI_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("MGMTAPI_TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	d, err := Open(ctx, Options{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Ready(ctx); err != nil {
		t.Fatalf("before any failure: %v", err)
	}
	d.noteWriteOutcome(&pgconn.PgError{Code: "53100", Message: "could not extend file: No space left on device"})
	committed := d.InTx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE write_probe SET written_at = $1 WHERE id = 1`, tx.Now.Format(time.RFC3339Nano))
		return err
	})
	if committed != nil {
		t.Fatal(committed)
	}
	var notReady *NotReadyError
	if err := d.Ready(ctx); !errors.As(err, &notReady) || !strings.HasPrefix(notReady.PublicReason(), "storage full") {
		t.Fatalf("after a write failed for space and another committed: %v; want not ready, storage full", err)
	}
	d.storageFullAt.Store(time.Now().Add(-storageFullHold - time.Second).UnixNano())
	if err := d.Ready(ctx); err != nil {
		t.Fatalf("%s after the last write failed for space: %v; want ready", storageFullHold+time.Second, err)
	}
}
