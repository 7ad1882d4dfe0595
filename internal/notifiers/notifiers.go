// Package notifiers holds the outgoing webhook types: for each, in one file, the check of its
// settings, the request it sends for a message in the receiving service's own wire format, and
// which answers are worth retrying. The types are registered in one table (kinds, below): adding
// a type is one file and one line there.
//
// Requests are sent through delivery.Sender, which applies the outbound address policy (no
// loopback, private or link-local address unless the operator allows them), the redirect bound
// and the attempt timeout; email goes through the operator's SMTP server.
package notifiers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// Message is what one notification says, whatever the type renders it as.
type Message struct {
	// Title is one line (an alert's name); Text the body, possibly several lines.
	Title, Text string
	// Status is what happened: Triggered, Resolved or Test.
	Status string
	// Severity is critical, error, warning or info (info when empty).
	Severity string
	// Key identifies what the message is about, the same for its triggering and its resolution
	// (PagerDuty's dedup_key, Opsgenie's alias).
	Key string
	// Link points at the alert or case, when there is one.
	Link string
	// Time is when it happened.
	Time time.Time
	// Fields are further facts by name (labels, the team, the application), shown as a list of
	// facts and substituted in payload templates as $NAME.
	Fields map[string]string
}

// The statuses of a Message.
const (
	Triggered = "triggered"
	Resolved  = "resolved"
	Test      = "test"
)

// Target is a stored webhook as a notifier reads it: its URL and its settings by their public
// field names (headers and email addresses apart). Values are secrets: never log them.
type Target struct {
	URL      string
	Settings map[string]string
	// Headers are a generic webhook's headers.
	Headers map[string]string
	// Emails are an email group's addresses.
	Emails []string
}

// Notifier is one webhook type's delivery.
type Notifier interface {
	// Check checks the target's settings beyond the URL rule of the kind; the error is a
	// *FieldError naming the setting.
	Check(t Target) error
	// Request builds the request that delivers m to t.
	Request(ctx context.Context, t Target, m Message) (*http.Request, error)
	// Retry says whether an answer with this HTTP status may succeed when sent again.
	Retry(status int) bool
}

// Mailer is a Notifier that sends email instead of HTTP requests.
type Mailer interface {
	Mail(t Target, m Message) (to []string, subject, text string)
}

// Deliverer is a Notifier whose library sends the requests itself (the AWS SDK): it is handed
// the delivery client and a context bounded by the attempt timeout.
type Deliverer interface {
	Deliver(ctx context.Context, client *http.Client, t Target, m Message) Outcome
}

// Authorizer is a Notifier whose requests need a credential fetched first (an IBM IAM token for an
// API key): Authorize sets it on req through the delivery client, or answers why it could not.
type Authorizer interface {
	Authorize(ctx context.Context, client *http.Client, t Target, req *http.Request) Outcome
}

// URLRule says whether a kind takes the webhook's url.
type URLRule int

// The URL rules.
const (
	URLRequired URLRule = iota
	URLOptional
	URLNone
)

// Kind is one webhook type of the public documents.
type Kind struct {
	// Type is the public WebhookType name; Label how people call it.
	Type, Label string
	// Config is the name of its settings object in a webhook (genericWebhook, slack, …).
	Config string
	URL    URLRule
	// Notifier delivers it; nil for a type mgmtapi stores but does not deliver.
	Notifier Notifier
}

// kinds is the table of webhook types, in the order of the public enumeration.
var kinds = []Kind{
	{Type: "GENERIC", Label: "Generic webhook", Config: "genericWebhook", URL: URLRequired, Notifier: generic{}},
	{Type: "SLACK", Label: "Slack", Config: "slack", URL: URLRequired, Notifier: slack{}},
	{Type: "PAGERDUTY", Label: "PagerDuty", Config: "pagerDuty", URL: URLOptional, Notifier: pagerDuty{}},
	{Type: "SEND_LOG", Label: "Send log", Config: "sendLog", URL: URLOptional, Notifier: sendLog{}},
	{Type: "EMAIL_GROUP", Label: "Email group", Config: "emailGroup", URL: URLNone, Notifier: emailGroup{}},
	{Type: "MICROSOFT_TEAMS", Label: "Microsoft Teams (connector)", Config: "microsoftTeams", URL: URLRequired, Notifier: teamsConnector{}},
	{Type: "JIRA", Label: "Jira", Config: "jira", URL: URLRequired, Notifier: jira{}},
	{Type: "OPSGENIE", Label: "Opsgenie", Config: "opsgenie", URL: URLRequired, Notifier: opsgenie{}},
	{Type: "DEMISTO", Label: "Cortex XSOAR (Demisto)", Config: "demisto", URL: URLRequired, Notifier: demisto{}},
	{Type: "AWS_EVENT_BRIDGE", Label: "Amazon EventBridge", Config: "awsEventBridge", URL: URLNone, Notifier: eventBridge{}},
	{Type: "IBM_EVENT_NOTIFICATIONS", Label: "IBM Cloud Event Notifications", Config: "ibmEventNotifications", URL: URLOptional, Notifier: ibmEventNotifications{}},
	{Type: "MS_TEAMS_WORKFLOW", Label: "Microsoft Teams (workflow)", Config: "msTeamsWorkflow", URL: URLRequired, Notifier: teamsWorkflow{}},
}

// Kinds returns every webhook type, in the order of the public enumeration.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// Lookup returns the kind of the public type name; false for UNKNOWN and names that are none.
func Lookup(typ string) (Kind, bool) {
	for _, k := range kinds {
		if k.Type == typ {
			return k, true
		}
	}
	return Kind{}, false
}

// FieldError is a setting that breaks a rule. Field is the setting's path in the webhook
// ("url", "pagerDuty.serviceKey").
type FieldError struct {
	Field, Rule string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Rule }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// Check checks t as a webhook of kind k: the URL rule (an absolute http or https URL with a host,
// no user information) and the kind's own rules. The error is a *FieldError.
func (k Kind) Check(t Target) error {
	switch {
	case k.URL == URLRequired && t.URL == "":
		return fieldErr("url", "required for %s webhooks: an absolute http or https URL", k.Type)
	case k.URL == URLNone && t.URL != "":
		return fieldErr("url", "%s webhooks take no url", k.Type)
	case t.URL != "":
		if err := CheckURL(t.URL); err != nil {
			return fieldErr("url", "%s", err)
		}
	}
	if k.Notifier == nil {
		return nil
	}
	return k.Notifier.Check(t)
}

// CheckURL checks that u is an absolute http or https URL with a host and no user information;
// the error is the rule broken, without the URL (it may hold a token).
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || !p.IsAbs() || p.Opaque != "" {
		return errors.New("must be an absolute http or https URL")
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return fmt.Errorf("scheme %q is not http nor https", p.Scheme)
	}
	if p.Hostname() == "" {
		return errors.New("must name a host")
	}
	if p.User != nil {
		return errors.New("must not carry a user name or password (put credentials in headers)")
	}
	return nil
}

// Outcome is what one delivery came to.
type Outcome struct {
	// Status is the receiver's HTTP status or the SMTP server's reply code; 0 when none answered.
	Status int
	// Err is nil on success; else a readable message naming the host, never the URL nor a secret.
	Err error
	// Retry says that sending again later may succeed.
	Retry bool
	// Wait is how long the receiver asked to be left alone first (its Retry-After); 0 for none.
	Wait time.Duration
}

// Sender is what Send needs of delivery.Sender.
type Sender interface {
	Do(ctx context.Context, req *http.Request) delivery.Attempt
	Mail(ctx context.Context, key string, to []string, subject, text string) delivery.Attempt
	HTTPClient() *http.Client
	Timeout() time.Duration
}

// TestHeader marks the HTTP requests of test notifications, so that a receiver can tell them
// from alerts.
const TestHeader = "X-Mgmtapi-Test"

// Send delivers m to t as a webhook of kind k, once: the request the kind builds goes through
// s (the outbound policy, the timeout), or the email through s's SMTP server. A test message's
// requests carry TestHeader.
func Send(ctx context.Context, s Sender, k Kind, t Target, m Message) Outcome {
	return send(ctx, s, k, t, m, "")
}

// send is Send; a key that is not empty is sent as the Idempotency-Key header of an HTTP request
// and is what an email's Message-ID derives from (else the message's key is).
func send(ctx context.Context, s Sender, k Kind, t Target, m Message, key string) Outcome {
	if k.Notifier == nil {
		return Outcome{Err: fmt.Errorf("mgmtapi does not deliver %s webhooks", k.Type)}
	}
	if d, ok := k.Notifier.(Deliverer); ok {
		ctx, cancel := context.WithTimeout(ctx, s.Timeout())
		defer cancel()
		return d.Deliver(ctx, s.HTTPClient(), t, m)
	}
	if mailer, ok := k.Notifier.(Mailer); ok {
		to, subject, text := mailer.Mail(t, m)
		if key == "" {
			key = m.Key
		}
		a := s.Mail(ctx, key, to, subject, text)
		return Outcome{Status: a.Status, Err: a.Err, Retry: a.Retry}
	}
	req, err := k.Notifier.Request(ctx, t, m)
	if err != nil {
		return Outcome{Err: err}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "mgmtapi")
	}
	if m.Status == Test {
		req.Header.Set(TestHeader, "true")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if auth, ok := k.Notifier.(Authorizer); ok {
		authCtx, cancel := context.WithTimeout(ctx, s.Timeout())
		o := auth.Authorize(authCtx, s.HTTPClient(), t, req)
		cancel()
		if o.Err != nil {
			return o
		}
	}
	a := s.Do(ctx, req)
	o := Outcome{Status: a.Status, Err: a.Err, Retry: a.Retry, Wait: a.Wait}
	if a.Status != 0 && a.Err != nil {
		o.Retry = k.Notifier.Retry(a.Status)
	}
	return o
}

// retryServer is the common rule: 429 and 5xx answers are retried, other answers are final.
func retryServer(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// severity is m's severity, one of critical, error, warning and info.
func (m Message) severity() string {
	switch s := strings.ToLower(m.Severity); s {
	case "critical", "error", "warning", "info":
		return s
	}
	return "info"
}

// facts are m's fields in name order.
func (m Message) facts() [][2]string {
	out := make([][2]string, 0, len(m.Fields))
	for k, v := range m.Fields {
		out = append(out, [2]string{k, v})
	}
	sortFacts(out)
	return out
}

// cut keeps s within n runes.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func sortFacts(f [][2]string) {
	slices.SortFunc(f, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
}

// postJSON is a POST of v as JSON to u.
func postJSON(ctx context.Context, u string, v any) (*http.Request, error) {
	return jsonRequest(ctx, http.MethodPost, u, v)
}

func jsonRequest(ctx context.Context, method, u string, v any) (*http.Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return bodyRequest(ctx, method, u, body)
}

func bodyRequest(ctx context.Context, method, u string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		// the URL was checked when stored; the message must not quote it
		return nil, errors.New("url: not a URL a request can be sent to")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
