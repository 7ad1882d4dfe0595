package audit_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/audit"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	rulesPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
	viewsPath = "/mgmt/openapi/5/data-exploration/views/v1/views"
	keysPath  = "/mgmt/openapi/4/aaa/api-keys/v3"
)

func ruleSetBody(name string) string {
	return `{"name":` + strconv.Quote(name) + `,"groups":[{"name":"g","rules":[{"record":"r","expr":"sum(up)"}]}]}`
}

const viewBody = `{"name":"errors","timeSelection":{"quickSelection":{"caption":"Last hour","seconds":3600}}}`

// list returns every audit record of the team that params select, newest first, following the
// page tokens; it fails the test on any error.
func list(t *testing.T, env *apitest.Env, params oas.AdminListAuditRecordsParams) []oas.AuditRecord {
	t.Helper()
	var out []oas.AuditRecord
	for {
		page, err := env.Client(t, apitest.OperatorKey).AdminListAuditRecords(context.Background(), params)
		if err != nil {
			t.Fatalf("list audit records %+v: %v", params, err)
		}
		out = append(out, page.Records...)
		token, ok := page.NextPageToken.Get()
		if !ok {
			return out
		}
		params.PageToken = oas.NewOptString(token)
	}
}

// teamOf creates a team and returns its id, its first key's value and that key's id.
func teamOf(t *testing.T, env *apitest.Env, name string) (int64, string, string) {
	t.Helper()
	res, err := env.Client(t, apitest.OperatorKey).AdminCreateTeam(context.Background(), &oas.AdminTeamInput{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return res.Team.ID, res.ApiKey.Value, res.ApiKey.KeyId
}

// mutate sends a mutation that must succeed and returns its request id and JSON answer.
func mutate(t *testing.T, env *apitest.Env, method, path, key, body string) (string, string) {
	t.Helper()
	res := env.JSON(t, method, path, key, body)
	if res.Status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
	}
	return res.Header.Get("X-Request-Id"), string(res.Body)
}

var idField = regexp.MustCompile(`"(?:id|keyId)":\s*"?([^",}]+)`)

// TestMutationsLeaveAuditRecords creates, updates and deletes in a few areas (recording rules,
// views, API keys) and through the operator API: each success has one record, newest first, with
// its operation, team, key id and name (the value appears nowhere), the ids it touched, its
// request id, the client address and status.
func TestMutationsLeaveAuditRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key, keyID := teamOf(t, env, "acme")
		type want struct {
			operation, requestID, keyID, keyName, resource string
		}
		var wants []want
		do := func(operation, method, path, body, resourceFromAnswer string) string {
			requestID, answer := mutate(t, env, method, path, key, body)
			resource := resourceFromAnswer
			if resource == "" {
				m := idField.FindStringSubmatch(answer)
				if m == nil {
					t.Fatalf("%s: no id in %s", operation, answer)
				}
				resource = m[1]
			}
			wants = append(wants, want{operation, requestID, keyID, "first key", resource})
			return resource
		}
		set := do("CreateRecordingRuleSet", http.MethodPost, rulesPath, ruleSetBody("one"), "")
		do("UpdateRecordingRuleSet", http.MethodPut, rulesPath+"/"+set, ruleSetBody("two"), set)
		do("DeleteRecordingRuleSet", http.MethodDelete, rulesPath+"/"+set, "", set)
		view := do("CreateView", http.MethodPost, viewsPath, viewBody, "")
		do("DeleteView", http.MethodDelete, viewsPath+"/"+view, "", view)
		created := do("CreateApiKey", http.MethodPost, keysPath, `{"name":"reader","keyPermissions":{"permissions":["team-custom-api-keys:ReadConfig"]}}`, "")
		do("DeleteApiKey", http.MethodDelete, "/mgmt/openapi/5/aaa/api-keys/v3/"+created, "", created)

		records := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team})
		// The team's creation by the operator comes first in time: last in the list.
		if len(records) != len(wants)+1 {
			t.Fatalf("%d records, want %d: %+v", len(records), len(wants)+1, records)
		}
		first := records[len(records)-1]
		if first.Operation != "AdminCreateTeam" || first.KeyId != "operator" || first.KeyName != "operator" ||
			first.TeamId != team || !slices.Contains(first.ResourceIds, strconv.FormatInt(team, 10)) ||
			!slices.Contains(first.ResourceIds, keyID) {
			t.Errorf("team creation record %+v, want AdminCreateTeam by the operator naming team %d and key %s", first, team, keyID)
		}
		for i, w := range wants {
			r := records[len(wants)-1-i] // newest first
			if r.Operation != w.operation || r.RequestId != w.requestID || r.KeyId != w.keyID || r.KeyName != w.keyName ||
				r.TeamId != team || r.ClientAddress != "127.0.0.1" || r.Status != 200 || !slices.Contains(r.ResourceIds, w.resource) {
				t.Errorf("record %d: %+v, want %+v", i, r, w)
			}
			if strings.Contains(strings.Join(r.ResourceIds, ","), key) {
				t.Errorf("record %d holds the key's value", i)
			}
		}
		for i := 1; i < len(records); i++ {
			if records[i].Time.After(records[i-1].Time) {
				t.Errorf("record %d (%s) is newer than record %d (%s)", i, records[i].Time, i-1, records[i-1].Time)
			}
		}
		// Another team's list does not hold them.
		other, _, _ := teamOf(t, env, "globex")
		if got := list(t, env, oas.AdminListAuditRecordsParams{TeamID: other}); len(got) != 1 || got[0].Operation != "AdminCreateTeam" {
			t.Errorf("other team's records %+v, want its creation only", got)
		}
	})
}

// metricValue reads one series of /metrics.
func metricValue(t *testing.T, env *apitest.Env, series string) float64 {
	t.Helper()
	res, err := http.Get(env.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if value, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no series %s in /metrics", series)
	return 0
}

// TestFailedMutationsLeaveNone sends mutations that fail (bad body, unknown id, missing
// permission, no key, unknown key, deactivated key, wrong operator key) and reads: none leaves a
// record, and the refusals are counted per reason in mgmtapi_auth_failures_total.
func TestFailedMutationsLeaveNone(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key, _ := teamOf(t, env, "acme")
		reader := env.MustKey(t, key, "metrics.recording-rules:ReadConfig")
		created := apitest.Decode[struct{ KeyID, Value string }](t, env.JSON(t, http.MethodPost, keysPath, key,
			`{"name":"soon off","keyPermissions":{"permissions":["metrics.recording-rules:UpdateConfig"]}}`))
		mutate(t, env, http.MethodPut, "/mgmt/openapi/5/aaa/api-keys/v3/"+created.KeyID, key, `{"isActive":false}`)
		before := len(list(t, env, oas.AdminListAuditRecordsParams{TeamID: team}))
		series := func(reason string) string { return `mgmtapi_auth_failures_total{reason="` + reason + `"}` }
		counted := map[string]float64{}
		for _, r := range []string{"missing_key", "invalid_key", "deactivated_key", "missing_permission", "invalid_operator_key"} {
			counted[r] = metricValue(t, env, series(r))
		}

		for _, c := range []struct {
			method, path, authorization, body string
			status                            int
		}{
			{http.MethodPost, rulesPath, "Bearer " + key, `{"name":"x","groups":[{"name":"g","rules":[{"record":"r","expr":"sum("}]}]}`, 400},
			{http.MethodDelete, rulesPath + "/0190a4e2-0000-7000-8000-000000000000", "Bearer " + key, "", 404},
			{http.MethodPost, rulesPath, "Bearer " + reader, ruleSetBody("x"), 403},
			{http.MethodPost, rulesPath, "", ruleSetBody("x"), 401},
			{http.MethodPost, rulesPath, "Bearer mgmt_no_such_key_0123456789", ruleSetBody("x"), 401},
			{http.MethodPost, rulesPath, "Bearer " + created.Value, ruleSetBody("x"), 401},
			{http.MethodPost, "/admin/v1/teams", "Bearer " + key, `{"name":"evil"}`, 401},
			{http.MethodGet, rulesPath + "/0190a4e2-0000-7000-8000-000000000000", "Bearer " + key, "", 404},
		} {
			res := env.Do(t, c.method, c.path, c.authorization, "application/json", c.body)
			if res.Status != c.status {
				t.Errorf("%s %s: %d %s, want %d", c.method, c.path, res.Status, res.Body, c.status)
			}
		}
		if got := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team}); len(got) != before {
			t.Errorf("%d records after the failed mutations, want %d: %+v", len(got), before, got[:len(got)-before])
		}
		for reason, n := range map[string]float64{"missing_key": 1, "invalid_key": 1, "deactivated_key": 1, "missing_permission": 1, "invalid_operator_key": 1} {
			if got := metricValue(t, env, series(reason)) - counted[reason]; got != n {
				t.Errorf("%s: counted %v more, want %v", series(reason), got, n)
			}
		}
	})
}

// TestAuditListFiltersAndPages writes records over a few simulated minutes with two keys and
// reads them back by time range, operation and key, in pages; bad parameters are refused with
// the field named.
func TestAuditListFiltersAndPages(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key, keyID := teamOf(t, env, "acme")
		viewer := env.MustKey(t, key, "team-saved-views:Update")
		start := env.Clock.Now()
		for i := range 7 {
			env.Clock.Advance(time.Minute)
			mutate(t, env, http.MethodPost, rulesPath, key, ruleSetBody("set "+strconv.Itoa(i)))
		}
		env.Clock.Advance(time.Minute)
		mutate(t, env, http.MethodPost, viewsPath, viewer, viewBody)
		all := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team})
		if len(all) != 10 { // team creation, key creation, 7 sets, 1 view
			t.Fatalf("%d records, want 10", len(all))
		}
		// Pages of 3 give the same records in the same order, and the last page has no token.
		var paged []oas.AuditRecord
		params := oas.AdminListAuditRecordsParams{TeamID: team, PageSize: oas.NewOptInt32(3)}
		for pages := 1; ; pages++ {
			page, err := env.Client(t, apitest.OperatorKey).AdminListAuditRecords(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Records) > 3 {
				t.Fatalf("page %d holds %d records", pages, len(page.Records))
			}
			paged = append(paged, page.Records...)
			token, ok := page.NextPageToken.Get()
			if !ok {
				if pages != 4 {
					t.Errorf("%d pages, want 4", pages)
				}
				break
			}
			params.PageToken = oas.NewOptString(token)
		}
		ids := func(rs []oas.AuditRecord) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		if !slices.Equal(ids(paged), ids(all)) {
			t.Errorf("paged %v, want %v", ids(paged), ids(all))
		}
		// The sets written in minutes 2 to 4 (from inclusive, to exclusive).
		ranged := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team,
			From: oas.NewOptDateTime(start.Add(2 * time.Minute)), To: oas.NewOptDateTime(start.Add(5 * time.Minute))})
		if len(ranged) != 3 {
			t.Errorf("records of minutes 2 to 4: %d, want 3: %+v", len(ranged), ranged)
		}
		sets := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team, Operation: oas.NewOptString("CreateRecordingRuleSet"),
			PageSize: oas.NewOptInt32(2)})
		if len(sets) != 7 {
			t.Errorf("CreateRecordingRuleSet records: %d, want 7", len(sets))
		}
		byKey := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team, KeyId: oas.NewOptString(keyID)})
		if len(byKey) != 8 { // the key creation and the 7 sets
			t.Errorf("records of key %s: %d, want 8", keyID, len(byKey))
		}
		if len(list(t, env, oas.AdminListAuditRecordsParams{TeamID: team, KeyId: oas.NewOptString("operator")})) != 1 {
			t.Errorf("records of the operator key: want 1")
		}

		for _, c := range []struct {
			query     string
			status    int
			fragments []string
		}{
			{"?pageToken=bm90LWEtdG9rZW4", 400, []string{"pageToken"}},
			{"?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", 400, []string{"to: must be after from"}},
			{"?pageSize=0", 400, []string{"pageSize"}},
			{"?pageSize=1001", 400, []string{"pageSize"}},
			{"?from=yesterday", 400, []string{"from"}},
		} {
			res := env.Do(t, http.MethodGet, "/admin/v1/teams/"+strconv.FormatInt(team, 10)+"/audit"+c.query,
				"Bearer "+apitest.OperatorKey, "", "")
			apitest.ExpectError(t, res, c.status, c.fragments...)
		}
		apitest.ExpectError(t, env.Do(t, http.MethodGet, "/admin/v1/teams/999/audit", "Bearer "+apitest.OperatorKey, "", ""),
			404, "team_id: no team 999")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, "/admin/v1/teams/1/audit", "Bearer "+key, "", ""), 401)
	})
}

// TestRetentionPrunesOldRecords writes records, moves the clock 10 days on, writes more, and
// prunes what is older than 5 days in batches of 2: the old ones go (every team's), the recent
// ones stay.
func TestRetentionPrunesOldRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key, _ := teamOf(t, env, "acme")
		other, otherKey, _ := teamOf(t, env, "globex")
		for i := range 3 {
			mutate(t, env, http.MethodPost, rulesPath, key, ruleSetBody("old "+strconv.Itoa(i)))
			mutate(t, env, http.MethodPost, rulesPath, otherKey, ruleSetBody("old "+strconv.Itoa(i)))
		}
		env.Clock.Advance(10 * 24 * time.Hour)
		for i := range 2 {
			mutate(t, env, http.MethodPost, rulesPath, key, ruleSetBody("new "+strconv.Itoa(i)))
		}
		n, err := audit.PruneInBatches(context.Background(), env.DB, env.Clock.Now().Add(-5*24*time.Hour), 2)
		if err != nil {
			t.Fatal(err)
		}
		if n != 8 { // per team: its creation and 3 sets
			t.Errorf("pruned %d, want 8", n)
		}
		kept := list(t, env, oas.AdminListAuditRecordsParams{TeamID: team})
		if len(kept) != 2 {
			t.Errorf("kept %d records, want the 2 recent ones: %+v", len(kept), kept)
		}
		if got := list(t, env, oas.AdminListAuditRecordsParams{TeamID: other}); len(got) != 0 {
			t.Errorf("other team kept %d old records", len(got))
		}
		// Nothing left to prune.
		if n, err := audit.Prune(context.Background(), env.DB, env.Clock.Now().Add(-5*24*time.Hour)); n != 0 || err != nil {
			t.Errorf("second prune: %d, %v; want 0", n, err)
		}
	})
}
