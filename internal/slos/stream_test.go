package slos_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
	"github.com/mgmtapi/mgmtapi/internal/slos"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// TestStreamedListIsTheBufferedList checks that the SLO list, which the server streams, is byte
// for byte what the generated encoder writes for the same SLOs and filters: empty, filtered, and
// more than the streaming buffer holds (so the answer leaves in several writes); and that a
// filter readFilters refuses is still a 400 before anything is written.
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "streamed")
		h := slos.NewHandler(env.DB)
		expect := func(query string) []byte {
			t.Helper()
			values, err := url.ParseQuery(strings.TrimPrefix(query, "?"))
			if err != nil {
				t.Fatal(err)
			}
			return apitest.ExpectStreamedAsBuffered(t, env, slosPath+query, key, teamID,
				func(ctx context.Context) (*oas.SloList, error) {
					return h.ListSlos(queryobject.WithValues(ctx, values))
				})
		}
		if body := expect(""); string(body) != `{"slos":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		prod := "?filters[0][field][labelName]=env&filters[0][predicate][is][stringValues][values]=prod"
		create(t, env, key, body("one \"q\" é <&>", set("labels", map[string]string{"env": "prod"})))
		if body := expect(prod); string(body) == `{"slos":[]}` {
			t.Fatalf("prod: %s", body)
		}
		for i := 0; len(expect("")) <= 2*streaming.BufferBytes; i++ {
			for j := range 20 {
				label := map[bool]string{true: "prod", false: "dev"}[j%2 == 0]
				create(t, env, key, body(fmt.Sprintf("slo %d-%d", i, j), set("labels", map[string]string{"env": label})))
			}
		}
		expect(prod)
		apitest.ExpectError(t, env.JSON(t, "GET", slosPath+"?filters[0][field][labelName]=env&filters[0][predicate][nope]=1", key, ""), 400, "filters")
	})
}
