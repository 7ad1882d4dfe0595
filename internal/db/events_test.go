package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestEventsAreRecordedWithTheirTransaction: a committed transaction's events are recorded in
// notification_events in the order emitted, each with the snapshot its area reads inside that
// transaction after all of the transaction's work (so it sees the whole change); a transaction
// whose function fails records nothing; a snapshot's error rolls the whole transaction back;
// under concurrent writers (SQLite's group commit) each transaction's events are recorded once,
// with that transaction's own writes.
func TestEventsAreRecordedWithTheirTransaction(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		exec(t, d, `INSERT INTO teams (id, name, created_at) VALUES (1, 'events', 0)`)
		exec(t, d, routerRow(1))
		insert := func(tx *db.Tx, id string) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, id)
			return err
		}
		// The snapshot reads the entity's rows inside the transaction: the count of rows whose id
		// starts with it, the entity's own row written after the Emit among them.
		snapshot := func(id string) func(context.Context, *db.Tx) ([]byte, string, error) {
			return func(ctx context.Context, tx *db.Tx) ([]byte, string, error) {
				if id == "refused" {
					return nil, "", errors.New("entity unreadable")
				}
				var n int
				if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM gc_rows WHERE id LIKE $1`, id+"%").Scan(&n); err != nil {
					return nil, "", err
				}
				return []byte(fmt.Sprintf(`{"rows":%d}`, n)), "case-of-" + id, nil
			}
		}
		write := func(id string, kinds ...string) error {
			return d.InTx(ctx, func(tx *db.Tx) error {
				for _, k := range kinds {
					tx.Emit(ctx, db.Event{TeamID: 1, EntityType: "CASES", EntityID: id, Kind: k, Cause: "c-" + k, Snapshot: snapshot(id)})
				}
				return insert(tx, id) // after the Emit: the snapshot still sees it
			})
		}

		if err := write("a", "opened", "commented"); err != nil {
			t.Fatal(err)
		}
		if err := write("quiet"); err != nil { // no events: nothing recorded
			t.Fatal(err)
		}
		if err := d.InTx(ctx, func(tx *db.Tx) error {
			tx.Emit(ctx, db.Event{TeamID: 1, EntityType: "CASES", EntityID: "failed", Kind: "opened"})
			return errors.New("the area refused")
		}); err == nil {
			t.Fatal("a failing function committed")
		}
		if err := write("refused", "opened"); err == nil || !strings.Contains(err.Error(), "entity unreadable") {
			t.Fatalf("a failing snapshot: %v", err)
		}

		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := write(fmt.Sprintf("c%02d", i), "changed"); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()

		rows := rowIDs(t, d)
		if !rows["a"] || !rows["quiet"] || rows["failed"] || rows["refused"] {
			t.Errorf("rows %v", rows)
		}
		recorded, err := d.Read().QueryContext(ctx, `SELECT entity_id, kind, cause, snapshot, case_id, seq
			FROM notification_events ORDER BY created_at, entity_id, seq`)
		if err != nil {
			t.Fatal(err)
		}
		defer recorded.Close()
		var seen []string
		for recorded.Next() {
			var id, kind, cause, snap, caseID string
			var seq int
			if err := recorded.Scan(&id, &kind, &cause, &snap, &caseID, &seq); err != nil {
				t.Fatal(err)
			}
			seen = append(seen, fmt.Sprintf("%s:%s:%s:%s:%s:%d", id, kind, cause, snap, caseID, seq))
		}
		if len(seen) != 22 || seen[0] != `a:opened:c-opened:{"rows":1}:case-of-a:0` || seen[1] != `a:commented:c-commented:{"rows":1}:case-of-a:1` {
			t.Fatalf("recorded %v", seen)
		}
		for i := range 20 {
			want := fmt.Sprintf(`c%02d:changed:c-changed:{"rows":1}:case-of-c%02d:0`, i, i)
			if !slices.Contains(seen, want) {
				t.Errorf("concurrent write c%02d: %v", i, seen)
			}
		}
	})
}

// routerRow is the SQL that gives team a notification router: its events are then recorded.
func routerRow(team int) string {
	return fmt.Sprintf(`INSERT INTO notification_routers (team_id, id, name, document, created_at, updated_at)
		VALUES (%d, 'router-%d', 'router', '{}', 0, 0)`, team, team)
}

// TestEventsAreRecordedOnlyWhereSomethingRoutes: an event is recorded only when its team has a
// notification router, or, for an incident's event (ALERTS), an alert definition; otherwise the
// transaction commits its own work and records nothing, and the events of other teams are
// recorded as before.
func TestEventsAreRecordedOnlyWhereSomethingRoutes(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		exec(t, d, `INSERT INTO teams (id, name, created_at) VALUES (1, 'routed', 0), (2, 'quiet', 0)`)
		exec(t, d, routerRow(1))
		var snapshots []string // the entities whose snapshot was read
		write := func(team int64, entityType, id string) {
			t.Helper()
			if err := d.InTx(ctx, func(tx *db.Tx) error {
				tx.Emit(ctx, db.Event{TeamID: team, EntityType: entityType, EntityID: id, Kind: "changed",
					Snapshot: func(context.Context, *db.Tx) ([]byte, string, error) {
						snapshots = append(snapshots, id)
						return []byte(`{}`), "", nil
					}})
				return insertRow(id)(tx)
			}); err != nil {
				t.Fatal(err)
			}
		}
		recorded := func() []string {
			t.Helper()
			rows, err := d.Read().QueryContext(ctx, `SELECT entity_id FROM notification_events ORDER BY entity_id`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var ids []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			return ids
		}
		write(2, "CASES", "q-case-1")
		write(2, "ALERTS", "q-alert-1")
		write(1, "CASES", "r-case-1")
		if got := recorded(); !slices.Equal(got, []string{"r-case-1"}) {
			t.Fatalf("with a router for team 1 only: recorded %v", got)
		}
		if ids := rowIDs(t, d); !ids["q-case-1"] || !ids["q-alert-1"] {
			t.Fatalf("the transactions' own work was not kept: %v", ids)
		}
		// On SQLite an event nothing routes costs no snapshot; PostgreSQL asks as it inserts.
		if d.Engine == db.SQLite && !slices.Equal(snapshots, []string{"r-case-1"}) {
			t.Fatalf("snapshots read: %v", snapshots)
		}
		// An alert definition routes incidents, not cases.
		exec(t, d, `INSERT INTO alert_defs (team_id, id, version_id, name, type, priority, enabled, status, document,
			created_at, updated_at) VALUES (2, 'def', 'v1', 'def', 'METRIC_THRESHOLD', 'P1', 1, 'ACTIVE', '{}', 0, 0)`)
		write(2, "CASES", "q-case-2")
		write(2, "ALERTS", "q-alert-2")
		if got := recorded(); !slices.Equal(got, []string{"q-alert-2", "r-case-1"}) {
			t.Fatalf("with an alert definition for team 2: recorded %v", got)
		}
		exec(t, d, routerRow(2))
		write(2, "CASES", "q-case-3")
		if got := recorded(); !slices.Equal(got, []string{"q-alert-2", "q-case-3", "r-case-1"}) {
			t.Fatalf("with a router for team 2: recorded %v", got)
		}
	})
}

// TestAWriteToAGoneTeamIsReferenceGone: a write that refers to a team that is not there (deleted
// while the request that makes it was served) fails as ErrReferenceGone on both engines, which
// the API answers 409 rather than 500, and changes nothing.
func TestAWriteToAGoneTeamIsReferenceGone(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		err := d.InTx(ctx, func(tx *db.Tx) error {
			if err := insertRow("gone-team")(tx); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, routerRow(4242))
			return err
		})
		if !db.IsReferenceGone(err) || db.IsConflict(err) {
			t.Fatalf("a write naming a missing team: %v", err)
		}
		if rowIDs(t, d)["gone-team"] {
			t.Fatal("the transaction's other write was kept")
		}
		if db.IsReferenceGone(errors.New("another failure")) {
			t.Fatal("an unrelated error is taken for a missing reference")
		}
	})
}
