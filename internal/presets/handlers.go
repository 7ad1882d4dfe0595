// Package presets serves notification presets: the system presets every team starts with (one per
// connector type, under the public ids clients name, e.g. preset_system_slack_alerts_basic; never
// stored, never changed; the ids earlier versions served still find them), the team's custom presets (E6 create, and replace,
// delete, get, batch get and the summaries list), and the attachment types of each entity type
// that an AUTO attachment policy draws on.
package presets

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// PresetHandler implements the notification-preset operations of oas.Handler.
type PresetHandler struct {
	db    *db.DB
	users []Users
}

// Users names, in tx, what uses the team's custom preset (e.g. `router "Paging" (id …)`): a used
// preset cannot be deleted, nor change connector type. The routers area provides one; it runs
// after LockTeam.
type Users func(ctx context.Context, tx *db.Tx, teamID int64, presetID string) ([]string, error)

// NewHandler returns the notification-preset operations; users are asked before a custom preset
// is deleted or changes connector type.
func NewHandler(database *db.DB, users ...Users) *PresetHandler {
	return &PresetHandler{db: database, users: users}
}

// usersOf names every user of the team's preset id, from every one of users.
func usersOf(ctx context.Context, tx *db.Tx, users []Users, teamID int64, id string) ([]string, error) {
	var out []string
	for _, u := range users {
		names, err := u(ctx, tx, teamID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// Load returns the team's preset id, system or custom, read in q (a *db.Tx holds a custom one
// until commit with LockTeam); db.ErrNotFound when the team has none of that id.
func Load(ctx context.Context, q db.Querier, teamID int64, id string) (oas.Preset, error) {
	if p, ok := system(id); ok {
		return p, nil
	}
	return getPreset(ctx, q, teamID, id)
}

// CreateCustomPreset stores a new custom preset under the id the client chose (preset.id) or,
// when it chose none, a fresh one, and answers it with every omitted field filled (E6).
//
// Errors: Invalid (see checkPreset, checkParent, connectors.CheckID); Conflict when the id is a
// system preset's or the team has a preset of that id.
func (h *PresetHandler) CreateCustomPreset(ctx context.Context, req *oas.PresetRequest) (*oas.PresetResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id := req.Preset.ID.Or("")
	if id != "" {
		if err := checkChosenID(id); err != nil {
			return nil, apierror.Invalidf("preset.id: %v", err)
		}
	}
	p, err := checkPreset(req.Preset)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if id == "" {
			id = tx.NewID()
		}
		p, err = createPreset(ctx, tx, caller.TeamID, id, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.PresetResponse{Preset: p}, nil
}

// checkChosenID checks an id a client chose for a custom preset: connectors.CheckID's pattern,
// and not "summaries", the path segment of the summary operations (a preset so called could
// not be read by its path).
func checkChosenID(id string) error {
	if id == "summaries" {
		return errors.New(`"summaries" names the presets' summary operations; choose another id`)
	}
	return connectors.CheckID(id)
}

// createPreset stores the checked custom preset p under id in tx and returns it as stored.
//
// Errors: Conflict when id is a system preset's (or one it was served under) or the team has a
// preset id; Invalid for a parentId checkParent refuses.
func createPreset(ctx context.Context, tx *db.Tx, teamID int64, id string, p oas.Preset) (oas.Preset, error) {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return p, err
	}
	if _, sys := system(id); sys {
		return p, apierror.Conflictf("preset.id: %q is a system preset's id; choose another", id)
	}
	if _, err := getPreset(ctx, tx, teamID, id); err == nil {
		return p, apierror.Conflictf("preset.id: the team has a preset %q already; choose another id or replace that one", id)
	} else if !errors.Is(err, db.ErrNotFound) {
		return p, err
	}
	p.ID = oas.NewOptString(id)
	if err := checkParent(ctx, tx, teamID, p); err != nil {
		return p, err
	}
	p.CreateTime = oas.NewOptDateTime(tx.Now)
	p.UpdateTime = oas.NewOptDateTime(tx.Now)
	return p, insertPreset(ctx, tx, teamID, p)
}

// ReplaceCustomPreset replaces the custom preset preset.id, keeping its createTime. A default it
// is of a pair it no longer belongs to is dropped (the pair's system preset is its default again).
//
// Errors: Invalid when preset.id is missing or names a system preset, and see checkPreset and
// checkParent; NotFound when the team has no such preset; Conflict when the connector type
// changes while a user (a router) uses the preset.
func (h *PresetHandler) ReplaceCustomPreset(ctx context.Context, req *oas.PresetRequest) (*oas.PresetResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id, ok := req.Preset.ID.Get()
	if !ok || id == "" {
		return nil, apierror.Invalidf("preset.id: required; it names the custom preset to replace")
	}
	if _, sys := system(id); sys {
		return nil, apierror.Invalidf("preset.id: %q is a system preset; only custom presets can be replaced", id)
	}
	p, err := checkPreset(req.Preset)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		p, err = replacePreset(ctx, tx, caller.TeamID, p, h.users)
		return err
	})
	if err != nil {
		return nil, notFoundAs(err, "preset.id", id)
	}
	return &oas.PresetResponse{Preset: p}, nil
}

// replacePreset replaces the team's custom preset p.ID with the checked p in tx, keeping its
// createTime and dropping a default of a pair it no longer belongs to, and returns it as stored.
//
// Errors: db.ErrNotFound when the team has no such preset; Invalid for a parentId checkParent
// refuses; Conflict when the connector type changes while one of users uses the preset.
func replacePreset(ctx context.Context, tx *db.Tx, teamID int64, p oas.Preset, users []Users) (oas.Preset, error) {
	id := p.ID.Or("")
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return p, err
	}
	old, err := getPreset(ctx, tx, teamID, id)
	if err != nil {
		return p, err
	}
	if old.ConnectorType.Or("") != p.ConnectorType.Or("") {
		names, err := usersOf(ctx, tx, users, teamID, id)
		if err != nil {
			return p, err
		}
		if len(names) > 0 {
			return p, apierror.Conflictf("preset.connectorType: preset %q is used by %s; it cannot change connector type (%s) while used",
				id, strings.Join(names, ", "), old.ConnectorType.Or(""))
		}
	}
	if err := checkParent(ctx, tx, teamID, p); err != nil {
		return p, err
	}
	p.CreateTime = old.CreateTime
	p.UpdateTime = oas.NewOptDateTime(tx.Now)
	if err := forgetPresetDefaults(ctx, tx, teamID, id, p.ConnectorType.Or(""), p.EntityType.Or("")); err != nil {
		return p, err
	}
	return p, updatePreset(ctx, tx, teamID, p)
}

// checkParent requires p's parentId, when set, to name one of the team's presets other than p
// itself and not derived from p (no cycles).
//
// Errors: Invalid naming preset.parentId.
func checkParent(ctx context.Context, tx *db.Tx, teamID int64, p oas.Preset) error {
	id := p.ID.Or("")
	parent, ok := p.ParentId.Get()
	for ok {
		if parent == id {
			return apierror.Invalidf("preset.parentId: %q would make the preset derive from itself", p.ParentId.Or(""))
		}
		if _, sys := system(parent); sys {
			return nil
		}
		q, err := getPreset(ctx, tx, teamID, parent)
		if errors.Is(err, db.ErrNotFound) {
			return apierror.Invalidf("preset.parentId: no preset %q; it must name an existing preset", parent)
		}
		if err != nil {
			return err
		}
		parent, ok = q.ParentId.Get()
	}
	return nil
}

// DeleteCustomPreset deletes a custom preset; the pairs it was the default of get their system
// preset back as default.
//
// Errors: Invalid for a system preset; NotFound when the team has no such preset; Conflict while
// another preset derives from it or a user (a router) uses it, naming them.
func (h *PresetHandler) DeleteCustomPreset(ctx context.Context, params oas.DeleteCustomPresetParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := string(params.ID)
	if _, sys := system(id); sys {
		return apierror.Invalidf("id: %q is a system preset; system presets cannot be deleted", id)
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error { return removePreset(ctx, tx, caller.TeamID, id, h.users) })
	return notFoundAs(err, "id", id)
}

// removePreset deletes the team's custom preset id in tx; the pairs it was the default of get
// their system preset back as default.
//
// Errors: db.ErrNotFound when the team has no such preset; Conflict while another preset derives
// from it or one of users uses it, naming them.
func removePreset(ctx context.Context, tx *db.Tx, teamID int64, id string, users []Users) error {
	if err := LockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	if _, err := getPreset(ctx, tx, teamID, id); err != nil {
		return err
	}
	names, err := usersOf(ctx, tx, users, teamID, id)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return apierror.Conflictf("id: preset %q is used by %s; remove it from them first", id, strings.Join(names, ", "))
	}
	child, err := childOf(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	if child != "" {
		return apierror.Conflictf("id: preset %q is the parentId of preset %q; delete or re-parent that one first", id, child)
	}
	if err := forgetPresetDefaults(ctx, tx, teamID, id, "", ""); err != nil {
		return err
	}
	return deletePreset(ctx, tx, teamID, id)
}

// GetPreset returns one system or custom preset.
//
// Errors: NotFound when the team has no such preset.
func (h *PresetHandler) GetPreset(ctx context.Context, params oas.GetPresetParams) (*oas.PresetResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	p, err := h.lookup(ctx, caller.TeamID, string(params.ID))
	if err != nil {
		return nil, notFoundAs(err, "id", string(params.ID))
	}
	return &oas.PresetResponse{Preset: p}, nil
}

func (h *PresetHandler) lookup(ctx context.Context, teamID int64, id string) (oas.Preset, error) {
	if p, ok := system(id); ok {
		return p, nil
	}
	return getPreset(ctx, h.db.Read(), teamID, id)
}

// BatchGetPresets returns the presets found by id and, in request order without repeats, the ids
// that name none.
func (h *PresetHandler) BatchGetPresets(ctx context.Context, params oas.BatchGetPresetsParams) (*oas.PresetBatch, error) {
	caller := auth.PrincipalFrom(ctx)
	out := &oas.PresetBatch{Presets: oas.PresetBatchPresets{}, NotFoundIds: []string{}}
	seen := map[string]bool{}
	for _, raw := range params.PresetIds {
		id := string(raw)
		if seen[id] {
			continue
		}
		seen[id] = true
		p, err := h.lookup(ctx, caller.TeamID, id)
		switch {
		case errors.Is(err, db.ErrNotFound):
			out.NotFoundIds = append(out.NotFoundIds, id)
		case err != nil:
			return nil, err
		default:
			out.Presets[id] = p
		}
	}
	return out, nil
}

// ListPresetSummaries lists the system presets and then the team's custom presets, oldest first,
// without their overrides, filtered by connector and entity type; the system preset of a preview
// connector type (connectortypes.Kind.Preview) only when the filter names that type.
func (h *PresetHandler) ListPresetSummaries(ctx context.Context, params oas.ListPresetSummariesParams) (*oas.PresetSummaryList, error) {
	out := []oas.PresetSummary{}
	err := h.eachSummary(ctx, params, func(s *oas.PresetSummary) error {
		out = append(out, *s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.PresetSummaryList{PresetSummaries: out}, nil
}

// StreamPresetSummaries writes the answer of ListPresetSummaries for params, the same bytes,
// while reading the custom presets: the server serves the list with it (see package streaming).
func (h *PresetHandler) StreamPresetSummaries(ctx context.Context, params oas.ListPresetSummariesParams, out *streaming.Answer) error {
	return out.Array("presetSummaries", func() error {
		return h.eachSummary(ctx, params, func(s *oas.PresetSummary) error { return out.Item(s) })
	})
}

// eachSummary calls yield with each summary ListPresetSummaries answers for params, in its order;
// it stops at yield's first error and returns it.
func (h *PresetHandler) eachSummary(ctx context.Context, params oas.ListPresetSummariesParams, yield func(*oas.PresetSummary) error) error {
	caller := auth.PrincipalFrom(ctx)
	c := params.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED)
	e := params.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	item := func(p *oas.Preset) error {
		if !matches(*p, c, e) {
			return nil
		}
		s := summaryOf(*p)
		return yield(&s)
	}
	for _, pair := range systemPairs {
		if ty, _ := connectortypes.Lookup(pair.c); ty.Preview && c != pair.c {
			continue // a preview type's preset is listed when the client asks for that type
		}
		p := systemPreset(pair)
		if err := item(&p); err != nil {
			return err
		}
	}
	return eachPreset(ctx, h.db.Read(), `team_id = $1`, item, caller.TeamID)
}

// ListEntityTypeAttachmentTypes returns the attachment types of an entity type.
//
// Errors: Invalid for ENTITY_TYPE_UNSPECIFIED.
func (h *PresetHandler) ListEntityTypeAttachmentTypes(ctx context.Context, params oas.ListEntityTypeAttachmentTypesParams) (*oas.AttachmentTypeList, error) {
	types, ok := attachmentTypes[params.EntityType]
	if !ok {
		return nil, apierror.Invalidf("entity_type: must name an entity type (ALERTS, TEST_NOTIFICATIONS, CASES or OLLY_SCHEDULED_TASKS), not %s", params.EntityType)
	}
	return &oas.AttachmentTypeList{SupportedAttachmentTypes: append([]oas.AttachmentType{}, types...)}, nil
}

func notFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no preset %q", field, id)
	}
	return err
}

// SetCustomPresetAsDefault makes the custom preset the team's default of its (connector type,
// entity type) pair.
//
// Errors: Invalid for a system preset and for a preset whose connector or entity type is
// UNSPECIFIED; NotFound when the team has no such preset.
func (h *PresetHandler) SetCustomPresetAsDefault(ctx context.Context, params oas.SetCustomPresetAsDefaultParams) error {
	id := string(params.ID)
	if _, sys := system(id); sys {
		return apierror.Invalidf("id: %q is a system preset; make it the default with POST .../presets/%s/default", id, id)
	}
	return h.setDefault(ctx, id)
}

// SetPresetAsDefault makes a system or custom preset the team's default of its pair. For a system
// preset that means dropping the team's custom default of the pair.
//
// Errors: as SetCustomPresetAsDefault, but system presets are accepted.
func (h *PresetHandler) SetPresetAsDefault(ctx context.Context, params oas.SetPresetAsDefaultParams) error {
	return h.setDefault(ctx, string(params.ID))
}

func (h *PresetHandler) setDefault(ctx context.Context, id string) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := LockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		if p, sys := system(id); sys {
			return clearPresetDefault(ctx, tx, caller.TeamID, p.ConnectorType.Or(""), p.EntityType.Or(""))
		}
		p, err := getPreset(ctx, tx, caller.TeamID, id)
		if err != nil {
			return err
		}
		c, e := p.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED), p.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
		if c == oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED || e == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
			return apierror.Invalidf("id: preset %q has connectorType %s and entityType %s; only a preset that names both can be a default", id, c, e)
		}
		return setPresetDefault(ctx, tx, caller.TeamID, c, e, id)
	})
	return notFoundAs(err, "id", id)
}

// GetDefaultPresetSummary answers the summary of the pair's default: the custom preset the team
// chose, or else the pair's system preset.
//
// Errors: Invalid when connector_type or entity_type is absent or UNSPECIFIED; NotFound when the
// pair has neither.
func (h *PresetHandler) GetDefaultPresetSummary(ctx context.Context, params oas.GetDefaultPresetSummaryParams) (*oas.DefaultPresetSummary, error) {
	caller := auth.PrincipalFrom(ctx)
	c, e, err := checkPair(params.ConnectorType, params.EntityType)
	if err != nil {
		return nil, err
	}
	id, err := presetDefault(ctx, h.db.Read(), caller.TeamID, c, e)
	if err != nil {
		return nil, err
	}
	if id != "" {
		p, err := getPreset(ctx, h.db.Read(), caller.TeamID, id)
		if err == nil {
			return &oas.DefaultPresetSummary{PresetSummary: summaryOf(p)}, nil
		}
		if !errors.Is(err, db.ErrNotFound) { // gone since: the system default applies
			return nil, err
		}
	}
	return systemDefaultSummary(c, e)
}

// GetSystemDefaultPresetSummary answers the summary of the pair's system preset.
//
// Errors: Invalid when connector_type or entity_type is absent or UNSPECIFIED; NotFound when the
// pair has no system preset.
func (h *PresetHandler) GetSystemDefaultPresetSummary(_ context.Context, params oas.GetSystemDefaultPresetSummaryParams) (*oas.DefaultPresetSummary, error) {
	c, e, err := checkPair(params.ConnectorType, params.EntityType)
	if err != nil {
		return nil, err
	}
	return systemDefaultSummary(c, e)
}

func systemDefaultSummary(c oas.ConnectorType, e oas.NotificationEntityType) (*oas.DefaultPresetSummary, error) {
	p, ok := systemDefault(c, e)
	if !ok {
		return nil, apierror.NotFoundf("entity_type: no default preset for connector type %s and entity type %s; system presets exist for ALERTS, TEST_NOTIFICATIONS and CASES of the types that carry them, and the team made no custom preset the default", c, e)
	}
	return &oas.DefaultPresetSummary{PresetSummary: summaryOf(p)}, nil
}

// ListEntityTypes answers every entity type but ENTITY_TYPE_UNSPECIFIED.
func (h *PresetHandler) ListEntityTypes(context.Context) (*oas.EntityTypeList, error) {
	return &oas.EntityTypeList{EntityTypes: append([]oas.NotificationEntityType{}, entityTypes...)}, nil
}

// ListEntitySubTypes answers, sorted, the distinct entitySubType values that the overrides of the
// team's custom presets of the entity type match (the first MaxEntitySubTypes).
//
// Errors: Invalid for ENTITY_TYPE_UNSPECIFIED.
func (h *PresetHandler) ListEntitySubTypes(ctx context.Context, params oas.ListEntitySubTypesParams) (*oas.EntitySubTypeList, error) {
	caller := auth.PrincipalFrom(ctx)
	if params.EntityType == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
		return nil, apierror.Invalidf("entity_type: must name an entity type (ALERTS, TEST_NOTIFICATIONS, CASES or OLLY_SCHEDULED_TASKS), not %s", params.EntityType)
	}
	ps, err := listPresetsOfEntityType(ctx, h.db.Read(), caller.TeamID, params.EntityType)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []string{}
	for _, p := range ps {
		for _, o := range p.ConfigOverrides {
			sub, ok := o.ConditionType.Value.MatchEntityTypeAndSubType.Value.EntitySubType.Get()
			if o.ConditionType.Set && o.ConditionType.Value.MatchEntityTypeAndSubType.Set && ok && sub != "" && !seen[sub] {
				seen[sub] = true
				out = append(out, sub)
			}
		}
	}
	slices.Sort(out)
	if len(out) > MaxEntitySubTypes {
		out = out[:MaxEntitySubTypes]
	}
	return &oas.EntitySubTypeList{EntitySubTypes: out}, nil
}

// Default returns the preset the team's notifications of the pair are rendered with when a route
// names none: the custom preset the team made the pair's default, else the pair's system preset.
// ok is false when the pair has neither (system presets exist for ALERTS, TEST_NOTIFICATIONS and CASES of the types that carry them).
func Default(ctx context.Context, q db.Querier, teamID int64, c oas.ConnectorType, e oas.NotificationEntityType) (p oas.Preset, ok bool, err error) {
	id, err := presetDefault(ctx, q, teamID, c, e)
	if err != nil {
		return oas.Preset{}, false, err
	}
	if id != "" {
		p, err := getPreset(ctx, q, teamID, id)
		if err == nil {
			return p, true, nil
		}
		if !db.IsNotFound(err) {
			return oas.Preset{}, false, err
		}
	}
	p, ok = systemDefault(c, e)
	return p, ok, nil
}
