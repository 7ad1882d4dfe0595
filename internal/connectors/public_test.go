package connectors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

// Connectors as the vendor's public clients write them (issue 33 §1): the field sets of the
// Terraform provider's examples, chosen ids, templates per entity type, and answers that carry
// what was sent.

const latestConn = "/mgmt/openapi/latest/notifications/notification-center/v1/connectors"

const latestHooks = "/mgmt/openapi/latest/integrations/webhooks/v1"

// integrations creates, through the outgoing webhooks API, the integrations the connectors of
// these tests name, and answers a replacer of their placeholders ($SLACK, $PD, $TEAMS, $BUS) by
// the ids the server gave them.
func integrations(t *testing.T, env *apitest.Env, key string) *strings.Replacer {
	t.Helper()
	ids := map[string]string{}
	for _, w := range []struct{ name, data string }{
		{"$SLACK", `{"name":"iac-internal","type":"SLACK","url":"https://hooks.slack.example/services/T0/B0/x","slack":{}}`},
		{"$PD", `{"name":"pd","type":"PAGERDUTY","pagerDuty":{"serviceKey":"k"}}`},
		{"$TEAMS", `{"name":"teams","type":"MS_TEAMS_WORKFLOW","url":"https://teams.example/workflows/w","msTeamsWorkflow":{}}`},
		{"$BUS", `{"name":"bus","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/b",` +
			`"detail":"d","detailType":"t","source":"com.example","roleName":"r"}}`},
	} {
		res := env.JSON(t, http.MethodPost, latestHooks, key, `{"data":`+w.data+`}`)
		id := apitest.Decode[struct{ ID string }](t, res).ID
		if res.Status != http.StatusOK || id == "" {
			t.Fatalf("create webhook %s: %d %s", w.name, res.Status, res.Body)
		}
		ids[w.name] = id
	}
	var pairs []string
	for k, v := range ids {
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...)
}

// publicConnectors are one connector of each type in the fields the vendor's public examples
// send, each with a chosen id, and the credentials each answers masked.
var publicConnectors = []struct {
	body        string
	credentials []string
}{
	{`{"id":"generic_https_example","name":"generic-https connector","description":"generic-https connector example","type":"GENERIC_HTTPS",
	  "connectorConfig":{"fields":[{"fieldName":"url","value":"https://api.example.com/v2/alerts?token=t0k"},{"fieldName":"method","value":"post"},
	    {"fieldName":"additionalHeaders","value":"{\"Authorization\":\"GenieKey k\",\"Content-Type\":\"application/json\"}"},
	    {"fieldName":"additionalBodyFields","value":"{\"alias\":\"{{alert.groupingKey}}\"}"}]},
	  "configOverrides":[{"entityType":"ALERTS","fields":[
	    {"fieldName":"url","template":"{% if alert.status == 'Triggered' %}\nhttps://api.example.com/v2/alerts\n{% else %}\nhttps://api.example.com/v2/alerts/{{alert.groupingKey}}/close\n{% endif %}\n"},
	    {"fieldName":"additionalHeaders","template":"{\"Authorization\": \"GenieKey other\"}"},
	    {"fieldName":"additionalBodyFields","template":"{\"alias\": \"{{alert.groupingKey}}\"}"},
	    {"fieldName":"method","template":"PUT"}]}]}`, nil},
	{`{"id":"slack_example","name":"slack connector","description":"slack connector example","type":"SLACK",
	  "connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$SLACK"},{"fieldName":"fallbackChannel","value":"iac-internal"},{"fieldName":"channel","value":"iac-internal"}]},
	  "configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"channel","template":"{% if alert.groups[0].keyValues[alertDef.groupByKeys[1]]|lower == \"sample\" %}\nsample-channel\n{% else %}\ngeneric-channel\n{% endif %}\n"}]}]}`, nil},
	{`{"id":"pagerduty_example","name":"pagerduty connector","description":"pagerduty connector example","type":"PAGERDUTY",
	  "connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"integrationKey-example"}]},
	  "configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"integrationKey","template":"integration_{{alertDef.priority}}"}]}]}`, nil},
	{`{"id":"email_example","name":"email connector","description":"email connector example","type":"EMAIL",
	  "connectorConfig":{"fields":[{"fieldName":"emailAddresses","value":"[\"email1@example.com\",\"email2@example.com\"]"}]}}`, nil},
	{`{"id":"pagerduty_incidents_example","name":"pagerduty incidents connector","description":"d","type":"PAGERDUTY_INCIDENTS",
	  "connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$PD"},{"fieldName":"service","value":"PXXXXXX"}]}}`, nil},
	{`{"id":"service_now_example","name":"service now connector","description":"d","type":"SERVICE_NOW",
	  "connectorConfig":{"fields":[{"fieldName":"instanceUrl","value":"https://your-instance.service-now.com"},{"fieldName":"username","value":"username-example"},{"fieldName":"password","value":"password-example"}]}}`,
		[]string{"password"}},
	{`{"id":"microsoft_teams_example","name":"microsoft teams connector","description":"d","type":"MICROSOFT_TEAMS",
	  "connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$TEAMS"},{"fieldName":"teamId","value":"teamId-example"},{"fieldName":"channelId","value":"19:channel-id@thread.tacv2"}]},
	  "configOverrides":[{"entityType":"CASES","fields":[{"fieldName":"channelId","template":"19:{{case.priority}}@thread.tacv2"}]}]}`, nil},
	{`{"id":"eventbridge_example","name":"eventbridge connector","description":"d","type":"EVENTBRIDGE",
	  "connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$BUS"}]}}`, nil},
}

// sameAsSent fails unless every member of the connector sent is answered as sent, credentials
// answered as the mask.
func sameAsSent(t *testing.T, what, sent string, credentials []string, answer json.RawMessage) {
	t.Helper()
	var want, got map[string]any
	if err := json.Unmarshal([]byte(sent), &want); err != nil {
		t.Fatalf("%s: sent: %v", what, err)
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatalf("%s: answer %s: %v", what, answer, err)
	}
	if cfg, ok := want["connectorConfig"].(map[string]any); ok {
		for _, f := range cfg["fields"].([]any) {
			f := f.(map[string]any)
			for _, c := range credentials {
				if f["fieldName"] == c {
					f["value"] = connectortypes.Mask
				}
			}
		}
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s: %s answered\n %v\nsent\n %v", what, k, got[k], w)
		}
	}
}

// TestPublicConnectorsRoundTrip: each type in the public fields is created under its chosen id,
// read, listed, replaced (credentials sent back as the mask) and deleted through the newest
// public path, and every answer carries what was sent; only credentials are masked.
func TestPublicConnectorsRoundTrip(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		ids := integrations(t, env, key)
		for _, c := range publicConnectors {
			c.body = ids.Replace(c.body)
			var sent struct{ ID, Type string }
			if err := json.Unmarshal([]byte(c.body), &sent); err != nil {
				t.Fatal(err)
			}
			res := env.JSON(t, http.MethodPost, latestConn, key, `{"connector":`+c.body+`}`)
			if res.Status != 200 {
				t.Fatalf("%s: create %d %s", sent.Type, res.Status, res.Body)
			}
			if strings.Contains(string(res.Body), "password-example") {
				t.Fatalf("%s: a credential answered in clear: %s", sent.Type, res.Body)
			}
			answer := apitest.Decode[struct{ Connector json.RawMessage }](t, res).Connector
			sameAsSent(t, sent.Type+" create", c.body, c.credentials, answer)

			got := apitest.Decode[struct{ Connector json.RawMessage }](t, env.JSON(t, http.MethodGet, latestConn+"/"+sent.ID, key, "")).Connector
			sameAsSent(t, sent.Type+" get", c.body, c.credentials, got)

			// Replace: what was answered, renamed, sent back (the mask for a credential keeps it).
			var doc map[string]any
			_ = json.Unmarshal(answer, &doc)
			doc["name"] = "renamed " + sent.ID
			for _, k := range []string{"teamId", "createTime", "updateTime", "resolvedConnectorConfig"} {
				delete(doc, k)
			}
			body, _ := json.Marshal(map[string]any{"connector": doc})
			res = env.JSON(t, http.MethodPut, latestConn, key, string(body))
			if res.Status != 200 {
				t.Fatalf("%s: replace %d %s", sent.Type, res.Status, res.Body)
			}
			replacedSent, _ := json.Marshal(doc)
			sameAsSent(t, sent.Type+" replace", string(replacedSent), c.credentials, apitest.Decode[struct{ Connector json.RawMessage }](t, res).Connector)
			if len(c.credentials) > 0 {
				loaded, err := connectors.Load(context.Background(), env.DB.Read(), teamID, sent.ID)
				if err != nil || loaded.Fields["password"] != "password-example" {
					t.Fatalf("%s: the mask did not keep the credential: %v %v", sent.Type, loaded.Fields, err)
				}
			}
		}
		// Listed in creation order, each as answered.
		list := apitest.Decode[struct{ Connectors []struct{ ID, Name string } }](t, env.JSON(t, http.MethodGet, latestConn, key, "")).Connectors
		if len(list) != len(publicConnectors) || list[0].ID != "generic_https_example" || list[0].Name != "renamed generic_https_example" {
			t.Fatalf("list %+v", list)
		}
		for _, c := range list {
			if res := env.JSON(t, http.MethodDelete, latestConn+"/"+c.ID, key, ""); res.Status != 200 {
				t.Fatalf("delete %s: %d %s", c.ID, res.Status, res.Body)
			}
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, latestConn+"/"+c.ID, key, ""), 404, c.ID)
		}
	})
}

// TestIssueReproductions: the requests of issue 33 §1, as a client sends them, are accepted and
// answered as sent.
func TestIssueReproductions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, body := range []string{
			`{"name":"c","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://hooks.example.com/x"},{"fieldName":"method","value":"post"}]}}`,
			`{"id":"rc-http-1","name":"rc-http-1","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"method","value":"POST"},{"fieldName":"url","value":"https://example.com/hook"}]}}`,
			`{"name":"pd","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"k"}]},"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"integrationKey","template":"integration_{{alertDef.priority}}"}]}]}`,
		} {
			res := env.JSON(t, http.MethodPost, latestConn, key, `{"connector":`+body+`}`)
			if res.Status != 200 {
				t.Fatalf("%s: %d %s", body, res.Status, res.Body)
			}
			sameAsSent(t, body, body, nil, apitest.Decode[struct{ Connector json.RawMessage }](t, res).Connector)
		}
		// The chosen id is the connector's; a second create under it is a conflict, and changes
		// nothing.
		if c := get(t, env, key, "rc-http-1"); c.Name != "rc-http-1" {
			t.Fatalf("rc-http-1: %+v", c)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestConn, key,
			`{"connector":{"id":"rc-http-1","name":"other","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"emailAddresses","value":"[\"a@example.com\"]"}]}}}`),
			409, "connector.id", "rc-http-1")
		if c := get(t, env, key, "rc-http-1"); c.Name != "rc-http-1" || c.Type != "GENERIC_HTTPS" {
			t.Fatalf("the conflict changed rc-http-1: %+v", c)
		}
		// The same id in another team is that team's.
		_, other := env.MustTeam(t, "other")
		if res := env.JSON(t, http.MethodPost, latestConn, other,
			`{"connector":{"id":"rc-http-1","name":"o","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"k"}]}}}`); res.Status != 200 {
			t.Fatalf("another team's rc-http-1: %d %s", res.Status, res.Body)
		}
		for _, bad := range []string{"-x", "a b", "é", strings.Repeat("a", 129), "a.b"} {
			body, _ := json.Marshal(bad)
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestConn, key,
				`{"connector":{"id":`+string(body)+`,"name":"n","type":"PAGERDUTY","connectorConfig":{"fields":[{"fieldName":"integrationKey","value":"k"}]}}}`),
				400, "connector.id")
		}
	})
}

// TestFieldRules: enumerated values compare without case and are answered as sent; templates are
// checked; credentials take none; retired names are accepted as aliases of their public fields and
// never answered; integrationId names an integration of the matching type.
func TestFieldRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ids := integrations(t, env, key)
		pd := ids.Replace("$PD")
		for _, m := range []string{"post", "Put", "POST"} {
			c := create(t, env, key, `{"name":"n","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example"},{"fieldName":"method","value":"`+m+`"}]}}`)
			if v, _ := c.value("method"); v != m {
				t.Errorf("method %s answered %q", m, v)
			}
		}
		cases := []struct {
			body      string
			status    int
			fragments []string
		}{
			{`{"name":"n","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example"},{"fieldName":"method","value":"delete"}]}}`,
				400, []string{"connector.connectorConfig.fields[1].value", "one of POST, PUT"}},
			{`{"name":"n","type":"GENERIC_HTTPS","connectorConfig":{"fields":[{"fieldName":"url","value":"https://x.example"}]},"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"url","template":"{% if %}"}]}]}`,
				400, []string{"connector.configOverrides[0].fields[0].template"}},
			{`{"name":"n","type":"SERVICE_NOW","connectorConfig":{"fields":[{"fieldName":"instanceUrl","value":"https://x.example"},{"fieldName":"username","value":"u"},{"fieldName":"password","value":"p"}]},"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"password","template":"x"}]}]}`,
				400, []string{"connector.configOverrides[0].fields[0].fieldName", "password", "takes no template"}},
			{`{"name":"n","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[\"a@example.com\"]"},{"fieldName":"emailAddresses","value":"[\"b@example.com\"]"}]}}`,
				400, []string{"connector.connectorConfig.fields[1].fieldName", "twice"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"nope"}]}}`,
				400, []string{"connector.connectorConfig.fields[0].value", "integrationId", `"nope"`, "SLACK"}},
			{`{"name":"n","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$PD"}]}}`,
				400, []string{"connector.connectorConfig.fields[0].value", `"` + pd + `"`, "PAGERDUTY", "SLACK"}},
			{`{"name":"n","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$SLACK"}]}}`,
				400, []string{"connector.connectorConfig.fields[0].value", "SLACK", "MS_TEAMS_WORKFLOW or MICROSOFT_TEAMS"}},
			{`{"name":"n","type":"PAGERDUTY_INCIDENTS","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"$PD"}]}}`,
				400, []string{"connector.connectorConfig.fields", "required field service"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestConn, key, `{"connector":`+ids.Replace(c.body)+`}`), c.status, c.fragments...)
		}
		// Retired names: stored and answered under the public ones.
		e := create(t, env, key, `{"name":"e","type":"EMAIL","connectorConfig":{"fields":[{"fieldName":"recipients","value":"[\"a@example.com\"]"}]},`+
			`"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"recipients","template":"[\"{{alertDef.priority}}@example.com\"]"}]}]}`)
		if v, ok := e.value("emailAddresses"); !ok || v != `["a@example.com"]` || strings.Contains(string(e.ConfigOverrides), "recipients") ||
			!strings.Contains(string(e.ConfigOverrides), `"fieldName":"emailAddresses"`) {
			t.Fatalf("recipients alias: %+v %s", e.ConnectorConfig, e.ConfigOverrides)
		}
		p := create(t, env, key, `{"name":"p","type":"PAGERDUTY_INCIDENTS","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+pd+`"},{"fieldName":"serviceId","value":"P1"}]}}`)
		if v, ok := p.value("service"); !ok || v != "P1" {
			t.Fatalf("serviceId alias: %+v", p.ConnectorConfig)
		}
		// The connector schema answers the public fields: every field but the credentials and the
		// deprecated ones takes a template.
		s := apitest.Decode[struct {
			ConnectorSchema struct {
				ConnectorConfigSchema struct {
					Fields []struct {
						FieldName      string
						AllowOverrides bool
						Required       bool
					}
				}
				SupportedPayloadTypes []string
			}
		}](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/notifications/notification-center/v1/connector-schemas?type=SLACK", key, "")).ConnectorSchema
		if f := s.ConnectorConfigSchema.Fields; len(f) < 3 || f[0].FieldName != "integrationId" || !f[0].Required || !f[1].AllowOverrides ||
			f[1].FieldName != "channel" || f[2].FieldName != "fallbackChannel" || strings.Join(s.SupportedPayloadTypes, ",") != "slack_default,slack_raw" {
			t.Fatalf("slack schema %+v", s)
		}
	})
}

// TestPreviewType: INCIDENT_IO (a preview type the public documents do not enumerate yet) is
// accepted in its public fields, its credentials masked, and answered when asked for; unfiltered
// type summaries leave it out. The answers are not checked against the public documents here,
// since they lack the value.
func TestPreviewType(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{Unchecked: true}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		body := `{"id":"incident_io_example","name":"incident.io connector","description":"d","type":"INCIDENT_IO","connectorConfig":{"fields":[` +
			`{"fieldName":"apiKey","value":"apiKey-example"},{"fieldName":"alertEventsUrl","value":"https://api.incident.io/v2/alert_events/http/source-id"},` +
			`{"fieldName":"alertSourceToken","value":"alertSourceToken-example"}]}}`
		res := env.JSON(t, http.MethodPost, latestConn, key, `{"connector":`+body+`}`)
		if res.Status != 200 || strings.Contains(string(res.Body), "apiKey-example") || strings.Contains(string(res.Body), "alertSourceToken-example") {
			t.Fatalf("create %d %s", res.Status, res.Body)
		}
		sameAsSent(t, "INCIDENT_IO", body, []string{"apiKey", "alertSourceToken"}, apitest.Decode[struct{ Connector json.RawMessage }](t, res).Connector)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestConn, key,
			`{"connector":{"name":"n","type":"INCIDENT_IO","connectorConfig":{"fields":[{"fieldName":"apiKey","value":"k"}]}}}`), 400, "required field alertEventsUrl")
		sums := string(env.JSON(t, http.MethodGet, latestConn+"/types/summaries", key, "").Body)
		if strings.Contains(sums, "INCIDENT_IO") || !strings.Contains(sums, "EVENTBRIDGE") {
			t.Fatalf("type summaries %s", sums)
		}
	})
}

// TestResolveReadsTheIntegration: a stored connector naming an outgoing webhook (by its id or its
// externalId) delivers to that webhook's URL once Resolve has read it; another team's webhook is
// db.ErrNotFound.
func TestResolveReadsTheIntegration(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		slack := integrations(t, env, key).Replace("$SLACK")
		ext := fmt.Sprint(apitest.Decode[struct{ Webhook struct{ ExternalID int64 } }](t, env.JSON(t, http.MethodGet, latestHooks+"/"+slack, key, "")).Webhook.ExternalID)
		for _, ref := range []string{slack, ext} {
			create(t, env, key, `{"id":"s`+ref+`","name":"s","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+ref+`"}]}}`)
			c, err := connectors.Load(context.Background(), env.DB.Read(), teamID, "s"+ref)
			if err != nil {
				t.Fatal(err)
			}
			if u, _, _ := destination(c); u != "" {
				t.Fatalf("destination before Resolve: %q", u)
			}
			if err := c.Resolve(context.Background(), env.DB.Read(), teamID, outgoingwebhooks.Integrations{}); err != nil {
				t.Fatal(err)
			}
			if u, _, ok := destination(c); u != "https://hooks.slack.example/services/T0/B0/x" || !ok || c.Integration.ID != slack {
				t.Fatalf("%s: destination %q, integration %+v", ref, u, c.Integration)
			}
			if err := c.Resolve(context.Background(), env.DB.Read(), teamID+1, outgoingwebhooks.Integrations{}); !errors.Is(err, db.ErrNotFound) {
				t.Fatalf("another team's integration: %v", err)
			}
		}
	})
}

// TestNamedWebhooksStay: an outgoing webhook a connector names, by its id or its externalId, can
// neither be deleted nor change type (409 naming the connector, and nothing changes); once the
// connector names another, it can.
func TestNamedWebhooksStay(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ids := integrations(t, env, key)
		slack, teams := ids.Replace("$SLACK"), ids.Replace("$TEAMS")
		ext := fmt.Sprint(apitest.Decode[struct{ Webhook struct{ ExternalID int64 } }](t, env.JSON(t, http.MethodGet, latestHooks+"/"+teams, key, "")).Webhook.ExternalID)
		create(t, env, key, `{"id":"paging","name":"Paging","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+slack+`"}]}}`)
		create(t, env, key, `{"id":"room","name":"Room","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+ext+`"}]}}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, latestHooks+"/"+slack, key, ""), 409, `connector "Paging"`, "paging")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, latestHooks+"/"+teams, key, ""), 409, `connector "Room"`, "room")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, latestHooks, key,
			`{"id":"`+slack+`","data":{"name":"now generic","type":"GENERIC","url":"https://x.example/h"}}`), 409, `connector "Paging"`)
		if w := apitest.Decode[struct{ Webhook struct{ Type, Name string } }](t, env.JSON(t, http.MethodGet, latestHooks+"/"+slack, key, "")).Webhook; w.Type != "SLACK" || w.Name != "iac-internal" {
			t.Fatalf("a refused change changed the webhook: %+v", w)
		}
		// The same type, renamed, goes through.
		if res := env.JSON(t, http.MethodPut, latestHooks, key,
			`{"id":"`+slack+`","data":{"name":"renamed","type":"SLACK","url":"https://hooks.slack.example/services/T0/B0/y","slack":{}}}`); res.Status != 200 {
			t.Fatalf("replace keeping the type: %d %s", res.Status, res.Body)
		}
		// Another team's connector naming the same id is not this team's user, and the other
		// team cannot see the webhook.
		_, other := env.MustTeam(t, "other")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, latestConn, other,
			`{"connector":{"name":"x","type":"SLACK","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+slack+`"}]}}}`), 400, "names no integration")
		if res := env.JSON(t, http.MethodDelete, latestConn+"/paging", key, ""); res.Status != 200 {
			t.Fatalf("delete connector: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, latestHooks+"/"+slack, key, ""); res.Status != 200 {
			t.Fatalf("delete the webhook nothing names: %d %s", res.Status, res.Body)
		}
	})
}
