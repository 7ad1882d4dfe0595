package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/server"
)

// BenchmarkDurableWrites serves cmd/mgmtload's three durable creates (an E1 comment spread over
// 16 cases, a recording-rule set, a log policy) through the whole stack in process, 64 requests
// in flight, on SQLite: the root middleware, the API with authentication from the key cache, the
// group-committed transaction with its audit record, the JSON answer. Every request has a body
// of its own, as the load command's do. It reports, per request, the process's CPU
// (cpu-ns/op: on a shared machine the steadier figure), the time the single SQLite writer was
// busy (writer-ns/op: when it is near ns/op, the writer's chain of turns and commits is the
// bound, and its throughput is 1 s ÷ that) and the transactions per commit. For a profile of
// one of them:
//
//	go test -run '^$' -bench 'DurableWrites/comment' -cpuprofile cpu.out -memprofile mem.out ./internal/api/
func BenchmarkDurableWrites(b *testing.B) {
	env := apitest.Start(b, apitest.Options{}, db.SQLite)
	teamID, key := env.MustTeam(b, "bench")
	var caseIDs []string
	for i := range 16 {
		var ref cases.CaseRef
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			var err error
			ref, _, err = cases.OpenForGroup(context.Background(), tx, cases.AlertGroup{TeamID: teamID, GroupKey: fmt.Sprint("bench-", i), Title: "bench"})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		caseIDs = append(caseIDs, ref.ID)
	}
	handler := wholeStackWith(b, api.Options{DB: env.DB, Authn: auth.NewAuthenticator(env.DB, nil),
		OperatorKey: apitest.OperatorKey, PolicyLimit: 1_000_000_000}, server.AccessLogErrors)
	scenarios := []struct {
		name    string
		request func(n int64) (path string, body []byte)
	}{
		{"comment", func(n int64) (string, []byte) {
			return "/mgmt/openapi/5/cases/cases/v1/" + caseIDs[n%int64(len(caseIDs))] + "/comments",
				fmt.Appendf(nil, `{"text":"Worker %d, comment %d: rolled checkout back; the error rate is recovering."}`, n%64, n)
		}},
		{"create-set", func(n int64) (string, []byte) {
			return "/mgmt/openapi/5/recording-rules/recording-rules/v1", fmt.Appendf(nil,
				`{"name":"load w%d #%d","groups":[{"name":"checkout-http","interval":60,"rules":[`+
					`{"record":"service:http_requests:rate5m","expr":"sum by (service) (rate(http_requests_total[5m]))","labels":{"team":"payments"}}]}]}`,
				n%64, n)
		}},
		{"create-policy", func(n int64) (string, []byte) {
			return "/mgmt/openapi/3/dataplans/policies/v1", fmt.Appendf(nil,
				`{"name":"load w%d #%d","description":"Debug lines of batch jobs are not kept.",`+
					`"priority":"PRIORITY_TYPE_LOW","applicationRule":{"name":"batch-","ruleTypeId":"RULE_TYPE_ID_START_WITH"},`+
					`"logRules":{"severities":["SEVERITY_DEBUG","SEVERITY_VERBOSE"]}}`, n%64, n)
		}},
	}
	var seq atomic.Int64
	for _, s := range scenarios {
		b.Run(s.name, func(b *testing.B) {
			serve := func(w *statusOnlyWriter) {
				path, body := s.request(seq.Add(1))
				req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				clear(w.header)
				w.status = 0
				handler.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Errorf("POST %s: %d", path, w.status)
				}
			}
			serve(&statusOnlyWriter{header: http.Header{}}) // fills the key cache, prepares the statements
			b.SetParallelism(64 / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			before := env.DB.GroupCommitStats()
			b.ResetTimer()
			cpuBefore := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				w := &statusOnlyWriter{header: http.Header{}}
				for pb.Next() {
					serve(w)
				}
			})
			cpu := processCPU() - cpuBefore
			b.StopTimer()
			after := env.DB.GroupCommitStats()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(after.Busy-before.Busy)/float64(b.N), "writer-ns/op")
			if commits := after.Commits - before.Commits; commits > 0 {
				b.ReportMetric(float64(after.Transactions-before.Transactions)/float64(commits), "tx/commit")
			}
		})
	}
}
