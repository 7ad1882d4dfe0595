package dashboards

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the custom dashboards' part of a team's configuration document
// (teamconfig.Area): each dashboard as {dashboard, accessPolicy, isLocked}, the body of
// CreateDashboard and ReplaceDashboard without requestId, checked by checked (checkDashboard)
// and stored by createDashboard and replaceCheckedDashboard (the team's limit, unique slugs), as
// the HTTP operations do. The author, updater and locker are the applying key. Which dashboard is
// the team's default is DefaultConfiguration's, the pins PinsConfiguration's.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "dashboards" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "team-dashboards:Read", "team-dashboards:Update"
}

// configured is a dashboard in the document's form.
func configured(d stored) ([]byte, error) {
	w := oas.DashboardWrite{RequestId: "-", Dashboard: d.doc, IsLocked: oas.NewOptBool(d.locked)}
	if d.accessPolicy.Valid {
		w.AccessPolicy = oas.NewOptString(d.accessPolicy.String)
	}
	doc, err := w.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return teamconfig.WithoutFields(doc, "requestId")
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var ids []string
	err := eachDashboard(ctx, q, teamID, "", func(d *stored) error {
		ids = append(ids, d.id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(ids))
	for _, id := range ids {
		d, err := getDashboard(ctx, q, teamID, id)
		if err != nil {
			return nil, err
		}
		doc, err := configured(d)
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: d.id, Name: d.name, Doc: doc})
	}
	return out, nil
}

// prepared is a dashboard of a document, checked.
type prepared struct {
	d      stored
	policy oas.OptString
}

// Prepare implements teamconfig.Area: the body of CreateDashboard without requestId, checked as
// the operation checks it; dashboard.id, when given, is the dashboard's id (IDLength letters and
// digits), a fresh one otherwise.
func (Configuration) Prepare(ctx context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	filled, err := teamconfig.WithFields(doc, map[string]any{"requestId": "configuration"})
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var req oas.DashboardWrite
	if err := teamconfig.DecodeBody(oas.CreateDashboardOperation, filled, &req); err != nil {
		return teamconfig.Resource{}, err
	}
	d, checkedDoc, err := checked(&req)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if given, ok := checkedDoc["id"]; ok {
		id, isText := given.(string)
		if !isText || utf8.RuneCountInString(id) != IDLength {
			shown, _ := json.Marshal(given)
			return teamconfig.Resource{}, apierror.Invalidf("dashboard.id: must be a text of %d letters and digits (got %s)", IDLength, shown)
		}
		for _, c := range id {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return teamconfig.Resource{}, apierror.Invalidf("dashboard.id: must be a text of %d letters and digits (got %q)", IDLength, id)
			}
		}
		d.id = id
	} else if d.id, err = newID(); err != nil {
		return teamconfig.Resource{}, err
	}
	d.doc = withID(d.doc, d.id)
	caller := auth.PrincipalFrom(ctx)
	d.author = keyOf(caller.KeyID, caller.KeyName)
	d.updater = d.author
	if d.locked {
		d.locker = d.author
	}
	if p, ok := req.AccessPolicy.Get(); ok {
		d.accessPolicy.String, d.accessPolicy.Valid = p, true
	}
	encoded, err := configured(d)
	return teamconfig.Resource{ID: d.id, Name: d.name, Doc: encoded, Value: prepared{d: d, policy: req.AccessPolicy}}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(prepared)
	if exists {
		return replaceCheckedDashboard(ctx, tx, teamID, p.d, p.policy)
	}
	return createDashboard(ctx, tx, teamID, p.d, p.policy)
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteDashboard(ctx, tx, teamID, id, "")
}

// DefaultConfiguration is the team's default dashboard's part of a team's configuration document
// (teamconfig.Area, teamconfig.Single): {dashboardId} naming the default, or {} when the team
// has none. It is set as ReplaceDefaultDashboard sets it (the dashboard must be the team's) and
// {} takes the default away, which no HTTP operation does (deleting the dashboard does).
type DefaultConfiguration struct{}

// Key implements teamconfig.Area.
func (DefaultConfiguration) Key() string { return "defaultDashboard" }

// Single implements teamconfig.Single.
func (DefaultConfiguration) Single() {}

// Permissions implements teamconfig.Area: those of the catalog and of ReplaceDefaultDashboard.
func (DefaultConfiguration) Permissions() (read, write string) {
	return "team-dashboards:Read", "team-dashboards:Update"
}

// defaultID names the team's one default dashboard setting in a plan.
const defaultID = "default"

// dashboardRef is the document's form of a default dashboard or a pin: the dashboard's id, ""
// for no default.
type dashboardRef struct {
	DashboardID string `json:"dashboardId,omitempty"`
}

// Export implements teamconfig.Area: always one resource, {} when the team has no default.
func (DefaultConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var ref dashboardRef
	err := eachDashboard(ctx, q, teamID, "", func(d *stored) error {
		if d.isDefault {
			ref.DashboardID = d.id
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(ref)
	return []teamconfig.Resource{{ID: defaultID, Doc: doc, Value: ref}}, err
}

// prepareRef decodes {dashboardId}; required says whether dashboardId may be left out.
//
// Errors: Invalid naming dashboardId.
func prepareRef(doc []byte, required bool) (dashboardRef, error) {
	var in struct {
		DashboardID *json.RawMessage `json:"dashboardId"`
	}
	var ref dashboardRef
	if err := json.Unmarshal(doc, &in); err != nil {
		return ref, apierror.Invalidf("dashboardId: %v", err)
	}
	if in.DashboardID == nil || string(*in.DashboardID) == "null" {
		if required {
			return ref, apierror.Invalidf("dashboardId: required; the id of one of the team's dashboards")
		}
		return ref, nil
	}
	if err := json.Unmarshal(*in.DashboardID, &ref.DashboardID); err != nil || ref.DashboardID == "" {
		return ref, apierror.Invalidf("dashboardId: must be a dashboard's id, a non-empty string (got %s)", *in.DashboardID)
	}
	return ref, nil
}

// Prepare implements teamconfig.Area.
func (DefaultConfiguration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	ref, err := prepareRef(doc, false)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	encoded, err := json.Marshal(ref)
	return teamconfig.Resource{ID: defaultID, Doc: encoded, Value: ref}, err
}

// referredDashboard locks the team's dashboard id, as the operations on one dashboard do.
//
// Errors: Invalid naming dashboardId when the team has no such dashboard.
func referredDashboard(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	err := lockDashboard(ctx, tx, teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return apierror.Invalidf("dashboardId: no dashboard %q in the team or the document", id)
	}
	return err
}

// Put implements teamconfig.Area, as ReplaceDefaultDashboard; {} takes the default away.
func (DefaultConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	ref := r.Value.(dashboardRef)
	if ref.DashboardID == "" {
		return clearDefault(ctx, tx, teamID)
	}
	if err := referredDashboard(ctx, tx, teamID, ref.DashboardID); err != nil {
		return err
	}
	return setDefault(ctx, tx, teamID, ref.DashboardID)
}

// Recheck implements teamconfig.Referrer: the default is still the team's (prune may have
// deleted it).
func (DefaultConfiguration) Recheck(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource) error {
	if ref := r.Value.(dashboardRef); ref.DashboardID != "" {
		return referredDashboard(ctx, tx, teamID, ref.DashboardID)
	}
	return nil
}

// Delete implements teamconfig.Area; the setting is never deleted ({} takes the default away).
func (DefaultConfiguration) Delete(context.Context, *db.Tx, int64, string) error { return nil }

// PinsConfiguration is the dashboards pinned by the applying key's part of a team's
// configuration document (teamconfig.Area): one {dashboardId} per pin. Pins belong to an API
// key, and a document moves between teams whose keys differ, so export answers the exporting
// key's pins and apply pins for the applying key, as PinDashboard and UnpinDashboard do for the
// calling key; prune unpins what the document lacks.
type PinsConfiguration struct{}

// Key implements teamconfig.Area.
func (PinsConfiguration) Key() string { return "dashboardPins" }

// Permissions implements teamconfig.Area: PinDashboard's and UnpinDashboard's.
func (PinsConfiguration) Permissions() (read, write string) {
	return "team-dashboards:Read", "team-dashboards:Read"
}

// callerKey is the id of the key that exports or applies.
func callerKey(ctx context.Context) (string, error) {
	caller := auth.PrincipalFrom(ctx)
	if caller == nil || caller.KeyID == "" {
		return "", errors.New("dashboard pins: no calling key")
	}
	return caller.KeyID, nil
}

// Export implements teamconfig.Area: the calling key's pins.
func (PinsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	key, err := callerKey(ctx)
	if err != nil {
		return nil, err
	}
	var out []teamconfig.Resource
	err = eachDashboard(ctx, q, teamID, key, func(d *stored) error {
		if !d.isPinned {
			return nil
		}
		ref := dashboardRef{DashboardID: d.id}
		doc, err := json.Marshal(ref)
		out = append(out, teamconfig.Resource{ID: d.id, Name: d.name, Doc: doc, Value: ref})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area.
func (PinsConfiguration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	ref, err := prepareRef(doc, true)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	encoded, err := json.Marshal(ref)
	return teamconfig.Resource{ID: ref.DashboardID, Doc: encoded, Value: ref}, err
}

// Put implements teamconfig.Area, as PinDashboard.
func (PinsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	key, err := callerKey(ctx)
	if err != nil {
		return err
	}
	if err := referredDashboard(ctx, tx, teamID, r.ID); err != nil {
		return err
	}
	return setPinned(ctx, tx, teamID, key, r.ID, true)
}

// Recheck implements teamconfig.Referrer: the pinned dashboard is still the team's.
func (PinsConfiguration) Recheck(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource) error {
	return referredDashboard(ctx, tx, teamID, r.ID)
}

// Delete implements teamconfig.Area, as UnpinDashboard.
func (PinsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	key, err := callerKey(ctx)
	if err != nil {
		return err
	}
	return setPinned(ctx, tx, teamID, key, id, false)
}
