package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the process's collector settings apply unless GOGC or GOMEMLIMIT is set, in which
// case the runtime's reading of the variable stays.
func TestTuneGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})

	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GC percent without GOGC: %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != gcMemoryLimit {
		t.Errorf("memory limit without GOMEMLIMIT: %d, want %d", got, gcMemoryLimit)
	}

	debug.SetMemoryLimit(1 << 40)
	env := map[string]string{"GOGC": "100", "GOMEMLIMIT": "1TiB"}
	tuneGC(func(name string) string { return env[name] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent with GOGC=100: %d, want 100 (the variable's)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("memory limit with GOMEMLIMIT set: %d, want %d (the variable's)", got, int64(1<<40))
	}
}
