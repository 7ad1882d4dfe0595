// Package api assembles the HTTP API: the generated router and decoder (internal/oas), the area
// handlers behind it, the security handler that authenticates keys and checks each operation's
// permission, and the single exit through which every failure becomes a {code, message} answer.
package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/access"
	"github.com/mgmtapi/mgmtapi/internal/actions"
	"github.com/mgmtapi/mgmtapi/internal/ai"
	"github.com/mgmtapi/mgmtapi/internal/alertdefs"
	"github.com/mgmtapi/mgmtapi/internal/alertevents"
	"github.com/mgmtapi/mgmtapi/internal/alertschedules"
	"github.com/mgmtapi/mgmtapi/internal/apikeys"
	"github.com/mgmtapi/mgmtapi/internal/archive"
	"github.com/mgmtapi/mgmtapi/internal/audit"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/connectors"
	"github.com/mgmtapi/mgmtapi/internal/dashboards"
	"github.com/mgmtapi/mgmtapi/internal/datausage"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/e2m"
	"github.com/mgmtapi/mgmtapi/internal/enrichments"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/ingest"
	"github.com/mgmtapi/mgmtapi/internal/integrations"
	"github.com/mgmtapi/mgmtapi/internal/ipaccess"
	"github.com/mgmtapi/mgmtapi/internal/notifytesting"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
	"github.com/mgmtapi/mgmtapi/internal/parsingrules"
	"github.com/mgmtapi/mgmtapi/internal/policies"
	"github.com/mgmtapi/mgmtapi/internal/presets"
	"github.com/mgmtapi/mgmtapi/internal/promrules"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
	"github.com/mgmtapi/mgmtapi/internal/quotarules"
	"github.com/mgmtapi/mgmtapi/internal/recordingrules"
	"github.com/mgmtapi/mgmtapi/internal/retentions"
	"github.com/mgmtapi/mgmtapi/internal/roles"
	"github.com/mgmtapi/mgmtapi/internal/routers"
	"github.com/mgmtapi/mgmtapi/internal/samlconfig"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/slos"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
	"github.com/mgmtapi/mgmtapi/internal/teams"
	"github.com/mgmtapi/mgmtapi/internal/views"
)

// Options are what the API needs from the process that runs it.
type Options struct {
	DB    *db.DB
	Authn *auth.Authenticator
	// OperatorKey enables /admin/v1 when not empty.
	OperatorKey string
	// PolicyLimit is the most data-plan policies a team may hold per data type (200 when 0).
	PolicyLimit int
	// Extensions is the extension catalog; nil means the built-in catalog only.
	Extensions *extensions.Catalog
	// Integrations is the integration definition catalog; nil means the built-in catalog only.
	Integrations *integrations.Catalog
	// Delivery's Policy, AttemptTimeout and ResponseLimit govern the test notifications the
	// notification-center testing and outgoing webhook operations send (the zero value: public addresses only, 10 s).
	// The SAML identity provider's metadata URL is fetched through the same policy.
	Delivery delivery.Options
	// ExternalURL is the base URL clients use (--external-url, or the one derived from the listen
	// address): the SAML service provider's URLs are under it.
	ExternalURL string
	// IPAccess enforces the teams' IP access settings; nil makes one over DB that reads the
	// client's address with server.ClientAddr.
	IPAccess *ipaccess.Guard
	// S3 is where the archive operations check buckets (--s3-endpoint and the AWS credentials).
	S3 archive.S3
}

// handler is every area's operations in one oas.Handler.
type handler struct {
	*apikeys.KeyHandler
	*recordingrules.RuleSetHandler
	*teams.OperatorHandler
	*cases.CaseHandler
	*incidents.IncidentHandler
	*ingest.AlertHandler
	*policies.PolicyHandler
	*quotarules.QuotaRuleHandler
	*datausage.UsageHandler
	*presets.PresetHandler
	*connectors.ConnectorHandler
	*routers.RouterHandler
	*alertschedules.SchedulerRuleHandler
	*parsingrules.RuleGroupHandler
	*retentions.RetentionHandler
	*roles.RoleHandler
	*views.ViewHandler
	*dashboards.DashboardHandler
	*extensions.ExtensionHandler
	*slos.SloHandler
	*e2m.E2MHandler
	*promrules.RuleFileHandler
	*audit.RecordHandler
	*delivery.ListHandler
	*notifytesting.TestingHandler
	*alertdefs.AlertDefHandler
	*alertevents.EventHandler
	*outgoingwebhooks.WebhookHandler
	*integrations.IntegrationHandler
	*access.AccessHandler
	*ai.Handler
	*ipaccess.SettingsHandler
	*samlconfig.ConfigurationHandler
	*enrichments.EnrichmentHandler
	*actions.ActionHandler
	*archive.ArchiveHandler
	// config exports and applies configuration documents (see teamconfig.go).
	config *teamconfig.Handler
	// wholeTeam bounds the whole-team documents built at once (see wholeteam.go).
	wholeTeam wholeTeamTurns
}

// NewError is the exit for errors returned by handlers and by the security handler.
func (handler) NewError(ctx context.Context, err error) *oas.ErrorStatusCode {
	nameOperation(ctx, err)
	return errorResponse(ctx, err)
}

// nameOperation names the request's operation from a router error that carries it: a request
// without the Authorization header fails its operation's security before the security handler,
// which names the others, is called.
func nameOperation(ctx context.Context, err error) {
	var op interface{ OperationName() string }
	if errors.As(err, &op) {
		server.SetOperation(ctx, op.OperationName())
	}
}

// API is the HTTP handler of every /mgmt/openapi, /config/v1 and /admin/v1 operation.
type API struct {
	router      *oas.Server
	operatorKey string
	// operations are the document's operations and their route table (operations.go).
	operations *operationTable
	// lists are the streamed lists served by serveStreamed, not by the router, by operationId
	// (see streamed.go).
	lists    map[string]streaming.List
	security *security
}

// New builds the API. It fails when the OpenAPI document names a permission the catalog lacks,
// or when opts.Extensions is nil and the built-in extension catalog does not load.
func New(opts Options) (*API, error) {
	table, err := operations()
	if err != nil {
		return nil, err
	}
	catalog := opts.Extensions
	if catalog == nil {
		if catalog, err = extensions.LoadCatalog(""); err != nil {
			return nil, err
		}
	}
	h := handler{
		KeyHandler:       apikeys.NewHandler(opts.DB, opts.Authn),
		RuleSetHandler:   recordingrules.NewHandler(opts.DB),
		OperatorHandler:  teams.NewHandler(opts.DB, opts.Authn),
		CaseHandler:      cases.NewHandler(opts.DB),
		IncidentHandler:  incidents.NewHandler(opts.DB),
		AlertHandler:     ingest.NewHandler(opts.DB),
		PolicyHandler:    policies.NewHandler(opts.DB, opts.PolicyLimit),
		QuotaRuleHandler: quotarules.NewHandler(opts.DB),
		UsageHandler:     datausage.NewHandler(opts.DB),
		PresetHandler:    presets.NewHandler(opts.DB, areaLinks.presetUsers...),
		ConnectorHandler: connectors.NewHandler(opts.DB, areaLinks.connectorIntegrations, areaLinks.connectorUsers...),
		RouterHandler:    routers.NewHandler(opts.DB, areaLinks.routerReleases...),
		RuleGroupHandler: parsingrules.NewHandler(opts.DB),
		RetentionHandler: retentions.NewHandler(opts.DB),
		RoleHandler:      roles.NewHandler(opts.DB, areaLinks.roleUsers...),
		ViewHandler:      views.NewHandler(opts.DB),
		DashboardHandler: dashboards.NewHandler(opts.DB),
		ExtensionHandler: extensions.NewHandler(opts.DB, catalog),
		SloHandler:       slos.NewHandler(opts.DB, areaLinks.sloUsers...),
		E2MHandler:       e2m.NewHandler(opts.DB),
		RuleFileHandler:  promrules.NewHandler(opts.DB),
		RecordHandler:    audit.NewHandler(opts.DB),
		ListHandler:      delivery.NewListHandler(opts.DB),
		TestingHandler:   notifytesting.NewHandler(opts.DB, delivery.NewSender(opts.Delivery)),
		AlertDefHandler:  alertdefs.NewHandler(opts.DB),
		EventHandler:     alertevents.NewHandler(opts.DB),
		wholeTeam:        newWholeTeamTurns(),
	}
	h.SchedulerRuleHandler = alertschedules.NewHandler(opts.DB)
	h.AccessHandler = access.NewHandler(opts.DB, opts.Authn)
	if opts.Authn != nil {
		opts.Authn.SetOwnerAccess(access.OwnerAccess(opts.DB.Now))
	}
	h.EnrichmentHandler = enrichments.NewHandler(opts.DB)
	h.WebhookHandler = outgoingwebhooks.NewHandler(opts.DB, delivery.NewSender(opts.Delivery), areaLinks.webhookUsers...)
	integrationCatalog := opts.Integrations
	if integrationCatalog == nil {
		if integrationCatalog, err = integrations.LoadCatalog(""); err != nil {
			return nil, err
		}
	}
	h.IntegrationHandler = integrations.NewHandler(opts.DB, integrationCatalog, delivery.NewSender(opts.Delivery), h.ExtensionHandler.ForIntegration)
	h.Handler = ai.NewHandler(opts.DB)
	if opts.IPAccess == nil {
		opts.IPAccess = ipaccess.NewGuard(opts.DB, server.ClientAddr)
	}
	h.SettingsHandler = ipaccess.NewHandler(opts.DB, opts.IPAccess)
	h.ConfigurationHandler = samlconfig.NewHandler(opts.DB, delivery.NewSender(opts.Delivery), opts.ExternalURL)
	h.ActionHandler = actions.NewHandler(opts.DB)
	h.ArchiveHandler = archive.NewHandler(opts.DB, opts.S3)
	h.config, err = teamconfig.NewHandler(opts.DB, describeResourceBody, configurationAreas(opts, catalog, integrationCatalog)...)
	if err != nil {
		return nil, err
	}
	sec := &security{authn: opts.Authn, operations: table, operatorKey: opts.OperatorKey, ipAccess: opts.IPAccess}
	router, err := oas.NewServer(h, sec,
		oas.WithErrorHandler(func(ctx context.Context, w http.ResponseWriter, r *http.Request, err error) {
			nameOperation(ctx, err)
			e := errorResponse(ctx, err)
			writeError(w, e.StatusCode, e.Response.Message)
		}),
		oas.WithNotFound(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "no operation at "+r.URL.Path)
		}),
		oas.WithMethodNotAllowed(func(w http.ResponseWriter, r *http.Request, allowed string) {
			w.Header().Set("Allow", allowed)
			writeError(w, http.StatusMethodNotAllowed,
				r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+allowed)
		}),
	)
	if err != nil {
		return nil, err
	}
	return &API{router: router, operatorKey: opts.OperatorKey, operations: table, lists: streamedLists(h), security: sec}, nil
}

// ServeHTTP routes the request to its operation. Without an operator key the /admin/v1 paths
// do not exist.
//
// The route table (versionpaths.go) is walked once: it gives the operation's record, its path
// parameters and, for another version segment or name, the document's path. Everything done here
// before the generated router serves the request reads the record, and the record travels on the
// request's context (requestEdge) to the security handler, the audit and the stream slots. The
// generated router then finds the route once more, to serve it: its generated code is not
// changed.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.operatorKey == "" && strings.HasPrefix(r.URL.Path, "/admin/") {
		writeError(w, http.StatusNotFound, "no operation at "+r.URL.Path)
		return
	}
	// Every segment and every other name of an operation goes to the path the router knows.
	m, path, rawPath, done := a.operations.routes.route(w, r)
	if done {
		return
	}
	op := m.op
	query, msg, status := checkText(r)
	if msg != "" {
		nameRequest(r.Context(), op)
		writeError(w, status, msg)
		return
	}
	hasBody := r.Body != nil && r.Body != http.NoBody
	if hasBody {
		if msg, status := checkCharset(r.Header.Get("Content-Type")); msg != "" {
			nameRequest(r.Context(), op)
			writeError(w, status, msg)
			return
		}
	}
	ctx := r.Context()
	if op == nil {
		// No operation (and so no other path): the router answers the request as it stands
		// (404, or its own 405).
		if query != nil {
			r = r.WithContext(queryobject.WithValues(ctx, query))
		}
		if isConfigPath(r.URL.Path) {
			w, r = withConfigRequest(w, r)
		}
		a.router.ServeHTTP(w, r)
		return
	}
	edge := &requestEdge{op: op, refusal: checkIntegerArgs(op, m.args.values[:m.args.n])}
	if op.stream == streamedHere && r.Method == http.MethodGet {
		a.serveStreamed(w, r, op.id, a.lists[op.id])
		return
	}
	if hasBody {
		// The body is checked as the operation reads it (bodybounds.go).
		body := scanBody(op, r.Body)
		r.Body = watchUnknownFields(ctx, op.id, body)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		ctx = db.WithAudit(ctx, newAuditEntry(r, op, m.args.values[:m.args.n]))
	}
	if op.stream == streamedThroughRouter {
		edge.slot = streamSlot{ResponseWriter: w, operation: op.id}
		edge.slotted = true
		w = &edge.slot
	}
	if query != nil {
		// Object query parameters (the incident aggregation's, among others) are read by their
		// operation.
		ctx = queryobject.WithValues(ctx, query)
	}
	r = r.WithContext(context.WithValue(ctx, requestEdgeKey{}, edge))
	if path != "" {
		setPath(r, path, rawPath)
	}
	if query != nil && len(op.queryObjects) > 0 {
		// The generated decoder must not read them (see queryobjects.go).
		if kept := withoutQueryObjects(r.URL.RawQuery, op.queryObjects); kept != r.URL.RawQuery {
			u := *r.URL
			u.RawQuery = kept
			r.URL = &u
		}
	}
	if isConfigPath(r.URL.Path) {
		w, r = withConfigRequest(w, r)
	}
	a.router.ServeHTTP(w, r)
}

// nameRequest names the request's operation, when it has one, for the metrics and the log line.
func nameRequest(ctx context.Context, op *operation) {
	if op != nil {
		server.SetOperation(ctx, op.id)
	}
}

// setPath points r, a request of the API's own, at the document's path.
func setPath(r *http.Request, path, rawPath string) {
	u := *r.URL
	u.Path, u.RawPath = path, rawPath
	r.URL = &u
}

// OperationName returns the operationId the request is routed to, or "" when none.
func (a *API) OperationName(r *http.Request) string {
	p, _ := requestPath(r)
	if op := a.operations.routes.match(r.Method, p).op; op != nil {
		return op.id
	}
	return ""
}
