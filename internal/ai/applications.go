package ai

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// applicationNotFound is the answer for an application the team does not have.
func applicationNotFound(id string) error {
	return apierror.NotFoundf("no AI application %q in this team", id)
}

// ListAiApplications answers one page of the team's applications, ordered by name and
// subsystem; with EvaluationTypes, only those that one of the types covers (see covers).
func (h *Handler) ListAiApplications(ctx context.Context, params oas.ListAiApplicationsParams) (*oas.AiApplicationList, error) {
	caller := auth.PrincipalFrom(ctx)
	q := h.db.Read()
	apps, err := listApplications(ctx, q, caller.TeamID)
	if err != nil {
		return nil, err
	}
	if len(params.EvaluationTypes) > 0 {
		cov, err := covers(ctx, q, caller.TeamID, apps)
		if err != nil {
			return nil, err
		}
		kept := apps[:0]
		for _, a := range apps {
			for _, t := range params.EvaluationTypes {
				if cov[string(t)][a.ID] {
					kept = append(kept, a)
					break
				}
			}
		}
		apps = kept
	}
	limit, skip := page(params.PageSize, params.PageOffset)
	out := &oas.AiApplicationList{AiApplications: []oas.AiApplication{}}
	for i := skip; i < int64(len(apps)) && i < skip+limit; i++ {
		out.AiApplications = append(out.AiApplications, apps[i].answer(caller.TeamID))
	}
	return out, nil
}

// GetAiApplication answers the team's application params.ID.
//
// Errors: NotFound when the team has no such application.
func (h *Handler) GetAiApplication(ctx context.Context, params oas.GetAiApplicationParams) (*oas.AiApplicationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	a, err := getApplication(ctx, h.db.Read(), caller.TeamID, strings.ToLower(string(params.ID)))
	if isNotFound(err) {
		return nil, applicationNotFound(string(params.ID))
	}
	if err != nil {
		return nil, err
	}
	return &oas.AiApplicationEnvelope{AiApplication: oas.NewOptAiApplication(a.answer(caller.TeamID))}, nil
}

// DeleteAiApplication deletes the team's application params.ID and its links to custom
// evaluations; AI evaluations, which name applications by name, stay.
//
// Errors: NotFound when the team has no such application.
func (h *Handler) DeleteAiApplication(ctx context.Context, params oas.DeleteAiApplicationParams) (*oas.AiDeleted, error) {
	return h.deleteOne(ctx, string(params.ID), deleteApplication, applicationNotFound)
}

// AdminRegisterAiApplication registers an application of the team params.TeamID: a new one
// under a fresh id, or, for a name and subsystem the team has, the same one with the request's
// guardrails flag.
//
// Errors: NotFound when there is no such team; Invalid for a blank name; LimitExceeded when the
// team holds MaxApplications.
func (h *Handler) AdminRegisterAiApplication(ctx context.Context, req *oas.AiApplicationRegistration, params oas.AdminRegisterAiApplicationParams) (*oas.AiApplicationEnvelope, error) {
	a := application{Application: req.Application, Subsystem: req.Subsystem.Or(""), Guardrails: req.GuardrailsIntegrated.Or(false)}
	if err := checkApplication(a); err != nil {
		return nil, err
	}
	var stored application
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := teamExists(ctx, tx, params.TeamID); err != nil {
			return err
		}
		tx.AuditTeam(params.TeamID)
		if err := lockTeam(ctx, tx, params.TeamID); err != nil {
			return err
		}
		old, err := applicationByName(ctx, tx, params.TeamID, a.Application, a.Subsystem)
		switch {
		case err == nil:
			a.ID = old.ID
			tx.AuditResource(a.ID)
			err = updateApplication(ctx, tx, params.TeamID, a)
		case isNotFound(err):
			if err := roomFor(ctx, tx, params.TeamID, applicationsBound); err != nil {
				return err
			}
			a.ID = tx.NewID()
			err = insertApplication(ctx, tx, params.TeamID, a)
		}
		if err != nil {
			return err
		}
		stored, err = getApplication(ctx, tx, params.TeamID, a.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiApplicationEnvelope{AiApplication: oas.NewOptAiApplication(stored.answer(params.TeamID))}, nil
}

// checkApplication checks an application's name and subsystem.
//
// Errors: Invalid naming the field.
func checkApplication(a application) error {
	if strings.TrimSpace(a.Application) == "" || len([]rune(a.Application)) > 256 {
		return apierror.Invalidf("application: must have 1 to 256 characters and not be blank")
	}
	if len([]rune(a.Subsystem)) > 256 {
		return apierror.Invalidf("subsystem: at most 256 characters")
	}
	if a.Subsystem != "" && strings.TrimSpace(a.Subsystem) == "" {
		return apierror.Invalidf("subsystem: must not be blank; leave it out (or empty) for none")
	}
	return nil
}

// teamExists answers NotFound when there is no team id.
func teamExists(ctx context.Context, q db.Querier, id int64) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM teams WHERE id = $1`, id).Scan(&one)
	if isNotFound(db.Translate(err)) {
		return apierror.NotFoundf("team_id: no team %d", id)
	}
	return err
}
