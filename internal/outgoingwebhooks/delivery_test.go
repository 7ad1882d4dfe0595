package outgoingwebhooks_test

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/smtptest"
)

// received is one request a receiver got.
type received struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

func (r received) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("the body is not a JSON object: %v: %s", err, r.Body)
	}
	return v
}

// receiver is a loopback HTTP server that keeps every request and answers status with body.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status int
	answer string
}

func newReceiver(t *testing.T, status int, answer string) *receiver {
	r := &receiver{status: status, answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Header: req.Header.Clone(), Body: body})
		r.mu.Unlock()
		w.WriteHeader(r.status)
		_, _ = io.WriteString(w, r.answer)
	}))
	t.Cleanup(r.Close)
	return r
}

// only returns the one request the receiver got since the last call.
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

// testAnswer is the outcome of a test, decoded.
type testAnswer struct {
	Success *struct{} `json:"success"`
	Failure *struct {
		StatusCode     int64  `json:"statusCode"`
		ErrorMessage   string `json:"errorMessage"`
		DisplayMessage string `json:"displayMessage"`
	} `json:"failure"`
}

func testConfig(t *testing.T, env *apitest.Env, key, data string) testAnswer {
	t.Helper()
	return apitest.Decode[testAnswer](t, env.JSON(t, http.MethodPost, testPath, key, `{"data":`+data+`}`))
}

func testStored(t *testing.T, env *apitest.Env, key, id string) testAnswer {
	t.Helper()
	return apitest.Decode[testAnswer](t, env.JSON(t, http.MethodGet, hooks+"/"+id+"/test", key, ""))
}

func succeeded(t *testing.T, a testAnswer) {
	t.Helper()
	if a.Success == nil || a.Failure != nil {
		t.Fatalf("want success, got %+v", a.Failure)
	}
}

func str(v any) string { s, _ := v.(string); return s }

// TestEachTypeDeliversInItsReceiversFormat: the test of a configuration and the test of a stored
// webhook each make one real request to a loopback receiver, in the receiving service's own
// format (method, path, headers, JSON fields), marked as a test; the answer is success.
func TestEachTypeDeliversInItsReceiversFormat(t *testing.T) {
	cases := []struct {
		typ   string
		data  func(url string) string
		check func(t *testing.T, r received)
	}{
		{"GENERIC", func(u string) string {
			return `{"name":"g","type":"GENERIC","url":"` + u + `/hook?x=1","genericWebhook":{"method":"PUT","headers":{"Authorization":"Bearer s3cret","X-Team":"ops","Content-Type":"application/vnd.ops+json"},` +
				`"payload":"{\"alert\": \"$ALERT_NAME\", \"sev\": \"$EVENT_SEVERITY\", \"hook\": \"$webhook\", \"unknown\": \"$NOT_A_FIELD\"}"}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Method != "PUT" || r.Path != "/hook" || r.Query != "x=1" || r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Team") != "ops" ||
				r.Header.Get("Content-Type") != "application/vnd.ops+json" {
				t.Errorf("request %s %s?%s %v", r.Method, r.Path, r.Query, r.Header)
			}
			if !strings.HasPrefix(str(v["alert"]), "[TEST]") || v["sev"] != "info" || v["unknown"] != "$NOT_A_FIELD" {
				t.Errorf("payload %s", r.Body)
			}
		}},
		{"GENERIC default body", func(u string) string {
			return `{"name":"g2","type":"GENERIC","url":"` + u + `/d"}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Method != "POST" || v["status"] != "test" || !strings.HasPrefix(str(v["title"]), "[TEST]") || apitest.At(v, "fields", "webhook") != "g2" {
				t.Errorf("default body %s %s", r.Method, r.Body)
			}
		}},
		{"SLACK", func(u string) string {
			return `{"name":"s","type":"SLACK","url":"` + u + `/services/T0/B0/xyz","slack":{}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Method != "POST" || r.Path != "/services/T0/B0/xyz" || !strings.HasPrefix(str(v["text"]), "[TEST]") ||
				apitest.At(v, "attachments", 0, "color") != "#9E9E9E" || !strings.Contains(str(apitest.At(v, "attachments", 0, "text")), `"s"`) {
				t.Errorf("slack message %s", r.Body)
			}
		}},
		{"MS_TEAMS_WORKFLOW", func(u string) string {
			return `{"name":"w","type":"MS_TEAMS_WORKFLOW","url":"` + u + `/workflows/abc/triggers/manual/paths/invoke","msTeamsWorkflow":{}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			card := apitest.At(v, "attachments", 0, "content")
			if v["type"] != "message" || apitest.At(v, "attachments", 0, "contentType") != "application/vnd.microsoft.card.adaptive" ||
				apitest.At(card, "type") != "AdaptiveCard" || apitest.At(card, "version") != "1.4" ||
				apitest.At(card, "body", 0, "type") != "TextBlock" || !strings.HasPrefix(str(apitest.At(card, "body", 0, "text")), "[TEST]") ||
				apitest.At(card, "body", 2, "type") != "FactSet" {
				t.Errorf("teams workflow message %s", r.Body)
			}
		}},
		{"MICROSOFT_TEAMS", func(u string) string {
			return `{"name":"m","type":"MICROSOFT_TEAMS","url":"` + u + `/webhookb2/x"}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if v["@type"] != "MessageCard" || !strings.HasPrefix(str(v["title"]), "[TEST]") || apitest.At(v, "sections", 0, "facts", 0, "name") != "test" {
				t.Errorf("message card %s", r.Body)
			}
		}},
		{"PAGERDUTY", func(u string) string {
			return `{"name":"p","type":"PAGERDUTY","url":"` + u + `/v2/enqueue","pagerDuty":{"serviceKey":"R0UT1NGKEY"}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Path != "/v2/enqueue" || v["routing_key"] != "R0UT1NGKEY" || v["event_action"] != "trigger" || str(v["dedup_key"]) == "" ||
				!strings.HasPrefix(str(apitest.At(v, "payload", "summary")), "[TEST]") || apitest.At(v, "payload", "source") != "mgmtapi" ||
				apitest.At(v, "payload", "severity") != "info" || str(apitest.At(v, "payload", "timestamp")) == "" {
				t.Errorf("pagerduty event %s", r.Body)
			}
		}},
		{"OPSGENIE", func(u string) string {
			return `{"name":"o","type":"OPSGENIE","url":"` + u + `/v2/alerts?apiKey=G3N1E","opsgenie":{}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Path != "/v2/alerts" || r.Header.Get("Authorization") != "GenieKey G3N1E" || !strings.HasPrefix(str(v["message"]), "[TEST]") ||
				v["priority"] != "P5" || str(v["alias"]) == "" || apitest.At(v, "details", "status") != "test" {
				t.Errorf("opsgenie alert %s %v", r.Body, r.Header)
			}
		}},
		{"JIRA", func(u string) string {
			return `{"name":"j","type":"JIRA","url":"` + u + `/jira/your-work","jira":{"apiToken":"t0ken","email":"me@example.com","projectKey":"OPS"}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			user, pass, ok := (&http.Request{Header: r.Header}).BasicAuth()
			if r.Method != "POST" || r.Path != "/rest/api/2/issue" || !ok || user != "me@example.com" || pass != "t0ken" ||
				apitest.At(v, "fields", "project", "key") != "OPS" || apitest.At(v, "fields", "issuetype", "name") != "Task" ||
				!strings.HasPrefix(str(apitest.At(v, "fields", "summary")), "[TEST]") {
				t.Errorf("jira issue %s %s", r.Path, r.Body)
			}
		}},
		{"DEMISTO", func(u string) string {
			return `{"name":"d","type":"DEMISTO","url":"` + u + `/xsoar","demisto":{}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Path != "/xsoar" || v["applicationName"] != "mgmtapi" || apitest.At(v, "logEntries", 0, "severity") != float64(3) ||
				apitest.At(v, "logEntries", 0, "text", "integration_text") != "Security incident" {
				t.Errorf("demisto document %s", r.Body)
			}
		}},
		{"SEND_LOG", func(u string) string {
			return `{"name":"l","type":"SEND_LOG","url":"` + u + `/logs","sendLog":{"payload":"{\"text\": \"$ALERT_DESCRIPTION\"}"}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Path != "/logs" || !strings.Contains(str(v["text"]), `outgoing webhook "l"`) {
				t.Errorf("send-log payload %s", r.Body)
			}
		}},
		{"IBM_EVENT_NOTIFICATIONS", func(u string) string {
			return `{"name":"i","type":"IBM_EVENT_NOTIFICATIONS","url":"` + u + `/en","ibmEventNotifications":{"eventNotificationsInstanceId":"inst","regionId":"us-south","sourceId":"src-1"}}`
		}, func(t *testing.T, r received) {
			v := r.json(t)
			if r.Path != "/en" || v["specversion"] != "1.0" || v["source"] != "src-1" || v["ibmensourceid"] != "src-1" || v["type"] != "com.mgmtapi.alert:test" ||
				str(v["id"]) == "" || apitest.At(v, "data", "status") != "test" {
				t.Errorf("cloud event %s", r.Body)
			}
		}},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, c := range cases {
			t.Run(c.typ, func(t *testing.T) {
				r := newReceiver(t, http.StatusAccepted, `{"status":"success"}`)
				data := c.data(r.URL)
				succeeded(t, testConfig(t, env, key, data))
				got := r.only(t)
				if got.Header.Get("X-Mgmtapi-Test") != "true" || got.Header.Get("User-Agent") != "mgmtapi" {
					t.Errorf("test marks: %v", got.Header)
				}
				c.check(t, got)
				id := create(t, env, key, data)
				succeeded(t, testStored(t, env, key, id))
				c.check(t, r.only(t))
			})
		}
	})
}

// TestFailuresAreAnswered: a receiver's refusal is a failure with its status and the start of
// its answer, not quoting the URL's secret; an EventBridge webhook without AWS credentials and a
// send-log webhook without url are failures with status 0 saying why.
func TestFailuresAreAnswered(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		r := newReceiver(t, http.StatusBadRequest, `{"status":"invalid event","message":"routing key unknown"}`)
		a := testConfig(t, env, key, `{"name":"p","type":"PAGERDUTY","url":"`+r.URL+`/v2/enqueue/s3cretpath","pagerDuty":{"serviceKey":"k"}}`)
		if a.Failure == nil || a.Failure.StatusCode != 400 || !strings.Contains(a.Failure.ErrorMessage, "routing key unknown") ||
			strings.Contains(a.Failure.ErrorMessage, "s3cretpath") || a.Failure.DisplayMessage == "" {
			t.Errorf("refusal: %+v", a.Failure)
		}
		r.only(t)
		a = testConfig(t, env, key, bodies["AWS_EVENT_BRIDGE"])
		if a.Failure == nil || a.Failure.StatusCode != 0 || !strings.Contains(a.Failure.ErrorMessage, "no AWS credentials") {
			t.Errorf("eventbridge without credentials: %+v", a.Failure)
		}
		a = testConfig(t, env, key, `{"name":"l","type":"SEND_LOG","sendLog":{}}`)
		if a.Failure == nil || !strings.Contains(a.Failure.ErrorMessage, "no url") {
			t.Errorf("send log without url: %+v", a.Failure)
		}
	})
}

// TestPolicyRefusalIsAnswered: under the default outbound policy a loopback receiver is not
// reached, and the test answers a failure with status 0 saying why, without the URL's secret.
func TestPolicyRefusalIsAnswered(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PublicDeliveriesOnly: true}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		r := newReceiver(t, http.StatusOK, "")
		a := testConfig(t, env, key, `{"name":"s","type":"SLACK","url":"`+r.URL+`/T/B/s3cret"}`)
		if a.Failure == nil || a.Failure.StatusCode != 0 || !strings.Contains(a.Failure.ErrorMessage, "loopback") || strings.Contains(a.Failure.ErrorMessage, "s3cret") {
			t.Errorf("policy: %+v", a.Failure)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.got) != 0 {
			t.Errorf("the refused address was reached")
		}
	})
}

// TestEmailGroupSendsThroughSMTP: an email group's test is one message to its addresses through
// the operator's SMTP server, its subject saying it is a test; a refused recipient is a failure
// with the server's code.
func TestEmailGroupSendsThroughSMTP(t *testing.T) {
	server := smtptest.Start(t)
	apitest.EnginesWith(t, apitest.Options{SMTP: server.SMTPServer("alerts@example.com")}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		before := len(server.Messages(t))
		id := create(t, env, key, `{"name":"oncall","type":"EMAIL_GROUP","emailGroup":{"emailAddresses":["a@example.com","Ops <b@example.com>"]}}`)
		succeeded(t, testStored(t, env, key, id))
		got := server.WaitMessages(t, before+1)[before:]
		if len(got) != 1 || strings.Join(got[0].To, ",") != "a@example.com,b@example.com" || got[0].From != "alerts@example.com" {
			t.Fatalf("messages %+v", got)
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(got[0].Header.Get("Subject"))
		if err != nil || !strings.HasPrefix(subject, "[TEST]") || !strings.Contains(got[0].Body, `"oncall"`) || !strings.Contains(got[0].Body, "webhook: oncall") {
			t.Errorf("subject %q (%v), body %q", subject, err, got[0].Body)
		}
		a := testConfig(t, env, key, `{"name":"x","type":"EMAIL_GROUP","emailGroup":{"emailAddresses":["refused@example.com"]}}`)
		if a.Failure == nil || a.Failure.StatusCode != 550 || !strings.Contains(a.Failure.ErrorMessage, "refused@example.com") {
			t.Errorf("refused recipient: %+v", a.Failure)
		}
	})
}
