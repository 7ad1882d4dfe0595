package recordingrules

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the recording-rule sets' part of a team's configuration document
// (teamconfig.Area): each set as GetRecordingRuleSet answers it, checked by buildSet and stored
// by insertSet and replaceSet, as the HTTP operations do.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "recordingRuleSets" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "metrics.recording-rules:ReadConfig", "metrics.recording-rules:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachSet(ctx, q, teamID, func(set *oas.RecordingRuleSet) error {
		doc, err := set.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: set.ID, Name: set.Name, Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of CreateRecordingRuleSet, with an id.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.RecordingRuleSetInput
	if err := teamconfig.DecodeBody(oas.CreateRecordingRuleSetOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	set, err := buildSet(newID, id, &in)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	encoded, err := set.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: set.Name, Doc: encoded}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	if exists {
		return replaceSet(ctx, tx, teamID, r.ID, r.Name, r.Doc)
	}
	return insertSet(ctx, tx, teamID, r.ID, r.Name, r.Doc)
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteSet(ctx, tx, teamID, id)
}
