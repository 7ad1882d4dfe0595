// Package outgoingwebhooks serves a team's outgoing webhooks (the public outgoing webhooks
// service): the integrations that connectors and alert definitions deliver through, one of the
// public webhook types each (generic, Slack, PagerDuty, email group, Jira, …), stored with their
// settings as clients wrote them, and tested by one real delivery in the receiving service's
// format (package notifiers).
//
// Settings are answered as they were sent, credentials included: the vendor's clients read them
// back and compare them with their plan (see docs/decisions.md). They are never logged nor
// quoted in errors.
package outgoingwebhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Users names, in tx, what uses the team's webhook (e.g. `connector "Paging" (id …)`, whose
// integrationId names it): a webhook with users cannot be deleted nor change type. It is given the
// webhook's id and its externalId, since clients name a webhook by either; it runs after the
// area's per-team lock. The connectors area provides one when it names webhooks.
type Users func(ctx context.Context, tx *db.Tx, teamID int64, id string, externalID int64) ([]string, error)

// WebhookHandler implements the outgoing webhook operations of oas.Handler.
type WebhookHandler struct {
	db     *db.DB
	sender notifiers.Sender
	users  []Users
}

// NewHandler returns the outgoing webhook operations; test notifications are sent by sender
// (delivery.Sender: the outbound address policy, the attempt timeout, the SMTP server); users are
// asked before a webhook is deleted or changes type.
func NewHandler(database *db.DB, sender notifiers.Sender, users ...Users) *WebhookHandler {
	return &WebhookHandler{db: database, sender: sender, users: users}
}

// inUse returns a Conflict naming what uses the stored webhook s, for doing; nil when nothing
// does.
func (h *WebhookHandler) inUse(ctx context.Context, tx *db.Tx, teamID int64, s stored, doing string) error {
	return inUse(ctx, tx, h.users, teamID, s, doing)
}

// inUse returns a Conflict naming what the users say uses the stored webhook s, for doing; nil
// when nothing does.
func inUse(ctx context.Context, tx *db.Tx, users []Users, teamID int64, s stored, doing string) error {
	var names []string
	for _, u := range users {
		n, err := u(ctx, tx, teamID, s.ID, s.ExternalID)
		if err != nil {
			return err
		}
		names = append(names, n...)
	}
	if len(names) == 0 {
		return nil
	}
	return apierror.Conflictf("id: outgoing webhook %q cannot %s while %s use it; change them first", s.ID, doing, strings.Join(names, ", "))
}

// notFound is the area's answer for a webhook the team does not have.
func notFound(ref string) error {
	return apierror.NotFoundf("no outgoing webhook %q in this team", ref)
}

// CreateOutgoingWebhook stores a new webhook under a fresh id and the team's next external id.
//
// Errors: Invalid (see checkInput); LimitExceeded when the team holds MaxWebhooks.
func (h *WebhookHandler) CreateOutgoingWebhook(ctx context.Context, req *oas.CreateOutgoingWebhookRequest) (*oas.OutgoingWebhookCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	_, data, _, err := checkInput(req.Data)
	if err != nil {
		return nil, err
	}
	var id string
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		n, next, err := nextExternalID(ctx, tx, caller.TeamID)
		if err != nil {
			return err
		}
		if n >= MaxWebhooks {
			return apierror.LimitExceededf("data: the team holds %d outgoing webhooks, the most it may; delete one first", n)
		}
		id = tx.NewID() // the audit record names it
		return insertWebhook(ctx, tx, caller.TeamID, stored{ID: id, ExternalID: next, Data: data})
	})
	if err != nil {
		return nil, err
	}
	return &oas.OutgoingWebhookCreated{ID: oas.NewOptString(id)}, nil
}

// UpdateOutgoingWebhook replaces the webhook id (its id or external id) with data, checked as a
// create; the external id and creation time are kept, and a generic webhook's uuid when none is
// sent.
//
// Errors: Invalid when id is missing, and see checkInput; NotFound when the team has no such
// webhook; Conflict when the type changes while something uses the webhook (see Users).
func (h *WebhookHandler) UpdateOutgoingWebhook(ctx context.Context, req *oas.UpdateOutgoingWebhookRequest) error {
	caller := auth.PrincipalFrom(ctx)
	ref := req.ID.Or("")
	if ref == "" {
		return apierror.Invalidf("id: required; it names the webhook to replace")
	}
	_, data, _, err := checkInput(req.Data)
	if err != nil {
		return err
	}
	keepUUID := func(d *oas.OutgoingWebhookInputData, old oas.OutgoingWebhookInputData) {
		if g, ok := req.Data.Value.GenericWebhook.Get(); ok && g.UUID.Or("") != "" {
			return
		}
		if og, ok := old.GenericWebhook.Get(); ok && d.GenericWebhook.Set && og.UUID.Or("") != "" {
			d.GenericWebhook.Value.UUID = og.UUID
		}
	}
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		old, err := getWebhook(ctx, tx, caller.TeamID, ref)
		if errors.Is(err, db.ErrNotFound) {
			return notFound(ref)
		}
		if err != nil {
			return err
		}
		if data.Type.Or("") != old.Data.Type.Or("") {
			if err := h.inUse(ctx, tx, caller.TeamID, old, "change type"); err != nil {
				return err
			}
		}
		keepUUID(&data, old.Data)
		tx.AuditResource(old.ID)
		return updateWebhook(ctx, tx, caller.TeamID, stored{ID: old.ID, Data: data})
	})
}

// GetOutgoingWebhook answers the webhook id (its id or external id) with its settings.
//
// Errors: NotFound when the team has no such webhook.
func (h *WebhookHandler) GetOutgoingWebhook(ctx context.Context, params oas.GetOutgoingWebhookParams) (*oas.OutgoingWebhookEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := getWebhook(ctx, h.db.Read(), caller.TeamID, params.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFound(params.ID)
	}
	if err != nil {
		return nil, err
	}
	return &oas.OutgoingWebhookEnvelope{Webhook: oas.NewOptOutgoingWebhook(answerOf(s))}, nil
}

// DeleteOutgoingWebhook deletes the webhook id (its id or external id).
//
// Errors: NotFound when the team has no such webhook; Conflict while something uses it (see
// Users).
func (h *WebhookHandler) DeleteOutgoingWebhook(ctx context.Context, params oas.DeleteOutgoingWebhookParams) error {
	caller := auth.PrincipalFrom(ctx)
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		s, err := getWebhook(ctx, tx, caller.TeamID, params.ID)
		if errors.Is(err, db.ErrNotFound) {
			return notFound(params.ID)
		}
		if err != nil {
			return err
		}
		if err := h.inUse(ctx, tx, caller.TeamID, s, "be deleted"); err != nil {
			return err
		}
		tx.AuditResource(s.ID)
		return deleteWebhook(ctx, tx, caller.TeamID, s.ID)
	})
}

// ListAllOutgoingWebhooks answers every webhook of the team, oldest first, without settings.
func (h *WebhookHandler) ListAllOutgoingWebhooks(ctx context.Context) (*oas.OutgoingWebhookDeployedList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.OutgoingWebhookDeployedList{Deployed: []oas.OutgoingWebhookExtendedSummary{}}
	err := eachWebhook(ctx, h.db.Read(), caller.TeamID, "", func(s stored) error {
		out.Deployed = append(out.Deployed, oas.OutgoingWebhookExtendedSummary{
			ID: oas.NewOptString(s.ID), ExternalId: oas.NewOptInt64(s.ExternalID), Name: s.Data.Name,
			Type: s.Data.Type, URL: s.Data.URL,
			CreatedAt: oas.NewOptDateTime(s.Created), UpdatedAt: oas.NewOptDateTime(s.Updated),
		})
		return nil
	})
	return out, err
}

// ListOutgoingWebhooks answers the team's webhooks of params.Type (every one when it is left out
// or UNKNOWN), oldest first, without settings.
func (h *WebhookHandler) ListOutgoingWebhooks(ctx context.Context, params oas.ListOutgoingWebhooksParams) (*oas.OutgoingWebhookSummaryList, error) {
	caller := auth.PrincipalFrom(ctx)
	typ := string(params.Type.Or(oas.WebhookTypeUNKNOWN))
	if typ == string(oas.WebhookTypeUNKNOWN) {
		typ = ""
	}
	out := &oas.OutgoingWebhookSummaryList{Deployed: []oas.OutgoingWebhookSummary{}}
	err := eachWebhook(ctx, h.db.Read(), caller.TeamID, typ, func(s stored) error {
		out.Deployed = append(out.Deployed, oas.OutgoingWebhookSummary{
			ID: oas.NewOptString(s.ID), ExternalId: oas.NewOptInt64(s.ExternalID), Name: s.Data.Name, URL: s.Data.URL,
			CreatedAt: oas.NewOptDateTime(s.Created), UpdatedAt: oas.NewOptDateTime(s.Updated),
		})
		return nil
	})
	return out, err
}

// ListOutboundWebhooksSummary answers each webhook of the team by id, external id, name, type
// and times, oldest first.
func (h *WebhookHandler) ListOutboundWebhooksSummary(ctx context.Context) (*oas.OutboundWebhookSummaryList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.OutboundWebhookSummaryList{OutboundWebhookSummaries: []oas.OutboundWebhookSummary{}}
	err := eachWebhook(ctx, h.db.Read(), caller.TeamID, "", func(s stored) error {
		out.OutboundWebhookSummaries = append(out.OutboundWebhookSummaries, oas.OutboundWebhookSummary{
			ID: oas.NewOptString(s.ID), ExternalId: oas.NewOptInt64(s.ExternalID), Name: s.Data.Name, Type: s.Data.Type,
			CreatedAt: oas.NewOptDateTime(s.Created), UpdatedAt: oas.NewOptDateTime(s.Updated),
		})
		return nil
	})
	return out, err
}

// ListOutgoingWebhookTypes answers every webhook type with its label and the team's count of it.
func (h *WebhookHandler) ListOutgoingWebhookTypes(ctx context.Context) (*oas.OutgoingWebhookTypeList, error) {
	caller := auth.PrincipalFrom(ctx)
	counts, err := countByType(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := &oas.OutgoingWebhookTypeList{Webhooks: []oas.OutgoingWebhookTypeCount{}}
	for _, k := range notifiers.Kinds() {
		out.Webhooks = append(out.Webhooks, oas.OutgoingWebhookTypeCount{
			Type: oas.NewOptWebhookType(oas.WebhookType(k.Type)), Label: oas.NewOptString(k.Label),
			Count: oas.NewOptInt64(counts[k.Type]),
		})
	}
	return out, nil
}

// GetOutgoingWebhookTypeDetails answers the type's label.
//
// Errors: NotFound for UNKNOWN.
func (h *WebhookHandler) GetOutgoingWebhookTypeDetails(ctx context.Context, params oas.GetOutgoingWebhookTypeDetailsParams) (*oas.OutgoingWebhookTypeDetailsEnvelope, error) {
	k, ok := notifiers.Lookup(string(params.Type))
	if !ok {
		return nil, apierror.NotFoundf("no outgoing webhook type %s", params.Type)
	}
	return &oas.OutgoingWebhookTypeDetailsEnvelope{Details: oas.NewOptOutgoingWebhookDetails(oas.OutgoingWebhookDetails{
		Type: oas.NewOptWebhookType(oas.WebhookType(k.Type)), Label: oas.NewOptString(k.Label),
	})}, nil
}

// TestOutgoingWebhook checks data as a create does and sends one test notification through it.
//
// Errors: Invalid (see checkInput). The delivery's failure is an answer, not an error.
func (h *WebhookHandler) TestOutgoingWebhook(ctx context.Context, req *oas.TestOutgoingWebhookRequest) (*oas.OutgoingWebhookTestResult, error) {
	kind, data, target, err := checkInput(req.Data)
	if err != nil {
		return nil, err
	}
	return h.test(ctx, kind, target, data.Name.Or("")), nil
}

// TestExistingOutgoingWebhook sends one test notification through the webhook id (its id or
// external id).
//
// Errors: NotFound when the team has no such webhook. The delivery's failure is an answer.
func (h *WebhookHandler) TestExistingOutgoingWebhook(ctx context.Context, params oas.TestExistingOutgoingWebhookParams) (*oas.OutgoingWebhookTestResult, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := getWebhook(ctx, h.db.Read(), caller.TeamID, params.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFound(params.ID)
	}
	if err != nil {
		return nil, err
	}
	kind, ok := notifiers.Lookup(string(s.Data.Type.Or("")))
	if !ok {
		return nil, fmt.Errorf("stored webhook %s has type %q", s.ID, s.Data.Type.Or(""))
	}
	return h.test(ctx, kind, targetOf(s.Data), s.Data.Name.Or("")), nil
}

// test sends the test message through t and answers its outcome.
func (h *WebhookHandler) test(ctx context.Context, kind notifiers.Kind, t notifiers.Target, name string) *oas.OutgoingWebhookTestResult {
	o := notifiers.Send(ctx, h.sender, kind, t, TestMessage(name, time.Now()))
	if o.Err == nil {
		return &oas.OutgoingWebhookTestResult{Success: &oas.OutgoingWebhookTestResultSuccess{}}
	}
	display := fmt.Sprintf("The test notification through %s webhook %q failed: %s.", kind.Label, name, o.Err)
	if o.Status != 0 {
		display = fmt.Sprintf("The receiver of %s webhook %q answered the test notification with %d.", kind.Label, name, o.Status)
	}
	return &oas.OutgoingWebhookTestResult{Failure: oas.NewOptOutgoingWebhookTestResultFailure(oas.OutgoingWebhookTestResultFailure{
		StatusCode:     oas.NewOptInt64(int64(o.Status)),
		ErrorMessage:   oas.NewOptString(cutMessage(o.Err.Error())),
		DisplayMessage: oas.NewOptString(cutMessage(display)),
	})}
}

// TestMessage is the notification a test sends through the webhook name: its title, text, a
// field and its status say it is a test, so that nobody mistakes it for an alert.
func TestMessage(name string, now time.Time) notifiers.Message {
	return notifiers.Message{
		Title:    "[TEST] Test notification from mgmtapi",
		Text:     fmt.Sprintf("This is a test notification sent through the outgoing webhook %q. No alert fired; nothing needs to be done.", name),
		Status:   notifiers.Test,
		Severity: "info",
		Key:      "mgmtapi-test-" + uuid.NewString(),
		Time:     now.UTC(),
		Fields:   map[string]string{"test": "true", "webhook": name},
	}
}

// cutMessage keeps a message within 4000 bytes, whole runes.
func cutMessage(s string) string {
	if len(s) <= 4000 {
		return s
	}
	r := []rune(s[:4000])
	return string(r[:len(r)-1]) + "…"
}

// answerOf is the stored webhook as the get answers it.
func answerOf(s stored) oas.OutgoingWebhook {
	d := s.Data
	return oas.OutgoingWebhook{
		ID: oas.NewOptString(s.ID), ExternalId: oas.NewOptInt64(s.ExternalID), Name: d.Name, Type: d.Type, URL: d.URL,
		CreatedAt: oas.NewOptDateTime(s.Created), UpdatedAt: oas.NewOptDateTime(s.Updated),
		GenericWebhook: d.GenericWebhook, Slack: d.Slack, PagerDuty: d.PagerDuty, SendLog: d.SendLog,
		EmailGroup: d.EmailGroup, MicrosoftTeams: d.MicrosoftTeams, Jira: d.Jira, Opsgenie: d.Opsgenie,
		Demisto: d.Demisto, AwsEventBridge: d.AwsEventBridge, IbmEventNotifications: d.IbmEventNotifications,
		MsTeamsWorkflow: d.MsTeamsWorkflow,
	}
}
