// Package apikeys serves the API key operations: create (E3), list, get, update and delete, and
// the lists of send-data keys and of the keys users own. Keys belong to a team; a key never sees
// another team's keys. A key is of one of two kinds, fixed at creation: an API key calls the
// management API, a send-data key (created with the SendData preset alone) only ingestion.
package apikeys

import (
	"context"
	"errors"
	"slices"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/access"
	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// KeyHandler implements the API key operations of oas.Handler.
type KeyHandler struct {
	db    *db.DB
	authn *auth.Authenticator
}

// NewHandler returns the API key operations. authn is told about every change so that it never
// serves a stale key from its cache.
func NewHandler(database *db.DB, authn *auth.Authenticator) *KeyHandler {
	return &KeyHandler{db: database, authn: authn}
}

// CreateApiKey creates a key in the caller's team (E3).
//
// Permission names match the catalog in any case, and a retired name stands for its public names
// (auth.Resolve); the key stores, and answers show, the public names.
//
// A personal key (owner.userId) names a member of the team, and can never do more than that
// member may do at the time of each request (auth narrows it); a team without members takes any
// user id (access.CheckOwner).
//
// Errors: Invalid for an unknown permission or preset, a bad access policy, an owner with more
// than one field or another team's id, an owner.userId the team has no member of, or the SendData
// preset together with any other grant.
func (h *KeyHandler) CreateApiKey(ctx context.Context, req *oas.ApiKeyCreateInput) (*oas.ApiKeyCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	owner, err := checkOwner(req.Owner, caller.TeamID)
	if err != nil {
		return nil, err
	}
	perms := req.KeyPermissions.Value.Permissions
	presets := req.KeyPermissions.Value.Presets
	perms, err = auth.CheckGrants("keyPermissions.permissions", perms, "keyPermissions.presets", presets)
	if err != nil {
		return nil, err
	}
	policy, err := auth.CanonicalAccessPolicy("accessPolicy", req.AccessPolicy.Or(""))
	if err != nil {
		return nil, err
	}
	kind, err := kindOf(perms, presets, policy)
	if err != nil {
		return nil, err
	}
	var id, value string
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if owner.UserID != "" {
			if err := access.CheckOwner(ctx, tx, caller.TeamID, "owner.userId", owner.UserID); err != nil {
				return err
			}
		}
		id, value, err = Insert(ctx, tx, NewKey{
			TeamID:       caller.TeamID,
			Name:         req.Name,
			Hashed:       req.Hashed.Or(false),
			Owner:        owner,
			Permissions:  perms,
			Presets:      dedupe(presets),
			AccessPolicy: policy,
			Kind:         kind,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.ApiKeyCreated{KeyId: id, Name: req.Name, Value: value}, nil
}

// kindOf tells the kind of a key to create from its grants: a send-data key when the presets name
// SendData, which must then be the only grant.
//
// Errors: Invalid when SendData comes with another preset, a permission or an access policy.
func kindOf(perms, presets []string, policy string) (string, error) {
	at := slices.Index(presets, auth.SendData)
	if at < 0 {
		return auth.KindAPI, nil
	}
	for i, p := range presets {
		if p != auth.SendData {
			return "", apierror.Invalidf("keyPermissions.presets[%d]: %q cannot be combined with %q; a send-data key holds only that preset", i, p, auth.SendData)
		}
	}
	if len(perms) > 0 {
		return "", apierror.Invalidf("keyPermissions.permissions: must be empty for a send-data key (presets [%q]); it authenticates only ingestion", auth.SendData)
	}
	if policy != "" {
		return "", apierror.Invalidf("accessPolicy: must be empty for a send-data key (presets [%q])", auth.SendData)
	}
	return auth.KindSendData, nil
}

func checkOwner(o oas.OptApiKeyOwner, teamID int64) (Owner, error) {
	if !o.Set {
		return Owner{}, nil
	}
	set := 0
	for _, ok := range []bool{o.Value.UserId.Set, o.Value.TeamId.Set, o.Value.OrganisationId.Set} {
		if ok {
			set++
		}
	}
	if set > 1 {
		return Owner{}, apierror.Invalidf("owner: set at most one of userId, teamId and organisationId")
	}
	var out Owner
	if v, ok := o.Value.UserId.Get(); ok {
		if n := utf8.RuneCountInString(v); n < 1 || n > 255 {
			return Owner{}, apierror.Invalidf("owner.userId: length must be between 1 and 255 characters")
		}
		out.UserID = v
	}
	if v, ok := o.Value.OrganisationId.Get(); ok {
		if n := utf8.RuneCountInString(v); n < 1 || n > 255 {
			return Owner{}, apierror.Invalidf("owner.organisationId: length must be between 1 and 255 characters")
		}
		out.OrganisationID = v
	}
	if v, ok := o.Value.TeamId.Get(); ok {
		if v != teamID {
			return Owner{}, apierror.Invalidf("owner.teamId: must be the caller's team (%d)", teamID)
		}
		out.TeamID = &v
	}
	return out, nil
}

// ListApiKeys lists the caller's team's API keys (not its send-data keys), oldest first, without
// their values.
func (h *KeyHandler) ListApiKeys(ctx context.Context) (*oas.ApiKeyList, error) {
	return h.listOfKind(ctx, auth.KindAPI)
}

// ListSendDataApiKeys lists the caller's team's send-data keys, oldest first, without their
// values.
func (h *KeyHandler) ListSendDataApiKeys(ctx context.Context) (*oas.ApiKeyList, error) {
	return h.listOfKind(ctx, auth.KindSendData)
}

func (h *KeyHandler) listOfKind(ctx context.Context, kind string) (*oas.ApiKeyList, error) {
	caller := auth.PrincipalFrom(ctx)
	keys, err := listKeys(ctx, h.db.Read(), caller.TeamID, kind)
	if err != nil {
		return nil, err
	}
	out := &oas.ApiKeyList{Keys: make([]oas.ApiKeyInfo, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, keyInfo(k, caller.TeamID))
	}
	return out, nil
}

// ListTeamMembersApiKeys lists the caller's team's keys, of both kinds, that a user owns (owner
// userId), by user id and then oldest first. mgmtapi has no user directory: the user is the id
// recorded on the key, and no e-mail address is known.
func (h *KeyHandler) ListTeamMembersApiKeys(ctx context.Context) (*oas.TeamMembersApiKeysResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	keys, err := listUserOwnedKeys(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := &oas.TeamMembersApiKeysResponse{Keys: make([]oas.ApiKeySummary, 0, len(keys))}
	for _, k := range keys {
		info := keyInfo(k, caller.TeamID)
		out.Keys = append(out.Keys, oas.ApiKeySummary{
			ApiKey: oas.MemberApiKey{
				ID:            k.ID,
				KeyName:       k.Name,
				IsActive:      k.Active,
				CreatedAt:     k.CreatedAt,
				LastActivated: k.ActivatedAt,
				Owner:         oas.MemberApiKeyOwner{User: oas.MemberApiKeyOwnerUser{UserId: k.Owner.UserID}},
			},
			Permissions: info.KeyPermissions.Permissions,
			Presets:     info.KeyPermissions.Presets,
		})
	}
	return out, nil
}

// GetApiKey returns one key of the caller's team, without its value.
//
// Errors: NotFound when the team has no such key.
func (h *KeyHandler) GetApiKey(ctx context.Context, params oas.GetApiKeyParams) (*oas.ApiKeyEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	k, err := getKey(ctx, h.db.Read(), caller.TeamID, params.KeyID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apierror.NotFoundf("key_id: no API key %q", params.KeyID)
	}
	if err != nil {
		return nil, err
	}
	info := keyInfo(k, caller.TeamID)
	return &oas.ApiKeyEnvelope{KeyInfo: info}, nil
}

// UpdateApiKey changes the fields the body carries and leaves the others as they are. Switching
// an inactive key to active records the time as its last activation. A key's kind never changes.
//
// Errors: NotFound when the team has no such key; Invalid as for create, when a send-data key is
// sent permissions, presets or an access policy, or when an API key is sent the SendData preset.
// Names are taken as CreateApiKey takes them.
func (h *KeyHandler) UpdateApiKey(ctx context.Context, req *oas.ApiKeyUpdateInput, params oas.UpdateApiKeyParams) error {
	caller := auth.PrincipalFrom(ctx)
	var perms []string
	if req.Permissions.Set {
		var err error
		if perms, err = auth.CheckGrants("permissions.permissions", req.Permissions.Value.Permissions, "", nil); err != nil {
			return err
		}
	}
	if req.Presets.Set {
		if _, err := auth.CheckGrants("", nil, "presets.presets", req.Presets.Value.Presets); err != nil {
			return err
		}
	}
	var policy string
	if v, ok := req.AccessPolicy.Get(); ok {
		var err error
		if policy, err = auth.CanonicalAccessPolicy("accessPolicy", v); err != nil {
			return err
		}
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		k, err := getKey(ctx, tx, caller.TeamID, params.KeyID)
		if err != nil {
			return err
		}
		if err := checkKindUpdate(k.Kind, req); err != nil {
			return err
		}
		if v, ok := req.NewName.Get(); ok {
			k.Name = v
		}
		if v, ok := req.IsActive.Get(); ok {
			if v && !k.Active {
				k.ActivatedAt = tx.Now
			}
			k.Active = v
		}
		if req.Permissions.Set {
			k.Permissions = perms
		}
		if req.Presets.Set {
			k.Presets = dedupe(req.Presets.Value.Presets)
		}
		if req.AccessPolicy.Set {
			k.AccessPolicy = policy
		}
		return updateKey(ctx, tx, caller.TeamID, k)
	})
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("key_id: no API key %q", params.KeyID)
	}
	if err != nil {
		return err
	}
	h.authn.Forget(params.KeyID)
	return nil
}

// DeleteApiKey deletes a key of the caller's team. The key stops working at once here.
//
// Errors: NotFound when the team has no such key.
func (h *KeyHandler) DeleteApiKey(ctx context.Context, params oas.DeleteApiKeyParams) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return deleteKey(ctx, tx, caller.TeamID, params.KeyID)
	})
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("key_id: no API key %q", params.KeyID)
	}
	if err != nil {
		return err
	}
	h.authn.Forget(params.KeyID)
	return nil
}

// checkKindUpdate refuses the changes that would make a key of another kind: a send-data key keeps
// its single preset and nothing else, an API key cannot take the SendData preset.
func checkKindUpdate(kind string, req *oas.ApiKeyUpdateInput) error {
	if kind == auth.KindSendData {
		switch {
		case req.Permissions.Set:
			return apierror.Invalidf("permissions: a send-data key holds only the %q preset; its permissions cannot change", auth.SendData)
		case req.Presets.Set:
			return apierror.Invalidf("presets: a send-data key holds only the %q preset; its presets cannot change", auth.SendData)
		case req.AccessPolicy.Set && req.AccessPolicy.Value != "":
			return apierror.Invalidf("accessPolicy: a send-data key cannot have an access policy")
		}
		return nil
	}
	if req.Presets.Set {
		if i := slices.Index(req.Presets.Value.Presets, auth.SendData); i >= 0 {
			return apierror.Invalidf("presets.presets[%d]: %q makes a send-data key; create a new key with it instead", i, auth.SendData)
		}
	}
	return nil
}

func keyInfo(k storedKey, teamID int64) oas.ApiKeyInfo {
	info := oas.ApiKeyInfo{
		ID:     k.ID,
		Name:   k.Name,
		Active: k.Active,
		Hashed: k.Hashed,
		KeyPermissions: oas.ApiKeyInfoPermissions{
			Permissions: nonNil(k.Permissions),
			Presets:     make([]oas.PermissionPresetInfo, 0, len(k.Presets)),
		},
	}
	if k.AccessPolicy != "" {
		info.AccessPolicy = oas.NewOptString(k.AccessPolicy)
	}
	for _, name := range k.Presets {
		info.KeyPermissions.Presets = append(info.KeyPermissions.Presets, oas.PermissionPresetInfo{
			Name:        name,
			Permissions: nonNil(auth.PresetPermissions(name)),
		})
	}
	switch {
	case k.Owner.UserID != "":
		info.Owner.UserId = oas.NewOptString(k.Owner.UserID)
	case k.Owner.OrganisationID != "":
		info.Owner.OrganisationId = oas.NewOptString(k.Owner.OrganisationID)
	default:
		info.Owner.TeamId = oas.NewOptInt64(teamID)
	}
	return info
}

// dedupe drops repeated names, keeping the first of each.
func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
