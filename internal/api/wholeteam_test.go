package api

import (
	"context"
	"errors"
	"testing"
)

// TestWholeTeamTurns: at most wholeTeamSlots are out at once; one more waits until a slot is
// given back, and gives up with its context.
func TestWholeTeamTurns(t *testing.T) {
	turns := newWholeTeamTurns()
	var done []func()
	for range wholeTeamSlots {
		d, err := turns.wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := turns.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait past the slots ended with %v, want context.Canceled", err)
	}
	got := make(chan func())
	go func() {
		d, err := turns.wait(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	select {
	case <-got:
		t.Fatal("a slot was handed out past wholeTeamSlots")
	default:
	}
	done[0]()
	(<-got)()
	done[1]()
	if len(turns) != 0 {
		t.Fatalf("%d slots still out", len(turns))
	}
}
