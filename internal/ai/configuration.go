package ai

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// The AI center's parts of a team's configuration document (teamconfig.Area), in the order of
// teamconfig.AreaOrder: the applications (so that a document can register them, as the operator
// does), the model pricing, the AI evaluations and the custom evaluations with the applications
// they are linked to (after the applications, which they name by id). Each resource is what the
// read operation answers without what the server sets (companyId, times, createdBy), checked by
// the same rules as the HTTP operations and stored by the same functions. Ids are UUIDs: a
// document that gives another id is refused, since the operations' paths take UUIDs only.

// preparedID returns the document's id, lower-cased, or a fresh one, and doc without it.
//
// Errors: Invalid naming "id" when it is not a UUID.
func preparedID(doc []byte, newID func() string) (string, []byte, error) {
	id, err := teamconfig.IDOf(doc, newID)
	if err != nil {
		return "", nil, err
	}
	if err := checkUUID("id", id); err != nil {
		return "", nil, err
	}
	rest, err := teamconfig.WithoutFields(doc, "id")
	return strings.ToLower(id), rest, err
}

// ApplicationsConfiguration is the AI applications' part of the document: each as
// GetAiApplication answers it, without companyId, createdAt and updatedAt.
type ApplicationsConfiguration struct{}

// Key implements teamconfig.Area.
func (ApplicationsConfiguration) Key() string { return "aiApplications" }

// Permissions implements teamconfig.Area: those of GetAiApplication and DeleteAiApplication.
func (ApplicationsConfiguration) Permissions() (read, write string) {
	return "ai-app-catalog:Read", "ai-app-discovery:Manage"
}

// exported is the application as the document holds it.
func (a application) exported() ([]byte, error) {
	out := a.answer(0)
	out.CompanyId.Reset()
	out.CreatedAt.Reset()
	out.UpdatedAt.Reset()
	return out.MarshalJSON()
}

func (a application) name() string {
	if a.Subsystem == "" {
		return a.Application
	}
	return a.Application + "/" + a.Subsystem
}

// Export implements teamconfig.Area.
func (ApplicationsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	apps, err := listApplications(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	var out []teamconfig.Resource
	for _, a := range apps {
		doc, err := a.exported()
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: a.ID, Name: a.name(), Doc: doc})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the body of AdminRegisterAiApplication with an id.
func (ApplicationsConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, rest, err := preparedID(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.AiApplicationRegistration
	if err := teamconfig.DecodeBody(oas.AdminRegisterAiApplicationOperation, rest, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	a := application{ID: id, Application: in.Application, Subsystem: in.Subsystem.Or(""), Guardrails: in.GuardrailsIntegrated.Or(false)}
	if err := checkApplication(a); err != nil {
		return teamconfig.Resource{}, err
	}
	encoded, err := a.exported()
	return teamconfig.Resource{ID: id, Name: a.name(), Doc: encoded, Value: a}, err
}

// Put implements teamconfig.Area: the MaxApplications bound holds, and a name and subsystem
// name one application.
func (ApplicationsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	a := r.Value.(application)
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	other, err := applicationByName(ctx, tx, teamID, a.Application, a.Subsystem)
	switch {
	case err == nil && other.ID != a.ID:
		return apierror.Conflictf("application: %q (subsystem %q) is the AI application %s already", a.Application, a.Subsystem, other.ID)
	case err != nil && !isNotFound(err):
		return err
	}
	if exists {
		return updateApplication(ctx, tx, teamID, a)
	}
	if err := roomFor(ctx, tx, teamID, applicationsBound); err != nil {
		return err
	}
	return insertApplication(ctx, tx, teamID, a)
}

// Delete implements teamconfig.Area: as DeleteAiApplication, the links go too.
func (ApplicationsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteApplication(ctx, tx, teamID, id)
}

// PricingConfiguration is the model pricing's part of the document (teamconfig.Single): the
// pricing as GetAiModelPricing answers it, without companyId. The document's replaces the
// team's and takes the document's id.
type PricingConfiguration struct{}

// Key implements teamconfig.Area.
func (PricingConfiguration) Key() string { return "aiModelPricing" }

// Single implements teamconfig.Single.
func (PricingConfiguration) Single() {}

// Permissions implements teamconfig.Area: those of GetAiModelPricing and SetAiModelPricing.
func (PricingConfiguration) Permissions() (read, write string) {
	return "team-ai-settings:ReadConfig", "team-ai-settings:Manage"
}

func (p pricing) exported() ([]byte, error) {
	out := p.answer(0)
	out.CompanyId.Reset()
	return out.MarshalJSON()
}

// Export implements teamconfig.Area.
func (PricingConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	p, err := getPricing(ctx, q, teamID)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := p.exported()
	return []teamconfig.Resource{{ID: p.ID, Doc: doc}}, err
}

// Prepare implements teamconfig.Area: the body of SetAiModelPricing with an id.
func (PricingConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, rest, err := preparedID(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.AiModelPricingInput
	if err := teamconfig.DecodeBody(oas.SetAiModelPricingOperation, rest, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	if err := checkPrices(in.Prices); err != nil {
		return teamconfig.Resource{}, err
	}
	p := pricing{ID: id, Prices: oas.AiModelPricingPrices(in.Prices)}
	encoded, err := p.exported()
	return teamconfig.Resource{ID: id, Doc: encoded, Value: p}, err
}

// Put implements teamconfig.Area.
func (PricingConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return putPricing(ctx, tx, teamID, r.Value.(pricing))
}

// Delete implements teamconfig.Area.
func (PricingConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, _ string) error {
	return deletePricing(ctx, tx, teamID)
}

// EvaluationsConfiguration is the AI evaluations' part of the document: each as
// GetAiEvaluation answers it, without companyId, createdBy, createdAt and updatedAt.
type EvaluationsConfiguration struct{}

// Key implements teamconfig.Area.
func (EvaluationsConfiguration) Key() string { return "aiEvaluations" }

// Permissions implements teamconfig.Area: those of GetAiEvaluation and CreateAiEvaluation.
func (EvaluationsConfiguration) Permissions() (read, write string) {
	return "ai-app-evaluators:Read", "ai-app-evaluators:Manage"
}

func evaluationName(d oas.AiEvaluation, typ string) string {
	return d.Application.Or("") + " " + typ
}

// Export implements teamconfig.Area.
func (EvaluationsConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	list, err := listEvaluations(ctx, q, teamID, evaluationFilter{})
	if err != nil {
		return nil, err
	}
	var out []teamconfig.Resource
	for _, e := range list {
		doc, err := e.Doc.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: string(e.Doc.ID.Value), Name: evaluationName(e.Doc, e.Type), Doc: doc})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the body of CreateAiEvaluation with an id.
func (EvaluationsConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, rest, err := preparedID(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.AiEvaluationInput
	if err := teamconfig.DecodeBody(oas.CreateAiEvaluationOperation, rest, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	e := evaluation{Doc: oas.AiEvaluation{
		ID: oas.NewOptAiUuid(oas.AiUuid(id)), Application: in.Application, Subsystem: in.Subsystem, Config: in.Config,
		Target: in.Target, Threshold: in.Threshold, IsEnabled: oas.NewOptBool(in.IsEnabled.Or(false)),
	}}
	if e.Type, err = checkEvaluation(&e.Doc); err != nil {
		return teamconfig.Resource{}, err
	}
	encoded, err := e.Doc.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: evaluationName(e.Doc, e.Type), Doc: encoded, Value: e}, err
}

// Put implements teamconfig.Area: the MaxEvaluations bound holds; an update keeps createdBy.
func (EvaluationsConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	e := r.Value.(evaluation)
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	if !exists {
		if err := roomFor(ctx, tx, teamID, evaluationsBound); err != nil {
			return err
		}
	}
	return putEvaluation(ctx, tx, teamID, e, exists)
}

// Delete implements teamconfig.Area.
func (EvaluationsConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteEvaluation(ctx, tx, teamID, id)
}

// CustomConfiguration is the custom evaluations' part of the document: each as
// ListAiCustomEvaluations answers it, with the ids of the applications it is linked to (each an
// application of the team once the document's applications are stored: 400 otherwise).
type CustomConfiguration struct{}

// Key implements teamconfig.Area.
func (CustomConfiguration) Key() string { return "aiCustomEvaluations" }

// Permissions implements teamconfig.Area: those of ListAiCustomEvaluations and
// CreateAiCustomEvaluation.
func (CustomConfiguration) Permissions() (read, write string) {
	return "ai-app-evaluators:Read", "ai-app-evaluators:Manage"
}

// Export implements teamconfig.Area.
func (CustomConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	list, err := listCustom(ctx, q, teamID, "")
	if err != nil {
		return nil, err
	}
	var out []teamconfig.Resource
	for _, c := range list {
		doc, err := c.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: string(c.ID.Value), Name: c.Name.Or(""), Doc: doc})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the custom evaluation as ListAiCustomEvaluations answers
// it, read as the body of CreateAiCustomEvaluation (the fields of config at the top) with an id.
func (CustomConfiguration) Prepare(_ context.Context, doc []byte, newID func() string) (teamconfig.Resource, error) {
	id, rest, err := preparedID(doc, newID)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	if rest, err = withConfigAtTop(rest); err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.AiCustomEvaluationInput
	if err := teamconfig.DecodeBody(oas.CreateAiCustomEvaluationOperation, rest, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	c := oas.AiCustomEvaluation{ID: oas.NewOptAiUuid(oas.AiUuid(id)), Name: in.Name, Description: in.Description,
		Config: oas.NewOptAiCustomEvaluationSettings(oas.AiCustomEvaluationSettings{
			PolicyType: in.PolicyType, Instructions: in.Instructions, Examples: in.Examples, Safe: in.Safe,
			Violates: in.Violates, ShouldIncludeSystemPrompt: in.ShouldIncludeSystemPrompt,
		})}
	if err := checkCustom(&c); err != nil {
		return teamconfig.Resource{}, err
	}
	c.ApplicationIds = []oas.AiUuid{}
	for _, a := range in.ApplicationIds {
		a = oas.AiUuid(strings.ToLower(string(a)))
		if !slices.Contains(c.ApplicationIds, a) {
			c.ApplicationIds = append(c.ApplicationIds, a)
		}
	}
	slices.Sort(c.ApplicationIds)
	encoded, err := c.MarshalJSON()
	return teamconfig.Resource{ID: id, Name: c.Name.Or(""), Doc: encoded, Value: c}, err
}

// Put implements teamconfig.Area: the MaxCustomEvaluations bound holds and the links name
// applications of the team.
func (CustomConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	c := r.Value.(oas.AiCustomEvaluation)
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	links, err := linkable(ctx, tx, teamID, c.ApplicationIds)
	if err != nil {
		return err
	}
	if !exists {
		if err := roomFor(ctx, tx, teamID, customBound); err != nil {
			return err
		}
	}
	if err := putCustom(ctx, tx, teamID, c, exists); err != nil {
		return err
	}
	return setLinks(ctx, tx, teamID, string(c.ID.Value), links)
}

// Delete implements teamconfig.Area.
func (CustomConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return deleteCustom(ctx, tx, teamID, id)
}

// withConfigAtTop returns the custom evaluation doc with the fields of its config object moved
// to the top level, where the create body has them.
//
// Errors: Invalid naming config when it is not an object or repeats a top-level field.
func withConfigAtTop(doc []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return nil, apierror.Invalidf("a custom evaluation must be an object")
	}
	raw, ok := fields["config"]
	if !ok {
		return doc, nil
	}
	delete(fields, "config")
	var config map[string]json.RawMessage
	if err := json.Unmarshal(raw, &config); err != nil {
		return nil, apierror.Invalidf("config: must be an object (policyType, instructions, examples, safe, violates, shouldIncludeSystemPrompt)")
	}
	for k, v := range config {
		if _, dup := fields[k]; dup {
			return nil, apierror.Invalidf("config.%s: given twice, in config and beside it", k)
		}
		fields[k] = v
	}
	return json.Marshal(fields)
}
