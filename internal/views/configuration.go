package views

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// FolderConfiguration is the view folders' part of a team's configuration document
// (teamconfig.Area): each folder as GetViewFolder answers it, checked as ReplaceViewFolder's
// body and stored by insertFolder, renameFolder and deleteFolder (a folder that holds views is
// not deleted: 409). Folders are deleted after every other area is applied
// (teamconfig.DeletesLast), so that a document can move views out of a folder it drops.
type FolderConfiguration struct{}

// Key implements teamconfig.Area.
func (FolderConfiguration) Key() string { return "viewFolders" }

// DeletesLast implements teamconfig.DeletesLast.
func (FolderConfiguration) DeletesLast() {}

// Permissions implements teamconfig.Area.
func (FolderConfiguration) Permissions() (read, write string) {
	return "team-saved-views:Read", "team-saved-views:Update"
}

// Export implements teamconfig.Area.
func (FolderConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachFolder(ctx, q, teamID, func(f *oas.ViewFolder) error {
		doc, err := f.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: f.ID, Name: f.Name, Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the body of ReplaceViewFolder (a folder without an id gets
// a fresh one).
func (FolderConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	filled, err := teamconfig.WithFields(doc, map[string]any{"id": newID()})
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.ViewFolderReplace
	if err := teamconfig.DecodeBody(oas.ReplaceViewFolderOperation, filled, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	f := oas.ViewFolder{ID: string(in.ID), Name: in.Name}
	encoded, err := f.MarshalJSON()
	return teamconfig.Resource{ID: f.ID, Name: f.Name, Doc: encoded, Value: f}, err
}

// Put implements teamconfig.Area.
func (FolderConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	f := r.Value.(oas.ViewFolder)
	if exists {
		return renameFolder(ctx, tx, teamID, f)
	}
	return insertFolder(ctx, tx, teamID, f)
}

// Delete implements teamconfig.Area.
func (FolderConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	held, err := deleteFolder(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	if held > 0 {
		return apierror.Conflictf("id: view folder %s holds %d views; move or delete them first", id, held)
	}
	return nil
}

// Configuration is the saved views' part of a team's configuration document
// (teamconfig.Area): each view as GetView answers it, checked as CreateView's body by checkView
// and stored by createView and replaceCheckedView (folderId must name a folder of the team; the
// team's limits hold), as the HTTP operations do. A view keeps its id; a view without one gets
// the team's next id.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "views" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "team-saved-views:Read", "team-saved-views:Update"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachView(ctx, q, teamID, func(v view) error {
		w := v.wire()
		doc, err := w.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: strconv.Itoa(int(v.id)), Name: v.doc.Name, Doc: doc})
		return err
	})
	return out, err
}

// prepared is a view of a document, checked.
type prepared struct {
	id  int64 // 0: the team's next
	req oas.ViewRequest
}

// Prepare implements teamconfig.Area: the body of CreateView with the view's id, checked by
// checkView.
func (Configuration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return teamconfig.Resource{}, teamconfig.Invalidf("body: %v", err)
	}
	var id int64
	if raw, ok := fields["id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil || id < 1 || id > MaxID {
			return teamconfig.Resource{}, apierror.Invalidf("id: must be an integer from 1 to %d, got %s", MaxID, raw)
		}
		delete(fields, "id")
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.ViewRequest
	if err := teamconfig.DecodeBody(oas.CreateViewOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	if err := checkView(&in); err != nil {
		return teamconfig.Resource{}, err
	}
	v := view{id: int32(id), folderID: string(in.FolderId.Or("")), doc: in}
	w := v.wire()
	encoded, err := w.MarshalJSON()
	if err == nil && id == 0 {
		encoded, err = teamconfig.WithoutFields(encoded, "id")
	}
	rid := ""
	if id != 0 {
		rid = strconv.FormatInt(id, 10)
	}
	return teamconfig.Resource{ID: rid, Name: in.Name, Doc: encoded, Value: prepared{id: id, req: in}}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(prepared)
	if exists {
		return replaceCheckedView(ctx, tx, teamID, p.id, &p.req)
	}
	_, err := createView(ctx, tx, teamID, p.id, &p.req)
	return err
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return apierror.Invalidf("id: %q is not a view id", id)
	}
	return deleteView(ctx, tx, teamID, n)
}
