package cases_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// BenchmarkCreateCaseComment measures E1 on SQLite from 64 concurrent callers spread over 16
// cases (as cmd/mgmtload's comment scenario), through the handler without HTTP, on cases that
// already hold `held` comments each: the cost of a comment must not grow with the history. For a
// profile:
//
//	go test -run '^$' -bench CreateCaseComment -cpuprofile cpu.out ./internal/cases/
func BenchmarkCreateCaseComment(b *testing.B) {
	for _, held := range []int{0, 2000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			benchComments(b, db.SQLite, 16, held)
		})
	}
}

// BenchmarkCommentsOnOnePostgresCase measures E1 on PostgreSQL from 64 concurrent callers all on
// one case (as cmd/mgmtload's comment-one-case scenario), through the handler without HTTP:
// every comment updates the same row, so the batches' single writer is the bound. It needs
// MGMTAPI_TEST_DATABASE_URL. For the writer's timeline:
//
//	go test -run '^$' -bench CommentsOnOnePostgresCase -trace trace.out ./internal/cases/
func BenchmarkCommentsOnOnePostgresCase(b *testing.B) {
	benchComments(b, db.Postgres, 1, 0)
}

// benchComments runs E1 from 64 callers over `spread` cases of one team that already hold `held`
// comments each.
func benchComments(b *testing.B, engine db.Engine, spread, held int) {
	env := apitest.Start(b, apitest.Options{}, engine)
	teamID, _ := env.MustTeam(b, "bench")
	handler := cases.NewHandler(env.DB)
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: teamID, KeyID: "k", KeyName: "bench"})
	var ids []oas.CaseIdentifier
	for i := range spread {
		ref, _, err := openCase(env.DB, cases.AlertGroup{TeamID: teamID, GroupKey: fmt.Sprint("g", i), Title: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, oas.CaseIdentifier(ref.ID))
	}
	req := &oas.CommentRequest{Text: "Rolled checkout back; the error rate is recovering."}
	for i := range held * len(ids) {
		if _, err := handler.CreateCaseComment(ctx, req, oas.CreateCaseCommentParams{CaseID: ids[i%len(ids)]}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetParallelism(32) // 64 callers on 2 CPUs
	b.ResetTimer()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := ids[next.Add(1)%int64(len(ids))]
			if _, err := handler.CreateCaseComment(ctx, req, oas.CreateCaseCommentParams{CaseID: id}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
