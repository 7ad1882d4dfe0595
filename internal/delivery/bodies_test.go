package delivery

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// sent builds d's request and decodes its body.
func sent(t *testing.T, d Delivery) (map[string]any, string, map[string]string) {
	t.Helper()
	if err := complete(&d); err != nil {
		t.Fatalf("complete: %v", err)
	}
	req, err := newRequest(context.Background(), recordOf(&d))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if req.Method != "POST" || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s with %q", req.Method, req.Header.Get("Content-Type"))
	}
	b, _ := io.ReadAll(req.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return body, req.URL.String(), map[string]string{"Idempotency-Key": req.Header.Get("Idempotency-Key")}
}

func base(ct ConnectorType, kind EventKind, fields map[string]any) Delivery {
	return Delivery{TeamID: 7, RequestID: "3f166e9f-3c88-4af2-b52e-138f339dab3e", RouterID: "r1", ConnectorID: "c1",
		ConnectorType: ct, URL: "https://hooks.example.com/services/T0/B0/secret", EntityType: "case", EntityID: "case-1",
		EventKind: kind, Fields: fields}
}

func TestGenericWebhookIsTheFieldsWithAnIdempotencyKey(t *testing.T) {
	body, url, headers := sent(t, base(GenericHTTPS, Opened, map[string]any{"title": "disk full", "n": 3.0, "labels": map[string]any{"a": "b"}}))
	if body["title"] != "disk full" || body["n"] != 3.0 || body["labels"].(map[string]any)["a"] != "b" || len(body) != 3 {
		t.Errorf("body %v", body)
	}
	if url != "https://hooks.example.com/services/T0/B0/secret" {
		t.Errorf("url %s", url)
	}
	key := headers["Idempotency-Key"]
	_, _, again := sent(t, base(GenericHTTPS, Opened, map[string]any{"title": "other"}))
	if len(key) != 32 || again["Idempotency-Key"] != key {
		t.Errorf("the key of one team, request and connector is stable: %q, %q", key, again["Idempotency-Key"])
	}
	other := base(GenericHTTPS, Opened, nil)
	other.ConnectorID = "c2"
	if _, _, h := sent(t, other); h["Idempotency-Key"] == key {
		t.Errorf("another connector has the same key %q", key)
	}
}

func TestSlackIsAnIncomingWebhookMessage(t *testing.T) {
	blocks := []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*P1*"}}}
	body, _, _ := sent(t, base(Slack, Triggered, map[string]any{"text": "P1: disk full", "blocks": blocks, "ignored": 1.0}))
	if body["text"] != "P1: disk full" || len(body["blocks"].([]any)) != 1 || len(body) != 2 {
		t.Errorf("body %v", body)
	}
	body, _, _ = sent(t, base(Slack, Triggered, map[string]any{"text": "plain"}))
	if _, ok := body["blocks"]; ok || body["text"] != "plain" {
		t.Errorf("without blocks: %v", body)
	}
	d := base(Slack, Triggered, map[string]any{"blocks": blocks})
	if err := complete(&d); err == nil || !strings.Contains(err.Error(), "fields.text: required") {
		t.Errorf("no text: %v", err)
	}
}

// TestSlackCarriesTheConnectorsChannel: the channel a Slack connector names (or its template
// rendered) is the message's.
func TestSlackCarriesTheConnectorsChannel(t *testing.T) {
	body, _, _ := sent(t, base(Slack, Triggered, map[string]any{"text": "P1", "channel": "alerts-p1"}))
	if body["channel"] != "alerts-p1" || body["text"] != "P1" {
		t.Errorf("body %v", body)
	}
}

// TestGenericMethodIsSentInUpperCase: a method stored as a client wrote it (post, put) is sent in
// upper case.
func TestGenericMethodIsSentInUpperCase(t *testing.T) {
	for stored, want := range map[string]string{"post": "POST", "put": "PUT", "Put": "PUT", "": "POST"} {
		r := recordOf(&Delivery{ConnectorType: GenericHTTPS, URL: "https://hooks.example.com/x", Method: stored, Fields: map[string]any{}})
		req, err := newRequest(context.Background(), r)
		if err != nil || req.Method != want {
			t.Errorf("stored %q: sent %q (%v), want %s", stored, methodOf(req), err, want)
		}
	}
}

func TestPagerDutyIsAnEventsV2EventWithAStableDedupKey(t *testing.T) {
	fields := map[string]any{"summary": "disk full on db-1", "severity": "critical", "source": "db-1",
		"component": "postgres", "custom_details": map[string]any{"used": "99%"}}
	d := base(PagerDuty, Triggered, fields)
	d.URL, d.RoutingKey = "", "R0UT1NGKEY"
	trigger, url, _ := sent(t, d)
	if url != connectortypes.DefaultPagerDutyURL {
		t.Errorf("url %s", url)
	}
	payload := trigger["payload"].(map[string]any)
	if trigger["routing_key"] != "R0UT1NGKEY" || trigger["event_action"] != "trigger" ||
		payload["summary"] != "disk full on db-1" || payload["severity"] != "critical" || payload["source"] != "db-1" ||
		payload["component"] != "postgres" || payload["custom_details"].(map[string]any)["used"] != "99%" {
		t.Errorf("trigger %v", trigger)
	}
	for kind, action := range map[EventKind]string{Acknowledged: "acknowledge", Resolved: "resolve"} {
		d := base(PagerDuty, kind, nil)
		d.RoutingKey = "R0UT1NGKEY"
		d.RequestID = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"
		ev, _, _ := sent(t, d)
		if ev["event_action"] != action || ev["dedup_key"] != trigger["dedup_key"] || ev["payload"] != nil {
			t.Errorf("%s: %v; the trigger's dedup key is %v", kind, ev, trigger["dedup_key"])
		}
	}
	if trigger["dedup_key"] != "mgmtapi/7/case/case-1" {
		t.Errorf("dedup key %v", trigger["dedup_key"])
	}
	bad := base(PagerDuty, Triggered, map[string]any{"summary": "x", "severity": "fatal"})
	bad.RoutingKey = "k"
	if err := complete(&bad); err == nil || !strings.Contains(err.Error(), "fields.severity") {
		t.Errorf("bad severity: %v", err)
	}
	bad = base(PagerDuty, Triggered, map[string]any{"summary": "x"})
	if err := complete(&bad); err == nil || !strings.Contains(err.Error(), "routingKey: required") {
		t.Errorf("no routing key: %v", err)
	}
	bad = base(PagerDuty, Triggered, nil)
	bad.RoutingKey = "k"
	if err := complete(&bad); err == nil || !strings.Contains(err.Error(), "fields.summary: required") {
		t.Errorf("no summary: %v", err)
	}
}

func TestTeamsIsAnAdaptiveCardInTheWebhookEnvelope(t *testing.T) {
	body, _, _ := sent(t, base(MicrosoftTeams, Resolved, map[string]any{"title": "Resolved", "text": "disk ok",
		"facts": map[string]any{"priority": "P1", "case": "CASE-3"}}))
	att := body["attachments"].([]any)[0].(map[string]any)
	card := att["content"].(map[string]any)
	blocks := card["body"].([]any)
	facts := blocks[2].(map[string]any)["facts"].([]any)
	if body["type"] != "message" || att["contentType"] != "application/vnd.microsoft.card.adaptive" ||
		card["type"] != "AdaptiveCard" || blocks[0].(map[string]any)["text"] != "Resolved" ||
		blocks[1].(map[string]any)["text"] != "disk ok" || len(facts) != 2 ||
		facts[0].(map[string]any)["title"] != "case" || facts[1].(map[string]any)["value"] != "P1" {
		t.Errorf("body %v", body)
	}
	d := base(MicrosoftTeams, Resolved, nil)
	if err := complete(&d); err == nil || !strings.Contains(err.Error(), "fields.title or fields.text") {
		t.Errorf("empty card: %v", err)
	}
}

func TestEnqueueRefusesIncompleteRecordsWithoutShowingTheURL(t *testing.T) {
	for _, c := range []struct {
		change   func(d *Delivery)
		fragment string
	}{
		{func(d *Delivery) { d.RequestID = "req-1" }, "requestId: must be a UUID"},
		{func(d *Delivery) { d.RouterID = "" }, "routerId: must be"},
		{func(d *Delivery) { d.ConnectorID = "-x" }, "connectorId: must be"},
		{func(d *Delivery) { d.ConnectorType = "IBM_EVENT_NOTIFICATIONS" }, `"IBM_EVENT_NOTIFICATIONS" is not delivered by mgmtapi`},
		{func(d *Delivery) { d.EventKind = "exploded" }, `eventKind: "exploded" is not one of`},
		{func(d *Delivery) { d.URL = "ftp://secret@x" }, "url: must be an absolute http or https URL"},
		{func(d *Delivery) { d.EntityID = "" }, "entityType and entityId: required"},
		{func(d *Delivery) { d.TeamID = 0 }, "teamId: required"},
	} {
		d := base(GenericHTTPS, Opened, nil)
		c.change(&d)
		err := complete(&d)
		if err == nil || !strings.Contains(err.Error(), c.fragment) || strings.Contains(err.Error(), "secret") {
			t.Errorf("want %q, got %v", c.fragment, err)
		}
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"3": 3 * time.Second, "0": 0, "Sat, 28 Nov 2026 05:00:07 GMT": 7 * time.Second,
		"Sat, 28 Nov 2026 04:00:00 GMT": 0, "99999999999": (1 << 20) * time.Second,
	} {
		if got, ok := retryAfter(v, now); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "soon", "1.5"} {
		if _, ok := retryAfter(v, now); ok {
			t.Errorf("%q read as a delay", v)
		}
	}
}

func TestPolicyRefusesWhatIsNotPublic(t *testing.T) {
	refusedKinds := map[string]string{
		"127.0.0.1": "loopback", "::1": "loopback", "10.1.2.3": "private", "192.168.0.1": "private",
		"172.16.5.4": "private", "fd00::1": "private", "169.254.169.254": "link-local", "fe80::1": "link-local",
		"0.0.0.0": "unspecified", "::": "unspecified", "0.1.2.3": "unspecified", "224.0.0.1": "link-local",
		"239.1.1.1": "multicast", "::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private",
	}
	for addr, kind := range refusedKinds {
		err := Policy{}.Check(netip.MustParseAddr(addr))
		r, ok := refused(err)
		if !ok || r.Kind != kind || !strings.Contains(err.Error(), "--notify-allow-private") {
			t.Errorf("%s: %v, want refused as %s", addr, err, kind)
		}
		if err := (Policy{AllowPrivate: true}).Check(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("%s with allow-private: %v", addr, err)
		}
	}
	for _, addr := range []string{"93.184.216.34", "2606:2800:220:1::1", "8.8.8.8"} {
		if err := (Policy{}).Check(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	p := Policy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}
	if p.Check(netip.MustParseAddr("10.20.3.4")) != nil || p.Check(netip.MustParseAddr("10.21.0.1")) == nil {
		t.Errorf("allow-cidr 10.20.0.0/16 is not applied")
	}
}

func TestBackoffGrowsWithJitterUpToItsBound(t *testing.T) {
	w := NewWorker(Options{BackoffBase: time.Second, BackoffMax: 10 * time.Second})
	for n, bounds := range map[int][2]time.Duration{1: {500 * time.Millisecond, time.Second}, 3: {2 * time.Second, 4 * time.Second},
		10: {5 * time.Second, 10 * time.Second}} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := w.backoff(n)
			if d < bounds[0] || d > bounds[1] {
				t.Fatalf("attempt %d: %s outside %v", n, d, bounds)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("attempt %d: %d distinct delays in 50; no jitter", n, len(seen))
		}
	}
}

func methodOf(r *http.Request) string {
	if r == nil {
		return ""
	}
	return r.Method
}

// TestServiceNowIncidentAndIncidentIOEvent: a ServiceNow record is a Table API incident (the
// correlation_id its dedup key, impact and urgency 1 to 3 only) and an incident.io record an
// alert event (firing, resolved on a resolution, one deduplication_key); both need their
// Authorization header and no routing key, and neither takes a method of its own.
func TestServiceNowIncidentAndIncidentIOEvent(t *testing.T) {
	auth := map[string]string{"Authorization": "Basic dTpw"}
	sn := base(ServiceNow, Triggered, map[string]any{"short_description": "disk full", "description": "d", "impact": "2", "urgency": "3"})
	sn.Headers = auth
	body, _, _ := sent(t, sn)
	if body["short_description"] != "disk full" || body["description"] != "d" || body["impact"] != "2" || body["urgency"] != "3" ||
		body["correlation_id"] != "mgmtapi/7/case/case-1" || body["correlation_display"] != "mgmtapi" || len(body) != 6 {
		t.Errorf("ServiceNow body %v", body)
	}
	bad := base(ServiceNow, Triggered, map[string]any{"short_description": "x", "impact": "4"})
	bad.Headers = auth
	if err := complete(&bad); err == nil || !strings.Contains(err.Error(), "fields.impact") {
		t.Errorf("impact 4: %v", err)
	}
	if d := base(ServiceNow, Triggered, map[string]any{"short_description": "x"}); complete(&d) == nil {
		t.Errorf("a ServiceNow record without Authorization is accepted")
	}
	if d := base(ServiceNow, Triggered, map[string]any{"short_description": " "}); func() error { d.Headers = auth; return complete(&d) }() == nil {
		t.Errorf("a ServiceNow record without short_description is accepted")
	}
	iio := base(IncidentIO, Triggered, map[string]any{"title": "disk full", "metadata": map[string]any{"service": "api"}})
	iio.Headers = map[string]string{"Authorization": "Bearer tok"}
	fired, _, _ := sent(t, iio)
	iio.EventKind = Resolved
	resolved, _, _ := sent(t, iio)
	if fired["status"] != "firing" || resolved["status"] != "resolved" || fired["title"] != "disk full" ||
		fired["deduplication_key"] != "mgmtapi/7/case/case-1" || resolved["deduplication_key"] != fired["deduplication_key"] ||
		path(fired, "metadata", "service") != "api" || path(fired, "metadata", "entity_id") != "case-1" {
		t.Errorf("incident.io firing %v, resolved %v", fired, resolved)
	}
	iio.Method = "PUT"
	if err := complete(&iio); err == nil || !strings.Contains(err.Error(), "method") {
		t.Errorf("a PUT incident.io record: %v", err)
	}
	withHeaders := base(Slack, Triggered, map[string]any{"text": "x"})
	withHeaders.Headers = auth
	if err := complete(&withHeaders); err == nil || !strings.Contains(err.Error(), "headers") {
		t.Errorf("a Slack record with headers: %v", err)
	}
}

// path reads a member of nested JSON objects.
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
