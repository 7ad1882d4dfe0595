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
	// oldName is the name the role had before mgmtapi served the public system roles; a
	// parentRoleName of that name is still taken, for one release.
	oldName     string
	permissions func() []string
}

// managesAccess reports whether a permission changes who may do what: a non-reading permission
// of the aaa group (keys, roles, groups, members, sessions, SSO…).
func managesAccess(p auth.Permission) bool { return p.Group == "aaa" && !auth.ReadsOnly(p.Name) }

// rolePermissions returns, sorted, the catalog's permissions that keep says to keep.
func rolePermissions(keep func(auth.Permission) bool) []string {
	var out []string
	for _, p := range auth.Permissions() {
		if keep(p) {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// readsOr keeps every permission that only reads, and those of the groups named.
func readsOr(groups ...string) func() []string {
	return func() []string {
		return rolePermissions(func(p auth.Permission) bool {
			return auth.ReadsOnly(p.Name) || slices.Contains(groups, p.Group)
		})
	}
}

// systemRoles are the real service's system roles, by their public names; they ship with the
// server, are the same for every team and are never stored. Ids 1 to 3 keep the meaning they had
// (admin, member, viewer) so that stored custom roles keep their parent. What each role holds is
// our reading of its name over the catalog: see docs/decisions.md.
var systemRoles = []systemRole{
	{1, "Platform Admin", "every permission", "admin", func() []string { return auth.PresetPermissions(auth.FullAccess) }},
	{2, "Standard User", "every permission of the team level, except changing who may do what (keys, roles, groups, members)", "member",
		func() []string {
			return rolePermissions(func(p auth.Permission) bool { return p.Level == "team" && !managesAccess(p) })
		}},
	{3, "Read-Only User", "every permission that only reads", "viewer", func() []string { return auth.PresetPermissions(auth.ReadOnly) }},
	{4, "Data Admin", "every read, and setting up the data: data plans, parsing, events to metrics, recording rules, enrichments, datasets, schema, quotas", "",
		readsOr("dataplans", "parsing_rules", "recording_rules", "enrichments", "logs", "metrics", "spans", "dataengine", "schema", "quota_rules", "data_map")},
	{5, "Observability Lead", "every read, and running observability: alerts, dashboards, incidents, cases, SLOs, notifications, APM, RUM, actions, views", "",
		readsOr("alerts", "dashboards", "incidents", "case", "slo_mgmt", "notifications", "apm", "rum", "actions", "apps",
			"infrastructure_monitoring", "hosted_apps", "integrations", "investigations")},
	{6, "Security User", "every read, and the security features", "", readsOr("snowbit")},
	{7, "No-Access User", "no permission", "", func() []string { return []string{} }},
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

// systemByName finds a system role by its public name or its old name, in any case.
func systemByName(name string) (systemRole, bool) {
	for _, r := range systemRoles {
		if strings.EqualFold(r.name, name) || (r.oldName != "" && strings.EqualFold(r.oldName, name)) {
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

// wire is the role as answered; a role without a parent (parentID 0) has neither parent field.
func (r role) wire(teamID int64) oas.CustomRole {
	out := oas.CustomRole{
		RoleId: r.id, TeamId: teamID, Name: r.name, Description: r.description,
		Permissions: slices.Clone(r.permissions),
	}
	if parent, ok := systemByID(r.parentID); ok {
		out.ParentRoleId = oas.NewOptInt64(parent.id)
		out.ParentRoleName = oas.NewOptString(parent.name)
	}
	return out
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

// checkPermissions resolves every name against the permission catalog (any case; a retired name
// stands for its public names, see auth.Resolve) and returns the public names sorted, without
// repeats.
//
// Errors: Invalid naming field[i].
func checkPermissions(field string, perms []string) ([]string, error) {
	out, err := auth.ResolveAll(field, perms)
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
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
		// The newest public documents let a role derive from no system role: it holds its own
		// permissions only (parent id 0 is stored, as no system role has it).
	}
	perms, err := checkPermissions("permissions", req.Permissions)
	if err != nil {
		return role{}, err
	}
	return role{name: req.Name, description: desc, parentID: parent.id, permissions: perms}, nil
}
