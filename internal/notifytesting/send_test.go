package notifytesting_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

const (
	center         = "/mgmt/openapi/5/notifications/notification-center/v1/"
	connectorTest  = center + "connectors:test"
	connectorCheck = center + "connectors:testConfig"
	presetTest     = center + "presets:test"
	presetCheck    = center + "presets:testConfig"
	destTest       = center + "destinations:test"
	connectorsPath = "/mgmt/openapi/latest/notifications/notification-center/v1/connectors"
	presetsPath    = "/mgmt/openapi/5/notifications/notification-center/v1/presets/custom"
)

// received is one request a receiver got.
type received struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
}

// receiver is a real local HTTP server that records what it is sent and answers status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status int
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		r.mu.Lock()
		r.got = append(r.got, received{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
		r.mu.Unlock()
		w.WriteHeader(r.status)
		_, _ = io.WriteString(w, `{"answer":"from the receiver"}`)
	}))
	t.Cleanup(r.Close)
	return r
}

// only returns the one request the receiver got.
func (r *receiver) only(t *testing.T) received {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(r.got))
	}
	g := r.got[0]
	r.got = nil
	return g
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

type testResult struct {
	Result struct {
		Success *struct {
			Metadata map[string]string `json:"metadata"`
		} `json:"success"`
		Failure *struct {
			Message    string `json:"message"`
			StatusCode *int   `json:"statusCode"`
		} `json:"failure"`
	} `json:"result"`
}

// try posts body to the operation at path and decodes the 200 answer, checked against the public
// schema; no answer may carry one of the secrets.
func try(t *testing.T, env *apitest.Env, operation, path, key, body string) testResult {
	t.Helper()
	res := env.JSON(t, http.MethodPost, path, key, body)
	if res.Status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", path, body, res.Status, res.Body)
	}
	checkPublic(t, operation, res)
	for _, secret := range []string{"hook-secret", "pd-routing-secret", "header-secret"} {
		if strings.Contains(string(res.Body), secret) {
			t.Fatalf("%s answered a secret: %s", path, res.Body)
		}
	}
	return apitest.Decode[testResult](t, res)
}

func succeeded(t *testing.T, r testResult) map[string]string {
	t.Helper()
	if r.Result.Success == nil || r.Result.Failure != nil {
		t.Fatalf("want success, got %+v", r.Result.Failure)
	}
	return r.Result.Success.Metadata
}

func failed(t *testing.T, r testResult, status int, fragments ...string) {
	t.Helper()
	if r.Result.Failure == nil || r.Result.Success != nil {
		t.Fatalf("want failure, got success %v", r.Result.Success)
	}
	f := r.Result.Failure
	switch {
	case status == 0 && f.StatusCode != nil:
		t.Errorf("failure %q carries status %d, want none", f.Message, *f.StatusCode)
	case status != 0 && (f.StatusCode == nil || *f.StatusCode != status):
		t.Errorf("failure %q: status %v, want %d", f.Message, f.StatusCode, status)
	}
	for _, frag := range fragments {
		if !strings.Contains(f.Message, frag) {
			t.Errorf("failure %q does not say %q", f.Message, frag)
		}
	}
}

func mustCreate(t *testing.T, env *apitest.Env, path, key, wrapper, doc string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, path, key, `{"`+wrapper+`":`+doc+`}`)
	if res.Status != http.StatusOK {
		t.Fatalf("create %s: %d %s", wrapper, res.Status, res.Body)
	}
	var out map[string]struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(res.Body, &out); err != nil || out[wrapper].ID == "" {
		t.Fatalf("create %s: %s", wrapper, res.Body)
	}
	return out[wrapper].ID
}

// webhook creates an outgoing webhook of the team through the public API and returns its id.
func webhook(t *testing.T, env *apitest.Env, key, typ, url string) string {
	t.Helper()
	settings := map[string]string{"SLACK": `"slack":{}`, "MS_TEAMS_WORKFLOW": `"msTeamsWorkflow":{}`, "PAGERDUTY": `"pagerDuty":{"serviceKey":"k"}`}[typ]
	res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/integrations/webhooks/v1", key,
		`{"data":{"name":"`+typ+`","type":"`+typ+`","url":"`+url+`",`+settings+`}}`)
	id := apitest.Decode[struct{ ID string }](t, res).ID
	if res.Status != http.StatusOK || id == "" {
		t.Fatalf("create webhook %s: %d %s", typ, res.Status, res.Body)
	}
	return id
}

// slackConnector is a SLACK connector in the public fields, naming a new SLACK outgoing webhook
// that posts to url/services/hook-secret.
func slackConnector(t *testing.T, env *apitest.Env, key, url string) string {
	return `{"name":"Ops","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"` +
		webhook(t, env, key, "SLACK", url+"/services/hook-secret") + `"},{"fieldName":"channel","value":"#ops"}]}}`
}

// teamsFields are a MICROSOFT_TEAMS configuration's fields, naming a new MS_TEAMS_WORKFLOW
// outgoing webhook that posts to url.
func teamsFields(t *testing.T, env *apitest.Env, key, url string) string {
	return `[{"fieldName":"integrationId","value":"` + webhook(t, env, key, "MS_TEAMS_WORKFLOW", url) + `"}]`
}

func pagerDutyConnector(url string) string {
	return `{"name":"Paging","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"pd-routing-secret"},` +
		`{"fieldName":"eventsUrl","value":"` + url + `/v2/enqueue"}]}}`
}

func genericConnector(url string) string {
	return `{"name":"Hook","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"` + url + `/hook-secret"},` +
		`{"fieldName":"method","value":"PUT"},{"fieldName":"additionalHeaders","value":"{\"X-Token\":\"header-secret\"}"},` +
		`{"fieldName":"additionalBodyFields","value":"{\"source\":\"mgmtapi-test\"}"}]}}`
}

// TestEachOperationDelivers: each of the five operations renders the sample and sends it to a
// real receiver now, in its connector type's body: a Slack message's text, a PagerDuty trigger
// with its routing key, a Teams Adaptive Card, a generic webhook's JSON body with its method and
// headers. The answer is success with the receiver's status and carries no secret.
func TestEachOperationDelivers(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		rcv := newReceiver(t, http.StatusOK)

		// connectors:test, Slack: the TEST_NOTIFICATIONS sample with the built-in templates.
		slack := mustCreate(t, env, connectorsPath, key, "connector", slackConnector(t, env, key, rcv.URL))
		meta := succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+slack+`"}`))
		if meta["statusCode"] != "200" || meta["connectorType"] != "SLACK" || meta["entityType"] != "TEST_NOTIFICATIONS" {
			t.Errorf("metadata %v", meta)
		}
		got := rcv.only(t)
		if got.Method != http.MethodPost || got.Path != "/services/hook-secret" || got.Header.Get("Content-Type") != "application/json" {
			t.Errorf("slack request %s %s %v", got.Method, got.Path, got.Header)
		}
		if text, _ := got.Body["text"].(string); !strings.Contains(text, "HighErrorRate") {
			t.Errorf("slack body %v", got.Body)
		}
		// payloadType default is the type's; it renders the same message
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+slack+`","payloadType":"default"}`))
		rcv.only(t)

		// presets:test, PagerDuty: the system preset for alerts renders a trigger event.
		pd := mustCreate(t, env, connectorsPath, key, "connector", pagerDutyConnector(rcv.URL))
		meta = succeeded(t, try(t, env, "TestingService_TestExistingPreset", presetTest, key,
			`{"connectorId":"`+pd+`","presetId":"preset_system_pagerduty_alerts_basic","entityType":"ALERTS"}`))
		if meta["presetId"] != "preset_system_pagerduty_alerts_basic" || meta["entityType"] != "ALERTS" {
			t.Errorf("metadata %v", meta)
		}
		got = rcv.only(t)
		payload, _ := got.Body["payload"].(map[string]any)
		if got.Path != "/v2/enqueue" || got.Body["routing_key"] != "pd-routing-secret" || got.Body["event_action"] != "trigger" ||
			payload == nil || payload["summary"] == "" || payload["severity"] != "critical" {
			t.Errorf("pagerduty body %s %v", got.Path, got.Body)
		}
		if dk, _ := got.Body["dedup_key"].(string); !strings.Contains(dk, "test-") {
			t.Errorf("a test's dedup key %q should be its own, not an alert's", dk)
		}

		// connectors:testConfig, Teams: a configuration not stored, an Adaptive Card.
		meta = succeeded(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"MICROSOFT_TEAMS","entityType":"CASES","fields":`+teamsFields(t, env, key, rcv.URL+"/teams/hook-secret")+`}`))
		if meta["connectorType"] != "MICROSOFT_TEAMS" || meta["entityType"] != "CASES" {
			t.Errorf("metadata %v", meta)
		}
		got = rcv.only(t)
		atts, _ := got.Body["attachments"].([]any)
		if got.Body["type"] != "message" || len(atts) != 1 {
			t.Fatalf("teams body %v", got.Body)
		}
		att := atts[0].(map[string]any)
		card, _ := att["content"].(map[string]any)
		if att["contentType"] != "application/vnd.microsoft.card.adaptive" || card["type"] != "AdaptiveCard" ||
			!strings.Contains(mustJSON(card), "CASE-42") {
			t.Errorf("teams card %v", att)
		}
		if n := len(apitest.Decode[struct{ Connectors []any }](t, env.JSON(t, http.MethodGet, connectorsPath, key, "")).Connectors); n != 2 {
			t.Errorf("testConfig stored a connector: %d connectors", n)
		}

		// presets:testConfig, generic webhook: the method, the connector's headers and body fields,
		// the preset's body over a stored parent.
		hook := mustCreate(t, env, connectorsPath, key, "connector", genericConnector(rcv.URL))
		parent := mustCreate(t, env, presetsPath, key, "preset", `{"name":"Base","connectorType":"GENERIC_HTTPS","entityType":"ALERTS",`+
			`"configOverrides":[{"messageConfig":{"fields":[{"fieldName":"title","template":"from the parent"}]}}]}`)
		succeeded(t, try(t, env, "TestingService_TestPresetConfig", presetCheck, key,
			`{"connectorId":"`+hook+`","parentPresetId":"`+parent+`","entityType":"ALERTS","entitySubType":"metricResolved",`+
				`"configOverrides":[{"messageConfig":{"fields":[{"fieldName":"description","template":"{{ alert.status }} {{ alertDef.name }}"}]}}]}`))
		got = rcv.only(t)
		if got.Method != http.MethodPut || got.Header.Get("X-Token") != "header-secret" || got.Header.Get("Idempotency-Key") == "" {
			t.Errorf("generic request %s %v", got.Method, got.Header)
		}
		if got.Body["title"] != "[TEST] from the parent" || got.Body["description"] != "Resolved HighErrorRate" || got.Body["source"] != "mgmtapi-test" {
			t.Errorf("generic body %v", got.Body)
		}

		// destinations:test: the preset, message fields over it, and the connector's templates for
		// the entity type, as a route renders them.
		succeeded(t, try(t, env, "TestingService_TestDestination", destTest, key,
			`{"connectorId":"`+hook+`","presetId":"`+parent+`","entityType":"ALERTS","payloadType":"default",`+
				`"messageConfigFields":[{"fieldName":"body","template":"{\"alert\":\"{{ alertDef.name }}\",\"env\":\"{{ alertDef.entityLabels.env }}\"}"}],`+
				`"connectorConfigFields":[{"fieldName":"additionalBodyFields","template":"{\"priority\":\"{{ alertDef.priority }}\"}"}]}`))
		got = rcv.only(t)
		if got.Body["alert"] != "HighErrorRate" || got.Body["env"] != "production" || got.Body["priority"] != "P1" || got.Body["title"] != nil {
			t.Errorf("destination body %v", got.Body)
		}
		// with the team's default preset (the system preset of the pair)
		meta = succeeded(t, try(t, env, "TestingService_TestDestination", destTest, key, `{"connectorId":"`+hook+`"}`))
		if meta["presetId"] != "preset_system_generic_https_test_notifications_empty" {
			t.Errorf("metadata %v", meta)
		}
		if title, _ := rcv.only(t).Body["title"].(string); !strings.Contains(title, "HighErrorRate") {
			t.Errorf("system preset's title %q", title)
		}
		// sent now, not through the outbox
		var queued int
		if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM deliveries`).Scan(&queued); err != nil || queued != 0 {
			t.Errorf("the outbox holds %d records (%v); tests write none", queued, err)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestFailuresAreReadable: a receiver's 5xx and 4xx come back as failures with the status and
// the host, never the URL; a preset that does not render, a connector type mgmtapi does not
// deliver through and a receiver that is gone are failures saying so.
func TestFailuresAreReadable(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		broken := newReceiver(t, http.StatusInternalServerError)
		slack := mustCreate(t, env, connectorsPath, key, "connector", slackConnector(t, env, key, broken.URL))
		host := strings.TrimPrefix(broken.URL, "http://")
		failed(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+slack+`"}`),
			500, host+" answered 500 Internal Server Error", "from the receiver")
		if broken.count() != 1 {
			t.Errorf("a test is one attempt; the receiver got %d", broken.count())
		}

		// Slack's raw payload is a whole message the preset renders; the default preset has none
		failed(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+slack+`","payloadType":"raw"}`),
			0, "does not render", "payload")
		if broken.count() != 1 {
			t.Errorf("a message that does not render was sent")
		}

		refusing := newReceiver(t, http.StatusForbidden)
		failed(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"SLACK","fields":[{"fieldName":"integrationId","value":"`+webhook(t, env, key, "SLACK", refusing.URL+"/hook-secret")+`"}]}`), 403, "answered 403 Forbidden")

		// a receiver that is gone: the connection is refused
		gone := newReceiver(t, http.StatusOK)
		goneURL := gone.URL
		gone.Close()
		failed(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"SLACK","fields":[{"fieldName":"integrationId","value":"`+webhook(t, env, key, "SLACK", goneURL+"/hook-secret")+`"}]}`), 0, strings.TrimPrefix(goneURL, "http://"), "refused")

		ok := newReceiver(t, http.StatusOK)
		hook := mustCreate(t, env, connectorsPath, key, "connector", genericConnector(ok.URL))
		failed(t, try(t, env, "TestingService_TestPresetConfig", presetCheck, key,
			`{"connectorId":"`+hook+`","configOverrides":[{"messageConfig":{"fields":[{"fieldName":"title","template":"{{ alertDef.nothing }}"}]}}]}`),
			0, "does not render", "title", "nothing")
		failed(t, try(t, env, "TestingService_TestDestination", destTest, key,
			`{"connectorId":"`+hook+`","messageConfigFields":[{"fieldName":"body","template":"not json"}]}`), 0, "body", "not a JSON object")
		if ok.count() != 0 {
			t.Errorf("a message that does not render was sent")
		}

		// an email without an SMTP server configured (this Env has none)
		failed(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"EMAIL","fields":[{"fieldName":"emailAddresses","value":"[\"ops@example.com\"]"}]}`), 0,
			"email: no SMTP server is configured (--smtp-url)")

		// a connector whose outgoing webhook is gone (removed behind the API's back: the API
		// refuses to delete a webhook in use): a failure naming the connector and the webhook
		lost := newReceiver(t, http.StatusOK)
		lostHook := webhook(t, env, key, "SLACK", lost.URL+"/hook-secret")
		orphan := mustCreate(t, env, connectorsPath, key, "connector",
			`{"name":"Orphan","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+lostHook+`"}]}}`)
		if err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `DELETE FROM outgoing_webhooks WHERE id = $1`, lostHook)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		failed(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+orphan+`"}`),
			0, orphan, lostHook, "no such webhook", "nothing was sent")
		if lost.count() != 0 {
			t.Errorf("a connector whose webhook is gone sent %d requests", lost.count())
		}

		// a ServiceNow connector's test is one incident insert, marked as a test
		snRcv := newReceiver(t, http.StatusCreated)
		sn := mustCreate(t, env, connectorsPath, key, "connector", `{"name":"SN","type":"SERVICE_NOW","connectorConfig":{"fields":[`+
			`{"fieldName":"instanceUrl","value":"`+snRcv.URL+`"},{"fieldName":"username","value":"u"},{"fieldName":"password","value":"p"}]}}`)
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+sn+`"}`))
		if g := snRcv.only(t); g.Path != "/api/now/table/incident" || g.Header.Get("Authorization") != "Basic dTpw" ||
			!strings.HasPrefix(str(g.Body["short_description"]), delivery.TestPrefix) || !strings.Contains(str(g.Body["description"]), delivery.TestNotice) {
			t.Errorf("ServiceNow test %+v", g)
		}

		// an IBM Event Notifications connector's test is one CloudEvents event, marked as a test
		// (without an apiKey it is sent without credentials, for a gateway that adds them)
		ibmRcv := newReceiver(t, http.StatusAccepted)
		ibm := mustCreate(t, env, connectorsPath, key, "connector", `{"name":"IBM","type":"IBM_EVENT_NOTIFICATIONS","connectorConfig":{"fields":[`+
			`{"fieldName":"instanceCrn","value":"crn:v1:bluemix:public:event-notifications:eu-de:a/acc:inst-1::"},{"fieldName":"region","value":"eu-de"},`+
			`{"fieldName":"sourceId","value":"s"},{"fieldName":"notificationsUrl","value":"`+ibmRcv.URL+`/en"}]}}`)
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+ibm+`"}`))
		if g := ibmRcv.only(t); g.Path != "/en" || g.Header.Get("Authorization") != "" || g.Body["source"] != "s" ||
			!strings.HasPrefix(str(g.Body["ibmendefaultshort"]), delivery.TestPrefix) {
			t.Errorf("IBM test %+v", g)
		}
	})
}

// TestPrivateAddressesRefused: under mgmtapi's default policy (no --notify-allow-private) a test
// notification to a loopback receiver is refused before it connects, and the failure says why.
func TestPrivateAddressesRefused(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PublicDeliveriesOnly: true}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		rcv := newReceiver(t, http.StatusOK)
		slack := mustCreate(t, env, connectorsPath, key, "connector", slackConnector(t, env, key, rcv.URL))
		failed(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+slack+`"}`),
			0, "127.0.0.1 is loopback", "--notify-allow-private")
		failed(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"GENERIC_HTTPS","fields":[{"fieldName":"url","value":"http://10.1.2.3:9/hook-secret"}]}`), 0, "10.1.2.3 is private")
		if rcv.count() != 0 {
			t.Errorf("the refused receiver got %d requests", rcv.count())
		}
	})
}

// TestBadRequestsAndUnknownIDs: a missing or unknown connector or preset, a configuration the
// connector rules refuse, a field of no payload or no template, an entity type the connector does
// not carry: 400 or 404 naming the field, and nothing is sent.
func TestBadRequestsAndUnknownIDs(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		rcv := newReceiver(t, http.StatusOK)
		slack := mustCreate(t, env, connectorsPath, key, "connector", slackConnector(t, env, key, rcv.URL))
		pd := mustCreate(t, env, connectorsPath, key, "connector", pagerDutyConnector(rcv.URL))
		slackHook := webhook(t, env, key, "SLACK", rcv.URL+"/services/hook-secret")
		pdHook := webhook(t, env, key, "PAGERDUTY", rcv.URL+"/v2/enqueue")
		for _, tc := range []struct {
			path, body string
			status     int
			fragments  []string
		}{
			{connectorTest, `{}`, 404, nil},
			{connectorTest, `{"connectorId":"nope"}`, 404, []string{"connectorId", "nope"}},
			{connectorTest, `{"connectorId":"-bad"}`, 400, []string{"connectorId"}},
			{connectorTest, `{"connectorId":"` + strings.Repeat("a", 129) + `"}`, 400, []string{"connectorId"}},
			{connectorTest, `{"connectorId":"` + slack + `","payloadType":"fancy"}`, 400, []string{"payloadType", "slack_default, slack_raw"}},
			{connectorTest, `{"connectorId":"` + slack + `","payloadType":"` + strings.Repeat("p", 101) + `"}`, 400, []string{"payloadType"}},
			{connectorCheck, `{}`, 400, []string{"type", "required"}},
			{connectorCheck, `{"type":"SLACK"}`, 400, []string{"fields", "integrationId", "missing"}},
			{connectorCheck, `{"type":"SLACK","fields":[{"fieldName":"webhookUrl","value":"ftp://hook-secret"}]}`, 400, []string{"fields[0].value", "http or https"}},
			{connectorCheck, `{"type":"SLACK","fields":[{"fieldName":"webhookUrl","value":"********"}]}`, 400, []string{"fields[0].value", "send the value itself"}},
			{connectorCheck, `{"type":"SLACK","fields":[{"fieldName":"nope","value":"x"}]}`, 400, []string{"fields[0].fieldName", "nope"}},
			{connectorCheck, `{"type":"NOPE"}`, 400, []string{"type"}},
			{connectorCheck, `{"type":"SLACK","entityType":"OLLY_SCHEDULED_TASKS","fields":[{"fieldName":"integrationId","value":"` + slackHook + `"}]}`, 400, []string{"entityType"}},
			{connectorCheck, `{"type":"SLACK","fields":[{"fieldName":"channel","value":"#ops"},{"fieldName":"integrationId","value":"nope"}]}`, 400,
				[]string{"fields[1].value", `integrationId "nope"`, "no such webhook"}},
			{connectorCheck, `{"type":"SLACK","fields":[{"fieldName":"integrationId","value":"` + pdHook + `"}]}`, 400,
				[]string{"fields[0].value", "of type PAGERDUTY", "SLACK connectors need one of type SLACK"}},
			{presetTest, `{"connectorId":"` + slack + `","presetId":"nope"}`, 404, []string{"presetId", "nope"}},
			{presetTest, `{"connectorId":"` + slack + `","presetId":"preset_system_pagerduty_alerts_basic"}`, 400, []string{"presetId", "PAGERDUTY", "SLACK"}},
			{presetTest, `{"connectorId":"` + slack + `","entitySubType":""}`, 400, []string{"entitySubType"}},
			{presetCheck, `{"connectorId":"` + slack + `","parentPresetId":"nope"}`, 404, []string{"parentPresetId"}},
			{presetCheck, `{"connectorId":"` + slack + `","configOverrides":[{"messageConfig":{"fields":[{"fieldName":"summary","template":"x"}]}}]}`, 400,
				[]string{"configOverrides[0].messageConfig.fields[0].fieldName", "summary"}},
			{presetCheck, `{"connectorId":"` + pd + `","configOverrides":[{"conditionType":{"matchEntityType":{},"matchEntityTypeAndSubType":{"entitySubType":"x"}}}]}`, 400,
				[]string{"configOverrides[0].conditionType"}},
			{presetCheck, `{"connectorId":"` + pd + `","configOverrides":[{"payloadType":"raw"}]}`, 400,
				[]string{"configOverrides[0].payloadType", "PAGERDUTY", "default"}},
			{destTest, `{"connectorId":"` + slack + `","connectorConfigFields":[{"fieldName":"webhookUrl","template":"x"}]}`, 400,
				[]string{"connectorConfigFields[0].fieldName", "takes no template"}},
			{destTest, `{"connectorId":"` + slack + `","connectorConfigFields":[{"fieldName":"channel","template":"a"},{"fieldName":"channel","template":"b"}]}`, 400,
				[]string{"connectorConfigFields[1].fieldName", "twice"}},
			{destTest, `{"connectorId":"` + slack + `","messageConfigFields":[{"fieldName":"severity","template":"x"}]}`, 400, []string{"messageConfigFields[0].fieldName"}},
			{destTest, `{"connectorId":"` + pd + `","entityType":"OLLY_SCHEDULED_TASKS"}`, 400, []string{"entityType", "PAGERDUTY"}},
			{destTest, `{"connectorId":"` + slack + `","presetId":"nope"}`, 404, []string{"presetId"}},
		} {
			res := env.JSON(t, http.MethodPost, tc.path, key, tc.body)
			if tc.status == 404 && tc.fragments == nil {
				// an empty body names no connector: 400 naming connectorId
				apitest.ExpectError(t, res, 400, "connectorId", "required")
				continue
			}
			apitest.ExpectError(t, res, tc.status, tc.fragments...)
			if strings.Contains(string(res.Body), "hook-secret") {
				t.Errorf("%s %s: the answer quotes a secret: %s", tc.path, tc.body, res.Body)
			}
		}
		if rcv.count() != 0 {
			t.Errorf("refused requests sent %d notifications", rcv.count())
		}
	})
}

// TestTeamsAndPermissions: one team cannot send through another's connector nor render with its
// presets (404, as if absent); each operation requires its permission (403 naming it, 401
// without a key) and works with it alone.
func TestTeamsAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		rcv := newReceiver(t, http.StatusOK)
		slack := mustCreate(t, env, connectorsPath, key, "connector", slackConnector(t, env, key, rcv.URL))
		preset := mustCreate(t, env, presetsPath, key, "preset", `{"name":"Mine","connectorType":"SLACK","entityType":"ALERTS",`+
			`"configOverrides":[{"messageConfig":{"fields":[{"fieldName":"title","template":"mine"}]}}]}`)
		otherSlack := mustCreate(t, env, connectorsPath, other, "connector", slackConnector(t, env, other, rcv.URL))

		apitest.ExpectError(t, env.JSON(t, http.MethodPost, connectorTest, other, `{"connectorId":"`+slack+`"}`), 404, "connectorId")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, presetTest, other, `{"connectorId":"`+otherSlack+`","presetId":"`+preset+`"}`), 404, "presetId")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, presetCheck, other, `{"connectorId":"`+otherSlack+`","parentPresetId":"`+preset+`"}`), 404, "parentPresetId")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, destTest, other, `{"connectorId":"`+slack+`"}`), 404, "connectorId")
		if rcv.count() != 0 {
			t.Fatalf("another team's test reached the receiver")
		}
		// the team's own preset renders its own message
		succeeded(t, try(t, env, "TestingService_TestExistingPreset", presetTest, key, `{"connectorId":"`+slack+`","presetId":"`+preset+`"}`))
		if text, _ := rcv.only(t).Body["text"].(string); !strings.HasPrefix(text, "[TEST] *mine*\n") {
			t.Errorf("text %q", text)
		}

		ops := []struct{ path, body, perm string }{
			{connectorTest, `{"connectorId":"` + slack + `"}`, "notification-center-connectors:ReadConfig"},
			{connectorCheck, `{"type":"SLACK","fields":[{"fieldName":"integrationId","value":"` + webhook(t, env, key, "SLACK", rcv.URL+"/x") + `"}]}`, "notification-center-connectors:ReadConfig"},
			{presetTest, `{"connectorId":"` + slack + `","presetId":"` + preset + `"}`, "notification-center-presets:ReadConfig"},
			{presetCheck, `{"connectorId":"` + slack + `"}`, "notification-center-presets:ReadConfig"},
			{destTest, `{"connectorId":"` + slack + `"}`, "notification-center-routers:ReadConfig"},
		}
		wrong := env.MustKey(t, key, "case:Read")
		for _, op := range ops {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, op.path, wrong, op.body), 403, op.perm)
			apitest.ExpectError(t, env.Do(t, http.MethodPost, op.path, "", "application/json", op.body), 401)
			if rcv.count() != 0 {
				t.Fatalf("%s: a refused caller's test reached the receiver", op.path)
			}
			res := env.JSON(t, http.MethodPost, op.path, env.MustKey(t, key, op.perm), op.body)
			if r := apitest.Decode[testResult](t, res); r.Result.Success == nil {
				t.Fatalf("%s with %s: %s", op.path, op.perm, res.Body)
			}
			rcv.only(t)
		}
	})
}

func str(v any) string { s, _ := v.(string); return s }
