// Package parsingrules serves log parsing rule groups: create, E7 replace, list, get, delete and
// bulk delete. A group's matchers choose the logs it applies to; its subgroups and their rules run
// in order. Regular expressions are Go's RE2 dialect (package regexp), compiled on every write.
package parsingrules

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// RuleGroupHandler implements the parsing-rule-group operations of oas.Handler.
type RuleGroupHandler struct {
	db *db.DB
}

// NewHandler returns the parsing-rule-group operations.
func NewHandler(database *db.DB) *RuleGroupHandler {
	return &RuleGroupHandler{db: database}
}

// CreateParsingRuleGroup stores a new group under a fresh id, with fresh ids on its subgroups and
// rules; an omitted order places it after the team's other groups.
//
// Errors: Invalid (see checkGroup); LimitExceeded when the team would hold more than MaxGroups
// groups or MaxRules rules.
func (h *RuleGroupHandler) CreateParsingRuleGroup(ctx context.Context, req *oas.ParsingRuleGroup) (*oas.ParsingRuleGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	g, err := checkGroup(*req, caller.TeamID)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		g, err = createGroup(ctx, tx, caller.TeamID, tx.NewID(), g)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.ParsingRuleGroupResponse{RuleGroup: g}, nil
}

// createGroup stores the checked group g under id in tx, with fresh ids on its subgroups and
// rules, after the team's other groups when it has no order, and returns it as stored.
//
// Errors: LimitExceeded when the team would hold more than MaxGroups groups or MaxRules rules.
func createGroup(ctx context.Context, tx *db.Tx, teamID int64, id string, g oas.ParsingRuleGroup) (oas.ParsingRuleGroup, error) {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return g, err
	}
	u, err := teamUsage(ctx, tx, teamID, "")
	if err != nil {
		return g, err
	}
	if err := checkRoom(u, g, nil); err != nil {
		return g, err
	}
	if !g.Order.IsSet() {
		next, err := nextOrder(ctx, tx, teamID)
		if err != nil {
			return g, err
		}
		g.Order = oas.NewOptInt64(next)
	}
	assignIDs(&g, id, tx.NewID)
	return g, insertGroup(ctx, tx, teamID, g)
}

// UpdateParsingRuleGroup replaces the group group_id (E7); its subgroups and rules get fresh ids,
// and an omitted order keeps the group's current one.
//
// Errors: Invalid (see checkGroup); NotFound when the team has no such group; LimitExceeded when
// the team would hold more than MaxRules rules.
func (h *RuleGroupHandler) UpdateParsingRuleGroup(ctx context.Context, req *oas.ParsingRuleGroup, params oas.UpdateParsingRuleGroupParams) (*oas.ParsingRuleGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	g, err := checkGroup(*req, caller.TeamID)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		g, err = replaceGroup(ctx, tx, caller.TeamID, params.GroupID, g)
		return err
	})
	if err != nil {
		return nil, notFoundAs(err, params.GroupID)
	}
	return &oas.ParsingRuleGroupResponse{RuleGroup: g}, nil
}

// replaceGroup replaces the team's group id with the checked group g in tx, with fresh ids on
// its subgroups and rules, keeping the current order when g has none, and returns it as stored.
//
// Errors: db.ErrNotFound when the team has no such group; LimitExceeded when the team would hold
// more than MaxRules rules.
func replaceGroup(ctx context.Context, tx *db.Tx, teamID int64, id string, g oas.ParsingRuleGroup) (oas.ParsingRuleGroup, error) {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return g, err
	}
	old, err := getGroup(ctx, tx, teamID, id)
	if err != nil {
		return g, err
	}
	u, err := teamUsage(ctx, tx, teamID, id)
	if err != nil {
		return g, err
	}
	if err := checkRoom(u, g, &old); err != nil {
		return g, err
	}
	if !g.Order.IsSet() {
		g.Order = old.Order
	}
	assignIDs(&g, id, tx.NewID)
	return g, updateGroup(ctx, tx, teamID, g)
}

// GetParsingRuleGroup returns one group.
//
// Errors: NotFound when the team has no such group.
func (h *RuleGroupHandler) GetParsingRuleGroup(ctx context.Context, params oas.GetParsingRuleGroupParams) (*oas.ParsingRuleGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	g, err := getGroup(ctx, h.db.Read(), caller.TeamID, params.GroupID)
	if err != nil {
		return nil, notFoundAs(err, params.GroupID)
	}
	return &oas.ParsingRuleGroupResponse{RuleGroup: g}, nil
}

// ListParsingRuleGroups returns the team's groups by order, then oldest first.
func (h *RuleGroupHandler) ListParsingRuleGroups(ctx context.Context) (*oas.ParsingRuleGroupList, error) {
	caller := auth.PrincipalFrom(ctx)
	groups := []oas.ParsingRuleGroup{}
	err := eachGroup(ctx, h.db.Read(), caller.TeamID, func(g *oas.ParsingRuleGroup) error {
		groups = append(groups, *g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.ParsingRuleGroupList{RuleGroups: groups}, nil
}

// StreamParsingRuleGroups writes the answer of ListParsingRuleGroups, the same bytes, while
// reading the groups: the server serves the list with it (see package streaming).
func (h *RuleGroupHandler) StreamParsingRuleGroups(ctx context.Context, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	return out.Array("ruleGroups", func() error {
		return eachGroup(ctx, h.db.Read(), caller.TeamID, func(g *oas.ParsingRuleGroup) error { return out.Item(g) })
	})
}

// DeleteParsingRuleGroup deletes one group.
//
// Errors: NotFound when the team has no such group.
func (h *RuleGroupHandler) DeleteParsingRuleGroup(ctx context.Context, params oas.DeleteParsingRuleGroupParams) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		return deleteGroup(ctx, tx, caller.TeamID, params.GroupID)
	})
	return notFoundAs(err, params.GroupID)
}

// BulkDeleteParsingRuleGroups deletes every named group, all or none.
//
// Errors: NotFound naming the first id that names no group of the team; nothing is deleted then.
func (h *RuleGroupHandler) BulkDeleteParsingRuleGroups(ctx context.Context, params oas.BulkDeleteParsingRuleGroupsParams) error {
	caller := auth.PrincipalFrom(ctx)
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		seen := map[string]bool{}
		for i, id := range params.GroupIds {
			if seen[id] {
				continue
			}
			seen[id] = true
			if err := deleteGroup(ctx, tx, caller.TeamID, id); err != nil {
				if errors.Is(err, db.ErrNotFound) {
					return apierror.NotFoundf("group_ids[%d]: no rule group %q; nothing was deleted", i, id)
				}
				return err
			}
		}
		return nil
	})
}

func notFoundAs(err error, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("group_id: no rule group %q", id)
	}
	return err
}
