package access

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// ScopeConfiguration is the scopes' part of a team's configuration document (teamconfig.Area):
// each scope as the reads answer it without teamId, checked by checkScope and stored by putScope,
// as CreateScope and UpdateScope do. A scope keeps its id (a document may give any); display
// names are unique in the team. Prune cannot delete a scope a group holds.
type ScopeConfiguration struct{}

// Key implements teamconfig.Area.
func (ScopeConfiguration) Key() string { return "scopes" }

// Permissions implements teamconfig.Area.
func (ScopeConfiguration) Permissions() (read, write string) {
	return "team-scopes:ReadConfig", "team-scopes:Manage"
}

func exportedScope(s scope) ([]byte, error) {
	w := s.wire(0)
	doc, err := w.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return teamconfig.WithoutFields(doc, "teamId")
}

// Export implements teamconfig.Area.
func (ScopeConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	all, err := listScopes(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(all))
	for _, s := range all {
		doc, err := exportedScope(s)
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: s.ID, Name: s.DisplayName, Doc: doc})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the body of CreateScope with the scope's id.
func (ScopeConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("body: %v", err)
	}
	delete(fields, "id")
	delete(fields, "teamId")
	body, err := json.Marshal(fields)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.CreateScopeRequest
	if err := teamconfig.DecodeBody(oas.CreateScopeOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	s, err := checkScope(in.DisplayName, in.Description.Or(""), in.DefaultExpression.Or(defaultExpression), in.Filters)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	s.ID = id
	encoded, err := exportedScope(s)
	return teamconfig.Resource{ID: id, Name: s.DisplayName, Doc: encoded, Value: s}, err
}

// Put implements teamconfig.Area.
func (ScopeConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	s := r.Value.(scope)
	return conflictAs(putScope(ctx, tx, teamID, s, exists), "displayName: the team has a scope named %q already", s.DisplayName)
}

// Delete implements teamconfig.Area.
func (ScopeConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if err := scopeUnused(ctx, tx, teamID, id); err != nil {
		return err
	}
	return deleteScope(ctx, tx, teamID, id)
}

// GroupConfiguration is the groups' part of a team's configuration document (teamconfig.Area):
// each group as the reads answer it without teamId, origin and times, checked by
// checkCreateGroup and apply as CreateTeamGroup does (the role a system role or a custom role of
// the team, the scope one of the team's). A group keeps its groupId; a group without one gets the
// team's next id. Members are people, not configuration: a document neither lists nor changes
// them, and a group it replaces keeps its members.
type GroupConfiguration struct{}

// Key implements teamconfig.Area.
func (GroupConfiguration) Key() string { return "groups" }

// Permissions implements teamconfig.Area.
func (GroupConfiguration) Permissions() (read, write string) {
	return "team-groups:ReadConfig", "team-groups:Manage"
}

func exportedGroup(ctx context.Context, q db.Querier, teamID int64, g group) ([]byte, error) {
	w, err := g.wire(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	if w.Role.Set {
		w.Role.Value.Name.Reset() // the role's name follows its id
	}
	doc, err := w.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return teamconfig.WithoutFields(doc, "teamId", "groupOrigin", "createdAt", "updatedAt")
}

// Export implements teamconfig.Area.
func (GroupConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	all, err := listGroups(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(all))
	for _, g := range all {
		doc, err := exportedGroup(ctx, q, teamID, g)
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: strconv.FormatInt(g.id, 10), Name: g.name, Doc: doc})
	}
	return out, nil
}

// preparedGroup is a group of a document, checked as far as nothing stored is read.
type preparedGroup struct {
	id     int64
	change groupChange
}

// Prepare implements teamconfig.Area: a group as exported (groupId, name, externalId, groupType,
// role.roleId, scope.scopeId), read as the body of CreateTeamGroup.
func (GroupConfiguration) Prepare(ctx context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in struct {
		GroupID *int64  `json:"groupId"`
		Name    string  `json:"name"`
		Ext     *string `json:"externalId"`
		Type    *string `json:"groupType"`
		Role    *struct {
			RoleID *int64 `json:"roleId"`
		} `json:"role"`
		Scope *json.RawMessage `json:"scope"`
	}
	if err := json.Unmarshal(doc, &in); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("body: %v", err)
	}
	body := map[string]any{"name": in.Name}
	if in.Ext != nil {
		body["externalId"] = *in.Ext
	}
	if in.Type != nil {
		body["groupType"] = *in.Type
	}
	if in.Role != nil && in.Role.RoleID != nil {
		body["roleId"] = *in.Role.RoleID
	}
	if in.Scope != nil {
		body["scope"] = in.Scope
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var req oas.CreateTeamGroupRequest
	if err := teamconfig.DecodeBody(oas.CreateTeamGroupOperation, raw, &req); err != nil {
		return teamconfig.Resource{}, err
	}
	c, err := checkCreateGroup(0, &req)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	c.userOp = "" // members are not configuration
	var id int64
	if in.GroupID != nil {
		if *in.GroupID < 1 {
			return teamconfig.Resource{}, apierror.Invalidf("groupId: must be at least 1, got %d", *in.GroupID)
		}
		id = *in.GroupID
	}
	g := group{id: id, origin: originUserDefined}
	c.applyFields(&g)
	encoded, err := json.Marshal(groupDocument(g))
	idText := ""
	if id != 0 {
		idText = strconv.FormatInt(id, 10)
	}
	return teamconfig.Resource{ID: idText, Name: g.name, Doc: encoded, Value: preparedGroup{id: id, change: c}}, err
}

// groupDocument is a prepared group in the export's form, before its role's name is read.
func groupDocument(g group) map[string]any {
	doc := map[string]any{"name": g.name, "externalId": g.externalID, "groupType": g.groupType}
	if g.id != 0 {
		doc["groupId"] = g.id
	}
	if g.roleID != 0 {
		doc["role"] = map[string]any{"roleId": g.roleID}
	}
	if g.scopeID != "" {
		doc["scope"] = map[string]any{"scopeId": g.scopeID}
	}
	return doc
}

// Put implements teamconfig.Area.
func (GroupConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(preparedGroup)
	g := group{id: p.id, origin: originUserDefined, members: []int64{}}
	if exists {
		cur, err := getGroup(ctx, tx, teamID, p.id)
		if err != nil {
			return err
		}
		g = cur
	}
	if err := p.change.apply(ctx, tx, teamID, &g, "role.roleId", "scope.scopeId"); err != nil {
		return err
	}
	if exists {
		return conflictAs(updateGroup(ctx, tx, teamID, g), "name: the team has a group named %q already", g.name)
	}
	if g.id == 0 {
		id, err := db.NextTeamNumber(ctx, tx, teamID, "group")
		if err != nil {
			return err
		}
		g.id = id
	} else if err := db.ReserveTeamNumber(ctx, tx, teamID, "group", g.id); err != nil {
		return err
	}
	return conflictAs(insertGroup(ctx, tx, teamID, g), "name: the team has a group named %q already", g.name)
}

// Delete implements teamconfig.Area.
func (GroupConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return apierror.Invalidf("groupId: %q is not a group id", id)
	}
	return deleteGroup(ctx, tx, teamID, n)
}
