package access

import (
	"context"
	"fmt"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// defaultExpression is a scope's default expression when a create leaves it out: everything not
// filtered is visible (the public clients' example value).
const defaultExpression = "<v1>true"

func (s scope) wire(teamID int64) oas.TeamScope {
	out := oas.TeamScope{
		ID: oas.NewOptString(s.ID), TeamId: oas.NewOptInt32(int32(teamID)), DisplayName: oas.NewOptString(s.DisplayName),
		DefaultExpression: oas.NewOptString(s.DefaultExpression), Filters: make([]oas.TeamScopeFilter, 0, len(s.Filters)),
	}
	if s.Description != "" {
		out.Description = oas.NewOptString(s.Description)
	}
	for _, f := range s.Filters {
		out.Filters = append(out.Filters, oas.TeamScopeFilter{
			EntityType: oas.NewOptTeamScopeEntityType(oas.TeamScopeEntityType(f.EntityType)),
			Expression: oas.NewOptString(f.Expression),
		})
	}
	return out
}

// checkScope checks a scope's fields and returns it (without its id).
//
// Errors: Invalid naming the field: displayName (1–255 characters), description (at most 1000),
// defaultExpression and filters[i].expression (see checkExpression), filters (at most 50) and
// filters[i].entityType (LOGS or SPANS).
func checkScope(displayName, description, defaultExpr string, filters []oas.TeamScopeFilter) (scope, error) {
	if err := checkLength("displayName", displayName, MaxNameLength, true); err != nil {
		return scope{}, err
	}
	if err := checkLength("description", description, MaxDescriptionLength, false); err != nil {
		return scope{}, err
	}
	if err := checkExpression("defaultExpression", defaultExpr); err != nil {
		return scope{}, err
	}
	if len(filters) > MaxScopeFilters {
		return scope{}, apierror.Invalidf("filters: at most %d filters (got %d)", MaxScopeFilters, len(filters))
	}
	s := scope{DisplayName: displayName, Description: description, DefaultExpression: defaultExpr, Filters: []scopeFilter{}}
	for i, f := range filters {
		t, ok := f.EntityType.Get()
		if !ok || t == oas.TeamScopeEntityTypeENTITYTYPEUNSPECIFIED {
			return scope{}, apierror.Invalidf("filters[%d].entityType: must be ENTITY_TYPE_LOGS or ENTITY_TYPE_SPANS", i)
		}
		e := f.Expression.Or("")
		if err := checkExpression(fmt.Sprintf("filters[%d].expression", i), e); err != nil {
			return scope{}, err
		}
		s.Filters = append(s.Filters, scopeFilter{EntityType: string(t), Expression: e})
	}
	return s, nil
}

// CreateScope stores a new scope of the caller's team under a new id (a UUID).
//
// Errors: Invalid (checkScope); Conflict when the team has a scope of that display name.
func (h *AccessHandler) CreateScope(ctx context.Context, req *oas.CreateScopeRequest) (*oas.TeamScopeResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := checkScope(req.DisplayName, req.Description.Or(""), req.DefaultExpression.Or(defaultExpression), req.Filters)
	if err != nil {
		return nil, err
	}
	err = h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		s.ID = tx.NewID()
		return putScope(ctx, tx, caller.TeamID, s, false)
	})
	if err != nil {
		return nil, conflictAs(err, "displayName: the team has a scope named %q already", s.DisplayName)
	}
	return &oas.TeamScopeResponse{Scope: s.wire(caller.TeamID)}, nil
}

// UpdateScope replaces one scope of the caller's team.
//
// Errors: NotFound when the team has no such scope; Invalid (checkScope); Conflict for a display
// name another scope has.
func (h *AccessHandler) UpdateScope(ctx context.Context, req *oas.UpdateScopeRequest) (*oas.TeamScopeResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := checkScope(req.DisplayName, req.Description.Or(""), req.DefaultExpression, req.Filters)
	if err != nil {
		return nil, err
	}
	s.ID = req.ID
	err = h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		tx.AuditResource(s.ID)
		return putScope(ctx, tx, caller.TeamID, s, true)
	})
	if err != nil {
		err = notFoundAs(err, "id: the team has no scope %q", s.ID)
		return nil, conflictAs(err, "displayName: the team has a scope named %q already", s.DisplayName)
	}
	return &oas.TeamScopeResponse{Scope: s.wire(caller.TeamID)}, nil
}

// GetTeamScopesByIds answers the caller's team's scopes among ids, in the order given, without
// repeats; ids the team does not have are left out.
//
// Errors: Invalid when ids is empty.
func (h *AccessHandler) GetTeamScopesByIds(ctx context.Context, params oas.GetTeamScopesByIdsParams) (*oas.TeamScopeList, error) {
	caller := auth.PrincipalFrom(ctx)
	if len(params.Ids) == 0 {
		return nil, apierror.Invalidf("ids: name at least one scope id")
	}
	out := &oas.TeamScopeList{Scopes: []oas.TeamScope{}}
	seen := map[string]bool{}
	for _, id := range params.Ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		s, err := getScope(ctx, h.db.Read(), caller.TeamID, id)
		if err == db.ErrNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out.Scopes = append(out.Scopes, s.wire(caller.TeamID))
	}
	return out, nil
}

// ListTeamScopes answers every scope of the caller's team, oldest first.
func (h *AccessHandler) ListTeamScopes(ctx context.Context) (*oas.TeamScopeList, error) {
	caller := auth.PrincipalFrom(ctx)
	all, err := listScopes(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := &oas.TeamScopeList{Scopes: make([]oas.TeamScope, 0, len(all))}
	for _, s := range all {
		out.Scopes = append(out.Scopes, s.wire(caller.TeamID))
	}
	return out, nil
}

// DeleteScope deletes one scope of the caller's team.
//
// Errors: NotFound when the team has no such scope; Conflict when a group holds it (clearing the
// group's scope silently would widen what its members see).
func (h *AccessHandler) DeleteScope(ctx context.Context, params oas.DeleteScopeParams) error {
	caller := auth.PrincipalFrom(ctx)
	return h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		if err := scopeUnused(ctx, tx, caller.TeamID, params.ID); err != nil {
			return err
		}
		return notFoundAs(deleteScope(ctx, tx, caller.TeamID, params.ID), "id: the team has no scope %q", params.ID)
	})
}

// scopeUnused refuses a scope that groups hold.
//
// Errors: Conflict naming the groups.
func scopeUnused(ctx context.Context, q db.Querier, teamID int64, id string) error {
	held, err := groupsWhere(ctx, q, teamID, "scope_id", id)
	if err != nil {
		return err
	}
	if len(held) > 0 {
		return apierror.Conflictf("id: scope %q is held by %s; clear their scope first", id, strings.Join(held, ", "))
	}
	return nil
}
