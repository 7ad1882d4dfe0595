package api_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestIntegerIdsHaveOneSpelling: an integer path parameter with a plus sign or leading zeros is a
// 400 naming the parameter (the generated decoder would read "+1" and "01" as 1), on reads and
// writes, once the caller is authenticated; the plain spelling still finds the resource.
func TestIntegerIdsHaveOneSpelling(t *testing.T) {
	const views = "/mgmt/openapi/5/data-exploration/views/v1/views"
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := "Bearer " + env.RootKey
		res := env.JSON(t, "POST", views, env.RootKey, `{"name":"v","timeSelection":{}}`)
		if res.Status != 200 {
			t.Fatalf("create view: %d %s", res.Status, res.Body)
		}
		var created struct{ ID json.Number }
		if err := json.Unmarshal(res.Body, &created); err != nil || created.ID == "" {
			t.Fatalf("create view: %s", res.Body)
		}
		id := created.ID.String()
		for _, spelled := range []string{"+" + id, "%2B" + id, "0" + id, "00" + id} {
			apitest.ExpectError(t, env.Do(t, "GET", views+"/"+spelled, key, "", ""), 400,
				`id: must be an integer written without a plus sign or leading zeros`)
			apitest.ExpectError(t, env.Do(t, "PUT", views+"/"+spelled, key, "application/json", `{"name":"w","timeSelection":{}}`), 400,
				`id: must be an integer written without a plus sign or leading zeros`)
		}
		// Authentication comes first: without a key, the spelling is not looked at.
		apitest.ExpectError(t, env.Do(t, "GET", views+"/+"+id, "", "", ""), 401)
		if res := env.Do(t, "GET", views+"/"+id, key, "", ""); res.Status != 200 {
			t.Errorf("GET %s: %d %s", id, res.Status, res.Body)
		}
		apitest.ExpectError(t, env.Do(t, "GET", "/admin/v1/teams/01/case-kpis", "Bearer "+apitest.OperatorKey, "", ""), 400,
			`team_id: must be an integer written without a plus sign or leading zeros (got "01")`)
	})
}

// TestCharsetOtherThanUTF8Is415: JSON is UTF-8; a body declared in another charset is refused
// with 415 naming it, and nothing is created. utf-8 in any case, and us-ascii, are accepted.
func TestCharsetOtherThanUTF8Is415(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := "Bearer " + env.RootKey
		for _, charset := range []string{"utf-16", "UTF-16LE", "iso-8859-1", "latin1"} {
			apitest.ExpectError(t, env.Do(t, "POST", rulesPath, key, "application/json; charset="+charset, `{"name":"c"}`), 415,
				fmt.Sprintf(`Content-Type: the charset must be utf-8, not %q`, charset))
		}
		for _, charset := range []string{"utf-8", "UTF-8", "us-ascii"} {
			if res := env.Do(t, "POST", rulesPath, key, "application/json; charset="+charset, `{"name":"c-`+charset+`"}`); res.Status != 200 {
				t.Errorf("charset=%s: %d %s", charset, res.Status, res.Body)
			}
		}
	})
}
