// Package ai serves a team's AI center (the public AI applications and AI evaluations services):
// the AI applications its evaluations run against, registered by the operator or a
// configuration document since mgmtapi ingests no spans; the team's custom prices per model;
// its AI evaluations (one built-in evaluation type with its settings, on an application named by
// name and subsystem); and its custom evaluations (a policy of its own for an LLM evaluator),
// linked to applications by id.
//
// Nothing here runs an evaluation: the stored configuration is what the operations read and
// change, and what the counts and filters are computed from.
package ai

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Handler implements the AI operations of oas.Handler, and the operator's registration of
// applications.
type Handler struct {
	db *db.DB
}

// NewHandler returns the AI operations over database.
func NewHandler(database *db.DB) *Handler {
	return &Handler{db: database}
}

// deleteOne deletes the caller's team's resource id (either case) with remove, under the team's
// lock, and answers its id; notFound words the answer when remove finds none.
func (h *Handler) deleteOne(ctx context.Context, id string, remove func(context.Context, *db.Tx, int64, string) error,
	notFound func(string) error) (*oas.AiDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	lower := strings.ToLower(id)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		tx.AuditResource(lower)
		err := remove(ctx, tx, caller.TeamID, lower)
		if isNotFound(err) {
			return notFound(id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiDeleted{ID: oas.NewOptAiUuid(oas.AiUuid(lower))}, nil
}

// coverage is, for each evaluation type, the ids of the team's applications it covers.
type coverage map[string]map[string]bool

// covers reads which of apps each evaluation type covers: an AI evaluation covers the
// applications of its application name whose subsystem it names (every one when it names none);
// a custom evaluation covers, under CUSTOM_EVALUATION, the applications it is linked to.
func covers(ctx context.Context, q db.Querier, teamID int64, apps []application) (coverage, error) {
	evals, err := listEvaluations(ctx, q, teamID, evaluationFilter{})
	if err != nil {
		return nil, err
	}
	links, err := allLinks(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := coverage{}
	add := func(typ, appID string) {
		if out[typ] == nil {
			out[typ] = map[string]bool{}
		}
		out[typ][appID] = true
	}
	for _, e := range evals {
		name, sub := e.Doc.Application.Or(""), e.Doc.Subsystem.Or("")
		for _, a := range apps {
			if a.Application == name && (sub == "" || sub == a.Subsystem) {
				add(e.Type, a.ID)
			}
		}
	}
	known := map[string]bool{}
	for _, a := range apps {
		known[a.ID] = true
	}
	for _, ids := range links {
		for _, id := range ids {
			if known[string(id)] {
				add("CUSTOM_EVALUATION", string(id))
			}
		}
	}
	return out, nil
}
