package notifytesting_test

import (
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// TestATestNotificationSaysItIsATest: whatever the connector type, what a test operation sends
// says it is a test, in the header X-Mgmtapi-Test: true and in what a person reads: a generic
// webhook's title starts with "[TEST] " and its body holds "test": true; a Slack text starts with
// "[TEST] " and carries the notice; a PagerDuty summary starts with "[TEST] " and its
// custom_details say it; a Teams card's title starts with "[TEST] " and its text with the notice.
func TestATestNotificationSaysItIsATest(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		rcv := newReceiver(t, 200)
		marked := func(what string, got received) {
			t.Helper()
			if v := got.Header.Get("X-Mgmtapi-Test"); v != "true" {
				t.Errorf("%s: header X-Mgmtapi-Test %q, want true (headers %v)", what, v, got.Header)
			}
		}
		const notice = "This is a test notification"

		hook := mustCreate(t, env, connectorsPath, key, "connector", genericConnector(rcv.URL))
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+hook+`"}`))
		got := rcv.only(t)
		marked("generic", got)
		if title, _ := got.Body["title"].(string); !strings.HasPrefix(title, "[TEST] ") || got.Body["test"] != true {
			t.Errorf("generic body %v", got.Body)
		}

		slack := mustCreate(t, env, connectorsPath, key, "connector", slackConnector(t, env, key, rcv.URL))
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+slack+`"}`))
		got = rcv.only(t)
		marked("slack", got)
		if text, _ := got.Body["text"].(string); !strings.HasPrefix(text, "[TEST] ") || !strings.Contains(text, notice) {
			t.Errorf("slack text %q", text)
		}

		pd := mustCreate(t, env, connectorsPath, key, "connector", pagerDutyConnector(rcv.URL))
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+pd+`"}`))
		got = rcv.only(t)
		marked("pagerduty", got)
		payload, _ := got.Body["payload"].(map[string]any)
		details, _ := payload["custom_details"].(map[string]any)
		if summary, _ := payload["summary"].(string); !strings.HasPrefix(summary, "[TEST] ") || details["test"] != delivery.TestNotice {
			t.Errorf("pagerduty payload %v", payload)
		}

		succeeded(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"MICROSOFT_TEAMS","fields":`+teamsFields(t, env, key, rcv.URL+"/teams/hook-secret")+`}`))
		got = rcv.only(t)
		marked("teams", got)
		if card := mustJSON(got.Body); !strings.Contains(card, `"[TEST] `) || !strings.Contains(card, notice) {
			t.Errorf("teams card %s", card)
		}
	})
}
