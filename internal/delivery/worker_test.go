package delivery_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// receiver is a real HTTP server on loopback that answers with answer(n) for its n-th request
// (1-based) and counts what it got by idempotency key.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	n      int
	byKey  map[string]int
	bodies []string
	times  []time.Time
}

func newReceiver(t testing.TB, answer func(w http.ResponseWriter, r *http.Request, n int)) *receiver {
	rc := &receiver{byKey: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.n++
		n := rc.n
		rc.byKey[r.Header.Get("Idempotency-Key")]++
		rc.bodies = append(rc.bodies, string(body))
		rc.times = append(rc.times, time.Now())
		rc.mu.Unlock()
		answer(w, r, n)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func ok(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusOK) }

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.n
}

// fixture is a team with a case, on one engine.
type fixture struct {
	env    *apitest.Env
	team   int64
	key    string
	caseID string
}

func newFixture(t *testing.T, env *apitest.Env) *fixture {
	t.Helper()
	team, key := env.MustTeam(t, "notified")
	f := &fixture{env: env, team: team, key: key}
	f.caseID = f.openCase(t, "group-1")
	return f
}

func (f *fixture) openCase(t *testing.T, group string) string {
	t.Helper()
	var ref cases.CaseRef
	err := f.env.DB.InTx(context.Background(), func(tx *db.Tx) (err error) {
		ref, _, err = cases.OpenForGroup(context.Background(), tx, cases.AlertGroup{TeamID: f.team, GroupKey: group, Receiver: "am", Title: "disk full"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ref.ID
}

// record is a generic webhook delivery of the fixture's case to url, key as its idempotency key.
func (f *fixture) record(url, connector, key string) delivery.Delivery {
	return delivery.Delivery{TeamID: f.team, RequestID: uuid.NewString(), RouterID: "router-1", RouterName: "Production",
		ConnectorID: connector, ConnectorName: "Hook " + connector, ConnectorType: delivery.GenericHTTPS, URL: url,
		Fields: map[string]any{"title": "disk full"}, EntityType: "case", EntityID: f.caseID, CaseID: f.caseID,
		EventKind: delivery.Opened, IdempotencyKey: key}
}

func (f *fixture) enqueue(t testing.TB, ds ...delivery.Delivery) {
	t.Helper()
	err := f.env.DB.InTx(context.Background(), func(tx *db.Tx) error {
		for _, d := range ds {
			if err := delivery.Enqueue(context.Background(), tx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stored is a record's outcome columns.
type stored struct {
	State    string
	Attempts int
	Status   int
	Error    string
}

func (f *fixture) stored(t testing.TB, key string) stored {
	t.Helper()
	var s stored
	err := f.env.DB.Read().QueryRowContext(context.Background(), `SELECT state, attempts, status_code, error
		FROM deliveries WHERE team_id = $1 AND idempotency_key = $2`, f.team, key).Scan(&s.State, &s.Attempts, &s.Status, &s.Error)
	if err != nil {
		t.Fatalf("record %s: %v", key, err)
	}
	return s
}

// waitFinal waits (at most 30 s) until the record is no longer pending.
func (f *fixture) waitFinal(t testing.TB, key string) stored {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := f.stored(t, key)
		if s.State != "pending" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("record %s still pending: %+v", key, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// caseEvents are the kinds and data of the case's notification events.
func (f *fixture) notificationEvents(t testing.TB) []oas.CaseEventData {
	t.Helper()
	list, err := f.env.Client(t, f.key).ListCaseEvents(context.Background(), oas.ListCaseEventsParams{CaseID: oas.CaseIdentifier(f.caseID)})
	if err != nil {
		t.Fatal(err)
	}
	var out []oas.CaseEventData
	for _, e := range list.Events {
		if e.EventData.NotificationSent.Set || e.EventData.NotificationFailed.Set {
			out = append(out, e.EventData)
		}
	}
	return out
}

// worker returns a worker with short delays that may connect to loopback (the receivers).
func worker(env *apitest.Env, change func(o *delivery.Options)) *delivery.Worker {
	o := delivery.Options{DB: env.DB, Policy: delivery.Policy{AllowPrivate: true}, PollInterval: 10 * time.Millisecond,
		BackoffBase: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond, AttemptTimeout: 5 * time.Second}
	if change != nil {
		change(&o)
	}
	return delivery.NewWorker(o)
}

// run runs w until the test ends.
func run(t *testing.T, w *delivery.Worker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestServerErrorThenSuccessIsOneDeliveryAfterARetry: a receiver answering 500 then 200 gets the
// same notification twice (same idempotency key and body), the record ends sent 200 after two
// attempts, and the case records notificationSent with the request id and the delivery as token.
func TestServerErrorThenSuccessIsOneDeliveryAfterARetry(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				http.Error(w, "try later", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		})
		d := f.record(rc.URL+"/hook", "hook-1", "key-500-then-200")
		f.enqueue(t, d)
		run(t, worker(env, nil))
		s := f.waitFinal(t, d.IdempotencyKey)
		if s.State != "sent" || s.Status != 202 || s.Attempts != 2 {
			t.Fatalf("record %+v", s)
		}
		if rc.byKey[d.IdempotencyKey] != 2 || rc.bodies[0] != rc.bodies[1] || rc.bodies[0] != `{"title":"disk full"}` {
			t.Errorf("receiver: %v %q", rc.byKey, rc.bodies)
		}
		events := f.notificationEvents(t)
		if len(events) != 1 || !events[0].NotificationSent.Set ||
			events[0].NotificationSent.Value.NotificationRequestId.Value != d.RequestID ||
			len(events[0].NotificationSent.Value.Notifications) != 1 {
			t.Errorf("case events %+v", events)
		}
	})
}

// TestTooManyRequestsHonoursRetryAfter: after a 429 with Retry-After: 1, the next attempt comes
// at least a second later (the backoff alone would be 20 ms).
func TestTooManyRequestsHonoursRetryAfter(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
		d := f.record(rc.URL, "hook-1", "key-429")
		f.enqueue(t, d)
		run(t, worker(env, nil))
		if s := f.waitFinal(t, d.IdempotencyKey); s.State != "sent" || s.Attempts != 2 {
			t.Fatalf("record %+v", s)
		}
		if gap := rc.times[1].Sub(rc.times[0]); gap < time.Second {
			t.Errorf("second attempt %s after the 429; Retry-After said 1 s", gap)
		}
	})
}

// TestDeadReceiverDelaysOnlyItsOwnConnector: a receiver that never answers holds its connector's
// one slot until the attempt timeout; another connector's delivery, enqueued after it, is sent
// while that attempt still hangs. The dead one fails once its retry time is spent, saying the
// receiver did not answer.
func TestDeadReceiverDelaysOnlyItsOwnConnector(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		release := make(chan struct{})
		var mu sync.Mutex
		var hangingEnded time.Time
		dead := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			mu.Lock()
			hangingEnded = time.Now()
			mu.Unlock()
		})
		defer close(release)
		alive := newReceiver(t, ok)
		f.enqueue(t, f.record(dead.URL, "dead", "dead-1"), f.record(dead.URL, "dead", "dead-2"))
		f.enqueue(t, f.record(alive.URL, "alive", "alive-1"))
		run(t, worker(env, func(o *delivery.Options) {
			o.PerConnector = 1
			o.AttemptTimeout = 700 * time.Millisecond
			o.MaxRetryTime = 1500 * time.Millisecond
		}))
		if s := f.waitFinal(t, "alive-1"); s.State != "sent" {
			t.Fatalf("alive: %+v", s)
		}
		sentAt := alive.times[0]
		if dead.count() != 1 {
			t.Errorf("the dead connector got %d requests at once; its bound is 1", dead.count())
		}
		s := f.waitFinal(t, "dead-1")
		if s.State != "failed" || !strings.Contains(s.Error, "did not answer within 700ms") || !strings.Contains(s.Error, "gave up after") {
			t.Errorf("dead-1: %+v", s)
		}
		mu.Lock()
		defer mu.Unlock()
		if !sentAt.Before(dead.times[0].Add(700 * time.Millisecond)) {
			t.Errorf("the alive connector's delivery (%s) waited for the dead one's attempt (started %s, ended %s)",
				sentAt.Format(time.StampMilli), dead.times[0].Format(time.StampMilli), hangingEnded.Format(time.StampMilli))
		}
	})
}

// TestHugeResponseIsReadOnlyUpToTheBound: a receiver answering 200 with a 100 MB body streamed in
// chunks: the delivery is sent, the receiver manages to write far less than 100 MB before the
// worker drops the connection, and the worker's process allocates far less than the body.
func TestHugeResponseIsReadOnlyUpToTheBound(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		var written int64
		var mu sync.Mutex
		chunk := make([]byte, 64<<10)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Content-Length", fmt.Sprint(100<<20))
			w.WriteHeader(http.StatusOK)
			for n := 0; n < 100<<20; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					break
				}
				mu.Lock()
				written += int64(len(chunk))
				mu.Unlock()
			}
		})
		f.enqueue(t, f.record(rc.URL, "big", "big-1"))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := worker(env, nil)
		if err := w.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if s := f.stored(t, "big-1"); s.State != "sent" || s.Status != 200 {
			t.Fatalf("record %+v", s)
		}
		mu.Lock()
		defer mu.Unlock()
		if written >= 100<<20 {
			t.Errorf("the receiver wrote the whole body (%d bytes)", written)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("%d MiB allocated while a 100 MiB answer was read up to 64 KiB", alloc>>20)
		}
	})
}

// TestClientErrorFailsAtOnce: a 400 ends the record failed after one attempt, with a message
// naming the host and status and the start of the receiver's body but not the URL's secret
// path; the case records notificationFailed with that message.
func TestClientErrorFailsAtOnce(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			http.Error(w, "invalid_payload\nfield text missing", http.StatusBadRequest)
		})
		f.enqueue(t, f.record(rc.URL+"/services/T0/S3CR3T", "hook-1", "key-400"))
		if err := worker(env, nil).Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := f.stored(t, "key-400")
		host := strings.TrimPrefix(rc.URL, "http://")
		if s.State != "failed" || s.Attempts != 1 || s.Status != 400 ||
			s.Error != host+" answered 400 Bad Request: invalid_payload field text missing" {
			t.Fatalf("record %+v", s)
		}
		if rc.count() != 1 {
			t.Errorf("receiver got %d requests", rc.count())
		}
		events := f.notificationEvents(t)
		if len(events) != 1 || !events[0].NotificationFailed.Set ||
			!strings.Contains(events[0].NotificationFailed.Value.Error.Value, "answered 400") ||
			strings.Contains(events[0].NotificationFailed.Value.Error.Value, "S3CR3T") {
			t.Errorf("case events %+v", events)
		}
	})
}

// TestPrivateAddressIsRefusedWithoutTheFlag: without allow-private the loopback receiver is
// never connected to and the record fails at once naming the rule; an allow-list holding
// 127.0.0.0/8 lets the next record through.
func TestPrivateAddressIsRefusedWithoutTheFlag(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, ok)
		// a host name that resolves to loopback is refused as the address is
		f.enqueue(t, f.record(strings.Replace(rc.URL, "127.0.0.1", "localhost", 1), "hook-1", "key-private"))
		strict := worker(env, func(o *delivery.Options) { o.Policy = delivery.Policy{} })
		if err := strict.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := f.stored(t, "key-private")
		if s.State != "failed" || s.Attempts != 1 || !strings.Contains(s.Error, "is loopback") ||
			!strings.Contains(s.Error, "--notify-allow-private") {
			t.Fatalf("record %+v", s)
		}
		if rc.count() != 0 {
			t.Fatalf("the refused receiver got %d requests", rc.count())
		}
		f.enqueue(t, f.record(rc.URL, "hook-1", "key-allowed"))
		listed := worker(env, func(o *delivery.Options) {
			o.Policy = delivery.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
		})
		if err := listed.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := f.stored(t, "key-allowed"); s.State != "sent" || rc.count() != 1 {
			t.Fatalf("allow-listed: %+v, %d requests", s, rc.count())
		}
	})
}

// TestRedirectToAPrivateAddressIsRefused: a public-looking first hop is not needed to show the
// rule: a receiver allowed by the allow-list redirects to another loopback port outside it, and
// the redirect's connection is refused.
func TestRedirectToAPrivateAddressIsRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		target := newReceiver(t, ok)
		redirect := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Redirect(w, r, strings.Replace(target.URL, "127.0.0.1", "127.0.0.2", 1), http.StatusTemporaryRedirect)
		})
		f.enqueue(t, f.record(redirect.URL, "hook-1", "key-redirect"))
		w := worker(env, func(o *delivery.Options) {
			o.Policy = delivery.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		})
		if err := w.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := f.stored(t, "key-redirect")
		if s.State != "failed" || !strings.Contains(s.Error, "address 127.0.0.2 is loopback") || target.count() != 0 {
			t.Fatalf("record %+v, target got %d", s, target.count())
		}
	})
}

// TestExpiredLeaseIsClaimedAgain: a record claimed by a worker that died is left alone while its
// lease runs and sent by another worker once it ended; the attempt count includes the lost one.
func TestExpiredLeaseIsClaimedAgain(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, ok)
		f.enqueue(t, f.record(rc.URL, "hook-1", "key-lease"))
		const lease = time.Minute
		// a worker claimed it and died before recording anything
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE deliveries SET lease_owner = 'crashed',
				lease_until = $1, attempts = 1 WHERE idempotency_key = 'key-lease'`, tx.Now.Add(lease).UnixMicro())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		w := worker(env, func(o *delivery.Options) { o.Lease = lease })
		if err := w.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rc.count() != 0 || f.stored(t, "key-lease").State != "pending" {
			t.Fatalf("a leased record was sent: %d requests", rc.count())
		}
		env.Clock.Advance(lease + time.Second)
		if err := w.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := f.stored(t, "key-lease"); s.State != "sent" || s.Attempts != 2 || rc.count() != 1 {
			t.Fatalf("after the lease: %+v, %d requests", s, rc.count())
		}
	})
}

// TestTwoWorkersNeverSendOneRecordTwice: two workers over two connection pools (two replicas on
// PostgreSQL) share 200 records of four connectors; the receiver sees each idempotency key once.
func TestTwoWorkersNeverSendOneRecordTwice(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			time.Sleep(time.Duration(n%3) * time.Millisecond)
			w.WriteHeader(http.StatusOK)
		})
		var ds []delivery.Delivery
		for i := range 200 {
			ds = append(ds, f.record(rc.URL, fmt.Sprintf("hook-%d", i%4), fmt.Sprintf("key-%03d", i)))
		}
		f.enqueue(t, ds...)
		second := env.OpenDB(t)
		run(t, worker(env, nil))
		run(t, delivery.NewWorker(delivery.Options{DB: second, Policy: delivery.Policy{AllowPrivate: true},
			PollInterval: 10 * time.Millisecond}))
		for _, d := range ds {
			if s := f.waitFinal(t, d.IdempotencyKey); s.State != "sent" || s.Attempts != 1 {
				t.Fatalf("%s: %+v", d.IdempotencyKey, s)
			}
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, d := range ds {
			if n := rc.byKey[d.IdempotencyKey]; n != 1 {
				t.Errorf("%s received %d times", d.IdempotencyKey, n)
			}
		}
		if rc.n != 200 {
			t.Errorf("%d requests for 200 records", rc.n)
		}
	})
}

// TestPagerDutyResolveWaitsForItsTrigger: the resolve of an incident, enqueued while its trigger
// is being retried, reaches PagerDuty after the trigger, with the same dedup key.
func TestPagerDutyResolveWaitsForItsTrigger(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		})
		pd := func(kind delivery.EventKind, key string) delivery.Delivery {
			d := f.record(rc.URL+"/v2/enqueue", "pagerduty-1", key)
			d.ConnectorType, d.RoutingKey, d.EventKind = delivery.PagerDuty, "R0UT1NG", kind
			d.EntityType, d.EntityID = "incident", "incident-9"
			d.Fields = map[string]any{"summary": "disk full", "severity": "critical"}
			return d
		}
		f.enqueue(t, pd(delivery.Triggered, "pd-trigger"))
		f.enqueue(t, pd(delivery.Resolved, "pd-resolve"))
		run(t, worker(env, nil))
		f.waitFinal(t, "pd-trigger")
		if s := f.waitFinal(t, "pd-resolve"); s.State != "sent" || s.Attempts != 1 {
			t.Fatalf("resolve: %+v", s)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		last := rc.bodies[len(rc.bodies)-1]
		for i, b := range rc.bodies[:len(rc.bodies)-1] {
			if !strings.Contains(b, `"event_action":"trigger"`) {
				t.Errorf("request %d before the resolve: %s", i+1, b)
			}
		}
		if !strings.Contains(last, `"event_action":"resolve"`) || !strings.Contains(last, `"dedup_key":"mgmtapi/`) ||
			!strings.Contains(rc.bodies[0], strings.Split(strings.Split(last, `"dedup_key":"`)[1], `"`)[0]) {
			t.Errorf("bodies %q", rc.bodies)
		}
	})
}

// TestOutboxSurvivesARestartAndKeysAreUnique: a record enqueued before the database is closed
// and opened again is sent after it; enqueuing the same idempotency key again (the event's
// transaction run twice) writes nothing, and the receiver sees the notification once.
func TestOutboxSurvivesARestartAndKeysAreUnique(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		rc := newReceiver(t, ok)
		d := f.record(rc.URL, "hook-1", "key-restart")
		f.enqueue(t, d)
		env.Restart(t)
		again := d
		again.RequestID = uuid.NewString()
		f.enqueue(t, again)
		var n int
		if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM deliveries
			WHERE team_id = $1 AND idempotency_key = 'key-restart'`, f.team).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d records with the key (%v)", n, err)
		}
		if err := worker(env, nil).Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := f.stored(t, "key-restart"); s.State != "sent" || rc.byKey["key-restart"] != 1 || rc.count() != 1 {
			t.Fatalf("record %+v, receiver %v", s, rc.byKey)
		}
	})
}

// TestStopWaitsForTheAttemptInFlight: a worker stopped while an attempt hangs returns once that
// attempt has timed out and its outcome is recorded: the record is rescheduled with its error,
// not left leased to a worker that is gone.
func TestStopWaitsForTheAttemptInFlight(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		arrived := make(chan struct{}, 1)
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			arrived <- struct{}{}
			<-r.Context().Done()
		})
		f.enqueue(t, f.record(rc.URL, "hook-1", "key-stop"))
		w := worker(env, func(o *delivery.Options) { o.AttemptTimeout = 300 * time.Millisecond })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			t.Fatal("no attempt")
		}
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return")
		}
		var owner string
		var until int64
		if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT lease_owner, lease_until FROM deliveries
			WHERE idempotency_key = 'key-stop'`).Scan(&owner, &until); err != nil {
			t.Fatal(err)
		}
		s := f.stored(t, "key-stop")
		if s.State != "pending" || s.Attempts != 1 || !strings.Contains(s.Error, "did not answer within 300ms") || owner != "" || until != 0 {
			t.Errorf("after stop: %+v, lease %q %d", s, owner, until)
		}
	})
}

// TestGenericConnectorMethodAndHeaders: a generic HTTPS record is sent with its connector's
// method and additional headers (an Authorization header, say), beside the headers mgmtapi sets
// itself, which a record cannot replace; other types take neither.
func TestGenericConnectorMethodAndHeaders(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		var mu sync.Mutex
		var method, auth, key string
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			mu.Lock()
			method, auth, key = r.Method, r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key")
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		})
		d := f.record(rc.URL+"/hook", "hook-1", "key-put")
		d.Method, d.Headers = http.MethodPut, map[string]string{"authorization": "Bearer s3cret"}
		f.enqueue(t, d)
		run(t, worker(env, nil))
		if s := f.waitFinal(t, d.IdempotencyKey); s.State != "sent" || s.Status != 204 {
			t.Fatalf("record %+v", s)
		}
		mu.Lock()
		defer mu.Unlock()
		if method != http.MethodPut || auth != "Bearer s3cret" || key != "key-put" {
			t.Fatalf("the receiver got %s, Authorization %q, Idempotency-Key %q", method, auth, key)
		}

		for _, c := range []struct {
			change func(d *delivery.Delivery)
			want   string
		}{
			{func(d *delivery.Delivery) { d.Headers = map[string]string{"idempotency-key": "x"} }, "Idempotency-Key is set by mgmtapi"},
			{func(d *delivery.Delivery) { d.Headers = map[string]string{"bad name": "x"} }, `"bad name" is not a valid header name`},
			{func(d *delivery.Delivery) { d.Method = http.MethodDelete }, `GENERIC_HTTPS deliveries must be POST or PUT, not "DELETE"`},
			{func(d *delivery.Delivery) {
				d.ConnectorType, d.Fields, d.Headers = delivery.Slack, map[string]any{"text": "x"}, map[string]string{"x-a": "b"}
			}, "SLACK deliveries carry none of their own (GENERIC_HTTPS, SERVICE_NOW, INCIDENT_IO ones do)"},
		} {
			bad := f.record(rc.URL, "hook-2", "refused")
			c.change(&bad)
			err := env.DB.InTx(context.Background(), func(tx *db.Tx) error { return delivery.Enqueue(context.Background(), tx, bad) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("enqueue %+v: %v, want %q", bad, err, c.want)
			}
		}
	})
}
