package messages_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/messages"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func preset(payload string, fields ...string) *oas.Preset {
	var fs []oas.PresetMessageField
	for i := 0; i+1 < len(fields); i += 2 {
		fs = append(fs, oas.PresetMessageField{FieldName: oas.NewOptString(fields[i]), Template: oas.NewOptString(fields[i+1])})
	}
	o := oas.PresetConfigOverride{MessageConfig: oas.NewOptPresetMessageConfig(oas.PresetMessageConfig{Fields: fs})}
	if payload != "" {
		o.PayloadType = oas.NewOptString(payload)
	}
	return &oas.Preset{ConfigOverrides: []oas.PresetConfigOverride{o}}
}

func sample(t *testing.T, entityType string) map[string]any {
	t.Helper()
	e, err := notifyexpr.SampleEntity(entityType, "")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestComposePerConnectorType: the rendered preset becomes each delivered type's fields; the
// built-in templates serve both entity types; a template that does not render and a JSON field
// that is not an object are errors naming the field; a type mgmtapi does not deliver is
// ErrNotDelivered; Fallback still tells the headline.
func TestComposePerConnectorType(t *testing.T) {
	alert := sample(t, "ALERTS")
	name := alert["alertDef"].(map[string]any)["name"].(string)
	status := alert["alert"].(map[string]any)["status"].(string)
	conn := func(ty oas.ConnectorType, fields map[string]string) connectors.Connector {
		return connectors.Connector{ID: "c1", Type: ty, Fields: fields}
	}

	m, err := messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeSLACK, map[string]string{"webhookUrl": "https://hooks.example/T"}),
		preset("", "title", "{{ alertDef.name }} is {{ alert.status }}", "description", "P={{ alertDef.priority }}"), alert)
	if err != nil || m.URL != "https://hooks.example/T" || m.Fields["text"] != "*"+name+" is "+status+"*\nP="+alert["priority"].(string) {
		t.Fatalf("slack: %+v, %v", m, err)
	}
	m, err = messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeSLACK, map[string]string{"webhookUrl": "https://hooks.example/T"}),
		preset("raw", "payload", `{"text":"{{ name }}","blocks":[]}`), alert)
	if err != nil || m.Fields["text"] != name || m.Fields["blocks"] == nil {
		t.Fatalf("slack raw: %+v, %v", m, err)
	}

	m, err = messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypePAGERDUTY, map[string]string{"integrationKey": "rk", "eventsUrl": "https://pd.example/v2/enqueue"}),
		nil, alert)
	if err != nil || m.RoutingKey != "rk" || m.Fields["summary"] != "["+status+"] "+name || m.Fields["severity"] == "" || m.Fields["source"] != "mgmtapi" {
		t.Fatalf("pagerduty: %+v, %v", m, err)
	}

	m, err = messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeGENERICHTTPS, map[string]string{"url": "https://h.example/x", "method": "PUT",
		"additionalHeaders": `{"Authorization":"Bearer t"}`, "additionalBodyFields": `{"team":"core","title":"not this"}`}),
		preset("", "title", "{{ name }}", "headers", `{"X-Event":"{{ alert.status }}"}`), alert)
	if err != nil || m.Method != "PUT" || m.Headers["Authorization"] != "Bearer t" || m.Headers["X-Event"] != status ||
		m.Fields["title"] != name || m.Fields["team"] != "core" || m.Fields["headers"] != nil {
		t.Fatalf("generic: %+v, %v", m, err)
	}

	c := sample(t, "CASES")
	m, err = messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeMICROSOFTTEAMS, map[string]string{"webhookUrl": "https://teams.example/w"}), nil, c)
	title, _ := m.Fields["title"].(string)
	if err != nil || !strings.Contains(title, c["case"].(map[string]any)["title"].(string)) || m.Fields["text"] == "" {
		t.Fatalf("teams, a case: %+v, %v", m, err)
	}

	_, err = messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeSLACK, map[string]string{"webhookUrl": "https://x.example"}),
		preset("", "title", "{{ alertDef.name | nosuchfilter }}"), alert)
	if err == nil || !strings.Contains(err.Error(), "preset field title") {
		t.Fatalf("a broken template: %v", err)
	}
	fallback, ferr := messages.Fallback(conn(oas.ConnectorTypeSLACK, map[string]string{"webhookUrl": "https://x.example"}), alert, err)
	if text, _ := fallback.Fields["text"].(string); ferr != nil || !strings.Contains(text, name) || !strings.Contains(text, "could not be rendered") {
		t.Fatalf("fallback: %+v, %v", fallback, ferr)
	}
	_, err = messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypePAGERDUTY, map[string]string{"integrationKey": "k"}),
		preset("", "customDetails", "not json"), alert)
	if err == nil || !strings.Contains(err.Error(), "customDetails") {
		t.Fatalf("a JSON field that is not an object: %v", err)
	}
	// IBM Event Notifications goes through the IBM webhook type's delivery, to the instance the
	// CRN names.
	ibm, err := messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeIBMEVENTNOTIFICATIONS, map[string]string{
		"instanceCrn": "crn:v1:bluemix:public:event-notifications:eu-de:a/acc:inst-7::", "region": "eu-de", "sourceId": "src"}), nil, alert)
	if err != nil || ibm.Type != delivery.Webhook || ibm.WebhookType != "IBM_EVENT_NOTIFICATIONS" ||
		ibm.WebhookSettings["eventNotificationsInstanceId"] != "inst-7" || ibm.WebhookSettings["regionId"] != "eu-de" || ibm.Webhook == nil {
		t.Fatalf("IBM Event Notifications: %+v, %v", ibm, err)
	}
	if _, err := messages.Compose(t.Context(), nil, 1, conn(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED, nil), nil, alert); !errors.Is(err, messages.ErrNotDelivered) {
		t.Fatalf("a connector of no type: %v", err)
	}
}

// TestComposeServiceNowIncidentIOAndEventBridge: a ServiceNow connector's message goes to its
// instance's incident table with basic credentials, its title as short_description and the
// preset's impact and urgency; an incident.io connector's to its alert events URL with the alert
// source's token as bearer (apiKey unused); an EventBridge connector's is an outgoing webhook
// message of the webhook it resolved, a rendered detail replacing the webhook's detail setting,
// and one that resolved no webhook is refused.
func TestComposeServiceNowIncidentIOAndEventBridge(t *testing.T) {
	alert := sample(t, "ALERTS")
	sn := connectors.Connector{Type: oas.ConnectorTypeSERVICENOW,
		Fields: map[string]string{"instanceUrl": "https://acme.service-now.example/", "username": "u", "password": "p"}}
	m, err := messages.Compose(t.Context(), nil, 1, sn, preset("", "title", "T {{ alertDef.name }}", "description", "D", "impact", "2", "urgency", "1"), alert)
	if err != nil || m.Type != delivery.ServiceNow || m.URL != "https://acme.service-now.example/api/now/table/incident" ||
		m.Headers["Authorization"] != "Basic dTpw" || m.Fields["impact"] != "2" || m.Fields["urgency"] != "1" ||
		!strings.HasPrefix(m.Fields["short_description"].(string), "T ") || m.Fields["description"] != "D" {
		t.Fatalf("ServiceNow: %+v, %v", m, err)
	}
	iio := connectors.Connector{Type: oas.ConnectorTypeINCIDENTIO,
		Fields: map[string]string{"apiKey": "k", "alertEventsUrl": "https://api.incident.example/v2/alert_events/http/s1", "alertSourceToken": "tok"}}
	m, err = messages.Compose(t.Context(), nil, 1, iio, preset("", "title", "", "description", "D"), alert)
	if err != nil || m.Type != delivery.IncidentIO || m.URL != iio.Fields["alertEventsUrl"] || m.Headers["Authorization"] != "Bearer tok" ||
		m.Fields["title"] != "(empty notification)" || m.Fields["description"] != "D" {
		t.Fatalf("incident.io: %+v, %v", m, err)
	}
	eb := connectors.Connector{Type: oas.ConnectorTypeEVENTBRIDGE, Fields: map[string]string{"integrationId": "7"},
		Integration: &connectortypes.Integration{ID: "7", Type: "AWS_EVENT_BRIDGE", Settings: map[string]string{"eventBusArn": "arn", "detail": "old"}}}
	m, err = messages.Compose(t.Context(), nil, 1, eb, preset("", "title", "T", "description", "D", "detail", `{"team": "db"}`), alert)
	if err != nil || m.Type != delivery.Webhook || m.WebhookType != "AWS_EVENT_BRIDGE" || m.Webhook == nil ||
		m.Webhook.Title != "T" || m.Webhook.Text != "D" || m.WebhookSettings["detail"] != `{"team": "db"}` ||
		m.WebhookSettings["eventBusArn"] != "arn" || eb.Integration.Settings["detail"] != "old" {
		t.Fatalf("EventBridge: %+v, %v", m, err)
	}
	if _, err := messages.Compose(t.Context(), nil, 1, eb, preset("", "detail", `[1]`), alert); err == nil || !strings.Contains(err.Error(), "detail") {
		t.Fatalf("a detail that is not an object: %v", err)
	}
	eb.Integration = nil
	if _, err := messages.Compose(t.Context(), nil, 1, eb, nil, alert); err == nil || !strings.Contains(err.Error(), "integrationId") {
		t.Fatalf("no webhook resolved: %v", err)
	}
}

// TestComposeEmail: an email's addresses are the connector's emailAddresses, or its template for
// the entity type rendered to a JSON array of addresses; the customSubject (else the title) is the
// subject and the customContent (else the description) the text. A template that renders no list
// of addresses is an error naming the field, and Fallback then sends to the connector's own
// addresses.
func TestComposeEmail(t *testing.T) {
	alert := sample(t, "ALERTS")
	c := connectors.Connector{Type: oas.ConnectorTypeEMAIL, Fields: map[string]string{"emailAddresses": `["Ops <ops@example.com>","b@example.com"]`}}
	m, err := messages.Compose(t.Context(), nil, 1, c, preset("", "title", "T {{ alertDef.name }}", "description", "D"), alert)
	if err != nil || strings.Join(m.Fields["to"].([]string), ",") != "ops@example.com,b@example.com" ||
		m.Fields["subject"] != "T "+alert["alertDef"].(map[string]any)["name"].(string) || m.Fields["text"] != "D" || m.URL != "" {
		t.Fatalf("email: %+v, %v", m, err)
	}
	c.Overrides = map[oas.NotificationEntityType]map[string]string{
		"ALERTS": {"emailAddresses": `["{{ alertDef.priority | lower }}@example.com"]`},
	}
	m, err = messages.Compose(t.Context(), nil, 1, c, nil, alert)
	want := strings.ToLower(alert["alertDef"].(map[string]any)["priority"].(string)) + "@example.com"
	if err != nil || strings.Join(m.Fields["to"].([]string), ",") != want {
		t.Fatalf("the recipients' template: %+v, %v (want %s)", m.Fields, err, want)
	}
	// The public payload email_default: customSubject and customContent win over title and
	// description.
	m, err = messages.Compose(t.Context(), nil, 1, c, preset("email_default", "title", "T", "customSubject", "S {{ alertDef.priority }}",
		"description", "D", "customContent", "<div>C</div>"), alert)
	if err != nil || m.Fields["subject"] != "S "+alert["alertDef"].(map[string]any)["priority"].(string) || m.Fields["text"] != "<div>C</div>" {
		t.Fatalf("customSubject and customContent: %+v, %v", m.Fields, err)
	}
	c.Overrides["ALERTS"]["emailAddresses"] = `["not an address"]`
	_, err = messages.Compose(t.Context(), nil, 1, c, nil, alert)
	if err == nil || !strings.Contains(err.Error(), `connector field emailAddresses: must hold email addresses: [0] "not an address" is not one`) {
		t.Fatalf("a template rendering no address: %v", err)
	}
	fallback, err := messages.Fallback(c, alert, err)
	if err != nil || strings.Join(fallback.Fields["to"].([]string), ",") != "ops@example.com,b@example.com" {
		t.Fatalf("fallback: %+v, %v", fallback, err)
	}
}

// TestComposeConfigTemplates: the connector fields clients template per entity type reach the
// delivery: a generic URL that depends on the alert's status (written over several lines, as
// clients do), its method in upper case whatever the case sent, its headers' template, a
// PagerDuty routing key per priority, and a Slack channel (else the fallbackChannel). A rendered
// URL that is not one is an error naming the field.
func TestComposeConfigTemplates(t *testing.T) {
	alert := sample(t, "ALERTS")
	status := alert["alert"].(map[string]any)["status"].(string)
	priority := alert["alertDef"].(map[string]any)["priority"].(string)
	generic := connectors.Connector{Type: oas.ConnectorTypeGENERICHTTPS,
		Fields: map[string]string{"url": "https://r.example/default", "method": "post", "additionalHeaders": `{"X-A":"1"}`},
		Overrides: map[oas.NotificationEntityType]map[string]string{"ALERTS": {
			"url":               "\n  {% if alert.status == '" + status + "' %}\n  https://r.example/{{ alert.status | lower }}\n  {% else %}\n  https://r.example/other\n  {% endif %}\n",
			"additionalHeaders": `{"X-P":"{{ alertDef.priority }}"}`,
		}}}
	m, err := messages.Compose(t.Context(), nil, 1, generic, preset("generic_https_default", "headers", "{}", "body", `{"s":"{{ alert.status }}"}`), alert)
	if err != nil || m.URL != "https://r.example/"+strings.ToLower(status) || m.Method != "POST" || m.Headers["X-P"] != priority || m.Headers["X-A"] != "" ||
		m.Fields["s"] != status {
		t.Fatalf("generic: %+v, %v", m, err)
	}
	if generic.Fields["additionalHeaders"] != `{"X-A":"1"}` {
		t.Fatalf("Compose changed the caller's connector: %v", generic.Fields)
	}
	generic.Overrides["ALERTS"]["url"] = "not a url"
	if _, err := messages.Compose(t.Context(), nil, 1, generic, nil, alert); err == nil || !strings.Contains(err.Error(), "connector field url") {
		t.Fatalf("a template rendering no URL: %v", err)
	}

	pd := connectors.Connector{Type: oas.ConnectorTypePAGERDUTY,
		Fields: map[string]string{"integrationKey": "k", "eventsUrl": "https://events.example/v2/enqueue"},
		Overrides: map[oas.NotificationEntityType]map[string]string{
			"ALERTS": {"integrationKey": "integration_{{alertDef.priority}}"},
			"CASES":  {"eventsUrl": "https://events.example/{{ case.priority | lower }}"},
		}}
	m, err = messages.Compose(t.Context(), nil, 1, pd, preset("pagerduty_default", "summary", "S", "severity", "\n  CRITICAL\n", "timestamp", "{{ alert.timestamp }}"), alert)
	if err != nil || m.RoutingKey != "integration_"+priority || m.URL != "https://events.example/v2/enqueue" || m.Fields["severity"] != "critical" ||
		m.Fields["timestamp"] == nil {
		t.Fatalf("pagerduty: %+v, %v", m, err)
	}
	cases := sample(t, "CASES")
	m, err = messages.Compose(t.Context(), nil, 1, pd, nil, cases)
	if err != nil || m.RoutingKey != "k" || m.URL != "https://events.example/"+strings.ToLower(cases["case"].(map[string]any)["priority"].(string)) {
		t.Fatalf("pagerduty without a template for the entity type: %+v, %v", m, err)
	}

	slack := connectors.Connector{Type: oas.ConnectorTypeSLACK,
		Fields:    map[string]string{"webhookUrl": "https://hooks.example/s", "fallbackChannel": "general"},
		Overrides: map[oas.NotificationEntityType]map[string]string{"ALERTS": {"channel": "{% if false %}x{% endif %}"}}}
	m, err = messages.Compose(t.Context(), nil, 1, slack, nil, alert)
	if err != nil || m.Fields["channel"] != "general" {
		t.Fatalf("slack fallbackChannel: %+v, %v", m, err)
	}
	slack.Overrides["ALERTS"]["channel"] = "alerts-{{ alertDef.priority | lower }}"
	m, err = messages.Compose(t.Context(), nil, 1, slack, nil, alert)
	if err != nil || m.Fields["channel"] != "alerts-"+strings.ToLower(priority) {
		t.Fatalf("slack channel: %+v, %v", m, err)
	}
}
