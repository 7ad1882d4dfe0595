package quotarules

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the quota rule set's part of a team's configuration document
// (teamconfig.Area, teamconfig.Single): the set as GetQuotaRuleSet answers it, checked by
// fromInput and stored by insertSet and replaceSet, as the HTTP operations do. A team holds at
// most one set: the document's replaces the team's whatever their ids, and takes the document's
// id.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "quotaRuleSet" }

// Single implements teamconfig.Single.
func (Configuration) Single() {}

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "team-quota-rules:Read", "team-quota-rules:Manage"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	set, err := getSet(ctx, q, teamID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := set.MarshalJSON()
	return []teamconfig.Resource{{ID: set.ID, Doc: doc}}, err
}

// Prepare implements teamconfig.Area: the rule set of ReplaceQuotaRuleSet's body, checked by
// fromInput (a set without an id gets a fresh one).
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.QuotaRuleSetInput
	if err := teamconfig.DecodeBody(oas.ReplaceQuotaRuleSetOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	rules, err := fromInput(in)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	set := oas.QuotaRuleSet{ID: id, Rules: rules}
	encoded, err := set.MarshalJSON()
	return teamconfig.Resource{ID: id, Doc: encoded, Value: set}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	set := r.Value.(oas.QuotaRuleSet)
	if exists {
		cur, err := getSet(ctx, tx, teamID)
		if err != nil {
			return err
		}
		if cur.ID == set.ID {
			return replaceSet(ctx, tx, teamID, set)
		}
		if _, err := deleteSet(ctx, tx, teamID); err != nil {
			return err
		}
	}
	if _, err := insertSet(ctx, tx, teamID, set); err != nil {
		return err
	}
	return nil
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, _ string) error {
	_, err := deleteSet(ctx, tx, teamID)
	return err
}
