package delivery

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Sender sends a delivery now, outside the outbox: the notification-center testing operations
// use it to answer what the receiver made of a test notification. It builds the request as the
// worker does (newRequest, the connector type's body), connects under the same policy (the
// dialer's address check, no proxy, bounded redirects) and reads the answer up to the same bound;
// it makes one attempt, retries nothing and writes no outbox record nor case event. A delivery
// marked Test is sent marked as a test (markTest, TestHeader).
type Sender struct {
	client  *http.Client
	timeout time.Duration
	limit   int64
	smtp    *SMTPServer
}

// NewSender returns a Sender under opts' Policy, AttemptTimeout, ResponseLimit (the defaults of
// Options when zero) and SMTP; the other options are the worker's.
func NewSender(opts Options) *Sender {
	opts.defaults()
	return &Sender{
		client:  newClient(opts.Policy, min(opts.AttemptTimeout, 10*time.Second)),
		timeout: opts.AttemptTimeout,
		limit:   opts.ResponseLimit,
		smtp:    opts.SMTP,
	}
}

// SendNow checks d as Enqueue does and sends it once, within ctx and the attempt timeout. status
// is the receiver's HTTP status when it answered (0 when it did not); for an email, the SMTP
// server's last reply code (250 when it accepted the message). err is nil on a 2xx; else a
// readable message naming the host and never the URL, the routing key nor the headers: the
// check's (a field and its rule), a refusal of the policy (a loopback, private, link-local or
// unspecified address), a timeout, a network error, or the receiver's status with the start of
// its answer. An outgoing webhook's delivery (connector type Webhook) is refused.
func (s *Sender) SendNow(ctx context.Context, d Delivery) (status int, err error) {
	if d.ConnectorType == Webhook {
		return 0, errors.New("delivery connectorType: an outgoing webhook is sent now through its type's delivery (notifiers.Send), not SendNow")
	}
	if d.Test {
		markTest(&d)
	}
	if err := complete(&d); err != nil {
		return 0, err
	}
	r := recordOf(&d)
	if d.Test && d.ConnectorType != Email {
		r.Headers = testHeaders(r.Headers)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	o := send(ctx, s.client, s.smtp, r, s.timeout, s.limit)
	if o.err != "" {
		return o.status, errors.New(o.err)
	}
	return o.status, nil
}
