// Package dashboards serves custom dashboards: create, get, replace, the catalog list and the
// idempotent delete. A dashboard document is stored and answered as sent; the bounds the
// specification and the public document give are checked (see checkDashboard), the rest is not
// interpreted. Ids are 21 random letters and digits chosen by the server.
package dashboards

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
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
	return stored{name: name, slug: slug, doc: req.Dashboard, locked: req.IsLocked.Or(false)}, doc, nil
}

// CreateDashboard stores the dashboard under a fresh id and answers the id.
//
// Errors: Invalid (see checkDashboard); LimitExceeded when the team holds MaxCatalogItems
// dashboards.
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
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if n, err := countForCreate(ctx, tx, caller.TeamID); err != nil {
			return err
		} else if n >= MaxCatalogItems {
			return apierror.LimitExceededf("dashboards: the team holds %d dashboards, the most it may; delete some first", n)
		}
		return insertDashboard(ctx, tx, caller.TeamID, d, req.AccessPolicy)
	})
	if err != nil {
		return nil, err
	}
	return &oas.DashboardCreated{DashboardId: d.id}, nil
}

// ReplaceDashboard makes the body the content of the dashboard that dashboard.id names.
//
// Errors: as CreateDashboard's Invalid, and Invalid when dashboard.id is missing; NotFound when
// the team has no such dashboard.
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
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		return replaceDashboard(ctx, tx, caller.TeamID, d, req.AccessPolicy)
	})
	return notFoundAs(err, "dashboard.id", id)
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
	out := &oas.DashboardRead{Dashboard: d.doc, IsLocked: d.locked, CreatedAt: d.createdAt, UpdatedAt: d.updatedAt}
	if d.accessPolicy.Valid {
		out.AccessPolicy = oas.NewOptString(d.accessPolicy.String)
	}
	return out, nil
}

// ListDashboardCatalog returns a summary of each of the team's dashboards, by name, then id.
func (h *DashboardHandler) ListDashboardCatalog(ctx context.Context) (*oas.DashboardCatalog, error) {
	caller := auth.PrincipalFrom(ctx)
	ds, err := listDashboards(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	items := make([]oas.DashboardCatalogItem, 0, len(ds))
	for _, d := range ds {
		it := oas.DashboardCatalogItem{ID: d.id, Name: d.name, IsLocked: d.locked, CreateTime: d.createdAt, UpdateTime: d.updatedAt}
		if d.slug != "" {
			it.SlugName = oas.NewOptString(d.slug)
		}
		items = append(items, it)
	}
	return &oas.DashboardCatalog{Items: items}, nil
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
