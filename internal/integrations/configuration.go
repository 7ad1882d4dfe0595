package integrations

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the registered instances' part of a team's configuration document
// (teamconfig.Area), one for each service: each instance as {id, metadata} (the update's body,
// with the id under "id"), its parameters as the reads answer them: secrets as the placeholder
// and API keys by id, so that no secret is exported. Applied, an instance is checked by
// checkMetadata against the catalog, as the save and update check it: a placeholder keeps the
// stored secret of the instance with that id, and a document carrying one cannot create an
// instance (its secret is not in the document).
type Configuration struct {
	Catalog *Catalog
	// ContextualData chooses the contextual data integrations instead of the integrations.
	ContextualData bool
}

func (c Configuration) service() service {
	if c.ContextualData {
		return contextualDataService
	}
	return integrationsService
}

func (c Configuration) operation() string {
	if c.ContextualData {
		return oas.UpdateContextualDataIntegrationOperation
	}
	return oas.UpdateIntegrationOperation
}

// Key implements teamconfig.Area.
func (c Configuration) Key() string {
	if c.ContextualData {
		return "contextualDataIntegrations"
	}
	return "integrations"
}

// Permissions implements teamconfig.Area.
func (c Configuration) Permissions() (read, write string) {
	if c.ContextualData {
		return "contextual-data:ReadConfig", "contextual-data:UpdateConfig"
	}
	return "integrations:ReadConfig", "integrations:Deploy"
}

// resourceOf is an instance in the document's form.
func resourceOf(id, key, version string, params []oas.IntegrationParameter) (teamconfig.Resource, error) {
	w := oas.UpdateIntegrationRequest{ID: oas.NewOptString(id), Metadata: oas.NewOptIntegrationMetadata(oas.IntegrationMetadata{
		IntegrationKey: oas.NewOptString(key), Version: oas.NewOptString(version),
		IntegrationParameters: oas.NewOptIntegrationParameterList(oas.IntegrationParameterList{Parameters: params}),
	})}
	doc, err := w.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: key, Doc: doc, Value: w}, err
}

// Export implements teamconfig.Area.
func (c Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachInstance(ctx, q, teamID, c.service(), "", func(in instance) error {
		r, err := resourceOf(in.ID, in.Key, in.Version, answerParams(in.Params))
		out = append(out, r)
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: the document decoded as the update's body; the parameters
// are checked by Put, since placeholders and API keys read the database.
//
// Errors: Invalid naming the field, for a body the update would refuse, an integration or a
// version the catalog lacks.
func (c Configuration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.UpdateIntegrationRequest
	if err := teamconfig.DecodeBody(c.operation(), doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	md, ok := in.Metadata.Get()
	if !ok {
		return teamconfig.Resource{}, apierror.Invalidf("metadata: required; it names the integration, its version and its parameters")
	}
	d, ok := c.Catalog.lookup(c.service(), md.IntegrationKey.Or(""))
	if !ok {
		return teamconfig.Resource{}, apierror.Invalidf("metadata.integrationKey: no %s %q in the catalog", c.service().noun(), md.IntegrationKey.Or(""))
	}
	if _, ok := d.revision(md.Version.Or("")); !ok {
		return teamconfig.Resource{}, apierror.Invalidf("metadata.version: %s has no version %q", d.Key, md.Version.Or(""))
	}
	return resourceOf(id, d.Key, md.Version.Or(""), md.IntegrationParameters.Value.Parameters)
}

// Put implements teamconfig.Area: checkMetadata against the instance it replaces, then the store.
func (c Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	req := r.Value.(oas.UpdateIntegrationRequest)
	var old instance
	if exists {
		var err error
		if old, err = getInstance(ctx, tx, teamID, c.service(), r.ID); err != nil {
			return err
		}
	}
	checked, err := checkMetadata(c.Catalog, c.service(), req.Metadata, "metadata", old.Params, teamKeys(ctx, tx, teamID))
	if err != nil {
		return err
	}
	in := instance{ID: r.ID, Service: c.service(), Key: checked.def.Key, Version: checked.rev.Version, Params: checked.params}
	if !exists {
		err := insertInstance(ctx, tx, teamID, in)
		if db.IsConflict(err) {
			return apierror.Conflictf("id: %q is the id of another instance of the team", r.ID)
		}
		return err
	}
	if old.Key != in.Key {
		return apierror.Invalidf("metadata.integrationKey: instance %q is of %s; an instance cannot change its integration", r.ID, old.Key)
	}
	return updateInstance(ctx, tx, teamID, in)
}

// Delete implements teamconfig.Area.
func (c Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	err := deleteInstance(ctx, tx, teamID, c.service(), id)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	return err
}
