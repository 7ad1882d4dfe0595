package main

import "mgmtapi-ci/publicclients/outgoingwebhooks"

func init() {
	// One webhook of several types, as the vendor's Terraform provider writes them: create, read
	// (every field as sent), replace (the externalId kept), list, summarise, test, delete.
	register("outgoing_webhooks_service", func(s *S) {
		c, err := outgoingwebhooks.NewClientWithResponses(s.base, outgoingwebhooks.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		type hook struct {
			typ, data string
			checks    map[string]string
		}
		hooks := []hook{
			{"GENERIC", `"url":"https://hooks.example.com/generic","genericWebhook":{"uuid":"d838cd7b-087b-40c6-bc33-80997020f5d0","method":"POST",` +
				`"headers":{"Content-Type":"application/json"},"payload":"{\"name\": \"$ALERT_NAME\"}"}`,
				map[string]string{"url": "https://hooks.example.com/generic", "genericWebhook.method": "POST",
					"genericWebhook.headers.Content-Type": "application/json", "genericWebhook.uuid": "d838cd7b-087b-40c6-bc33-80997020f5d0"}},
			{"SLACK", `"url":"https://hooks.slack.example.com/services/T0/B0/x","slack":{"digests":[{"type":"FLOW_ANOMALIES","isActive":true}],` +
				`"attachments":[{"type":"METRIC_SNAPSHOT","isActive":true}]}`,
				map[string]string{"slack.digests.0.type": "FLOW_ANOMALIES", "slack.attachments.0.type": "METRIC_SNAPSHOT"}},
			{"PAGERDUTY", `"pagerDuty":{"serviceKey":"scenario-service-key"}`, map[string]string{"pagerDuty.serviceKey": "scenario-service-key"}},
			{"EMAIL_GROUP", `"emailGroup":{"emailAddresses":["oncall@example.com"]}`, map[string]string{"emailGroup.emailAddresses.0": "oncall@example.com"}},
			{"JIRA", `"url":"https://example.atlassian.net/jira/your-work","jira":{"apiToken":"api-token","email":"me@example.com","projectKey":"OPS"}`,
				map[string]string{"jira.apiToken": "api-token", "jira.email": "me@example.com", "jira.projectKey": "OPS"}},
			{"MS_TEAMS_WORKFLOW", `"url":"https://example.webhook.office.com/workflows/x","msTeamsWorkflow":{}`, map[string]string{"url": "https://example.webhook.office.com/workflows/x"}},
			{"OPSGENIE", `"url":"https://api.opsgenie.com/v1/json/coralogix?apiKey=k","opsgenie":{}`, map[string]string{"url": "https://api.opsgenie.com/v1/json/coralogix?apiKey=k"}},
			{"AWS_EVENT_BRIDGE", `"awsEventBridge":{"eventBusArn":"arn:aws:events:us-east-1:123456789012:event-bus/default","detail":"d","detailType":"t","source":"s","roleName":"r"}`,
				map[string]string{"awsEventBridge.eventBusArn": "arn:aws:events:us-east-1:123456789012:event-bus/default", "awsEventBridge.roleName": "r"}},
		}
		ids := map[string]string{}
		external := map[string]string{}
		for _, h := range hooks {
			name := unique("webhook-" + h.typ)
			step := "create a " + h.typ + " webhook"
			r1, err := c.OutgoingWebhooksServiceCreateOutgoingWebhookWithResponse(s.ctx,
				body[outgoingwebhooks.OutgoingWebhooksServiceCreateOutgoingWebhookJSONRequestBody](s, step,
					`{"data":{"name":"`+name+`","type":"`+h.typ+`",`+h.data+`}}`))
			out := s.must(step, r1, err, 200)
			s.typed(step, r1.JSON200)
			ids[h.typ] = str(out, "id")
			if ids[h.typ] == "" {
				s.failf(step, "no id: %v", out)
			}
			step = "read the " + h.typ + " webhook"
			r2, err := c.OutgoingWebhooksServiceGetOutgoingWebhookWithResponse(s.ctx, ids[h.typ])
			got := s.must(step, r2, err, 200)
			s.typed(step, r2.JSON200)
			s.equal(step, got, "webhook.id", ids[h.typ])
			s.equal(step, got, "webhook.name", name)
			s.equal(step, got, "webhook.type", h.typ)
			s.present(step, got, "webhook.externalId")
			external[h.typ] = str(got, "webhook.externalId")
			for path, want := range h.checks {
				s.equal(step, got, "webhook."+path, want)
			}

			step = "replace the " + h.typ + " webhook"
			renamed := unique("renamed-" + h.typ)
			r3, err := c.OutgoingWebhooksServiceUpdateOutgoingWebhookWithResponse(s.ctx,
				body[outgoingwebhooks.OutgoingWebhooksServiceUpdateOutgoingWebhookJSONRequestBody](s, step,
					`{"id":"`+ids[h.typ]+`","data":{"name":"`+renamed+`","type":"`+h.typ+`",`+h.data+`}}`))
			s.must(step, r3, err, 200)
			r4, err := c.OutgoingWebhooksServiceGetOutgoingWebhookWithResponse(s.ctx, ids[h.typ])
			got = s.must(step, r4, err, 200)
			s.equal(step, got, "webhook.name", renamed)
			s.equal(step, got, "webhook.externalId", external[h.typ])
			for path, want := range h.checks {
				s.equal(step, got, "webhook."+path, want)
			}
		}

		r5, err := c.OutgoingWebhooksServiceListAllOutgoingWebhooksWithResponse(s.ctx)
		all := s.must("list the webhooks", r5, err, 200)
		s.typed("list the webhooks", r5.JSON200)
		slack := outgoingwebhooks.WebhookType("SLACK")
		r6, err := c.OutgoingWebhooksServiceListOutgoingWebhooksWithResponse(s.ctx, &outgoingwebhooks.OutgoingWebhooksServiceListOutgoingWebhooksParams{Type: &slack})
		bySlack := s.must("list the Slack webhooks", r6, err, 200)
		s.typed("list the Slack webhooks", r6.JSON200)
		r7, err := c.OutgoingWebhooksServiceListOutboundWebhooksSummaryWithResponse(s.ctx)
		sums := s.must("summarise the webhooks", r7, err, 200)
		s.typed("summarise the webhooks", r7.JSON200)
		for typ, id := range ids {
			s.contains("list the webhooks", all, "deployed", "id", id)
			s.contains("summarise the webhooks", sums, "outboundWebhookSummaries", "id", id)
			if typ == "SLACK" {
				s.contains("list the Slack webhooks", bySlack, "deployed", "id", id)
			} else {
				s.lacks("list the Slack webhooks", bySlack, "deployed", "id", id)
			}
		}

		r8, err := c.OutgoingWebhooksServiceListOutgoingWebhookTypesWithResponse(s.ctx)
		types := s.must("list the webhook types", r8, err, 200)
		s.typed("list the webhook types", r8.JSON200)
		s.contains("list the webhook types", types, "webhooks", "type", "MS_TEAMS_WORKFLOW")
		r9, err := c.OutgoingWebhooksServiceGetOutgoingWebhookTypeDetailsWithResponse(s.ctx, outgoingwebhooks.WebhookType("JIRA"))
		details := s.must("describe the Jira type", r9, err, 200)
		s.typed("describe the Jira type", r9.JSON200)
		s.equal("describe the Jira type", details, "details.type", "JIRA")
		s.present("describe the Jira type", details, "details.label")

		// Tests send for real; the server's outbound policy refuses loopback, so both answer a
		// failure saying why.
		r10, err := c.OutgoingWebhooksServiceTestOutgoingWebhookWithResponse(s.ctx,
			body[outgoingwebhooks.OutgoingWebhooksServiceTestOutgoingWebhookJSONRequestBody](s, "test a configuration",
				`{"data":{"name":"scenario test","type":"GENERIC","url":"http://127.0.0.1:9/scenario","genericWebhook":{"method":"POST"}}}`))
		tested := s.must("test a configuration", r10, err, 200)
		s.typed("test a configuration", r10.JSON200)
		s.present("test a configuration", tested, "failure.errorMessage")
		r11, err := c.OutgoingWebhooksServiceTestExistingOutgoingWebhookWithResponse(s.ctx, ids["EMAIL_GROUP"])
		s.must("test a stored webhook", r11, err, 200)
		s.typed("test a stored webhook", r11.JSON200)

		for typ, id := range ids {
			step := "delete the " + typ + " webhook"
			r12, err := c.OutgoingWebhooksServiceDeleteOutgoingWebhookWithResponse(s.ctx, id)
			s.must(step, r12, err, 200)
			r13, err := c.OutgoingWebhooksServiceGetOutgoingWebhookWithResponse(s.ctx, id)
			s.must(step, r13, err, 404)
		}
	})
}
