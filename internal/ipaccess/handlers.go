package ipaccess

import (
	"context"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// SettingsHandler implements the IP access operations of oas.Handler.
type SettingsHandler struct {
	db    *db.DB
	guard *Guard
}

// NewHandler returns the IP access operations; guard enforces what they store and is told of
// every change.
func NewHandler(database *db.DB, guard *Guard) *SettingsHandler {
	return &SettingsHandler{db: database, guard: guard}
}

// GetIpAccessSettings answers the caller's team's settings (the defaults when it set none).
//
// Errors: NotFound when id is given and is not the team's id.
func (h *SettingsHandler) GetIpAccessSettings(ctx context.Context, params oas.GetIpAccessSettingsParams) (*oas.IpAccessSettingsEnvelope, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	if err := checkSettingsID("id", params.ID, teamID); err != nil {
		return nil, err
	}
	s, err := load(ctx, h.db.Read(), teamID)
	if err != nil {
		return nil, err
	}
	return answer(teamID, s), nil
}

// CreateIpAccessSettings sets the caller's team's settings (a team has one settings object: a
// second create replaces the first) and enforces them from the next request on.
//
// Errors: Invalid for a missing or malformed range (checkEntries), or for enabled ranges that
// leave out the caller's own address without acceptLockout=true.
func (h *SettingsHandler) CreateIpAccessSettings(ctx context.Context, req *oas.IpAccessSettingsInput, params oas.CreateIpAccessSettingsParams) (*oas.IpAccessSettingsEnvelope, error) {
	return h.set(ctx, req.EnablePlatformCustomerSupportAccess, req.IpAccess, params.AcceptLockout.Or(false))
}

// ReplaceIpAccessSettings replaces the caller's team's settings, as CreateIpAccessSettings sets
// them.
//
// Errors: NotFound when id is given and is not the team's id; then those of
// CreateIpAccessSettings.
func (h *SettingsHandler) ReplaceIpAccessSettings(ctx context.Context, req *oas.IpAccessSettingsReplacement, params oas.ReplaceIpAccessSettingsParams) (*oas.IpAccessSettingsEnvelope, error) {
	if err := checkSettingsID("id", req.ID, auth.PrincipalFrom(ctx).TeamID); err != nil {
		return nil, err
	}
	return h.set(ctx, req.EnablePlatformCustomerSupportAccess, req.IpAccess, params.AcceptLockout.Or(false))
}

func (h *SettingsHandler) set(ctx context.Context, access oas.OptPlatformCustomerSupportAccess, in []oas.IpAccessEntry, acceptLockout bool) (*oas.IpAccessSettingsEnvelope, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	entries, err := checkEntries(in)
	if err != nil {
		return nil, err
	}
	if err := h.guard.checkLockout(ctx, entries, acceptLockout); err != nil {
		return nil, err
	}
	s := Settings{SupportAccess: supportAccess(access), Entries: entries}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(strconv.FormatInt(teamID, 10))
		return store(ctx, tx, teamID, s)
	})
	h.guard.Forget(teamID)
	if err != nil {
		return nil, err
	}
	return answer(teamID, s), nil
}

// DeleteIpAccessSettings removes the caller's team's settings: its keys are accepted from any
// address from the next request on. Removing settings that were never set succeeds.
//
// Errors: NotFound when id is given and is not the team's id.
func (h *SettingsHandler) DeleteIpAccessSettings(ctx context.Context, params oas.DeleteIpAccessSettingsParams) error {
	teamID := auth.PrincipalFrom(ctx).TeamID
	if err := checkSettingsID("id", params.ID, teamID); err != nil {
		return err
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(strconv.FormatInt(teamID, 10))
		return remove(ctx, tx, teamID)
	})
	h.guard.Forget(teamID)
	return err
}

// checkSettingsID accepts an id left out or equal to the team's id (the settings' id).
//
// Errors: NotFound naming field otherwise, as for a missing resource.
func checkSettingsID(field string, id oas.OptString, teamID int64) error {
	if v, ok := id.Get(); ok && v != "" && v != strconv.FormatInt(teamID, 10) {
		return apierror.NotFoundf("%s: no IP access settings %q", field, v)
	}
	return nil
}
