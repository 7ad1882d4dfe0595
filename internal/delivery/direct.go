package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// Attempt is the outcome of one request sent by Do or one message sent by Mail.
type Attempt struct {
	// Status is the receiver's HTTP status, or the SMTP server's last reply code; 0 when none
	// answered.
	Status int
	// Body is the start of the receiver's answer (at most 512 bytes), for a message.
	Body []byte
	// Err is nil when the receiver took the request (a 2xx, an SMTP 250); else a readable message
	// naming the host and never the URL, a header nor a secret.
	Err error
	// Retry says that sending again later may succeed: a network error, a timeout, an SMTP 4xx.
	// The HTTP statuses are the caller's to judge (see Status).
	Retry bool
	// Wait is how long the receiver asked to be left alone before the next attempt (its
	// Retry-After header, on an answer that is not a 2xx); 0 when it did not say.
	Wait time.Duration
}

// Do sends req once through the Sender's client: the Policy is checked at every connection (the
// address a name resolves to and each redirect's), no proxy is used, at most 3 redirects are
// followed, the whole attempt is bounded by the attempt timeout and at most the response limit
// is read. It is for requests that a caller builds itself (the outgoing webhook types of
// internal/notifiers); the connector deliveries use SendNow.
func (s *Sender) Do(ctx context.Context, req *http.Request) Attempt {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	host := req.URL.Hostname()
	res, err := s.client.Do(req.WithContext(ctx))
	if err != nil {
		o := networkOutcome(record{URL: req.URL.String()}, err, ctx.Err() != nil, s.timeout)
		return Attempt{Err: errors.New(o.err), Retry: o.retry}
	}
	defer res.Body.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(res.Body, head)
	head = head[:n]
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, max(s.limit-int64(n), 0)))
	a := Attempt{Status: res.StatusCode, Body: head}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		msg := fmt.Sprintf("%s answered %d %s", host, res.StatusCode, http.StatusText(res.StatusCode))
		if s := snippet(head); s != "" {
			msg += ": " + s
		}
		a.Err = errors.New(msg)
		a.Wait, _ = retryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	return a
}

// Mail sends one plain-text message to the recipients (checked by connectortypes.ParseRecipients) through the
// operator's SMTP server, as EMAIL deliveries are sent (STARTTLS, authentication, the From
// address and the Message-ID derived from key), once, within the attempt timeout. Without an
// SMTP server it fails with ErrNoSMTPServer.
func (s *Sender) Mail(ctx context.Context, key string, to []string, subject, text string) Attempt {
	list, err := connectortypes.ParseRecipients(to)
	if err != nil {
		return Attempt{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	r := record{ConnectorType: Email, IdempotencyKey: key}
	r.Payload, _ = json.Marshal(map[string]any{"to": list, "subject": subject, "text": text})
	o := sendEmail(ctx, s.smtp, r, s.timeout)
	a := Attempt{Status: o.status, Retry: o.retry}
	if o.err != "" {
		a.Err = errors.New(o.err)
	}
	return a
}

// Timeout is how long one attempt of the Sender may take.
func (s *Sender) Timeout() time.Duration { return s.timeout }

// HTTPClient is the Sender's client, for a caller whose library sends the requests itself (the
// AWS SDK of EventBridge webhooks): every connection it makes is checked by the Policy, it uses
// no proxy and follows at most 3 redirects. The caller bounds each attempt (Timeout) and reads
// the answers.
func (s *Sender) HTTPClient() *http.Client { return s.client }
