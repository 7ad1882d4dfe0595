package outgoingwebhooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

const (
	base      = "/mgmt/openapi/latest/integrations/"
	hooks     = base + "webhooks/v1"
	byTypes   = base + "webhooks/v1/list/by-types"
	summaries = base + "webhooks/v1/list/summaries"
	testPath  = base + "webhooks-test/v1"
	typesPath = base + "webhook-types/v1"
)

// bodies are webhooks of every type as the vendor's Terraform provider writes them (its
// examples), each with a URL where the type takes one.
var bodies = map[string]string{
	"GENERIC": `{"name":"custom-webhook","type":"GENERIC","url":"https://example-url.com/","genericWebhook":` +
		`{"uuid":"d838cd7b-087b-40c6-bc33-80997020f5d0","method":"POST","headers":{"Content-Type":"application/json","Authorization":"Bearer s3cret"},"payload":"{\"name\": \"$ALERT_NAME\"}"}}`,
	"SLACK": `{"name":"slack-webhook","type":"SLACK","url":"https://join.slack.com/example","slack":` +
		`{"digests":[{"type":"FLOW_ANOMALIES","isActive":true}],"attachments":[{"type":"METRIC_SNAPSHOT","isActive":true}]}}`,
	"PAGERDUTY":               `{"name":"pagerduty-webhook","type":"PAGERDUTY","pagerDuty":{"serviceKey":"service-key"}}`,
	"SEND_LOG":                `{"name":"sendlog-webhook","type":"SEND_LOG","url":"https://example-url.com/","sendLog":{"uuid":"1b9c8c3e-6a55-4b8f-9a55-3f0e1f2a6b7c","payload":"{\"text\": \"$ALERT_NAME\"}"}}`,
	"EMAIL_GROUP":             `{"name":"email-group-webhook","type":"EMAIL_GROUP","emailGroup":{"emailAddresses":["user@example.com"]}}`,
	"MICROSOFT_TEAMS":         `{"name":"teams-webhook","type":"MICROSOFT_TEAMS","url":"https://example-url.com/","microsoftTeams":{}}`,
	"JIRA":                    `{"name":"jira-webhook","type":"JIRA","url":"https://coralogix.atlassian.net/jira/your-work","jira":{"apiToken":"api-token","email":"example@coralogix.com","projectKey":"project-key"}}`,
	"OPSGENIE":                `{"name":"opsgenie-webhook","type":"OPSGENIE","url":"https://example-url.com/","opsgenie":{}}`,
	"DEMISTO":                 `{"name":"demisto-webhook","type":"DEMISTO","url":"https://example-url.com/","demisto":{"uuid":"5b6f2c1e-3a4d-4e5f-8a9b-0c1d2e3f4a5b","payload":"{}"}}`,
	"AWS_EVENT_BRIDGE":        `{"name":"event_bridge_webhook","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/default","detail":"example_detail","detailType":"example_detail_type","source":"example_source","roleName":"example_role_name"}}`,
	"IBM_EVENT_NOTIFICATIONS": `{"name":"ibm-webhook","type":"IBM_EVENT_NOTIFICATIONS","ibmEventNotifications":{"eventNotificationsInstanceId":"7c3a2b1d-0000-4000-8000-000000000001","regionId":"us-south","sourceId":"src-1","sourceName":"mgmtapi","endpointType":"ENDPOINT_TYPE_PRIVATE"}}`,
	"MS_TEAMS_WORKFLOW":       `{"name":"microsoft-teams-webhook","type":"MS_TEAMS_WORKFLOW","url":"https://example-url.com/","msTeamsWorkflow":{}}`,
}

var typeOrder = []string{"GENERIC", "SLACK", "PAGERDUTY", "SEND_LOG", "EMAIL_GROUP", "MICROSOFT_TEAMS", "JIRA",
	"OPSGENIE", "DEMISTO", "AWS_EVENT_BRIDGE", "IBM_EVENT_NOTIFICATIONS", "MS_TEAMS_WORKFLOW"}

func create(t *testing.T, env *apitest.Env, key, data string) string {
	t.Helper()
	res := env.JSON(t, http.MethodPost, hooks, key, `{"data":`+data+`}`)
	if res.Status != http.StatusOK {
		t.Fatalf("create %s: %d %s", data, res.Status, res.Body)
	}
	id := apitest.Decode[struct{ ID string }](t, res).ID
	if id == "" {
		t.Fatalf("create answered no id: %s", res.Body)
	}
	return id
}

func get(t *testing.T, env *apitest.Env, key, ref string) map[string]any {
	t.Helper()
	return apitest.Decode[struct{ Webhook map[string]any }](t, env.JSON(t, http.MethodGet, hooks+"/"+ref, key, "")).Webhook
}

// sent is data with what the server adds removed from w: the answer must hold what was sent.
func sameAsSent(t *testing.T, data string, w map[string]any) {
	t.Helper()
	var want map[string]any
	if err := json.Unmarshal([]byte(data), &want); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for k, v := range w {
		switch k {
		case "id", "externalId", "createdAt", "updatedAt":
			continue
		}
		got[k] = v
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("drift:\n sent     %s\n answered %s", wb, gb)
	}
}

// TestEveryTypeIsStoredAsSent: a webhook of each type, written as the vendor's clients write it,
// is answered by the get exactly as sent (credentials included), by its id and by its
// externalId (1, 2, … in the team); the lists, summaries and type counts show them; a replace
// changes the name and type and keeps the externalId, createdAt and the generic uuid; a delete
// removes the webhook and a second delete is a 404.
func TestEveryTypeIsStoredAsSent(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ids := map[string]string{}
		for i, typ := range typeOrder {
			ids[typ] = create(t, env, key, bodies[typ])
			w := get(t, env, key, ids[typ])
			sameAsSent(t, bodies[typ], w)
			if w["externalId"] != float64(i+1) || w["id"] != ids[typ] {
				t.Errorf("%s: id %v externalId %v, want %s and %d", typ, w["id"], w["externalId"], ids[typ], i+1)
			}
			byExternal := get(t, env, key, strconv.Itoa(i+1))
			if byExternal["id"] != ids[typ] {
				t.Errorf("%s by externalId %d: %v", typ, i+1, byExternal["id"])
			}
		}
		// a generic webhook without uuid gets one
		noUUID := create(t, env, key, `{"name":"g","type":"GENERIC","url":"https://h.example.com/x"}`)
		g := get(t, env, key, noUUID)["genericWebhook"].(map[string]any)
		if u, _ := g["uuid"].(string); len(u) != 36 {
			t.Errorf("generic without uuid: %v", g)
		}

		all := apitest.Decode[struct{ Deployed []map[string]any }](t, env.JSON(t, http.MethodGet, hooks, key, "")).Deployed
		if len(all) != len(typeOrder)+1 || all[0]["id"] != ids["GENERIC"] || all[1]["type"] != "SLACK" || all[1]["url"] != "https://join.slack.com/example" {
			t.Errorf("list all: %v", all)
		}
		generic := apitest.Decode[struct{ Deployed []map[string]any }](t, env.JSON(t, http.MethodGet, byTypes+"?type=GENERIC", key, "")).Deployed
		if len(generic) != 2 || generic[0]["id"] != ids["GENERIC"] || generic[1]["id"] != noUUID {
			t.Errorf("by type GENERIC: %v", generic)
		}
		if every := apitest.Decode[struct{ Deployed []any }](t, env.JSON(t, http.MethodGet, byTypes, key, "")).Deployed; len(every) != len(typeOrder)+1 {
			t.Errorf("by type, none given: %d webhooks", len(every))
		}
		sums := apitest.Decode[struct{ OutboundWebhookSummaries []map[string]any }](t, env.JSON(t, http.MethodGet, summaries, key, "")).OutboundWebhookSummaries
		if len(sums) != len(typeOrder)+1 || sums[2]["type"] != "PAGERDUTY" || sums[2]["name"] != "pagerduty-webhook" || sums[2]["url"] != nil {
			t.Errorf("summaries: %v", sums)
		}
		types := apitest.Decode[struct{ Webhooks []map[string]any }](t, env.JSON(t, http.MethodGet, typesPath, key, "")).Webhooks
		if len(types) != len(typeOrder) || types[0]["type"] != "GENERIC" || types[0]["count"] != float64(2) || types[1]["count"] != float64(1) || types[0]["label"] == "" {
			t.Errorf("types: %v", types)
		}
		details := apitest.Decode[struct{ Details map[string]any }](t, env.JSON(t, http.MethodGet, typesPath+"/JIRA", key, "")).Details
		if details["type"] != "JIRA" || details["label"] != "Jira" {
			t.Errorf("type details: %v", details)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, typesPath+"/UNKNOWN", key, ""), 404, "UNKNOWN")

		// replace: the generic one becomes a Slack webhook, and back without uuid
		before := get(t, env, key, ids["GENERIC"])
		slack := `{"name":"now slack","type":"SLACK","url":"https://hooks.slack.example.com/T/B/x","slack":{"digests":[],"attachments":[]}}`
		if res := env.JSON(t, http.MethodPut, hooks, key, `{"id":"`+ids["GENERIC"]+`","data":`+slack+`}`); res.Status != 200 || string(res.Body) != "{}" {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		after := get(t, env, key, ids["GENERIC"])
		sameAsSent(t, slack, after)
		if after["externalId"] != before["externalId"] || after["createdAt"] != before["createdAt"] {
			t.Errorf("update changed externalId or createdAt: %v → %v", before, after)
		}
		back := `{"name":"custom again","type":"GENERIC","url":"https://example-url.com/","genericWebhook":{"method":"PUT"}}`
		if res := env.JSON(t, http.MethodPut, hooks, key, `{"id":"`+ids["PAGERDUTY"]+`","data":`+bodies["GENERIC"]+`}`); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodPut, hooks, key, `{"id":"`+ids["PAGERDUTY"]+`","data":`+back+`}`); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		if g := get(t, env, key, ids["PAGERDUTY"])["genericWebhook"].(map[string]any); g["uuid"] != "d838cd7b-087b-40c6-bc33-80997020f5d0" || g["method"] != "PUT" {
			t.Errorf("a replace without uuid keeps the stored one: %v", g)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, hooks, key, `{"id":"nope","data":`+back+`}`), 404, `"nope"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, hooks, key, `{"data":`+back+`}`), 400, "id: required")

		if res := env.JSON(t, http.MethodDelete, hooks+"/"+ids["SLACK"], key, ""); res.Status != 200 || string(res.Body) != "{}" {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, hooks+"/"+ids["SLACK"], key, ""), 404, ids["SLACK"])
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, hooks+"/"+ids["SLACK"], key, ""), 404, ids["SLACK"])
		// deleting by externalId
		if res := env.JSON(t, http.MethodDelete, hooks+"/3", key, ""); res.Status != 200 {
			t.Fatalf("delete by externalId: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, hooks+"/"+ids["PAGERDUTY"], key, ""), 404)
		// a new webhook never reuses an external id while the largest stays
		fresh := get(t, env, key, create(t, env, key, bodies["OPSGENIE"]))
		if fresh["externalId"] != float64(len(typeOrder)+2) {
			t.Errorf("next externalId %v", fresh["externalId"])
		}
	})
}

// TestRefusals: each broken webhook is a 400 naming the field and the rule, and stores nothing.
func TestRefusals(t *testing.T) {
	cases := []struct{ data, fragment string }{
		{`null`, "data: required"},
		{`{"type":"GENERIC","url":"https://h.example.com"}`, "data.name: required"},
		{`{"name":"  ","type":"GENERIC","url":"https://h.example.com"}`, "data.name: required"},
		{`{"name":"x","url":"https://h.example.com"}`, "data.type: required, one of GENERIC, SLACK"},
		{`{"name":"x","type":"UNKNOWN","url":"https://h.example.com"}`, "data.type"},
		{`{"name":"x","type":"GENERIC"}`, "data.url: required for GENERIC"},
		{`{"name":"x","type":"SLACK","url":"hooks.slack.com/x"}`, "data.url: must be an absolute http or https URL"},
		{`{"name":"x","type":"SLACK","url":"ftp://hooks.example.com/x"}`, `data.url: scheme "ftp" is not http nor https`},
		{`{"name":"x","type":"SLACK","url":"https://user:pw@hooks.example.com/x"}`, "data.url: must not carry a user name"},
		{`{"name":"x","type":"SLACK","url":"https://h.example.com","pagerDuty":{"serviceKey":"k"}}`, "data.pagerDuty: a SLACK webhook takes its settings in data.slack"},
		{`{"name":"x","type":"PAGERDUTY","pagerDuty":{}}`, "data.pagerDuty.serviceKey: required"},
		{`{"name":"x","type":"PAGERDUTY","url":"not a url","pagerDuty":{"serviceKey":"k"}}`, "data.url"},
		{`{"name":"x","type":"EMAIL_GROUP","emailGroup":{"emailAddresses":[]}}`, "data.emailGroup.emailAddresses: at least one"},
		{`{"name":"x","type":"EMAIL_GROUP","emailGroup":{"emailAddresses":["a@example.com","not an address"]}}`, "data.emailGroup.emailAddresses[1]"},
		{`{"name":"x","type":"EMAIL_GROUP","url":"https://h.example.com","emailGroup":{"emailAddresses":["a@example.com"]}}`, "data.url: EMAIL_GROUP webhooks take no url"},
		{`{"name":"x","type":"JIRA","url":"https://j.example.com","jira":{"email":"a@example.com","projectKey":"P"}}`, "data.jira.apiToken: required"},
		{`{"name":"x","type":"JIRA","url":"https://j.example.com","jira":{"apiToken":"t","email":"a@example.com"}}`, "data.jira.projectKey: required"},
		{`{"name":"x","type":"JIRA","url":"https://j.example.com","jira":{"apiToken":"t","email":"nobody","projectKey":"P"}}`, "data.jira.email: must be an email address"},
		{`{"name":"x","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"arn:aws:sqs:us-east-1:123456789012:q","detailType":"d","source":"s"}}`, "data.awsEventBridge.eventBusArn: must be an event bus ARN"},
		{`{"name":"x","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/default","source":"s"}}`, "data.awsEventBridge.detailType: required"},
		{`{"name":"x","type":"IBM_EVENT_NOTIFICATIONS","ibmEventNotifications":{"regionId":"us-south","sourceId":"s"}}`, "data.ibmEventNotifications.eventNotificationsInstanceId: required"},
		{`{"name":"x","type":"IBM_EVENT_NOTIFICATIONS","ibmEventNotifications":{"eventNotificationsInstanceId":"i","regionId":"Mars","sourceId":"s"}}`, "data.ibmEventNotifications.regionId"},
		{`{"name":"x","type":"GENERIC","url":"https://h.example.com","genericWebhook":{"headers":{"Host":"other.example.com"}}}`, "data.genericWebhook.headers: Host is set by the transport"},
		{`{"name":"x","type":"GENERIC","url":"https://h.example.com","genericWebhook":{"headers":{"Bad Name":"v"}}}`, `data.genericWebhook.headers: "Bad Name" is not a header name`},
		{`{"name":"x","type":"GENERIC","url":"https://h.example.com","genericWebhook":{"payload":"{\"a\": $ALERT_NAME"}}`, "data.genericWebhook.payload: must be a JSON document"},
		{`{"name":"x","type":"DEMISTO","url":"https://h.example.com","demisto":{"payload":"not json"}}`, "data.demisto.payload: must be a JSON document"},
		{`{"name":"x","type":"GENERIC","url":"https://h.example.com","genericWebhook":{"method":"DELETE"}}`, "method"},
		{`{"name":"x","type":"SLACK","url":"https://h.example.com","slack":{"digests":[{"type":"NOPE"}]}}`, "type"},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, hooks, key, `{"data":`+c.data+`}`), 400, c.fragment)
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, testPath, key, `{"data":`+c.data+`}`), 400, c.fragment)
		}
		if all := apitest.Decode[struct{ Deployed []any }](t, env.JSON(t, http.MethodGet, hooks, key, "")).Deployed; len(all) != 0 {
			t.Errorf("refused creates stored %v", all)
		}
		id := create(t, env, key, bodies["PAGERDUTY"])
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, hooks, key, `{"id":"`+id+`","data":{"name":"x","type":"PAGERDUTY","pagerDuty":{}}}`), 400, "data.pagerDuty.serviceKey: required")
		sameAsSent(t, bodies["PAGERDUTY"], get(t, env, key, id))
	})
}

// TestTeamIsolationAndPermissions: another team's webhook is a 404 to every operation naming it
// and absent from its lists; reading needs outbound-webhooks:ReadConfig, the summaries
// outbound-webhooks:ReadSummary, writing and testing outbound-webhooks:UpdateConfig.
func TestTeamIsolationAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, keyA := env.MustTeam(t, "a")
		_, keyB := env.MustTeam(t, "b")
		id := create(t, env, keyA, bodies["JIRA"])
		for _, c := range []struct{ method, path, body string }{
			{http.MethodGet, hooks + "/" + id, ""},
			{http.MethodGet, hooks + "/1", ""},
			{http.MethodDelete, hooks + "/" + id, ""},
			{http.MethodGet, hooks + "/" + id + "/test", ""},
			{http.MethodPut, hooks, `{"id":"` + id + `","data":` + bodies["OPSGENIE"] + `}`},
		} {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, keyB, c.body), 404, "no outgoing webhook")
		}
		if all := apitest.Decode[struct{ Deployed []any }](t, env.JSON(t, http.MethodGet, hooks, keyB, "")).Deployed; len(all) != 0 {
			t.Errorf("team B sees %v", all)
		}
		if b := create(t, env, keyB, bodies["OPSGENIE"]); get(t, env, keyB, "1")["id"] != b {
			t.Errorf("team B's externalIds start at 1")
		}
		sameAsSent(t, bodies["JIRA"], get(t, env, keyA, id))

		summary := env.MustKey(t, keyA, "outbound-webhooks:ReadSummary")
		reader := env.MustKey(t, keyA, "outbound-webhooks:ReadConfig")
		if res := env.JSON(t, http.MethodGet, summaries, summary, ""); res.Status != 200 {
			t.Errorf("summaries with ReadSummary: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, hooks+"/"+id, summary, ""), 403, "outbound-webhooks:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, hooks, summary, ""), 403, "outbound-webhooks:ReadConfig")
		if res := env.JSON(t, http.MethodGet, hooks+"/"+id, reader, ""); res.Status != 200 {
			t.Errorf("get with ReadConfig: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, hooks, reader, `{"data":`+bodies["OPSGENIE"]+`}`), 403, "outbound-webhooks:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, hooks+"/"+id, reader, ""), 403, "outbound-webhooks:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, hooks+"/"+id+"/test", reader, ""), 403, "outbound-webhooks:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, hooks, "", ""), 401)
		sameAsSent(t, bodies["JIRA"], get(t, env, keyA, id))
	})
}

// TestLoadDestination: the export for connectors answers the public type, the URL and the
// settings by their public names, by id and by externalId; another team's or a missing webhook
// is the area's NotFound.
func TestLoadDestination(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamA, keyA := env.MustTeam(t, "a")
		teamB, _ := env.MustTeam(t, "b")
		pd := create(t, env, keyA, bodies["PAGERDUTY"])
		eb := create(t, env, keyA, bodies["AWS_EVENT_BRIDGE"])
		mail := create(t, env, keyA, bodies["EMAIL_GROUP"])
		ctx := context.Background()
		d, err := outgoingwebhooks.LoadDestination(ctx, env.DB.Read(), teamA, pd)
		if err != nil || d.ID != pd || d.Type != "PAGERDUTY" || d.URL != "" || d.Settings["serviceKey"] != "service-key" {
			t.Errorf("pagerduty: %+v %v", d, err)
		}
		d, err = outgoingwebhooks.LoadDestination(ctx, env.DB.Read(), teamA, "2")
		if err != nil || d.ID != eb || d.Type != "AWS_EVENT_BRIDGE" || d.Settings["eventBusArn"] != "arn:aws:events:us-east-1:123456789012:event-bus/default" ||
			d.Settings["detailType"] != "example_detail_type" || d.Settings["source"] != "example_source" || d.Settings["roleName"] != "example_role_name" {
			t.Errorf("eventbridge by externalId: %+v %v", d, err)
		}
		d, err = outgoingwebhooks.LoadDestination(ctx, env.DB.Read(), teamA, mail)
		if err != nil || d.Settings["emailAddresses"] != `["user@example.com"]` {
			t.Errorf("email group: %+v %v", d, err)
		}
		for _, c := range []struct {
			team int64
			id   string
		}{{teamB, pd}, {teamB, "1"}, {teamA, "nope"}, {teamA, "99"}} {
			_, err := outgoingwebhooks.LoadDestination(ctx, env.DB.Read(), c.team, c.id)
			if e, ok := apierror.As(err); !ok || e.Kind != apierror.NotFound || !strings.Contains(e.Message, c.id) {
				t.Errorf("team %d id %s: %v", c.team, c.id, err)
			}
		}
	})
}
