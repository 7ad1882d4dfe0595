// Command mgmtapi serves the management API of an observability platform.
//
//	mgmtapi serve [flags]
//	mgmtapi backup --to FILE | restore --from FILE
//	mgmtapi healthcheck [--url BASE-URL]
//	mgmtapi keys create --team NAME|ID [--data-dir DIR | --database-url URL]
//	mgmtapi sync-rules --url URL --dir DIR [--reload-url URL] [--interval 30s]
//	mgmtapi export [--url URL] > team.yaml | apply -f team.yaml [--dry-run] [--prune]
//	mgmtapi version
//	mgmtapi help
//
// "mgmtapi help" lists every flag and variable; the README has the first steps.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/archive"
	"github.com/mgmtapi/mgmtapi/internal/audit"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/buildinfo"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/config"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/docspage"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
	"github.com/mgmtapi/mgmtapi/internal/integrations"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/service"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

func main() {
	healthcheckCommand(os.Args[1:])
	ctx, stop := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		// A second signal ends the process at once, as if no handler were installed.
		signal.Stop(signals)
		stop(stopSignal{sig})
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mgmtapi:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// stopSignal is the cause of the context that ends run when a signal arrived.
type stopSignal struct{ os.Signal }

func (s stopSignal) Error() string { return "received " + s.String() }

// terminated reports whether ctx ended because of SIGTERM, the orchestrator's stop, which gets
// the shutdown delay (an interactive Ctrl-C does not).
func terminated(ctx context.Context) bool {
	var s stopSignal
	return errors.As(context.Cause(ctx), &s) && s.Signal == syscall.SIGTERM
}

// usageError is a command line that names no known command; the process exits with status 2.
type usageError struct{ error }

// shutdownGrace is how long in-flight requests get to finish after the listener closes.
const shutdownGrace = 15 * time.Second

// run is the whole program. For serve, it serves until ctx ends, then shuts down gracefully (after
// the shutdown delay when ctx ended on SIGTERM). When ready is not nil it receives the listening
// address once the server accepts connections.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	if len(args) == 0 {
		config.Commands(stderr) // serve --help lists the flags
		return usageError{errors.New("no command given; the commands are serve, backup, restore, keys, export, apply, sync-rules, healthcheck, version and help")}
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr, ready)
	case "backup", "restore":
		return helpIsNoError(backupCommand(ctx, args, getenv, stdout, stderr))
	case "keys":
		return keysCommand(ctx, args[1:], getenv, stdout, stderr)
	case "sync-rules":
		return syncRulesCommand(ctx, args[1:], getenv, stdout, stderr)
	case "export":
		return helpIsNoError(export(ctx, args[1:], getenv, stdout, stderr))
	case "apply":
		return helpIsNoError(applyCommand(ctx, args[1:], getenv, stdout, stderr))
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, buildinfo.Read())
		return nil
	case "help", "--help", "-help", "-h":
		config.Usage(stdout)
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q; the commands are serve, backup, restore, keys, export, apply, sync-rules, healthcheck, version and help (run mgmtapi --help)", args[0])}
}

// helpIsNoError turns the flag package's answer to -h (the usage was printed) into success.
func helpIsNoError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- string) error {
	cfg, err := config.Parse(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		config.Usage(stdout)
		return nil
	}
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stdout)
	build := buildinfo.Read()
	logger.Info("starting", "version", build.Version, "revision", build.Revision, "config", cfg.String())

	// Read the extension catalog and the certificate before anything else starts, so that a bad
	// file stops the start.
	catalog, err := extensions.LoadCatalog(cfg.ExtensionsDir)
	if err != nil {
		return err
	}
	logger.Info("extension catalog loaded", "extensions", catalog.Len())
	integrationCatalog, err := integrations.LoadCatalog(cfg.IntegrationsDir)
	if err != nil {
		return err
	}
	logger.Info("integration catalog loaded", "definitions", integrationCatalog.Len())
	var tlsConfig *tls.Config
	if cfg.TLS() {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert-file %s and --tls-key-file %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
		tlsConfig = &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
			NextProtos:   []string{"h2", "http/1.1"},
		}
	}

	// Listen first, so that a taken port fails at once and :0 is known before anything else.
	listener, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer listener.Close()
	addr := listener.Addr().String()
	externalURL := cfg.ExternalURL
	if externalURL == "" {
		externalURL = config.DefaultExternalURL(addr, cfg.TLS())
	}

	// The OpenAPI documents served at /openapi.* take as long to build as the rest of the start:
	// they are built on the other core while the database opens.
	type documents struct {
		yaml, json []byte
		err        error
	}
	built := make(chan documents, 1)
	go func() {
		var d documents
		d.yaml, d.json, d.err = spec.Documents(externalURL, cfg.Region)
		built <- d
	}()

	database, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer database.Close()
	if cfg.DatabaseURL == "" && !cfg.SQLiteSharedFile {
		// the server holds the SQLite file alone: mgmtapi backup asks it for the copy
		stopBackupSocket, err := serveBackupSocket(cfg.DataDir, database, logger)
		if err != nil {
			logger.Warn("mgmtapi backup cannot copy the database while this server runs (stop it first, or run it with --sqlite-file-access shared)",
				"error", err.Error())
		} else {
			defer stopBackupSocket()
		}
	}

	boot, err := teams.Bootstrap(ctx, database, cfg.BootstrapKey)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if boot.Created && boot.Generated {
		fmt.Fprintf(stderr, "\nmgmtapi: created team %q with an API key holding every permission.\n"+
			"This is the only time the key is shown; keep it:\n\n    %s\n\n", teams.DefaultTeamName, boot.KeyValue)
	} else if boot.Created {
		logger.Info("created the default team with the key from MGMTAPI_BOOTSTRAP_KEY or its _FILE")
	}

	docs := <-built
	if docs.err != nil {
		return docs.err
	}
	svc, err := service.New(service.Config{API: api.Options{DB: database, Authn: auth.NewAuthenticator(database, nil),
		OperatorKey: cfg.OperatorKey, PolicyLimit: cfg.PolicyLimit, Extensions: catalog, Integrations: integrationCatalog,
		Delivery: delivery.Options{
			Policy:         delivery.Policy{AllowPrivate: cfg.NotifyAllowPrivate, AllowCIDRs: cfg.NotifyAllowCIDRs},
			AttemptTimeout: cfg.NotifyAttemptTimeout,
			MaxRetryTime:   cfg.NotifyRetryTime,
			PerConnector:   cfg.NotifyPerConnector,
			SMTP:           smtpServer(cfg.SMTP),
		},
		ExternalURL: externalURL,
		S3:          archive.S3FromEnv(cfg.S3Endpoint, getenv)},
		Root: server.Options{
			OpenAPIJSON:  docs.json,
			OpenAPIYAML:  docs.yaml,
			MaxBodyBytes: cfg.MaxBodyBytes,
			Logger:       logger,
			AccessLog:    server.AccessLog(cfg.AccessLog),
			Docs:         docspage.New(api.WriteError),

			MaxConcurrent:     cfg.MaxConcurrentRequests,
			QueueLength:       cfg.QueueLength,
			QueueWait:         cfg.QueueWait,
			ConcurrencyTarget: cfg.ConcurrencyTargetLatency,
			MinConcurrent:     cfg.MinConcurrentRequests,
			DecodeBudgetBytes: cfg.DecodeBudgetBytes,
			KeyRate:           cfg.KeyRateLimit,
			KeyBurst:          cfg.KeyRateBurst,
			TrustedProxies:    cfg.TrustedProxies,
		},
		Worker: cfg.NotifyWorker,
	})
	if err != nil {
		return err
	}
	handler, worker := svc.Handler, svc.Worker
	srv := &http.Server{
		Handler:           handler,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	maxConnections := cfg.MaxConnections
	if maxConnections == 0 {
		if maxConnections, err = server.DerivedMaxConnections(); err != nil {
			return err
		}
	}
	// At the cap the longest idle connection is closed, else a new one gets 503: the descriptor
	// limit is never reached by client connections, so the database and files always open.
	listener = handler.LimitConnections(listener, srv, maxConnections)
	listener = server.RefusalListener(listener, srv) // net/http's own 400/431/501/505 carry the Error body

	kpiCtx, stopKPIs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKPIs()
	// run waits for them before it returns (and the database closes): a KPI evaluation or an
	// audit prune still running then would write into a data directory already handed back.
	var background sync.WaitGroup
	background.Go(func() { evaluateKPIs(kpiCtx, database, cfg.KPIInterval, logger) })
	background.Go(func() { audit.KeepPruned(kpiCtx, database, cfg.AuditRetention, logger) })
	// The delivery worker stops after the server: deliveries the last requests enqueued are
	// claimed until then, and the ones in flight end within their attempt timeout.
	workerCtx, stopWorker := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorker()
	workerDone := make(chan struct{})
	if worker != nil {
		go func() {
			defer close(workerDone)
			worker.Run(workerCtx)
		}()
	} else {
		close(workerDone)
	}

	served := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			served <- srv.ServeTLS(listener, "", "")
			return
		}
		served <- srv.Serve(listener)
	}()
	logger.Info("listening", "addr", addr, "url", externalURL, "region", cfg.Region, "database", string(database.Engine),
		"max_connections", maxConnections)
	if ready != nil {
		ready <- addr
	}

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	handler.Drain()
	if terminated(ctx) && cfg.ShutdownDelay > 0 {
		logger.Info("draining: /readyz answers 503 and requests are still served until the delay ends",
			"delay", cfg.ShutdownDelay.String())
		select {
		case <-time.After(cfg.ShutdownDelay):
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		}
	}
	logger.Info("shutting down", "grace", shutdownGrace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("graceful shutdown did not finish; closing connections", "error", err.Error())
		_ = srv.Close()
	}
	stopKPIs()
	stopWorker()
	<-workerDone
	background.Wait()
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

// smtpServer is the SMTP server of the configuration for the deliveries; nil when there is none.
func smtpServer(s *config.SMTP) *delivery.SMTPServer {
	if s == nil {
		return nil
	}
	return &delivery.SMTPServer{Host: s.Host, Port: s.Port, ImplicitTLS: s.ImplicitTLS, RequireSTARTTLS: s.RequireSTARTTLS,
		Username: s.Username, Password: s.Password, From: s.From}
}
