// Package roles serves roles: the real service's system roles every team has (Platform Admin,
// Standard User, Read-Only User and four more; never stored, see rules.go) and the team's custom roles derived from them (E17 create, and list, get,
// update and delete).
package roles

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// RoleHandler implements the role operations of oas.Handler.
type RoleHandler struct {
	db    *db.DB
	users []Users
}

// NewHandler returns the role operations. users tell what holds a custom role (groups), which
// then cannot be deleted.
func NewHandler(database *db.DB, users ...Users) *RoleHandler {
	return &RoleHandler{db: database, users: users}
}

// CreateCustomRole stores a new custom role under the team's next role id and answers that id
// (E17; 200, never 201).
//
// Errors: Invalid and NotFound (see checkCreate); Conflict when the team has a role of that name.
func (h *RoleHandler) CreateCustomRole(ctx context.Context, req *oas.CustomRoleRequest) (*oas.CustomRoleCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	r, err := checkCreate(caller.TeamID, req)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		id, err := nextID(ctx, tx, caller.TeamID)
		if err != nil {
			return err
		}
		r.id = id
		tx.AuditResource(strconv.FormatInt(id, 10))
		return insertRole(ctx, tx, caller.TeamID, r)
	})
	if err != nil {
		return nil, conflictAs(err, "name", r.name)
	}
	return &oas.CustomRoleCreated{ID: r.id}, nil
}

// ListCustomRoles returns the team's custom roles by id.
//
// Errors: NotFound when team_id names another team.
func (h *RoleHandler) ListCustomRoles(ctx context.Context, params oas.ListCustomRolesParams) (*oas.CustomRoleList, error) {
	caller := auth.PrincipalFrom(ctx)
	if t, ok := params.TeamID.Get(); ok && t != caller.TeamID {
		return nil, apierror.NotFoundf("team_id: no team %d", t)
	}
	rs, err := listRoles(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := make([]oas.CustomRole, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.wire(caller.TeamID))
	}
	return &oas.CustomRoleList{Roles: out}, nil
}

// StreamCustomRoles writes the answer of ListCustomRoles for params, the same bytes, while reading
// the roles: the server serves the list with it (see package streaming). Its errors are
// ListCustomRoles's.
func (h *RoleHandler) StreamCustomRoles(ctx context.Context, params oas.ListCustomRolesParams, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	if t, ok := params.TeamID.Get(); ok && t != caller.TeamID {
		return apierror.NotFoundf("team_id: no team %d", t)
	}
	return out.Array("roles", func() error {
		return eachRole(ctx, h.db.Read(), caller.TeamID, func(r role) error {
			w := r.wire(caller.TeamID)
			return out.Item(&w)
		})
	})
}

// GetCustomRole returns one of the team's custom roles.
//
// Errors: NotFound when the team has no such role.
func (h *RoleHandler) GetCustomRole(ctx context.Context, params oas.GetCustomRoleParams) (*oas.CustomRoleResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	r, err := getRole(ctx, h.db.Read(), caller.TeamID, params.RoleID)
	if err != nil {
		return nil, notFoundAs(err, params.RoleID)
	}
	return &oas.CustomRoleResponse{Role: r.wire(caller.TeamID)}, nil
}

// UpdateCustomRole changes the given fields of a custom role.
//
// Errors: Invalid naming newName, newDescription or newPermissions.permissions[i]; NotFound when
// the team has no such role; Conflict when another of the team's roles has newName.
func (h *RoleHandler) UpdateCustomRole(ctx context.Context, req *oas.CustomRoleUpdate, params oas.UpdateCustomRoleParams) error {
	caller := auth.PrincipalFrom(ctx)
	name, setName := req.NewName.Get()
	if setName {
		if err := checkName("newName", name); err != nil {
			return err
		}
	}
	desc, setDesc := req.NewDescription.Get()
	if setDesc {
		if err := checkDescription("newDescription", desc); err != nil {
			return err
		}
	}
	var perms []string
	np, setPerms := req.NewPermissions.Get()
	if setPerms {
		var err error
		if perms, err = checkPermissions("newPermissions.permissions", np.Permissions); err != nil {
			return err
		}
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		r, err := getRole(ctx, tx, caller.TeamID, params.RoleID)
		if err != nil {
			return err
		}
		if setName {
			r.name = name
		}
		if setDesc {
			r.description = desc
		}
		if setPerms {
			r.permissions = perms
		}
		return updateRole(ctx, tx, caller.TeamID, r)
	})
	return notFoundAs(conflictAs(err, "newName", name), params.RoleID)
}

// DeleteCustomRole deletes one of the team's custom roles (204, no body).
//
// Errors: NotFound when the team has no such role; Conflict when a group holds it.
func (h *RoleHandler) DeleteCustomRole(ctx context.Context, params oas.DeleteCustomRoleParams) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		for _, users := range h.users {
			held, err := users(ctx, tx, caller.TeamID, params.RoleID)
			if err != nil {
				return err
			}
			if len(held) > 0 {
				return apierror.Conflictf("role_id: custom role %d is held by %s; give them another role first", params.RoleID, strings.Join(held, ", "))
			}
		}
		return deleteRole(ctx, tx, caller.TeamID, params.RoleID)
	})
	return notFoundAs(err, params.RoleID)
}

// ListSystemRoles returns the system roles by id.
func (h *RoleHandler) ListSystemRoles(ctx context.Context) (*oas.SystemRoleList, error) {
	out := make([]oas.SystemRole, 0, len(systemRoles))
	for _, r := range systemRoles {
		out = append(out, r.wire())
	}
	return &oas.SystemRoleList{Roles: out}, nil
}

func notFoundAs(err error, id int64) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("role_id: no custom role %d", id)
	}
	return err
}

func conflictAs(err error, field, name string) error {
	if errors.Is(err, db.ErrConflict) {
		return apierror.Conflictf("%s: the team already has a role named %q", field, name)
	}
	return err
}
