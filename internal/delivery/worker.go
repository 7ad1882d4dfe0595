package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
)

// Options configure a Worker; zero values take the defaults named.
type Options struct {
	DB     *db.DB
	Policy Policy
	// Logger receives one line per outcome; nothing when nil.
	Logger *slog.Logger
	// AttemptTimeout bounds one attempt, connection to the last byte read (10 s).
	AttemptTimeout time.Duration
	// MaxRetryTime bounds how long after its creation a record is retried (1 h); an attempt due
	// later is not made and the record fails.
	MaxRetryTime time.Duration
	// Lease is how long a claim keeps a record the claimer's (AttemptTimeout + 30 s, and never
	// less than AttemptTimeout + 5 s): a worker that dies loses its records to the others when it
	// ends.
	Lease time.Duration
	// PerConnector bounds the sends in flight to one connector (4), Concurrency the sends in
	// flight in all (32).
	PerConnector, Concurrency int
	// PollInterval is how often the outbox is read for due records when nothing else wakes the
	// worker (1 s).
	PollInterval time.Duration
	// BackoffBase and BackoffMax shape the retry delays: BackoffBase × 2^(attempt-1), at most
	// BackoffMax, each with jitter (the delay is drawn between its half and itself) (1 s, 5 min).
	BackoffBase, BackoffMax time.Duration
	// ResponseLimit is how much of a response is read before the connection is dropped (64 KiB).
	ResponseLimit int64
	// SMTP is the server EMAIL deliveries go through; nil fails them at once (ErrNoSMTPServer).
	SMTP *SMTPServer
	// Webhooks sends the records of outgoing webhooks (ConnectorType Webhook) in their types'
	// formats: the main wiring sets it to notifiers.DeliverRecord. Nil fails them at once.
	Webhooks WebhookSender
	// Router routes the events write transactions recorded (notification_events) into
	// deliveries: the main wiring sets it to internal/routers' Router. Nil leaves the events to
	// another worker. A Router that is also DueEvents records the events that come due with time
	// (alert reminders) before each routing pass.
	Router Router
	// The routing stage's templates and conditions are evaluated in the process's evaluation
	// child, at the lowest CPU priority (notifyexpr.Offloaded), and here only when the child
	// cannot be started or fails, or when InProcessTemplates is set (benchmarks compare the
	// two). Evaluated here, they run paced while Serving reports that the server is answering
	// requests (notifyexpr.Paced). Nil Serving: never paced.
	Serving            func() bool
	InProcessTemplates bool
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.AttemptTimeout, 10*time.Second)
	def(&o.MaxRetryTime, time.Hour)
	def(&o.Lease, o.AttemptTimeout+30*time.Second)
	o.Lease = max(o.Lease, o.AttemptTimeout+5*time.Second)
	def(&o.PollInterval, time.Second)
	def(&o.BackoffBase, time.Second)
	def(&o.BackoffMax, 5*time.Minute)
	if o.PerConnector <= 0 {
		o.PerConnector = 4
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.ResponseLimit <= 0 {
		o.ResponseLimit = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Worker sends the outbox's records. Several workers, in one process or in replicas over one
// PostgreSQL database, share the outbox.
type Worker struct {
	opts   Options
	id     string
	client *http.Client

	mu       sync.Mutex
	inFlight map[connectorKey]int
	total    int
	wake     chan struct{}
	sends    sync.WaitGroup

	// outcomes counts the recorded attempts by what they came to (sent, failed, retried);
	// attemptTime times the attempts; sending is the attempts in flight; events counts the
	// recorded events by what routing them came to (routed, dropped).
	outcomes    *prometheus.CounterVec
	events      *prometheus.CounterVec
	attemptTime prometheus.Histogram
	sending     prometheus.Gauge
	// paced is the time evaluations stepped aside for requests (notifyexpr.PacedWaiting).
	paced prometheus.CounterFunc
}

// Collectors are the worker's series for /metrics: mgmtapi_deliveries_total{outcome},
// mgmtapi_delivery_attempt_duration_seconds, mgmtapi_deliveries_in_flight,
// mgmtapi_notification_events_total{outcome}, mgmtapi_notification_evaluation_paced_seconds_total.
func (w *Worker) Collectors() []prometheus.Collector {
	return []prometheus.Collector{w.outcomes, w.attemptTime, w.sending, w.events, w.paced}
}

type connectorKey struct {
	team int64
	id   string
}

// NewWorker returns a worker over opts.DB; Run starts it.
func NewWorker(opts Options) *Worker {
	opts.defaults()
	return &Worker{
		opts:     opts,
		id:       uuid.NewString(),
		client:   newClient(opts.Policy, min(opts.AttemptTimeout, 10*time.Second)),
		inFlight: map[connectorKey]int{},
		wake:     make(chan struct{}, 1),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mgmtapi_deliveries_total",
			Help: "Notification delivery attempts recorded, by outcome: sent, failed (for good), retried.",
		}, []string{"outcome"}),
		attemptTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mgmtapi_delivery_attempt_duration_seconds",
			Help:    "Time of one notification delivery attempt, connection to the last byte read.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mgmtapi_notification_events_total",
			Help: "Recorded incident and case events the worker routed (routed) or gave up on (dropped).",
		}, []string{"outcome"}),
		sending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mgmtapi_deliveries_in_flight",
			Help: "Notification delivery attempts in flight in this process.",
		}),
		paced: prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "mgmtapi_notification_evaluation_paced_seconds_total",
			Help: "Time the worker's conditions and templates stepped aside while requests were answered (this process and its evaluation child).",
		}, func() float64 { return notifyexpr.PacedWaiting().Seconds() }),
	}
}

// Run routes the recorded events and sends due records until ctx ends, then waits for the
// routing and the sends in flight (each bounded by AttemptTimeout) and records their outcomes
// before it returns. Routing runs beside sending, so a slow template delays no send. An outbox
// that cannot be read is logged and read again at the next poll.
func (w *Worker) Run(ctx context.Context) {
	routing := make(chan struct{})
	go func() {
		defer close(routing)
		w.routeUntil(ctx)
	}()
	defer func() { <-routing }()
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			w.sends.Wait()
			return
		case <-poll.C:
		case <-w.wake:
		}
		for {
			started, full, err := w.claimAndSend(ctx)
			if err != nil {
				if ctx.Err() == nil {
					w.opts.Logger.Warn("delivery outbox read failed", "error", err.Error())
				}
				break
			}
			// a claim that found nothing, or filled every slot, waits for a poll or a slot
			if started == 0 || full {
				break
			}
		}
		if !poll.Stop() {
			select {
			case <-poll.C:
			default:
			}
		}
		poll.Reset(w.opts.PollInterval)
	}
}

// routeUntil routes the recorded events, at every poll and as long as a pass routes some, until
// ctx ends; each pass that routed wakes the sender.
func (w *Worker) routeUntil(ctx context.Context) {
	poll := time.NewTicker(w.opts.PollInterval)
	defer poll.Stop()
	for {
		for {
			routed, err := w.routeEvents(ctx)
			if err != nil && ctx.Err() == nil {
				w.opts.Logger.Warn("notification events not routed", "error", err.Error())
			}
			if routed > 0 {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
			if err != nil || routed == 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
	}
}

// Drain routes every recorded event and sends every record due now and those that become due
// while it runs, until no event waits and no record is pending and due, then waits for the
// sends in flight; tests and benchmarks use it in place of Run.
func (w *Worker) Drain(ctx context.Context) error {
	for {
		// A claim made with nothing in flight skips no connector as busy: when it finds nothing,
		// nothing is due.
		w.mu.Lock()
		idle := w.total == 0
		w.mu.Unlock()
		routed, err := w.routeEvents(ctx)
		if err != nil {
			return err
		}
		started, _, err := w.claimAndSend(ctx)
		if err != nil {
			return err
		}
		if started > 0 || routed > 0 {
			continue
		}
		if idle {
			return nil
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			w.sends.Wait()
			return ctx.Err()
		}
	}
}

// claimAndSend claims as many due records as there are free slots and starts sending them.
// full reports that every slot is taken.
func (w *Worker) claimAndSend(ctx context.Context) (started int, full bool, err error) {
	w.mu.Lock()
	free := w.opts.Concurrency - w.total
	var busy []connectorKey
	for k, n := range w.inFlight {
		if n >= w.opts.PerConnector {
			busy = append(busy, k)
		}
	}
	w.mu.Unlock()
	if free <= 0 {
		return 0, true, nil
	}
	// A read first: an idle outbox costs a poll one indexed read, not a write transaction (on
	// SQLite a turn of the single writer).
	var due int
	now := w.opts.DB.Now().UnixMicro()
	err = w.opts.DB.Read().QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM deliveries
		WHERE state = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1 LIMIT 1) due`, now).Scan(&due)
	if err != nil {
		return 0, false, fmt.Errorf("read the outbox: %w", err)
	}
	if due == 0 {
		return 0, false, nil
	}
	records, err := w.claim(ctx, free, busy)
	if err != nil {
		return 0, false, err
	}
	for _, r := range records {
		w.sends.Add(1)
		go func() {
			defer w.sends.Done()
			w.deliver(r)
		}()
	}
	return len(records), len(records) >= free, nil
}

// claim leases up to free due records, at most the free slots of each connector, skipping the
// connectors in busy and the records that an earlier pending record of the same connector and
// dedup key has to go before (a PagerDuty resolve never overtakes its trigger). On PostgreSQL the
// rows other workers are claiming are skipped, not waited for.
func (w *Worker) claim(ctx context.Context, free int, busy []connectorKey) ([]record, error) {
	var out []record
	err := w.opts.DB.InTx(db.WithLazyCommit(db.WithoutAudit(ctx)), func(tx *db.Tx) error {
		out = out[:0]
		now := tx.Now.UnixMicro()
		args := []any{now, free * 4}
		var q strings.Builder
		q.WriteString(`SELECT d.team_id, d.id, d.connector_id FROM deliveries d
			WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND d.lease_until <= $1
			AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.state = 'pending' AND e.dedup_key <> ''
				AND e.team_id = d.team_id AND e.connector_id = d.connector_id AND e.dedup_key = d.dedup_key
				AND (e.created_at < d.created_at OR (e.created_at = d.created_at AND e.id < d.id)))`)
		for _, k := range busy {
			args = append(args, k.team, k.id)
			fmt.Fprintf(&q, ` AND NOT (d.team_id = $%d AND d.connector_id = $%d)`, len(args)-1, len(args))
		}
		q.WriteString(` ORDER BY d.next_attempt_at LIMIT $2`)
		if tx.Engine == db.Postgres {
			q.WriteString(` FOR UPDATE OF d SKIP LOCKED`)
		}
		rows, err := tx.QueryContext(ctx, q.String(), args...)
		if err != nil {
			return fmt.Errorf("claim deliveries: %w", err)
		}
		type candidate struct {
			team     int64
			id, conn string
		}
		var picked []candidate
		w.mu.Lock()
		taken := map[connectorKey]int{}
		for rows.Next() && len(picked) < free {
			var c candidate
			if err := rows.Scan(&c.team, &c.id, &c.conn); err != nil {
				w.mu.Unlock()
				rows.Close()
				return err
			}
			k := connectorKey{c.team, c.conn}
			if w.inFlight[k]+taken[k] >= w.opts.PerConnector {
				continue
			}
			taken[k]++
			picked = append(picked, c)
		}
		w.mu.Unlock()
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		until := tx.Now.Add(w.opts.Lease).UnixMicro()
		for _, c := range picked {
			r, err := scanRecord(tx.QueryRowContext(ctx, `UPDATE deliveries
				SET lease_owner = $3, lease_until = $4, attempts = attempts + 1
				WHERE team_id = $1 AND id = $2 RETURNING `+recordColumns, c.team, c.id, w.id, until))
			if err != nil {
				return fmt.Errorf("claim delivery: %w", err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	for _, r := range out {
		w.inFlight[connectorKey{r.TeamID, r.ConnectorID}]++
		w.total++
	}
	w.mu.Unlock()
	return out, nil
}

// outcome is what one attempt came to.
type outcome struct {
	status int
	err    string
	// retry says the attempt may be made again, after at least wait.
	retry bool
	wait  time.Duration
}

// deliver makes one attempt at r and records its outcome.
func (w *Worker) deliver(r record) {
	w.sending.Inc()
	defer w.sending.Dec()
	start := time.Now()
	o := w.attempt(r)
	w.attemptTime.Observe(time.Since(start).Seconds())
	if err := w.record(r, o); err != nil {
		w.opts.Logger.Warn("delivery outcome not recorded; the record is sent again when its lease ends",
			"delivery", r.ID, "connector", r.ConnectorID, "host", r.host(), "error", err.Error())
	}
	// the slot is free once the outcome is recorded, so that a record is never pending and
	// unclaimed while its previous attempt's outcome is still being written
	w.mu.Lock()
	k := connectorKey{r.TeamID, r.ConnectorID}
	if w.inFlight[k]--; w.inFlight[k] <= 0 {
		delete(w.inFlight, k)
	}
	w.total--
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// attempt sends r once. The attempt's context ignores the worker's stop, so a send in flight at
// shutdown ends within AttemptTimeout and its outcome is recorded.
func (w *Worker) attempt(r record) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.AttemptTimeout)
	defer cancel()
	if r.ConnectorType == Webhook {
		return w.sendWebhook(ctx, r)
	}
	return send(ctx, w.client, w.opts.SMTP, r, w.opts.AttemptTimeout, w.opts.ResponseLimit)
}

// send makes one attempt at r with client (an EMAIL record through server), within ctx (which
// bounds it to timeout), reading at most limit bytes of the answer: the worker's attempts and
// SendNow's share it.
func send(ctx context.Context, client *http.Client, server *SMTPServer, r record, timeout time.Duration, limit int64) outcome {
	if r.ConnectorType == Email {
		return sendEmail(ctx, server, r, timeout)
	}
	req, err := newRequest(ctx, r)
	if err != nil {
		return outcome{err: err.Error()}
	}
	if retry, err := prepareRequest(ctx, client, r, req); err != nil {
		return outcome{err: err.Error(), retry: retry}
	}
	res, err := client.Do(req)
	if err != nil {
		return networkOutcome(r, err, ctx.Err() != nil, timeout)
	}
	defer res.Body.Close()
	// The first bytes are kept for the error message, the rest of the bound read and dropped; a
	// longer body is cut off by closing the connection.
	head := make([]byte, 512)
	n, _ := io.ReadFull(res.Body, head)
	head = head[:n]
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, max(limit-int64(n), 0)))

	o := outcome{status: res.StatusCode}
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return o
	case retryable(r.ConnectorType, res.StatusCode):
		o.retry = true
		if d, ok := retryAfter(res.Header.Get("Retry-After"), time.Now()); ok {
			o.wait = d
		}
	}
	o.err = fmt.Sprintf("%s answered %d %s", r.host(), res.StatusCode, http.StatusText(res.StatusCode))
	if s := snippet(head); s != "" {
		o.err += ": " + s
	}
	return o
}

// networkOutcome turns a failed request into an outcome whose message names the host only (the
// client's url.Error quotes the URL, a secret). A refusal of the policy is final; other network
// errors, the timeout included, are retried.
func networkOutcome(r record, err error, timedOut bool, timeout time.Duration) outcome {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if refusal, ok := refused(err); ok {
		return outcome{err: fmt.Sprintf("%s: %s", r.host(), refusal.Error())}
	}
	if timedOut {
		return outcome{retry: true, err: fmt.Sprintf("%s did not answer within %s", r.host(), timeout)}
	}
	if errors.Is(err, errTooManyRedirects) {
		return outcome{err: fmt.Sprintf("%s: %s", r.host(), err.Error())}
	}
	return outcome{retry: true, err: fmt.Sprintf("%s: %s", r.host(), err.Error())}
}

// snippet is the start of a response body, on one line, for an error message.
func snippet(b []byte) string {
	s := strings.ToValidUTF8(string(b), "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return connectortypes.CutBytes(strings.Join(strings.Fields(s), " "), 300)
}

// backoff is the delay before attempt n+1 after n failed attempts: exponential, capped, jittered.
func (w *Worker) backoff(n int) time.Duration {
	d := w.opts.BackoffBase
	for i := 1; i < n && d < w.opts.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, w.opts.BackoffMax)
	return d/2 + rand.N(d/2+1)
}

// record stores o as r's outcome, in one transaction with the case event of a final outcome, and
// logs it once committed. It changes nothing when r is no longer this worker's (its lease ended
// and another claimed it).
func (w *Worker) record(r record, o outcome) error {
	ctx := db.WithLazyCommit(db.WithoutAudit(context.Background()))
	var (
		state   string
		message string
		wait    time.Duration
	)
	err := w.opts.DB.InTx(ctx, func(tx *db.Tx) error {
		now := tx.Now
		state, message = statePending, o.err
		if o.retry {
			wait = max(o.wait, w.backoff(r.Attempts))
			deadline := time.UnixMicro(r.CreatedAt).Add(w.opts.MaxRetryTime)
			if !now.Add(wait).After(deadline) {
				res, err := tx.ExecContext(ctx, `UPDATE deliveries
					SET lease_owner = '', lease_until = 0, next_attempt_at = $4, status_code = $5, error = $6
					WHERE team_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'pending'`,
					r.TeamID, r.ID, w.id, now.Add(wait).UnixMicro(), o.status, cutMessage(message))
				return db.OneRow(res, err, "reschedule delivery")
			}
			message = fmt.Sprintf("gave up after %d attempts in %s: %s", r.Attempts,
				now.Sub(time.UnixMicro(r.CreatedAt)).Round(time.Second), message)
		}
		state = stateSent
		if message != "" {
			state = stateFailed
		}
		res, err := tx.ExecContext(ctx, `UPDATE deliveries
			SET state = $4, lease_owner = '', lease_until = 0, status_code = $5, error = $6, finished_at = $7
			WHERE team_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'pending'`,
			r.TeamID, r.ID, w.id, state, o.status, cutMessage(message), now.UnixMicro())
		if err := db.OneRow(res, err, "record delivery outcome"); err != nil {
			return err
		}
		switch {
		case r.CaseID == "":
			return nil
		case state == stateSent:
			return cases.RecordNotificationSent(ctx, tx, r.TeamID, r.CaseID, r.RequestID, []string{r.ID})
		}
		return cases.RecordNotificationFailed(ctx, tx, r.TeamID, r.CaseID, cutMessage(
			"connector "+r.ConnectorName+" ("+r.ConnectorID+", "+strconv.Quote(string(r.ConnectorType))+"): "+message))
	})
	if err != nil {
		return err
	}
	log := w.opts.Logger.With("delivery", r.ID, "connector", r.ConnectorID, "host", r.host(), "attempts", r.Attempts)
	outcome := state
	if state == statePending {
		outcome = "retried"
	}
	w.outcomes.WithLabelValues(outcome).Inc()
	switch state {
	case statePending:
		log.Info("delivery attempt failed; retrying", "retry_in", wait.String(), "error", message)
	case stateSent:
		log.Info("delivery sent", "status", o.status)
	default:
		log.Warn("delivery failed", "status", o.status, "error", message)
	}
	return nil
}
