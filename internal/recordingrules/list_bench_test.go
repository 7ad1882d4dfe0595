package recordingrules_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/recordingrules"
)

// BenchmarkTenConcurrentLists measures the peak heap while ten clients list the same 1,000 or
// 10,000 recording-rule sets at once (10,000 is the figure of issue 12), for the answer as the generated server
// writes it (the whole list decoded, then the whole body encoded, then written: "buffered", the
// generated encodeListRecordingRuleSetsResponse reproduced over the handler's list) and as the
// API serves it ("streamed"). Run each alone, e.g.
//
//	go test -run '^$' -bench 'TenConcurrentLists/sets=10000/streamed' -benchtime 5x ./internal/recordingrules/
//
// peak-heap-MiB is the most heap in objects (live or not yet collected) seen during the
// iterations; peak-RSS-MiB is the process's high-water mark (VmHWM), which includes the setup.
func BenchmarkTenConcurrentLists(b *testing.B) {
	for _, sets := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("sets=%d", sets), func(b *testing.B) { benchmarkTenConcurrentLists(b, sets) })
	}
}

func benchmarkTenConcurrentLists(b *testing.B, sets int) {
	const clients = 10
	env := apitest.Start(b, apitest.Options{}, db.SQLite)
	teamID, key := env.MustTeam(b, "bench")
	fillSets(b, env, key, sets)

	// The API alone, without the test server's conformance check (it buffers every answer).
	a, err := api.New(api.Options{DB: env.DB, Authn: auth.NewAuthenticator(env.DB, env.Clock.Now)})
	if err != nil {
		b.Fatal(err)
	}
	h := recordingrules.NewHandler(env.DB)
	buffered := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		list, err := h.ListRecordingRuleSets(auth.WithPrincipal(r.Context(), &auth.Principal{TeamID: teamID}))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(200)
		e := new(jx.Encoder)
		list.Encode(e)
		_, _ = e.WriteTo(w)
	})
	for _, c := range []struct {
		name    string
		handler http.Handler
	}{{"buffered", buffered}, {"streamed", a}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			runtime.GC()
			peak := watchHeap()
			var answerBytes atomic.Int64
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						n := listOnce(b, srv.URL+rulesPath, key)
						answerBytes.Store(n)
					}()
				}
				wg.Wait()
			}
			b.StopTimer()
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(answerBytes.Load())/(1<<20), "answer-MiB")
			if rss := peakRSS(); rss > 0 {
				b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
			}
		})
	}
}

// fillSets creates one set through the API and stores n-1 copies of it under new ids.
func fillSets(b *testing.B, env *apitest.Env, key string, n int) {
	b.Helper()
	res := env.JSON(b, "POST", rulesPath, key, `{"name":"bench set","groups":[
		{"name":"g1","interval":60,"rules":[{"record":"job:up:sum","expr":"sum by (job) (up)","labels":{"team":"a"}}]},
		{"name":"g2","rules":[{"record":"r2","expr":"rate(http_requests_total[5m])"}]}]}`)
	if res.Status != 200 {
		b.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(string(res.Body), `{"id":"`), `"}`)
	ctx := context.Background()
	var doc string
	var teamID int64
	if err := env.DB.Read().QueryRowContext(ctx, `SELECT team_id, document FROM recording_rule_sets WHERE id = $1`, id).Scan(&teamID, &doc); err != nil {
		b.Fatal(err)
	}
	err := env.DB.InTx(ctx, func(tx *db.Tx) error {
		for i := 1; i < n; i++ {
			newID := fmt.Sprintf("bench-%06d", i)
			_, err := tx.ExecContext(ctx,
				`INSERT INTO recording_rule_sets (team_id, id, name, document, created_at, updated_at)
				 VALUES ($1, $2, $3, $4, $5, $5)`,
				teamID, newID, "bench set", strings.Replace(doc, `"id":"`+id+`"`, `"id":"`+newID+`"`, 1),
				tx.Now.UnixMicro()+int64(i))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func listOnce(b *testing.B, url, key string) int64 {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return 0
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil || res.StatusCode != 200 {
		b.Errorf("list: status %d, %v", res.StatusCode, err)
	}
	return n
}

// watchHeap samples the heap every 100 µs until the returned function is called, which returns
// the most bytes seen in heap objects.
func watchHeap() func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

// peakRSS is the process's resident-set high-water mark in bytes, or 0 when unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
