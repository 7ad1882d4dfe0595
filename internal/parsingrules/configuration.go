package parsingrules

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the parsing-rule groups' part of a team's configuration document
// (teamconfig.Area): each group as GetParsingRuleGroup answers it without the ids of its
// subgroups and rules, which every create and replace draws afresh; checked by checkGroup and
// stored by createGroup and replaceGroup (limits included), as the HTTP operations do.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "parsingRuleGroups" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "parsing-rules:ReadConfig", "parsing-rules:Manage"
}

// withoutInnerIDs clears the ids of g's subgroups and rules.
func withoutInnerIDs(g oas.ParsingRuleGroup) oas.ParsingRuleGroup {
	for i := range g.RuleSubgroups {
		g.RuleSubgroups[i].ID.Reset()
		for j := range g.RuleSubgroups[i].Rules {
			g.RuleSubgroups[i].Rules[j].ID.Reset()
		}
	}
	return g
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachGroup(ctx, q, teamID, func(g *oas.ParsingRuleGroup) error {
		exported := withoutInnerIDs(*g)
		doc, err := exported.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: g.ID.Or(""), Name: g.Name.Or(""), Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of UpdateParsingRuleGroup, with an id, checked by
// checkGroup for the caller's team.
func (Configuration) Prepare(ctx context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.ParsingRuleGroup
	if err := teamconfig.DecodeBody(oas.UpdateParsingRuleGroupOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	g, err := checkGroup(in, auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	g.ID = oas.NewOptString(id)
	g = withoutInnerIDs(g)
	encoded, err := g.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: g.Name.Or(""), Doc: encoded, Value: g}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	g := r.Value.(oas.ParsingRuleGroup)
	var err error
	if exists {
		_, err = replaceGroup(ctx, tx, teamID, r.ID, g)
	} else {
		_, err = createGroup(ctx, tx, teamID, r.ID, g)
	}
	return err
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return notFoundAs(deleteGroup(ctx, tx, teamID, id), id)
}
