// Package actions serves a team's actions (the public actions service): URL templates that a
// user runs from a log or a span, their placeholders checked (see checkInput), kept in two
// display orders (shared and private) that the order operation changes, and changed one at a
// time or in an atomic batch.
//
// Every action is the team's: a private action is listed for every key of its team, since keys
// are the team's and not a user's (see docs/decisions.md).
package actions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ActionHandler implements the action operations of oas.Handler.
type ActionHandler struct {
	db *db.DB
}

// NewHandler returns the action operations over database.
func NewHandler(database *db.DB) *ActionHandler { return &ActionHandler{db: database} }

// notFound is the area's answer for an action the team does not have.
func notFound(field, id string) error {
	return apierror.NotFoundf("%s: no action %q in this team", field, id)
}

// creator is the createdBy of the actions the caller creates: its key's name.
func creator(p *auth.Principal) string {
	name := p.KeyName
	if name == "" {
		name = p.KeyID
	}
	if r := []rune(name); len(r) > 255 {
		name = string(r[:255])
	}
	return name
}

// CreateAction stores a new action, last in its display order.
//
// Errors: Invalid (see checkInput); LimitExceeded when the team holds MaxActions.
func (h *ActionHandler) CreateAction(ctx context.Context, req *oas.ActionInput) (*oas.ActionEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	return h.writeOne(ctx, func(tx *db.Tx) (oas.Action, error) {
		return create(ctx, tx, caller.TeamID, creator(caller), "", *req, tx.NewID(), false)
	})
}

// inTeamTx runs fn in a write transaction that holds the caller's team's action lock.
func (h *ActionHandler) inTeamTx(ctx context.Context, fn func(tx *db.Tx, teamID int64) error) error {
	teamID := auth.PrincipalFrom(ctx).TeamID
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		return fn(tx, teamID)
	})
}

// writeOne runs write in inTeamTx and answers the action it returns.
func (h *ActionHandler) writeOne(ctx context.Context, write func(tx *db.Tx) (oas.Action, error)) (*oas.ActionEnvelope, error) {
	var out oas.Action
	err := h.inTeamTx(ctx, func(tx *db.Tx, _ int64) error {
		var err error
		out, err = write(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.ActionEnvelope{Action: oas.NewOptAction(out)}, nil
}

// create checks in and stores it under id in tx, hidden or not, last in its order, and returns
// it as stored. field is the action's place in the request, for errors.
func create(ctx context.Context, tx *db.Tx, teamID int64, createdBy, field string, in oas.ActionInput, id string, hidden bool) (oas.Action, error) {
	a, err := checkInput(field, in)
	if err != nil {
		return a, err
	}
	n, next, err := countAndNext(ctx, tx, teamID, a.IsPrivate.Or(false))
	if err != nil {
		return a, err
	}
	if n >= MaxActions {
		return a, apierror.LimitExceededf("%sname: the team holds %d actions, the most it may; delete one first", field, n)
	}
	a.ID = oas.NewOptString(id)
	a.IsHidden = oas.NewOptBool(hidden)
	a.CreatedBy = oas.NewOptString(createdBy)
	if err := insertAction(ctx, tx, teamID, stored{Action: a, Position: next}); err != nil {
		if errors.Is(err, db.ErrConflict) {
			return a, apierror.Conflictf("%sid: the team already has an action %q", field, id)
		}
		return a, err
	}
	return a, nil
}

// ReplaceAction replaces the action req.action.id, keeping its id, creator and place in its order
// (or putting it last in the other order when isPrivate changes).
//
// Errors: Invalid when the id is missing or not a UUID, and see checkInput; NotFound when the team
// has no such action.
func (h *ActionHandler) ReplaceAction(ctx context.Context, req *oas.ActionReplaceRequest) (*oas.ActionEnvelope, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	return h.writeOne(ctx, func(tx *db.Tx) (oas.Action, error) {
		return replace(ctx, tx, teamID, "action.", req.Action.Or(oas.Action{}))
	})
}

// replace checks a and stores it over the team's action a.id in tx; field is the action's place
// in the request ("action." or "requests[2].replace.action."), for errors.
func replace(ctx context.Context, tx *db.Tx, teamID int64, field string, a oas.Action) (oas.Action, error) {
	id := a.ID.Or("")
	if err := checkID(field+"id", id); err != nil {
		return a, err
	}
	checked, err := checkInput(field, inputOf(a))
	if err != nil {
		return a, err
	}
	old, err := getAction(ctx, tx, teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return a, notFound(field+"id", id)
	}
	if err != nil {
		return a, err
	}
	checked.ID = old.Action.ID
	checked.CreatedBy = old.Action.CreatedBy
	checked.IsHidden = oas.NewOptBool(a.IsHidden.Or(false))
	position := old.Position
	if checked.IsPrivate.Or(false) != old.private() {
		if _, position, err = countAndNext(ctx, tx, teamID, checked.IsPrivate.Or(false)); err != nil {
			return a, err
		}
	}
	tx.AuditResource(id)
	return checked, updateAction(ctx, tx, teamID, stored{Action: checked, Position: position})
}

// GetAction answers the team's action id.
//
// Errors: NotFound when the team has no such action.
func (h *ActionHandler) GetAction(ctx context.Context, params oas.GetActionParams) (*oas.ActionEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := getAction(ctx, h.db.Read(), caller.TeamID, params.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFound("id", params.ID)
	}
	if err != nil {
		return nil, err
	}
	return &oas.ActionEnvelope{Action: oas.NewOptAction(s.Action)}, nil
}

// ListActions answers the team's actions in display order: shared, then private.
func (h *ActionHandler) ListActions(ctx context.Context) (*oas.ActionList, error) {
	caller := auth.PrincipalFrom(ctx)
	all, err := listActions(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := &oas.ActionList{Actions: make([]oas.Action, 0, len(all))}
	for _, s := range all {
		out.Actions = append(out.Actions, s.Action)
	}
	return out, nil
}

// DeleteAction deletes the team's action id.
//
// Errors: NotFound when the team has no such action.
func (h *ActionHandler) DeleteAction(ctx context.Context, params oas.DeleteActionParams) error {
	return h.inTeamTx(ctx, func(tx *db.Tx, teamID int64) error {
		return remove(ctx, tx, teamID, "id", params.ID)
	})
}

// remove deletes the team's action id in tx; field names the id in the request, for errors.
func remove(ctx context.Context, tx *db.Tx, teamID int64, field, id string) error {
	if err := checkID(field, id); err != nil {
		return err
	}
	err := deleteAction(ctx, tx, teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return notFound(field, id)
	}
	if err == nil {
		tx.AuditResource(id)
	}
	return err
}

// BatchActions applies the requests in order in one transaction and answers one response each.
//
// Errors: those of the single operations, their fields prefixed with the request's place
// (requests[i].create.…); Invalid when a request holds none or more than one of create, replace
// and delete. One failure changes nothing.
func (h *ActionHandler) BatchActions(ctx context.Context, req *oas.ActionBatchRequest) (*oas.ActionBatchResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.ActionBatchResponse{MatchingResponses: make([]oas.ActionBatchAnswer, 0, len(req.Requests))}
	err := h.inTeamTx(ctx, func(tx *db.Tx, _ int64) error {
		out.MatchingResponses = out.MatchingResponses[:0]
		for i, r := range req.Requests {
			at := fmt.Sprintf("requests[%d]", i)
			kinds := 0
			for _, set := range []bool{r.Create.Set, r.Replace.Set, r.Delete.Set} {
				if set {
					kinds++
				}
			}
			if kinds != 1 {
				return apierror.Invalidf("%s: must hold exactly one of create, replace and delete (it holds %d)", at, kinds)
			}
			var answer oas.ActionBatchAnswer
			switch {
			case r.Create.Set:
				a, err := create(ctx, tx, caller.TeamID, creator(caller), at+".create.", r.Create.Value, tx.NewID(), false)
				if err != nil {
					return err
				}
				answer.Create = oas.NewOptActionEnvelope(oas.ActionEnvelope{Action: oas.NewOptAction(a)})
			case r.Replace.Set:
				a, err := replace(ctx, tx, caller.TeamID, at+".replace.action.", r.Replace.Value.Action.Or(oas.Action{}))
				if err != nil {
					return err
				}
				answer.Replace = oas.NewOptActionEnvelope(oas.ActionEnvelope{Action: oas.NewOptAction(a)})
			default:
				if err := remove(ctx, tx, caller.TeamID, at+".delete.id", r.Delete.Value.ID.Or("")); err != nil {
					return err
				}
				answer.Delete = &oas.ActionDeleted{}
			}
			out.MatchingResponses = append(out.MatchingResponses, answer)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OrderActions puts the named actions of each order at their positions, the others after them in
// their current order, and stores the positions renumbered from 0.
//
// Errors: Invalid when an id names no action of that order (shared or private), or two actions
// of one order are given the same position.
func (h *ActionHandler) OrderActions(ctx context.Context, req *oas.ActionOrderRequest) error {
	return h.inTeamTx(ctx, func(tx *db.Tx, teamID int64) error {
		all, err := listActions(ctx, tx, teamID)
		if err != nil {
			return err
		}
		for _, group := range []struct {
			field     string
			private   bool
			positions map[string]int64
		}{
			{"sharedActionsOrder", false, req.SharedActionsOrder.Or(nil)},
			{"privateActionsOrder", true, req.PrivateActionsOrder.Or(nil)},
		} {
			if len(group.positions) == 0 {
				continue
			}
			order, err := newOrder(group.field, group.private, all, group.positions)
			if err != nil {
				return err
			}
			for i, id := range order {
				if err := setPosition(ctx, tx, teamID, id, int64(i)); err != nil {
					return err
				}
			}
			tx.AuditResource(order...)
		}
		return nil
	})
}

// newOrder returns the ids of the actions of one order (private or shared) of all, which is in
// display order: those positions names, by position, then the others as they were.
func newOrder(field string, private bool, all []stored, positions map[string]int64) ([]string, error) {
	var current []string
	for _, s := range all {
		if s.private() == private {
			current = append(current, s.ID())
		}
	}
	kind := "shared"
	if private {
		kind = "private"
	}
	byPosition := map[int64]string{}
	named := make([]string, 0, len(positions))
	for _, id := range slices.Sorted(maps.Keys(positions)) {
		if !slices.Contains(current, id) {
			return nil, apierror.Invalidf("%s: %q is not a %s action of this team", field, apierror.Excerpt(id), kind)
		}
		p := positions[id]
		if other, ok := byPosition[p]; ok {
			return nil, apierror.Invalidf("%s: %q and %q both have position %d; positions must be distinct", field, other, id, p)
		}
		byPosition[p] = id
		named = append(named, id)
	}
	slices.SortFunc(named, func(a, b string) int { return cmp.Compare(positions[a], positions[b]) })
	for _, id := range current {
		if _, ok := positions[id]; !ok {
			named = append(named, id)
		}
	}
	return named, nil
}
