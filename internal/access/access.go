// Package access serves who may do what in a team: its members (users), its groups (each with a
// role, an optional scope and members) and its scopes, the public users, groups and scopes
// services; and it tells internal/auth what the owner of a personal key may do now
// (OwnerAccess). The three services live in one package because their rules cross: a group
// names members, a role and a scope; a scope a group holds cannot be deleted; a member's
// permissions are the union of their groups' roles.
package access

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// AccessHandler implements the members, groups and scopes operations of oas.Handler.
type AccessHandler struct {
	db    *db.DB
	authn *auth.Authenticator
}

// NewHandler returns the access operations. authn forgets the team's cached keys after every
// change, so that a personal key is narrowed or stopped from its next request.
func NewHandler(database *db.DB, authn *auth.Authenticator) *AccessHandler {
	return &AccessHandler{db: database, authn: authn}
}

// write runs fn in a transaction and, once it has committed, makes the team's keys be looked up
// again on their next request.
func (h *AccessHandler) write(ctx context.Context, teamID int64, fn func(tx *db.Tx) error) error {
	err := h.db.InTx(ctx, fn)
	if err == nil && h.authn != nil {
		h.authn.ForgetTeam(teamID)
	}
	return err
}

// sameTeam refuses a team id other than the caller's, as a missing team is refused.
//
// Errors: NotFound naming field.
func sameTeam(field string, given, caller int64) error {
	if given != caller {
		return apierror.NotFoundf("%s: no team %d", field, given)
	}
	return nil
}

// notFoundAs turns db.ErrNotFound into NotFound with the message; other errors pass.
func notFoundAs(err error, format string, args ...any) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf(format, args...)
	}
	return err
}

// conflictAs turns db.ErrConflict into Conflict with the message; other errors pass.
func conflictAs(err error, format string, args ...any) error {
	if errors.Is(err, db.ErrConflict) {
		return apierror.Conflictf(format, args...)
	}
	return err
}
