package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// TestServeSendsTheOutbox: serve runs the delivery worker: a record written to the outbox (by
// another process over the same database) reaches a loopback receiver under
// --notify-allow-private; the log names the connector and host, never the URL's secret path;
// /metrics counts the delivery; the server stops with the worker.
func TestServeSendsTheOutbox(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		var got atomic.Int32
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Idempotency-Key") == "serve-1" {
				got.Add(1)
			}
		}))
		defer rc.Close()
		opts := db.Options{SharedFile: true}
		if args[0] == "--data-dir" {
			opts.DataDir = args[1]
			args = append(args, "--sqlite-file-access", "shared")
		} else {
			opts.URL = args[1]
		}
		p := start(t, nil, append(args, "--notify-allow-private", "--log-format", "json")...)
		database, err := db.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer database.Close()
		err = database.InTx(context.Background(), func(tx *db.Tx) error {
			return delivery.Enqueue(context.Background(), tx, delivery.Delivery{TeamID: 1, RequestID: uuid.NewString(),
				RouterID: "router-1", ConnectorID: "hook-1", ConnectorType: delivery.GenericHTTPS,
				URL: rc.URL + "/services/S3CR3T", Fields: map[string]any{"text": "hello"}, EntityType: "incident",
				EntityID: "incident-1", EventKind: delivery.Triggered, IdempotencyKey: "serve-1"})
		})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for got.Load() == 0 || !strings.Contains(p.stdout.String(), `"msg":"delivery sent"`) {
			if time.Now().After(deadline) {
				t.Fatalf("not delivered; log:\n%s", p.stdout)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, metrics := p.get(t, "/metrics", ""); !strings.Contains(metrics, `mgmtapi_deliveries_total{outcome="sent"} 1`) ||
			!strings.Contains(metrics, "mgmtapi_delivery_attempt_duration_seconds_count 1") ||
			!strings.Contains(metrics, "\nmgmtapi_notification_evaluation_paced_seconds_total ") {
			t.Errorf("metrics:\n%s", metrics)
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
		log := p.stdout.String()
		if got.Load() != 1 || strings.Contains(log, "S3CR3T") || !strings.Contains(log, `"connector":"hook-1"`) ||
			!strings.Contains(log, `"host":"`+strings.TrimPrefix(rc.URL, "http://")+`"`) || !strings.Contains(log, `"msg":"stopped"`) {
			t.Errorf("%d deliveries; log:\n%s", got.Load(), log)
		}
	})
}
