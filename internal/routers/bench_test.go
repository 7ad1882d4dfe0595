package routers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
)

// BenchmarkIngestWithRouting is the cost routing adds to an alert's write: each iteration posts
// one Alertmanager notification of a new alert group (a case opened, an incident triggered,
// through the whole HTTP stack), for a team without routers, and for a team whose router sends every alert to
// one connector (its rule's condition evaluated, the system preset rendered, one outbox record
// written in the incident's transaction; nothing is sent: no worker runs).
func BenchmarkIngestWithRouting(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	for _, engine := range engines {
		for _, routed := range []bool{false, true} {
			name := fmt.Sprintf("%s/routers=%v", engine, routed)
			b.Run(name, func(b *testing.B) {
				env := apitest.Start(b, apitest.Options{}, engine)
				key := env.RootKey
				if routed {
					conn := connectorWith(b, env, key, "GENERIC_HTTPS", map[string]string{"url": "https://receiver.example/hook"})
					res := env.JSON(b, http.MethodPost, routersPath, key, `{"router":{"name":"all","entityType":"ALERTS",
						"rules":[{"condition":"alertDef.priority == 'P1'","targets":[{"connectorId":"`+conn+`"}]}]}}`)
					if res.Status != http.StatusOK {
						b.Fatalf("router: %d %s", res.Status, res.Body)
					}
				}
				ingest := env.MustKey(b, key, "contextual-data:SendData")
				t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if res := env.JSON(b, http.MethodPost, "/ingest/alertmanager/v1", ingest, newAlertGroup(i, t0)); res.Status != http.StatusOK {
						b.Fatalf("ingest: %d %s", res.Status, res.Body)
					}
				}
			})
		}
	}
}

// BenchmarkIngestLatencyWithSlowTemplate is what a slow template costs an alert's write now that
// routing runs in the delivery worker (issue 33 §5): one client posts Alertmanager notifications
// of new alert groups (a case opened and an incident triggered each) to two servers of the same
// engine, in alternating rounds (of 100 ingests each, at least six): "base", a team without
// routers, and "slow", a team whose router sends every alert to a generic connector through a
// preset whose headers and body templates take about 200 ms to render (calibrated at the start:
// nested loops that render nothing), with its delivery worker running during its rounds.
// Alternating keeps the machine's other load out of the comparison: both sides meet the same
// noise. It reports each side's p50 and p99 (ms), p99-ratio (slow ÷ base; the target is
// ≤ 1.10) and the notifications the worker sent. The sub-benchmark templates=off runs no worker:
// its ratio is what the comparison itself gives, about 1.
func BenchmarkIngestLatencyWithSlowTemplate(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	// The preset's two fields, headers and body, each render a loop of about 100 ms: about 200 ms
	// of templates per notification (an evaluation's step bound keeps one field shorter).
	loop, took := slowTemplate(b, 100*time.Millisecond)
	b.Logf("each of the two slow fields renders in %s", took.Round(time.Millisecond))
	for _, engine := range engines {
		for _, where := range []string{"child", "paced", "unpaced", "off"} {
			benchmarkSlowTemplate(b, engine, where, loop)
		}
	}
}

// benchmarkSlowTemplate is one engine's part of BenchmarkIngestLatencyWithSlowTemplate, with the
// worker's templates evaluated where says: in the evaluation child, paced while requests are
// served (as the server wires it), or in the server's process, paced or not; or with no worker
// ("off").
func benchmarkSlowTemplate(b *testing.B, engine db.Engine, where string, loop string) {
	b.Run(fmt.Sprintf("%s/templates=%s", engine, where), func(b *testing.B) {
		base := apitest.Start(b, apitest.Options{}, engine)
		slow := apitest.Start(b, apitest.Options{}, engine)
		var sent atomic.Int64
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
		defer receiver.Close()
		key := slow.RootKey
		conn := connectorWith(b, slow, key, "GENERIC_HTTPS", map[string]string{"url": receiver.URL + "/hook"})
		preset := apitest.Decode[struct{ Preset struct{ ID string } }](b, slow.JSON(b, http.MethodPost, presetPath, key,
			`{"preset":{"name":"slow","entityType":"ALERTS","connectorType":"GENERIC_HTTPS","parentId":"preset_system_generic_https_alerts_empty",
				"configOverrides":[{"conditionType":{"matchEntityType":{}},"messageConfig":{"fields":[{"fieldName":"headers","template":`+strconv.Quote(loop+"{}")+`},`+
				`{"fieldName":"body","template":`+strconv.Quote(loop+`{"status":"{{alert.status}}"}`)+`}]}}]}}`)).Preset.ID
		res := slow.JSON(b, http.MethodPost, routersPath, key, `{"router":{"name":"all","entityType":"ALERTS",
				"rules":[{"condition":"true","targets":[{"connectorId":"`+conn+`","presetId":"`+preset+`"}]}]}}`)
		if res.Status != http.StatusOK {
			b.Fatalf("router: %d %s", res.Status, res.Body)
		}
		opts := delivery.Options{Policy: delivery.Policy{AllowPrivate: true}, PollInterval: 20 * time.Millisecond}
		opts.InProcessTemplates = where != "child"
		if where == "unpaced" {
			opts.Serving = func() bool { return false }
		}
		worker := slow.NewWorker(opts)
		ingestKeys := map[*apitest.Env]string{base: base.MustKey(b, base.RootKey, "contextual-data:SendData"),
			slow: slow.MustKey(b, key, "contextual-data:SendData")}
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		post := func(env *apitest.Env, i int) time.Duration {
			start := time.Now()
			res := env.JSON(b, http.MethodPost, "/ingest/alertmanager/v1", ingestKeys[env], newAlertGroup(i, t0))
			took := time.Since(start)
			if res.Status != http.StatusOK {
				b.Fatalf("ingest: %d %s", res.Status, res.Body)
			}
			return took
		}
		// Many short rounds: the machine's other load falls on both sides alike.
		rounds := max(6, b.N/100)
		// Each round begins with requests that are not counted, on either side: the first
		// requests after a pause (the other side's round, the wait for the child) are slower on
		// both sides, more so the longer the pause (base rounds after 600 ms of idling had p99
		// 5.7 ms against 3.9–4.9 ms without it; 4.7 with these requests). And the worker runs
		// for settle before them on the slow side: a worker's start
		// (its first claim of a batch of events) meets the first request of every round here,
		// and no request of a server, whose worker runs all along.
		const warmup, settle = 10, 50 * time.Millisecond
		warm := func(env *apitest.Env, r int) {
			for i := range warmup {
				post(env, b.N+r*warmup+i)
			}
		}
		var baseTimes, slowTimes []time.Duration
		b.ResetTimer()
		for r := range rounds {
			from, to := r*b.N/rounds, (r+1)*b.N/rounds
			warm(base, r)
			for i := from; i < to; i++ {
				baseTimes = append(baseTimes, post(base, i))
			}
			// The worker routes and renders only while the slow side's requests are made.
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			if where != "off" {
				go func() { defer close(done); worker.Run(ctx) }()
				time.Sleep(settle)
			} else {
				close(done)
			}
			warm(slow, r)
			for i := from; i < to; i++ {
				slowTimes = append(slowTimes, post(slow, i))
			}
			stop()
			<-done
			// An evaluation the worker abandoned may still run in the evaluation child: the base
			// round begins once the child has answered it (an offloaded evaluation waits for
			// the answers owed before its own).
			if _, err := notifyexpr.RenderContext(notifyexpr.Offloaded(context.Background()), "{}", nil); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		at := func(all []time.Duration, q float64) float64 {
			if len(all) == 0 {
				return 0
			}
			slices.Sort(all)
			return float64(all[min(len(all)-1, int(q*float64(len(all))))]) / float64(time.Millisecond)
		}
		b.ReportMetric(at(baseTimes, 0.5), "base-p50-ms")
		b.ReportMetric(at(baseTimes, 0.99), "base-p99-ms")
		b.ReportMetric(at(slowTimes, 0.5), "slow-p50-ms")
		b.ReportMetric(at(slowTimes, 0.99), "slow-p99-ms")
		if p99 := at(baseTimes, 0.99); p99 > 0 {
			b.ReportMetric(at(slowTimes, 0.99)/p99, "p99-ratio")
		}
		b.ReportMetric(float64(sent.Load()), "sent")
		b.ReportMetric(0, "ns/op")
	})
}

// newAlertGroup is the Alertmanager notification of the i-th new alert group of a benchmark: one
// firing alert DiskFull<i>, started at t0.
func newAlertGroup(i int, t0 time.Time) string {
	name := fmt.Sprintf("DiskFull%d", i)
	alert := map[string]any{"status": "firing", "fingerprint": "fp-" + name,
		"labels":   map[string]string{"alertname": name, "severity": "critical"},
		"startsAt": t0.Format(time.RFC3339), "endsAt": "0001-01-01T00:00:00Z"}
	body, _ := json.Marshal(map[string]any{"version": "4", "groupKey": `{}:{alertname="` + name + `"}`, "status": "firing",
		"receiver": "mgmtapi", "groupLabels": map[string]string{"alertname": name}, "alerts": []any{alert}})
	return string(body)
}

// slowTemplate is a loop that renders nothing in about want, on this machine now, within the
// evaluation's bounds: two nested loops whose size is found by trying (at most 190000 steps of
// the 200000 an evaluation may take; on a fast machine that bound, not want, sets the time); took
// is its render time.
func slowTemplate(b *testing.B, want time.Duration) (loop string, took time.Duration) {
	entity, err := notifyexpr.SampleEntity(notifyexpr.EntityAlerts, "")
	if err != nil {
		b.Fatal(err)
	}
	const maxN = 435 // 435² ≈ 189000 loop steps
	n := 50
	for range 8 {
		loop = fmt.Sprintf(`{%% for i in range(%d) %%}{%% for j in range(%d) %%}{%% endfor %%}{%% endfor %%}`, n, n)
		start := time.Now()
		if _, err := notifyexpr.Render(loop, entity); err != nil {
			if !strings.Contains(err.Error(), "longer than") {
				b.Fatal(err)
			}
			n = n * 9 / 10 // past the time bound: smaller
			continue
		}
		took = time.Since(start)
		if (took > want*9/10 && took < want*11/10) || (n == maxN && took < want) {
			return loop, took
		}
		// the work grows with n²
		n = min(maxN, max(1, int(float64(n)*math.Sqrt(float64(want)/float64(took)))))
	}
	return loop, took
}
