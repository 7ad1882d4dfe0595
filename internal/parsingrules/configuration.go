package parsingrules

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the parsing-rule groups' part of a team's configuration document
// (teamconfig.Area): each group as GetParsingRuleGroup answers it, the ids of its subgroups and
// rules included; checked by checkGroup and stored by createGroup and replaceGroup (limits
// included), as the HTTP operations do. A subgroup or rule keeps the id the document gives it; one
// without an id gets a fresh one when its group is created or replaced (as every one does over
// HTTP), and a document that leaves ids (or the group's order) out is unchanged when it matches
// the stored group but for them (teamconfig.Comparer).
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "parsingRuleGroups" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "parsing-rules:ReadConfig", "parsing-rules:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachGroup(ctx, q, teamID, func(g *oas.ParsingRuleGroup) error {
		doc, err := g.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: g.ID.Or(""), Name: g.Name.Or(""), Doc: doc, Value: *g})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of UpdateParsingRuleGroup, with an id, checked by
// checkGroup for the caller's team; the ids the document gives subgroups and rules are kept
// (checkGroup clears them).
//
// Errors: those of checkGroup; Invalid naming ruleSubgroups[i].id or ruleSubgroups[i].rules[j].id
// for an id that is not one (see teamconfig.CheckID) or is given twice within the group.
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
	if err := keepInnerIDs(in, &g); err != nil {
		return teamconfig.Resource{}, err
	}
	encoded, err := g.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: g.Name.Or(""), Doc: encoded, Value: g}, err
}

// byOrder returns the indexes of n items in the order checkGroup sorts them: by order, the
// item's place (from 1) when it has none, ties in place order.
func byOrder(n int, order func(i int) oas.OptInt64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(order(a).Or(int64(a+1)), order(b).Or(int64(b+1)))
	})
	return idx
}

// keepInnerIDs copies the ids of in's subgroups and rules onto g, the group checkGroup made of
// in (which sorted them by order and cleared their ids).
//
// Errors: Invalid naming the id's path in the document.
func keepInnerIDs(in oas.ParsingRuleGroup, g *oas.ParsingRuleGroup) error {
	seen := map[string]string{}
	keep := func(given oas.OptString, path string, into *oas.OptString) error {
		id, ok := given.Get()
		if !ok {
			return nil
		}
		if err := teamconfig.CheckID(id); err != nil {
			if e, ok := apierror.As(err); ok {
				return apierror.Invalidf("%s.%s", path, e.Message)
			}
			return err
		}
		if other, dup := seen[id]; dup {
			return apierror.Invalidf("%s.id: %q is the id of %s already; ids are unique within a group", path, id, other)
		}
		seen[id] = path
		*into = given
		return nil
	}
	subgroups := byOrder(len(in.RuleSubgroups), func(i int) oas.OptInt64 { return in.RuleSubgroups[i].Order })
	for k, i := range subgroups {
		sg := in.RuleSubgroups[i]
		path := fmt.Sprintf("ruleSubgroups[%d]", i)
		if err := keep(sg.ID, path, &g.RuleSubgroups[k].ID); err != nil {
			return err
		}
		rules := byOrder(len(sg.Rules), func(j int) oas.OptInt64 { return sg.Rules[j].Order })
		for l, j := range rules {
			if err := keep(sg.Rules[j].ID, fmt.Sprintf("%s.rules[%d]", path, j), &g.RuleSubgroups[k].Rules[l].ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// Unchanged implements teamconfig.Comparer: want is the stored group but for what it leaves out
// that a replace would keep or draw: the group's order, and ids of subgroups and rules (with the
// same number of subgroups and rules in each).
func (Configuration) Unchanged(current, want teamconfig.Resource) bool {
	cur, ok1 := current.Value.(oas.ParsingRuleGroup)
	w, ok2 := want.Value.(oas.ParsingRuleGroup)
	if !ok1 || !ok2 || len(cur.RuleSubgroups) != len(w.RuleSubgroups) {
		return false
	}
	if !w.Order.IsSet() { // a replace keeps the group's order
		cur.Order.Reset()
	}
	cur.RuleSubgroups = slices.Clone(cur.RuleSubgroups)
	for i := range cur.RuleSubgroups {
		if len(cur.RuleSubgroups[i].Rules) != len(w.RuleSubgroups[i].Rules) {
			return false
		}
		if !w.RuleSubgroups[i].ID.IsSet() {
			cur.RuleSubgroups[i].ID.Reset()
		}
		cur.RuleSubgroups[i].Rules = slices.Clone(cur.RuleSubgroups[i].Rules)
		for j := range cur.RuleSubgroups[i].Rules {
			if !w.RuleSubgroups[i].Rules[j].ID.IsSet() {
				cur.RuleSubgroups[i].Rules[j].ID.Reset()
			}
		}
	}
	a, err1 := cur.MarshalJSON()
	b, err2 := w.MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
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
