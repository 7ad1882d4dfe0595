package dashboards

import (
	"context"
	"encoding/json"
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
// the team's default, and the keys' pins, are not part of it.
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
