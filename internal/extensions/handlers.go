// Package extensions serves the extension catalog (E11 list, E12 get by id) and each team's
// deployments of it (list, get, deploy, E13 update, undeploy). The catalog is read once at start
// from the files embedded under catalog/ and the operator's --extensions-dir (see catalog.go);
// deployments are records in the extension_deployments table, one per team and extension. A
// deployment records the choice only: its items are not created in the other areas.
package extensions

import (
	"context"
	"slices"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ExtensionHandler implements the extension operations of oas.Handler.
type ExtensionHandler struct {
	db      *db.DB
	catalog *Catalog
}

// NewHandler returns the extension operations over database and catalog.
func NewHandler(database *db.DB, catalog *Catalog) *ExtensionHandler {
	return &ExtensionHandler{db: database, catalog: catalog}
}

// ListExtensions answers the catalog's extensions by name, then id (E11): hidden ones only when
// includeHiddenExtensions is true; with a non-empty filter, only those sharing an integration
// with it. Testing revisions are never listed.
func (h *ExtensionHandler) ListExtensions(ctx context.Context, req oas.OptExtensionListInput) (*oas.ExtensionList, error) {
	body := req.Or(oas.ExtensionListInput{})
	includeHidden := body.IncludeHiddenExtensions.Or(false)
	var wanted map[string]bool
	if f, ok := body.Filter.Get(); ok && len(f.Integrations) > 0 {
		wanted = make(map[string]bool, len(f.Integrations))
		for _, i := range f.Integrations {
			wanted[i] = true
		}
	}
	out := make([]oas.ExtensionSummary, 0, len(h.catalog.ordered))
	for _, e := range h.catalog.ordered {
		if e.IsHidden && !includeHidden {
			continue
		}
		if wanted != nil && !sharesAny(e.Integrations, wanted) {
			continue
		}
		out = append(out, summaryOf(e))
	}
	return &oas.ExtensionList{Extensions: out}, nil
}

func sharesAny(list []string, wanted map[string]bool) bool {
	for _, s := range list {
		if wanted[s] {
			return true
		}
	}
	return false
}

// GetExtension answers one extension with its changelog and revisions (E12), split by the
// caller's permissions: items the key may deploy go to items, the others to
// permissionDeniedItems; a revision with a mandatory item the key may not deploy goes to
// permissionDeniedRevisions. Hidden extensions are readable by id.
//
// Errors: NotFound when the catalog has no such extension.
func (h *ExtensionHandler) GetExtension(ctx context.Context, params oas.GetExtensionParams) (*oas.Extension, error) {
	e, ok := h.catalog.lookup(params.ID)
	if !ok {
		return nil, apierror.NotFoundf("id: no extension %q in the catalog", params.ID)
	}
	caller := auth.PrincipalFrom(ctx)
	withDashboards := params.IncludeDashboardBinaries.Or(false)
	withTesting := params.IncludeTestingRevision.Or(false)
	out := &oas.Extension{
		ID:                        e.ID,
		Name:                      e.Name,
		Image:                     e.Image,
		DarkModeImage:             e.DarkModeImage,
		Deprecation:               deprecationOf(e),
		Integrations:              nonNil(e.Integrations),
		IsHidden:                  e.IsHidden,
		Keywords:                  nonNil(e.Keywords),
		Changelog:                 make([]oas.ExtensionChangelogEntry, 0, len(e.Changelog)),
		Revisions:                 []oas.ExtensionRevision{},
		PermissionDeniedRevisions: []oas.ExtensionRevision{},
	}
	for _, c := range e.Changelog {
		out.Changelog = append(out.Changelog, oas.ExtensionChangelogEntry{Version: c.Version, DescriptionMd: c.DescriptionMd})
	}
	for i := range e.Revisions {
		r := &e.Revisions[i]
		if r.IsTesting && !withTesting {
			continue
		}
		wire, denied := revisionOf(e.ID, r, caller, withDashboards)
		if denied {
			out.PermissionDeniedRevisions = append(out.PermissionDeniedRevisions, wire)
		} else {
			out.Revisions = append(out.Revisions, wire)
		}
	}
	return out, nil
}

// ListDeployedExtensions answers the team's deployments by extension id.
func (h *ExtensionHandler) ListDeployedExtensions(ctx context.Context) (*oas.DeployedExtensionList, error) {
	caller := auth.PrincipalFrom(ctx)
	ds, err := listDeployments(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	out := make([]oas.DeployedExtension, 0, len(ds))
	for _, d := range ds {
		out = append(out, h.deployedOf(d))
	}
	return &oas.DeployedExtensionList{DeployedExtensions: out}, nil
}

// GetDeployedExtension answers the team's deployment of one extension (mgmtapi's addition).
//
// Errors: NotFound when the extension is not deployed in the team.
func (h *ExtensionHandler) GetDeployedExtension(ctx context.Context, params oas.GetDeployedExtensionParams) (*oas.DeployedExtensionResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	d, err := getDeployment(ctx, h.db.Read(), caller.TeamID, params.ID, false)
	if err != nil {
		return nil, notDeployedAs(err, "id", params.ID)
	}
	return &oas.DeployedExtensionResponse{DeployedExtension: h.deployedOf(d)}, nil
}

// DeployExtension records the deployment given in the query (flat or object form; see
// readDeployment and checkDeployment).
//
// Errors: Invalid and NotFound (unknown extension) as checkDeployment says; Forbidden when the
// key lacks an item's deploy permission; Conflict when the extension is already deployed in the
// team.
func (h *ExtensionHandler) DeployExtension(ctx context.Context, params oas.DeployExtensionParams) (*oas.ExtensionDeploymentResponse, error) {
	d, err := h.readAndCheck(ctx, flatDeployment{params.ID, params.Version, params.ItemIds, params.Applications, params.Subsystems})
	if err != nil {
		return nil, err
	}
	caller := auth.PrincipalFrom(ctx)
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		return insertDeployment(ctx, tx, caller.TeamID, d)
	})
	if db.IsConflict(err) {
		return nil, apierror.Conflictf("id: extension %q is already deployed in the team; change it with POST", d.ID)
	}
	if err != nil {
		return nil, err
	}
	return &oas.ExtensionDeploymentResponse{ExtensionDeployment: d.wire()}, nil
}

// UpdateExtensionDeployment replaces the team's deployment of the extension with the one given
// in the query (E13), under the same rules as DeployExtension.
//
// Errors: as DeployExtension's Invalid, NotFound and Forbidden; NotFound when the extension is not
// deployed in the team.
func (h *ExtensionHandler) UpdateExtensionDeployment(ctx context.Context, params oas.UpdateExtensionDeploymentParams) (*oas.ExtensionDeploymentResponse, error) {
	d, err := h.readAndCheck(ctx, flatDeployment{params.ID, params.Version, params.ItemIds, params.Applications, params.Subsystems})
	if err != nil {
		return nil, err
	}
	caller := auth.PrincipalFrom(ctx)
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		return updateDeployment(ctx, tx, caller.TeamID, d)
	})
	if err != nil {
		return nil, notDeployedAs(err, d.idField, d.ID)
	}
	return &oas.ExtensionDeploymentResponse{ExtensionDeployment: d.wire()}, nil
}

// UndeployExtension removes the team's deployment of the extension and answers it. Every kept
// item must be one of the deployment's items. Nothing was created in other areas, so nothing is
// removed there and failedItems is empty.
//
// Errors: NotFound when the extension is not deployed in the team; Invalid for a kept item that
// the deployment does not hold (then nothing is removed).
func (h *ExtensionHandler) UndeployExtension(ctx context.Context, req *oas.ExtensionUndeployInput) (*oas.ExtensionUndeployment, error) {
	caller := auth.PrincipalFrom(ctx)
	var removed deployment
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		d, err := getDeployment(ctx, tx, caller.TeamID, req.ID, tx.Engine == db.Postgres)
		if err != nil {
			return err
		}
		if err := checkKeptItems(req.KeptExtensionItems, d); err != nil {
			return err
		}
		removed = d
		return deleteDeployment(ctx, tx, caller.TeamID, req.ID)
	})
	if err != nil {
		return nil, notDeployedAs(err, "id", req.ID)
	}
	return &oas.ExtensionUndeployment{ExtensionDeployment: removed.wire(), FailedItems: []oas.ExtensionFailedItem{}}, nil
}

// notDeployedAs turns db.ErrNotFound into the NotFound answer naming the extension.
func notDeployedAs(err error, field, id string) error {
	if db.IsNotFound(err) {
		return apierror.NotFoundf("%s: extension %q is not deployed in the team", field, id)
	}
	return err
}

// deployedOf is a stored deployment with the counts of its items that the catalog still knows.
func (h *ExtensionHandler) deployedOf(d deployment) oas.DeployedExtension {
	var items []item
	if e, ok := h.catalog.lookup(d.ID); ok {
		for i := range e.Revisions {
			r := &e.Revisions[i]
			if r.Version != d.Version {
				continue
			}
			for _, id := range d.ItemIDs {
				if it, ok := r.item(id); ok {
					items = append(items, *it)
				}
			}
		}
	}
	w := d.wire()
	return oas.DeployedExtension{
		ID: w.ID, Version: w.Version, ItemIds: w.ItemIds, Applications: w.Applications, Subsystems: w.Subsystems,
		Summary: oas.DeployedExtensionSummary{DeployedItemCounts: countItems(items)},
	}
}

// ---------------------------------------------------------------- catalog → answers

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

func deprecationOf(e *extension) oas.OptExtensionDeprecation {
	if e.Deprecation == nil {
		return oas.OptExtensionDeprecation{}
	}
	return oas.NewOptExtensionDeprecation(oas.ExtensionDeprecation{
		Reason:                e.Deprecation.Reason,
		ReplacementExtensions: nonNil(e.Deprecation.ReplacementExtensions),
	})
}

func integrationDetailsOf(r *revision) []oas.ExtensionIntegrationDetail {
	out := make([]oas.ExtensionIntegrationDetail, 0, len(r.IntegrationDetails))
	for _, d := range r.IntegrationDetails {
		out = append(out, oas.ExtensionIntegrationDetail{Name: d.Name, Link: d.Link})
	}
	return out
}

// summaryOf is E11's list item: the extension with its released revisions.
func summaryOf(e *extension) oas.ExtensionSummary {
	out := oas.ExtensionSummary{
		ID:            e.ID,
		Name:          e.Name,
		Image:         e.Image,
		DarkModeImage: e.DarkModeImage,
		Deprecation:   deprecationOf(e),
		Integrations:  nonNil(e.Integrations),
		IsHidden:      e.IsHidden,
		Keywords:      nonNil(e.Keywords),
		Revisions:     []oas.ExtensionSummaryRevision{},
	}
	for i := range e.Revisions {
		r := &e.Revisions[i]
		if r.IsTesting {
			continue
		}
		out.Revisions = append(out.Revisions, oas.ExtensionSummaryRevision{
			Version:            r.Version,
			Description:        r.Description,
			Excerpt:            r.Excerpt,
			IntegrationDetails: integrationDetailsOf(r),
			Labels:             nonNil(r.Labels),
			Summary:            oas.ExtensionRevisionSummary{IsNew: r.IsNew, ItemCounts: countItems(r.Items)},
		})
	}
	return out
}

// countItems counts items by target domain.
func countItems(items []item) oas.ExtensionItemCounts {
	var c oas.ExtensionItemCounts
	for _, it := range items {
		switch it.TargetDomain {
		case "ACTION":
			c.Actions++
		case "ALERT", "ALERT_V3":
			c.Alerts++
		case "PLATFORM_CUSTOM_DASHBOARD":
			c.CustomDashboards++
		case "ENRICHMENT":
			c.Enrichments++
		case "EVENTS_TO_METRICS":
			c.EventsToMetrics++
		case "GRAFANA_DASHBOARD":
			c.GrafanaDashboards++
		case "KIBANA_DASHBOARD":
			c.KibanaDashboards++
		case "METRICS_RULE_GROUP":
			c.MetricsRuleGroup++
		case "PARSING_RULE":
			c.ParsingRules++
		case "SAVED_VIEW":
			c.SavedViews++
		}
	}
	return c
}

// revisionOf is E12's revision, its items split by what caller may deploy; denied reports that
// a mandatory item is among those the caller may not deploy.
func revisionOf(extensionID string, r *revision, caller *auth.Principal, withDashboards bool) (oas.ExtensionRevision, bool) {
	out := oas.ExtensionRevision{
		Version:               r.Version,
		Description:           r.Description,
		Excerpt:               r.Excerpt,
		IntegrationDetails:    integrationDetailsOf(r),
		Labels:                nonNil(r.Labels),
		IsTesting:             r.IsTesting,
		Binaries:              make([]oas.ExtensionBinary, 0, len(r.Binaries)),
		Items:                 []oas.ExtensionItem{},
		PermissionDeniedItems: []oas.ExtensionItem{},
	}
	for _, b := range r.Binaries {
		out.Binaries = append(out.Binaries, oas.ExtensionBinary{Type: oas.ExtensionBinaryType(b.Type), Data: b.Data})
	}
	denied := false
	for i := range r.Items {
		it := &r.Items[i]
		wire := itemOf(extensionID, r.Version, it, withDashboards)
		if caller.Can(deployPermission[it.PermissionResource]) {
			out.Items = append(out.Items, wire)
			continue
		}
		out.PermissionDeniedItems = append(out.PermissionDeniedItems, wire)
		denied = denied || it.IsMandatory
	}
	return out, denied
}

func itemOf(extensionID, version string, it *item, withDashboards bool) oas.ExtensionItem {
	unique := extensionID + "@" + version + "/" + it.ID
	out := oas.ExtensionItem{
		ID:                 it.ID,
		Name:               it.Name,
		Description:        it.Description,
		StableId:           extensionID + "/" + it.ID,
		UniqueId:           unique,
		ExtendedInternalId: unique,
		IsMandatory:        it.IsMandatory,
		TargetDomain:       oas.ExtensionItemTargetDomain(it.TargetDomain),
		PermissionResource: oas.ExtensionItemPermissionResource(it.PermissionResource),
		Data:               oas.ExtensionItemData(it.data),
		Binaries:           []oas.ExtensionItemBinary{},
	}
	for _, b := range it.Binaries {
		if dashboardBinaryTypes[b.Type] && !withDashboards {
			continue
		}
		out.Binaries = append(out.Binaries, oas.ExtensionItemBinary{
			Type: oas.ExtensionItemBinaryType(b.Type), FileName: b.FileName, Data: b.Data})
	}
	return out
}

// ForIntegration answers the extensions of the catalog that name the integration key, hidden
// ones too, by name and then id, each as GetExtension answers it to the caller (testing revisions
// left out): the integration areas list them beside the integration.
func (h *ExtensionHandler) ForIntegration(ctx context.Context, key string) ([]oas.Extension, error) {
	out := []oas.Extension{}
	for _, e := range h.catalog.ordered {
		if !slices.Contains(e.Integrations, key) {
			continue
		}
		x, err := h.GetExtension(ctx, oas.GetExtensionParams{ID: e.ID})
		if err != nil {
			return nil, err
		}
		out = append(out, *x)
	}
	return out, nil
}
