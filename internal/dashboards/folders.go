package dashboards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxFolders is the most dashboard folders a team holds (the public list's bound).
const MaxFolders = 10000

// folder is a dashboard folder as stored: ids in lowercase, parentID "" at the top level.
type folder struct {
	id, name, parentID string
}

func (f folder) wire() oas.DashboardFolder {
	out := oas.DashboardFolder{ID: oas.NewOptString(f.id), Name: oas.NewOptString(f.name)}
	if f.parentID != "" {
		out.ParentId = oas.NewOptString(f.parentID)
	}
	return out
}

// folderOfWrite is the body's folder with its ids in lowercase. ogen has checked the bounds of
// what is present (UUIDs, name 1–100 characters).
//
// Errors: Invalid when the name is missing, or the parent is the folder itself.
func folderOfWrite(in oas.DashboardFolder) (folder, error) {
	name, ok := in.Name.Get()
	if !ok {
		return folder{}, apierror.Invalidf("folder.name: required")
	}
	f := folder{id: strings.ToLower(in.ID.Or("")), name: name, parentID: strings.ToLower(in.ParentId.Or(""))}
	if f.parentID != "" && f.parentID == f.id {
		return folder{}, apierror.Invalidf("folder.parentId: must differ from the folder's own id %s", f.id)
	}
	return f, nil
}

// CreateDashboardFolder stores the body's folder under folder.id, or a fresh UUID when it has
// none, and answers the id.
//
// Errors: Invalid when the name is missing or the parent names no folder of the team (or the
// folder itself); Conflict when the team already has a folder with that id; LimitExceeded when
// the team holds MaxFolders folders.
func (h *DashboardHandler) CreateDashboardFolder(ctx context.Context, req *oas.DashboardFolderWrite) (*oas.DashboardFolderCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	f, err := folderOfWrite(req.Folder)
	if err != nil {
		return nil, err
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if f.id == "" {
			f.id = tx.NewID()
		} else {
			tx.AuditResource(f.id)
		}
		return createFolder(ctx, tx, caller.TeamID, f)
	})
	if err != nil {
		return nil, err
	}
	return &oas.DashboardFolderCreated{FolderId: f.id}, nil
}

// createFolder stores the checked folder f (its id set) in tx.
//
// Errors: as CreateDashboardFolder's.
func createFolder(ctx context.Context, tx *db.Tx, teamID int64, f folder) error {
	n, err := serializeFolders(ctx, tx, teamID)
	if err != nil {
		return err
	}
	if n >= MaxFolders {
		return apierror.LimitExceededf("folders: the team holds %d dashboard folders, the most it may; delete some first", n)
	}
	if _, err := getFolder(ctx, tx, teamID, f.id); err == nil {
		return apierror.Conflictf("folder.id: the team already has dashboard folder %s", f.id)
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	if err := checkParent(ctx, tx, teamID, f); err != nil {
		return err
	}
	return insertFolder(ctx, tx, teamID, f)
}

// ReplaceDashboardFolder gives the folder that folder.id names the body's name and parent (none:
// the top level). What the folder holds stays in it.
//
// Errors: Invalid when folder.id or the name is missing, or the parent names no folder of the
// team, the folder itself or a folder inside it; NotFound when the team has no such folder.
func (h *DashboardHandler) ReplaceDashboardFolder(ctx context.Context, req *oas.DashboardFolderWrite) error {
	caller := auth.PrincipalFrom(ctx)
	f, err := folderOfWrite(req.Folder)
	if err != nil {
		return err
	}
	if f.id == "" {
		return apierror.Invalidf("folder.id: required; it names the folder to replace")
	}
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		return replaceFolder(ctx, tx, caller.TeamID, f)
	})
}

// replaceFolder makes the checked folder f the content of the team's folder f.id in tx.
//
// Errors: as ReplaceDashboardFolder's.
func replaceFolder(ctx context.Context, tx *db.Tx, teamID int64, f folder) error {
	if _, err := serializeFolders(ctx, tx, teamID); err != nil {
		return err
	}
	if err := lockFolder(ctx, tx, teamID, f.id); err != nil {
		return folderNotFoundAs(err, "folder.id", f.id)
	}
	if err := checkParent(ctx, tx, teamID, f); err != nil {
		return err
	}
	return updateFolder(ctx, tx, teamID, f)
}

// checkParent requires f's parent, when it has one, to be a folder of the team that is not f and
// not inside f. Folder writes are serialised per team (serializeFolders), so the walk up from the
// parent sees a tree no other write changes meanwhile.
//
// Errors: Invalid naming folder.parentId.
func checkParent(ctx context.Context, tx *db.Tx, teamID int64, f folder) error {
	if f.parentID == "" {
		return nil
	}
	seen := map[string]bool{}
	for at := f.parentID; at != ""; {
		if at == f.id {
			return apierror.Invalidf("folder.parentId: folder %s is inside folder %s; a folder cannot move into itself or a folder inside it", f.parentID, f.id)
		}
		if seen[at] { // a cycle stored before the rule; never written by this code
			break
		}
		seen[at] = true
		p, err := getFolder(ctx, tx, teamID, at)
		if errors.Is(err, db.ErrNotFound) && at == f.parentID {
			return apierror.Invalidf("folder.parentId: no dashboard folder %s; it must name one of the team's dashboard folders", f.parentID)
		}
		if err != nil {
			return err
		}
		at = p.parentID
	}
	return nil
}

// GetDashboardFolder returns one of the team's folders.
//
// Errors: NotFound when the team has no such folder.
func (h *DashboardHandler) GetDashboardFolder(ctx context.Context, params oas.GetDashboardFolderParams) (*oas.DashboardFolderRead, error) {
	caller := auth.PrincipalFrom(ctx)
	f, err := getFolder(ctx, h.db.Read(), caller.TeamID, strings.ToLower(params.FolderID))
	if err != nil {
		return nil, folderNotFoundAs(err, "folder_id", params.FolderID)
	}
	return &oas.DashboardFolderRead{Folder: f.wire()}, nil
}

// ListDashboardFolders returns the team's folders by name, then id.
func (h *DashboardHandler) ListDashboardFolders(ctx context.Context) (*oas.DashboardFolderList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := []oas.DashboardFolder{}
	err := eachFolder(ctx, h.db.Read(), caller.TeamID, func(f folder) error {
		out = append(out, f.wire())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.DashboardFolderList{Folder: out}, nil
}

// DeleteDashboardFolder deletes one of the team's folders when it holds neither dashboards nor
// folders (200, {}). A repeat with the request_id that deleted it answers the same.
//
// Errors: NotFound when the team has no such folder and request_id did not delete it; Conflict
// when dashboards or folders are in it.
func (h *DashboardHandler) DeleteDashboardFolder(ctx context.Context, params oas.DeleteDashboardFolderParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := strings.ToLower(params.FolderID)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return deleteFolder(ctx, tx, caller.TeamID, id, params.RequestID.Or(""))
	})
	return folderNotFoundAs(err, "folder_id", params.FolderID)
}

// deleteFolder deletes the team's empty folder id in tx and, when requestID is not empty,
// remembers it. When the folder is already gone it answers nil if that request id deleted it
// before.
//
// Errors: Conflict when the folder holds dashboards or folders (nothing is deleted);
// db.ErrNotFound when the team has no such folder.
func deleteFolder(ctx context.Context, tx *db.Tx, teamID int64, id, requestID string) error {
	if _, err := serializeFolders(ctx, tx, teamID); err != nil {
		return err
	}
	err := lockFolder(ctx, tx, teamID, id)
	if errors.Is(err, db.ErrNotFound) && requestID != "" {
		if deleted, err := folderDeletedBy(ctx, tx, teamID, id, requestID); err != nil || deleted {
			return err
		}
	}
	if err != nil {
		return err
	}
	// The folder row is locked, and a dashboard write into a folder locks its row first
	// (checkFolderExists), so no dashboard can enter the folder between this count and the delete.
	dashboards, folders, err := folderContents(ctx, tx, teamID, id)
	if err != nil {
		return err
	}
	if dashboards > 0 || folders > 0 {
		return apierror.Conflictf("folder_id: dashboard folder %s holds %d dashboards and %d folders; "+
			"the delete does not say what should become of them, so move or delete them first", id, dashboards, folders)
	}
	return removeFolder(ctx, tx, teamID, id, requestID)
}

// checkFolderExists requires folderID, when valid, to name one of the team's folders, and locks
// that folder until the transaction ends, so that it cannot be deleted while a dashboard enters it.
//
// Errors: Invalid naming field.
func checkFolderExists(ctx context.Context, tx *db.Tx, teamID int64, folderID sql.NullString, field string) error {
	if !folderID.Valid {
		return nil
	}
	err := lockFolder(ctx, tx, teamID, strings.ToLower(folderID.String))
	if errors.Is(err, db.ErrNotFound) {
		return apierror.Invalidf("%s: no dashboard folder %s; it must name one of the team's dashboard folders (create it first)",
			field, folderID.String)
	}
	return err
}

func folderNotFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no dashboard folder %s", field, id)
	}
	return err
}

// placeByPath gives the checked dashboard d placed by folderPath alone (no folderId) the folderId
// of the team's folder that path names, so that its answers carry both, as the real service's do:
// the first segment is the name of a top-level folder, each next one the name of a folder inside
// the one before. A path that names no folder, or more than one (names need not be unique among
// siblings), leaves d as sent: the path is stored and answered, not resolved. The HTTP create and
// replace place dashboards this way; configuration as code does not, so that an applied document
// is stored as the file has it.
func placeByPath(ctx context.Context, tx *db.Tx, teamID int64, d *stored) error {
	raw, ok := d.doc["folderPath"]
	if !ok || d.folderID.Valid {
		return nil
	}
	var path struct {
		Segments []string `json:"segments"`
	}
	if err := json.Unmarshal(raw, &path); err != nil || len(path.Segments) == 0 {
		return nil // checkFolderPath refused anything else; null places nothing
	}
	children := map[string][]folder{} // parent id ("" at the top level) → its folders
	err := eachFolder(ctx, tx, teamID, func(f folder) error {
		children[strings.ToLower(f.parentID)] = append(children[strings.ToLower(f.parentID)], f)
		return nil
	})
	if err != nil {
		return err
	}
	parent := ""
	for _, name := range path.Segments {
		var match []folder
		for _, f := range children[parent] {
			if f.name == name {
				match = append(match, f)
			}
		}
		if len(match) != 1 {
			return nil
		}
		parent = strings.ToLower(match[0].id)
	}
	d.folderID = sql.NullString{String: parent, Valid: true}
	out := make(oas.Dashboard, len(d.doc)+1)
	for k, v := range d.doc {
		out[k] = v
	}
	out["folderId"] = jx.Raw(`{"value":"` + parent + `"}`) // a UUID: nothing to escape
	d.doc = out
	return nil
}
