package apikeys

import (
	"context"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DeleteApiKeys deletes every key of the caller's team that req names, all or none: the keys
// stop working at once here (the key cache forgets them) and within auth.CacheTTL elsewhere. A
// repeated id counts once; an empty list changes nothing.
//
// Errors: NotFound naming the first id (keyIds[i]) that names no key of the team; nothing is
// deleted then.
func (h *KeyHandler) DeleteApiKeys(ctx context.Context, req *oas.ApiKeysDeleteInput) error {
	caller := auth.PrincipalFrom(ctx)
	ids := dedupe(req.KeyIds)
	if len(ids) == 0 {
		return nil
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(ids...)
		seen := make(map[string]bool, len(ids))
		for i, id := range req.KeyIds {
			if seen[id] {
				continue
			}
			seen[id] = true
			err := deleteKey(ctx, tx, caller.TeamID, id)
			if errors.Is(err, db.ErrNotFound) {
				return apierror.NotFoundf("keyIds[%d]: no API key %q", i, id)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return h.forgetAfter(err, ids)
}

// forgetAfter tells the key cache about the keys a bulk change committed (err nil), and returns
// err.
func (h *KeyHandler) forgetAfter(err error, ids []string) error {
	if err != nil {
		return err
	}
	for _, id := range ids {
		h.authn.Forget(id)
	}
	return nil
}

// UpdateApiKeysStatus sets each named key of the caller's team active or inactive (active left
// out is false, as the public clients' proto JSON leaves out false), all or none. A key switched
// from inactive to active records the time as its last activation; a deactivated key is refused
// from the next request on (auth.ErrDeactivated), here at once and within auth.CacheTTL on other
// replicas.
//
// Errors: Invalid for an update without keyId, or for one key given two different states;
// NotFound naming the first keyId (updates[i].keyId) that names no key of the team. Nothing
// changes on any error.
func (h *KeyHandler) UpdateApiKeysStatus(ctx context.Context, req *oas.ApiKeysStatusInput) error {
	caller := auth.PrincipalFrom(ctx)
	want := make(map[string]bool, len(req.Updates))
	var order []string
	for i, u := range req.Updates {
		id, ok := u.KeyId.Get()
		if !ok {
			return apierror.Invalidf("updates[%d].keyId: required", i)
		}
		active := u.Active.Or(false)
		if prev, seen := want[id]; seen {
			if prev != active {
				return apierror.Invalidf("updates[%d].active: key %q is set both active and inactive in one request", i, id)
			}
			continue
		}
		want[id] = active
		order = append(order, id)
	}
	if len(order) == 0 {
		return nil
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(order...)
		for _, id := range order {
			k, err := getKey(ctx, tx, caller.TeamID, id)
			if errors.Is(err, db.ErrNotFound) {
				return apierror.NotFoundf("updates[%d].keyId: no API key %q", firstUpdate(req.Updates, id), id)
			}
			if err != nil {
				return err
			}
			active := want[id]
			if active == k.Active {
				continue
			}
			if active {
				k.ActivatedAt = tx.Now
			}
			k.Active = active
			if err := updateKey(ctx, tx, caller.TeamID, k); err != nil {
				return fmt.Errorf("update api key status: %w", err)
			}
		}
		return nil
	})
	return h.forgetAfter(err, order)
}

// firstUpdate is the place of the first update that names id.
func firstUpdate(updates []oas.ApiKeyStatusUpdate, id string) int {
	for i, u := range updates {
		if u.KeyId.Value == id {
			return i
		}
	}
	return 0
}
