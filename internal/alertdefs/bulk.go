package alertdefs

import (
	"context"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// BulkCreateAlertDefs creates every definition of the request in one transaction, or none: the
// first refused one is the answer, naming alertDefsToCreate[i].
//
// Errors: as CreateAlertDef, naming the entry.
func (h *AlertDefHandler) BulkCreateAlertDefs(ctx context.Context, req *oas.AlertDefBulkCreate) (*oas.AlertDefBulkCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	props := make([]oas.AlertDefProperties, len(req.AlertDefsToCreate))
	for i, c := range req.AlertDefsToCreate {
		props[i] = c.AlertDefProperties
		if err := checkProperties(fmt.Sprintf("alertDefsToCreate[%d].alertDefProperties", i), &props[i]); err != nil {
			return nil, err
		}
	}
	out := &oas.AlertDefBulkCreated{AlertDefs: []oas.AlertDef{}, FailedToCreateAlertDefs: []oas.AlertDefCreateFailure{}}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out.AlertDefs = out.AlertDefs[:0]
		if err := lock(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		for i, c := range req.AlertDefsToCreate {
			d, err := create(ctx, tx, caller.TeamID, fmt.Sprintf("alertDefsToCreate[%d].alertDefProperties", i), "", props[i], policyOf(c.AccessPolicy))
			if err != nil {
				return err
			}
			out.AlertDefs = append(out.AlertDefs, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BulkReplaceAlertDefs replaces every definition of the request in one transaction, or none.
//
// Errors: Invalid for an id given twice, and as ReplaceAlertDef, naming the entry; NotFound
// naming alertDefsToReplace[i].id.
func (h *AlertDefHandler) BulkReplaceAlertDefs(ctx context.Context, req *oas.AlertDefBulkReplace) (*oas.AlertDefBulkReplaced, error) {
	caller := auth.PrincipalFrom(ctx)
	props := make([]oas.AlertDefProperties, len(req.AlertDefsToReplace))
	seen := map[string]int{}
	for i, r := range req.AlertDefsToReplace {
		at := fmt.Sprintf("alertDefsToReplace[%d]", i)
		id := canonicalID(r.ID.Or(""))
		if id == "" {
			return nil, apierror.Invalidf("%s.id: required; it names the alert definition to replace", at)
		}
		if j, dup := seen[id]; dup {
			return nil, apierror.Invalidf("%s.id: %q is also alertDefsToReplace[%d]; replace a definition once per request", at, r.ID.Or(""), j)
		}
		seen[id] = i
		p, ok := r.AlertDefProperties.Get()
		if !ok {
			return nil, apierror.Invalidf("%s.alertDefProperties: required", at)
		}
		if err := checkAccessPolicyAction(at+".accessPolicy", r.AccessPolicy); err != nil {
			return nil, err
		}
		if err := checkProperties(at+".alertDefProperties", &p); err != nil {
			return nil, err
		}
		props[i] = p
	}
	out := &oas.AlertDefBulkReplaced{
		AlertDefs: []oas.AlertDef{}, FailedToReplaceAlertDefs: []oas.AlertDefReplaceFailure{},
		NotFoundIds: []string{}, SkippedIds: []string{},
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out.AlertDefs = out.AlertDefs[:0]
		if err := lock(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		for i, r := range req.AlertDefsToReplace {
			at := fmt.Sprintf("alertDefsToReplace[%d]", i)
			d, err := replace(ctx, tx, caller.TeamID, at+".id", at+".alertDefProperties", canonicalID(r.ID.Or("")), props[i], r.AccessPolicy)
			if err != nil {
				return err
			}
			out.AlertDefs = append(out.AlertDefs, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BulkDeleteAlertDefs deletes the named definitions in one transaction, or none; ids that name
// no definition of the team are answered in notFoundIds.
//
// Errors: Conflict naming the flow definitions, outside the request, that name one of them.
func (h *AlertDefHandler) BulkDeleteAlertDefs(ctx context.Context, req *oas.AlertDefBulkDelete) (*oas.AlertDefBulkDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	var ids []string
	index := map[string]int{}
	except := map[string]bool{}
	for i, raw := range req.Ids {
		id := canonicalID(raw)
		if !except[id] {
			except[id] = true
			index[id] = i
			ids = append(ids, id)
		}
	}
	out := &oas.AlertDefBulkDeleted{DeletedIds: []string{}, NotFoundIds: []string{}}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out.DeletedIds, out.NotFoundIds = out.DeletedIds[:0], out.NotFoundIds[:0]
		if err := LockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := getDef(ctx, tx, caller.TeamID, id); err != nil {
				if errors.Is(err, db.ErrNotFound) {
					out.NotFoundIds = append(out.NotFoundIds, id)
					continue
				}
				return err
			}
			if err := remove(ctx, tx, caller.TeamID, fmt.Sprintf("ids[%d]", index[id]), id, except); err != nil {
				return err
			}
			out.DeletedIds = append(out.DeletedIds, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
