package roles

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the custom roles' part of a team's configuration document
// (teamconfig.Area): each custom role as GetCustomRole answers it without teamId, checked by
// checkCreate and stored by insertRole and updateRole, as the HTTP operations do (names unique
// in the team; the parent role cannot change). A role keeps its roleId (at least 1001); a role
// without one gets the team's next id.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "customRoles" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "team-roles:ReadConfig", "team-roles:Manage"
}

func exported(r role, teamID int64) ([]byte, error) {
	w := r.wire(teamID)
	doc, err := w.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return teamconfig.WithoutFields(doc, "teamId")
}

func idText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachRole(ctx, q, teamID, func(r role) error {
		doc, err := exported(r, teamID)
		out = append(out, teamconfig.Resource{ID: idText(r.id), Name: r.name, Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of CreateCustomRole with the role's roleId,
// checked by checkCreate; parentRoleName is read only when parentRoleId is absent.
func (Configuration) Prepare(ctx context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("body: %v", err)
	}
	var id int64
	if raw, ok := fields["roleId"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil || id < firstID {
			return teamconfig.Resource{}, apierror.Invalidf("roleId: must be an integer of at least %d (custom role ids), got %s", firstID, raw)
		}
	}
	if _, ok := fields["parentRoleId"]; ok {
		delete(fields, "parentRoleName")
	}
	delete(fields, "roleId")
	delete(fields, "teamId")
	body, err := json.Marshal(fields)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.CustomRoleRequest
	if err := teamconfig.DecodeBody(oas.CreateCustomRoleOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	teamID := auth.PrincipalFrom(ctx).TeamID
	r, err := checkCreate(teamID, &in)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	r.id = id
	encoded, err := exported(r, teamID)
	return teamconfig.Resource{ID: idText(id), Name: r.name, Doc: encoded, Value: r}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, res teamconfig.Resource, exists bool) error {
	r := res.Value.(role)
	if exists {
		cur, err := getRole(ctx, tx, teamID, r.id)
		if err != nil {
			return err
		}
		if cur.parentID != r.parentID {
			return apierror.Invalidf("parentRoleId: a custom role's parent cannot change (it is %d); delete the role and create it again", cur.parentID)
		}
		return conflictAs(updateRole(ctx, tx, teamID, r), "name", r.name)
	}
	if r.id == 0 {
		id, err := nextID(ctx, tx, teamID)
		if err != nil {
			return err
		}
		r.id = id
	} else if err := reserveID(ctx, tx, teamID, r.id); err != nil {
		return err
	}
	return conflictAs(insertRole(ctx, tx, teamID, r), "name", r.name)
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return apierror.Invalidf("roleId: %q is not a custom role id", id)
	}
	return deleteRole(ctx, tx, teamID, n)
}
