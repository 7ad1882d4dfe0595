package policies

import (
	"cmp"
	"context"
	"regexp"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the data-plan policies' part of a team's configuration document
// (teamconfig.Area, teamconfig.Finisher): each policy as GetPolicy answers it without what the
// server sets (companyId, deleted, createdAt, updatedAt, priorityOverrideStatus). A policy is
// checked by fromCreate, as CreatePolicy's body, and created by createPolicy under the team's
// limit per data type, as the HTTP operation does; a replace rewrites every field but the data
// type, which cannot change (as UpdatePolicy); once all are stored, the policies of each type
// take the document's order.
type Configuration struct {
	// Limit is the most policies a team may hold per data type (DefaultLimit when below 1).
	Limit int
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "policies" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "logs.tco:ReadPolicies", "logs.tco:UpdatePolicies"
}

// serverFields are the fields of a policy the server sets; a document leaves them out.
var serverFields = []string{"companyId", "deleted", "createdAt", "updatedAt", "priorityOverrideStatus"}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachPolicy(ctx, q, teamID, "", false, func(p *oas.Policy) error {
		doc, err := p.MarshalJSON()
		if err != nil {
			return err
		}
		if doc, err = teamconfig.WithoutFields(doc, serverFields...); err != nil {
			return err
		}
		out = append(out, teamconfig.Resource{ID: p.ID, Name: p.Name, Doc: doc})
		return nil
	})
	return out, err
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// prepared is a policy of a document, checked.
type prepared struct {
	draft draft
	order int32 // 0 when the document gives none: after the others
}

// Prepare implements teamconfig.Area: a policy as read (a policy without an id gets a fresh one;
// without order, it goes after the document's others of its type), checked by fromCreate.
func (Configuration) Prepare(ctx context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	filled, err := teamconfig.WithFields(doc, map[string]any{
		"id": newID(), "companyId": auth.PrincipalFrom(ctx).TeamID, "order": 0, "enabled": true, "deleted": false,
	})
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.Policy
	if err := teamconfig.DecodeBody(oas.CreatePolicyOperation, filled, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	id := normaliseID(in.ID)
	if !uuidPattern.MatchString(id) {
		return teamconfig.Resource{}, apierror.Invalidf("id: must be a UUID (got %q)", in.ID)
	}
	if in.Order < 0 {
		return teamconfig.Resource{}, apierror.Invalidf("order: must be at least 1 (got %d)", in.Order)
	}
	create := oas.PolicyCreateInput{
		Name:             oas.PolicyName(in.Name),
		Description:      in.Description,
		Disabled:         oas.NewOptBool(!in.Enabled),
		Priority:         in.Priority,
		PriorityOverride: in.PriorityOverride,
		Targets:          in.Targets,
		ApplicationRule:  in.ApplicationRule,
		SubsystemRule:    in.SubsystemRule,
		ArchiveRetention: in.ArchiveRetention,
		LogRules:         in.LogRules,
		SpanRules:        in.SpanRules,
		RumRules:         in.RumRules,
	}
	if err := create.Validate(); err != nil {
		return teamconfig.Resource{}, &teamconfig.BodyError{Operation: oas.CreatePolicyOperation, Body: doc, Err: err}
	}
	d, _, err := fromCreate(&create)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	p := withStatus(d.policy)
	p.ID = id
	p.Order = in.Order
	if p.Targets == nil {
		p.Targets = oas.PolicyTargets{}
	}
	encoded, err := p.MarshalJSON()
	if err == nil {
		encoded, err = teamconfig.WithoutFields(encoded, serverFields...)
	}
	return teamconfig.Resource{ID: id, Name: p.Name, Doc: encoded, Value: prepared{draft: d, order: in.Order}}, err
}

// Put implements teamconfig.Area.
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	pr := r.Value.(prepared)
	if !exists {
		limit := c.Limit
		if limit < 1 {
			limit = DefaultLimit
		}
		_, err := createPolicy(ctx, tx, teamID, r.ID, pr.draft, false, limit)
		return err
	}
	cur, src, err := getPolicy(ctx, tx, teamID, r.ID)
	if err != nil {
		return err
	}
	if src != pr.draft.source {
		return apierror.Invalidf("%s: the policy is a %s policy; its data type cannot change (send %s)",
			rulesField(pr.draft.source), src.label(), rulesField(src))
	}
	p := pr.draft.policy
	p.ID, p.CompanyId, p.Order, p.CreatedAt = cur.ID, cur.CompanyId, cur.Order, cur.CreatedAt
	p.UpdatedAt = oas.NewOptDateTime(tx.Now)
	return updatePolicy(ctx, tx, teamID, withStatus(p))
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return removePolicy(ctx, tx, teamID, id)
}

// Finish implements teamconfig.Finisher: per data type, the document's policies by their order
// (those without one after the others, in document order), then the team's other policies in
// their current order, take the places 1, 2, ...
func (Configuration) Finish(ctx context.Context, tx *db.Tx, teamID int64, want []teamconfig.Resource) error {
	for _, src := range []sourceType{logs, spans, rum} {
		var mine []teamconfig.Resource
		for _, r := range want {
			if r.Value.(prepared).draft.source == src {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			continue
		}
		slices.SortStableFunc(mine, func(x, y teamconfig.Resource) int {
			return cmp.Compare(placeOf(x), placeOf(y))
		})
		if _, err := claimType(ctx, tx, teamID, src, 0); err != nil {
			return err
		}
		current, err := listPolicies(ctx, tx, teamID, src, false)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(current))
		inDocument := map[string]bool{}
		for _, r := range mine {
			ids = append(ids, r.ID)
			inDocument[r.ID] = true
		}
		for _, p := range current {
			if !inDocument[p.ID] {
				ids = append(ids, p.ID)
			}
		}
		byID := map[string]int32{}
		for _, p := range current {
			byID[p.ID] = p.Order
		}
		for i, id := range ids {
			if byID[id] == int32(i+1) {
				continue
			}
			if err := setPosition(ctx, tx, teamID, id, i+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeOf is a document policy's order, with none (0) after every given one.
func placeOf(r teamconfig.Resource) int64 {
	if o := r.Value.(prepared).order; o > 0 {
		return int64(o)
	}
	return 1 << 40
}

// SettingsConfiguration is the policy settings' part of a team's configuration document
// (teamconfig.Area, teamconfig.Single): the default priorities as GetPolicySettings answers
// them, stored as ReplacePolicySettings stores them; a section the document leaves out is
// unspecified. Settings are never deleted.
type SettingsConfiguration struct{}

// Key implements teamconfig.Area.
func (SettingsConfiguration) Key() string { return "policySettings" }

// Single implements teamconfig.Single.
func (SettingsConfiguration) Single() {}

// Permissions implements teamconfig.Area.
func (SettingsConfiguration) Permissions() (read, write string) {
	return "logs.tco:ReadPolicies", "logs.tco:UpdatePolicies"
}

// settingsID names the team's one settings object in a plan.
const settingsID = "settings"

// Export implements teamconfig.Area.
func (SettingsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	s, err := getSettings(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	doc, err := s.MarshalJSON()
	return []teamconfig.Resource{{ID: settingsID, Doc: doc}}, err
}

// Prepare implements teamconfig.Area: the body of ReplacePolicySettings.
func (SettingsConfiguration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in oas.PolicySettings
	if err := teamconfig.DecodeBody(oas.ReplacePolicySettingsOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	s := defaultSettings()
	if v, ok := in.LogsPolicySettings.Get(); ok {
		s.LogsPolicySettings = oas.NewOptDefaultPrioritySetting(settingOf(v))
	}
	if v, ok := in.SpansPolicySettings.Get(); ok {
		s.SpansPolicySettings = oas.NewOptDefaultPrioritySetting(settingOf(v))
	}
	encoded, err := s.MarshalJSON()
	return teamconfig.Resource{ID: settingsID, Doc: encoded, Value: s}, err
}

// Put implements teamconfig.Area.
func (SettingsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	return putSettings(ctx, tx, teamID, r.Value.(oas.PolicySettings))
}

// Delete implements teamconfig.Area; settings are never deleted.
func (SettingsConfiguration) Delete(context.Context, *db.Tx, int64, string) error { return nil }
