package notifiers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// DeliverRecord is the webhook types' delivery of outbox records (delivery.Options.Webhooks;
// internal/delivery cannot import this package, which imports it): it sends the record's message
// to its snapshot of the webhook once, as Send does, in the type's own format, with the record's
// idempotency key (the Idempotency-Key header; an email's Message-ID). Retry in the answer is the
// type's rule for the answer it got (429 and 5xx for most types), or a network error or timeout;
// Wait the receiver's Retry-After, which the worker honours as it does for connectors' records.
// A record of a type that is unknown, not delivered, or whose message does not decode fails, not
// retried.
func DeliverRecord(ctx context.Context, s *delivery.Sender, w delivery.WebhookRecord) delivery.Attempt {
	k, ok := Lookup(w.Type)
	if !ok {
		return delivery.Attempt{Err: fmt.Errorf("webhook type %q is not one mgmtapi knows", w.Type)}
	}
	var m Message
	if err := json.Unmarshal(w.Message, &m); err != nil {
		return delivery.Attempt{Err: fmt.Errorf("the record's message does not decode: %v", err)}
	}
	o := send(ctx, s, k, TargetOf(w.URL, w.Settings), m, w.IdempotencyKey)
	return delivery.Attempt{Status: o.Status, Err: o.Err, Retry: o.Err != nil && o.Retry, Wait: o.Wait}
}

// TargetOf is the Target of a webhook stored as a URL and its settings by their public field
// names, where a generic webhook's headers are a JSON object under "headers" and an email
// group's addresses a JSON array under "emailAddresses" (outgoingwebhooks.Destination's form).
// Settings that do not decode are left out, so that the type's delivery reports what is missing.
func TargetOf(url string, settings map[string]string) Target {
	t := Target{URL: url, Settings: map[string]string{}}
	for k, v := range settings {
		switch k {
		case "headers":
			_ = json.Unmarshal([]byte(v), &t.Headers)
		case "emailAddresses":
			_ = json.Unmarshal([]byte(v), &t.Emails)
		default:
			t.Settings[k] = v
		}
	}
	return t
}
