package dashboards

import (
	"context"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// FolderConfiguration is the dashboard folders' part of a team's configuration document
// (teamconfig.Area): each folder as GetDashboardFolder answers it ({id, name, parentId}), checked
// as the folder of CreateDashboardFolder's body and stored by createFolder, replaceFolder and
// deleteFolder, so the rules are the operations' (parent in the team, no cycle, a folder that
// holds dashboards or folders is not deleted: 409). The export lists parents before their
// children, the order an apply needs, since a folder's parent must exist when it is stored.
// Folders are deleted after every other area is applied (teamconfig.DeletesLast), so that a
// document can move dashboards out of a folder it drops.
type FolderConfiguration struct{}

// Key implements teamconfig.Area.
func (FolderConfiguration) Key() string { return "dashboardFolders" }

// DeletesLast implements teamconfig.DeletesLast.
func (FolderConfiguration) DeletesLast() {}

// Permissions implements teamconfig.Area.
func (FolderConfiguration) Permissions() (read, write string) {
	return "team-dashboards:Read", "team-dashboards:Update"
}

// Export implements teamconfig.Area: top-level folders by name, then id, then each level's
// children likewise.
func (FolderConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var all []folder
	if err := eachFolder(ctx, q, teamID, func(f folder) error {
		all = append(all, f)
		return nil
	}); err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(all))
	placed := map[string]bool{}
	for level := map[string]bool{"": true}; len(out) < len(all) && len(level) > 0; {
		next := map[string]bool{}
		for _, f := range all {
			if placed[f.id] || !level[f.parentID] {
				continue
			}
			w := f.wire()
			doc, err := w.MarshalJSON()
			if err != nil {
				return nil, err
			}
			out = append(out, teamconfig.Resource{ID: f.id, Name: f.name, Doc: doc, Value: f})
			placed[f.id], next[f.id] = true, true
		}
		level = next
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the folder of CreateDashboardFolder's body (a folder
// without an id gets a fresh one).
func (FolderConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	body := append(append([]byte(`{"folder":`), doc...), '}')
	var in oas.DashboardFolderWrite
	if err := teamconfig.DecodeBody(oas.CreateDashboardFolderOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	if !in.Folder.ID.Set {
		in.Folder.ID = oas.NewOptString(strings.ToLower(newID()))
	}
	f, err := folderOfWrite(in.Folder)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	w := f.wire()
	encoded, err := w.MarshalJSON()
	return teamconfig.Resource{ID: f.id, Name: f.name, Doc: encoded, Value: f}, err
}

// Put implements teamconfig.Area.
func (FolderConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	f := r.Value.(folder)
	if exists {
		return replaceFolder(ctx, tx, teamID, f)
	}
	tx.AuditResource(f.id)
	return createFolder(ctx, tx, teamID, f)
}

// Delete implements teamconfig.Area.
func (FolderConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteFolder(ctx, tx, teamID, id, "")
}
