package delivery_test

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

func sendNowDelivery(url string) delivery.Delivery {
	return delivery.Delivery{TeamID: 1, RequestID: uuid.NewString(), RouterID: "notification-test", ConnectorID: "hook-1",
		ConnectorType: delivery.Slack, URL: url + "/services/T0/B0/url-secret", Fields: map[string]any{"text": "hello"},
		EntityType: "ALERTS", EntityID: "test-1", EventKind: delivery.Triggered}
}

// TestSendNowIsOneAttemptUnderThePolicy: SendNow sends the type's body once and answers the
// status; a 5xx is answered, not retried; the policy refuses a loopback address (and a redirect
// to one) before connecting; a receiver slower than the attempt timeout is a timeout; a record
// Enqueue would refuse is refused. No message quotes the URL's secret path.
func TestSendNowIsOneAttemptUnderThePolicy(t *testing.T) {
	ctx := context.Background()
	allowed := delivery.NewSender(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}, AttemptTimeout: 300 * time.Millisecond})
	noSecret := func(err error) {
		t.Helper()
		if err != nil && strings.Contains(err.Error(), "url-secret") {
			t.Errorf("the error quotes the URL: %v", err)
		}
	}

	good := newReceiver(t, ok)
	status, err := allowed.SendNow(ctx, sendNowDelivery(good.URL))
	if status != http.StatusOK || err != nil || good.count() != 1 || good.bodies[0] != `{"text":"hello"}` {
		t.Fatalf("SendNow: %d %v, receiver got %d %v", status, err, good.count(), good.bodies)
	}

	broken := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("upstream\ndown"))
	})
	status, err = allowed.SendNow(ctx, sendNowDelivery(broken.URL))
	noSecret(err)
	if status != http.StatusBadGateway || err == nil || !strings.Contains(err.Error(), "answered 502 Bad Gateway: upstream down") || broken.count() != 1 {
		t.Fatalf("502: %d %v, %d requests", status, err, broken.count())
	}

	slow := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	start := time.Now()
	status, err = allowed.SendNow(ctx, sendNowDelivery(slow.URL))
	noSecret(err)
	if status != 0 || err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("slow receiver: %d %v after %s", status, err, time.Since(start))
	}

	publicOnly := delivery.NewSender(delivery.Options{})
	status, err = publicOnly.SendNow(ctx, sendNowDelivery(good.URL))
	noSecret(err)
	if status != 0 || err == nil || !strings.Contains(err.Error(), "address 127.0.0.1 is loopback") || good.count() != 1 {
		t.Fatalf("loopback under the default policy: %d %v", status, err)
	}

	redirect := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, strings.Replace(good.URL, "127.0.0.1", "127.0.0.2", 1), http.StatusTemporaryRedirect)
	})
	oneAddress := delivery.NewSender(delivery.Options{Policy: delivery.Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	_, err = oneAddress.SendNow(ctx, sendNowDelivery(redirect.URL))
	noSecret(err)
	if err == nil || !strings.Contains(err.Error(), "address 127.0.0.2 is loopback") || good.count() != 1 {
		t.Fatalf("redirect to a refused address: %v", err)
	}

	bad := sendNowDelivery(good.URL)
	bad.Fields = map[string]any{}
	if _, err := allowed.SendNow(ctx, bad); err == nil || !strings.Contains(err.Error(), "fields.text") {
		t.Fatalf("a Slack message without text: %v", err)
	}
	bad = sendNowDelivery(good.URL)
	bad.ConnectorType = "SERVICENOW"
	if _, err := allowed.SendNow(ctx, bad); err == nil || !strings.Contains(err.Error(), "not delivered by mgmtapi") {
		t.Fatalf("an undelivered type: %v", err)
	}
	if good.count() != 1 {
		t.Fatalf("refused deliveries reached the receiver")
	}
}
