package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// orderRouter records the events it is asked to route, in order, and fails the first routing of
// the event whose cause is failCause.
type orderRouter struct {
	mu        sync.Mutex
	failCause string
	failed    bool
	routed    map[string][]string // entity → causes, in routing order (failures left out)
}

func (r *orderRouter) Route(_ context.Context, _ db.Querier, e delivery.Event) ([]delivery.Delivery, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Cause == r.failCause && !r.failed {
		r.failed = true
		return nil, errors.New("the router's read failed")
	}
	r.routed[e.EntityID] = append(r.routed[e.EntityID], e.Cause)
	return nil, nil
}

// TestRoutingKeepsEachEntitysOrderPastABatch: an entity with more events than one claim leases
// (a hot case's comments) has them all routed, in the order recorded, over several claims, with
// another entity's events interleaved; when one routing fails, the entity's later events wait for
// it (given back, their attempt not counted) while the other entity goes on, and once the failed
// event's lease ends the rest follow in order.
func TestRoutingKeepsEachEntitysOrderPastABatch(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		teamID, teamKey := env.MustTeam(t, "order")
		env.MustRouter(t, teamKey, "CASES")
		var wantHot, wantCold []string
		if err := env.DB.InTx(ctx, func(tx *db.Tx) error {
			for i := range 300 {
				entity, cause := "hot", fmt.Sprintf("hot-%03d", i)
				if i%10 == 9 {
					entity, cause = "cold", fmt.Sprintf("cold-%03d", i)
					wantCold = append(wantCold, cause)
				} else {
					wantHot = append(wantHot, cause)
				}
				tx.Emit(ctx, db.Event{TeamID: teamID, EntityType: "CASES", EntityID: entity, Kind: "commented", Cause: cause})
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		router := &orderRouter{failCause: "hot-150", routed: map[string][]string{}}
		w := delivery.NewWorker(delivery.Options{DB: env.DB, Router: router})
		if err := w.RouteEvents(ctx); err == nil {
			t.Fatal("RouteEvents answered nil; want the failed routing's error")
		}
		// Routing stops at the first pass with a failure: route what is due until nothing is.
		if err := w.RouteEvents(ctx); err != nil {
			t.Fatal(err)
		}
		failedAt := slices.Index(wantHot, "hot-150")
		if got := router.routed["hot"]; !slices.Equal(got, wantHot[:failedAt]) {
			t.Fatalf("hot entity before the failed event's lease ended: routed %d events %v…, want the %d before hot-150",
				len(got), got[:min(len(got), 5)], failedAt)
		}
		if got := router.routed["cold"]; !slices.Equal(got, wantCold) {
			t.Fatalf("cold entity: routed %v, want %v", got, wantCold)
		}
		var attempts []int
		rows, err := env.DB.Read().QueryContext(ctx, `SELECT attempts FROM notification_events ORDER BY created_at, seq`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			attempts = append(attempts, n)
		}
		rows.Close()
		if len(attempts) != len(wantHot)-failedAt || attempts[0] != 1 || slices.Max(attempts[1:]) != 0 {
			t.Fatalf("attempts of the events left: %v; want 1 for the failed one, 0 for the %d after it",
				attempts, len(wantHot)-failedAt-1)
		}

		env.Clock.Advance(time.Hour) // past the failed event's lease
		if err := w.RouteEvents(ctx); err != nil {
			t.Fatal(err)
		}
		if got := router.routed["hot"]; !slices.Equal(got, wantHot) {
			t.Fatalf("hot entity: routed %d events, want all %d in order", len(got), len(wantHot))
		}
		var left int
		if err := env.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM notification_events`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Fatalf("%d events left recorded; want none", left)
		}
	})
}
