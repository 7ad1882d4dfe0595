package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// newRequest builds the HTTP request that sends r: a POST (or a generic connector's PUT; the
// method is sent in upper case whatever the case stored) of its connector type's body to its URL, with a generic connector's additional headers and the
// Idempotency-Key header (every type: receivers that ignore it lose nothing).
func newRequest(ctx context.Context, r record) (*http.Request, error) {
	body, err := buildBody(r)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(r.Method) // clients write post as often as POST
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(body))
	if err != nil {
		// url.Error quotes the URL, a secret
		return nil, errors.New("the connector's URL is not a valid URL")
	}
	for name, value := range r.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mgmtapi-notifications/1")
	req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	return req, nil
}

// buildBody is the JSON body of r in its connector type's own format (connectortypes: each HTTP
// type's Body).
func buildBody(r record) ([]byte, error) {
	sender, ok := httpSender(r.ConnectorType)
	if !ok {
		return nil, fmt.Errorf("delivery connectorType: %q is not delivered by mgmtapi", r.ConnectorType)
	}
	var fields map[string]any
	if len(r.Payload) > 0 {
		if err := json.Unmarshal(r.Payload, &fields); err != nil {
			return nil, fmt.Errorf("delivery fields: %w", err)
		}
	}
	if fields == nil {
		fields = map[string]any{}
	}
	rec := typeRecord(r)
	rec.Fields = fields
	return sender.Body(rec)
}

// typeRecord is r as its type reads it, without its fields.
func typeRecord(r record) connectortypes.Record {
	return connectortypes.Record{RoutingKey: r.RoutingKey, DedupKey: r.DedupKey,
		Event: string(r.EventKind), EntityType: r.EntityType, EntityID: r.EntityID}
}

// httpSender is the connector type whose HTTP requests deliver records of type t; false for the
// types that are not sent as HTTP requests built here (EMAIL, outgoing webhooks) and unknown ones.
func httpSender(t ConnectorType) (connectortypes.HTTPSender, bool) {
	kind, ok := connectortypes.Lookup(oas.ConnectorType(t))
	if !ok {
		return nil, false
	}
	s, ok := kind.Sender.(connectortypes.HTTPSender)
	return s, ok
}

// prepareRequest lets the record's type rewrite req from what the receiver holds
// (connectortypes.RequestPreparer); nothing for the other types.
func prepareRequest(ctx context.Context, client *http.Client, r record, req *http.Request) (retry bool, err error) {
	s, ok := httpSender(r.ConnectorType)
	if !ok {
		return false, nil
	}
	p, ok := s.(connectortypes.RequestPreparer)
	if !ok {
		return false, nil
	}
	return p.Prepare(ctx, client, typeRecord(r), req)
}

// retryable reports whether an answer with the HTTP status to a record of type t may succeed
// when sent again, as its connector type says.
func retryable(t ConnectorType, status int) bool {
	s, ok := httpSender(t)
	return ok && s.Retry(status)
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date; ok is false when absent
// or unreadable.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var secs int64
	if _, err := fmt.Sscanf(v, "%d", &secs); err == nil && fmt.Sprint(secs) == v {
		if secs < 0 {
			return 0, false
		}
		secs = min(secs, 1<<20) // longer than any retry time; no overflow
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
