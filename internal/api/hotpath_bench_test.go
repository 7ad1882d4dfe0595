package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/service"
)

// BenchmarkGetByID serves GET one recording-rule set by id through the whole stack in process
// (root middleware with its metrics and, in the access-log-all case, its INFO log line, the API, authentication from the key cache,
// the database read and the JSON answer), next to a bare net/http handler that decodes and
// encodes the same JSON from a map. Both run in the same process and round, so their ratio is
// what to compare on a shared machine, not the absolute ns/op. The request is served through
// httptest.ResponseRecorder: no socket, only our code. cpu-ns/op, the process's CPU time per
// request, is the steadier figure when other work shares the machine.
//
//	go test -run '^$' -bench GetByID -benchmem ./internal/api/
func BenchmarkGetByID(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	for _, engine := range engines {
		b.Run(string(engine), func(b *testing.B) {
			env := apitest.Start(b, apitest.Options{}, engine)
			res := env.JSON(b, http.MethodPost, "/mgmt/openapi/5/recording-rules/recording-rules/v1", env.RootKey,
				`{"name":"bench","groups":[{"name":"g","interval":60,"rules":[{"record":"r","expr":"sum(up)","labels":{"a":"b"}}]}]}`)
			if res.Status != http.StatusOK {
				b.Fatalf("create: %d %s", res.Status, res.Body)
			}
			created := apitest.Decode[struct{ ID string }](b, res)
			path := "/mgmt/openapi/5/recording-rules/recording-rules/v1/" + created.ID
			handler := wholeStack(b, env.DB, server.AccessLogErrors)
			b.Run("mgmtapi", func(b *testing.B) {
				serveGet(b, handler, path, env.RootKey)
			})
			b.Run("mgmtapi-access-log-all", func(b *testing.B) {
				serveGet(b, wholeStack(b, env.DB, server.AccessLogAll), path, env.RootKey)
			})
			b.Run("bare", func(b *testing.B) {
				var stored map[string]any
				if err := json.Unmarshal(getBody(b, handler, path, env.RootKey), &stored); err != nil {
					b.Fatal(err)
				}
				raw, _ := json.Marshal(stored)
				serveGet(b, bareHandler(raw), path, env.RootKey)
			})
		})
	}
}

// BenchmarkGetByIDConcurrent is BenchmarkGetByID's mgmtapi case with 64 requests in flight, as
// cmd/mgmtload drives it: what one request costs changes with concurrency (SQLite's fcntl calls
// for the WAL read lock are made only when no other read of the process holds it; the pools'
// locks are contended), so the single-request figure alone misleads.
//
//	go test -run '^$' -bench GetByIDConcurrent -benchmem ./internal/api/
func BenchmarkGetByIDConcurrent(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	for _, engine := range engines {
		b.Run(string(engine), func(b *testing.B) {
			env := apitest.Start(b, apitest.Options{}, engine)
			res := env.JSON(b, http.MethodPost, "/mgmt/openapi/5/recording-rules/recording-rules/v1", env.RootKey,
				`{"name":"bench","groups":[{"name":"g","interval":60,"rules":[{"record":"r","expr":"sum(up)","labels":{"a":"b"}}]}]}`)
			if res.Status != http.StatusOK {
				b.Fatalf("create: %d %s", res.Status, res.Body)
			}
			created := apitest.Decode[struct{ ID string }](b, res)
			path := "/mgmt/openapi/5/recording-rules/recording-rules/v1/" + created.ID
			handler := wholeStack(b, env.DB, server.AccessLogErrors)
			getBody(b, handler, path, env.RootKey) // fills the key cache
			b.SetParallelism(64 / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			cpuBefore := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer "+env.RootKey)
				w := &statusOnlyWriter{header: http.Header{}}
				for pb.Next() {
					clear(w.header)
					w.status = 0
					handler.ServeHTTP(w, req)
					if w.status != http.StatusOK {
						b.Errorf("GET %s: %d", path, w.status)
						return
					}
				}
			})
			b.ReportMetric(float64(processCPU()-cpuBefore)/float64(b.N), "cpu-ns/op")
		})
	}
}

// wholeStack builds the root handler as the server process does, logging as text at INFO to
// io.Discard (the formatting cost is paid; the write is not).
func wholeStack(b *testing.B, database *db.DB, accessLog server.AccessLog) http.Handler {
	b.Helper()
	return wholeStackWith(b, api.Options{DB: database, Authn: auth.NewAuthenticator(database, nil), OperatorKey: apitest.OperatorKey}, accessLog)
}

// wholeStackWith is wholeStack over an API built with opts, by the constructor the server
// process uses (service.New).
func wholeStackWith(b *testing.B, opts api.Options, accessLog server.AccessLog) http.Handler {
	b.Helper()
	yamlDoc, jsonDoc, err := spec.Documents("http://bench", "bench")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := service.New(service.Config{API: opts,
		Root: server.Options{
			OpenAPIJSON:  jsonDoc,
			OpenAPIYAML:  yamlDoc,
			MaxBodyBytes: 16 << 20,
			Logger:       slog.New(server.LogHandler(slog.NewTextHandler(io.Discard, nil))),
			AccessLog:    accessLog,
		}})
	if err != nil {
		b.Fatal(err)
	}
	return svc.Handler
}

// bareHandler answers every request with stored decoded into a map and encoded again, the least
// any JSON server does.
func bareHandler(stored []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.Unmarshal(stored, &m); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(m)
	})
}

func getBody(b *testing.B, handler http.Handler, path, key string) []byte {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// serveGet serves the same request b.N times into a writer that keeps only the status, so that
// what is measured is the handler, not the test's request and recorder.
func serveGet(b *testing.B, handler http.Handler, path, key string) {
	getBody(b, handler, path, key) // fills the key cache
	// A served request's context can be canceled (the client may go away), and what a database
	// driver does for such a context (a goroutine watching it, per query) is part of the cost.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	w := &statusOnlyWriter{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	cpuBefore := processCPU()
	for i := 0; i < b.N; i++ {
		clear(w.header)
		w.status = 0
		handler.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("GET %s: %d", path, w.status)
		}
	}
	b.ReportMetric(float64(processCPU()-cpuBefore)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time (user and system) the process has used: on a machine shared
// with other work, CPU per request varies much less than wall time per request.
func processCPU() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

type statusOnlyWriter struct {
	header http.Header
	status int
}

func (w *statusOnlyWriter) Header() http.Header { return w.header }

func (w *statusOnlyWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *statusOnlyWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}
