package db_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestReplicasStartTogetherOnAnEmptyDatabase starts six replicas at the same moment on an empty
// PostgreSQL schema, ten times: every one of them must come up, the migrations applied once.
// Before the migration bookkeeping was created under the migrations' lock, two replicas could
// both try to create schema_migrations and one exited on pg_type's unique constraint.
func TestReplicasStartTogetherOnAnEmptyDatabase(t *testing.T) {
	const rounds, replicas = 10, 6
	for round := range rounds {
		url := postgresURL(t)
		start := make(chan struct{})
		errs := make([]error, replicas)
		opened := make([]*db.DB, replicas)
		var wg sync.WaitGroup
		for i := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				opened[i], errs[i] = db.Open(context.Background(), db.Options{URL: url})
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, replica %d: %v", round, i, err)
				continue
			}
			opened[i].Close()
		}
		if t.Failed() {
			return
		}
	}
}
