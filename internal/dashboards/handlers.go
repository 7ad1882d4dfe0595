// Package dashboards serves custom dashboards: create, get, replace, the catalog list and the
// idempotent delete. A dashboard document is stored and answered as sent; the bounds the
// specification and the public document give are checked (see checkDashboard), the rest is not
// interpreted. Ids are 21 random letters and digits chosen by the server.
package dashboards

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// DashboardHandler implements the dashboard operations of oas.Handler.
type DashboardHandler struct {
	db *db.DB
}

// NewHandler returns the dashboard operations.
func NewHandler(database *db.DB) *DashboardHandler {
	return &DashboardHandler{db: database}
}

// checked is a write request's dashboard after the checks.
func checked(req *oas.DashboardWrite) (stored, document, error) {
	doc, err := decode(req.Dashboard)
	if err != nil {
		return stored{}, nil, err
	}
	name, slug, err := checkDashboard(doc)
	if err != nil {
		return stored{}, nil, err
	}
	d := stored{name: name, slug: slug, doc: req.Dashboard, locked: req.IsLocked.Or(false), folderID: folderOf(doc)}
	return d, doc, nil
}

// checkSlugFree refuses a slug that another of the team's dashboards holds. Call it after
// serializeSlugs.
//
// Errors: Conflict naming dashboard.slugName.
func checkSlugFree(ctx context.Context, q db.Querier, teamID int64, slug, id string) error {
	if slug == "" {
		return nil
	}
	owner, err := slugOwner(ctx, q, teamID, slug, id)
	if err != nil {
		return err
	}
	if owner != "" {
		return apierror.Conflictf("dashboard.slugName: %q is already the slug of dashboard %s; slugs are unique within a team", slug, owner)
	}
	return nil
}

// CreateDashboard stores the dashboard under a fresh id and answers the id.
//
// Errors: Invalid (see checkDashboard; a folderId.value naming no dashboard folder of the team);
// LimitExceeded when the team holds MaxCatalogItems dashboards; Conflict when another of the
// team's dashboards has its slug.
func (h *DashboardHandler) CreateDashboard(ctx context.Context, req *oas.DashboardWrite) (*oas.DashboardCreated, error) {
	caller := auth.PrincipalFrom(ctx)
	d, _, err := checked(req)
	if err != nil {
		return nil, err
	}
	if d.id, err = newID(); err != nil {
		return nil, err
	}
	d.doc = withID(d.doc, d.id)
	d.author = keyOf(caller.KeyID, caller.KeyName)
	d.updater = d.author
	if d.locked {
		d.locker = d.author
	}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		placed := d
		if err := placeByPath(ctx, tx, caller.TeamID, &placed); err != nil {
			return err
		}
		return createDashboard(ctx, tx, caller.TeamID, placed, req.AccessPolicy)
	})
	if err != nil {
		return nil, err
	}
	return &oas.DashboardCreated{DashboardId: d.id}, nil
}

// createDashboard stores the checked dashboard d (its id, author and updater set) in tx.
//
// Errors: Invalid when folderId.value names no dashboard folder of the team; LimitExceeded when
// the team holds MaxCatalogItems dashboards; Conflict when another of the team's dashboards has
// its slug.
func createDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored, policy oas.OptString) error {
	if n, err := countForCreate(ctx, tx, teamID); err != nil {
		return err
	} else if n >= MaxCatalogItems {
		return apierror.LimitExceededf("dashboards: the team holds %d dashboards, the most it may; delete some first", n)
	}
	if err := serializeSlugs(ctx, tx, teamID); err != nil {
		return err
	}
	if err := checkSlugFree(ctx, tx, teamID, d.slug, d.id); err != nil {
		return err
	}
	if err := checkFolderExists(ctx, tx, teamID, d.folderID, "dashboard.folderId.value"); err != nil {
		return err
	}
	tx.AuditResource(d.id) // made before the transaction
	return insertDashboard(ctx, tx, teamID, d, policy)
}

// ReplaceDashboard makes the body the content of the dashboard that dashboard.id names.
//
// Errors: as CreateDashboard's Invalid and Conflict, and Invalid when dashboard.id is missing;
// NotFound when the team has no such dashboard.
func (h *DashboardHandler) ReplaceDashboard(ctx context.Context, req *oas.DashboardWrite) error {
	caller := auth.PrincipalFrom(ctx)
	d, doc, err := checked(req)
	if err != nil {
		return err
	}
	id, ok := doc["id"].(string)
	if !ok {
		return apierror.Invalidf("dashboard.id: required; it names the dashboard to replace")
	}
	if n := utf8.RuneCountInString(id); n != IDLength {
		return apierror.Invalidf("dashboard.id: length must be %d characters (got %d)", IDLength, n)
	}
	d.id = id
	d.updater = keyOf(caller.KeyID, caller.KeyName)
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		placed := d
		if err := placeByPath(ctx, tx, caller.TeamID, &placed); err != nil {
			return err
		}
		return replaceCheckedDashboard(ctx, tx, caller.TeamID, placed, req.AccessPolicy)
	})
	return notFoundAs(err, "dashboard.id", id)
}

// replaceCheckedDashboard makes the checked dashboard d (its id and updater set) the content of
// the team's dashboard d.id in tx; a dashboard locked before and after keeps its locker, and a
// replace without an access policy keeps the stored one.
//
// Errors: db.ErrNotFound when the team has no such dashboard; Invalid when folderId.value names
// no dashboard folder of the team; Conflict when another of the team's dashboards has its slug.
func replaceCheckedDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored, policy oas.OptString) error {
	if err := serializeSlugs(ctx, tx, teamID); err != nil {
		return err
	}
	if err := lockDashboard(ctx, tx, teamID, d.id); err != nil {
		return err // the row stays locked, so the lock state read next is the one replaced
	}
	old, err := getDashboard(ctx, tx, teamID, d.id)
	if err != nil {
		return err
	}
	switch {
	case d.locked && old.locked:
		d.locker = old.locker
	case d.locked:
		d.locker = d.updater
	}
	if err := checkSlugFree(ctx, tx, teamID, d.slug, d.id); err != nil {
		return err
	}
	if err := checkFolderExists(ctx, tx, teamID, d.folderID, "dashboard.folderId.value"); err != nil {
		return err
	}
	if !policy.Set && old.accessPolicy.Valid {
		// Not sent (or sent null), the access policy is not set: the stored one stays.
		policy = oas.NewOptString(old.accessPolicy.String)
	}
	return replaceDashboard(ctx, tx, teamID, d, policy)
}

// GetDashboard returns one of the team's dashboards.
//
// Errors: NotFound when the team has no such dashboard.
func (h *DashboardHandler) GetDashboard(ctx context.Context, params oas.GetDashboardParams) (*oas.DashboardRead, error) {
	caller := auth.PrincipalFrom(ctx)
	d, err := getDashboard(ctx, h.db.Read(), caller.TeamID, params.DashboardID)
	if err != nil {
		return nil, notFoundAs(err, "dashboard_id", params.DashboardID)
	}
	return readOf(d), nil
}

// GetDashboardBySlug returns the team's dashboard whose slugName is the slug, as GetDashboard
// answers it.
//
// Errors: NotFound when no dashboard of the team has that slug.
func (h *DashboardHandler) GetDashboardBySlug(ctx context.Context, params oas.GetDashboardBySlugParams) (*oas.DashboardRead, error) {
	caller := auth.PrincipalFrom(ctx)
	d, err := getDashboardBySlug(ctx, h.db.Read(), caller.TeamID, params.Slug)
	if errors.Is(err, db.ErrNotFound) {
		return nil, apierror.NotFoundf("slug: no dashboard has the slug %q", params.Slug)
	}
	if err != nil {
		return nil, err
	}
	return readOf(d), nil
}

// readOf is the answer of a dashboard read: the author, updater and locker fields are present
// where recorded, and their origin is always an API key.
func readOf(d stored) *oas.DashboardRead {
	out := &oas.DashboardRead{Dashboard: d.doc, IsLocked: d.locked, CreatedAt: d.createdAt, UpdatedAt: d.updatedAt}
	if d.accessPolicy.Valid {
		out.AccessPolicy = oas.NewOptString(d.accessPolicy.String)
	}
	if d.author.id.Valid {
		out.AuthorId = oas.NewOptString(d.author.id.String)
		out.CreatedOriginType = oas.NewOptTokenOriginType(oas.TokenOriginTypeTOKENORIGINTYPEAPI)
	}
	if d.author.name.Valid {
		out.AuthorName = oas.NewOptString(d.author.name.String)
	}
	if d.updater.id.Valid {
		out.UpdaterAuthorId = oas.NewOptString(d.updater.id.String)
		out.UpdatedOriginType = oas.NewOptTokenOriginType(oas.TokenOriginTypeTOKENORIGINTYPEAPI)
	}
	if d.updater.name.Valid {
		out.UpdaterName = oas.NewOptString(d.updater.name.String)
	}
	if d.locked && d.locker.id.Valid {
		out.LockerAuthorId = oas.NewOptString(d.locker.id.String)
	}
	if d.locked && d.locker.name.Valid {
		out.LockerName = oas.NewOptString(d.locker.name.String)
	}
	return out
}

// ListDashboardCatalog returns a summary of each of the team's dashboards, by name, then id:
// isDefault for the team's default, isPinned for those the calling key pinned, the folder by the
// id the dashboard names it with, and the folder's name and parent as they are now.
func (h *DashboardHandler) ListDashboardCatalog(ctx context.Context) (*oas.DashboardCatalog, error) {
	caller := auth.PrincipalFrom(ctx)
	items := []oas.DashboardCatalogItem{}
	err := eachDashboard(ctx, h.db.Read(), caller.TeamID, caller.KeyID, func(d *stored) error {
		items = append(items, catalogItem(d))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.DashboardCatalog{Items: items}, nil
}

// StreamDashboardCatalog writes the answer of ListDashboardCatalog, the same bytes, while
// reading the dashboards: the server serves the list with it (see package streaming).
func (h *DashboardHandler) StreamDashboardCatalog(ctx context.Context, out *streaming.Answer) error {
	caller := auth.PrincipalFrom(ctx)
	return out.Array("items", func() error {
		return eachDashboard(ctx, h.db.Read(), caller.TeamID, caller.KeyID, func(d *stored) error {
			it := catalogItem(d)
			return out.Item(&it)
		})
	})
}

func catalogItem(d *stored) oas.DashboardCatalogItem {
	it := oas.DashboardCatalogItem{ID: d.id, Name: d.name, IsLocked: d.locked, IsDefault: d.isDefault,
		IsPinned: d.isPinned, CreateTime: d.createdAt, UpdateTime: d.updatedAt}
	if d.slug != "" {
		it.SlugName = oas.NewOptString(d.slug)
	}
	if d.folderID.Valid {
		f := oas.DashboardFolder{ID: oas.NewOptString(d.folderID.String)}
		if d.folder.name != "" {
			f.Name = oas.NewOptString(d.folder.name)
		}
		if d.folder.parentID != "" {
			f.ParentId = oas.NewOptString(d.folder.parentID)
		}
		it.Folder = oas.NewOptDashboardFolder(f)
	}
	if d.author.id.Valid {
		it.AuthorId = oas.NewOptString(d.author.id.String)
	}
	if d.locked && d.locker.id.Valid {
		it.LockerAuthorId = oas.NewOptString(d.locker.id.String)
	}
	return it
}

// DeleteDashboard deletes one of the team's dashboards (200, {}). A repeat with the request_id
// that deleted it answers the same.
//
// Errors: NotFound when the team has no such dashboard and request_id did not delete it.
func (h *DashboardHandler) DeleteDashboard(ctx context.Context, params oas.DeleteDashboardParams) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		return deleteDashboard(ctx, tx, caller.TeamID, params.DashboardID, params.RequestID.Or(""))
	})
	return notFoundAs(err, "dashboard_id", params.DashboardID)
}

func notFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no dashboard %s", field, id)
	}
	return err
}

// ReplaceDefaultDashboard makes the dashboard the team's one default dashboard (200, {}).
// Repeating it changes nothing, so requestId needs no memory.
//
// Errors: NotFound when the team has no such dashboard.
func (h *DashboardHandler) ReplaceDefaultDashboard(ctx context.Context, _ *oas.DefaultDashboardInput, params oas.ReplaceDefaultDashboardParams) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockDashboard(ctx, tx, caller.TeamID, params.DashboardID); err != nil {
			return err
		}
		return setDefault(ctx, tx, caller.TeamID, params.DashboardID)
	})
	return notFoundAs(err, "dashboard_id", params.DashboardID)
}

// AssignDashboardFolder puts the dashboard in the folder folderId names, or at the root when it
// is absent or null: the document's folderId becomes {value: folderId} (or is removed) and its
// folderPath is removed. The move is an update of the dashboard by the caller.
//
// Errors: NotFound when the team has no such dashboard; Invalid when folderId names no dashboard
// folder of the team.
func (h *DashboardHandler) AssignDashboardFolder(ctx context.Context, req *oas.DashboardFolderAssignInput, params oas.AssignDashboardFolderParams) error {
	caller := auth.PrincipalFrom(ctx)
	folder, _ := req.FolderId.Get() // absent and null both mean the root
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		// Lock the row first, so that a concurrent replace is not overwritten by the document
		// read here.
		if err := lockDashboard(ctx, tx, caller.TeamID, params.DashboardID); err != nil {
			return err
		}
		d, err := getDashboard(ctx, tx, caller.TeamID, params.DashboardID)
		if err != nil {
			return err
		}
		d.folderID = sql.NullString{String: folder, Valid: folder != ""}
		if err := checkFolderExists(ctx, tx, caller.TeamID, d.folderID, "folderId"); err != nil {
			return err
		}
		d.doc = inFolder(d.doc, folder)
		d.updater = keyOf(caller.KeyID, caller.KeyName)
		return moveDashboard(ctx, tx, caller.TeamID, d)
	})
	return notFoundAs(err, "dashboard_id", params.DashboardID)
}

// PinDashboard pins the dashboard for the calling key (idempotent).
//
// Errors: NotFound when the team has no such dashboard.
func (h *DashboardHandler) PinDashboard(ctx context.Context, params oas.PinDashboardParams) error {
	return h.pin(ctx, params.DashboardID, true)
}

// UnpinDashboard unpins the dashboard for the calling key (idempotent).
//
// Errors: NotFound when the team has no such dashboard.
func (h *DashboardHandler) UnpinDashboard(ctx context.Context, params oas.UnpinDashboardParams) error {
	return h.pin(ctx, params.DashboardID, false)
}

func (h *DashboardHandler) pin(ctx context.Context, id string, pinned bool) error {
	caller := auth.PrincipalFrom(ctx)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockDashboard(ctx, tx, caller.TeamID, id); err != nil {
			return err
		}
		return setPinned(ctx, tx, caller.TeamID, caller.KeyID, id, pinned)
	})
	return notFoundAs(err, "dashboard_id", id)
}

// CheckDashboard checks the body's dashboard, or the stored one dashboardId names, as the create
// would, and answers what it finds as issues rather than refusing: each rule the create checks
// that the dashboard breaks (SEVERITY_ERROR; see dashboardViolations), a slug another dashboard
// of the team holds (SEVERITY_ERROR), a folderId.value naming no dashboard folder of the team
// (SEVERITY_ERROR), and each deprecated spans-query fieldValue `value` (SEVERITY_WARNING).
// Nothing is stored.
//
// Errors: Invalid when both or neither of dashboard and dashboardId are given; NotFound when
// dashboardId names no dashboard of the team.
func (h *DashboardHandler) CheckDashboard(ctx context.Context, req *oas.DashboardCheckRequest) (*oas.DashboardCheckResult, error) {
	caller := auth.PrincipalFrom(ctx)
	id, byID := req.DashboardId.Get()
	switch {
	case byID && req.Dashboard.Set:
		return nil, apierror.Invalidf("dashboard, dashboardId: give one of them, not both")
	case !byID && !req.Dashboard.Set:
		return nil, apierror.Invalidf("dashboard, dashboardId: give one of them: the dashboard to check, or the id of a stored one")
	}
	dash := req.Dashboard.Value
	if byID {
		d, err := getDashboard(ctx, h.db.Read(), caller.TeamID, id)
		if err != nil {
			return nil, notFoundAs(err, "dashboardId", id)
		}
		dash = d.doc
	}
	doc, err := decode(dash)
	if err != nil {
		return nil, err
	}
	issues := []oas.DashboardIssue{}
	_, slug, violations := dashboardViolations(doc)
	for _, v := range violations {
		issues = append(issues, issueOf(v.Error(), oas.DashboardIssueSeveritySEVERITYERROR))
	}
	if slug != "" {
		self, _ := doc["id"].(string)
		if byID {
			self = id
		}
		owner, err := slugOwner(ctx, h.db.Read(), caller.TeamID, slug, self)
		if err != nil {
			return nil, err
		}
		if owner != "" {
			issues = append(issues, oas.DashboardIssue{Location: "/slugName", Severity: oas.DashboardIssueSeveritySEVERITYERROR,
				Message: fmt.Sprintf("slugName %q is already the slug of dashboard %s; slugs are unique within a team", slug, owner)})
		}
	}
	if f := folderOf(doc); f.Valid && len(f.String) == 36 { // other values are a violation above
		_, err := getFolder(ctx, h.db.Read(), caller.TeamID, strings.ToLower(f.String))
		switch {
		case errors.Is(err, db.ErrNotFound):
			issues = append(issues, oas.DashboardIssue{Location: "/folderId/value", Severity: oas.DashboardIssueSeveritySEVERITYERROR,
				Message: fmt.Sprintf("folderId.value: no dashboard folder %s; it must name one of the team's dashboard folders", f.String)})
		case err != nil:
			return nil, err
		}
	}
	for _, p := range deprecatedValueSources(doc) {
		issues = append(issues, oas.DashboardIssue{Location: pointerOf(p), Severity: oas.DashboardIssueSeveritySEVERITYWARNING,
			Message: "fieldValue.value is deprecated; use observationField"})
	}
	if len(issues) > MaxIssues {
		issues = issues[:MaxIssues]
	}
	return &oas.DashboardCheckResult{Issues: issues}, nil
}
