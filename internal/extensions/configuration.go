package extensions

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the extension deployments' part of a team's configuration document
// (teamconfig.Area): each deployment as {id, version, itemIds, applications, subsystems}, the
// extension's id being the deployment's, checked by checkDeployment against Catalog (the key's
// deploy permission of each item included) and stored by insertDeployment, updateDeployment and
// deleteDeployment, as the HTTP operations do.
type Configuration struct {
	Catalog *Catalog
}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "extensionDeployments" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "extensions:ReadConfig", "extensions:Deploy"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	ds, err := listDeployments(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(ds))
	for _, d := range ds {
		w := d.wire()
		doc, err := w.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: d.ID, Name: d.ID, Doc: doc})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: a deployment as the extension_deployment object of
// DeployExtension. It is checked by Put, since the check needs the caller's permissions for
// what is deployed, which a deployment left unchanged does not.
func (Configuration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in oas.ExtensionDeployment
	if err := teamconfig.DecodeBody(oas.DeployExtensionOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	d := deployment{
		ID: in.ID, Version: in.Version, ItemIDs: in.ItemIds, Applications: in.Applications, Subsystems: in.Subsystems,
		idField: "id", versionField: "version", itemsField: "itemIds", applicationsField: "applications", subsystemsField: "subsystems",
	}
	w := d.wire()
	encoded, err := w.MarshalJSON()
	return teamconfig.Resource{ID: d.ID, Name: d.ID, Doc: encoded, Value: d}, err
}

// Put implements teamconfig.Area: checkDeployment against the catalog, for the caller, then the
// store.
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	d := r.Value.(deployment)
	if err := checkDeployment(c.Catalog, d, auth.PrincipalFrom(ctx)); err != nil {
		return err
	}
	if exists {
		return updateDeployment(ctx, tx, teamID, d)
	}
	err := insertDeployment(ctx, tx, teamID, d)
	if db.IsConflict(err) {
		return apierror.Conflictf("id: extension %q is already deployed in the team", d.ID)
	}
	return err
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteDeployment(ctx, tx, teamID, id)
}
