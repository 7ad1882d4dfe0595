package cases

// Case settings (issue 25): the team's configuration of how cases are kept — which alerts feed
// them, their lifecycle periods and their KPI thresholds. A team holds at most one configuration,
// and that one is its active configuration (the public document has no way to activate one of
// several, and answers 409 to a create that conflicts); see docs/decisions.md. Of what a
// configuration holds, the KPI thresholds act on cases today: EvaluateKPIs measures each team's
// cases against its active configuration's thresholds, the team's defaults (the operator's, else
// DefaultKPIThresholds) filling in what the configuration does not list.

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// CreateCaseSettings stores the team's case settings under a fresh id; it is the team's active
// configuration from the commit on.
//
// Errors: Invalid (see checkSettings); Conflict when the team already has a configuration (the
// message names it), also when another create of the team commits first.
func (h *CaseHandler) CreateCaseSettings(ctx context.Context, req *oas.CaseSettingsCreateInput) (*oas.CaseSettingsAnswer, error) {
	caller := auth.PrincipalFrom(ctx)
	doc := settingsDoc{Name: req.Name, GlobalIndicatorSettings: req.GlobalIndicatorSettings, CaseLifecycle: req.CaseLifecycle}
	if err := checkSettings(&doc); err != nil {
		return nil, err
	}
	var out oas.CaseSettings
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		id := tx.NewID()
		tx.AuditResource(id)
		created, existing, err := insertSettings(ctx, tx, caller.TeamID, id, doc)
		if err != nil {
			return err
		}
		if !created {
			return apierror.Conflictf("caseSettings: the team already has case settings %s, its active configuration; "+
				"a team holds one, so update or delete that one", existing)
		}
		out = doc.wire(id, tx.Now, tx.Now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.CaseSettingsAnswer{CaseSettings: out}, nil
}

// GetCaseSettings returns the team's case settings with that id.
//
// Errors: NotFound when the team has no configuration with that id.
func (h *CaseHandler) GetCaseSettings(ctx context.Context, params oas.GetCaseSettingsParams) (*oas.CaseSettingsAnswer, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := readSettings(ctx, h.db.Read(), caller.TeamID, string(params.ID))
	if err != nil {
		return nil, settingsNotFoundAs(err, string(params.ID))
	}
	return &oas.CaseSettingsAnswer{CaseSettings: s}, nil
}

// GetActiveCaseSettings returns the team's active case settings: its only configuration.
//
// Errors: NotFound when the team has none.
func (h *CaseHandler) GetActiveCaseSettings(ctx context.Context) (*oas.CaseSettingsAnswer, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := readSettings(ctx, h.db.Read(), caller.TeamID, "")
	if errors.Is(err, db.ErrNotFound) {
		return nil, apierror.NotFoundf("caseSettings: the team has no active case settings; its cases follow the " +
			"system defaults until it creates a configuration")
	}
	if err != nil {
		return nil, err
	}
	return &oas.CaseSettingsAnswer{CaseSettings: s}, nil
}

// UpdateCaseSettings replaces, of the team's configuration id, each of name,
// globalIndicatorSettings and caseLifecycle that the body sets; the others stay. A body that
// sets none, or sets them to what is stored, changes nothing (updateTime stays).
//
// Errors: Invalid (see checkSettings); NotFound when the team has no configuration with that id.
func (h *CaseHandler) UpdateCaseSettings(ctx context.Context, req oas.OptCaseSettingsUpdateInput, params oas.UpdateCaseSettingsParams) (*oas.CaseSettingsAnswer, error) {
	caller := auth.PrincipalFrom(ctx)
	id := string(params.ID)
	patch := req.Or(oas.CaseSettingsUpdateInput{})
	// The parts sent are checked alone first, so that a bad body is refused before any read.
	sent := settingsDoc{Name: patch.Name, CaseLifecycle: patch.CaseLifecycle}
	if g, ok := patch.GlobalIndicatorSettings.Get(); ok {
		sent.GlobalIndicatorSettings = g
	}
	if err := checkSettings(&sent); err != nil {
		return nil, err
	}
	var out oas.CaseSettings
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(id)
		if err := lockSettings(ctx, tx, caller.TeamID, id); err != nil {
			return err
		}
		old, err := loadSettings(ctx, tx, caller.TeamID, id)
		if err != nil {
			return err
		}
		doc := old.doc
		if patch.Name.Set {
			doc.Name = sent.Name
		}
		if patch.GlobalIndicatorSettings.Set {
			doc.GlobalIndicatorSettings = sent.GlobalIndicatorSettings
		}
		if patch.CaseLifecycle.Set {
			doc.CaseLifecycle = sent.CaseLifecycle
		}
		updated := old.updated
		if changed, err := doc.differs(old.doc); err != nil {
			return err
		} else if changed {
			updated = tx.Now
			if err := updateSettings(ctx, tx, caller.TeamID, id, doc); err != nil {
				return err
			}
		}
		out = doc.wire(id, old.created, updated)
		return nil
	})
	if err != nil {
		return nil, settingsNotFoundAs(err, id)
	}
	return &oas.CaseSettingsAnswer{CaseSettings: out}, nil
}

// DeleteCaseSettings deletes the team's configuration id (200, {}). It is the active one, so the
// team then has none: its cases follow the defaults from the next KPI evaluation, and a new
// configuration may be created.
//
// Errors: NotFound when the team has no configuration with that id.
func (h *CaseHandler) DeleteCaseSettings(ctx context.Context, params oas.DeleteCaseSettingsParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := string(params.ID)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(id)
		return deleteSettings(ctx, tx, caller.TeamID, id)
	})
	return settingsNotFoundAs(err, id)
}

// GetCaseSettingsDefaults answers what the team's cases follow where its active configuration
// sets nothing: every alert processed, and the team's default KPI thresholds (the operator's,
// else DefaultKPIThresholds) as one enabled entry per KPI type and priority.
func (h *CaseHandler) GetCaseSettingsDefaults(ctx context.Context) (*oas.CaseSettingsDefaults, error) {
	caller := auth.PrincipalFrom(ctx)
	t, err := loadThresholds(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.CaseSettingsDefaults{
		GlobalIndicatorSettings: oas.CaseIndicatorSettings{Enabled: oas.NewOptBool(true), FilteringConditions: []oas.CaseIndicatorFilter{}},
		CaseLifecycle:           oas.CaseLifecycleSettings{Kpi: oas.NewOptCaseSettingsKPIs(thresholdEntries(&t))},
	}, nil
}

func settingsNotFoundAs(err error, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("id: the team has no case settings %s", id)
	}
	return err
}
