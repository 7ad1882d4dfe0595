package routers_test

import (
	"context"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/smtptest"
)

// TestAlertIsEmailedToTheConnectorsRecipients: an incident routed to an EMAIL connector is one
// message to its addresses through the SMTP server, with the rendered title as its subject and
// the description as its body; the record ends sent. The worker has the default outbound policy
// (public addresses only): the SMTP server, on loopback, is the operator's and not subject to it.
// The same routing with no SMTP server
// configured records the named failure.
func TestAlertIsEmailedToTheConnectorsRecipients(t *testing.T) {
	server := smtptest.Start(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		before := len(server.Messages(t))
		mail := connectorWith(t, env, key, "EMAIL", map[string]string{"emailAddresses": `["Ops <ops@example.com>","dba@example.com"]`})
		create(t, env, key, `{"name":"mail","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+mail+`"}]}]}`)
		// One start for the firing and the resolution: the resolution names the same alert.
		startsAt := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
		alertmanager(t, env, env.MustKey(t, key, "contextual-data:SendData"), "DiskFull", "critical", startsAt, time.Time{})
		w := env.NewWorker(delivery.Options{SMTP: server.SMTPServer("alerts@example.com"), AttemptTimeout: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		got := server.WaitMessages(t, before+1)[before:]
		if len(got) != 1 {
			t.Fatalf("%d messages", len(got))
		}
		m := got[0]
		subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		if strings.Join(m.To, ",") != "ops@example.com,dba@example.com" || err != nil || !strings.Contains(subject, "DiskFull") {
			t.Errorf("to %q, subject %q (%v)", m.To, subject, err)
		}
		var state, errText string
		if err := env.DB.Read().QueryRowContext(ctx, `SELECT state, error FROM deliveries WHERE connector_id = $1`, mail).Scan(&state, &errText); err != nil || state != "sent" {
			t.Fatalf("record %s %q %v", state, errText, err)
		}

		// the incident resolved, with no SMTP server: the named failure
		alertmanager(t, env, env.MustKey(t, key, "contextual-data:SendData"), "DiskFull", "critical",
			startsAt, time.Now().UTC().Truncate(time.Second))
		if err := env.NewWorker(delivery.Options{}).Drain(ctx); err != nil {
			t.Fatal(err)
		}
		rows := outbox(t, env)
		if len(rows) != 2 || rows[1].Kind != "resolved" {
			t.Fatalf("outbox %+v", rows)
		}
		if err := env.DB.Read().QueryRowContext(ctx, `SELECT state, error FROM deliveries WHERE connector_id = $1 AND event_kind = 'resolved'`, mail).Scan(&state, &errText); err != nil ||
			state != "failed" || errText != "email: no SMTP server is configured (--smtp-url)" {
			t.Fatalf("resolved record %s %q %v", state, errText, err)
		}
	})
}
