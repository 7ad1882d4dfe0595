package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// auditRows returns the audit records by request id: their resource ids.
func auditRows(t *testing.T, d *db.DB) map[string][]string {
	t.Helper()
	rows, err := d.Read().QueryContext(context.Background(),
		`SELECT request_id, resource_ids, team_id, key_id, key_name, operation, client, status FROM audit_records`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var (
			requestID, resources, keyID, keyName, operation, client string
			team, status                                            int64
		)
		if err := rows.Scan(&requestID, &resources, &team, &keyID, &keyName, &operation, &client, &status); err != nil {
			t.Fatal(err)
		}
		if team != 7 || keyID != "key-1" || keyName != "writer" || operation != "Write" || client != "192.0.2.1" || status != 200 {
			t.Errorf("record %s: team %d key %s %q operation %s client %s status %d", requestID, team, keyID, keyName,
				operation, client, status)
		}
		if _, dup := out[requestID]; dup {
			t.Errorf("request %s has two audit records", requestID)
		}
		var ids []string
		if err := json.Unmarshal([]byte(resources), &ids); err != nil {
			t.Fatalf("record %s: resource ids %q: %v", requestID, resources, err)
		}
		out[requestID] = ids
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func auditContext(requestID string) context.Context {
	return db.WithAudit(context.Background(), &db.AuditEntry{
		TeamID: 7, KeyID: "key-1", KeyName: "writer", Operation: "Write", PathIDs: []string{"path-" + requestID},
		RequestID: requestID, Client: "192.0.2.1", Status: 200,
	})
}

// TestAuditRecordsFollowTheirTransactions runs 48 concurrent audited write transactions, on SQLite
// all in one group-commit batch (each in its own savepoint), a third of which fail after writing
// (an error, a failing BeforeCommit). Each one that succeeded has exactly one audit record, with
// the path's ids, the ids it minted and the ones it declared; the failed ones have none, and the
// others of the batch still commit. A transaction whose entry has no key (authentication not
// passed) and one without an entry write no record.
func TestAuditRecordsFollowTheirTransactions(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		const n = 48
		before := d.GroupCommitStats()
		minted := make([]string, n)
		errs, heldErr := queueBehindHeldWriter(t, d, n, func(i int) error {
			requestID := fmt.Sprint("req-", i)
			return d.InTx(auditContext(requestID), func(tx *db.Tx) error {
				minted[i] = tx.NewID()
				tx.AuditResource("declared-" + requestID)
				if _, err := tx.ExecContext(context.Background(), `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, requestID); err != nil {
					return err
				}
				switch i % 3 {
				case 1:
					return errors.New("refused")
				case 2:
					if i%2 == 0 {
						tx.BeforeCommit(func() error { return errors.New("late refusal") })
					}
				}
				return nil
			})
		})
		if heldErr != nil {
			t.Fatalf("held transaction: %v", heldErr)
		}
		// No key yet (refused before authentication passed), and no entry at all: no record.
		unauthenticated := db.WithAudit(context.Background(), &db.AuditEntry{Operation: "Write", RequestID: "anonymous"})
		for _, ctx := range []context.Context{unauthenticated, context.Background()} {
			if err := d.InTx(ctx, func(tx *db.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, tx.NewID())
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}

		records := auditRows(t, d)
		rows := rowIDs(t, d)
		kept := 0
		for i, err := range errs {
			requestID := fmt.Sprint("req-", i)
			failed := i%3 == 1 || i%3 == 2 && i%2 == 0
			ids, recorded := records[requestID]
			switch {
			case failed && (err == nil || recorded || rows[requestID]):
				t.Errorf("%s failed: error %v, record %v, row %v; want an error and neither", requestID, err, recorded, rows[requestID])
			case !failed && (err != nil || !recorded || !rows[requestID]):
				t.Errorf("%s succeeded: error %v, record %v, row %v; want no error, both", requestID, err, recorded, rows[requestID])
			case !failed:
				kept++
				want := []string{"path-" + requestID, minted[i], "declared-" + requestID}
				if !slices.Equal(ids, want) {
					t.Errorf("%s: resource ids %q, want %q", requestID, ids, want)
				}
			}
		}
		if len(records) != kept {
			t.Errorf("%d audit records, want %d (one per transaction that succeeded, none without a key)", len(records), kept)
		}
		stats := d.GroupCommitStats()
		// The held transaction, the kept audited ones, then the two unaudited ones.
		if commits, txs := stats.Commits-before.Commits, stats.Transactions-before.Transactions; commits != 3 || txs != int64(kept+3) {
			t.Errorf("commits = %d for %d transactions, want 3 for %d (the audited ones in one batch)", commits, txs, kept+3)
		}
	})
}

// TestAuditRecordOnceWhenRunAgain has two PostgreSQL replicas deadlock in audited transactions:
// the one PostgreSQL rolls back runs again, and each request still has exactly one record (the
// rolled-back attempt's record went with it).
func TestAuditRecordOnceWhenRunAgain(t *testing.T) {
	url := postgresURL(t)
	a := open(t, db.Options{URL: url})
	b, err := db.Open(context.Background(), db.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	exec(t, a, `INSERT INTO gc_counter (id, n) VALUES (2, 0)`)
	var locked sync.WaitGroup
	locked.Add(2)
	var once [2]sync.Once
	attempts := [2]int{}
	cross := func(d *db.DB, who, first, second int) error {
		ctx := auditContext(fmt.Sprint("replica-", who))
		return d.InTx(ctx, func(tx *db.Tx) error {
			attempts[who]++
			if _, err := tx.ExecContext(ctx, `UPDATE gc_counter SET n = n + 1 WHERE id = $1`, first); err != nil {
				return err
			}
			once[who].Do(func() {
				locked.Done()
				locked.Wait()
			})
			_, err := tx.ExecContext(ctx, `UPDATE gc_counter SET n = n + 1 WHERE id = $1`, second)
			return err
		})
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = cross(a, 0, 1, 2) }()
	go func() { defer wg.Done(); errs[1] = cross(b, 1, 2, 1) }()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v, want success", i, err)
		}
	}
	if attempts[0]+attempts[1] < 3 {
		t.Fatalf("attempts %v: no transaction ran again, the test proves nothing", attempts)
	}
	records := auditRows(t, a)
	if len(records) != 2 || records["replica-0"] == nil || records["replica-1"] == nil {
		t.Errorf("audit records %v, want one per replica's request", records)
	}
}

// TestMigrationsAreNotAudited opens a fresh database with a context that carries an audit entry:
// the migrations (which come before the audit table) write no record, and the open succeeds.
func TestMigrationsAreNotAudited(t *testing.T) {
	d, err := db.Open(auditContext("open"), db.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open with an audited context: %v", err)
	}
	defer d.Close()
	var n int
	if err := d.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM audit_records`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d audit records after the migrations (%v), want 0", n, err)
	}
}

// TestAuditRecordKeepsItsTextExactly writes a record whose texts hold quotes, backslashes, a
// dollar placeholder and non-ASCII letters, and reads them back unchanged (on PostgreSQL the
// record is sent with the COMMIT as one simple-protocol query, its arguments quoted by pgx).
func TestAuditRecordKeepsItsTextExactly(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		e := &db.AuditEntry{TeamID: 42, KeyID: `k'ey\'; DROP TABLE gc_rows; --`, KeyName: `O'Brien \\ "ops" $1 Ünïcode ✓`,
			Operation: "Op$2", PathIDs: []string{`a'b`, `c\d`}, RequestID: "req E'\\x41'", Client: "[::1]:5000", Status: 201}
		if err := d.InTx(db.WithAudit(ctx, e), insertRow("quoted")); err != nil {
			t.Fatal(err)
		}
		var team int64
		var keyID, keyName, operation, resources, requestID, client string
		var status int
		err := d.Read().QueryRowContext(ctx, `SELECT team_id, key_id, key_name, operation, resource_ids, request_id, client, status
			FROM audit_records WHERE request_id = $1`, e.RequestID).Scan(&team, &keyID, &keyName, &operation, &resources, &requestID, &client, &status)
		if err != nil {
			t.Fatal(err)
		}
		if team != 42 || keyID != e.KeyID || keyName != e.KeyName || operation != e.Operation || requestID != e.RequestID ||
			client != e.Client || status != 201 || resources != `["a'b","c\\d"]` {
			t.Errorf("record = %d %q %q %q %s %q %q %d, want the entry's values", team, keyID, keyName, operation, resources, requestID, client, status)
		}
		if ids := rowIDs(t, d); !ids["quoted"] {
			t.Error("the audited row is missing")
		}
	})
}

func insertRow(id string) func(tx *db.Tx) error {
	return func(tx *db.Tx) error {
		_, err := tx.ExecContext(context.Background(), `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, id)
		return err
	}
}

// TestAuditRecordsFailTheirBatch has a trigger refuse one audit record of a batch: the batch
// writes its members' records together before its COMMIT (on PostgreSQL in its last member's
// message, or, when that member failed, by the writer), so every member of the batch fails and
// nothing of it remains, the held one without a record included. The writer then goes on: the
// next audited transaction commits with its record.
func TestAuditRecordsFailTheirBatch(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		if d.Engine == db.SQLite {
			exec(t, d, `CREATE TRIGGER audit_poison BEFORE INSERT ON audit_records WHEN NEW.request_id = 'req-poison'
				BEGIN SELECT RAISE(ABORT, 'poisoned audit record'); END`)
		} else {
			exec(t, d, `CREATE FUNCTION audit_poison() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF NEW.request_id = 'req-poison' THEN RAISE EXCEPTION 'poisoned audit record'; END IF; RETURN NEW; END $$`)
			exec(t, d, `CREATE TRIGGER audit_poison BEFORE INSERT ON audit_records FOR EACH ROW EXECUTE FUNCTION audit_poison()`)
		}
		const n = 12
		errs, heldErr := queueBehindHeldWriter(t, d, n, func(i int) error {
			requestID := fmt.Sprint("req-", i)
			if i == n/2 {
				requestID = "req-poison"
			}
			return d.InTx(auditContext(requestID), func(tx *db.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, requestID); err != nil {
					return err
				}
				if i >= n-2 { // the last to queue fail themselves: the batch's last member may be undone
					return errors.New("refused")
				}
				return nil
			})
		})
		poisoned := strings.Contains(fmt.Sprint(heldErr), "poisoned audit record")
		for i, err := range append(errs, heldErr) {
			if err == nil {
				t.Errorf("transaction %d of the batch committed although its batch's audit records failed", i)
			}
			poisoned = poisoned || strings.Contains(fmt.Sprint(err), "poisoned audit record")
		}
		if !poisoned {
			t.Errorf("no transaction was told of the refused record: %v", errs)
		}
		if rows := rowIDs(t, d); len(rows) != 0 {
			t.Errorf("rows %v remain of a batch that failed", rows)
		}
		if records := auditRows(t, d); len(records) != 0 {
			t.Errorf("audit records %v remain of a batch that failed", records)
		}
		if err := d.InTx(auditContext("req-after"), func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ('after', 0)`)
			return err
		}); err != nil {
			t.Fatalf("the transaction after the failed batch: %v", err)
		}
		if records := auditRows(t, d); len(records) != 1 || records["req-after"] == nil {
			t.Errorf("audit records %v after the failed batch, want req-after's alone", records)
		}
	})
}
