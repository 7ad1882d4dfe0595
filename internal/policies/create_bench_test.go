package policies_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/policies"
)

// BenchmarkCreatePolicy measures E8 on SQLite from 64 concurrent callers (as cmd/mgmtload's
// create-policy scenario), through the handler without HTTP, into a team that already holds
// `held` log policies: the cost of a create must not grow with the team. Each create carries an
// audit entry, as the API layer gives every mutation, so it writes its audit record. For a profile:
//
//	go test -run '^$' -bench CreatePolicy -cpuprofile cpu.out ./internal/policies/
func BenchmarkCreatePolicy(b *testing.B) {
	for _, held := range []int{0, 5000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			env := apitest.Start(b, apitest.Options{}, db.SQLite)
			teamID, _ := env.MustTeam(b, "bench")
			h := policies.NewHandler(env.DB, 1_000_000_000)
			ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: teamID})
			ctx = db.WithAudit(ctx, &db.AuditEntry{TeamID: teamID, KeyID: "bench-key", KeyName: "bench",
				Operation: "CreatePolicy", RequestID: "bench", Client: "127.0.0.1", Status: 200})
			request := func(name string) *oas.PolicyCreateInput {
				var req oas.PolicyCreateInput
				if err := req.UnmarshalJSON([]byte(logBody(name, ""))); err != nil {
					b.Fatal(err)
				}
				return &req
			}
			for i := range held {
				if _, err := h.CreatePolicy(ctx, request(fmt.Sprint("held ", i))); err != nil {
					b.Fatal(err)
				}
			}
			req := request("bench")
			b.SetParallelism(32) // 64 callers on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := h.CreatePolicy(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
