package ai

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// evaluationFields are the fields of an AI evaluation an update may name in its mask.
var evaluationFields = []string{"application", "subsystem", "config", "target", "threshold", "isEnabled"}

// evaluationNotFound is the answer for an evaluation the team does not have.
func evaluationNotFound(id string) error {
	return apierror.NotFoundf("no AI evaluation %q in this team", id)
}

// creatorOf is the createdBy of what the caller creates: its key's id when that is a UUID.
func creatorOf(p *auth.Principal) string {
	if p == nil {
		return ""
	}
	if id, err := uuid.Parse(p.KeyID); err == nil && len(p.KeyID) == 36 {
		return id.String()
	}
	return ""
}

// CreateAiEvaluation stores a new evaluation under a fresh id.
//
// Errors: Invalid (see checkEvaluation); LimitExceeded when the team holds MaxEvaluations.
func (h *Handler) CreateAiEvaluation(ctx context.Context, req *oas.AiEvaluationInput) (*oas.AiEvaluationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	e := evaluation{CreatedBy: creatorOf(caller), Doc: oas.AiEvaluation{
		Application: req.Application, Subsystem: req.Subsystem, Config: req.Config, Target: req.Target,
		Threshold: req.Threshold, IsEnabled: oas.NewOptBool(req.IsEnabled.Or(false)),
	}}
	typ, err := checkEvaluation(&e.Doc)
	if err != nil {
		return nil, err
	}
	e.Type = typ
	var stored evaluation
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		if err := roomFor(ctx, tx, caller.TeamID, evaluationsBound); err != nil {
			return err
		}
		e.Doc.ID = oas.NewOptAiUuid(oas.AiUuid(tx.NewID()))
		if err := putEvaluation(ctx, tx, caller.TeamID, e, false); err != nil {
			return err
		}
		stored, err = getEvaluation(ctx, tx, caller.TeamID, string(e.Doc.ID.Value))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiEvaluationEnvelope{AiEvaluation: oas.NewOptAiEvaluation(stored.answer(caller.TeamID))}, nil
}

// GetAiEvaluation answers the team's evaluation params.ID.
//
// Errors: NotFound when the team has no such evaluation.
func (h *Handler) GetAiEvaluation(ctx context.Context, params oas.GetAiEvaluationParams) (*oas.AiEvaluationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	e, err := getEvaluation(ctx, h.db.Read(), caller.TeamID, strings.ToLower(string(params.ID)))
	if isNotFound(err) {
		return nil, evaluationNotFound(string(params.ID))
	}
	if err != nil {
		return nil, err
	}
	return &oas.AiEvaluationEnvelope{AiEvaluation: oas.NewOptAiEvaluation(e.answer(caller.TeamID))}, nil
}

// ListAiEvaluations answers one page of the team's evaluations of the params' application,
// subsystem and type, oldest first.
func (h *Handler) ListAiEvaluations(ctx context.Context, params oas.ListAiEvaluationsParams) (*oas.AiEvaluationList, error) {
	caller := auth.PrincipalFrom(ctx)
	limit, skip := page(params.PageSize, params.PageOffset)
	list, err := listEvaluations(ctx, h.db.Read(), caller.TeamID, evaluationFilter{
		Application: params.Application.Or(""), Subsystem: params.Subsystem.Or(""),
		Type: string(params.EvaluationType.Or("")), Limit: limit, Offset: skip,
	})
	if err != nil {
		return nil, err
	}
	out := &oas.AiEvaluationList{AiEvaluations: []oas.AiEvaluation{}}
	for _, e := range list {
		out.AiEvaluations = append(out.AiEvaluations, e.answer(caller.TeamID))
	}
	return out, nil
}

// UpdateAiEvaluation changes the fields of the evaluation params.ID that req names (see
// updateMask and touched) and checks the result as a create does.
//
// Errors: NotFound when the team has no such evaluation; Invalid for a mask naming another field
// or clearing application, target or config, and see checkEvaluation.
func (h *Handler) UpdateAiEvaluation(ctx context.Context, req *oas.AiEvaluationUpdate, params oas.UpdateAiEvaluationParams) (*oas.AiEvaluationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	mask, err := updateMask(req.UpdateMask, evaluationFields)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name    string
		present bool
	}{{"application", req.Application.Set}, {"target", req.Target.Set}, {"config", req.Config.Set}} {
		if mask[f.name] && !f.present {
			return nil, apierror.Invalidf("updateMask: names %s, which the body leaves out; %s cannot be cleared", f.name, f.name)
		}
	}
	id := strings.ToLower(string(params.ID))
	var stored evaluation
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		e, err := getEvaluation(ctx, tx, caller.TeamID, id)
		if isNotFound(err) {
			return evaluationNotFound(string(params.ID))
		}
		if err != nil {
			return err
		}
		d := &e.Doc
		if touched(mask, "application", req.Application.Set) {
			d.Application = req.Application
		}
		if touched(mask, "subsystem", req.Subsystem.Set) {
			d.Subsystem = req.Subsystem
		}
		if touched(mask, "config", req.Config.Set) {
			d.Config = req.Config
		}
		if touched(mask, "target", req.Target.Set) {
			d.Target = req.Target
		}
		if touched(mask, "threshold", req.Threshold.Set) {
			d.Threshold = req.Threshold
		}
		if touched(mask, "isEnabled", req.IsEnabled.Set) {
			d.IsEnabled = oas.NewOptBool(req.IsEnabled.Or(false))
		}
		if e.Type, err = checkEvaluation(d); err != nil {
			return err
		}
		tx.AuditResource(id)
		if err := putEvaluation(ctx, tx, caller.TeamID, e, true); err != nil {
			return err
		}
		stored, err = getEvaluation(ctx, tx, caller.TeamID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiEvaluationEnvelope{AiEvaluation: oas.NewOptAiEvaluation(stored.answer(caller.TeamID))}, nil
}

// DeleteAiEvaluation deletes the team's evaluation params.ID.
//
// Errors: NotFound when the team has no such evaluation.
func (h *Handler) DeleteAiEvaluation(ctx context.Context, params oas.DeleteAiEvaluationParams) (*oas.AiDeleted, error) {
	return h.deleteOne(ctx, string(params.ID), deleteEvaluation, evaluationNotFound)
}

// CountAiApplicationsPerEvaluationType answers, for every evaluation type, how many of the
// team's applications it covers (see covers).
func (h *Handler) CountAiApplicationsPerEvaluationType(ctx context.Context) (*oas.AiEvaluationCounts, error) {
	caller := auth.PrincipalFrom(ctx)
	q := h.db.Read()
	apps, err := listApplications(ctx, q, caller.TeamID)
	if err != nil {
		return nil, err
	}
	cov, err := covers(ctx, q, caller.TeamID, apps)
	if err != nil {
		return nil, err
	}
	counts := oas.AiEvaluationCountsCounts{}
	for _, t := range EvaluationTypes() {
		counts[t] = int64(len(cov[t]))
	}
	return &oas.AiEvaluationCounts{Counts: oas.NewOptAiEvaluationCountsCounts(counts)}, nil
}
