package roles

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Bounds of a custom role, in characters (code points).
const (
	MaxNameLength        = 100
	MaxDescriptionLength = 1000
)

// systemRole is one of the roles every team has. Its permissions are computed from the catalog
// when asked, so a role keeps up as the catalog grows.
type systemRole struct {
	id          int64
	name        string
	description string
	permissions func() []string
}

// memberExcluded are the permissions a member lacks: managing who may do what.
var memberExcluded = []string{"api-keys:Manage", "team-roles:Manage"}

// systemRoles ship with the server and are the same for every team; they are never stored.
var systemRoles = []systemRole{
	{1, "admin", "every permission", func() []string { return auth.PresetPermissions(auth.FullAccess) }},
	{2, "member", "every permission except managing API keys and roles", func() []string {
		return slices.DeleteFunc(auth.PresetPermissions(auth.FullAccess), func(p string) bool {
			return slices.Contains(memberExcluded, p)
		})
	}},
	{3, "viewer", "every permission that only reads", func() []string { return auth.PresetPermissions("read-only") }},
}

func (r systemRole) wire() oas.SystemRole {
	return oas.SystemRole{RoleId: r.id, Name: r.name, Description: r.description, Permissions: r.permissions()}
}

func systemByID(id int64) (systemRole, bool) {
	for _, r := range systemRoles {
		if r.id == id {
			return r, true
		}
	}
	return systemRole{}, false
}

func systemByName(name string) (systemRole, bool) {
	for _, r := range systemRoles {
		if r.name == name {
			return r, true
		}
	}
	return systemRole{}, false
}

func systemNames() string {
	names := make([]string, 0, len(systemRoles))
	for _, r := range systemRoles {
		names = append(names, r.name)
	}
	return strings.Join(names, ", ")
}

// role is a custom role as stored.
type role struct {
	id          int64
	name        string
	description string
	parentID    int64
	permissions []string
}

func (r role) wire(teamID int64) oas.CustomRole {
	parent, _ := systemByID(r.parentID)
	return oas.CustomRole{
		RoleId: r.id, TeamId: teamID, Name: r.name, Description: r.description,
		ParentRoleId: r.parentID, ParentRoleName: parent.name, Permissions: slices.Clone(r.permissions),
	}
}

// checkName enforces a role name's bounds.
//
// Errors: Invalid naming field.
func checkName(field, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameLength {
		return apierror.Invalidf("%s: length must be 1 to %d characters (got %d)", field, MaxNameLength, n)
	}
	if strings.TrimSpace(name) == "" {
		return apierror.Invalidf("%s: must contain a non-whitespace character", field)
	}
	return nil
}

// checkDescription enforces a description's bound.
//
// Errors: Invalid naming field.
func checkDescription(field, d string) error {
	if n := utf8.RuneCountInString(d); n > MaxDescriptionLength {
		return apierror.Invalidf("%s: length must be at most %d characters (got %d)", field, MaxDescriptionLength, n)
	}
	return nil
}

// checkPermissions requires every name to be in the permission catalog and returns them sorted,
// without repeats.
//
// Errors: Invalid naming field[i].
func checkPermissions(field string, perms []string) ([]string, error) {
	for i, p := range perms {
		if !auth.KnownPermission(p) {
			return nil, apierror.Invalidf("%s[%d]: unknown permission %q; it must be a name from the permission catalog", field, i, p)
		}
	}
	out := slices.Clone(perms)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// checkCreate validates a create request and resolves its parent.
//
// Errors: Invalid naming the field (name, description, parentRoleId/parentRoleName, permissions[i]);
// NotFound naming teamId when it is not the caller's team.
func checkCreate(teamID int64, req *oas.CustomRoleRequest) (role, error) {
	if t, ok := req.TeamId.Get(); ok && t != teamID {
		return role{}, apierror.NotFoundf("teamId: no team %d", t)
	}
	if err := checkName("name", req.Name); err != nil {
		return role{}, err
	}
	desc := req.Description.Or("")
	if err := checkDescription("description", desc); err != nil {
		return role{}, err
	}
	id, byID := req.ParentRoleId.Get()
	name, byName := req.ParentRoleName.Get()
	var parent systemRole
	switch {
	case byID && byName:
		return role{}, apierror.Invalidf("parentRoleId, parentRoleName: give exactly one, not both")
	case byID:
		p, ok := systemByID(id)
		if !ok {
			return role{}, apierror.Invalidf("parentRoleId: %d is not a system role; the system roles are 1 to %d", id, len(systemRoles))
		}
		parent = p
	case byName:
		p, ok := systemByName(name)
		if !ok {
			return role{}, apierror.Invalidf("parentRoleName: %q is not a system role; it must be one of %s", name, systemNames())
		}
		parent = p
	default:
		return role{}, apierror.Invalidf("parentRoleId, parentRoleName: one is required; it names the system role the role derives from")
	}
	perms, err := checkPermissions("permissions", req.Permissions)
	if err != nil {
		return role{}, err
	}
	return role{name: req.Name, description: desc, parentID: parent.id, permissions: perms}, nil
}
