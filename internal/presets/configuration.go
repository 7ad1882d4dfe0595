package presets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the custom notification presets' part of a team's configuration document
// (teamconfig.Area): each custom preset as GetPreset answers it without createTime and
// updateTime, checked by checkPreset and stored by createPreset, replacePreset and removePreset
// (a parent must exist before its child; a preset with children is not deleted), as the HTTP
// operations do. System presets are not part of it; which preset is a pair's default is
// DefaultsConfiguration's.
type Configuration struct {
	// Users are asked before a preset is deleted or changes connector type (see Users).
	Users []Users
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "notificationPresets" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "notification-center-presets:ReadConfig", "notification-center-presets:UpdateConfig"
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
// an id gets a fresh one; a chosen id meets checkChosenID), checked by checkPreset.
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
	if err := checkChosenID(id); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("id: %v", err)
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
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(oas.Preset)
	var err error
	if exists {
		_, err = replacePreset(ctx, tx, teamID, p, c.Users)
	} else {
		_, err = createPreset(ctx, tx, teamID, r.ID, p)
	}
	return err
}

// Delete implements teamconfig.Area.
func (c Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return removePreset(ctx, tx, teamID, id, c.Users)
}

// DefaultsConfiguration is the pairs' default presets' part of a team's configuration document
// (teamconfig.Area): one {connectorType, entityType, presetId} per (connector type, entity type)
// pair whose default is one of the team's custom presets, stored as SetCustomPresetAsDefault
// stores it (the preset must exist and name both halves of the pair). A pair whose default is
// its system preset is not in the document: prune gives a pair the document lacks its system
// preset back, as SetPresetAsDefault with the system preset does.
type DefaultsConfiguration struct{}

// Key implements teamconfig.Area.
func (DefaultsConfiguration) Key() string { return "notificationPresetDefaults" }

// Permissions implements teamconfig.Area: those of GetDefaultPresetSummary and
// SetCustomPresetAsDefault.
func (DefaultsConfiguration) Permissions() (read, write string) {
	return "notification-center-presets:ReadConfig", "notification-center-presets:UpdateConfig"
}

// configuredDefault is one pair's default in the document's form.
type configuredDefault struct {
	ConnectorType oas.ConnectorType          `json:"connectorType"`
	EntityType    oas.NotificationEntityType `json:"entityType"`
	PresetID      string                     `json:"presetId"`
}

// id names the pair in a plan: "SLACK:ALERTS".
func (d configuredDefault) id() string { return string(d.ConnectorType) + ":" + string(d.EntityType) }

func (d configuredDefault) resource() (teamconfig.Resource, error) {
	doc, err := json.Marshal(d)
	return teamconfig.Resource{ID: d.id(), Doc: doc, Value: d}, err
}

// Export implements teamconfig.Area.
func (DefaultsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachPresetDefault(ctx, q, teamID, func(c oas.ConnectorType, e oas.NotificationEntityType, id string) error {
		r, err := configuredDefault{ConnectorType: c, EntityType: e, PresetID: id}.resource()
		out = append(out, r)
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: both halves of the pair known and not UNSPECIFIED (as
// checkPair requires), presetId a custom preset's id.
//
// Errors: Invalid naming connectorType, entityType or presetId.
func (DefaultsConfiguration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in struct {
		ConnectorType *string `json:"connectorType"`
		EntityType    *string `json:"entityType"`
		PresetID      *string `json:"presetId"`
	}
	if err := json.Unmarshal(doc, &in); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("connectorType, entityType and presetId must be strings: %v", err)
	}
	var d configuredDefault
	if in.ConnectorType == nil || oas.ConnectorType(*in.ConnectorType).Validate() != nil ||
		oas.ConnectorType(*in.ConnectorType) == oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED {
		return teamconfig.Resource{}, teamconfig.Invalidf("connectorType: required, one of %s", knownValues(oas.ConnectorType("").AllValues()))
	}
	d.ConnectorType = oas.ConnectorType(*in.ConnectorType)
	if in.EntityType == nil || oas.NotificationEntityType(*in.EntityType).Validate() != nil ||
		oas.NotificationEntityType(*in.EntityType) == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
		return teamconfig.Resource{}, teamconfig.Invalidf("entityType: required, one of %s", knownValues(oas.NotificationEntityType("").AllValues()))
	}
	d.EntityType = oas.NotificationEntityType(*in.EntityType)
	if in.PresetID == nil || *in.PresetID == "" {
		return teamconfig.Resource{}, teamconfig.Invalidf("presetId: required; the id of the custom preset that is the pair's default")
	}
	d.PresetID = *in.PresetID
	if _, sys := system(d.PresetID); sys {
		return teamconfig.Resource{}, teamconfig.Invalidf("presetId: %q is a system preset; a pair whose default is its system preset is left out of the document (apply with prune to give a pair its system preset back)", d.PresetID)
	}
	return d.resource()
}

// knownValues lists the values of an enumeration but its UNSPECIFIED one, for messages.
func knownValues[T ~string](all []T) string {
	var names []string
	for _, v := range all {
		if !strings.HasSuffix(string(v), "UNSPECIFIED") {
			names = append(names, string(v))
		}
	}
	return strings.Join(names, ", ")
}

// checkDefault requires the team to have the custom preset d names, of d's pair.
//
// Errors: Invalid naming presetId.
func checkDefault(ctx context.Context, tx *db.Tx, teamID int64, d configuredDefault) error {
	p, err := getPreset(ctx, tx, teamID, d.PresetID)
	if errors.Is(err, db.ErrNotFound) {
		return apierror.Invalidf("presetId: no custom preset %q in the team or the document", d.PresetID)
	}
	if err != nil {
		return err
	}
	c, e := p.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED), p.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	if c != d.ConnectorType || e != d.EntityType {
		return apierror.Invalidf("presetId: preset %q has connectorType %s and entityType %s; the default of %s and %s must be a preset of that pair",
			d.PresetID, c, e, d.ConnectorType, d.EntityType)
	}
	return nil
}

// Put implements teamconfig.Area, as SetCustomPresetAsDefault.
func (DefaultsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	d := r.Value.(configuredDefault)
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	if err := checkDefault(ctx, tx, teamID, d); err != nil {
		return err
	}
	return setPresetDefault(ctx, tx, teamID, d.ConnectorType, d.EntityType, d.PresetID)
}

// Recheck implements teamconfig.Referrer: the preset is still the team's and of the pair (a
// replace that moved it to another pair dropped the default).
func (DefaultsConfiguration) Recheck(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource) error {
	return checkDefault(ctx, tx, teamID, r.Value.(configuredDefault))
}

// Delete implements teamconfig.Area: the pair gets its system preset back as default.
func (DefaultsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	c, e, ok := strings.Cut(id, ":")
	if !ok {
		return fmt.Errorf("default preset: %q is not a pair", id)
	}
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return clearPresetDefault(ctx, tx, teamID, oas.ConnectorType(c), oas.NotificationEntityType(e))
}
