package routers

import (
	"bytes"
	"context"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the global routers' part of a team's configuration document
// (teamconfig.Area): each router as GetGlobalRouter answers it without createTime and updateTime,
// checked by checkRouter and checkTargets and stored by createRouter, replaceRouter and
// removeRouter, as the HTTP operations do. A target's connector and preset must be the team's or
// the document's (connectors and presets come before routers in a document, and prune deletes
// routers before them); deleting a router runs the releases first, as the HTTP delete does. A target without an id gets a fresh
// one when its router is created or replaced, and a router whose targets leave ids out is
// unchanged when it is otherwise the stored one.
type Configuration struct {
	// Releases run before a router is deleted (see Release).
	Releases []Release
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "routers" }

// Permissions implements teamconfig.Area: those of GetGlobalRouter and ReplaceGlobalRouter.
func (Configuration) Permissions() (read, write string) {
	return "notification-center-routers:ReadConfig", "notification-center-routers:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachRouter(ctx, q, teamID, func(r *oas.GlobalRouter) error {
		exported := *r
		exported.CreateTime.Reset()
		exported.UpdateTime.Reset()
		doc, err := exported.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: r.ID.Or(""), Name: r.Name.Or(""), Doc: doc, Value: exported})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the router of ReplaceGlobalRouter's body (one without an id
// gets a fresh one; an id is a notification-center id, as the router's path takes), checked by
// checkRouter. Its targets' connectors and presets are checked by Put.
//
// Errors: Invalid naming the field under router and the rule.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.GlobalRouterRequest
	if err := teamconfig.DecodeBodyOf(oas.ReplaceGlobalRouterOperation, "router", doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := connectors.NotificationCenterIDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	r, err := checkRouter(in.Router)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	r.ID = oas.NewOptString(id)
	encoded, err := r.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: r.Name.Or(""), Doc: encoded, Value: r}, err
}

// Unchanged implements teamconfig.Comparer: want is current but for the ids of targets it leaves
// out (with the same targets in the same places).
func (Configuration) Unchanged(current, want teamconfig.Resource) bool {
	cur, ok1 := current.Value.(oas.GlobalRouter)
	w, ok2 := want.Value.(oas.GlobalRouter)
	if !ok1 || !ok2 {
		return false
	}
	cur = cloneTargets(cur)
	have, wanted := targetsOf(&cur), targetsOf(&w)
	if len(have) != len(wanted) {
		return false
	}
	for i := range wanted {
		if have[i].path != wanted[i].path {
			return false
		}
		if !wanted[i].t.ID.IsSet() {
			have[i].t.ID.Reset()
		}
	}
	a, err1 := cur.MarshalJSON()
	b, err2 := w.MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// cloneTargets returns r with its own copies of the lists that hold targets, so that they can be
// changed without changing r's.
func cloneTargets(r oas.GlobalRouter) oas.GlobalRouter {
	r.Rules = slices.Clone(r.Rules)
	for i := range r.Rules {
		r.Rules[i].Targets = slices.Clone(r.Rules[i].Targets)
	}
	//lint:ignore SA1019 the deprecated fallback is part of a stored router
	r.Fallback = slices.Clone(r.Fallback)
	r.FallbackTargets = slices.Clone(r.FallbackTargets)
	return r
}

// Put implements teamconfig.Area: replaceRouter or createRouter, which check the targets'
// connectors and presets.
//
// Errors: Invalid naming a target's connectorId or presetId that names nothing of the team (nor
// of the document, whose earlier areas are stored by then); LimitExceeded past MaxRouters.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	router := cloneTargets(r.Value.(oas.GlobalRouter))
	var err error
	if exists {
		_, err = replaceRouter(ctx, tx, teamID, router)
	} else {
		_, err = createRouter(ctx, tx, teamID, r.ID, router)
	}
	return err
}

// Delete implements teamconfig.Area.
//
// Errors: a release's.
func (c Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return removeRouter(ctx, tx, teamID, id, c.Releases)
}
