package ai

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// answer is the pricing as the operations answer it.
func (p pricing) answer(teamID int64) oas.AiModelPricing {
	return oas.AiModelPricing{
		ID: oas.NewOptAiUuid(oas.AiUuid(p.ID)), CompanyId: oas.NewOptString(companyID(teamID)),
		Prices: oas.NewOptAiModelPricingPrices(p.Prices),
	}
}

// GetAiModelPricing answers the team's prices; pricing is left out while it has none.
func (h *Handler) GetAiModelPricing(ctx context.Context) (*oas.AiModelPricingEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	p, err := getPricing(ctx, h.db.Read(), caller.TeamID)
	if isNotFound(err) {
		return &oas.AiModelPricingEnvelope{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &oas.AiModelPricingEnvelope{Pricing: oas.NewOptAiModelPricing(p.answer(caller.TeamID))}, nil
}

// SetAiModelPricing replaces the team's prices with req.Prices; the record keeps its id.
//
// Errors: Invalid (see checkPrices).
func (h *Handler) SetAiModelPricing(ctx context.Context, req *oas.AiModelPricingInput) (*oas.AiModelPricingEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := checkPrices(req.Prices); err != nil {
		return nil, err
	}
	p := pricing{Prices: oas.AiModelPricingPrices(req.Prices)}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return setPricing(ctx, tx, caller.TeamID, &p)
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiModelPricingEnvelope{Pricing: oas.NewOptAiModelPricing(p.answer(caller.TeamID))}, nil
}

// setPricing stores p as the team's pricing under the id of the one it has (p.ID when set and
// it has none, else a fresh one), and sets p.ID.
func setPricing(ctx context.Context, tx *db.Tx, teamID int64, p *pricing) error {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	old, err := getPricing(ctx, tx, teamID)
	switch {
	case err == nil:
		p.ID = old.ID
		tx.AuditResource(p.ID)
	case isNotFound(err) && p.ID != "":
		tx.AuditResource(p.ID)
	case isNotFound(err):
		p.ID = tx.NewID()
	default:
		return err
	}
	return putPricing(ctx, tx, teamID, *p)
}

// DeleteAiModelPricing removes the team's prices.
//
// Errors: NotFound while it has none.
func (h *Handler) DeleteAiModelPricing(ctx context.Context) (*oas.AiDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	var id string
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		p, err := getPricing(ctx, tx, caller.TeamID)
		if isNotFound(err) {
			return apierror.NotFoundf("the team has no custom model pricing")
		}
		if err != nil {
			return err
		}
		id = p.ID
		tx.AuditResource(id)
		return deletePricing(ctx, tx, caller.TeamID)
	})
	if err != nil {
		return nil, err
	}
	return &oas.AiDeleted{ID: oas.NewOptAiUuid(oas.AiUuid(id))}, nil
}
