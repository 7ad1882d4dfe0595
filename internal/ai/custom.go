package ai

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// customFields are the fields of a custom evaluation an update may name in its mask.
var customFields = []string{"name", "description", "policyType", "instructions", "examples", "safe", "violates", "shouldIncludeSystemPrompt"}

// customNotFound is the answer for a custom evaluation the team does not have.
func customNotFound(id string) error {
	return apierror.NotFoundf("no AI custom evaluation %q in this team", id)
}

// checkCustom checks a whole custom evaluation (as created, or as an update leaves it).
//
// Errors: Invalid naming the field (see checkName and checkCustomSettings).
func checkCustom(c *oas.AiCustomEvaluation) error {
	if err := checkName(c.Name); err != nil {
		return err
	}
	return checkCustomSettings("", &c.Config.Value)
}

// linkable returns ids without repeats, lower-cased, each an application of the team.
//
// Errors: Invalid naming applicationIds[i] for an application the team does not have.
func linkable(ctx context.Context, q db.Querier, teamID int64, ids []oas.AiUuid) ([]oas.AiUuid, error) {
	out := []oas.AiUuid{}
	seen := map[string]bool{}
	for i, raw := range ids {
		id := strings.ToLower(string(raw))
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := getApplication(ctx, q, teamID, id); isNotFound(err) {
			return nil, apierror.Invalidf("applicationIds[%d]: no AI application %q in this team", i, raw)
		} else if err != nil {
			return nil, err
		}
		out = append(out, oas.AiUuid(id))
	}
	return out, nil
}

// CreateAiCustomEvaluation stores a new custom evaluation under a fresh id, linked to
// req.ApplicationIds.
//
// Errors: Invalid (see checkCustom and linkable); LimitExceeded when the team holds
// MaxCustomEvaluations.
func (h *Handler) CreateAiCustomEvaluation(ctx context.Context, req *oas.AiCustomEvaluationInput) (*oas.AiCustomEvaluationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	c := oas.AiCustomEvaluation{Name: req.Name, Description: req.Description, Config: oas.NewOptAiCustomEvaluationSettings(oas.AiCustomEvaluationSettings{
		PolicyType: req.PolicyType, Instructions: req.Instructions, Examples: req.Examples, Safe: req.Safe,
		Violates: req.Violates, ShouldIncludeSystemPrompt: req.ShouldIncludeSystemPrompt,
	})}
	if err := checkCustom(&c); err != nil {
		return nil, err
	}
	var stored oas.AiCustomEvaluation
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		links, err := linkable(ctx, tx, caller.TeamID, req.ApplicationIds)
		if err != nil {
			return err
		}
		if err := roomFor(ctx, tx, caller.TeamID, customBound); err != nil {
			return err
		}
		c.ID = oas.NewOptAiUuid(oas.AiUuid(tx.NewID()))
		if err := putCustom(ctx, tx, caller.TeamID, c, false); err != nil {
			return err
		}
		if err := setLinks(ctx, tx, caller.TeamID, string(c.ID.Value), links); err != nil {
			return err
		}
		stored, err = getCustom(ctx, tx, caller.TeamID, string(c.ID.Value))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiCustomEvaluationEnvelope{Item: oas.NewOptAiCustomEvaluation(stored)}, nil
}

// ListAiCustomEvaluations answers every custom evaluation of the team, oldest first.
func (h *Handler) ListAiCustomEvaluations(ctx context.Context) (*oas.AiCustomEvaluationList, error) {
	caller := auth.PrincipalFrom(ctx)
	list, err := listCustom(ctx, h.db.Read(), caller.TeamID, "")
	if err != nil {
		return nil, err
	}
	return &oas.AiCustomEvaluationList{Items: append([]oas.AiCustomEvaluation{}, list...)}, nil
}

// ListAiCustomEvaluationsForApplication answers the team's custom evaluations linked to the
// application params.ApplicationID, oldest first.
//
// Errors: NotFound when the team has no such application.
func (h *Handler) ListAiCustomEvaluationsForApplication(ctx context.Context, params oas.ListAiCustomEvaluationsForApplicationParams) (*oas.AiCustomEvaluationList, error) {
	caller := auth.PrincipalFrom(ctx)
	q := h.db.Read()
	appID := strings.ToLower(string(params.ApplicationID))
	if _, err := getApplication(ctx, q, caller.TeamID, appID); isNotFound(err) {
		return nil, applicationNotFound(string(params.ApplicationID))
	} else if err != nil {
		return nil, err
	}
	list, err := listCustom(ctx, q, caller.TeamID, appID)
	if err != nil {
		return nil, err
	}
	return &oas.AiCustomEvaluationList{Items: append([]oas.AiCustomEvaluation{}, list...)}, nil
}

// UpdateAiCustomEvaluation changes the fields of the custom evaluation params.ID that req names
// (see updateMask and touched) and checks the result as a create does; its links stay.
//
// Errors: NotFound when the team has no such custom evaluation; Invalid for a mask naming another
// field or clearing name, policyType or instructions, and see checkCustom.
func (h *Handler) UpdateAiCustomEvaluation(ctx context.Context, req *oas.AiCustomEvaluationUpdate, params oas.UpdateAiCustomEvaluationParams) (*oas.AiCustomEvaluationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	mask, err := updateMask(req.UpdateMask, customFields)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name    string
		present bool
	}{{"name", req.Name.Set}, {"policyType", req.PolicyType.Set}, {"instructions", req.Instructions.Set}} {
		if mask[f.name] && !f.present {
			return nil, apierror.Invalidf("updateMask: names %s, which the body leaves out; %s cannot be cleared", f.name, f.name)
		}
	}
	id := strings.ToLower(string(params.ID))
	var stored oas.AiCustomEvaluation
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		c, err := getCustom(ctx, tx, caller.TeamID, id)
		if isNotFound(err) {
			return customNotFound(string(params.ID))
		}
		if err != nil {
			return err
		}
		s := &c.Config.Value
		c.Config.Set = true
		if touched(mask, "name", req.Name.Set) {
			c.Name = req.Name
		}
		if touched(mask, "description", req.Description.Set) {
			c.Description = req.Description
		}
		if touched(mask, "policyType", req.PolicyType.Set) {
			s.PolicyType = req.PolicyType
		}
		if touched(mask, "instructions", req.Instructions.Set) {
			s.Instructions = req.Instructions
		}
		if touched(mask, "examples", req.Examples != nil) {
			s.Examples = req.Examples
		}
		if touched(mask, "safe", req.Safe.Set) {
			s.Safe = req.Safe
		}
		if touched(mask, "violates", req.Violates.Set) {
			s.Violates = req.Violates
		}
		if touched(mask, "shouldIncludeSystemPrompt", req.ShouldIncludeSystemPrompt.Set) {
			s.ShouldIncludeSystemPrompt = req.ShouldIncludeSystemPrompt
		}
		if err := checkCustom(&c); err != nil {
			return err
		}
		tx.AuditResource(id)
		if err := putCustom(ctx, tx, caller.TeamID, c, true); err != nil {
			return err
		}
		stored, err = getCustom(ctx, tx, caller.TeamID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiCustomEvaluationEnvelope{Item: oas.NewOptAiCustomEvaluation(stored)}, nil
}

// DeleteAiCustomEvaluation deletes the team's custom evaluation params.ID and its links.
//
// Errors: NotFound when the team has no such custom evaluation.
func (h *Handler) DeleteAiCustomEvaluation(ctx context.Context, params oas.DeleteAiCustomEvaluationParams) (*oas.AiDeleted, error) {
	return h.deleteOne(ctx, string(params.ID), deleteCustom, customNotFound)
}

// LinkAiCustomEvaluation links the custom evaluation params.ID to the application
// params.ApplicationID; linking twice changes nothing.
//
// Errors: NotFound when the team has no such custom evaluation; Invalid naming application_id
// when it has no such application.
func (h *Handler) LinkAiCustomEvaluation(ctx context.Context, params oas.LinkAiCustomEvaluationParams) (*oas.AiCustomEvaluationLink, error) {
	return h.changeLink(ctx, string(params.ID), string(params.ApplicationID), func(tx *db.Tx, teamID int64, id, appID string) error {
		if _, err := getApplication(ctx, tx, teamID, appID); isNotFound(err) {
			return apierror.Invalidf("application_id: no AI application %q in this team", params.ApplicationID)
		} else if err != nil {
			return err
		}
		return link(ctx, tx, teamID, id, appID)
	})
}

// UnlinkAiCustomEvaluation removes the link between the custom evaluation params.ID and the
// application params.ApplicationID; the evaluation may be left linked to nothing.
//
// Errors: NotFound when the team has no such custom evaluation or the two are not linked.
func (h *Handler) UnlinkAiCustomEvaluation(ctx context.Context, params oas.UnlinkAiCustomEvaluationParams) (*oas.AiCustomEvaluationLink, error) {
	return h.changeLink(ctx, string(params.ID), string(params.ApplicationID), func(tx *db.Tx, teamID int64, id, appID string) error {
		err := unlink(ctx, tx, teamID, id, appID)
		if isNotFound(err) {
			return apierror.NotFoundf("application_id: AI custom evaluation %q is not linked to application %q", params.ID, params.ApplicationID)
		}
		return err
	})
}

// changeLink runs change on the link between the caller's team's custom evaluation id and the
// application appID (both lower-cased), under the team's lock, and answers the pair.
//
// Errors: NotFound when the team has no such custom evaluation; change's.
func (h *Handler) changeLink(ctx context.Context, id, appID string, change func(tx *db.Tx, teamID int64, id, appID string) error) (*oas.AiCustomEvaluationLink, error) {
	caller := auth.PrincipalFrom(ctx)
	lowerID, lowerApp := strings.ToLower(id), strings.ToLower(appID)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		if _, err := getCustom(ctx, tx, caller.TeamID, lowerID); isNotFound(err) {
			return customNotFound(id)
		} else if err != nil {
			return err
		}
		tx.AuditResource(lowerID, lowerApp)
		return change(tx, caller.TeamID, lowerID, lowerApp)
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiCustomEvaluationLink{ID: oas.NewOptAiUuid(oas.AiUuid(lowerID)), ApplicationId: oas.NewOptAiUuid(oas.AiUuid(lowerApp))}, nil
}
