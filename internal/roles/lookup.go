package roles

import (
	"context"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// Lookup returns the name and the permissions of the team's role id, read in q: a system role
// (1 to 7, every team has them) or one of the team's custom roles. A custom role holds its own
// permissions and those of its parent system role, if it has one (docs/decisions.md, issue 34).
// Groups name their role by this id; a member holds the permissions of their groups' roles.
//
// Errors: db.ErrNotFound when the team has no role of that id.
func Lookup(ctx context.Context, q db.Querier, teamID, id int64) (name string, permissions []string, err error) {
	if r, ok := systemByID(id); ok {
		return r.name, r.permissions(), nil
	}
	if id < firstID {
		return "", nil, db.ErrNotFound
	}
	r, err := getRole(ctx, q, teamID, id)
	if err != nil {
		return "", nil, err
	}
	perms := slices.Clone(r.permissions)
	if parent, ok := systemByID(r.parentID); ok {
		perms = append(perms, parent.permissions()...)
	}
	slices.Sort(perms)
	return r.name, slices.Compact(perms), nil
}

// Users names what holds the team's custom role roleID (say "group on-call"), read in tx; a role
// something holds cannot be deleted.
type Users func(ctx context.Context, tx *db.Tx, teamID, roleID int64) ([]string, error)
