package slos

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the SLOs' part of a team's configuration document (teamconfig.Area): each SLO
// as GetSlo answers it without what the server sets (creator, createTime, updateTime, revision),
// checked by checkSlo and stored by createWithID and replace, as the HTTP operations do (a
// replace counts the revision up and keeps the creator).
type Configuration struct {
	// Users are asked before an SLO is deleted (see Users).
	Users []Users
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "slos" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) { return "slo:ReadConfig", "slo:UpdateConfig" }

// withoutServerFields clears what the server sets on an SLO.
func withoutServerFields(s oas.Slo) oas.Slo {
	s.Creator.Reset()
	s.CreateTime.Reset()
	s.UpdateTime.Reset()
	s.Revision.Reset()
	return s
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachSlo(ctx, q, teamID, func(s *oas.Slo) error {
		exported := withoutServerFields(*s)
		doc, err := exported.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: s.ID.Or(""), Name: s.Name, Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of ReplaceSlo (an SLO without an id gets a fresh
// one), checked by checkSlo.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.Slo
	if err := teamconfig.DecodeBody(oas.ReplaceSloOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	in.ID = oas.NewOptString(strings.ToLower(id))
	s, err := checkReplace("", withoutServerFields(in))
	if err != nil {
		return teamconfig.Resource{}, err
	}
	s = withoutServerFields(s)
	encoded, err := s.MarshalJSON()
	return teamconfig.Resource{ID: s.ID.Or(""), Name: s.Name, Doc: encoded, Value: s}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	s := r.Value.(oas.Slo)
	if exists {
		_, err := replace(ctx, tx, teamID, "", s)
		return err
	}
	caller := *auth.PrincipalFrom(ctx)
	caller.TeamID = teamID
	_, err := createWithID(ctx, tx, &caller, r.ID, s)
	return err
}

// Delete implements teamconfig.Area.
func (c Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return remove(ctx, tx, teamID, "id", id, c.Users)
}
