// Package policies serves data-plan policies (E8 create, E9 span-policy overwrite, and the list,
// get, update, delete, reorder and log/RUM overwrite operations, the usage forecast of a draft
// policy and the test of log policies against sample entries) and the team's default policy
// priorities (E10 and its read). A team holds at most a configured number of policies per data
// type (logs, spans, RUM); a write that would pass it answers 429 and changes nothing.
package policies

import (
	"context"
	"errors"
	"sort"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefaultLimit is the policy limit per team and data type when none is configured.
const DefaultLimit = 200

// PolicyHandler implements the policy operations of oas.Handler.
type PolicyHandler struct {
	db    *db.DB
	limit int
}

// NewHandler returns the policy operations; limit is the most policies a team may hold per data
// type (DefaultLimit when below 1).
func NewHandler(database *db.DB, limit int) *PolicyHandler {
	if limit < 1 {
		limit = DefaultLimit
	}
	return &PolicyHandler{db: database, limit: limit}
}

// CreatePolicy stores a new policy first or last among the team's policies of its type (E8).
//
// Errors: Invalid (see fromCreate); LimitExceeded when the team already holds the limit.
func (h *PolicyHandler) CreatePolicy(ctx context.Context, req *oas.PolicyCreateInput) (*oas.PolicyResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	d, first, err := fromCreate(req)
	if err != nil {
		return nil, err
	}
	var out oas.Policy
	err = h.db.InTx(ctx, func(tx *db.Tx) (err error) {
		out, err = createPolicy(ctx, tx, caller.TeamID, tx.NewID(), d, first, h.limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.PolicyResponse{Policy: out}, nil
}

// createPolicy stores the draft d under id in tx, first or last among the team's policies of its
// type, and returns it as stored.
//
// Errors: LimitExceeded when the team already holds limit policies of the type.
func createPolicy(ctx context.Context, tx *db.Tx, teamID int64, id string, d draft, first bool, limit int) (oas.Policy, error) {
	n, err := claimType(ctx, tx, teamID, d.source, 1)
	if err != nil {
		return oas.Policy{}, err
	}
	if n > limit {
		return oas.Policy{}, limitError(d.source, limit, n) // rolls the claim back with the rest
	}
	pos := n // positions run 1..n without a gap
	if first {
		if err := makeRoom(ctx, tx, teamID, d.source); err != nil {
			return oas.Policy{}, err
		}
		pos = 1
	}
	out := stamp(tx, teamID, id, d.policy, pos)
	return out, insertPolicy(ctx, tx, teamID, d.source, out)
}

// stamp gives a draft its id, team, place and the transaction's time.
func stamp(tx *db.Tx, teamID int64, id string, p oas.Policy, pos int) oas.Policy {
	p.ID = id
	p.CompanyId = teamID
	p.Order = int32(pos)
	p.Deleted = false
	p.CreatedAt = oas.NewOptDateTime(tx.Now)
	p.UpdatedAt = oas.NewOptDateTime(tx.Now)
	return withStatus(p)
}

// withStatus returns p with the priorityOverrideStatus the server keeps (see setStatus).
func withStatus(p oas.Policy) oas.Policy {
	setStatus(&p)
	return p
}

// setStatus sets the priorityOverrideStatus the server keeps: on a policy with a quota-based
// override, the priority in force, which is the base priority, since this server holds no daily
// quota whose use could reach a tier (so no usage or limit is answered); absent otherwise.
func setStatus(p *oas.Policy) {
	p.PriorityOverrideStatus.Reset()
	if p.PriorityOverride.Value.QuotaBased.Set {
		p.PriorityOverrideStatus = oas.NewOptPolicyPriorityOverrideStatus(oas.PolicyPriorityOverrideStatus{
			QuotaBased: oas.NewOptPolicyQuotaBasedStatus(oas.PolicyQuotaBasedStatus{CurrentPriority: oas.NewOptPolicyPriority(p.Priority)}),
		})
	}
}

// OverwriteSpanPolicies replaces every span policy of the team with the given list (E9).
//
// Errors: Invalid naming policies[i] and the field; LimitExceeded when the list is longer than
// the limit. Either leaves the previous policies untouched.
func (h *PolicyHandler) OverwriteSpanPolicies(ctx context.Context, req *oas.SpanPoliciesInput) (*oas.OverwritePoliciesResponse, error) {
	drafts := make([]draft, 0, len(req.Policies))
	for i, e := range req.Policies {
		d, err := fromFields(entryPath(i), spans, e.Policy, oas.PolicyLogRules{}, e.SpanRules, oas.PolicyLogRules{})
		if err != nil {
			return nil, err
		}
		drafts = append(drafts, d)
	}
	return h.overwrite(ctx, spans, drafts)
}

// OverwriteLogPolicies replaces every log policy of the team, as OverwriteSpanPolicies does.
func (h *PolicyHandler) OverwriteLogPolicies(ctx context.Context, req *oas.LogPoliciesInput) (*oas.OverwritePoliciesResponse, error) {
	drafts := make([]draft, 0, len(req.Policies))
	for i, e := range req.Policies {
		d, err := fromFields(entryPath(i), logs, e.Policy, e.LogRules, oas.PolicySpanRules{}, oas.PolicyLogRules{})
		if err != nil {
			return nil, err
		}
		drafts = append(drafts, d)
	}
	return h.overwrite(ctx, logs, drafts)
}

// OverwriteRumPolicies replaces every RUM policy of the team, as OverwriteSpanPolicies does.
func (h *PolicyHandler) OverwriteRumPolicies(ctx context.Context, req *oas.RumPoliciesInput) (*oas.OverwritePoliciesResponse, error) {
	drafts := make([]draft, 0, len(req.Policies))
	for i, e := range req.Policies {
		d, err := fromFields(entryPath(i), rum, e.Policy, oas.PolicyLogRules{}, oas.PolicySpanRules{}, e.RumRules)
		if err != nil {
			return nil, err
		}
		drafts = append(drafts, d)
	}
	return h.overwrite(ctx, rum, drafts)
}

func (h *PolicyHandler) overwrite(ctx context.Context, src sourceType, drafts []draft) (*oas.OverwritePoliciesResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	if len(drafts) > h.limit {
		return nil, limitError(src, h.limit, len(drafts))
	}
	out := make([]oas.PolicyResponse, 0, len(drafts))
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out = out[:0] // InTx may run this again
		if err := resetType(ctx, tx, caller.TeamID, src, len(drafts)); err != nil {
			return err
		}
		if err := deleteType(ctx, tx, caller.TeamID, src); err != nil {
			return err
		}
		for i, d := range drafts {
			p := stamp(tx, caller.TeamID, tx.NewID(), d.policy, i+1)
			if err := insertPolicy(ctx, tx, caller.TeamID, src, p); err != nil {
				return err
			}
			out = append(out, oas.PolicyResponse{Policy: p})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.OverwritePoliciesResponse{CreateResponses: out}, nil
}

// ListPolicies returns the team's policies, by data type and then by order.
func (h *PolicyHandler) ListPolicies(ctx context.Context, params oas.ListPoliciesParams) (*oas.PolicyList, error) {
	caller := auth.PrincipalFrom(ctx)
	src := sourceTypes[params.SourceType.Or(oas.PolicySourceTypeSOURCETYPEUNSPECIFIED)]
	list, err := listPolicies(ctx, h.db.Read(), caller.TeamID, src, params.EnabledOnly.Or(false))
	if err != nil {
		return nil, err
	}
	return &oas.PolicyList{Policies: list}, nil
}

// GetPolicy returns one policy.
//
// Errors: NotFound when the team has no such policy.
func (h *PolicyHandler) GetPolicy(ctx context.Context, params oas.GetPolicyParams) (*oas.PolicyResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	p, _, err := getPolicy(ctx, h.db.Read(), caller.TeamID, string(params.ID))
	if err != nil {
		return nil, notFoundAs(err, string(params.ID))
	}
	return &oas.PolicyResponse{Policy: p}, nil
}

// UpdatePolicy changes the fields the request sets.
//
// Errors: NotFound when the team has no such policy; Invalid (see applyUpdate).
func (h *PolicyHandler) UpdatePolicy(ctx context.Context, req *oas.PolicyUpdateInput) (*oas.PolicyResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id := string(req.ID)
	var out oas.Policy
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		p, src, err := getPolicy(ctx, tx, caller.TeamID, id)
		if err != nil {
			return err
		}
		if err := applyUpdate(&p, src, req); err != nil {
			return err
		}
		p.UpdatedAt = oas.NewOptDateTime(tx.Now)
		p = withStatus(p)
		out = p
		return updatePolicy(ctx, tx, caller.TeamID, p)
	})
	if err != nil {
		return nil, notFoundAs(err, id)
	}
	return &oas.PolicyResponse{Policy: out}, nil
}

// DeletePolicy deletes one policy; the later ones of its type move up one place.
//
// Errors: NotFound when the team has no such policy.
func (h *PolicyHandler) DeletePolicy(ctx context.Context, params oas.DeletePolicyParams) (*oas.PolicyDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	id := normaliseID(string(params.ID))
	err := h.db.InTx(ctx, func(tx *db.Tx) error { return removePolicy(ctx, tx, caller.TeamID, id) })
	if err != nil {
		return nil, notFoundAs(err, id)
	}
	return &oas.PolicyDeleted{ID: id}, nil
}

// removePolicy deletes the team's policy id in tx; the later ones of its type move up one place.
//
// Errors: db.ErrNotFound when the team has no such policy.
func removePolicy(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	_, src, err := getPolicy(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	if _, err := claimType(ctx, tx, teamID, src, -1); err != nil {
		return err
	}
	// Read again under the lock: a concurrent create may have moved it.
	p, _, err := getPolicy(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	return deletePolicy(ctx, tx, teamID, src, id, p.Order)
}

// ReorderPolicies renumbers the team's policies of one type in the order of the given values.
//
// Errors: Invalid (see checkOrders) or when sourceType is SOURCE_TYPE_UNSPECIFIED.
func (h *PolicyHandler) ReorderPolicies(ctx context.Context, req *oas.PolicyOrderInput) (*oas.PolicyOrders, error) {
	caller := auth.PrincipalFrom(ctx)
	src, ok := sourceTypes[req.SourceType]
	if !ok {
		return nil, apierror.Invalidf("sourceType: must be SOURCE_TYPE_LOGS, SOURCE_TYPE_SPANS or SOURCE_TYPE_RUM")
	}
	orders := append([]oas.PolicyOrder(nil), req.Orders...)
	sort.SliceStable(orders, func(i, j int) bool { return orders[i].Order < orders[j].Order })
	out := make([]oas.PolicyOrder, 0, len(orders))
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		out = out[:0] // InTx may run this again
		if _, err := claimType(ctx, tx, caller.TeamID, src, 0); err != nil {
			return err
		}
		have, err := typeIDs(ctx, tx, caller.TeamID, src)
		if err != nil {
			return err
		}
		if err := checkOrders(src, req.Orders, have); err != nil {
			return err
		}
		for i, o := range orders {
			id := normaliseID(string(o.ID))
			if err := setPosition(ctx, tx, caller.TeamID, id, i+1); err != nil {
				return err
			}
			out = append(out, oas.PolicyOrder{ID: oas.PolicyID(id), Order: int32(i + 1)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.PolicyOrders{Orders: out}, nil
}

// GetPolicySettings returns the team's default priorities.
func (h *PolicyHandler) GetPolicySettings(ctx context.Context) (*oas.PolicySettings, error) {
	caller := auth.PrincipalFrom(ctx)
	s, err := getSettings(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// ReplacePolicySettings replaces each section the request sets and returns the whole settings
// (E10). Fields the server keeps itself (creation and change times) are not read from requests.
func (h *PolicyHandler) ReplacePolicySettings(ctx context.Context, req *oas.PolicySettings) (*oas.PolicySettings, error) {
	caller := auth.PrincipalFrom(ctx)
	var out oas.PolicySettings
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		s, err := getSettings(ctx, tx, caller.TeamID)
		if err != nil {
			return err
		}
		if v, ok := req.LogsPolicySettings.Get(); ok {
			s.LogsPolicySettings = oas.NewOptDefaultPrioritySetting(settingOf(v))
		}
		if v, ok := req.SpansPolicySettings.Get(); ok {
			s.SpansPolicySettings = oas.NewOptDefaultPrioritySetting(settingOf(v))
		}
		out = s
		return putSettings(ctx, tx, caller.TeamID, s)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// settingOf is a section as stored: a section without defaultPriority sets it to unspecified.
func settingOf(v oas.DefaultPrioritySetting) oas.DefaultPrioritySetting {
	return oas.DefaultPrioritySetting{DefaultPriority: oas.NewOptPolicyPriority(
		v.DefaultPriority.Or(oas.PolicyPriorityPRIORITYTYPEUNSPECIFIED))}
}

func notFoundAs(err error, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("id: no policy %q", id)
	}
	return err
}
