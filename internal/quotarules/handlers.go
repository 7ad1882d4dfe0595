// Package quotarules serves each team's quota allocation rule set: E25 create (version 4 shape),
// E24 replace (version 5 shape), and the read and delete operations. A team holds at most one set;
// creating a second is a conflict and replacing a missing one is not found.
package quotarules

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// QuotaRuleHandler implements the quota rule set operations of oas.Handler.
type QuotaRuleHandler struct {
	db *db.DB
}

// NewHandler returns the quota rule set operations.
func NewHandler(database *db.DB) *QuotaRuleHandler { return &QuotaRuleHandler{db: database} }

// CreateQuotaRuleSet stores the team's first rule set under a new id and answers in the version 4
// shape (E25, under segment 4).
//
// Errors: Invalid (see fromInput); Conflict when the team already has a set.
func (h *QuotaRuleHandler) CreateQuotaRuleSet(ctx context.Context, req *oas.QuotaRuleSetRequest) (*oas.QuotaRuleSetV4Response, error) {
	set, err := h.create(ctx, req)
	if err != nil {
		return nil, err
	}
	return &oas.QuotaRuleSetV4Response{RuleSet: v4(set)}, nil
}

// CreateQuotaRuleSetV5 is CreateQuotaRuleSet answering the newest shape, in which each rule
// carries allocationType and platformManaged (E25 under every segment but 4).
//
// Errors: as CreateQuotaRuleSet.
func (h *QuotaRuleHandler) CreateQuotaRuleSetV5(ctx context.Context, req *oas.QuotaRuleSetRequest) (*oas.QuotaRuleSetResponse, error) {
	set, err := h.create(ctx, req)
	if err != nil {
		return nil, err
	}
	return &oas.QuotaRuleSetResponse{RuleSet: set}, nil
}

// create stores the team's first rule set under a new id.
func (h *QuotaRuleHandler) create(ctx context.Context, req *oas.QuotaRuleSetRequest) (oas.QuotaRuleSet, error) {
	caller := auth.PrincipalFrom(ctx)
	rules, err := fromInput(req.RuleSet)
	if err != nil {
		return oas.QuotaRuleSet{}, err
	}
	var set oas.QuotaRuleSet
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		set = oas.QuotaRuleSet{ID: tx.NewID(), Rules: rules}
		created, err := insertSet(ctx, tx, caller.TeamID, set)
		if err != nil {
			return err
		}
		if !created {
			return apierror.Conflictf("ruleSet: the team already has a quota allocation rule set; replace it with PUT /mgmt/openapi/5/dataplan/quota-rules/v1 or delete it first")
		}
		return nil
	})
	return set, err
}

// ReplaceQuotaRuleSet replaces every rule of the team's set, keeping its id (E24).
//
// Errors: Invalid (see fromInput); NotFound when the team has no set, or ruleSet.id names another.
func (h *QuotaRuleHandler) ReplaceQuotaRuleSet(ctx context.Context, req *oas.QuotaRuleSetRequest) (*oas.QuotaRuleSetResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	rules, err := fromInput(req.RuleSet)
	if err != nil {
		return nil, err
	}
	var set oas.QuotaRuleSet
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		cur, err := getSet(ctx, tx, caller.TeamID)
		if err != nil {
			return err
		}
		if id, ok := req.RuleSet.ID.Get(); ok && id != cur.ID {
			return db.ErrNotFound
		}
		set = oas.QuotaRuleSet{ID: cur.ID, Rules: rules}
		return replaceSet(ctx, tx, caller.TeamID, set)
	})
	if err != nil {
		return nil, notFoundAs(err)
	}
	return &oas.QuotaRuleSetResponse{RuleSet: set}, nil
}

// GetQuotaRuleSet returns the team's set in the version 5 shape.
//
// Errors: NotFound when the team has no set, or id names another.
func (h *QuotaRuleHandler) GetQuotaRuleSet(ctx context.Context, params oas.GetQuotaRuleSetParams) (*oas.QuotaRuleSetResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	set, err := getSet(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, notFoundAs(err)
	}
	if id, ok := params.ID.Get(); ok && id != set.ID {
		return nil, notFoundAs(db.ErrNotFound)
	}
	return &oas.QuotaRuleSetResponse{RuleSet: set}, nil
}

// DeleteQuotaRuleSet removes the team's set and returns its id.
//
// Errors: NotFound when the team has no set.
func (h *QuotaRuleHandler) DeleteQuotaRuleSet(ctx context.Context) (*oas.QuotaRuleSetDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	var id string
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		var err error
		id, err = deleteSet(ctx, tx, caller.TeamID)
		return err
	})
	if err != nil {
		return nil, notFoundAs(err)
	}
	return &oas.QuotaRuleSetDeleted{ID: id}, nil
}

func notFoundAs(err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("ruleSet: the team has no such quota allocation rule set")
	}
	return err
}
