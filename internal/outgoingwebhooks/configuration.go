package outgoingwebhooks

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the outgoing webhooks' part of a team's configuration document
// (teamconfig.Area, key outgoingWebhooks, applied before the connectors and alert definitions
// that name them): each webhook as GetOutgoingWebhook answers it without its timestamps, checked as
// a create checks it. Documents go into version control, so its secrets (see secrets) are
// exported as Mask; Mask in a document keeps the stored value of a webhook the team has (same
// id), and is a 400 naming the setting for a webhook it lacks.
//
// A webhook keeps its id and its externalId from the document, so that connectors (which name a
// webhook by either) and alert definitions (by externalId) applied from the same document find
// it: a new webhook takes the document's externalId when the team has no other webhook of it
// (else the team's next one), and a stored webhook's externalId never changes. A document's id
// must not be a decimal number, which would read as an externalId. A webhook with users neither
// changes type nor is deleted (Users), as in the operations.
type Configuration struct {
	// Users are asked before a webhook is deleted or changes type.
	Users []Users
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "outgoingWebhooks" }

// Permissions implements teamconfig.Area: those of GetOutgoingWebhook and UpdateOutgoingWebhook.
func (Configuration) Permissions() (read, write string) {
	return "outbound-webhooks:ReadConfig", "outbound-webhooks:UpdateConfig"
}

// documentOf is a stored webhook in the document's form: the get's answer without timestamps,
// its secrets masked.
func documentOf(s stored) ([]byte, error) {
	s.Data = cloneData(s.Data)
	secrets(&s.Data, func(_ string, v *string) { *v = Mask })
	w := answerOf(s)
	w.CreatedAt.Reset()
	w.UpdatedAt.Reset()
	if s.ExternalID == 0 {
		w.ExternalId.Reset()
	}
	return w.MarshalJSON()
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachWebhook(ctx, q, teamID, "", func(s stored) error {
		doc, err := documentOf(s)
		out = append(out, teamconfig.Resource{ID: s.ID, Name: s.Data.Name.Or(""), Doc: doc, Value: s})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the webhook's settings as CreateOutgoingWebhook's data,
// checked by checkInput, with the document's id (a fresh one without) and externalId (0 without).
//
// Errors: Invalid naming the field (id, externalId, or the settings' path under data).
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.CreateOutgoingWebhookRequest
	if err := teamconfig.DecodeBodyOf(oas.CreateOutgoingWebhookOperation, "data", doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	var answer oas.OutgoingWebhook
	if err := answer.UnmarshalJSON(doc); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("externalId: must be an integer")
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if _, err := strconv.ParseInt(id, 10, 64); err == nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("id: %q is a decimal number, which names a webhook by its externalId; choose another id", id)
	}
	external := answer.ExternalId.Or(0)
	if external < 0 {
		return teamconfig.Resource{}, teamconfig.Invalidf("externalId: must be positive, not %d", external)
	}
	// A masked setting is checked as a placeholder of its kind and kept masked for Put.
	var masked []string
	if d, ok := in.Data.Get(); ok {
		secrets(&d, func(path string, v *string) {
			if *v == Mask {
				masked = append(masked, path)
				if path == "url" {
					*v = maskedURL
				}
			}
		})
		in.Data = oas.NewOptOutgoingWebhookInputData(d)
	}
	_, data, _, err := checkInput(in.Data)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	secrets(&data, func(path string, v *string) {
		if slices.Contains(masked, path) {
			*v = Mask
		}
	})
	s := stored{ID: id, ExternalID: external, Data: data}
	encoded, err := documentOf(s)
	return teamconfig.Resource{ID: id, Name: data.Name.Or(""), Doc: encoded, Value: s}, err
}

// Unchanged implements teamconfig.Comparer: a document without an externalId leaves the stored
// one as it is, and Mask stands for the stored secret.
func (Configuration) Unchanged(current, want teamconfig.Resource) bool {
	cur, ok1 := current.Value.(stored)
	w, ok2 := want.Value.(stored)
	if !ok1 || !ok2 || (w.ExternalID != 0 && w.ExternalID != cur.ExternalID) {
		return false
	}
	w.Data = cloneData(w.Data)
	if keepMasked(&w.Data, cur.Data, true, w.ID) != nil {
		return false
	}
	a, err1 := cur.Data.MarshalJSON()
	b, err2 := w.Data.MarshalJSON()
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// Put implements teamconfig.Area.
//
// Errors: Invalid when the externalId is another webhook's, or differs from the stored one's;
// LimitExceeded past MaxWebhooks; Conflict when the type changes while something uses the
// webhook.
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	s := r.Value.(stored)
	s.Data = cloneData(s.Data)
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	var old stored
	if exists {
		var err error
		if old, err = getWebhook(ctx, tx, teamID, r.ID); err != nil {
			return err
		}
	}
	if err := keepMasked(&s.Data, old.Data, exists, r.ID); err != nil {
		return err
	}
	if exists {
		if s.ExternalID != 0 && s.ExternalID != old.ExternalID {
			return apierror.Invalidf("externalId: webhook %s has externalId %d, which does not change (the document says %d)", r.ID, old.ExternalID, s.ExternalID)
		}
		if s.Data.Type.Or("") != old.Data.Type.Or("") {
			if err := inUse(ctx, tx, c.Users, teamID, old, "change type"); err != nil {
				return err
			}
		}
		if g, ok := s.Data.GenericWebhook.Get(); ok && g.UUID.Or("") == "" {
			if og, ok := old.Data.GenericWebhook.Get(); ok {
				s.Data.GenericWebhook.Value.UUID = og.UUID
			}
		}
		return updateWebhook(ctx, tx, teamID, stored{ID: old.ID, Data: s.Data})
	}
	n, next, err := nextExternalID(ctx, tx, teamID)
	if err != nil {
		return err
	}
	if n >= MaxWebhooks {
		return apierror.LimitExceededf("outgoingWebhooks: the team holds %d outgoing webhooks, the most it may", n)
	}
	if s.ExternalID != 0 {
		other, err := getWebhook(ctx, tx, teamID, strconv.FormatInt(s.ExternalID, 10)) // ids are never decimal numbers
		switch {
		case err == nil:
			return apierror.Invalidf("externalId: %d is webhook %s's", s.ExternalID, other.ID)
		case !errors.Is(err, db.ErrNotFound):
			return err
		}
		next = s.ExternalID
	}
	return insertWebhook(ctx, tx, teamID, stored{ID: r.ID, ExternalID: next, Data: s.Data})
}

// Delete implements teamconfig.Area.
//
// Errors: Conflict naming the users while something uses the webhook.
func (c Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	s, err := getWebhook(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	if err := inUse(ctx, tx, c.Users, teamID, s, "be deleted"); err != nil {
		return err
	}
	return deleteWebhook(ctx, tx, teamID, s.ID)
}

// Mask is the value a webhook's secret settings are exported as; in a document, it stands for the
// stored value (as connectors' Mask does).
const Mask = "********"

// secretURLTypes are the types whose url carries the receiver's secret (a Slack or Teams webhook
// URL, an Opsgenie or Demisto key in the URL).
var secretURLTypes = map[oas.WebhookType]bool{
	oas.WebhookTypeSLACK: true, oas.WebhookTypeMICROSOFTTEAMS: true, oas.WebhookTypeMSTEAMSWORKFLOW: true,
	oas.WebhookTypeOPSGENIE: true, oas.WebhookTypeDEMISTO: true,
}

// secrets visits each secret setting of d: its path in the document and a pointer to its value.
// The secrets are the url of secretURLTypes, pagerDuty.serviceKey, jira.apiToken and the values of
// genericWebhook.headers (they hold credentials as often as not).
func secrets(d *oas.OutgoingWebhookInputData, visit func(path string, v *string)) {
	if u, ok := d.URL.Get(); ok && u != "" && secretURLTypes[d.Type.Or("")] {
		visit("url", &d.URL.Value)
	}
	if p, ok := d.PagerDuty.Get(); ok && p.ServiceKey.Or("") != "" {
		visit("pagerDuty.serviceKey", &d.PagerDuty.Value.ServiceKey.Value)
	}
	if j, ok := d.Jira.Get(); ok && j.ApiToken.Or("") != "" {
		visit("jira.apiToken", &d.Jira.Value.ApiToken.Value)
	}
	if g, ok := d.GenericWebhook.Get(); ok {
		if h, ok := g.Headers.Get(); ok {
			masked := make(oas.GenericWebhookConfigHeaders, len(h))
			for name, v := range h {
				visit("genericWebhook.headers."+name, &v)
				masked[name] = v
			}
			d.GenericWebhook.Value.Headers = oas.NewOptGenericWebhookConfigHeaders(masked)
		}
	}
}

// maskedURL stands for a masked url while a document is checked.
const maskedURL = "https://masked.invalid/"

// keepMasked replaces each Mask among d's secrets with old's value of the same setting (the
// stored webhook, when exists).
//
// Errors: Invalid naming the setting when nothing is stored to keep.
func keepMasked(d *oas.OutgoingWebhookInputData, old oas.OutgoingWebhookInputData, exists bool, id string) error {
	stored := map[string]string{}
	if exists {
		secrets(&old, func(path string, v *string) { stored[path] = *v })
	}
	var err error
	secrets(d, func(path string, v *string) {
		if *v != Mask || err != nil {
			return
		}
		keep, ok := stored[path]
		if !ok {
			err = apierror.Invalidf("%s: %s stands for a stored value, and outgoing webhook %q has none; give the value", path, Mask, id)
			return
		}
		*v = keep
	})
	return err
}

// cloneData is d with its own maps (secrets writes through them).
func cloneData(d oas.OutgoingWebhookInputData) oas.OutgoingWebhookInputData {
	if g, ok := d.GenericWebhook.Get(); ok {
		if h, ok := g.Headers.Get(); ok {
			d.GenericWebhook.Value.Headers = oas.NewOptGenericWebhookConfigHeaders(maps.Clone(h))
		}
	}
	return d
}
