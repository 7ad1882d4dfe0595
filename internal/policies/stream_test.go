package policies_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
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
