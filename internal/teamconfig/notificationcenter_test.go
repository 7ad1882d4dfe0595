package teamconfig_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// The notification center's connectors and global routers in a configuration document.

const (
	slackSecret    = "https://hooks.slack.com/services/T0/B0/s3cr3t-slack-token"
	passwordSecret = "s3cr3t-password"
	rotated        = "https://hooks.slack.com/services/T0/B0/r0tated-token"
)

// storedField returns the stored value of the team's connector's field, in clear.
func storedField(t *testing.T, env *apitest.Env, teamID int64, connectorID, field string) string {
	t.Helper()
	c, err := connectors.Load(context.Background(), env.DB.Read(), teamID, connectorID)
	if err != nil {
		t.Fatalf("load connector %s: %v", connectorID, err)
	}
	return c.Fields[field]
}

// noSecret fails when doc holds a secret stored by secretsTeam.
func noSecret(t *testing.T, doc string) {
	t.Helper()
	for _, secret := range []string{"s3cr3t", "r0tated"} {
		if strings.Contains(doc, secret) {
			t.Fatalf("an export holds a secret (%q):\n%s", secret, doc)
		}
	}
}

// secretsDoc has a SLACK connector whose (deprecated) webhook URL is a secret and a SERVICE_NOW
// one whose password is; a generic connector's URL and headers are answered as sent.
func secretsDoc(slackURL string) string {
	return `connectors:
- id: slack
  name: chat
  type: SLACK
  connectorConfig: {fields: [{fieldName: webhookUrl, value: "` + slackURL + `"}, {fieldName: channel, value: "#alerts"}]}
- id: hook
  name: hook
  type: SERVICE_NOW
  connectorConfig: {fields: [{fieldName: password, value: "` + passwordSecret + `"}, {fieldName: instanceUrl, value: "https://x.service-now.com"}, {fieldName: username, value: u}]}
`
}

// TestConnectorSecrets: an export holds the mask, never a secret; re-applying it is unchanged and
// keeps the stored secrets, also when the document changes something else; a secret given in
// clear is compared with the stored one; the mask on a connector the team lacks is a 400 naming
// the field, and nothing changes.
func TestConnectorSecrets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "secrets")
		if p := mustApply(t, env, key, "", secretsDoc(slackSecret)); actions(p)["connectors create"] != 2 {
			t.Fatalf("plan %v", actions(p))
		}
		yamlDoc, jsonDoc := mustExport(t, env, key, false), mustExport(t, env, key, true)
		noSecret(t, yamlDoc)
		noSecret(t, jsonDoc)
		if n := strings.Count(jsonDoc, `"`+connectortypes.Mask+`"`); n != 2 {
			t.Errorf("the export masks %d values, want 2:\n%s", n, jsonDoc)
		}

		// The export again: unchanged, secrets kept.
		if p := mustApply(t, env, key, "", yamlDoc); p.Summary["unchanged"] != len(p.Changes) || len(p.Changes) == 0 {
			t.Errorf("re-applying the export: %+v", p)
		}
		// Something else changes: an update that keeps the secrets.
		renamed := strings.Replace(yamlDoc, "name: chat", "name: chat room", 1)
		if p := mustApply(t, env, key, "", renamed); changeOf(t, p, "connectors", "slack") != "update" || changeOf(t, p, "connectors", "hook") != "unchanged" {
			t.Errorf("renaming one connector: %+v", p)
		}
		if got := storedField(t, env, teamID, "slack", "webhookUrl"); got != slackSecret {
			t.Errorf("the mask did not keep the stored webhook URL: %q", got)
		}
		if got := storedField(t, env, teamID, "hook", "password"); got != passwordSecret {
			t.Errorf("the mask did not keep the stored password: %q", got)
		}

		// Secrets in clear: unchanged when they are the stored ones, an update when rotated.
		inClear := strings.Replace(secretsDoc(slackSecret), "name: chat", "name: chat room", 1)
		if p := mustApply(t, env, key, "", inClear); p.Summary["unchanged"] != 2 {
			t.Errorf("the stored secrets in clear: %+v", p)
		}
		rotatedDoc := strings.Replace(secretsDoc(rotated), "name: chat", "name: chat room", 1)
		if p := mustApply(t, env, key, "", rotatedDoc); changeOf(t, p, "connectors", "slack") != "update" {
			t.Errorf("a rotated secret: %+v", p)
		}
		if got := storedField(t, env, teamID, "slack", "webhookUrl"); got != rotated {
			t.Errorf("webhook URL %q after the rotation", got)
		}
		noSecret(t, mustExport(t, env, key, false))

		// To another team: nothing to keep.
		_, other := env.MustTeam(t, "no secrets")
		before := mustExport(t, env, other, false)
		apitest.ExpectError(t, apply(t, env, other, "", "application/yaml", yamlDoc), 400,
			`connectors[0] ("hook"): connector.connectorConfig.fields[0].value: `+connectortypes.Mask+` stands for the stored value of password`,
			"send the value itself")
		if after := mustExport(t, env, other, false); after != before {
			t.Fatalf("a refused apply changed the team:\n%s", after)
		}
		// The mask of a field the stored connector lacks (another type before) is refused too.
		retyped := strings.Replace(yamlDoc, "type: SERVICE_NOW", "type: SLACK", 1)
		retyped = strings.Replace(retyped, "fieldName: password", "fieldName: webhookUrl", 1)
		retyped = strings.Replace(retyped, "fieldName: instanceUrl", "fieldName: channel", 1)
		apitest.ExpectError(t, apply(t, env, key, "", "application/yaml", retyped), 400,
			`connectors[0] ("hook"): connector.connectorConfig.fields[0].value:`, "webhookUrl")
	})
}

// mailConnector and pagingRouter are a connector without secrets and a router sending to it.
const (
	mailConnector = `- {id: mail, name: mail, type: EMAIL, connectorConfig: {fields: [{fieldName: emailAddresses, value: '["a@example.com"]'}]}}
`
	pagingRouter = `- {id: paging, name: Paging, rules: [{condition: "true", targets: [{connectorId: mail}]}]}
`
)

// TestRouterReferences: a router's connector and preset may be the document's; one neither the
// team nor the document has, or another team's, is a 400 naming it; targets without ids get
// some, and leave the router unchanged when applied again.
func TestRouterReferences(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "routers")
		doc := "notificationPresets:\n- {id: mailtext, name: m, connectorType: EMAIL, entityType: ALERTS}\n" +
			"connectors:\n" + mailConnector +
			"routers:\n- {id: paging, name: Paging, rules: [{condition: \"true\", targets: [{connectorId: mail, presetId: mailtext}]}]}\n"
		p := mustApply(t, env, key, "", doc)
		if got := actions(p); got["connectors create"] != 1 || got["routers create"] != 1 {
			t.Fatalf("plan %v", got)
		}
		if !strings.Contains(string(env.JSON(t, http.MethodGet, routersPath+"/paging", key, "").Body), `"presetId":"mailtext"`) {
			t.Errorf("the router's target is not the document's")
		}
		if p := mustApply(t, env, key, "", doc); p.Summary["unchanged"] != len(p.Changes) {
			t.Errorf("targets without ids, applied again: %+v", p)
		}

		before := mustExport(t, env, key, false)
		for _, c := range []struct{ name, doc, fragment string }{
			{"connector", "routers:\n- {id: r2, name: Ghost, rules: [{condition: \"true\", targets: [{connectorId: ghost}]}]}\n",
				`routers[0] ("Ghost"): router.rules[0].targets[0].connectorId: no connector "ghost"`},
			{"preset", "routers:\n- {id: r2, name: Ghost, fallbackTargets: [{entityType: ALERTS, target: {connectorId: mail, presetId: ghost}}]}\n",
				`routers[0] ("Ghost"): router.fallbackTargets[0].target.presetId: no preset "ghost"`},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, apply(t, env, key, "", "application/yaml", c.doc), 400, c.fragment)
			})
		}
		// Another team's connector is not this team's.
		_, other := env.MustTeam(t, "other")
		apitest.ExpectError(t, apply(t, env, other, "", "application/yaml", "routers:\n"+pagingRouter), 400,
			`routers[0] ("Paging"): router.rules[0].targets[0].connectorId: no connector "mail"`)
		if after := mustExport(t, env, key, false); after != before {
			t.Fatalf("a refused apply changed the team:\n%s", after)
		}
	})
}

// TestConnectorPrune: prune deletes routers before the connectors they use; a connector that a
// router the document keeps uses is not deleted (409 naming the router, nothing changed).
func TestConnectorPrune(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "prune")
		doc := "connectors:\n" + mailConnector + "routers:\n" + pagingRouter
		mustApply(t, env, key, "", doc)
		before := mustExport(t, env, key, false)

		apitest.ExpectError(t, apply(t, env, key, "?prune=true", "application/yaml", "connectors: []\nrouters:\n"+pagingRouter), 409,
			`connectors "mail" (deleted by prune)`, `router "Paging" (id paging)`)
		// A router absent from the document is not pruned either: its area is left alone.
		apitest.ExpectError(t, apply(t, env, key, "?prune=true", "application/yaml", "connectors: []\n"), 409, `router "Paging"`)
		if after := mustExport(t, env, key, false); after != before {
			t.Fatalf("a refused apply changed the team:\n%s", after)
		}

		p := mustApply(t, env, key, "?prune=true", "connectors: []\nrouters: []\n")
		if got := actions(p); got["connectors delete"] != 1 || got["routers delete"] != 1 || len(got) != 2 {
			t.Errorf("plan %v", got)
		}
		for _, path := range []string{connectorsPath + "/mail", routersPath + "/paging"} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, path, key, ""), 404)
		}
	})
}

// TestNotificationCenterPermissions: export needs the outgoing webhooks', connectors' and routers' read permissions,
// apply their write permissions when it changes them.
func TestNotificationCenterPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		earlier := []string{"org-settings:ReadConfig", "metrics.recording-rules:ReadConfig", "notification-center-presets:ReadConfig"}
		apitest.ExpectError(t, export(t, env, env.MustKey(t, env.RootKey, earlier...), false), 403,
			`"outbound-webhooks:ReadConfig"`, "outgoingWebhooks")
		earlier = append(earlier, "outbound-webhooks:ReadConfig")
		apitest.ExpectError(t, export(t, env, env.MustKey(t, env.RootKey, earlier...), false), 403,
			`"notification-center-connectors:ReadConfig"`, "connectors")
		apitest.ExpectError(t, export(t, env, env.MustKey(t, env.RootKey, append(earlier, "notification-center-connectors:ReadConfig")...), false), 403,
			`"notification-center-routers:ReadConfig"`, "routers")

		applyOnly := env.MustKey(t, env.RootKey, "org-settings:UpdateConfig")
		apitest.ExpectError(t, apply(t, env, applyOnly, "", "application/yaml", "connectors:\n"+mailConnector), 403,
			`"notification-center-connectors:UpdateConfig"`, "connectors")
		connectorsOnly := env.MustKey(t, env.RootKey, "org-settings:UpdateConfig", "notification-center-connectors:UpdateConfig")
		apitest.ExpectError(t, apply(t, env, connectorsOnly, "", "application/yaml", "connectors:\n"+mailConnector+"routers:\n"+pagingRouter), 403,
			`"notification-center-routers:UpdateConfig"`, "routers")
		if res := env.JSON(t, http.MethodGet, connectorsPath+"/mail", env.RootKey, ""); res.Status != 404 {
			t.Errorf("a refused apply created the connector: %d %s", res.Status, res.Body)
		}
	})
}

// TestPublicConnectorFieldsInDocuments: a document's connectors and presets in the fields,
// payload types and system preset ids the vendor's public clients write, under chosen ids, are
// stored and exported as written (a retired field name is stored and exported under its public
// name), and applying the export again is unchanged; a preset id breaking the pattern is a 400.
func TestPublicConnectorFieldsInDocuments(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "public")
		doc := `connectors:
- id: generic_https_example
  name: hook
  type: GENERIC_HTTPS
  connectorConfig: {fields: [{fieldName: url, value: "https://api.example.com/v2/alerts"}, {fieldName: method, value: post}]}
  configOverrides: [{entityType: ALERTS, fields: [{fieldName: url, template: "{% if alert.status == 'Triggered' %}https://api.example.com/v2/alerts{% else %}https://api.example.com/close{% endif %}"}]}]
- id: email_example
  name: mail
  type: EMAIL
  connectorConfig: {fields: [{fieldName: recipients, value: '["a@example.com"]'}]}
notificationPresets:
- id: generic_https_preset
  name: p
  connectorType: GENERIC_HTTPS
  entityType: ALERTS
  parentId: preset_system_generic_https_alerts_empty
  configOverrides: [{payloadType: generic_https_default, conditionType: {matchEntityType: {}}, messageConfig: {fields: [{fieldName: headers, template: "{}"}, {fieldName: body, template: "{}"}]}}]
`
		if p := mustApply(t, env, key, "", doc); actions(p)["connectors create"] != 2 || actions(p)["notificationPresets create"] != 1 {
			t.Fatalf("plan %v", actions(p))
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(mustExport(t, env, key, true))); err != nil {
			t.Fatal(err)
		}
		export := compact.String()
		for _, want := range []string{`"id":"generic_https_example"`, `"value":"post"`, `"value":"https://api.example.com/v2/alerts"`,
			`"fieldName":"emailAddresses"`, `"id":"generic_https_preset"`, `"payloadType":"generic_https_default"`, `"parentId":"preset_system_generic_https_alerts_empty"`} {
			if !strings.Contains(export, want) {
				t.Errorf("the export lacks %s:\n%s", want, export)
			}
		}
		if strings.Contains(export, "recipients") {
			t.Errorf("the export names a retired field:\n%s", export)
		}
		if p := mustApply(t, env, key, "", mustExport(t, env, key, false)); p.Summary["unchanged"] != len(p.Changes) {
			t.Errorf("the export applied again: %+v", p)
		}
		apitest.ExpectError(t, apply(t, env, key, "", "application/yaml", "notificationPresets:\n- {id: \"-bad\", name: p}\n"), 400, "id", "-bad")
	})
}

// webhooksDoc has a SLACK outgoing webhook (its URL a secret) chosen by id and externalId, a
// PAGERDUTY one (its serviceKey a secret), and a SLACK connector that delivers through the first.
func webhooksDoc(slackURL, serviceKey string) string {
	return `outgoingWebhooks:
- id: chat-hook
  externalId: 41
  name: chat
  type: SLACK
  url: "` + slackURL + `"
  slack: {}
- id: paging-hook
  name: paging
  type: PAGERDUTY
  pagerDuty: {serviceKey: "` + serviceKey + `"}
connectors:
- id: chat
  name: chat
  type: SLACK
  connectorConfig: {fields: [{fieldName: integrationId, value: chat-hook}, {fieldName: channel, value: "#alerts"}]}
`
}

// TestOutgoingWebhooksInDocuments: outgoing webhooks are part of a team's document, applied
// before the connectors that name them, keeping their ids and externalIds; the export masks their
// secrets (a Slack URL, a PagerDuty key), re-applying it changes nothing and keeps them, and a
// mask with nothing stored to keep is a 400 naming the setting. A webhook a connector uses is not
// pruned.
func TestOutgoingWebhooksInDocuments(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "hooks")
		p := mustApply(t, env, key, "", webhooksDoc(slackSecret, "pd-s3cr3t-key"))
		if a := actions(p); a["outgoingWebhooks create"] != 2 || a["connectors create"] != 1 {
			t.Fatalf("plan %v", a)
		}
		got := apitest.Decode[struct {
			Webhook struct {
				ExternalID int64
				URL        string
			}
		}](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/integrations/webhooks/v1/chat-hook", key, "")).Webhook
		if got.ExternalID != 41 || got.URL != slackSecret {
			t.Fatalf("the webhook applied: %+v", got)
		}
		doc := mustExport(t, env, key, false)
		noSecret(t, doc)
		if !strings.Contains(doc, "chat-hook") || !strings.Contains(doc, "externalId: 41") || strings.Count(doc, connectortypes.Mask) != 2 {
			t.Fatalf("the export:\n%s", doc)
		}
		if p := mustApply(t, env, key, "", doc); p.Summary["unchanged"] != len(p.Changes) {
			t.Errorf("re-applying the export: %+v", p)
		}
		got = apitest.Decode[struct {
			Webhook struct {
				ExternalID int64
				URL        string
			}
		}](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/latest/integrations/webhooks/v1/41", key, "")).Webhook
		if got.URL != slackSecret {
			t.Errorf("the mask did not keep the stored URL: %q", got.URL)
		}
		_, other := env.MustTeam(t, "other")
		apitest.ExpectError(t, apply(t, env, other, "", "application/yaml", doc), 400, "url", "has none")
		keepConnector := "outgoingWebhooks: []\n" + webhooksDoc(slackSecret, "k")[strings.Index(webhooksDoc(slackSecret, "k"), "connectors:"):]
		apitest.ExpectError(t, apply(t, env, key, "?prune=true", "application/yaml", keepConnector), 409, "chat-hook", "connector")
		if p := mustApply(t, env, key, "?prune=true", "outgoingWebhooks: []\nconnectors: []\n"); p.Summary["delete"] != 3 {
			t.Errorf("pruning the connector and its webhooks: %+v", p)
		}
		apitest.ExpectError(t, apply(t, env, key, "", "application/yaml", "outgoingWebhooks:\n- {id: \"7\", name: x, type: GENERIC, url: \"https://h.example\"}\n"), 400, "id", "externalId")
	})
}
