package api_test

import (
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestPaddedIntegerPathIDsAre400: an integer path id written with a plus sign, a leading zero or
// a space is refused with 400 naming the parameter, on a team operation and an operator one; the
// plain spelling reaches the operation (404: no such view), and a string id that looks like a
// number is the operation's to judge.
func TestPaddedIntegerPathIDsAre400(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const views = "/mgmt/openapi/5/data-exploration/views/v1/views/"
		auth := "Bearer " + env.RootKey
		for _, id := range []string{"+1", "01", "%201", "1%20", "+0", "-01"} {
			res := env.Do(t, "GET", views+id, auth, "", "")
			apitest.ExpectError(t, res, 400, "id: must be written as a plain decimal integer")
		}
		apitest.ExpectError(t, env.Do(t, "GET", views+"7", auth, "", ""), 404)
		apitest.ExpectError(t, env.Do(t, "POST", "/admin/v1/teams/+1/usage", "Bearer "+apitest.OperatorKey, "application/json", "{}"),
			400, "team_id: must be written as a plain decimal integer", `"+1"`)
		apitest.ExpectError(t, env.Do(t, "GET", rulesPath+"/+1", auth, "", ""), 404)
	})
}

// TestCharsetOtherThanUTF8Is415: a body whose Content-Type names any charset but UTF-8 (in any
// case) is refused with 415 naming the charset, and nothing is created; utf-8 in any case is
// accepted.
func TestCharsetOtherThanUTF8Is415(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		auth := "Bearer " + env.RootKey
		body := `{"name":"charset","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`
		for _, contentType := range []string{"application/json; charset=utf-16", "application/json;charset=UTF-16LE",
			`application/json; CHARSET="iso-8859-1"`, "application/json; charset=utf8"} {
			apitest.ExpectError(t, env.Do(t, "POST", rulesPath, auth, contentType, body), 415, "Content-Type: the charset must be utf-8")
		}
		if res := env.Do(t, "GET", rulesPath, auth, "", ""); res.Status != 200 || string(res.Body) != `{"sets":[]}` {
			t.Fatalf("after the refused creates: %d %s", res.Status, res.Body)
		}
		for _, contentType := range []string{"application/json; charset=utf-8", "application/json; charset=UTF-8"} {
			if res := env.Do(t, "POST", rulesPath, auth, contentType, body); res.Status != 200 && res.Status != 201 {
				t.Fatalf("%s: %d %s", contentType, res.Status, res.Body)
			}
		}
	})
}
