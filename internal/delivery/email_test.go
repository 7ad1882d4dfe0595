package delivery_test

import (
	"context"
	"errors"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/smtptest"
)

// emailRecord is an email delivery of the fixture's case to the recipients.
func (f *fixture) emailRecord(key, subject, text string, to ...string) delivery.Delivery {
	return delivery.Delivery{TeamID: f.team, RequestID: uuid.NewString(), RouterID: "router-1", RouterName: "Production",
		ConnectorID: "mail-1", ConnectorName: "On call", ConnectorType: delivery.Email,
		Fields:     map[string]any{"to": to, "subject": subject, "text": text},
		EntityType: "case", EntityID: f.caseID, CaseID: f.caseID, EventKind: delivery.Opened, IdempotencyKey: key}
}

// emailWorker is worker() sending email through server.
func emailWorker(env *apitest.Env, server *delivery.SMTPServer, change func(o *delivery.Options)) *delivery.Worker {
	return worker(env, func(o *delivery.Options) {
		o.SMTP = server
		if change != nil {
			change(o)
		}
	})
}

func drain(t *testing.T, w *delivery.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestEmailArrivesWithItsHeadersAndBody: an email delivery reaches a real SMTP server as one
// message to the recipients, with From, To, Subject (RFC 2047 when not ASCII), Date,
// MIME-Version, a UTF-8 plain-text quoted-printable body and a Message-ID; CR and LF in the
// rendered subject add no header (the Bcc a subject tries to smuggle is not one). The record
// ends sent with the server's 250 and the case records notificationSent.
func TestEmailArrivesWithItsHeadersAndBody(t *testing.T) {
	server := smtptest.Start(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		before := len(server.Messages(t))
		subject := "Disque plein à 98 % 🔥\r\nBcc: victim@example.org\r\nX-Injected: yes"
		text := "Le disque /var est plein.\n.a line starting with a dot\n" + strings.Repeat("long ", 40) + "\nfin"
		d := f.emailRecord("mail-key-1", subject, text, "Ops <ops@example.com>", "oncall@example.net", "OPS@example.com")
		f.enqueue(t, d)
		drain(t, emailWorker(env, server.SMTPServer("alerts@mgmtapi.example"), nil))
		if s := f.stored(t, d.IdempotencyKey); s.State != "sent" || s.Status != 250 || s.Attempts != 1 || s.Error != "" {
			t.Fatalf("record %+v", s)
		}
		got := server.WaitMessages(t, before+1)[before:]
		if len(got) != 1 {
			t.Fatalf("%d messages", len(got))
		}
		m := got[0]
		if m.From != "alerts@mgmtapi.example" || strings.Join(m.To, " ") != "ops@example.com oncall@example.net" {
			t.Errorf("envelope from %q to %q", m.From, m.To)
		}
		if from, err := m.Header.AddressList("From"); err != nil || len(from) != 1 || from[0].Address != "alerts@mgmtapi.example" {
			t.Errorf("From %v %v", from, err)
		}
		to, err := m.Header.AddressList("To")
		if err != nil || len(to) != 2 || to[0].Address != "ops@example.com" || to[1].Address != "oncall@example.net" {
			t.Errorf("To %v %v", to, err)
		}
		decoded, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		if want := "Disque plein à 98 % 🔥 Bcc: victim@example.org X-Injected: yes"; err != nil || decoded != want {
			t.Errorf("Subject %q (%v), want %q", decoded, err, want)
		}
		head, _, _ := strings.Cut(m.Raw, "\r\n\r\n")
		for _, c := range head {
			if c > 127 {
				t.Errorf("the header holds a raw non-ASCII character %q: %s", c, head)
				break
			}
		}
		if !strings.Contains(head, "=?utf-8?q?") {
			t.Errorf("the subject is not RFC 2047 encoded: %s", head)
		}
		if m.Header.Get("Bcc") != "" || m.Header.Get("X-Injected") != "" || strings.Contains(head, "\nBcc:") {
			t.Errorf("a rendered subject added a header: %s", head)
		}
		if _, err := m.Header.Date(); err != nil {
			t.Errorf("Date: %v", err)
		}
		if m.Header.Get("MIME-Version") != "1.0" || m.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			m.Header.Get("Content-Transfer-Encoding") != "quoted-printable" {
			t.Errorf("MIME headers %v", m.Header)
		}
		if id := m.Header.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@mgmtapi.example>") {
			t.Errorf("Message-ID %q", id)
		}
		if body := strings.ReplaceAll(m.Body, "\r\n", "\n"); strings.TrimSuffix(body, "\n") != text {
			t.Errorf("body %q, want %q", body, text)
		}
		events := f.notificationEvents(t)
		if len(events) != 1 || !events[0].NotificationSent.Set {
			t.Errorf("case events %+v", events)
		}

		// an ASCII subject with line breaks stays one header line, unencoded
		ascii := f.emailRecord("mail-key-2", "disk full\r\nBcc: victim@example.org\n\nbody?", "t", "ops@example.com")
		f.enqueue(t, ascii)
		drain(t, emailWorker(env, server.SMTPServer("alerts@mgmtapi.example"), nil))
		m = server.WaitMessages(t, before+2)[before+1]
		if got := m.Header.Get("Subject"); got != "disk full Bcc: victim@example.org body?" || m.Header.Get("Bcc") != "" || len(m.To) != 1 {
			t.Errorf("ASCII subject %q, header %v, to %q", got, m.Header, m.To)
		}
	})
}

// TestEmailRetryKeepsTheMessageID: a server answering DATA with 451 gets the message again after
// the backoff, with the same Message-ID; the record ends sent after two attempts, and another
// notification has another Message-ID.
func TestEmailRetryKeepsTheMessageID(t *testing.T) {
	server := smtptest.Start(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		before := len(server.Attempts(t))
		d := f.emailRecord("flaky-"+uuid.NewString(), "disk full", "text", "flaky@example.com")
		other := f.emailRecord("other-key", "disk full", "text", "ops@example.com")
		f.enqueue(t, d, other)
		run(t, emailWorker(env, server.SMTPServer("alerts@example.com"), nil))
		f.waitFinal(t, other.IdempotencyKey)
		if s := f.waitFinal(t, d.IdempotencyKey); s.State != "sent" || s.Attempts != 2 {
			t.Fatalf("record %+v", s)
		}
		attempts := server.Attempts(t)[before:]
		if len(attempts) != 3 {
			t.Fatalf("attempts %q", attempts)
		}
		var flaky []string
		counts := map[string]int{}
		for _, id := range attempts {
			counts[id]++
			if counts[id] == 2 {
				flaky = append(flaky, id)
			}
		}
		if len(counts) != 2 || len(flaky) != 1 {
			t.Errorf("Message-IDs of the attempts %q: want one sent twice and another once", attempts)
		}
	})
}

// TestEmailRefusals: a recipient refused by RCPT with 5xx and a message refused at DATA with 5xx
// fail at once, naming the address and the reply; a recipient refused with 4xx is retried until
// the retry time ends. Without an SMTP server an email delivery fails at once, naming the flag,
// and the case records notificationFailed.
func TestEmailRefusals(t *testing.T) {
	server := smtptest.Start(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		refused := f.emailRecord("refused-key", "s", "t", "ops@example.com", "refused-1@example.com")
		rejected := f.emailRecord("rejected-key", "s", "t", "rejected@example.com")
		busy := f.emailRecord("busy-key", "s", "t", "busy@example.com")
		f.enqueue(t, refused, rejected, busy)
		ctx, stop := context.WithCancel(context.Background())
		w := emailWorker(env, server.SMTPServer("alerts@example.com"), func(o *delivery.Options) {
			o.MaxRetryTime = 1500 * time.Millisecond // room for a second attempt on a loaded machine (a Python server answers each)
		})
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		f.waitFinal(t, busy.IdempotencyKey)
		stop()
		<-done
		s := f.stored(t, refused.IdempotencyKey)
		if s.State != "failed" || s.Attempts != 1 || s.Status != 550 || !strings.Contains(s.Error, "RCPT TO refused-1@example.com with 550") ||
			!strings.Contains(s.Error, "no such user here") {
			t.Errorf("refused recipient: %+v", s)
		}
		s = f.stored(t, rejected.IdempotencyKey)
		if s.State != "failed" || s.Attempts != 1 || s.Status != 554 || !strings.Contains(s.Error, "with 554") {
			t.Errorf("rejected message: %+v", s)
		}
		s = f.stored(t, busy.IdempotencyKey)
		if s.State != "failed" || s.Attempts < 2 || s.Status != 450 || !strings.Contains(s.Error, "gave up after") {
			t.Errorf("busy recipient: %+v", s)
		}

		none := f.emailRecord("no-server-key", "s", "t", "ops@example.com")
		f.enqueue(t, none)
		drain(t, emailWorker(env, nil, nil))
		s = f.stored(t, none.IdempotencyKey)
		if s.State != "failed" || s.Attempts != 1 || s.Error != "email: no SMTP server is configured (--smtp-url)" {
			t.Errorf("no SMTP server: %+v", s)
		}
		var failed []string
		for _, e := range f.notificationEvents(t) {
			if e.NotificationFailed.Set {
				failed = append(failed, e.NotificationFailed.Value.Error.Value)
			}
		}
		if len(failed) != 4 || !strings.Contains(failed[3], "no SMTP server is configured (--smtp-url)") {
			t.Errorf("case's failures %q", failed)
		}
	})
}

// TestEmailEnqueueChecksTheRecipients: Enqueue refuses an email delivery without recipients, with
// one that is not an address or holds a line break, or with a URL; a good one is accepted.
func TestEmailEnqueueChecksTheRecipients(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		for name, tc := range map[string]struct {
			d    delivery.Delivery
			want string
		}{
			"no recipient":   {f.emailRecord("k1", "s", "t"), "fields.to: must hold at least one address"},
			"not an address": {f.emailRecord("k2", "s", "t", "ops"), `fields.to: must hold email addresses: [0] "ops" is not one`},
			"line break":     {f.emailRecord("k3", "s", "t", "ops@example.com\r\nBcc: x@example.com"), "fields.to: must hold email addresses: [0] holds a line break"},
			"a url": {func() delivery.Delivery {
				d := f.emailRecord("k4", "s", "t", "ops@example.com")
				d.URL = "https://example.com"
				return d
			}(), "delivery url: EMAIL deliveries go to no URL"},
		} {
			err := env.DB.InTx(context.Background(), func(tx *db.Tx) error { return delivery.Enqueue(context.Background(), tx, tc.d) })
			var incomplete delivery.IncompleteError
			if !errors.As(err, &incomplete) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", name, err, tc.want)
			}
		}
		f.enqueue(t, f.emailRecord("k5", "s", "t", "ops@example.com"))
	})
}

// TestParseRecipients: display names are dropped, duplicates (case aside) kept once, and the
// bounds hold.
func TestParseRecipients(t *testing.T) {
	got, err := connectortypes.ParseRecipients([]string{"Ops <ops@example.com>", "b@example.com", "OPS@example.com"})
	if err != nil || strings.Join(got, ",") != "ops@example.com,b@example.com" {
		t.Errorf("%q %v", got, err)
	}
	many := make([]string, connectortypes.MaxRecipients+1)
	for i := range many {
		many[i] = "a@example.com"
	}
	if _, err := connectortypes.ParseRecipients(many); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Errorf("101 recipients: %v", err)
	}
}
