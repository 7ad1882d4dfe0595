package api_test

import (
	"net/http"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestOperatorKeyOnATeamOperationSaysSo: the operator key sent to an operation that only team keys
// reach is a 401 that says it is the operator key and what it reaches, not "not valid"; an unknown
// key still is "not valid".
func TestOperatorKeyOnATeamOperationSaysSo(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const rules = "/mgmt/openapi/latest/recording-rules/recording-rules/v1"
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rules, apitest.OperatorKey, ""), 401,
			"Authorization: this is the operator key", "the operator operations (/admin/v1/…, the teams operations) only",
			"ListRecordingRuleSets needs an API key of a team")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rules, "not-a-key-0123456789abcdef0123456789", ""), 401,
			"Authorization: the API key is not valid")
	})
}
