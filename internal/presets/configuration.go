package presets

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the custom notification presets' part of a team's configuration document
// (teamconfig.Area): each custom preset as GetPreset answers it without createTime and
// updateTime, checked by checkPreset and stored by createPreset, replacePreset and removePreset
// (a parent must exist before its child; a preset with children is not deleted), as the HTTP
// operations do. System presets are not part of it. Which preset is a pair's default is not
// part of it either.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "notificationPresets" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "notification-presets:ReadConfig", "notification-presets:Manage"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachPreset(ctx, q, `team_id = $1`, func(p *oas.Preset) error {
		exported := *p
		exported.CreateTime.Reset()
		exported.UpdateTime.Reset()
		doc, err := exported.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: p.ID.Or(""), Name: p.Name.Or(""), Doc: doc})
		return err
	}, teamID)
	return out, err
}

// Prepare implements teamconfig.Area: the preset of ReplaceCustomPreset's body (a preset without
// an id gets a fresh one), checked by checkPreset.
func (Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	var in oas.Preset
	if err := teamconfig.DecodeBody(oas.ReplaceCustomPresetOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if _, sys := system(id); sys {
		return teamconfig.Resource{}, teamconfig.Invalidf("id: %q is a system preset; a document holds custom presets only", id)
	}
	p, err := checkPreset(in)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	p.ID = oas.NewOptString(id)
	encoded, err := p.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: p.Name.Or(""), Doc: encoded, Value: p}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(oas.Preset)
	var err error
	if exists {
		_, err = replacePreset(ctx, tx, teamID, p)
	} else {
		_, err = createPreset(ctx, tx, teamID, r.ID, p)
	}
	return err
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return removePreset(ctx, tx, teamID, id)
}
