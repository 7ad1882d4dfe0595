package e2m

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the events-to-metrics rules' part of a team's configuration document
// (teamconfig.Area): each rule as GetE2M answers it without what the server sets (createTime,
// updateTime, isInternal, permutations) and with its permutationsLimit, checked by checkCreate
// or checkReplace and written by the batch engine (executeIn), so that names stay unique and the
// team's limits hold, as for the HTTP operations.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "events2metrics" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "logs.events2metrics:ReadConfig", "logs.events2metrics:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachRule(ctx, q, teamID, func(s stored) error {
		r := s.rule
		r.PermutationsLimit = oas.NewOptE2MPermutationsLimit(oas.E2MPermutationsLimit(s.limit))
		doc, err := r.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: string(r.ID), Name: string(r.Name), Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of ReplaceE2M, or of CreateE2M for a rule without
// an id (it gets a fresh one). A rule without permutationsLimit gets DefaultPermutationsLimit.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, err := teamconfig.IDOf(doc, func() string { return "" })
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var r oas.E2M
	if id == "" {
		var in oas.E2MCreateParams
		if err := teamconfig.DecodeBody(oas.CreateE2MOperation, doc, &in); err != nil {
			return teamconfig.Resource{}, err
		}
		if r, err = checkCreate("", &in); err != nil {
			return teamconfig.Resource{}, err
		}
		r.ID = oas.E2MUUID(strings.ToLower(newID()))
	} else {
		var in oas.E2M
		if err := teamconfig.DecodeBody(oas.ReplaceE2MOperation, doc, &in); err != nil {
			return teamconfig.Resource{}, err
		}
		if r, err = checkReplace("", &in); err != nil {
			return teamconfig.Resource{}, err
		}
	}
	if !r.PermutationsLimit.Set {
		r.PermutationsLimit = oas.NewOptE2MPermutationsLimit(DefaultPermutationsLimit)
	}
	encoded, err := r.MarshalJSON()
	return teamconfig.Resource{ID: string(r.ID), Name: string(r.Name), Doc: encoded, Value: r}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, res teamconfig.Resource, exists bool) error {
	r := res.Value.(oas.E2M)
	o := op{kind: opCreate, rule: r, id: string(r.ID), idPath: "id", limit: r.PermutationsLimit}
	if exists {
		o.kind = opReplace
	}
	_, err := executeIn(ctx, tx, teamID, []op{o})
	return err
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	_, err := executeIn(ctx, tx, teamID, []op{{kind: opDelete, id: id, idPath: "id"}})
	return err
}
