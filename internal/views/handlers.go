// Package views serves the data explorer's saved views and the folders that group them: create,
// list, get, replace and delete of each. View ids are integers numbered per team; folder ids are
// UUIDs. A folder that still holds views cannot be deleted (409).
package views

import (
	"context"
	"errors"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// ViewHandler implements the view and view-folder operations of oas.Handler.
type ViewHandler struct {
	db *db.DB
}

// NewHandler returns the view and view-folder operations.
func NewHandler(database *db.DB) *ViewHandler {
	return &ViewHandler{db: database}
}

// CreateView stores a view under the team's next view id and answers it.
//
// Errors: Invalid (see checkView; folderId naming no folder of the team); LimitExceeded when the
// team's view ids are used up or it holds MaxViews views.
func (h *ViewHandler) CreateView(ctx context.Context, req *oas.ViewRequest) (*oas.View, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := checkView(req); err != nil {
		return nil, err
	}
	var v view
	err := h.db.InTx(ctx, func(tx *db.Tx) (err error) {
		v, err = createView(ctx, tx, caller.TeamID, 0, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := v.wire()
	return &out, nil
}

// createView stores the checked view req in tx under id, or under the team's next view id when id
// is 0, and returns it.
//
// Errors: Invalid for a folderId naming no folder of the team; LimitExceeded when the team's view
// ids are used up or it holds MaxViews views.
func createView(ctx context.Context, tx *db.Tx, teamID, id int64, req *oas.ViewRequest) (view, error) {
	if err := checkFolder(ctx, tx, teamID, req); err != nil {
		return view{}, err
	}
	var err error
	if id == 0 {
		id, err = nextID(ctx, tx, teamID)
	} else {
		err = reserveID(ctx, tx, teamID, id)
	}
	if err != nil {
		return view{}, err
	}
	if id > MaxID {
		return view{}, apierror.LimitExceededf("id: the team has used every view id (1 to %d)", MaxID)
	}
	// The counter row taken above serialises this team's creates, so the count is exact.
	if n, err := countViews(ctx, tx, teamID); err != nil {
		return view{}, err
	} else if n >= MaxViews {
		return view{}, apierror.LimitExceededf("views: the team holds %d views, the most it may; delete some first", n)
	}
	tx.AuditResource(strconv.FormatInt(id, 10))
	return view{id: int32(id), folderID: string(req.FolderId.Or("")), doc: *req}, insertView(ctx, tx, teamID, id, *req)
}

// ListViews returns the team's views by id.
func (h *ViewHandler) ListViews(ctx context.Context) (*oas.ViewList, error) {
	caller := auth.PrincipalFrom(ctx)
	out := []oas.View{}
	err := eachView(ctx, h.db.Read(), caller.TeamID, func(v view) error {
		out = append(out, v.wire())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.ViewList{Views: out}, nil
}

// StreamViews writes the answer of ListViews, the same bytes, while reading the views: the
// server serves the list with it (see package streaming).
func (h *ViewHandler) StreamViews(ctx context.Context, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	return out.Array("views", func() error {
		return eachView(ctx, h.db.Read(), caller.TeamID, func(v view) error {
			w := v.wire()
			return out.Item(&w)
		})
	})
}

// GetView returns one of the team's views.
//
// Errors: NotFound when the team has no such view.
func (h *ViewHandler) GetView(ctx context.Context, params oas.GetViewParams) (*oas.View, error) {
	caller := auth.PrincipalFrom(ctx)
	v, err := getView(ctx, h.db.Read(), caller.TeamID, int64(params.ID))
	if err != nil {
		return nil, viewNotFoundAs(err, params.ID)
	}
	out := v.wire()
	return &out, nil
}

// ReplaceView makes the request body the view's new content; the id stays.
//
// Errors: as CreateView's Invalid; NotFound when the team has no such view.
func (h *ViewHandler) ReplaceView(ctx context.Context, req *oas.ViewRequest, params oas.ReplaceViewParams) (*oas.View, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := checkView(req); err != nil {
		return nil, err
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return replaceCheckedView(ctx, tx, caller.TeamID, int64(params.ID), req)
	})
	if err != nil {
		return nil, viewNotFoundAs(err, params.ID)
	}
	out := view{id: params.ID, folderID: string(req.FolderId.Or("")), doc: *req}.wire()
	return &out, nil
}

// replaceCheckedView makes the checked view req the content of the team's view id in tx.
//
// Errors: Invalid for a folderId naming no folder of the team; db.ErrNotFound when the team has
// no such view.
func replaceCheckedView(ctx context.Context, tx *db.Tx, teamID, id int64, req *oas.ViewRequest) error {
	if err := checkFolder(ctx, tx, teamID, req); err != nil {
		return err
	}
	return replaceView(ctx, tx, teamID, id, *req)
}

// DeleteView deletes one of the team's views (200, {}).
//
// Errors: NotFound when the team has no such view.
func (h *ViewHandler) DeleteView(ctx context.Context, params oas.DeleteViewParams) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return deleteView(ctx, tx, caller.TeamID, int64(params.ID))
	})
	return viewNotFoundAs(err, params.ID)
}

// CreateViewFolder stores a folder under a fresh id and answers it.
func (h *ViewHandler) CreateViewFolder(ctx context.Context, req *oas.ViewFolderRequest) (*oas.ViewFolder, error) {
	caller := auth.PrincipalFrom(ctx)
	var f oas.ViewFolder
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		f = oas.ViewFolder{ID: tx.NewID(), Name: req.Name}
		return insertFolder(ctx, tx, caller.TeamID, f)
	})
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// ListViewFolders returns the team's folders by name, then id.
func (h *ViewHandler) ListViewFolders(ctx context.Context) (*oas.ViewFolderList, error) {
	caller := auth.PrincipalFrom(ctx)
	fs := []oas.ViewFolder{}
	err := eachFolder(ctx, h.db.Read(), caller.TeamID, func(f *oas.ViewFolder) error {
		fs = append(fs, *f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.ViewFolderList{Folders: fs}, nil
}

// StreamViewFolders writes the answer of ListViewFolders, the same bytes, while reading the
// folders: the server serves the list with it (see package streaming).
func (h *ViewHandler) StreamViewFolders(ctx context.Context, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	return out.Array("folders", func() error {
		return eachFolder(ctx, h.db.Read(), caller.TeamID, func(f *oas.ViewFolder) error { return out.Item(f) })
	})
}

// GetViewFolder returns one of the team's folders.
//
// Errors: NotFound when the team has no such folder.
func (h *ViewHandler) GetViewFolder(ctx context.Context, params oas.GetViewFolderParams) (*oas.ViewFolder, error) {
	caller := auth.PrincipalFrom(ctx)
	f, err := getFolder(ctx, h.db.Read(), caller.TeamID, string(params.ID))
	if err != nil {
		return nil, folderNotFoundAs(err, "id", string(params.ID))
	}
	return &f, nil
}

// ReplaceViewFolder renames the folder named by the body's id.
//
// Errors: NotFound when the team has no such folder.
func (h *ViewHandler) ReplaceViewFolder(ctx context.Context, req *oas.ViewFolderReplace) (*oas.ViewFolder, error) {
	caller := auth.PrincipalFrom(ctx)
	f := oas.ViewFolder{ID: string(req.ID), Name: req.Name}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return renameFolder(ctx, tx, caller.TeamID, f)
	})
	if err != nil {
		return nil, folderNotFoundAs(err, "id", f.ID)
	}
	return &f, nil
}

// DeleteViewFolder deletes one of the team's folders when it holds no views (200, {}).
//
// Errors: NotFound when the team has no such folder; Conflict when views are in it.
func (h *ViewHandler) DeleteViewFolder(ctx context.Context, params oas.DeleteViewFolderParams) error {
	caller := auth.PrincipalFrom(ctx)
	id := string(params.ID)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		held, err := deleteFolder(ctx, tx, caller.TeamID, id)
		if err == nil && held > 0 {
			// Refused inside the transaction, so that it rolls back: a refusal commits nothing,
			// not even its audit record.
			return apierror.Conflictf("id: view folder %s holds %d views; move or delete them first", id, held)
		}
		return err
	})
	return folderNotFoundAs(err, "id", id)
}

// checkFolder requires the request's folderId, when set, to name one of the team's folders, and
// locks that folder until the transaction ends.
//
// Errors: Invalid naming folderId.
func checkFolder(ctx context.Context, tx *db.Tx, teamID int64, req *oas.ViewRequest) error {
	f, ok := req.FolderId.Get()
	if !ok {
		return nil
	}
	if err := lockFolder(ctx, tx, teamID, string(f)); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return apierror.Invalidf("folderId: no view folder %s; it must name one of the team's view folders", f)
		}
		return err
	}
	return nil
}

func viewNotFoundAs(err error, id int32) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("id: no view %d", id)
	}
	return err
}

func folderNotFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no view folder %s", field, id)
	}
	return err
}
