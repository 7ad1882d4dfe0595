package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestEventsReachTheSinkInTheirTransaction: the sink gets a committed transaction's events in
// order, inside that transaction (what it writes commits with the event); a transaction whose
// function fails hands it nothing; a sink's error rolls the whole transaction back; without a
// sink events are dropped; under concurrent writers (SQLite's group commit) each transaction's
// events reach the sink once, with that transaction's own writes.
func TestEventsReachTheSinkInTheirTransaction(t *testing.T) {
	engines(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		insert := func(tx *db.Tx, id string) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO gc_rows (id, at) VALUES ($1, 0)`, id)
			return err
		}
		write := func(id string, kinds ...string) error {
			return d.InTx(ctx, func(tx *db.Tx) error {
				if err := insert(tx, id); err != nil {
					return err
				}
				for _, k := range kinds {
					tx.Emit(ctx, db.Event{TeamID: 1, EntityType: "cases", EntityID: id, Kind: k})
				}
				return nil
			})
		}

		// No sink: the write commits, the events go nowhere.
		if err := write("before-sink", "opened"); err != nil {
			t.Fatal(err)
		}

		var mu sync.Mutex
		var seen []string
		failOn := ""
		d.SetEventSink(func(ctx context.Context, tx *db.Tx, events []db.Event) error {
			var kinds []string
			for _, e := range events {
				kinds = append(kinds, e.Kind)
			}
			if events[0].EntityID == failOn {
				return errors.New("outbox full")
			}
			// The sink writes in the event's transaction: its row commits with it.
			if err := insert(tx, "outbox-"+events[0].EntityID); err != nil {
				return err
			}
			mu.Lock()
			seen = append(seen, events[0].EntityID+":"+strings.Join(kinds, ","))
			mu.Unlock()
			return nil
		})

		if err := write("a", "opened", "commented"); err != nil {
			t.Fatal(err)
		}
		if err := write("quiet"); err != nil { // no events: the sink is not called
			t.Fatal(err)
		}
		if err := d.InTx(ctx, func(tx *db.Tx) error {
			tx.Emit(ctx, db.Event{EntityID: "failed", Kind: "opened"})
			return errors.New("the area refused")
		}); err == nil {
			t.Fatal("a failing function committed")
		}
		failOn = "b"
		if err := write("b", "opened"); err == nil || !strings.Contains(err.Error(), "outbox full") {
			t.Fatalf("a failing sink: %v", err)
		}
		failOn = ""

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
		for _, id := range []string{"before-sink", "a", "outbox-a", "quiet"} {
			if !rows[id] {
				t.Errorf("row %s missing", id)
			}
		}
		for _, id := range []string{"outbox-before-sink", "outbox-quiet", "b", "outbox-b", "failed"} {
			if rows[id] {
				t.Errorf("row %s written", id)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[0] != "a:opened,commented" || len(seen) != 21 {
			t.Fatalf("the sink saw %v", seen)
		}
		for i := range 20 {
			id := fmt.Sprintf("c%02d", i)
			if !rows[id] || !rows["outbox-"+id] {
				t.Errorf("concurrent write %s: row %v, outbox row %v", id, rows[id], rows["outbox-"+id])
			}
		}
	})
}
