package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// webhookRecord is an outgoing webhook's delivery of the fixture's team.
func (f *fixture) webhookRecord(connector, key string) delivery.Delivery {
	return delivery.Delivery{TeamID: f.team, RequestID: uuid.NewString(), RouterID: "def-1", RouterName: "alert definition CPU",
		ConnectorID: connector, ConnectorType: delivery.Webhook, URL: "https://hooks.example.com/services/x",
		WebhookType: "SLACK", WebhookSettings: map[string]string{"channel": "ops"},
		Message:    json.RawMessage(`{"Title":"CPU","Status":"triggered"}`),
		EntityType: "alerts", EntityID: "incident-1", EventKind: delivery.Triggered, IdempotencyKey: key, DedupKey: "alert-1"}
}

// TestEnqueueChecksWebhookRecords: an outgoing webhook's record needs a public type name and a
// message that is a JSON object, takes no routing key, and its URL, when it has one, is absolute
// http or https; an EMAIL_GROUP record has no URL.
func TestEnqueueChecksWebhookRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		for name, change := range map[string]func(d *delivery.Delivery){
			"webhookType":  func(d *delivery.Delivery) { d.WebhookType = "" },
			"message":      func(d *delivery.Delivery) { d.Message = json.RawMessage(`[1]`) },
			"routingKey":   func(d *delivery.Delivery) { d.RoutingKey = "k" },
			"delivery url": func(d *delivery.Delivery) { d.URL = "ftp://hooks.example.com" },
		} {
			d := f.webhookRecord("webhook-1", "bad-"+name)
			change(&d)
			err := env.DB.InTx(context.Background(), func(tx *db.Tx) error { return delivery.Enqueue(context.Background(), tx, d) })
			var incomplete delivery.IncompleteError
			if !errors.As(err, &incomplete) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: %v", name, err)
			}
		}
		d := f.webhookRecord("recipients-1", "email-group")
		d.URL, d.WebhookType = "", "EMAIL_GROUP"
		f.enqueue(t, d)
	})
}

// TestWebhookRecordsGoThroughTheInjectedSender: the worker hands an outgoing webhook's record to
// Options.Webhooks as it was written (type, URL, settings, message, idempotency key) and records
// its answer: an attempt it says may be retried is made again and ends sent; without
// Options.Webhooks the record fails, saying so.
func TestWebhookRecordsGoThroughTheInjectedSender(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		var mu sync.Mutex
		var got []delivery.WebhookRecord
		send := func(_ context.Context, s *delivery.Sender, w delivery.WebhookRecord) delivery.Attempt {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, w)
			if s == nil || len(got) == 1 {
				return delivery.Attempt{Status: 503, Err: errors.New("hooks.example.com answered 503"), Retry: true}
			}
			return delivery.Attempt{Status: 200}
		}
		f.enqueue(t, f.webhookRecord("webhook-1", "hook-key"))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { worker(env, func(o *delivery.Options) { o.Webhooks = send }).Run(ctx); close(done) }()
		s := f.waitFinal(t, "hook-key")
		cancel()
		<-done
		if s.State != "sent" || s.Status != 200 || s.Attempts != 2 {
			t.Fatalf("record %+v", s)
		}
		mu.Lock()
		w := got[1]
		mu.Unlock()
		if w.Type != "SLACK" || w.URL != "https://hooks.example.com/services/x" || w.Settings["channel"] != "ops" ||
			string(w.Message) != `{"Title":"CPU","Status":"triggered"}` || w.IdempotencyKey != "hook-key" {
			t.Errorf("handed %+v", w)
		}

		f.enqueue(t, f.webhookRecord("webhook-2", "unwired-key"))
		if err := worker(env, nil).Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := f.stored(t, "unwired-key"); s.State != "failed" || !strings.Contains(s.Error, "delivery.Options.Webhooks") {
			t.Fatalf("record without Options.Webhooks %+v", s)
		}
	})
}
