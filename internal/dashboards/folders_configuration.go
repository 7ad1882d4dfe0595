package dashboards

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// FolderConfiguration is the dashboard folders' part of a team's configuration document
// (teamconfig.Area): each folder as GetDashboardFolder answers it ({id, name, parentId}), checked
// as the folder of CreateDashboardFolder's body and stored by createFolder, replaceFolder and
// deleteFolder, so the rules are the operations' (parent in the team, no cycle, a folder that
// holds dashboards or folders is not deleted: 409). An apply stores the document's folders
// first and their parents after (Finish), so the document's order does not matter. Folders are
// deleted after every other area is applied (teamconfig.DeletesLast), so that a
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

// Export implements teamconfig.Area.
func (FolderConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachFolder(ctx, q, teamID, func(f folder) error {
		w := f.wire()
		doc, err := w.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: f.id, Name: f.name, Doc: doc, Value: f})
		return err
	})
	return out, err
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

// Put implements teamconfig.Area: the folder is stored at the top level, and Finish gives it its
// parent once every folder of the document is stored.
func (FolderConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	f := r.Value.(folder)
	f.parentID = ""
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

// Finish implements teamconfig.Finisher: each folder of the document whose stored name or parent
// differs from the document's is given them, with the operations' checks (the parent exists, no
// cycle). Every edge stored meanwhile is one the document has or one the apply leaves alone, so a
// document without a cycle never meets one on the way.
//
// Errors: Invalid naming the folder, when its parent is neither the team's nor the document's, or
// the document makes a cycle.
func (FolderConfiguration) Finish(ctx context.Context, tx *db.Tx, teamID int64, want []teamconfig.Resource) error {
	for _, r := range want {
		f := r.Value.(folder)
		cur, err := getFolder(ctx, tx, teamID, f.id)
		if err != nil {
			return err
		}
		if cur == f {
			continue
		}
		if err := replaceFolder(ctx, tx, teamID, f); err != nil {
			var e *apierror.Error
			if errors.As(err, &e) {
				return &apierror.Error{Kind: e.Kind, Message: fmt.Sprintf("folder %s (%q): %s", f.id, f.name, e.Message)}
			}
			return err
		}
	}
	return nil
}

// OrderDeletes implements teamconfig.DeleteOrderer: deeper folders first, so that a prune
// deletes a folder's children before the folder.
func (FolderConfiguration) OrderDeletes(deletes []teamconfig.Change, current []teamconfig.Resource) {
	parent := make(map[string]string, len(current))
	for _, r := range current {
		if f, ok := r.Value.(folder); ok {
			parent[f.id] = f.parentID
		}
	}
	depth := func(id string) int {
		n := 0
		for at := parent[id]; at != "" && n <= len(parent); at = parent[at] {
			n++
		}
		return n
	}
	slices.SortStableFunc(deletes, func(x, y teamconfig.Change) int { return depth(y.ID) - depth(x.ID) })
}
