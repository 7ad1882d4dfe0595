package routers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/smtptest"
)

const hooksPath = "/mgmt/openapi/latest/integrations/webhooks/v1"

// wireRequest is one request a wireReceiver got, as sent.
type wireRequest struct {
	Method, Path, ContentType, Authorization string
	Body                                     map[string]any
}

// wireReceiver is a real HTTP receiver on loopback that keeps every request, with its method
// and content type, and answers 200.
type wireReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []wireRequest
}

func newWireReceiver(t *testing.T) *wireReceiver {
	rc := &wireReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil && len(raw) > 0 {
			t.Errorf("%s: a body that is not a JSON object: %s", r.URL.Path, raw)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, wireRequest{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"),
			Authorization: r.Header.Get("Authorization"), Body: body})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

// byPath waits (at most a minute) until the receiver holds a request on each of paths, and
// returns the first of each.
func (rc *wireReceiver) byPath(t *testing.T, paths ...string) map[string]wireRequest {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := map[string]wireRequest{}
		rc.mu.Lock()
		for _, r := range rc.got {
			if _, seen := out[r.Path]; !seen {
				out[r.Path] = r
			}
		}
		rc.mu.Unlock()
		missing := 0
		for _, p := range paths {
			if _, ok := out[p]; !ok {
				missing++
			}
		}
		if missing == 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d of %d paths: %+v", len(paths)-missing, len(paths), out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// webhook creates an outgoing webhook of the team through the public API and returns its id.
func webhook(t *testing.T, env *apitest.Env, key, data string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, hooksPath, key, `{"data":`+data+`}`)
	id := apitest.Decode[struct{ ID string }](t, res).ID
	if id == "" {
		t.Fatalf("create webhook %s: %d %s", data, res.Status, res.Body)
	}
	return id
}

// hookTo creates an outgoing webhook of type typ (SLACK or MS_TEAMS_WORKFLOW) posting to url and
// returns its id, for a connector's integrationId.
func hookTo(t *testing.T, env *apitest.Env, key, typ, url string) string {
	t.Helper()
	settings := map[string]string{"SLACK": "slack", "MS_TEAMS_WORKFLOW": "msTeamsWorkflow"}[typ]
	return webhook(t, env, key, `{"name":"`+typ+`","type":"`+typ+`","url":"`+url+`","`+settings+`":{}}`)
}

// connectorOf creates a connector from its public JSON and returns its id.
func connectorOf(t *testing.T, env *apitest.Env, key, body string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, connPath, key, `{"connector":`+body+`}`)
	id := apitest.Decode[struct{ Connector struct{ ID string } }](t, res).Connector.ID
	if res.Status != http.StatusOK || id == "" {
		t.Fatalf("create connector %s: %d %s", body, res.Status, res.Body)
	}
	return id
}

// TestAlertReachesEachDeliveredConnectorType is issue 33's end-to-end proof for
// the delivered connector types: an Alertmanager alert, routed by one global router whose rule
// targets a GENERIC_HTTPS, a SLACK (through a SLACK outgoing webhook), a MICROSOFT_TEAMS (through
// an MS_TEAMS_WORKFLOW outgoing webhook), a PAGERDUTY, an EMAIL and a PAGERDUTY_INCIDENTS (through
// a PAGERDUTY outgoing webhook's serviceKey) connector, all written in the public fields, reaches each receiver in its own wire format while the delivery worker runs, and
// every delivery is recorded sent.
func TestAlertReachesEachDeliveredConnectorType(t *testing.T) {
	server := smtptest.Start(t)
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		rc := newWireReceiver(t)
		key := env.RootKey
		before := len(server.Messages(t))
		slackHook := webhook(t, env, key, `{"name":"slack","type":"SLACK","url":"`+rc.URL+`/slack/services/T0/B0/x","slack":{}}`)
		pdHook := webhook(t, env, key, `{"name":"pd","type":"PAGERDUTY","url":"`+rc.URL+`/pdi/v2/enqueue","pagerDuty":{"serviceKey":"service-key-e2e"}}`)
		teamsHook := webhook(t, env, key, `{"name":"teams","type":"MS_TEAMS_WORKFLOW","url":"`+rc.URL+`/teams/workflows/w1/triggers/manual/paths/invoke","msTeamsWorkflow":{}}`)
		ids := []string{
			connectorOf(t, env, key, `{"id":"hook","name":"hook","type":"GENERIC_HTTPS","connectorConfig":{"fields":[`+
				`{"fieldName":"url","value":"`+rc.URL+`/hook"},{"fieldName":"method","value":"post"}]},`+
				`"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"additionalBodyFields","template":"{\"status\": \"{{alert.status}}\"}"}]}]}`),
			connectorOf(t, env, key, `{"id":"slack","name":"slack","type":"SLACK","connectorConfig":{"fields":[`+
				`{"fieldName":"integrationId","value":"`+slackHook+`"},{"fieldName":"channel","value":"#ops"},{"fieldName":"fallbackChannel","value":"#all"}]}}`),
			connectorOf(t, env, key, `{"id":"teams","name":"teams","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[`+
				`{"fieldName":"integrationId","value":"`+teamsHook+`"},{"fieldName":"teamId","value":"team-1"},{"fieldName":"channelId","value":"19:c@thread.tacv2"}]}}`),
			connectorOf(t, env, key, `{"id":"pd","name":"pd","type":"PAGERDUTY","connectorConfig":{"fields":[`+
				`{"fieldName":"integrationKey","value":"routing-key-e2e"},{"fieldName":"eventsUrl","value":"`+rc.URL+`/pd/v2/enqueue"}]}}`),
			connectorOf(t, env, key, `{"id":"mail","name":"mail","type":"EMAIL","connectorConfig":{"fields":[`+
				`{"fieldName":"emailAddresses","value":"[\"ops@example.com\",\"dba@example.com\"]"}]}}`),
			// PAGERDUTY_INCIDENTS: Events API v2 through the PAGERDUTY webhook it names.
			connectorOf(t, env, key, `{"id":"pdi","name":"pdi","type":"PAGERDUTY_INCIDENTS","connectorConfig":{"fields":[`+
				`{"fieldName":"integrationId","value":"`+pdHook+`"},{"fieldName":"service","value":"PXXXXXX"}]}}`),
		}
		var targets []string
		for _, id := range ids {
			targets = append(targets, `{"connectorId":"`+id+`"}`)
		}
		create(t, env, key, `{"name":"everyone","entityType":"ALERTS","rules":[{"condition":"true","targets":[`+strings.Join(targets, ",")+`]}]}`)

		w := env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true},
			SMTP: server.SMTPServer("alerts@example.com"), PollInterval: 50 * time.Millisecond, AttemptTimeout: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { w.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })

		alertmanager(t, env, key, "DiskFull", "critical", time.Now().UTC().Add(-time.Minute).Truncate(time.Second), time.Time{})

		const slackPath, teamsPath = "/slack/services/T0/B0/x", "/teams/workflows/w1/triggers/manual/paths/invoke"
		got := rc.byPath(t, "/hook", slackPath, teamsPath, "/pd/v2/enqueue", "/pdi/v2/enqueue")
		for p, r := range got {
			if r.Method != http.MethodPost || !strings.HasPrefix(r.ContentType, "application/json") {
				t.Errorf("%s: %s %q", p, r.Method, r.ContentType)
			}
		}
		if h := got["/hook"].Body; h["status"] != "Triggered" || !strings.Contains(str(h["title"]), "DiskFull") {
			t.Errorf("the generic webhook got %v", h)
		}
		if s := got[slackPath].Body; !strings.Contains(str(s["text"]), "DiskFull") || s["channel"] != "#ops" {
			t.Errorf("Slack got %v", s)
		}
		tm := got[teamsPath].Body
		card := apitest.At(tm, "attachments", 0, "content")
		if tm["type"] != "message" || apitest.At(tm, "attachments", 0, "contentType") != "application/vnd.microsoft.card.adaptive" ||
			apitest.At(card, "type") != "AdaptiveCard" || !strings.Contains(str(apitest.At(card, "body", 0, "text")), "DiskFull") {
			t.Errorf("Teams got %v", tm)
		}
		pd := got["/pd/v2/enqueue"].Body
		if pd["routing_key"] != "routing-key-e2e" || pd["event_action"] != "trigger" || str(pd["dedup_key"]) == "" ||
			!strings.Contains(str(apitest.At(pd, "payload", "summary")), "DiskFull") || apitest.At(pd, "payload", "severity") != "critical" ||
			str(apitest.At(pd, "payload", "source")) == "" {
			t.Errorf("PagerDuty got %v", pd)
		}
		pdi := got["/pdi/v2/enqueue"].Body
		if pdi["routing_key"] != "service-key-e2e" || pdi["event_action"] != "trigger" || str(pdi["dedup_key"]) == "" ||
			!strings.Contains(str(apitest.At(pdi, "payload", "summary")), "DiskFull") || str(apitest.At(pdi, "payload", "severity")) == "" {
			t.Errorf("PagerDuty (incidents connector) got %v", pdi)
		}
		mails := server.WaitMessages(t, before+1)[before:]
		if len(mails) != 1 {
			t.Fatalf("%d messages", len(mails))
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(mails[0].Header.Get("Subject"))
		if strings.Join(mails[0].To, ",") != "ops@example.com,dba@example.com" || err != nil || !strings.Contains(subject, "DiskFull") {
			t.Errorf("mail to %q, subject %q (%v)", mails[0].To, subject, err)
		}

		// Each delivery is recorded sent, one per connector.
		deadline := time.Now().Add(time.Minute)
		for {
			rows, err := env.DB.Read().QueryContext(context.Background(), `SELECT connector_id, state FROM deliveries ORDER BY connector_id`)
			if err != nil {
				t.Fatal(err)
			}
			var states []string
			for rows.Next() {
				var c, s string
				if err := rows.Scan(&c, &s); err != nil {
					t.Fatal(err)
				}
				states = append(states, c+":"+s)
			}
			rows.Close()
			if strings.Join(states, " ") == "hook:sent mail:sent pd:sent pdi:sent slack:sent teams:sent" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %v", states)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

func str(v any) string { s, _ := v.(string); return s }

// lockedBuffer is a log destination the routing sink and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestIntegrationGoneSendsNothing: a Slack connector whose outgoing webhook is gone (removed
// behind the API's back, since the API refuses to delete a webhook in use) sends nothing and
// records nothing; the alert is still written (its incident exists), the other target still
// gets its delivery, and a WARN names the connector and the integration.
func TestIntegrationGoneSendsNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		logs := &lockedBuffer{}
		key := env.RootKey
		hook := webhook(t, env, key, `{"name":"slack","type":"SLACK","url":"https://hooks.slack.example/services/T0/B0/x","slack":{}}`)
		connectorOf(t, env, key, `{"id":"slack","name":"slack","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+hook+`"}]}}`)
		connectorOf(t, env, key, `{"id":"hook","name":"hook","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example/h"},{"fieldName":"method","value":"POST"}]}}`)
		create(t, env, key, `{"name":"both","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"slack"},{"connectorId":"hook"}]}]}`)
		if err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `DELETE FROM outgoing_webhooks WHERE id = $1`, hook)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		alertmanager(t, env, key, "DiskFull", "critical", time.Now().UTC().Add(-time.Minute).Truncate(time.Second), time.Time{})
		env.Route(t, slog.New(slog.NewTextHandler(logs, nil)))
		if rows := outbox(t, env); len(rows) != 1 || rows[0].Connector != "hook" {
			t.Fatalf("outbox %+v", rows)
		}
		incidents := apitest.Decode[struct{ Incidents []struct{ ID string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`)).Incidents
		if len(incidents) != 1 {
			t.Fatalf("the alert's incident: %+v", incidents)
		}
		if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "connector=slack") || !strings.Contains(l, "integration="+hook) {
			t.Fatalf("logs %s", l)
		}
	})
}

// TestTemplatedIntegrationChoosesTheWebhook: a Slack connector whose integrationId has a template
// for alerts delivers through the webhook the template renders for the alert (here by its
// priority), not through the one its value names; a rendering that names a webhook of another
// type sends nothing and the alert still stands.
func TestTemplatedIntegrationChoosesTheWebhook(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		rc := newWireReceiver(t)
		key := env.RootKey
		plain := hookTo(t, env, key, "SLACK", rc.URL+"/plain")
		paging := hookTo(t, env, key, "SLACK", rc.URL+"/paging")
		teams := hookTo(t, env, key, "MS_TEAMS_WORKFLOW", rc.URL+"/teams")
		slack := connectorOf(t, env, key, `{"id":"slack","name":"slack","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+plain+`"}]},`+
			`"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"integrationId","template":"{% if alertDef.priority == 'P1' %}\n`+paging+`\n{% else %}`+plain+`{% endif %}"}]}]}`)
		wrong := connectorOf(t, env, key, `{"id":"wrong","name":"wrong","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+plain+`"}]},`+
			`"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"integrationId","template":"`+teams+`"}]}]}`)
		create(t, env, key, `{"name":"both","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+slack+`"},{"connectorId":"`+wrong+`"}]}]}`)
		alertmanager(t, env, key, "DiskFull", "critical", time.Now().UTC().Add(-time.Minute).Truncate(time.Second), time.Time{})
		if rows := outbox(t, env); len(rows) != 1 || rows[0].Connector != "slack" {
			t.Fatalf("outbox %+v", rows)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}, AttemptTimeout: 10 * time.Second}).Drain(ctx); err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if len(rc.got) != 1 || rc.got[0].Path != "/paging" || !strings.Contains(str(rc.got[0].Body["text"]), "DiskFull") {
			t.Fatalf("the receiver got %+v", rc.got)
		}
	})
}
