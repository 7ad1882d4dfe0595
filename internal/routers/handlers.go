// Package routers serves global notification routers: which notifications (of entities whose
// labels match the router's entityLabels, and whose rule condition holds) go to which targets, a
// connector of the team and optionally the preset they are rendered with; fallback targets take
// what no rule matches. Targets must name existing connectors and presets of matching type, and a
// connector or preset a router uses cannot be deleted (ConnectorUsers, PresetUsers).
package routers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/presets"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// Release makes, in tx, what names the team's router stop naming it, before the router is
// deleted: a router that something names is still deleted (the public document answers its
// delete with 200 only). The alert-definition area provides one (its definitions then route by
// their labels); it runs after the team's connector and preset locks, which the definitions'
// writers also take. An error refuses the delete.
type Release func(ctx context.Context, tx *db.Tx, teamID int64, routerID string) error

// RouterHandler implements the global-router operations of oas.Handler.
type RouterHandler struct {
	db       *db.DB
	releases []Release
}

// NewHandler returns the global-router operations; releases run before a router is deleted.
func NewHandler(database *db.DB, releases ...Release) *RouterHandler {
	return &RouterHandler{db: database, releases: releases}
}

// lock takes the team's connector and preset locks, in that order (every writer that takes both
// does), so the targets checked stay as checked until commit.
func lock(ctx context.Context, tx *db.Tx, teamID int64) error {
	if err := connectors.LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return presets.LockTeam(ctx, tx, teamID)
}

// checkTargets requires every target's connector to be one of the team's, able to carry the
// target's entity type, and its preset, when named, to be one of the team's presets (system or
// custom) of the connector's type. Targets without an id get one.
//
// Errors: Invalid naming the target's path and the rule.
func checkTargets(ctx context.Context, tx *db.Tx, teamID int64, r *oas.GlobalRouter) error {
	for _, t := range targetsOf(r) {
		cid := t.t.ConnectorId.Or("")
		c, err := connectors.Load(ctx, tx, teamID, cid)
		if errors.Is(err, db.ErrNotFound) {
			return apierror.Invalidf("%s.connectorId: no connector %q; a target names one of the team's connectors", t.path, cid)
		}
		if err != nil {
			return err
		}
		if ty, _ := connectortypes.Lookup(c.Type); !ty.Supports(t.entity) {
			return apierror.Invalidf("%s.connectorId: connector %q is of type %s, which does not carry %s notifications", t.path, cid, c.Type, t.entity)
		}
		if pid, ok := t.t.PresetId.Get(); ok {
			p, err := presets.Load(ctx, tx, teamID, pid)
			if errors.Is(err, db.ErrNotFound) {
				return apierror.Invalidf("%s.presetId: no preset %q; it must name one of the team's presets", t.path, pid)
			}
			if err != nil {
				return err
			}
			if pt := p.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED); pt != c.Type {
				return apierror.Invalidf("%s.presetId: preset %q is for %s connectors, but connector %q is of type %s", t.path, pid, pt, cid, c.Type)
			}
		}
		if !t.t.ID.Set {
			t.t.ID = oas.NewOptString(tx.NewID())
		}
	}
	return nil
}

// CreateGlobalRouter stores a new router under the id the client chose (router.id, checked as
// connectors.CheckID checks a connector's) or, when it chose none, a fresh one.
//
// Errors: Invalid (the id, see checkRouter, checkTargets); Conflict when the team has a router of
// the chosen id; LimitExceeded when the team holds MaxRouters.
func (h *RouterHandler) CreateGlobalRouter(ctx context.Context, req *oas.GlobalRouterRequest) (*oas.GlobalRouterResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id := req.Router.ID.Or("")
	if id != "" {
		if err := connectors.CheckID(id); err != nil {
			return nil, apierror.Invalidf("router.id: %v", err)
		}
	}
	r, err := checkRouter(req.Router)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if id == "" {
			id = tx.NewID()
		}
		r, err = createRouter(ctx, tx, caller.TeamID, id, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.GlobalRouterResponse{Router: r}, nil
}

// createRouter stores r, checked by checkRouter, as the team's router id, after checkTargets, and
// returns it as stored.
//
// Errors: those of checkTargets; Conflict when the team has a router id already; LimitExceeded
// when the team holds MaxRouters.
func createRouter(ctx context.Context, tx *db.Tx, teamID int64, id string, r oas.GlobalRouter) (oas.GlobalRouter, error) {
	if err := lock(ctx, tx, teamID); err != nil {
		return r, err
	}
	if _, err := getRouter(ctx, tx, teamID, id); err == nil {
		return r, apierror.Conflictf("router.id: the team has a router %q already; choose another id or replace that one", id)
	} else if !errors.Is(err, db.ErrNotFound) {
		return r, err
	}
	n, err := countRouters(ctx, tx, teamID)
	if err != nil {
		return r, err
	}
	if n >= MaxRouters {
		return r, apierror.LimitExceededf("router: the team holds %d routers, the most it may; delete one first", n)
	}
	if err := checkTargets(ctx, tx, teamID, &r); err != nil {
		return r, err
	}
	r.ID = oas.NewOptString(id)
	r.CreateTime = oas.NewOptDateTime(tx.Now)
	r.UpdateTime = oas.NewOptDateTime(tx.Now)
	return r, insertRouter(ctx, tx, teamID, r)
}

// ReplaceGlobalRouter replaces the router router.id, keeping its createTime.
//
// Errors: Invalid when router.id is missing, and see checkRouter, checkTargets; NotFound when the
// team has no such router.
func (h *RouterHandler) ReplaceGlobalRouter(ctx context.Context, req *oas.GlobalRouterRequest) (*oas.GlobalRouterResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id, ok := req.Router.ID.Get()
	if !ok || id == "" {
		return nil, apierror.Invalidf("router.id: required; it names the router to replace")
	}
	r, err := checkRouter(req.Router)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		r, err = replaceRouter(ctx, tx, caller.TeamID, r)
		return err
	})
	if err != nil {
		return nil, notFoundAs(err, "router.id", id)
	}
	return &oas.GlobalRouterResponse{Router: r}, nil
}

// replaceRouter replaces the team's router r.id with r, checked by checkRouter, after
// checkTargets, keeping its createTime, and returns it as stored.
//
// Errors: those of checkTargets; db.ErrNotFound when the team has no such router.
func replaceRouter(ctx context.Context, tx *db.Tx, teamID int64, r oas.GlobalRouter) (oas.GlobalRouter, error) {
	if err := lock(ctx, tx, teamID); err != nil {
		return r, err
	}
	old, err := getRouter(ctx, tx, teamID, r.ID.Or(""))
	if err != nil {
		return r, err
	}
	if err := checkTargets(ctx, tx, teamID, &r); err != nil {
		return r, err
	}
	r.CreateTime = old.CreateTime
	r.UpdateTime = oas.NewOptDateTime(tx.Now)
	return r, updateRouter(ctx, tx, teamID, r)
}

// DeleteGlobalRouter deletes a router, also one that alert definitions name: they stop naming
// it and route by their labels (see Release).
//
// Errors: NotFound when the team has no such router.
func (h *RouterHandler) DeleteGlobalRouter(ctx context.Context, params oas.DeleteGlobalRouterParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := string(params.ID)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return removeRouter(ctx, tx, caller.TeamID, id, h.releases)
	})
	return notFoundAs(err, "id", id)
}

// removeRouter runs releases, then deletes the team's router id, in tx.
//
// Errors: db.ErrNotFound when the team has no such router; a release's.
func removeRouter(ctx context.Context, tx *db.Tx, teamID int64, id string, releases []Release) error {
	if len(releases) > 0 {
		if err := lock(ctx, tx, teamID); err != nil {
			return err
		}
	}
	if _, err := getRouter(ctx, tx, teamID, id); err != nil {
		return err
	}
	for _, release := range releases {
		if err := release(ctx, tx, teamID, id); err != nil {
			return err
		}
	}
	return deleteRouter(ctx, tx, teamID, id)
}

// GetGlobalRouter answers one router.
//
// Errors: NotFound when the team has no such router.
func (h *RouterHandler) GetGlobalRouter(ctx context.Context, params oas.GetGlobalRouterParams) (*oas.GlobalRouterResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	r, err := getRouter(ctx, h.db.Read(), caller.TeamID, string(params.ID))
	if err != nil {
		return nil, notFoundAs(err, "id", string(params.ID))
	}
	return &oas.GlobalRouterResponse{Router: r}, nil
}

// BatchGetGlobalRouters answers the routers found, by id, and the ids that name none, in request
// order, once each.
func (h *RouterHandler) BatchGetGlobalRouters(ctx context.Context, params oas.BatchGetGlobalRoutersParams) (*oas.GlobalRouterBatch, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.GlobalRouterBatch{Routers: oas.GlobalRouterBatchRouters{}, NotFoundIds: []string{}}
	seen := map[string]bool{}
	for _, id := range params.GlobalRouterIds {
		if seen[id] {
			continue
		}
		seen[id] = true
		r, err := getRouter(ctx, h.db.Read(), caller.TeamID, id)
		switch {
		case errors.Is(err, db.ErrNotFound):
			out.NotFoundIds = append(out.NotFoundIds, id)
		case err != nil:
			return nil, err
		default:
			out.Routers[id] = r
		}
	}
	return out, nil
}

// sourceLabelsParameter is the list filter on routers' entityLabels.
const sourceLabelsParameter = "source_entity_labels"

var sourceLabelsSchema = &queryobject.Schema{Kind: queryobject.Map, Elem: &queryobject.Schema{
	Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"values": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}},
	},
}}

// ListGlobalRouters answers the team's routers, oldest first, filtered by entity type and by
// source_entity_labels.
//
// Errors: Invalid for a malformed source_entity_labels, or a label with no value or more than 100.
func (h *RouterHandler) ListGlobalRouters(ctx context.Context, params oas.ListGlobalRoutersParams) (*oas.GlobalRouterList, error) {
	caller := auth.PrincipalFrom(ctx)
	doc, err := queryobject.Decode(queryobject.Values(ctx), sourceLabelsParameter, sourceLabelsSchema)
	if err != nil {
		return nil, err
	}
	labels := map[string][]string{}
	if doc != nil {
		var m map[string]struct{ Values []string }
		if err := json.Unmarshal(doc, &m); err != nil {
			return nil, apierror.Invalidf("%s: must map label names to {values: [strings]}", sourceLabelsParameter)
		}
		for k, v := range m {
			if len(v.Values) < 1 || len(v.Values) > 100 {
				return nil, apierror.Invalidf("%s[%s].values: must hold 1–100 values, not %d", sourceLabelsParameter, k, len(v.Values))
			}
			labels[k] = v.Values
		}
	}
	//lint:ignore SA1019 the deprecated filter is still served for older clients
	e := params.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	out := &oas.GlobalRouterList{Routers: []oas.GlobalRouter{}}
	err = eachRouter(ctx, h.db.Read(), caller.TeamID, func(r *oas.GlobalRouter) error {
		if passes(*r, e, labels) {
			out.Routers = append(out.Routers, *r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// matcherParameter is the matcher ValidateEntityLabelMatcher checks.
const matcherParameter = "entity_label_matcher"

var matcherSchema = &queryobject.Schema{Kind: queryobject.Map, Elem: &queryobject.Schema{Kind: queryobject.String}}

// ValidateEntityLabelMatcher checks entity_label_matcher with CheckMatcher, the rules of a
// router's entityLabels, and answers success or a failure naming the label and the rule.
//
// Errors: Invalid only when the query cannot be read as a map of strings.
func (h *RouterHandler) ValidateEntityLabelMatcher(ctx context.Context) (*oas.EntityLabelMatcherCheck, error) {
	doc, err := queryobject.Decode(queryobject.Values(ctx), matcherParameter, matcherSchema)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if doc != nil {
		if err := json.Unmarshal(doc, &m); err != nil {
			return nil, apierror.Invalidf("%s: must map label names to strings (%s[environment]=production)", matcherParameter, matcherParameter)
		}
	}
	if err := CheckMatcher(m); err != nil {
		return &oas.EntityLabelMatcherCheck{Result: oas.EntityLabelMatcherResult{
			Failure: oas.NewOptEntityLabelMatcherFailure(oas.EntityLabelMatcherFailure{Message: fmt.Sprintf("%s: %v", matcherParameter, err)}),
		}}, nil
	}
	return &oas.EntityLabelMatcherCheck{Result: oas.EntityLabelMatcherResult{Success: &oas.EmptyObject{}}}, nil
}

func notFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no router %q", field, id)
	}
	return err
}
