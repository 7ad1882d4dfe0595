package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
)

// Webhook is the connector type of an outgoing webhook's records (an alert definition's
// notificationGroup.webhooks[]): the worker does not build their requests itself but hands them
// to Options.Webhooks, the webhook types' own delivery (internal/notifiers), which internal/delivery
// cannot import (it imports this package). Their lease, retries, backoff, idempotency key and
// outcome are the worker's, as for every record.
const Webhook ConnectorType = "OUTGOING_WEBHOOK"

// WebhookRecord is an outgoing webhook's record as the worker hands it to Options.Webhooks.
type WebhookRecord struct {
	// Type is the webhook's public type (GENERIC, SLACK, PAGERDUTY, EMAIL_GROUP, …), URL its url
	// (empty for the types that have none) and Settings the snapshot of its settings by their
	// public field names, taken when the record was written. URL and Settings are secrets.
	Type, URL string
	Settings  map[string]string
	// Message is the rendered notification, as the writer of the record encoded it.
	Message json.RawMessage
	// IdempotencyKey is the record's: HTTP requests carry it as Idempotency-Key, an email derives
	// its Message-ID from it.
	IdempotencyKey string
}

// WebhookSender sends one outgoing webhook's record once through s (the worker's outbound
// policy, attempt timeout, response bound and SMTP server) and answers the attempt; Retry says
// whether the webhook type's rule admits sending it again. The worker records the outcome.
type WebhookSender func(ctx context.Context, s *Sender, w WebhookRecord) Attempt

// webhookType is the form of a public webhook type name.
var webhookType = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// completeWebhook checks an outgoing webhook's delivery: a webhook type, a message that is a JSON
// object, no routing key, a URL that is absolute http or https when there is one.
func completeWebhook(d *Delivery) error {
	switch {
	case !webhookType.MatchString(d.WebhookType):
		return fmt.Errorf("delivery webhookType: must be a public webhook type name (SLACK, GENERIC, …), not %q", d.WebhookType)
	case d.RoutingKey != "":
		return fmt.Errorf("delivery routingKey: an outgoing webhook's settings hold its keys")
	case len(d.DedupKey) > 255:
		return fmt.Errorf("delivery dedupKey: at most 255 characters, not %d", len(d.DedupKey))
	}
	var m map[string]any
	if err := json.Unmarshal(d.Message, &m); err != nil || m == nil {
		return errors.New("delivery message: required, a JSON object")
	}
	if d.URL != "" {
		if err := checkURL(d.URL); err != nil {
			return err
		}
	}
	d.IdempotencyKey = idempotencyKey(d)
	return nil
}

// sendWebhook makes one attempt at an outgoing webhook's record through Options.Webhooks.
func (w *Worker) sendWebhook(ctx context.Context, r record) outcome {
	if w.opts.Webhooks == nil {
		return outcome{err: "outgoing webhook deliveries are not wired in this server (delivery.Options.Webhooks)"}
	}
	s := &Sender{client: w.client, timeout: w.opts.AttemptTimeout, limit: w.opts.ResponseLimit, smtp: w.opts.SMTP}
	a := w.opts.Webhooks(ctx, s, WebhookRecord{Type: r.WebhookType, URL: r.URL, Settings: r.WebhookSettings,
		Message: json.RawMessage(r.Payload), IdempotencyKey: r.IdempotencyKey})
	if a.Err == nil {
		return outcome{status: a.Status}
	}
	return outcome{status: a.Status, err: a.Err.Error(), retry: a.Retry, wait: a.Wait}
}
