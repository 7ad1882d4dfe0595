package routers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

// notifiesOn says whether an event of kind is sent to a definition's destination, router or
// webhook of the notifyOn setting: triggered always, resolved only with
// NOTIFY_ON_TRIGGERED_AND_RESOLVED, nothing else.
func notifiesOn(kind delivery.EventKind, on oas.OptAlertDefNotifyOn) bool {
	switch kind {
	case delivery.Triggered:
		return true
	case delivery.Resolved:
		return on.Or("") == oas.AlertDefNotifyOnNOTIFYONTRIGGEREDANDRESOLVED
	}
	return false
}

// maxRetriggerMinutes bounds a webhook's retriggering period (about 100 years), so that the
// window's start is a time.
const maxRetriggerMinutes = 100 * 366 * 24 * 60

// toWebhooks chooses, for each of the definition's notificationGroup.webhooks[] whose
// notifyOn admits the event, one record of the outgoing webhook its integrationId names (the
// webhook's id written in decimal, or its externalId), or of an email to its recipients.emails
// (sent as an EMAIL_GROUP webhook, through the operator's SMTP server). The record is sent by the
// delivery worker through the webhook type's own delivery (notifiers.DeliverRecord) and keeps a
// snapshot of the webhook's type, url and settings and the rendered message.
//
// The alert a notification is about is the definition and the alert's labels (which its source
// fingerprints it by: one Alertmanager alert, whichever incident it opens), or, when the
// notification group has groupByKeys, the definition and the alert's values of those keys: its
// records' dedup key, which is also PagerDuty's dedup_key and Opsgenie's alias. A webhook setting with
// minutes > 0 is not sent a triggered notification of an alert while one was enqueued for it
// through the same webhook within the last minutes, and is sent a reminder (ReminderCause) of a
// firing that continues once they have passed; a setting without minutes is sent no reminder. A
// resolution is sent when notifyOn is NOTIFY_ON_TRIGGERED_AND_RESOLVED and the webhook was sent
// the trigger of the same incident (delivery.TriggerSent), as through a connector. A setting
// without notifyOn or minutes takes the definition's incidentsSettings.
//
// A webhook that is gone, recipients that are not addresses, or a record the outbox refuses are
// logged (WARN, naming the definition and the webhook) and skipped. The error is the database's
// only.
func (p *pass) toWebhooks(def oas.AlertDef, labels map[string]string) error {
	ctx, e, logger := p.ctx, p.e, p.logger
	props := def.AlertDefProperties.Value
	hooks := props.NotificationGroup.Value.Webhooks
	if len(hooks) == 0 {
		return nil
	}
	defID := def.ID.Or("")
	key := alertKey(defID, labels, props.NotificationGroup.Value.GroupByKeys)
	var msg json.RawMessage
	settings := props.IncidentsSettings.Value
	for i, w := range hooks {
		// Unset, notifyOn and minutes are the definition's incidentsSettings (issue 37).
		if !w.NotifyOn.Set {
			w.NotifyOn = settings.NotifyOn
		}
		if !w.Minutes.Set {
			w.Minutes = settings.Minutes
		}
		if !notifiesOn(e.Kind, w.NotifyOn) {
			continue
		}
		in := w.Integration.Value
		var d delivery.Delivery
		switch {
		case in.IntegrationId.Set:
			id := strconv.FormatInt(in.IntegrationId.Value, 10)
			dest, err := outgoingwebhooks.LoadDestination(ctx, p.q, e.TeamID, id)
			if ae, ok := apierror.As(err); ok && ae.Kind == apierror.NotFound {
				logger.Warn("alert definition's webhook is gone; nothing is sent through it",
					"alert_def_id", defID, "webhook", id)
				continue
			}
			if err != nil {
				return err
			}
			d = delivery.Delivery{ConnectorID: "webhook-" + dest.ID, ConnectorName: "outgoing webhook " + id,
				URL: dest.URL, WebhookType: dest.Type, WebhookSettings: dest.Settings}
		case in.Recipients.Set:
			emails := in.Recipients.Value.Emails
			if _, err := connectortypes.ParseRecipients(emails); err != nil {
				logger.Warn("alert definition's webhook recipients are not addresses; nothing is sent to them",
					"alert_def_id", defID, "webhook", i, "error", err.Error())
				continue
			}
			list, _ := json.Marshal(emails)
			d = delivery.Delivery{ConnectorID: recipientsID(emails), ConnectorName: "email recipients",
				WebhookType: "EMAIL_GROUP", WebhookSettings: map[string]string{"emailAddresses": string(list)}}
		default:
			continue // neither: nothing to send to
		}
		if kind, ok := notifiers.Lookup(d.WebhookType); !ok || kind.Notifier == nil {
			continue // stored, not delivered by mgmtapi
		}
		minutes := w.Minutes.Or(0)
		if p.reminder() && minutes <= 0 {
			continue // no period: no reminder
		}
		if minutes > 0 && e.Kind == delivery.Triggered {
			since := e.At.Add(-time.Duration(min(minutes, maxRetriggerMinutes)) * time.Minute)
			if p.reminder() {
				since = since.Add(reminderSlack(minutes))
			}
			recent, err := sentSince(ctx, p.q, e.TeamID, d.ConnectorID, key, since)
			if err != nil {
				return err
			}
			if recent {
				logger.Info("alert notification not sent again within the webhook's retriggering period",
					"alert_def_id", defID, "webhook", d.ConnectorID, "minutes", minutes, "reminder", p.reminder())
				continue
			}
		}
		if e.Kind == delivery.Resolved {
			// As through a connector: no resolution to a webhook that was not sent the trigger
			// (held back by its retriggering period, or named after the alert fired).
			sent, err := delivery.TriggerSent(ctx, p.q, e.TeamID, d.ConnectorID, e.EntityType, e.EntityID)
			if err != nil {
				return err
			}
			if !sent {
				logger.Info("alert notification not sent: the webhook was not sent the alert's trigger",
					"alert_def_id", defID, "webhook", d.ConnectorID, "incident", e.EntityID)
				continue
			}
		}
		if msg == nil {
			msg = webhookMessage(e, props, p.entity, labels, defID, key)
		}
		d.TeamID, d.RequestID, d.RouterID, d.RouterName = e.TeamID, p.requestID, defID, "alert definition "+props.Name.Or("")
		d.ConnectorType, d.Message, d.DedupKey = delivery.Webhook, msg, key
		d.EntityType, d.EntityID, d.EventKind = e.EntityType, e.EntityID, e.Kind
		p.out = append(p.out, d)
	}
	return nil
}

// sentSince reports whether the team's connector (a webhook's) was enqueued a triggered
// notification of the alert key after since.
func sentSince(ctx context.Context, q db.Querier, teamID int64, connectorID, key string, since time.Time) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE team_id = $1 AND connector_id = $2
		AND dedup_key = $3 AND event_kind = 'triggered' AND dedup_key <> '' AND created_at > $4 LIMIT 1) recent`,
		teamID, connectorID, key, since.UnixMicro()).Scan(&n)
	return n > 0, err
}

// alertKey identifies one alert of a definition: the definition and the alert's labels, or only
// its values of the notification group's groupByKeys when the group names some (a missing label
// counts as empty), since the group notifies once per combination of them.
func alertKey(defID string, labels map[string]string, groupBy []string) string {
	names := slices.Clone(groupBy)
	if len(names) == 0 {
		for k := range labels {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	h := sha256.New()
	for _, k := range names {
		h.Write([]byte(k + "\x00" + labels[k] + "\x00"))
	}
	return "mgmtapi-" + defID + "-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// recipientsID is the connector id of a webhook setting's recipients: the same addresses, in
// any order, are the same receiver.
func recipientsID(emails []string) string {
	list := make([]string, len(emails))
	for i, a := range emails {
		list[i] = strings.ToLower(strings.TrimSpace(a))
	}
	slices.Sort(list)
	sum := sha256.Sum256([]byte(strings.Join(list, "\x00")))
	return "recipients-" + hex.EncodeToString(sum[:12])
}

// webhookMessage is the notification of the event as the webhook types render it: the
// definition's name as the title, its description (else the alert's summary) as the text, the
// alert's severity, the alert key, and as fields the alert's labels with the definition's id,
// name and priority and the incident's id.
func webhookMessage(e delivery.Event, p oas.AlertDefProperties, entity map[string]any,
	labels map[string]string, defID, key string) json.RawMessage {
	alert, _ := entity["alert"].(map[string]any)
	ad, _ := entity["alertDef"].(map[string]any)
	name := p.Name.Or("")
	if name == "" {
		name, _ = entity["name"].(string)
	}
	text := p.Description.Or("")
	if text == "" {
		ann, _ := alert["annotations"].(map[string]any)
		text, _ = ann["summary"].(string)
	}
	if text == "" {
		text = "Alert " + name + " " + string(e.Kind) + "."
	}
	severity, _ := alert["severity"].(string)
	fields := make(map[string]string, len(labels)+4)
	for k, v := range labels {
		fields[k] = v
	}
	fields["alertDefId"] = defID
	fields["alertDefName"] = name
	if pr, ok := ad["priority"].(string); ok {
		fields["priority"] = pr
	}
	fields["incidentId"] = e.EntityID
	status := notifiers.Triggered
	if e.Kind == delivery.Resolved {
		status = notifiers.Resolved
	}
	b, _ := json.Marshal(notifiers.Message{Title: name, Text: text, Status: status, Severity: strings.ToLower(severity),
		Key: key, Time: e.At, Fields: fields})
	return b
}
