// Command mgmtapi serves the management API of an observability platform.
//
//	mgmtapi serve [flags]
//
// See the README for the flags, the variables and the first steps.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/config"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/docspage"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "mgmtapi:", err)
		}
		os.Exit(1)
	}
}

const usage = `usage: mgmtapi serve [flags]

Run "mgmtapi serve -h" for the flags.
`

// shutdownGrace is how long in-flight requests get to finish after a stop signal.
const shutdownGrace = 15 * time.Second

// run is the whole program: it serves until ctx ends, then shuts down gracefully. When ready is
// not nil it receives the listening address once the server accepts connections.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	if len(args) > 0 && (args[0] == "backup" || args[0] == "restore") {
		return backupCommand(ctx, args, getenv, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprint(stderr, usage)
		return errors.New("the only command is serve")
	}
	cfg, err := config.Parse(args[1:], getenv, stderr)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stdout)
	logger.Info("starting", "config", cfg.String())

	// Read the extension catalog before anything else starts, so that a bad file stops the start.
	catalog, err := extensions.LoadCatalog(cfg.ExtensionsDir)
	if err != nil {
		return err
	}
	logger.Info("extension catalog loaded", "extensions", catalog.Len())

	// Listen first, so that a taken port fails at once and :0 is known before anything else.
	listener, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer listener.Close()
	addr := listener.Addr().String()

	// The OpenAPI documents served at /openapi.* take as long to build as the rest of the start:
	// they are built on the other core while the database opens.
	type documents struct {
		yaml, json []byte
		err        error
	}
	built := make(chan documents, 1)
	go func() {
		var d documents
		d.yaml, d.json, d.err = spec.Documents("http://"+addr, cfg.Region)
		built <- d
	}()

	database, err := db.Open(ctx, db.Options{URL: cfg.DatabaseURL, DataDir: cfg.DataDir})
	if err != nil {
		return err
	}
	defer database.Close()

	boot, err := teams.Bootstrap(ctx, database, cfg.BootstrapKey)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if boot.Created && boot.Generated {
		fmt.Fprintf(stderr, "\nmgmtapi: created team %q with an API key holding every permission.\n"+
			"This is the only time the key is shown; keep it:\n\n    %s\n\n", teams.DefaultTeamName, boot.KeyValue)
	} else if boot.Created {
		logger.Info("created the default team with the key from MGMTAPI_BOOTSTRAP_KEY")
	}

	authn := auth.NewAuthenticator(database, nil)
	apiHandler, err := api.New(api.Options{DB: database, Authn: authn, OperatorKey: cfg.OperatorKey, PolicyLimit: cfg.PolicyLimit,
		Extensions: catalog})
	if err != nil {
		return err
	}
	docs := <-built
	if docs.err != nil {
		return docs.err
	}
	srv := &http.Server{
		Handler: server.New(server.Options{
			API:          apiHandler,
			WriteError:   api.WriteError,
			Ready:        database.Ping,
			DBStats:      database.Stats,
			OpenAPIJSON:  docs.json,
			OpenAPIYAML:  docs.yaml,
			MaxBodyBytes: cfg.MaxBodyBytes,
			Logger:       logger,
			AccessLog:    server.AccessLog(cfg.AccessLog),
			Docs:         docspage.New(api.WriteError),
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	kpiCtx, stopKPIs := context.WithCancel(ctx)
	defer stopKPIs()
	go evaluateKPIs(kpiCtx, database, cfg.KPIInterval, logger)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()
	logger.Info("listening", "addr", addr, "region", cfg.Region, "database", string(database.Engine))
	if ready != nil {
		ready <- addr
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", shutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("graceful shutdown did not finish; closing connections", "error", err.Error())
		_ = srv.Close()
	}
	logger.Info("stopped")
	return nil
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	logger := slog.New(server.LogHandler(h))
	slog.SetDefault(logger)
	return logger
}

// evaluateKPIs records the case KPI breaches every interval until ctx ends. A failed round is
// logged and the next one tries again; breaches are recorded once however many replicas run this.
func evaluateKPIs(ctx context.Context, database *db.DB, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		n, err := cases.EvaluateKPIs(ctx, database)
		if err != nil && ctx.Err() == nil {
			logger.Warn("case KPI evaluation failed", "error", err.Error())
			continue
		}
		if n > 0 {
			logger.Info("case KPI breaches recorded", "count", n)
		}
	}
}
