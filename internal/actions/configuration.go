package actions

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the actions' part of a team's configuration document (teamconfig.Area): each
// action as GetAction answers it without createdBy (set by the server), checked by checkInput and
// stored by create and replace, as the HTTP operations do. A new action goes last in its display
// order, in the document's order; a replaced one keeps its place.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "actions" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "team-actions:ReadConfig", "team-actions:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	all, err := listActions(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(all))
	for _, s := range all {
		a := s.Action
		a.CreatedBy = oas.OptString{}
		doc, err := a.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: s.ID(), Name: a.Name.Or(""), Doc: doc})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the action of ReplaceAction's body, checked by checkInput
// (an action without an id gets a fresh one).
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var req oas.ActionReplaceRequest
	if err := teamconfig.DecodeBodyOf(oas.ReplaceActionOperation, "action", doc, &req); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if err := checkID("id", id); err != nil {
		return teamconfig.Resource{}, err
	}
	in := req.Action.Or(oas.Action{})
	a, err := checkInput("", inputOf(in))
	if err != nil {
		return teamconfig.Resource{}, err
	}
	a.ID = oas.NewOptString(id)
	a.IsHidden = oas.NewOptBool(in.IsHidden.Or(false))
	encoded, err := a.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: a.Name.Or(""), Doc: encoded, Value: a}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	a := r.Value.(oas.Action)
	if exists {
		_, err := replace(ctx, tx, teamID, "", a)
		return err
	}
	_, err := create(ctx, tx, teamID, creator(auth.PrincipalFrom(ctx)), "", inputOf(a), r.ID, a.IsHidden.Or(false))
	return err
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return remove(ctx, tx, teamID, "id", id)
}
