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

// TestStreamedListIsTheBufferedList checks that the policy list, which the server streams, is
// byte for byte what the generated encoder writes for the same policies and parameters: empty,
// filtered, and more than the streaming buffer holds (so the answer leaves in several writes).
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 1000}, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "streamed")
		h := policies.NewHandler(env.DB, 0)
		expect := func(query string, params oas.ListPoliciesParams) []byte {
			t.Helper()
			return apitest.ExpectStreamedAsBuffered(t, env, policiesPath+query, key, teamID,
				func(ctx context.Context) (*oas.PolicyList, error) { return h.ListPolicies(ctx, params) })
		}
		if body := expect("", oas.ListPoliciesParams{}); string(body) != `{"policies":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		create(t, env, key, logBody("one \"q\" é <&>", ""))
		expect("", oas.ListPoliciesParams{})
		if body := expect("?source_type=SOURCE_TYPE_RUM", oas.ListPoliciesParams{SourceType: oas.NewOptPolicySourceType(oas.PolicySourceTypeSOURCETYPERUM)}); string(body) != `{"policies":[]}` {
			t.Fatalf("RUM only: %s", body)
		}
		for i := 0; len(expect("", oas.ListPoliciesParams{})) <= 2*streaming.BufferBytes; i++ {
			for j := range 20 {
				create(t, env, key, logBody(fmt.Sprintf("policy %d-%d", i, j), ""))
			}
		}
		expect("?enabled_only=true&source_type=SOURCE_TYPE_LOGS",
			oas.ListPoliciesParams{EnabledOnly: oas.NewOptBool(true), SourceType: oas.NewOptPolicySourceType(oas.PolicySourceTypeSOURCETYPELOGS)})
		expect("?source_type=SOURCE_TYPE_SPANS",
			oas.ListPoliciesParams{SourceType: oas.NewOptPolicySourceType(oas.PolicySourceTypeSOURCETYPESPANS)})
		// Parameters the generated decoder refuses are still its 400.
		apitest.ExpectError(t, env.JSON(t, "GET", policiesPath+"?enabled_only=maybe", key, ""), 400, "enabled_only")
	})
}

// maxAllocsPerListedPolicy bounds the allocations a streamed list makes per policy it lists: the
// decoding of the stored document (a string per text and enum field, the severities) and the
// driver's values of the row. Each row once also allocated the policy, a copy of its document
// and its scanned values: 22 allocations per policy, on both engines.
const maxAllocsPerListedPolicy = 18

// TestStreamedListAllocationsPerPolicy checks that the streamed policy list allocates at most
// maxAllocsPerListedPolicy times per policy listed: the allocations of a list of 150 policies,
// less those of a list of 50, divided by 100.
func TestStreamedListAllocationsPerPolicy(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 1000}, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "allocations")
		otherID, otherKey := env.MustTeam(t, "allocations, fewer")
		h := policies.NewHandler(env.DB, 0)
		for i := range 150 {
			body := listedPolicyBody(i)
			create(t, env, key, body)
			if i < 50 {
				create(t, env, otherKey, body)
			}
		}
		params := oas.ListPoliciesParams{EnabledOnly: oas.NewOptBool(true), SourceType: oas.NewOptPolicySourceType(oas.PolicySourceTypeSOURCETYPELOGS)}
		allocs := func(team int64, wantBytes int) float64 {
			ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: team})
			w := &discardResponse{header: http.Header{}}
			list := func(ctx context.Context, a *streaming.Answer) error { return h.StreamPolicies(ctx, params, a) }
			return testing.AllocsPerRun(20, func() {
				w.written = 0
				if err := streaming.Serve(ctx, w, list, func(err error) { t.Error(err) }); err != nil {
					t.Fatal(err)
				}
				if w.written < wantBytes {
					t.Fatalf("answer of %d bytes, want at least %d", w.written, wantBytes)
				}
			})
		}
		perPolicy := (allocs(teamID, 150*300) - allocs(otherID, 50*300)) / 100
		t.Logf("%.1f allocations per listed policy", perPolicy)
		if perPolicy > maxAllocsPerListedPolicy {
			t.Errorf("%.1f allocations per listed policy, want at most %d", perPolicy, maxAllocsPerListedPolicy)
		}
	})
}

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
		if err := req.UnmarshalJSON([]byte(listedPolicyBody(i))); err != nil {
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

// listedPolicyBody is the i-th log policy of the list tests, of the shape cmd/mgmtload creates.
func listedPolicyBody(i int) string {
	return fmt.Sprintf(`{"name":"policy %d","description":"Debug lines of batch jobs are not kept.",`+
		`"priority":"PRIORITY_TYPE_LOW","applicationRule":{"name":"batch-","ruleTypeId":"RULE_TYPE_ID_START_WITH"},`+
		`"logRules":{"severities":["SEVERITY_DEBUG","SEVERITY_VERBOSE"]}}`, i)
}

// discardResponse is an http.ResponseWriter that counts and discards the body.
type discardResponse struct {
	header  http.Header
	written int
}

func (d *discardResponse) Header() http.Header { return d.header }
func (d *discardResponse) WriteHeader(int)     {}
func (d *discardResponse) Write(p []byte) (int, error) {
	d.written += len(p)
	return len(p), nil
}
