// Package service builds the running service in one place: the API (every area's handler and the
// wiring between areas, package api) behind the root handler (package server), and the delivery
// worker with what it sends through, the routing of the events write transactions record into
// the teams' connectors and the outgoing webhooks' own delivery. The server process
// (cmd/mgmtapi) and the test harness (internal/apitest) both build it with New, so that what the
// tests run is what the process serves.
package service

import (
	"log/slog"

	"github.com/mgmtapi/mgmtapi/internal/alertdefs"
	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/notifiers"
	"github.com/mgmtapi/mgmtapi/internal/routers"
	"github.com/mgmtapi/mgmtapi/internal/server"
)

// Config is what the service needs from the process that runs it.
type Config struct {
	// API configures the API (api.New). Its Delivery governs every send: the test notifications
	// of the operations, and the worker's deliveries when Worker is set (the worker's DB, Logger,
	// Webhooks and Router are set here).
	API api.Options
	// Root configures the root handler; its API, WriteError, Ready and DBStats are set here, and
	// the worker's metrics are added to its Collectors.
	Root server.Options
	// Worker, when true, builds the delivery worker over API.Delivery (Run starts it).
	Worker bool
}

// Service is the built service.
type Service struct {
	// API serves the operations (it is also behind Handler).
	API *api.API
	// Handler is the process's root handler.
	Handler *server.Handler
	// Worker is the delivery worker; nil unless Config.Worker.
	Worker *delivery.Worker
}

// New builds the service. It fails as api.New does: when the OpenAPI document names a permission
// the catalog lacks, or when a built-in catalog does not load.
func New(cfg Config) (*Service, error) {
	a, err := api.New(cfg.API)
	if err != nil {
		return nil, err
	}
	s := &Service{API: a}
	root := cfg.Root
	if cfg.Worker {
		o := cfg.API.Delivery
		o.DB, o.Logger = cfg.API.DB, root.Logger
		if o.Serving == nil {
			// the worker's templates are paced while the root handler (made below, before
			// the worker runs) answers requests
			o.Serving = func() bool { return s.Handler.Serving() }
		}
		s.Worker = NewWorker(o, cfg.API.ExternalURL)
		root.Collectors = append(root.Collectors, s.Worker.Collectors()...)
	}
	root.API = a
	root.WriteError = api.WriteError
	root.Ready = cfg.API.DB.Ready
	root.DBStats = cfg.API.DB.Stats
	s.Handler = server.New(root)
	return s, nil
}

// NewWorker returns a delivery worker wired as the service wires its own: outgoing webhooks'
// records sent by their types' own delivery (notifiers.DeliverRecord) and the recorded events
// routed through the teams' routers and alert definitions (EventRouter, links on externalURL),
// unless o sets them.
func NewWorker(o delivery.Options, externalURL string) *delivery.Worker {
	if o.Webhooks == nil {
		o.Webhooks = notifiers.DeliverRecord
	}
	if o.Router == nil {
		o.Router = EventRouter(o.Logger, externalURL)
	}
	return delivery.NewWorker(o)
}

// EventRouter routes the events that incidents' and cases' write transactions record to the
// teams' connectors, outside those transactions, through their routers and alert definitions;
// it logs to logger (nil discards) and links to externalURL.
func EventRouter(logger *slog.Logger, externalURL string) routers.Router {
	return routers.Router{Logger: logger,
		Definitions: routers.Definitions{TeamHasAny: alertdefs.TeamHasAny, OfAlert: alertdefs.OfAlert},
		ExternalURL: externalURL}
}
