package roles_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/roles"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// TestStreamedListIsTheBufferedList checks that the custom-role list, which the server streams,
// is byte for byte what the generated encoder writes for the same roles: empty, one, and more
// than the streaming buffer holds (so the answer leaves in several writes); and that team_id
// naming another team is still a 404 before anything is written.
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "streamed")
		h := roles.NewHandler(env.DB)
		expect := func(query string, params oas.ListCustomRolesParams) []byte {
			t.Helper()
			return apitest.ExpectStreamedAsBuffered(t, env, rolesPath+query, key, teamID,
				func(ctx context.Context) (*oas.CustomRoleList, error) { return h.ListCustomRoles(ctx, params) })
		}
		if body := expect("", oas.ListCustomRolesParams{}); string(body) != `{"roles":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		create(t, env, key, `{"name":"one \"q\" é <&>","description":"d","parentRoleName":"viewer"}`)
		expect("", oas.ListCustomRolesParams{})
		for i := 0; len(expect(fmt.Sprintf("?team_id=%d", teamID), oas.ListCustomRolesParams{TeamID: oas.NewOptInt64(teamID)})) <= 2*streaming.BufferBytes; i++ {
			for j := range 25 {
				create(t, env, key, fmt.Sprintf(`{"name":"role %d-%d","description":"a role of the streamed list","parentRoleName":"admin"}`, i, j))
			}
		}
		apitest.ExpectError(t, env.JSON(t, "GET", fmt.Sprintf("%s?team_id=%d", rolesPath, teamID+1000), key, ""), 404, "team_id")
		apitest.ExpectError(t, env.JSON(t, "GET", rolesPath+"?team_id=x", key, ""), 400, "team_id")
	})
}
