package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFaultsSQLiteDiskFull runs the server on SQLite in a 128 MiB tmpfs under load (4 writers and
// a reader), fills the rest of the tmpfs with a file until ENOSPC and keeps writing: every answer
// is a 2xx or a 507/503 with Retry-After naming "storage full", never a 500, and /readyz says not
// ready naming it. Then the file is deleted: writes succeed again within 10 s and /readyz is
// ready, without a restart. Stopped, the database passes PRAGMA integrity_check; restarted on it,
// the server has every acknowledged write.
func TestFaultsSQLiteDiskFull(t *testing.T) {
	requireFaults(t)
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	// 128 MiB: once the filler is removed, the writers' 2 s after the recovery (about 17 MiB here)
	// must not fill the disk again, or the server's checkpoint at its stop and the integrity
	// check's -shm file find no room (SQLITE_IOERR_SHMSIZE).
	// Mounted before the server starts, so it is unmounted after the server is killed.
	mountTmpfs(t, disk, "size=128m")
	data := filepath.Join(disk, "data")
	logs := filepath.Join(dir, "server.log") // not on the full disk
	srv := startServerUnder(t, logs, nil, []string{"--data-dir", data})
	load := startFaultLoad(t, srv.base, 4, faultContract{
		refusals: []int{http.StatusInsufficientStorage, http.StatusServiceUnavailable}, word: "storage full"}, 10*time.Second)
	defer load.finish()
	time.Sleep(time.Second)

	fillAndFree(t, srv, load, logs, disk, "the disk", nil)
	t.Logf("%s; metrics:\n%s", logSummary(logs), metricLines(srv.base, "mgmtapi_db_", "mgmtapi_database_", `status="5`))

	srv.interrupt(t)
	t.Logf("stopped: the data directory holds %s", dirListing(data))
	// Read-write, as the server opens it: a -wal file left beside it is recovered first (a
	// read-only open of a WAL whose -shm is short fails with a disk I/O error instead).
	if verdict := integrityCheckOf(t, filepath.Join(data, "mgmtapi.db"), "file:"+filepath.Join(data, "mgmtapi.db")); verdict != "ok" {
		t.Fatalf("integrity_check after the disk was full: %s", verdict)
	}
	srv = startServerUnder(t, logs, nil, []string{"--data-dir", data})
	verifyAcknowledged(t, srv, load.acks, logs)
	load.verifyAlerts(t, srv.base)
	t.Logf("integrity_check ok; after a restart every acknowledged write is there: %d sets, %d alerts", len(load.acks), len(load.alerts))
}

// mountTmpfs mounts a tmpfs with the options on dir, and unmounts it when the test ends: after
// whatever the test starts later (cleanups run last first), which must have let go of it.
func mountTmpfs(t *testing.T, dir, options string) {
	t.Helper()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("unmount the tmpfs: %v\n%s", err, out)
		}
	})
}

// fillAndFree fills the file system of dir under the load (see fillDisk) and waits until 20
// requests were refused and /readyz says not ready naming "storage full"; runs whileFull (when
// given); then frees the space and waits for the server to recover (faultLoad.recovered), logs
// the figures and checks the load kept the contract. It answers the answers counted while full.
func fillAndFree(t *testing.T, srv *serverProcess, load *faultLoad, logs, dir, what string, whileFull func()) map[string]int {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	filled := fillDisk(t, filler)
	full := time.Now()
	// Writes go on until the database has nowhere to grow.
	for load.unsuccessful() < 20 {
		if time.Since(full) > time.Minute {
			counts, breaches := load.snapshot()
			t.Fatalf("fewer than 20 requests failed in the minute after %s filled: %v %q\n%s", what, counts, breaches, tail(logs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	firstRefusals := time.Since(full)
	notReadyAfter := awaitReadiness(t, srv.base, 10*time.Second, "with "+what+" full", func(status int, body string) bool {
		return notReady(status, body, "storage full")
	})
	duringFull, _ := load.snapshot()
	if whileFull != nil {
		whileFull()
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	first, readyAfter := load.recovered(t, srv, logs, freed, what+" was freed")
	t.Logf("filler of %d MiB; 20 requests unsuccessful %s after %s filled, /readyz not ready %s later; answers until it was freed: %v; first write acknowledged %s after it was freed, /readyz 200 after %s",
		filled>>20, firstRefusals.Round(time.Millisecond), what, notReadyAfter.Round(time.Millisecond), duringFull,
		first.Round(time.Millisecond), readyAfter.Round(time.Millisecond))
	load.check(t, what+" filled and freed")
	return duringFull
}

// fillDisk writes the file at path until its file system has no space left (1 MiB at a time,
// then 4 KiB at a time for the rest) and returns its size.
func fillDisk(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size int64
	for _, chunk := range []int{1 << 20, 4 << 10} {
		block := make([]byte, chunk)
		for {
			n, err := f.Write(block)
			size += int64(n)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatalf("fill the disk: %v", err)
			}
		}
	}
	return size
}

// dirListing names the files of dir with their sizes.
func dirListing(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var files []string
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			files = append(files, fmt.Sprintf("%s (%d bytes)", e.Name(), info.Size()))
		}
	}
	return strings.Join(files, ", ")
}
