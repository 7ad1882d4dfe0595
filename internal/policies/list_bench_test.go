package policies_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/policies"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// BenchmarkStreamPolicies measures one streamed policy list (as cmd/mgmtload's list-policies
// scenario asks it: enabled log policies) of a team holding 1,000 log policies, on SQLite,
// without HTTP: the answer goes to a writer that discards it. allocs/op and B/op are per list;
// allocs/policy divides them by the policies listed. For a profile:
//
//	go test -run '^$' -bench StreamPolicies -benchmem -memprofile mem.out ./internal/policies/
func BenchmarkStreamPolicies(b *testing.B) {
	const held = 1000
	env := apitest.Start(b, apitest.Options{}, db.SQLite)
	teamID, _ := env.MustTeam(b, "bench")
	h := policies.NewHandler(env.DB, 1_000_000_000)
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: teamID})
	for i := range held {
		var req oas.PolicyCreateInput
		body := fmt.Sprintf(`{"name":"load policy %d","description":"Debug lines of batch jobs are not kept.",`+
			`"priority":"PRIORITY_TYPE_LOW","applicationRule":{"name":"batch-","ruleTypeId":"RULE_TYPE_ID_START_WITH"},`+
			`"logRules":{"severities":["SEVERITY_DEBUG","SEVERITY_VERBOSE"]}}`, i)
		if err := req.UnmarshalJSON([]byte(body)); err != nil {
			b.Fatal(err)
		}
		if _, err := h.CreatePolicy(ctx, &req); err != nil {
			b.Fatal(err)
		}
	}
	params := oas.ListPoliciesParams{EnabledOnly: oas.NewOptBool(true), SourceType: oas.NewOptPolicySourceType(oas.PolicySourceTypeSOURCETYPELOGS)}
	w := &discardResponse{header: http.Header{}}
	list := func(ctx context.Context, a *streaming.Answer) error { return h.StreamPolicies(ctx, params, a) }
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.written = 0
		if err := streaming.Serve(ctx, w, list, func(err error) { b.Error(err) }); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if w.written < held*100 {
		b.Fatalf("answer of %d bytes for %d policies", w.written, held)
	}
}
