package notifytesting_test

import (
	"mime"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/smtptest"
)

// TestConnectorTestSendsAnEmail: connectors:test through an EMAIL connector sends one real
// message to its recipients through the server's SMTP server and answers success with the
// server's 250; the message says it is a test (subject, first line, X-Mgmtapi-Test header); destinations:test renders the connector's recipients from the template given
// for the entity type (the sample says alerts); a recipient the server refuses is a failure naming the address and the
// server's 5xx.
func TestConnectorTestSendsAnEmail(t *testing.T) {
	server := smtptest.Start(t)
	apitest.EnginesWith(t, apitest.Options{SMTP: server.SMTPServer("alerts@example.com")}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		before := len(server.Messages(t))
		mail := mustCreate(t, env, connectorsPath, key, "connector",
			`{"name":"On call","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"emailAddresses","value":"[\"oncall@example.com\"]"}]}}`)
		meta := succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+mail+`"}`))
		if meta["statusCode"] != "250" || meta["connectorType"] != "EMAIL" || meta["entityType"] != "TEST_NOTIFICATIONS" {
			t.Errorf("metadata %v", meta)
		}
		got := server.WaitMessages(t, before+1)[before:]
		if len(got) != 1 || strings.Join(got[0].To, ",") != "oncall@example.com" || got[0].From != "alerts@example.com" {
			t.Fatalf("messages %+v", got)
		}
		subject, err := new(mime.WordDecoder).DecodeHeader(got[0].Header.Get("Subject"))
		if err != nil || !strings.HasPrefix(subject, "[TEST] ") || !strings.HasPrefix(got[0].Body, "This is a test notification") {
			t.Errorf("a test's subject %q (%v), body %q: not marked as a test", subject, err, got[0].Body)
		}
		if h := got[0].Header.Get("X-Mgmtapi-Test"); h != "true" {
			t.Errorf("a test's header X-Mgmtapi-Test: %q", h)
		}

		succeeded(t, try(t, env, "TestingService_TestDestination", destTest, key, `{"connectorId":"`+mail+`",`+
			`"connectorConfigFields":[{"fieldName":"emailAddresses","template":"[\"team-{{ _context.entityType | lower }}@example.com\"]"}]}`))
		got = server.WaitMessages(t, before+2)[before+1:]
		if len(got) != 1 || strings.Join(got[0].To, ",") != "team-alerts@example.com" {
			t.Fatalf("the recipients' template: %+v", got)
		}

		failed(t, try(t, env, "TestingService_TestConnectorConfig", connectorCheck, key,
			`{"type":"EMAIL","fields":[{"fieldName":"emailAddresses","value":"[\"refused@example.com\"]"}]}`), 550,
			"RCPT TO refused@example.com with 550")
	})
}
