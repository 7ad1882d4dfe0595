package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/ogen-go/ogen/validate"

	"github.com/mgmtapi/mgmtapi/internal/access"
	"github.com/mgmtapi/mgmtapi/internal/actions"
	"github.com/mgmtapi/mgmtapi/internal/ai"
	"github.com/mgmtapi/mgmtapi/internal/alertdefs"
	"github.com/mgmtapi/mgmtapi/internal/alertschedules"
	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/archive"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/dashboards"
	"github.com/mgmtapi/mgmtapi/internal/e2m"
	"github.com/mgmtapi/mgmtapi/internal/enrichments"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
	"github.com/mgmtapi/mgmtapi/internal/integrations"
	"github.com/mgmtapi/mgmtapi/internal/ipaccess"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
	"github.com/mgmtapi/mgmtapi/internal/parsingrules"
	"github.com/mgmtapi/mgmtapi/internal/policies"
	"github.com/mgmtapi/mgmtapi/internal/presets"
	"github.com/mgmtapi/mgmtapi/internal/quotarules"
	"github.com/mgmtapi/mgmtapi/internal/recordingrules"
	"github.com/mgmtapi/mgmtapi/internal/retentions"
	"github.com/mgmtapi/mgmtapi/internal/roles"
	"github.com/mgmtapi/mgmtapi/internal/routers"
	"github.com/mgmtapi/mgmtapi/internal/slos"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
	"github.com/mgmtapi/mgmtapi/internal/views"
)

// The configuration document (package teamconfig) is answered and read as text, YAML or JSON,
// not through the generated encoder and decoder: the generated JSON encoder writes the keys of a
// resource in random order, and the YAML bodies are opaque to it. API.ServeHTTP hands the
// operations what they need from the request in the context.

type configRequestKey struct{}

// configRequest is what the configuration operations read from the request itself.
type configRequest struct {
	acceptJSON bool   // the Accept header asks for application/json
	body       []byte // the request body as sent
	w          http.ResponseWriter
	answered   bool
}

// isConfigPath reports whether path is one of the configuration document operations.
func isConfigPath(path string) bool {
	return path == "/config/v1/export" || path == "/config/v1/apply"
}

// withConfigRequest prepares a request for a configuration operation: the generated server is
// to write to the returned writer and read the returned request.
func withConfigRequest(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	cr := &configRequest{acceptJSON: acceptsJSONOnly(r.Header.Values("Accept"))}
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err == nil {
			cr.body = body
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	slot := &configSlot{ResponseWriter: w, req: cr}
	cr.w = w
	return slot, r.WithContext(context.WithValue(r.Context(), configRequestKey{}, cr))
}

// configSlot discards what the generated server writes once the operation has answered itself.
type configSlot struct {
	http.ResponseWriter
	req *configRequest
}

func (s *configSlot) WriteHeader(code int) {
	if !s.req.answered {
		s.ResponseWriter.WriteHeader(code)
	}
}

func (s *configSlot) Write(p []byte) (int, error) {
	if s.req.answered {
		return len(p), nil
	}
	return s.ResponseWriter.Write(p)
}

// acceptsJSONOnly reports whether the Accept header names application/json (or +json) and not
// YAML: YAML is the default.
func acceptsJSONOnly(values []string) bool {
	json := false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch {
			case mt == "application/json" || strings.HasSuffix(mt, "+json"):
				json = true
			case strings.Contains(mt, "yaml"):
				return false
			}
		}
	}
	return json
}

// ExportTeamConfiguration answers the team's configuration document (package teamconfig), one of
// wholeTeamSlots at a time.
func (h handler) ExportTeamConfiguration(ctx context.Context) (oas.ExportTeamConfigurationRes, error) {
	cr, _ := ctx.Value(configRequestKey{}).(*configRequest)
	asJSON := cr != nil && cr.acceptJSON
	done, err := h.wholeTeam.wait(ctx)
	if err != nil {
		return nil, err
	}
	doc, err := h.config.ExportDocument(ctx, asJSON)
	done()
	if err != nil {
		return nil, err
	}
	if !asJSON {
		return &oas.ExportTeamConfigurationOKApplicationYaml{Data: bytes.NewReader(doc)}, nil
	}
	if cr == nil { // called without API.ServeHTTP (tests): through the generated types
		var typed oas.TeamConfiguration
		if err := typed.UnmarshalJSON(doc); err != nil {
			return nil, err
		}
		return &typed, nil
	}
	cr.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	cr.w.WriteHeader(http.StatusOK)
	_, _ = cr.w.Write(doc)
	cr.answered = true
	return nil, errAnsweredByStream
}

// ApplyTeamConfiguration applies a configuration document (package teamconfig) as sent, YAML or
// JSON, one of wholeTeamSlots at a time.
func (h handler) ApplyTeamConfiguration(ctx context.Context, req oas.ApplyTeamConfigurationReq,
	params oas.ApplyTeamConfigurationParams) (*oas.ConfigurationPlan, error) {
	var body []byte
	if cr, ok := ctx.Value(configRequestKey{}).(*configRequest); ok {
		body = cr.body
	} else { // called without API.ServeHTTP (tests)
		var err error
		switch r := req.(type) {
		case *oas.TeamConfiguration:
			body, err = r.MarshalJSON()
		case *oas.ApplyTeamConfigurationReqApplicationYaml:
			body, err = io.ReadAll(r.Data)
		}
		if err != nil {
			return nil, err
		}
	}
	done, err := h.wholeTeam.wait(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return h.config.ApplyDocument(ctx, body, params.DryRun.Or(false), params.Prune.Or(false))
}

// describeResourceBody words why a resource of a configuration document was refused as its
// operation's body, as that operation would answer (teamconfig.DescribeBody).
func describeResourceBody(operation string, body []byte, err error) string {
	var v *validate.Error
	if errors.As(err, &v) {
		path, leaf := validationLeaf("", v)
		return describeLeaf(path, leaf, func() []string { return enumAt(operation, path) })
	}
	if e, ok := apierror.As(err); ok {
		return e.Message
	}
	return describeDecode(operation, body, err)
}

// configurationAreas are the areas of a team's configuration document, each implemented in its
// own package.
func configurationAreas(opts Options, catalog *extensions.Catalog, integrationCatalog *integrations.Catalog) []teamconfig.Area {
	return []teamconfig.Area{
		recordingrules.Configuration{},
		e2m.Configuration{},
		slos.Configuration{Users: areaLinks.sloUsers},
		parsingrules.Configuration{},
		presets.Configuration{Users: areaLinks.presetUsers},
		presets.DefaultsConfiguration{},
		outgoingwebhooks.Configuration{Users: areaLinks.webhookUsers},
		connectors.Configuration{Users: areaLinks.connectorUsers, Integrations: areaLinks.connectorIntegrations},
		routers.Configuration{Releases: areaLinks.routerReleases},
		policies.Configuration{Limit: opts.PolicyLimit},
		policies.SettingsConfiguration{},
		quotarules.Configuration{},
		retentions.Configuration{},
		retentions.EnabledConfiguration{},
		roles.Configuration{},
		views.FolderConfiguration{},
		views.Configuration{},
		dashboards.FolderConfiguration{},
		dashboards.Configuration{},
		dashboards.DefaultConfiguration{},
		dashboards.PinsConfiguration{},
		extensions.Configuration{Catalog: catalog},
		cases.SettingsConfiguration{},
		alertdefs.Configuration{},
		alertschedules.Configuration{},
		integrations.Configuration{Catalog: integrationCatalog},
		integrations.Configuration{Catalog: integrationCatalog, ContextualData: true},
		access.ScopeConfiguration{},
		access.GroupConfiguration{},
		ai.ApplicationsConfiguration{},
		ai.PricingConfiguration{},
		ai.EvaluationsConfiguration{},
		ai.CustomConfiguration{},
		ipaccess.Configuration{Guard: opts.IPAccess},
		enrichments.DataSetConfiguration{},
		enrichments.Configuration{},
		actions.Configuration{},
		archive.LogsConfiguration{S3: opts.S3},
		archive.MetricsConfiguration{S3: opts.S3},
	}
}
