package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/roles"
)

// wire is the group as answered, read in q for its role's name. A role that no longer exists (a
// configuration apply pruned it) is not answered, and grants nothing.
func (g group) wire(ctx context.Context, q db.Querier, teamID int64) (oas.TeamGroup, error) {
	out := oas.TeamGroup{
		GroupId: oas.NewOptInt64(g.id), TeamId: oas.NewOptInt64(teamID), Name: oas.NewOptString(g.name),
		ExternalId: oas.NewOptString(g.externalID), GroupType: oas.NewOptTeamGroupType(oas.TeamGroupType(g.groupType)),
		GroupOrigin: oas.NewOptTeamGroupGroupOrigin(oas.TeamGroupGroupOrigin(g.origin)),
		CreatedAt:   oas.NewOptDateTime(g.createdAt), UpdatedAt: oas.NewOptDateTime(g.updatedAt),
	}
	if g.roleID != 0 {
		name, _, err := roles.Lookup(ctx, q, teamID, g.roleID)
		switch {
		case err == nil:
			out.Role = oas.NewOptTeamGroupRole(oas.TeamGroupRole{RoleId: oas.NewOptInt64(g.roleID), Name: oas.NewOptString(name)})
		case !errors.Is(err, db.ErrNotFound):
			return out, err
		}
	}
	if g.scopeID != "" {
		out.Scope = oas.NewOptTeamGroupScope(oas.TeamGroupScope{ScopeId: oas.NewOptString(g.scopeID)})
	}
	return out, nil
}

// groupChange is a checked create or update of a group: the fields to write and the references
// to resolve in the transaction.
type groupChange struct {
	name, description, externalID, groupType *string
	roleID                                   *int64 // 0 clears
	scopeID                                  *string
	// userOp is "add", "remove" or "set" (with userIDs and its field), or "".
	userOp     string
	userIDs    []string
	usersField string
}

func checkGroupType(t oas.TeamGroupType) string {
	if t == oas.TeamGroupTypeGROUPTYPEUNSPECIFIED {
		return string(oas.TeamGroupTypeGROUPTYPEOPEN)
	}
	return string(t)
}

// checkCreateGroup checks a create request against every rule that reads nothing stored.
//
// Errors: Invalid naming the field; NotFound naming teamId when it is not the caller's team.
func checkCreateGroup(teamID int64, req *oas.CreateTeamGroupRequest) (groupChange, error) {
	if t, ok := req.TeamId.Get(); ok {
		if err := sameTeam("teamId", t, teamID); err != nil {
			return groupChange{}, err
		}
	}
	name := req.Name.Or("")
	if err := checkLength("name", name, MaxNameLength, true); err != nil {
		return groupChange{}, err
	}
	desc, ext := req.Description.Or(""), req.ExternalId.Or("")
	if err := checkLength("description", desc, MaxDescriptionLength, false); err != nil {
		return groupChange{}, err
	}
	if err := checkLength("externalId", ext, MaxNameLength, false); err != nil {
		return groupChange{}, err
	}
	gt := checkGroupType(req.GroupType.Or(oas.TeamGroupTypeGROUPTYPEOPEN))
	c := groupChange{name: &name, description: &desc, externalID: &ext, groupType: &gt}
	role := req.RoleId.Or(0)
	c.roleID = &role
	sc := ""
	if s, ok := req.Scope.Get(); ok {
		sc = s.ScopeId.Or("")
	}
	c.scopeID = &sc
	c.userOp, c.userIDs, c.usersField = "set", req.UserIds, "userIds"
	return c, nil
}

// checkUpdateGroup checks an update request against every rule that reads nothing stored.
//
// Errors: Invalid naming the field.
func checkUpdateGroup(req *oas.UpdateTeamGroupRequest) (groupChange, error) {
	var c groupChange
	if v, ok := req.Name.Get(); ok {
		if err := checkLength("name", v, MaxNameLength, true); err != nil {
			return c, err
		}
		c.name = &v
	}
	if v, ok := req.Description.Get(); ok {
		if err := checkLength("description", v, MaxDescriptionLength, false); err != nil {
			return c, err
		}
		c.description = &v
	}
	if v, ok := req.ExternalId.Get(); ok {
		if err := checkLength("externalId", v, MaxNameLength, false); err != nil {
			return c, err
		}
		c.externalID = &v
	}
	if v, ok := req.GroupType.Get(); ok {
		t := checkGroupType(v)
		c.groupType = &t
	}
	if u, ok := req.RoleUpdate.Get(); ok {
		if a, ok := u.Action.Get(); ok {
			set, isSet := a.SetRoleId.Get()
			switch {
			case isSet && a.Clear.Set:
				return c, apierror.Invalidf("roleUpdate.action: give one of setRoleId and clear, not both")
			case isSet:
				v, ok := set.Value.Get()
				if !ok {
					return c, apierror.Invalidf("roleUpdate.action.setRoleId.value: is required")
				}
				c.roleID = &v
			case a.Clear.Set:
				zero := int64(0)
				c.roleID = &zero
			default:
				return c, apierror.Invalidf("roleUpdate.action: give one of setRoleId and clear")
			}
		}
	}
	if u, ok := req.ScopeUpdate.Get(); ok {
		if a, ok := u.Action.Get(); ok {
			set, isSet := a.SetScopeId.Get()
			switch {
			case isSet && a.Clear.Set:
				return c, apierror.Invalidf("scopeUpdate.action: give one of setScopeId and clear, not both")
			case isSet:
				v, ok := set.Value.Get()
				if !ok || v == "" {
					return c, apierror.Invalidf("scopeUpdate.action.setScopeId.value: is required (a scope's id)")
				}
				c.scopeID = &v
			case a.Clear.Set:
				empty := ""
				c.scopeID = &empty
			default:
				return c, apierror.Invalidf("scopeUpdate.action: give one of setScopeId and clear")
			}
		}
	}
	if u, ok := req.UserUpdates.Get(); ok {
		if op, ok := u.Operation.Get(); ok {
			n := 0
			for _, alt := range []struct {
				name string
				list oas.OptTeamGroupUserIds
			}{{"add", op.Add}, {"remove", op.Remove}, {"set", op.Set}} {
				if alt.list.Set {
					n++
					c.userOp, c.userIDs, c.usersField = alt.name, alt.list.Value.UserIds, "userUpdates.operation."+alt.name+".userIds"
				}
			}
			if n != 1 {
				return c, apierror.Invalidf("userUpdates.operation: give exactly one of add, remove and set (got %d)", n)
			}
		}
	}
	return c, nil
}

// apply resolves c's references in q and writes it onto g.
//
// Errors: Invalid naming roleId, the scope's id or a user id that the team does not have.
func (c groupChange) apply(ctx context.Context, q db.Querier, teamID int64, g *group, roleField, scopeField string) error {
	c.applyFields(g)
	if c.roleID != nil {
		if *c.roleID != 0 {
			if _, _, err := roles.Lookup(ctx, q, teamID, *c.roleID); err != nil {
				return notFoundAsInvalid(err, "%s: %d is neither a system role (1 to 7) nor a custom role of the team", roleField, *c.roleID)
			}
		}
	}
	if c.scopeID != nil {
		if *c.scopeID != "" {
			if _, err := getScope(ctx, q, teamID, *c.scopeID); err != nil {
				return notFoundAsInvalid(err, "%s: the team has no scope %q", scopeField, *c.scopeID)
			}
		}
	}
	return c.applyMembers(ctx, q, teamID, g)
}

// applyFields writes c's own fields, role and scope onto g, references unchecked.
func (c groupChange) applyFields(g *group) {
	if c.name != nil {
		g.name = *c.name
	}
	if c.description != nil {
		g.description = *c.description
	}
	if c.externalID != nil {
		g.externalID = *c.externalID
	}
	if c.groupType != nil {
		g.groupType = *c.groupType
	}
	if c.roleID != nil {
		g.roleID = *c.roleID
	}
	if c.scopeID != nil {
		g.scopeID = *c.scopeID
	}
}

// applyMembers resolves c's members in q and changes g's as c's operation says.
func (c groupChange) applyMembers(ctx context.Context, q db.Querier, teamID int64, g *group) error {
	if c.userOp == "" {
		return nil
	}
	if len(c.userIDs) > MaxGroupUsers {
		return apierror.Invalidf("%s: at most %d members (got %d)", c.usersField, MaxGroupUsers, len(c.userIDs))
	}
	accounts := make([]int64, 0, len(c.userIDs))
	for i, id := range c.userIDs {
		m, err := memberByUserID(ctx, q, teamID, id)
		if err != nil {
			return notFoundAsInvalid(err, "%s[%d]: %q is not a member of the team (a member's userId)", c.usersField, i, id)
		}
		accounts = append(accounts, m.accountID)
	}
	switch c.userOp {
	case "set":
		g.members = nil
		fallthrough
	case "add":
		for _, a := range accounts {
			if !slices.Contains(g.members, a) {
				g.members = append(g.members, a)
			}
		}
	case "remove":
		g.members = slices.DeleteFunc(g.members, func(a int64) bool { return slices.Contains(accounts, a) })
	}
	slices.Sort(g.members)
	return nil
}

// CreateTeamGroup creates a group in the caller's team under the team's next group id.
//
// Errors: Invalid and NotFound (checkCreateGroup, apply); Conflict when the team has a group of
// that name.
func (h *AccessHandler) CreateTeamGroup(ctx context.Context, req *oas.CreateTeamGroupRequest) (*oas.TeamGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	c, err := checkCreateGroup(caller.TeamID, req)
	if err != nil {
		return nil, err
	}
	var out oas.TeamGroup
	err = h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		g := group{origin: originUserDefined, members: []int64{}}
		if err := c.apply(ctx, tx, caller.TeamID, &g, "roleId", "scope.scopeId"); err != nil {
			return err
		}
		var err error
		if g.id, err = db.NextTeamNumber(ctx, tx, caller.TeamID, "group"); err != nil {
			return err
		}
		tx.AuditResource(strconv.FormatInt(g.id, 10))
		if err := insertGroup(ctx, tx, caller.TeamID, g); err != nil {
			return err
		}
		g.createdAt, g.updatedAt = tx.Now, tx.Now
		out, err = g.wire(ctx, tx, caller.TeamID)
		return err
	})
	if err != nil {
		return nil, conflictAs(err, "name: the team has a group named %q already", *c.name)
	}
	return &oas.TeamGroupResponse{Group: oas.NewOptTeamGroup(out)}, nil
}

// GetTeamGroup answers one group of the caller's team.
//
// Errors: NotFound when the team has no such group.
func (h *AccessHandler) GetTeamGroup(ctx context.Context, params oas.GetTeamGroupParams) (*oas.TeamGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	g, err := getGroup(ctx, h.db.Read(), caller.TeamID, params.GroupID)
	if err != nil {
		return nil, notFoundAs(err, "group_id: the team has no group %d", params.GroupID)
	}
	return h.answerGroup(ctx, caller.TeamID, g)
}

// GetTeamGroupByName answers the caller's team's group of that name (exactly).
//
// Errors: NotFound when the team has no group of that name.
func (h *AccessHandler) GetTeamGroupByName(ctx context.Context, params oas.GetTeamGroupByNameParams) (*oas.TeamGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	g, err := groupByName(ctx, h.db.Read(), caller.TeamID, params.Name)
	if err != nil {
		return nil, notFoundAs(err, "name: the team has no group named %q", params.Name)
	}
	return h.answerGroup(ctx, caller.TeamID, g)
}

func (h *AccessHandler) answerGroup(ctx context.Context, teamID int64, g group) (*oas.TeamGroupResponse, error) {
	w, err := g.wire(ctx, h.db.Read(), teamID)
	if err != nil {
		return nil, err
	}
	return &oas.TeamGroupResponse{Group: oas.NewOptTeamGroup(w)}, nil
}

// ListTeamGroups answers a page of the caller's team's groups, by id.
//
// Errors: NotFound when team_id is not the caller's team; Invalid for a page size over the bound
// or a page token this server did not give.
func (h *AccessHandler) ListTeamGroups(ctx context.Context, params oas.ListTeamGroupsParams) (*oas.TeamGroupList, error) {
	caller := auth.PrincipalFrom(ctx)
	if t, ok := params.TeamID.Get(); ok {
		if err := sameTeam("team_id", t, caller.TeamID); err != nil {
			return nil, err
		}
	}
	size, sizeSet := params.PageSize.Get()
	limit, offset, err := pageOf(size, sizeSet, params.PageToken.Or(""))
	if err != nil {
		return nil, err
	}
	q := h.db.Read()
	all, err := listGroups(ctx, q, caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := &oas.TeamGroupList{Groups: []oas.TeamGroup{}, TotalCount: oas.NewOptInt64(int64(len(all)))}
	for i := offset; i < int64(len(all)) && i < offset+limit; i++ {
		w, err := all[i].wire(ctx, q, caller.TeamID)
		if err != nil {
			return nil, err
		}
		out.Groups = append(out.Groups, w)
	}
	if next := offset + limit; next < int64(len(all)) {
		out.NextPageToken = oas.NewOptString(strconv.FormatInt(next, 10))
	}
	return out, nil
}

// UpdateTeamGroup changes what the request gives on one group of the caller's team.
//
// Errors: NotFound when the team has no such group; Invalid (checkUpdateGroup, apply); Conflict
// for a name another group has.
func (h *AccessHandler) UpdateTeamGroup(ctx context.Context, req *oas.UpdateTeamGroupRequest, params oas.UpdateTeamGroupParams) (*oas.TeamGroupResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	c, err := checkUpdateGroup(req)
	if err != nil {
		return nil, err
	}
	var out oas.TeamGroup
	err = h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		g, err := getGroup(ctx, tx, caller.TeamID, params.GroupID)
		if err != nil {
			return notFoundAs(err, "group_id: the team has no group %d", params.GroupID)
		}
		if err := c.apply(ctx, tx, caller.TeamID, &g, "roleUpdate.action.setRoleId.value", "scopeUpdate.action.setScopeId.value"); err != nil {
			return err
		}
		if err := updateGroup(ctx, tx, caller.TeamID, g); err != nil {
			return err
		}
		g.updatedAt = tx.Now
		out, err = g.wire(ctx, tx, caller.TeamID)
		return err
	})
	if err != nil {
		name := ""
		if c.name != nil {
			name = *c.name
		}
		return nil, conflictAs(err, "name: the team has a group named %q already", name)
	}
	return &oas.TeamGroupResponse{Group: oas.NewOptTeamGroup(out)}, nil
}

// DeleteTeamGroup deletes one group of the caller's team; its members lose what it gave them.
//
// Errors: NotFound when the team has no such group.
func (h *AccessHandler) DeleteTeamGroup(ctx context.Context, params oas.DeleteTeamGroupParams) (*oas.TeamGroupDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	err := h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		return deleteGroup(ctx, tx, caller.TeamID, params.GroupID)
	})
	if err != nil {
		return nil, notFoundAs(err, "group_id: the team has no group %d", params.GroupID)
	}
	return &oas.TeamGroupDeleted{GroupId: oas.NewOptInt64(params.GroupID)}, nil
}

// ListTeamGroupUsers answers a page of a group's members, by account id.
//
// Errors: NotFound when the team has no such group; Invalid for a page size over the bound or a
// page token this server did not give.
func (h *AccessHandler) ListTeamGroupUsers(ctx context.Context, params oas.ListTeamGroupUsersParams) (*oas.TeamGroupUsers, error) {
	caller := auth.PrincipalFrom(ctx)
	size, sizeSet := params.PageSize.Get()
	limit, offset, err := pageOf(size, sizeSet, params.PageToken.Or(""))
	if err != nil {
		return nil, err
	}
	q := h.db.Read()
	g, err := getGroup(ctx, q, caller.TeamID, params.GroupID)
	if err != nil {
		return nil, notFoundAs(err, "group_id: the team has no group %d", params.GroupID)
	}
	now := h.db.Now()
	out := &oas.TeamGroupUsers{Users: []oas.TeamMember{}, TotalCount: oas.NewOptInt64(int64(len(g.members)))}
	for i := offset; i < int64(len(g.members)) && i < offset+limit; i++ {
		m, err := getMember(ctx, q, caller.TeamID, g.members[i])
		if err != nil {
			return nil, fmt.Errorf("group %d member %d: %w", g.id, g.members[i], err)
		}
		out.Users = append(out.Users, m.wire(now))
	}
	if next := offset + limit; next < int64(len(g.members)) {
		out.NextPageToken = oas.NewOptString(strconv.FormatInt(next, 10))
	}
	return out, nil
}

// RoleUsers names the team's groups that hold the custom role roleID (roles.Users): such a role
// cannot be deleted.
func RoleUsers(ctx context.Context, tx *db.Tx, teamID, roleID int64) ([]string, error) {
	return groupsWhere(ctx, tx, teamID, "role_id", roleID)
}

// AddTeamAdmins makes each address an active member of the new team teamID, in its built-in
// group TeamAdminsGroup holding the system role Platform Admin, in tx. The addresses are checked
// already and distinct.
func AddTeamAdmins(ctx context.Context, tx *db.Tx, teamID int64, emails []string) error {
	if len(emails) == 0 {
		return nil
	}
	g := group{name: TeamAdminsGroup, description: "the administrators named when the team was created",
		groupType: string(oas.TeamGroupTypeGROUPTYPECLOSED), origin: originBuiltIn, roleID: platformAdminRole}
	for _, email := range emails {
		id, err := db.NextTeamNumber(ctx, tx, teamID, "member")
		if err != nil {
			return err
		}
		m := member{accountID: id, userID: tx.NewID(), username: email, status: statusActive}
		if err := insertMember(ctx, tx, teamID, m); err != nil {
			return err
		}
		g.members = append(g.members, id)
	}
	var err error
	if g.id, err = db.NextTeamNumber(ctx, tx, teamID, "group"); err != nil {
		return err
	}
	return insertGroup(ctx, tx, teamID, g)
}
