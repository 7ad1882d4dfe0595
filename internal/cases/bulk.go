package cases

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// overridePriority is the priority-override rule: the case shows override ("" removes the
// override and the system priority shows again) and a change writes priorityDetailsChanged. A
// closed case refuses it; the current override is a no-op.
func overridePriority(override oas.CasePriority) caseChange {
	return func(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
		if c.Status == oas.CaseStatusCASESTATUSCLOSED {
			return false, conflictf(c, "a closed case cannot change")
		}
		if override == c.PriorityOverride {
			return false, nil
		}
		before := *c
		c.PriorityOverride = override
		_, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, priorityChanged(&before, c), tx.Now)
		return err == nil, err
	}
}

// checkOverride refuses CASE_PRIORITY_UNSPECIFIED as an override: clearing has its own operation.
//
// Errors: Invalid naming field.
func checkOverride(field string, p oas.CasePriority) error {
	if p == oas.CasePriorityCASEPRIORITYUNSPECIFIED {
		return apierror.Invalidf("%s: must be one of CASE_PRIORITY_P1 to CASE_PRIORITY_P5; remove an override with DELETE", field)
	}
	return nil
}

// bulk applies fn to every case that idents name, in one transaction: all of them change or none
// does. The cases are locked in the order of their ids (so two bulk calls cannot deadlock), a
// case named twice (by id and readable id, say) is changed once, and each changed case is saved
// as a human change (touch). The answer lists the cases as the transaction left them, in the
// order idents first name them.
//
// Errors: NotFound naming ids[i] when the team has no such case; the errors of fn (Conflict
// for a case whose status refuses the operation), prefixed with ids[i].
func (h *CaseHandler) bulk(ctx context.Context, idents []oas.CaseIdentifier, fn caseChange) (*oas.BulkCasesResponse, error) {
	caller, actor := callerActor(ctx)
	out := &oas.BulkCasesResponse{Cases: []oas.Case{}}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out.Cases = out.Cases[:0] // InTx may run this again
		var order []string
		position := map[string]int{}
		looked := map[oas.CaseIdentifier]bool{}
		for i, ident := range idents {
			if looked[ident] {
				continue // the same text names the same case: look it up once
			}
			looked[ident] = true
			c, err := findCase(ctx, tx, tx.Engine, caller.TeamID, string(ident), false)
			if err != nil {
				return withIndex(i, err)
			}
			if _, seen := position[c.ID]; !seen {
				position[c.ID] = i
				order = append(order, c.ID)
			}
		}
		locking := append([]string(nil), order...)
		sort.Strings(locking)
		changed := map[string]caseRow{}
		for _, id := range locking {
			c, err := lockCaseByID(ctx, tx, caller.TeamID, id)
			if err != nil {
				return err
			}
			moved, err := fn(ctx, tx, &c, actor)
			if err != nil {
				return withIndex(position[id], err)
			}
			if moved {
				if err := touch(ctx, tx, &c); err != nil {
					return err
				}
			}
			changed[id] = c
		}
		breaches, err := loadBreaches(ctx, tx, caller.TeamID, order)
		if err != nil {
			return err
		}
		for _, id := range order {
			built, err := caseFromRow(changed[id], breaches[id], tx.Now)
			if err != nil {
				return err
			}
			out.Cases = append(out.Cases, built)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// withIndex names the element of ids that an API error is about; other errors pass unchanged.
func withIndex(i int, err error) error {
	var e *apierror.Error
	if errors.As(err, &e) {
		// A lookup names the path parameter of the single operations; here the case is ids[i].
		message := strings.TrimPrefix(e.Message, "case_id: ")
		return &apierror.Error{Kind: e.Kind, Message: "ids[" + strconv.Itoa(i) + "]: " + message}
	}
	return err
}

// BulkAcknowledgeCases acknowledges every listed case as AcknowledgeCase does, all or nothing.
// The request's actor (a user id) is accepted, but the events record the calling key as actor,
// as every change made through the API does.
//
// Errors: NotFound or Conflict naming ids[i] (see bulk).
func (h *CaseHandler) BulkAcknowledgeCases(ctx context.Context, req *oas.CaseBulkAcknowledgeInput) (*oas.BulkCasesResponse, error) {
	return h.bulk(ctx, req.Ids, acknowledge)
}

// BulkAssignCases assigns every listed case to one user as AssignCase does, all or nothing.
//
// Errors: NotFound or Conflict naming ids[i] (see bulk).
func (h *CaseHandler) BulkAssignCases(ctx context.Context, req *oas.CaseBulkAssignInput) (*oas.BulkCasesResponse, error) {
	return h.bulk(ctx, req.Ids, assignTo(string(req.Assignee.UserId)))
}

// BulkUnassignCases removes the assignee of every listed case as UnassignCase does, all or
// nothing.
//
// Errors: NotFound or Conflict naming ids[i] (see bulk).
func (h *CaseHandler) BulkUnassignCases(ctx context.Context, params oas.BulkUnassignCasesParams) (*oas.BulkCasesResponse, error) {
	return h.bulk(ctx, params.Ids, unassign)
}

// BulkCloseCases closes every listed case as CloseCase does, all or nothing.
//
// Errors: NotFound naming ids[i] (see bulk).
func (h *CaseHandler) BulkCloseCases(ctx context.Context, req *oas.BulkCaseIDsRequest) (*oas.BulkCasesResponse, error) {
	return h.bulk(ctx, req.Ids, closeCase)
}

// BulkResolveCases resolves every listed case as ResolveCase does, with the same optional
// reason, all or nothing.
//
// Errors: Invalid for a blank reason; NotFound or Conflict naming ids[i] (see bulk).
func (h *CaseHandler) BulkResolveCases(ctx context.Context, req *oas.CaseBulkResolveInput) (*oas.BulkCasesResponse, error) {
	reason, hasReason, err := checkReason(req.Reason)
	if err != nil {
		return nil, err
	}
	return h.bulk(ctx, req.Ids, resolveWith(reason, hasReason))
}

// SetCasePriorityOverride makes the case show priority instead of its system priority, with a
// priorityDetailsChanged event; the current override changes nothing.
//
// Errors: Invalid for CASE_PRIORITY_UNSPECIFIED; NotFound when the team has no such case;
// Conflict when the case is closed.
func (h *CaseHandler) SetCasePriorityOverride(ctx context.Context, req *oas.CasePriorityOverrideInput, params oas.SetCasePriorityOverrideParams) (*oas.CaseResponse, error) {
	if err := checkOverride("priority", req.Priority); err != nil {
		return nil, err
	}
	return h.change(ctx, string(params.CaseID), overridePriority(req.Priority))
}

// ClearCasePriorityOverride makes the case show its system priority again, with a
// priorityDetailsChanged event; a case without override is answered unchanged.
//
// Errors: NotFound when the team has no such case; Conflict when the case is closed.
func (h *CaseHandler) ClearCasePriorityOverride(ctx context.Context, params oas.ClearCasePriorityOverrideParams) (*oas.CaseResponse, error) {
	return h.change(ctx, string(params.CaseID), overridePriority(""))
}

// BulkSetCasePriorityOverride sets the same override on every listed case as
// SetCasePriorityOverride does, all or nothing.
//
// Errors: Invalid for CASE_PRIORITY_UNSPECIFIED; NotFound or Conflict naming ids[i] (see bulk).
func (h *CaseHandler) BulkSetCasePriorityOverride(ctx context.Context, req *oas.CaseBulkPriorityOverrideInput) (*oas.BulkCasesResponse, error) {
	if err := checkOverride("priority", req.Priority); err != nil {
		return nil, err
	}
	return h.bulk(ctx, req.Ids, overridePriority(req.Priority))
}

// BulkClearCasePriorityOverride clears the override of every listed case as
// ClearCasePriorityOverride does, all or nothing.
//
// Errors: NotFound or Conflict naming ids[i] (see bulk).
func (h *CaseHandler) BulkClearCasePriorityOverride(ctx context.Context, params oas.BulkClearCasePriorityOverrideParams) (*oas.BulkCasesResponse, error) {
	return h.bulk(ctx, params.Ids, overridePriority(""))
}
