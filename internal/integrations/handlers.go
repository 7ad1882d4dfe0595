// Package integrations serves the integration service and the contextual data integration
// service: the catalog of integration definitions (built-in files and the operator's
// --integrations-dir, read at start; see catalog.go), each with its versions and their typed
// fields, and each team's registered instances of them, checked against their version's fields
// (rules.go) and stored in the integration_instances table (store.go). Secrets are stored in
// clear, never answered nor logged; API key parameters name a send-data key of the team by id.
// mgmtapi deploys nothing itself: an instance records the registration, its status says what
// mgmtapi can see of it, and a test sends one real request only to an HTTP endpoint named by a
// parameter, under the server's outbound address policy.
package integrations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/apikeys"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// Sender sends one request under the outbound address policy (delivery.Sender).
type Sender interface {
	Do(ctx context.Context, req *http.Request) delivery.Attempt
}

// ExtensionsOf answers the extensions that name an integration key, as the caller may read them.
type ExtensionsOf func(ctx context.Context, key string) ([]oas.Extension, error)

// IntegrationHandler implements the integration and contextual data integration operations of
// oas.Handler.
type IntegrationHandler struct {
	db         *db.DB
	catalog    *Catalog
	sender     Sender
	extensions ExtensionsOf
	now        func() time.Time
}

// NewHandler returns the operations over the catalog; tests of HTTP endpoints are sent by sender,
// and the details of an integration list the extensions extensions answers (none when nil).
func NewHandler(database *db.DB, catalog *Catalog, sender Sender, extensions ExtensionsOf) *IntegrationHandler {
	return &IntegrationHandler{db: database, catalog: catalog, sender: sender, extensions: extensions, now: time.Now}
}

// notFound is the answer for an instance the team does not have.
func notFound(field string, svc service, id string) error {
	return apierror.NotFoundf("%s: no %s instance %q in this team", field, svc.noun(), id)
}

// ---------------------------------------------------------------- the catalog

// ListIntegrations answers the integration catalog by name, with the team's counts.
func (h *IntegrationHandler) ListIntegrations(ctx context.Context, params oas.ListIntegrationsParams) (*oas.IntegrationCatalogList, error) {
	return h.list(ctx, integrationsService, params.IncludeTestingRevision.Or(false))
}

// ListContextualDataIntegrations answers the contextual data catalog by name, with the team's counts.
func (h *IntegrationHandler) ListContextualDataIntegrations(ctx context.Context, params oas.ListContextualDataIntegrationsParams) (*oas.IntegrationCatalogList, error) {
	return h.list(ctx, contextualDataService, params.IncludeTestingIntegrations.Or(false))
}

func (h *IntegrationHandler) list(ctx context.Context, svc service, withTesting bool) (*oas.IntegrationCatalogList, error) {
	caller := auth.PrincipalFrom(ctx)
	counts := map[string]int64{}
	outdated := map[string]bool{}
	err := eachInstance(ctx, h.db.Read(), caller.TeamID, svc, "", func(in instance) error {
		counts[in.Key]++
		if d, ok := h.catalog.lookup(svc, in.Key); ok && in.Version != d.newest().Version {
			outdated[in.Key] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &oas.IntegrationCatalogList{Integrations: []oas.IntegrationWithCount{}}
	for _, d := range h.catalog.ordered {
		if d.service() != svc || len(visible(d, withTesting)) == 0 {
			continue
		}
		out.Integrations = append(out.Integrations, oas.IntegrationWithCount{
			Integration:        oas.NewOptIntegrationSummary(summaryOf(d, withTesting)),
			AmountIntegrations: oas.NewOptInt64(counts[d.Key]),
			Errors:             []string{},
			UpgradeAvailable:   oas.NewOptBool(outdated[d.Key]),
			IsNew:              oas.NewOptBool(d.IsNew),
			IsDeprecated:       oas.NewOptBool(d.IsDeprecated),
		})
	}
	return out, nil
}

// GetIntegrationDefinition answers an integration's definition.
//
// Errors: NotFound when the catalog has no such integration (or only testing revisions of it
// and they are not asked for).
func (h *IntegrationHandler) GetIntegrationDefinition(ctx context.Context, params oas.GetIntegrationDefinitionParams) (*oas.IntegrationDefinitionEnvelope, error) {
	return h.definition(integrationsService, params.ID, params.IncludeTestingRevision.Or(false))
}

// GetContextualDataIntegrationDefinition answers a contextual data integration's definition.
//
// Errors: NotFound as GetIntegrationDefinition.
func (h *IntegrationHandler) GetContextualDataIntegrationDefinition(ctx context.Context, params oas.GetContextualDataIntegrationDefinitionParams) (*oas.IntegrationDefinitionEnvelope, error) {
	return h.definition(contextualDataService, params.ID, params.IncludeTestingIntegrations.Or(false))
}

func (h *IntegrationHandler) lookupVisible(svc service, key string, withTesting bool) (*definition, []*revision, error) {
	d, ok := h.catalog.lookup(svc, key)
	if !ok {
		return nil, nil, apierror.NotFoundf("id: no %s %q in the catalog nor instance of it in this team", svc.noun(), key)
	}
	revs := visible(d, withTesting)
	if len(revs) == 0 {
		return nil, nil, apierror.NotFoundf("id: %s %q has only testing revisions; ask for them with the include-testing parameter", svc.noun(), key)
	}
	return d, revs, nil
}

func (h *IntegrationHandler) definition(svc service, key string, withTesting bool) (*oas.IntegrationDefinitionEnvelope, error) {
	d, revs, err := h.lookupVisible(svc, key, withTesting)
	if err != nil {
		return nil, err
	}
	def := oas.IntegrationDefinitionEnvelopeIntegrationDefinition{
		Key: oas.NewOptString(d.Key), IntegrationType: oas.NewOptIntegrationKind(kindAnswer(d)),
		Revisions: make([]oas.IntegrationRevision, 0, len(revs)),
	}
	for _, r := range revs {
		def.Revisions = append(def.Revisions, revisionAnswer(r))
	}
	return &oas.IntegrationDefinitionEnvelope{IntegrationDefinition: oas.NewOptIntegrationDefinitionEnvelopeIntegrationDefinition(def)}, nil
}

// GetIntegrationDetails answers an integration with the team's instances of it.
//
// Errors: NotFound as GetIntegrationDefinition.
func (h *IntegrationHandler) GetIntegrationDetails(ctx context.Context, params oas.GetIntegrationDetailsParams) (*oas.IntegrationDetailsEnvelope, error) {
	return h.details(ctx, integrationsService, params.ID, params.IncludeTestingRevision.Or(false))
}

// GetContextualDataIntegrationDetails answers a contextual data integration with the team's
// instances of it.
//
// Errors: NotFound as GetIntegrationDefinition.
func (h *IntegrationHandler) GetContextualDataIntegrationDetails(ctx context.Context, params oas.GetContextualDataIntegrationDetailsParams) (*oas.IntegrationDetailsEnvelope, error) {
	return h.details(ctx, contextualDataService, params.ID, params.IncludeTestingRevisions.Or(false))
}

func (h *IntegrationHandler) details(ctx context.Context, svc service, key string, withTesting bool) (*oas.IntegrationDetailsEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	if _, ok := h.catalog.lookup(svc, key); !ok {
		// An instance's id names the integration it is of.
		in, err := getInstance(ctx, h.db.Read(), caller.TeamID, svc, key)
		if err == nil {
			key = in.Key
		} else if !errors.Is(err, db.ErrNotFound) {
			return nil, err
		}
	}
	d, revs, err := h.lookupVisible(svc, key, withTesting)
	if err != nil {
		return nil, err
	}
	detail := oas.IntegrationDetailsEnvelopeIntegrationDetail{
		Integration: oas.NewOptIntegrationSummary(summaryOf(d, withTesting)),
		Docs:        []oas.IntegrationDetailsEnvelopeIntegrationDetailDocsItem{},
		Extensions:  []oas.Extension{},
	}
	for _, l := range d.Docs {
		detail.Docs = append(detail.Docs, oas.IntegrationDetailsEnvelopeIntegrationDetailDocsItem{Name: oas.NewOptString(l.Name), Link: oas.NewOptString(l.Link)})
	}
	if h.extensions != nil {
		if detail.Extensions, err = h.extensions(ctx, d.Key); err != nil {
			return nil, err
		}
	}
	var local oas.IntegrationDetailsEnvelopeIntegrationDetailLocal
	local.Changes = []oas.IntegrationDetailsEnvelopeIntegrationDetailLocalChangesItem{}
	for _, r := range revs {
		local.Changes = append(local.Changes, oas.IntegrationDetailsEnvelopeIntegrationDetailLocalChangesItem{
			Version: oas.NewOptString(r.Version), DescriptionMd: oas.NewOptString(r.Changes)})
	}
	detail.Local = oas.NewOptIntegrationDetailsEnvelopeIntegrationDetailLocal(local)
	registered := []oas.RegisteredIntegration{}
	q := h.db.Read()
	err = eachInstance(ctx, q, caller.TeamID, svc, d.Key, func(in instance) error {
		r, ok := d.revision(in.Version)
		if !ok {
			return fmt.Errorf("instance %s names version %q that %s no longer has", in.ID, in.Version, d.Key)
		}
		st, err := statusOf(ctx, q, caller.TeamID, d, in.Params)
		if err != nil {
			return err
		}
		registered = append(registered, oas.RegisteredIntegration{
			ID: oas.NewOptString(in.ID), DefinitionVersion: oas.NewOptString(in.Version), IsTesting: oas.NewOptBool(r.Testing),
			LastUpdated: oas.NewOptDateTime(in.Updated), Parameters: answerParams(in.Params),
			IntegrationStatus: oas.NewOptIntegrationStatus(st),
			RevisionLifecycle: oas.NewOptIntegrationLifecycle(lifecycleAnswer(r)),
			Empty:             &oas.IntegrationEmpty{},
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	detail.Default = oas.NewOptIntegrationDetailsEnvelopeIntegrationDetailDefault(oas.IntegrationDetailsEnvelopeIntegrationDetailDefault{Registered: registered})
	return &oas.IntegrationDetailsEnvelope{IntegrationDetail: oas.NewOptIntegrationDetailsEnvelopeIntegrationDetail(detail)}, nil
}

// ---------------------------------------------------------------- instances

// SaveIntegration registers an instance of an integration of the catalog.
//
// Errors: Invalid (see checkMetadata).
func (h *IntegrationHandler) SaveIntegration(ctx context.Context, req *oas.SaveIntegrationRequest) (*oas.IntegrationSaved, error) {
	return h.save(ctx, integrationsService, req.Metadata)
}

// SaveContextualDataIntegration registers an instance of a contextual data integration.
//
// Errors: Invalid (see checkMetadata).
func (h *IntegrationHandler) SaveContextualDataIntegration(ctx context.Context, req *oas.SaveContextualDataRequest) (*oas.IntegrationSaved, error) {
	return h.save(ctx, contextualDataService, req.Metadata)
}

func (h *IntegrationHandler) save(ctx context.Context, svc service, md oas.OptIntegrationMetadata) (*oas.IntegrationSaved, error) {
	caller := auth.PrincipalFrom(ctx)
	var id string
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		c, err := checkMetadata(h.catalog, svc, md, "metadata", nil, teamKeys(ctx, tx, caller.TeamID))
		if err != nil {
			return err
		}
		id = tx.NewID() // the audit record names it
		return insertInstance(ctx, tx, caller.TeamID, instance{ID: id, Service: svc, Key: c.def.Key, Version: c.rev.Version, Params: c.params})
	})
	if err != nil {
		return nil, err
	}
	return &oas.IntegrationSaved{IntegrationId: oas.NewOptString(id)}, nil
}

// UpdateIntegration replaces the parameters and version of the team's instance req.ID.
//
// Errors: Invalid when the id is missing, the key changes, and see checkMetadata; NotFound when
// the team has no such instance.
func (h *IntegrationHandler) UpdateIntegration(ctx context.Context, req *oas.UpdateIntegrationRequest) error {
	return h.update(ctx, integrationsService, "id", req.ID.Or(""), req.Metadata)
}

// UpdateContextualDataIntegration replaces the team's contextual data instance req.IntegrationId.
//
// Errors: as UpdateIntegration.
func (h *IntegrationHandler) UpdateContextualDataIntegration(ctx context.Context, req *oas.UpdateContextualDataRequest) error {
	return h.update(ctx, contextualDataService, "integrationId", req.IntegrationId.Or(""), req.Metadata)
}

func (h *IntegrationHandler) update(ctx context.Context, svc service, idField, id string, md oas.OptIntegrationMetadata) error {
	caller := auth.PrincipalFrom(ctx)
	if id == "" {
		return apierror.Invalidf("%s: required; it names the instance to replace", idField)
	}
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		old, err := getInstance(ctx, tx, caller.TeamID, svc, id)
		if errors.Is(err, db.ErrNotFound) {
			return notFound(idField, svc, id)
		}
		if err != nil {
			return err
		}
		c, err := checkMetadata(h.catalog, svc, md, "metadata", old.Params, teamKeys(ctx, tx, caller.TeamID))
		if err != nil {
			return err
		}
		if c.def.Key != old.Key {
			return apierror.Invalidf("metadata.integrationKey: instance %q is of %s; an instance cannot change its integration", id, old.Key)
		}
		tx.AuditResource(id)
		return updateInstance(ctx, tx, caller.TeamID, instance{ID: id, Service: svc, Version: c.rev.Version, Params: c.params})
	})
}

// GetDeployedIntegration answers the team's instance with its parameters and status.
//
// Errors: NotFound when the team has no such instance.
func (h *IntegrationHandler) GetDeployedIntegration(ctx context.Context, params oas.GetDeployedIntegrationParams) (*oas.DeployedIntegrationEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	q := h.db.Read()
	in, d, err := h.instanceOf(ctx, q, caller.TeamID, params.IntegrationID)
	if err != nil {
		return nil, err
	}
	st, err := statusOf(ctx, q, caller.TeamID, d, in.Params)
	if err != nil {
		return nil, err
	}
	return &oas.DeployedIntegrationEnvelope{Integration: oas.NewOptDeployedIntegrationEnvelopeIntegration(oas.DeployedIntegrationEnvelopeIntegration{
		ID: oas.NewOptString(in.ID), DefinitionKey: oas.NewOptString(in.Key), DefinitionVersion: oas.NewOptString(in.Version),
		Parameters: answerParams(in.Params), IntegrationStatus: oas.NewOptIntegrationStatus(st),
	})}, nil
}

// instanceOf returns the team's integration instance id with its definition.
func (h *IntegrationHandler) instanceOf(ctx context.Context, q db.Querier, teamID int64, id string) (instance, *definition, error) {
	in, err := getInstance(ctx, q, teamID, integrationsService, id)
	if errors.Is(err, db.ErrNotFound) {
		return in, nil, notFound("integration_id", integrationsService, id)
	}
	if err != nil {
		return in, nil, err
	}
	d, ok := h.catalog.lookup(integrationsService, in.Key)
	if !ok {
		return in, nil, fmt.Errorf("instance %s is of %q, which the catalog no longer has", in.ID, in.Key)
	}
	return in, d, nil
}

// DeleteIntegration removes the team's instance.
//
// Errors: NotFound when the team has no such instance.
func (h *IntegrationHandler) DeleteIntegration(ctx context.Context, params oas.DeleteIntegrationParams) error {
	return h.delete(ctx, integrationsService, "integration_id", params.IntegrationID)
}

// DeleteContextualDataIntegration removes the team's contextual data instance.
//
// Errors: NotFound when the team has no such instance.
func (h *IntegrationHandler) DeleteContextualDataIntegration(ctx context.Context, params oas.DeleteContextualDataIntegrationParams) error {
	return h.delete(ctx, contextualDataService, "id", params.ID)
}

func (h *IntegrationHandler) delete(ctx context.Context, svc service, field, id string) error {
	caller := auth.PrincipalFrom(ctx)
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		err := deleteInstance(ctx, tx, caller.TeamID, svc, id)
		if errors.Is(err, db.ErrNotFound) {
			return notFound(field, svc, id)
		}
		tx.AuditResource(id)
		return err
	})
}

// ---------------------------------------------------------------- tests

// TestIntegration checks a registration as the save does (secrets sent back as placeholders are
// taken from the instance req.IntegrationId) and tests it (see test).
//
// Errors: Invalid (see checkMetadata); NotFound when integrationId names no instance of the team.
func (h *IntegrationHandler) TestIntegration(ctx context.Context, req *oas.TestIntegrationRequest) (*oas.IntegrationTestEnvelope, error) {
	var old []param
	if id := req.IntegrationId.Or(""); id != "" {
		in, err := getInstance(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID, integrationsService, id)
		if errors.Is(err, db.ErrNotFound) {
			return nil, notFound("integrationId", integrationsService, id)
		}
		if err != nil {
			return nil, err
		}
		old = in.Params
	}
	return h.test(ctx, integrationsService, req.IntegrationData, old)
}

// TestContextualDataIntegration checks and tests a contextual data registration; integration_id
// is the team's instance whose secrets fill the placeholders, or the integration's key.
//
// Errors: Invalid (see checkMetadata); NotFound when integration_id is neither.
func (h *IntegrationHandler) TestContextualDataIntegration(ctx context.Context, req *oas.TestContextualDataRequest, params oas.TestContextualDataIntegrationParams) (*oas.IntegrationTestEnvelope, error) {
	in, err := getInstance(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID, contextualDataService, params.IntegrationID)
	var old []param
	switch {
	case err == nil:
		if md, ok := req.IntegrationData.Get(); ok && md.IntegrationKey.Or("") != in.Key {
			return nil, apierror.Invalidf("integrationData.integrationKey: instance %q is of %s", in.ID, in.Key)
		}
		old = in.Params
	case errors.Is(err, db.ErrNotFound):
		if _, ok := h.catalog.lookup(contextualDataService, params.IntegrationID); !ok {
			return nil, apierror.NotFoundf("integration_id: %q is neither an instance of this team nor a contextual data integration of the catalog", params.IntegrationID)
		}
		if md, ok := req.IntegrationData.Get(); ok && md.IntegrationKey.Or("") != params.IntegrationID {
			return nil, apierror.Invalidf("integrationData.integrationKey: must be %q, the integration the path names", params.IntegrationID)
		}
	default:
		return nil, err
	}
	return h.test(ctx, contextualDataService, req.IntegrationData, old)
}

// test checks md and, when its revision names a test endpoint, sends one POST there with a small
// JSON document saying it is a test; the outcome is the answer, not an error.
func (h *IntegrationHandler) test(ctx context.Context, svc service, md oas.OptIntegrationMetadata, old []param) (*oas.IntegrationTestEnvelope, error) {
	c, err := checkMetadata(h.catalog, svc, md, "integrationData", old, teamKeys(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID))
	if err != nil {
		return nil, err
	}
	success := &oas.IntegrationTestEnvelope{Result: oas.NewOptIntegrationTestResult(oas.IntegrationTestResult{Success: &oas.IntegrationTestResultSuccess{}})}
	if c.rev.TestEndpoint == "" {
		return success, nil
	}
	target := oldValue(c.params, c.rev.TestEndpoint)
	fail := func(msg string) *oas.IntegrationTestEnvelope {
		return &oas.IntegrationTestEnvelope{Result: oas.NewOptIntegrationTestResult(oas.IntegrationTestResult{
			Failure: oas.NewOptIntegrationTestResultFailure(oas.IntegrationTestResultFailure{ErrorMessage: oas.NewOptString(msg)})})}
	}
	u, err := url.Parse(target.String)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail(fmt.Sprintf("parameter %q: %q is not an absolute http or https URL", c.rev.TestEndpoint, target.String)), nil
	}
	body, _ := json.Marshal(map[string]any{
		"test": true, "integration": c.def.Key, "version": c.rev.Version,
		"message": "A test request of mgmtapi: the integration's endpoint is reachable. Nothing needs to be done.",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fail(fmt.Sprintf("parameter %q: the URL cannot be requested", c.rev.TestEndpoint)), nil
	}
	req.Header.Set("Content-Type", "application/json")
	if a := h.sender.Do(ctx, req); a.Err != nil {
		return fail(fmt.Sprintf("parameter %q: the test request failed: %s", c.rev.TestEndpoint, a.Err)), nil
	}
	return success, nil
}

// ---------------------------------------------------------------- templates, managed, RUM

// GetIntegrationTemplate answers the deployment template URL of an instance or an integration.
//
// Errors: Invalid when integration_id is missing or common_arm_params.apiKey is not a send-data
// key of the team; NotFound when integration_id is neither or has no template.
func (h *IntegrationHandler) GetIntegrationTemplate(ctx context.Context, params oas.GetIntegrationTemplateParams) (*oas.IntegrationTemplate, error) {
	caller := auth.PrincipalFrom(ctx)
	id := params.IntegrationID.Or("")
	if id == "" {
		return nil, apierror.Invalidf("integration_id: required; an instance's id or an integration's key")
	}
	q := h.db.Read()
	var d *definition
	var r *revision
	in, err := getInstance(ctx, q, caller.TeamID, integrationsService, id)
	switch {
	case err == nil:
		var ok bool
		if d, ok = h.catalog.lookup(integrationsService, in.Key); ok {
			r, _ = d.revision(in.Version)
		}
	case errors.Is(err, db.ErrNotFound):
		if d, _ = h.catalog.lookup(integrationsService, id); d != nil {
			r = d.newest()
		}
	default:
		return nil, err
	}
	if r == nil {
		return nil, apierror.NotFoundf("integration_id: %q is neither an instance of this team nor an integration of the catalog", id)
	}
	if r.TemplateURL == "" {
		return nil, apierror.NotFoundf("integration_id: %s %s has no deployment template", d.Key, r.Version)
	}
	u, err := url.Parse(r.TemplateURL)
	if err != nil {
		return nil, fmt.Errorf("template of %s %s: %w", d.Key, r.Version, err)
	}
	arm, ok, err := armParams(ctx)
	if err != nil {
		return nil, err
	}
	if ok && r.Deployment == "azureArmTemplate" {
		if key := arm.APIKey; key != "" {
			if _, err := apikeys.FindSendDataKey(ctx, q, caller.TeamID, "", key); errors.Is(err, db.ErrNotFound) {
				return nil, apierror.Invalidf("common_arm_params.apiKey: not a send-data key of this team")
			} else if err != nil {
				return nil, err
			}
		}
		values := u.Query()
		for name, v := range map[string]string{"logsUrl": arm.LogsURL, "cgxDomain": arm.CgxDomain} {
			if v != "" {
				values.Set(name, v)
			}
		}
		u.RawQuery = values.Encode()
	}
	return &oas.IntegrationTemplate{TemplateUrl: oas.NewOptString(u.String())}, nil
}

// armSchema is the shape of the common_arm_params query object.
var armSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
	"apiKey": {Kind: queryobject.String}, "cgxDomain": {Kind: queryobject.String}, "logsUrl": {Kind: queryobject.String},
}}

// armQuery is the common_arm_params query object.
type armQuery struct {
	APIKey    string `json:"apiKey"`
	CgxDomain string `json:"cgxDomain"`
	LogsURL   string `json:"logsUrl"`
}

// armParams reads the common_arm_params query object (bracket, dot or JSON form, or its fields
// as query parameters of their own, as the public document's form style sends them); ok is false
// when the query has none.
//
// Errors: Invalid naming the field.
func armParams(ctx context.Context) (p armQuery, ok bool, err error) {
	values := queryobject.Values(ctx)
	doc, err := queryobject.Decode(values, "common_arm_params", armSchema)
	if err != nil {
		return p, false, err
	}
	if doc == nil {
		// The public document's form style: the object's fields as query parameters of their own.
		flat := map[string]string{}
		for _, name := range []string{"apiKey", "cgxDomain", "logsUrl"} {
			if v := values[name]; len(v) > 0 {
				flat[name] = v[len(v)-1]
			}
		}
		if len(flat) == 0 {
			return p, false, nil
		}
		doc, _ = json.Marshal(flat)
	}
	if err := json.Unmarshal(doc, &p); err != nil {
		return p, false, apierror.Invalidf("common_arm_params: does not have the expected shape: %s", queryobject.LastMessagePart(err.Error()))
	}
	for name, v := range map[string]string{"apiKey": p.APIKey, "cgxDomain": p.CgxDomain, "logsUrl": p.LogsURL} {
		if len(v) > 65535 {
			return p, false, apierror.Invalidf("common_arm_params.%s: must be at most 65535 bytes", name)
		}
	}
	return p, true, nil
}

// ListManagedIntegrationKeys answers the ids of the team's send-data keys, oldest first.
func (h *IntegrationHandler) ListManagedIntegrationKeys(ctx context.Context) (*oas.ManagedIntegrationKeyList, error) {
	keys, err := apikeys.SendDataKeys(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	out := &oas.ManagedIntegrationKeyList{IntegrationKeys: make([]string, 0, len(keys))}
	for _, k := range keys {
		out.IntegrationKeys = append(out.IntegrationKeys, k.ID)
	}
	return out, nil
}

// GetManagedIntegrationStatus answers the status of the team's instance of a managed integration.
//
// Errors: NotFound when the team has no such instance or it is not of a managed integration.
func (h *IntegrationHandler) GetManagedIntegrationStatus(ctx context.Context, params oas.GetManagedIntegrationStatusParams) (*oas.ManagedIntegrationStatus, error) {
	caller := auth.PrincipalFrom(ctx)
	q := h.db.Read()
	in, d, err := h.instanceOf(ctx, q, caller.TeamID, params.IntegrationID)
	if err != nil {
		return nil, err
	}
	if d.Type != "managed" {
		return nil, apierror.NotFoundf("integration_id: instance %q is of %s, which is not a managed integration", in.ID, d.Key)
	}
	st, err := statusOf(ctx, q, caller.TeamID, d, in.Params)
	if err != nil {
		return nil, err
	}
	return &oas.ManagedIntegrationStatus{IntegrationId: oas.NewOptString(in.ID), Status: oas.NewOptIntegrationStatus(st)}, nil
}

// RUM registrations name their application and version in these parameters.
const (
	rumApplicationParam = "ApplicationName"
	rumVersionParam     = "Version"
)

// GetRumApplicationVersions answers the versions the team registered for a RUM application
// (every application's when application_name is empty), newest registration first.
func (h *IntegrationHandler) GetRumApplicationVersions(ctx context.Context, params oas.GetRumApplicationVersionsParams) (*oas.RumVersionDataEnvelope, error) {
	caller := auth.PrincipalFrom(ctx)
	app := params.ApplicationName.Or("")
	type seen struct{ first, last time.Time }
	versions := map[string]*seen{}
	err := eachInstance(ctx, h.db.Read(), caller.TeamID, integrationsService, "", func(in instance) error {
		d, ok := h.catalog.lookup(integrationsService, in.Key)
		if !ok {
			return nil
		}
		if r, ok := d.revision(in.Version); !ok || r.Deployment != "rum" {
			return nil
		}
		a, v := oldValue(in.Params, rumApplicationParam), oldValue(in.Params, rumVersionParam)
		if a == nil || v == nil || (app != "" && a.String != app) {
			return nil
		}
		s := versions[v.String]
		if s == nil {
			s = &seen{first: in.Created, last: in.Updated}
			versions[v.String] = s
		}
		s.first, s.last = minTime(s.first, in.Created), maxTime(s.last, in.Updated)
		return nil
	})
	if err != nil {
		return nil, err
	}
	list := make([]oas.RumVersion, 0, len(versions))
	for v, s := range versions {
		list = append(list, oas.RumVersion{Version: oas.NewOptString(v), LogMetadata: oas.NewOptRumVersionLogMetadata(oas.RumVersionLogMetadata{
			FirstOccurrence: oas.NewOptDateTime(s.first), LastOccurrence: oas.NewOptDateTime(s.last)})})
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].LogMetadata.Value.LastOccurrence.Value, list[j].LogMetadata.Value.LastOccurrence.Value
		if !a.Equal(b) {
			return a.After(b)
		}
		return list[i].Version.Value < list[j].Version.Value
	})
	return &oas.RumVersionDataEnvelope{VersionData: oas.NewOptRumVersionDataEnvelopeVersionData(oas.RumVersionDataEnvelopeVersionData{
		SyncedAt: oas.NewOptDateTime(h.now().UTC()), Versions: list})}, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// SyncRumData changes nothing: RUM versions are read from the registrations at every request.
// It answers syncExecuted false and the time.
func (h *IntegrationHandler) SyncRumData(ctx context.Context, req oas.OptRumSyncRequest) (*oas.RumSyncResult, error) {
	return &oas.RumSyncResult{SyncExecuted: oas.NewOptBool(false), SyncedAt: oas.NewOptDateTime(h.now().UTC())}, nil
}

// statusOf is what mgmtapi sees of an instance: a managed integration is ACTIVE while every API
// key parameter names an active send-data key of the team, FAILING otherwise; mgmtapi receives
// no report of any other deployment (STATUS_UNKNOWN).
func statusOf(ctx context.Context, q db.Querier, teamID int64, d *definition, params []param) (oas.IntegrationStatus, error) {
	if d.Type != "managed" {
		return oas.IntegrationStatus{
			ConnectionStatus: oas.NewOptIntegrationStatusConnectionStatus(oas.IntegrationStatusConnectionStatusSTATUSUNKNOWN),
			Messages:         []string{"the deployment runs outside mgmtapi, which receives no report of it"},
		}, nil
	}
	var problems []string
	for _, p := range params {
		if p.Kind != kindAPIKey {
			continue
		}
		k, err := apikeys.FindSendDataKey(ctx, q, teamID, p.KeyID, "")
		switch {
		case errors.Is(err, db.ErrNotFound):
			problems = append(problems, fmt.Sprintf("parameter %q: send-data key %s no longer exists", p.Key, p.KeyID))
		case err != nil:
			return oas.IntegrationStatus{}, err
		case !k.Active:
			problems = append(problems, fmt.Sprintf("parameter %q: send-data key %s is deactivated", p.Key, p.KeyID))
		}
	}
	st := oas.IntegrationStatus{ConnectionStatus: oas.NewOptIntegrationStatusConnectionStatus(oas.IntegrationStatusConnectionStatusACTIVE), Messages: []string{}}
	if len(problems) > 0 {
		st.ConnectionStatus = oas.NewOptIntegrationStatusConnectionStatus(oas.IntegrationStatusConnectionStatusFAILING)
		st.Messages = problems
	}
	return st, nil
}

// ---------------------------------------------------------------- answers

// visible returns the revisions answered: every one with withTesting, else the non-testing ones.
func visible(d *definition, withTesting bool) []*revision {
	var out []*revision
	for i := range d.Revisions {
		if withTesting || !d.Revisions[i].Testing {
			out = append(out, &d.Revisions[i])
		}
	}
	return out
}

func lifecycleAnswer(r *revision) oas.IntegrationLifecycle {
	l := r.Lifecycle
	if l == "" {
		l = "GA"
	}
	return oas.IntegrationLifecycle("REVISION_LIFECYCLE_" + l)
}

func kindAnswer(d *definition) oas.IntegrationKind {
	var k oas.IntegrationKind
	empty := &oas.IntegrationEmpty{}
	switch d.Type {
	case "managed":
		v := d.ManagedVariant
		if v == "" {
			v = "DEFAULT"
		}
		k.Managed = oas.NewOptIntegrationKindManaged(oas.IntegrationKindManaged{Variant: oas.NewOptIntegrationKindManagedVariant(oas.IntegrationKindManagedVariant(v))})
	case "untracked":
		k.Untracked = empty
	case "cloudformation":
		k.Cloudformation = empty
	case "arm":
		k.Arm = empty
	case "pushBasedContextualData":
		k.PushBasedContextualData = empty
	case "contextualData":
		k.ContextualData = empty
	case "genericWebhook":
		k.GenericWebhook = empty
	}
	return k
}

func summaryOf(d *definition, withTesting bool) oas.IntegrationSummary {
	s := oas.IntegrationSummary{
		ID: oas.NewOptString(d.Key), Name: oas.NewOptString(d.Name), Description: oas.NewOptString(d.Description),
		Icon: oas.NewOptString(d.Icon), DarkIcon: oas.NewOptString(d.DarkIcon), Tags: append([]string{}, d.Tags...),
		Versions: []string{}, Revisions: []oas.IntegrationSummaryRevisionsItem{},
		IntegrationType: oas.NewOptIntegrationKind(kindAnswer(d)),
	}
	for _, r := range visible(d, withTesting) {
		s.Versions = append(s.Versions, r.Version)
		s.Revisions = append(s.Revisions, oas.IntegrationSummaryRevisionsItem{Version: oas.NewOptString(r.Version), Lifecycle: oas.NewOptIntegrationLifecycle(lifecycleAnswer(r))})
	}
	return s
}

func commandsAnswer(list []command) []oas.IntegrationCommand {
	out := make([]oas.IntegrationCommand, 0, len(list))
	for _, c := range list {
		lang := c.Language
		if lang == "" {
			lang = "UNKNOWN"
		}
		out = append(out, oas.IntegrationCommand{Name: oas.NewOptString(c.Name), Command: oas.NewOptString(c.Command),
			Language: oas.NewOptIntegrationCommandLanguage(oas.IntegrationCommandLanguage(lang)), TooltipText: oas.NewOptString(c.Tooltip)})
	}
	return out
}

func revisionAnswer(r *revision) oas.IntegrationRevision {
	out := oas.IntegrationRevision{
		ID: oas.NewOptString(r.Version), Fields: make([]oas.IntegrationField, 0, len(r.Fields)),
		Groups: []oas.IntegrationRevisionGroupsItem{}, RevisionDeploymentSupported: oas.NewOptBool(true),
	}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, oas.IntegrationRevisionGroupsItem{ID: oas.NewOptString(g.ID), Name: oas.NewOptString(g.Name)})
	}
	for i := range r.Fields {
		out.Fields = append(out.Fields, fieldAnswer(&r.Fields[i]))
	}
	switch r.Deployment {
	case "cloudFormation":
		out.CloudFormation = oas.NewOptIntegrationRevisionCloudFormation(oas.IntegrationRevisionCloudFormation{
			TemplateUrl: oas.NewOptString(r.TemplateURL), Commands: commandsAnswer(r.Commands)})
	case "azureArmTemplate":
		out.AzureArmTemplate = oas.NewOptIntegrationRevisionAzureArmTemplate(oas.IntegrationRevisionAzureArmTemplate{TemplateUrl: oas.NewOptString(r.TemplateURL)})
	case "helmChart":
		out.HelmChart = oas.NewOptIntegrationRevisionHelmChart(oas.IntegrationRevisionHelmChart{
			Template: oas.NewOptString(r.HelmTemplate), Commands: commandsAnswer(r.Commands)})
	case "terraform":
		var blocks []oas.IntegrationRevisionTerraformConfigurationBlocksItem
		for _, b := range r.TerraformBlocks {
			blocks = append(blocks, oas.IntegrationRevisionTerraformConfigurationBlocksItem{Name: oas.NewOptString(b.Name), Value: oas.NewOptString(b.Value)})
		}
		out.Terraform = oas.NewOptIntegrationRevisionTerraform(oas.IntegrationRevisionTerraform{ConfigurationBlocks: blocks})
	case "managedService":
		out.ManagedService = &oas.IntegrationEmpty{}
	case "rum":
		out.Rum = oas.NewOptIntegrationRevisionRum(oas.IntegrationRevisionRum{BrowserSdkCommands: commandsAnswer(r.Commands), SourceMapCommands: []oas.IntegrationCommand{}})
	}
	return out
}

func fieldAnswer(f *field) oas.IntegrationField {
	a := oas.IntegrationField{
		Name: oas.NewOptString(f.Name), Type: oas.NewOptIntegrationFieldType(oas.IntegrationFieldType(f.Type)),
		Required: oas.NewOptBool(f.Required), Readonly: oas.NewOptBool(f.Readonly), Visible: oas.NewOptBool(!f.Hidden),
		Predefined: oas.NewOptBool(f.value != nil), Tooltip: oas.NewOptString(f.Tooltip),
	}
	for _, s := range []struct {
		to *oas.OptString
		v  string
	}{{&a.Placeholder, f.Placeholder}, {&a.AllowedPattern, f.AllowedPattern}, {&a.GroupId, f.Group},
		{&a.TemplateParamName, f.TemplateParam}, {&a.DocumentationReference, f.Documentation}} {
		if s.v != "" {
			*s.to = oas.NewOptString(s.v)
		}
	}
	def := f.value
	if def == nil {
		def = &value{}
	}
	str := func() oas.OptString {
		if f.value == nil {
			return oas.OptString{}
		}
		return oas.NewOptString(def.String)
	}
	switch f.Type {
	case "TEXT", "JSON", "SENSITIVE_DATA", "API_KEY":
		a.Single = oas.NewOptIntegrationFieldSingle(oas.IntegrationFieldSingle{DefaultValue: str()})
	case "SELECT", "AWS_REGION_SELECT":
		a.Selection = oas.NewOptIntegrationFieldSelection(oas.IntegrationFieldSelection{DefaultValue: str(), Options: append([]string{}, f.Options...)})
	case "LIST_TEXT", "AWS_CLOUDWATCH_NAMESPACE_LIST", "JSON_OBJECT_ARRAY":
		a.MultiText = oas.NewOptIntegrationFieldMultiText(oas.IntegrationFieldMultiText{DefaultValues: append([]string{}, def.List...), Options: append([]string{}, f.Options...)})
	case "MULTIPLE_SELECTION", "AWS_REGION_MULTISELECT":
		a.MultipleSelection = oas.NewOptIntegrationFieldMultipleSelection(oas.IntegrationFieldMultipleSelection{Options: append([]string{}, f.Options...)})
	case "BOOLEAN":
		var v oas.OptBool
		if f.value != nil {
			v = oas.NewOptBool(def.Bool)
		}
		a.SingleBoolean = oas.NewOptIntegrationFieldSingleBoolean(oas.IntegrationFieldSingleBoolean{DefaultValue: v})
	case "NUMBER":
		var v oas.OptFloat64
		if f.value != nil {
			v = oas.NewOptFloat64(def.Number)
		}
		a.SingleNumber = oas.NewOptIntegrationFieldSingleNumber(oas.IntegrationFieldSingleNumber{DefaultValue: v})
	}
	return a
}
