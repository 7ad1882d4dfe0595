// Package enrichments serves a team's enrichments (the public enrichments service: log fields
// enriched with geo-IP, suspicious-IP, AWS resource or custom data) and its custom enrichment
// data sets (the public custom enrichments service: CSV tables, parsed and stored row by row,
// read back with filters and paging). A custom enrichment names a data set, which therefore
// cannot be deleted while it is named. Every write takes the team's enrichment lock, so the
// limits and the references hold until commit.
package enrichments

import (
	"context"
	"slices"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// EnrichmentHandler implements the enrichment and data set operations of oas.Handler.
type EnrichmentHandler struct {
	db *db.DB
}

// NewHandler returns the enrichment and data set operations.
func NewHandler(database *db.DB) *EnrichmentHandler {
	return &EnrichmentHandler{db: database}
}

// ListEnrichments answers the team's enrichments in the order of their ids.
func (h *EnrichmentHandler) ListEnrichments(ctx context.Context) (*oas.EnrichmentList, error) {
	all, err := listEnrichments(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentList{Enrichments: all}, nil
}

// AddEnrichments stores each of the request's enrichments under a new id, all or none, and
// answers them.
//
// Errors: Invalid (checkInputs, checkReference); Forbidden without a kind's permission
// (checkPermissions); NotFound for a data set the team lacks; Conflict for a field enriched that
// way already; LimitExceeded past Limit.
func (h *EnrichmentHandler) AddEnrichments(ctx context.Context, req *oas.AddEnrichmentsRequest) (*oas.EnrichmentList, error) {
	caller := auth.PrincipalFrom(ctx)
	es, err := checkInputs("requestEnrichments", req.RequestEnrichments)
	if err != nil {
		return nil, err
	}
	if err := checkPermissions(caller, "add", es); err != nil {
		return nil, err
	}
	var added []oas.Enrichment
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		current, err := listEnrichments(ctx, tx, caller.TeamID)
		if err != nil {
			return err
		}
		added, err = store(ctx, tx, caller.TeamID, "requestEnrichments", current, es)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentList{Enrichments: added}, nil
}

// OverwriteEnrichments replaces the team's enrichments of each type the request holds (a custom
// enrichment's type being its data set) with the request's, in one transaction, and answers the
// enrichments of those types. The older form (enrichmentType with enrichmentFields) replaces the
// enrichments of that one type.
//
// Errors: Invalid when both forms are used, when enrichmentFields come without enrichmentType,
// and see AddEnrichments; the rest as AddEnrichments.
func (h *EnrichmentHandler) OverwriteEnrichments(ctx context.Context, req oas.OptOverwriteEnrichmentsRequest) (*oas.EnrichmentList, error) {
	caller := auth.PrincipalFrom(ctx)
	body := req.Or(oas.OverwriteEnrichmentsRequest{})
	field := "requestEnrichments"
	scopes := map[string]bool{}
	var es []oas.Enrichment
	var err error
	switch {
	case len(body.RequestEnrichments) > 0 && (body.EnrichmentType.Set || len(body.EnrichmentFields) > 0):
		return nil, apierror.Invalidf("requestEnrichments and enrichmentType: give the enrichments either as requestEnrichments or as enrichmentType with enrichmentFields, not both")
	case body.EnrichmentType.Set:
		field = "enrichmentFields"
		if err := checkKind("enrichmentType", body.EnrichmentType.Value); err != nil {
			return nil, err
		}
		ins := make([]oas.EnrichmentInput, len(body.EnrichmentFields))
		for i, f := range body.EnrichmentFields {
			ins[i] = oas.EnrichmentInput{FieldName: f.FieldName.Or(""), EnrichedFieldName: f.EnrichedFieldName,
				EnrichmentType: body.EnrichmentType.Value, SelectedColumns: f.SelectedColumns, Targets: f.Targets}
		}
		if es, err = checkInputs(field, ins); err != nil {
			return nil, err
		}
		scopes[scopeOf(body.EnrichmentType.Value)] = true
	case len(body.EnrichmentFields) > 0:
		return nil, apierror.Invalidf("enrichmentType: required with enrichmentFields; it is the type of every field")
	default:
		if es, err = checkInputs(field, body.RequestEnrichments); err != nil {
			return nil, err
		}
		for _, e := range es {
			scopes[scopeOf(e.EnrichmentType)] = true
		}
	}
	if err := checkPermissions(caller, "replace", es); err != nil {
		return nil, err
	}
	if body.EnrichmentType.Set {
		if err := checkPermissions(caller, "replace", []oas.Enrichment{{EnrichmentType: body.EnrichmentType.Value}}); err != nil {
			return nil, err
		}
	}
	inScope := func(e oas.Enrichment) bool { return scopes[scopeOf(e.EnrichmentType)] }
	added, err := h.replace(ctx, caller.TeamID, field, inScope, es, caller)
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentList{Enrichments: added}, nil
}

// OverwriteAllEnrichments makes the request's enrichments the team's whole set, in one
// transaction, and answers it.
//
// Errors: Forbidden when the caller lacks the permission of a kind removed or added; the rest as
// AddEnrichments.
func (h *EnrichmentHandler) OverwriteAllEnrichments(ctx context.Context, req oas.OptOverwriteAllEnrichmentsRequest) (*oas.EnrichmentList, error) {
	caller := auth.PrincipalFrom(ctx)
	es, err := checkInputs("requestEnrichments", req.Or(oas.OverwriteAllEnrichmentsRequest{}).RequestEnrichments)
	if err != nil {
		return nil, err
	}
	if err := checkPermissions(caller, "add", es); err != nil {
		return nil, err
	}
	added, err := h.replace(ctx, caller.TeamID, "requestEnrichments", func(e oas.Enrichment) bool {
		return true
	}, es, caller)
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentList{Enrichments: added}, nil
}

// replace removes the team's enrichments for which inScope holds and stores es in their place,
// in one transaction; when removers is given, its one principal must hold the permission of
// each kind removed.
func (h *EnrichmentHandler) replace(ctx context.Context, teamID int64, field string, inScope func(oas.Enrichment) bool,
	es []oas.Enrichment, removers ...*auth.Principal) ([]oas.Enrichment, error) {
	var added []oas.Enrichment
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, teamID); err != nil {
			return err
		}
		current, err := listEnrichments(ctx, tx, teamID)
		if err != nil {
			return err
		}
		var kept, removed []oas.Enrichment
		for _, e := range current {
			if inScope(e) {
				removed = append(removed, e)
			} else {
				kept = append(kept, e)
			}
		}
		for _, p := range removers {
			if err := checkPermissions(p, "remove", removed); err != nil {
				return err
			}
		}
		for _, e := range removed {
			if err := deleteEnrichment(ctx, tx, teamID, e.ID); err != nil {
				return err
			}
		}
		added, err = store(ctx, tx, teamID, field, kept, es)
		return err
	})
	return added, err
}

// RemoveEnrichments removes the enrichments enrichment_ids, all or none, and answers the ones
// left.
//
// Errors: NotFound naming the first id the team lacks; Forbidden without the permission of a
// kind removed.
func (h *EnrichmentHandler) RemoveEnrichments(ctx context.Context, params oas.RemoveEnrichmentsParams) (*oas.EnrichmentsRemaining, error) {
	caller := auth.PrincipalFrom(ctx)
	var left []oas.Enrichment
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		current, err := listEnrichments(ctx, tx, caller.TeamID)
		if err != nil {
			return err
		}
		var removed []oas.Enrichment
		for _, id := range params.EnrichmentIds {
			i := slices.IndexFunc(current, func(e oas.Enrichment) bool { return e.ID == id })
			if i < 0 {
				if slices.ContainsFunc(removed, func(e oas.Enrichment) bool { return e.ID == id }) {
					continue // listed twice
				}
				return apierror.NotFoundf("enrichment_ids: no enrichment %d in this team; nothing was removed", id)
			}
			removed = append(removed, current[i])
			current = slices.Delete(current, i, i+1)
		}
		if err := checkPermissions(caller, "remove", removed); err != nil {
			return err
		}
		for _, e := range removed {
			if err := deleteEnrichment(ctx, tx, caller.TeamID, e.ID); err != nil {
				return err
			}
		}
		left = current
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentsRemaining{RemainingEnrichments: left}, nil
}

// GetEnrichmentLimit answers Limit and how many enrichments the team holds.
func (h *EnrichmentHandler) GetEnrichmentLimit(ctx context.Context) (*oas.EnrichmentLimit, error) {
	n, err := countEnrichments(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentLimit{Limit: Limit, Used: n}, nil
}

// GetEnrichmentSettings answers the bounds that apply to the team, and how many enrichments it
// holds.
func (h *EnrichmentHandler) GetEnrichmentSettings(ctx context.Context) (*oas.EnrichmentSettingsEnvelope, error) {
	n, err := countEnrichments(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentSettingsEnvelope{EnrichmentSettings: oas.EnrichmentSettings{
		EnrichmentAmountLimit: oas.NewOptInt64(Limit), EnrichmentsInUse: oas.NewOptInt64(n),
		RowLimit: oas.NewOptInt64(MaxRows), SizeLimitBytes: oas.NewOptString(itoa(MaxFileBytes)),
		QueryOnlyRowLimit: oas.NewOptInt64(QueryOnlyMaxRows), QueryOnlySizeLimitBytes: oas.NewOptString(itoa(QueryOnlyMaxBytes)),
	}}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
