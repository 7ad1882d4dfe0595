package policies_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// overridePolicy is the answer's view of the fields this file tests.
type overridePolicy struct {
	ID                     string
	Name                   string
	Description            *string
	Priority               string
	Enabled                bool
	PriorityOverride       json.RawMessage
	PriorityOverrideStatus json.RawMessage
	Targets                json.RawMessage
}

func TestPriorityOverrideAndTargets(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		override := `{"quotaBased":{"usageTiers":[{"dailyQuotaPercentage":50,"priority":"PRIORITY_TYPE_MEDIUM"},{"dailyQuotaPercentage":90,"priority":"PRIORITY_TYPE_LOW"}]}}`
		targets := `[{"archiveRetention":{"id":"00000000-0000-4000-8000-000000000002"},"dataset":"d1","dataspace":"space.a_1","priority":"PRIORITY_TYPE_HIGH",` +
			`"priorityOverride":{"quotaBased":{"usageTiers":[{"dailyQuotaPercentage":0,"priority":"PRIORITY_TYPE_HIGH"}]}}}]`
		res := env.JSON(t, http.MethodPost, createPath, key, logBody("o", `,"priorityOverride":`+override+`,"targets":`+targets+
			`,"priorityOverrideStatus":{"quotaBased":{"currentPriority":"PRIORITY_TYPE_BLOCK","dailyLimit":1}}`))
		p := apitest.Decode[struct{ Policy overridePolicy }](t, res).Policy
		wantStatus := `{"quotaBased":{"currentPriority":"PRIORITY_TYPE_LOW"}}`
		if string(p.PriorityOverride) != override || string(p.Targets) != targets || string(p.PriorityOverrideStatus) != wantStatus {
			t.Fatalf("created %+v", p)
		}
		// Read back: the same.
		got := apitest.Decode[struct{ Policy overridePolicy }](t, env.JSON(t, http.MethodGet, policiesPath+"/"+p.ID, key, "")).Policy
		if string(got.PriorityOverride) != override || string(got.Targets) != targets || string(got.PriorityOverrideStatus) != wantStatus {
			t.Fatalf("read %+v", got)
		}
		// Update replaces them; the status follows the priority.
		upd := apitest.Decode[struct{ Policy overridePolicy }](t, env.JSON(t, http.MethodPut, policiesPath, key,
			fmt.Sprintf(`{"id":%q,"priority":"PRIORITY_TYPE_MEDIUM","targets":[{"dataset":"d2"}]}`, p.ID))).Policy
		if string(upd.Targets) != `[{"dataset":"d2"}]` || string(upd.PriorityOverrideStatus) != `{"quotaBased":{"currentPriority":"PRIORITY_TYPE_MEDIUM"}}` {
			t.Fatalf("updated %+v", upd)
		}
		// An empty list clears the targets; the override, left out, stays.
		cleared := apitest.Decode[struct{ Policy overridePolicy }](t, env.JSON(t, http.MethodPut, policiesPath, key, fmt.Sprintf(`{"id":%q,"targets":[]}`, p.ID))).Policy
		if string(cleared.Targets) != `[]` || string(cleared.PriorityOverride) != override {
			t.Fatalf("cleared %+v", cleared)
		}
		// A policy without an override has no status and an empty target list.
		plain := apitest.Decode[struct{ Policy overridePolicy }](t, env.JSON(t, http.MethodPost, createPath, key, logBody("plain", ""))).Policy
		if plain.PriorityOverrideStatus != nil || string(plain.Targets) != `[]` {
			t.Fatalf("plain %+v", plain)
		}
		// Overwrite entries carry them too.
		ow := apitest.Decode[struct {
			CreateResponses []struct{ Policy overridePolicy }
		}](t, env.JSON(t, http.MethodPut, spanPath, key,
			`{"policies":[{"policy":{"name":"s","description":"","priority":"PRIORITY_TYPE_LOW","priorityOverride":`+override+`,"targets":`+targets+`},"spanRules":{}}]}`))
		if s := ow.CreateResponses[0].Policy; string(s.PriorityOverride) != override || string(s.Targets) != targets {
			t.Fatalf("overwrite %+v", s)
		}

		tiers := func(ts string) string {
			return logBody("t", `,"priorityOverride":{"quotaBased":{"usageTiers":`+ts+`}}`)
		}
		bad := []struct{ body, frag string }{
			{tiers(`[{"dailyQuotaPercentage":10}]`), "priorityOverride.quotaBased.usageTiers[0].priority: must be PRIORITY_TYPE_LOW, PRIORITY_TYPE_MEDIUM or PRIORITY_TYPE_HIGH (got nothing)"},
			{tiers(`[{"priority":"PRIORITY_TYPE_BLOCK"}]`), "usageTiers[0].priority"},
			{tiers(`[{"dailyQuotaPercentage":50,"priority":"PRIORITY_TYPE_HIGH"},{"dailyQuotaPercentage":50,"priority":"PRIORITY_TYPE_LOW"}]`), "usageTiers[1].dailyQuotaPercentage: must be greater"},
			{tiers(`[{"dailyQuotaPercentage":50,"priority":"PRIORITY_TYPE_LOW"},{"dailyQuotaPercentage":60,"priority":"PRIORITY_TYPE_LOW"}]`), "usageTiers[1].priority: must be lower"},
			{tiers(`[{"dailyQuotaPercentage":100.5,"priority":"PRIORITY_TYPE_LOW"}]`), "usageTiers[0].dailyQuotaPercentage"},
			{tiers(`[{"dailyQuotaPercentage":-1,"priority":"PRIORITY_TYPE_LOW"}]`), "usageTiers[0].dailyQuotaPercentage"},
			{tiers(`[{"priority":"PRIORITY_TYPE_HIGH"},{"dailyQuotaPercentage":1,"priority":"PRIORITY_TYPE_MEDIUM"},{"dailyQuotaPercentage":2,"priority":"PRIORITY_TYPE_LOW"},{"dailyQuotaPercentage":3,"priority":"PRIORITY_TYPE_LOW"}]`), "usageTiers"},
			{logBody("t", `,"targets":[{},{},{},{},{},{}]`), "targets"},
			{logBody("t", `,"targets":[{"dataset":""}]`), "targets[0].dataset"},
			{logBody("t", `,"targets":[{"dataset":"`+strings.Repeat("d", 513)+`"}]`), "targets[0].dataset"},
			{logBody("t", `,"targets":[{"dataspace":"1abc"}]`), "targets[0].dataspace"},
			{logBody("t", `,"targets":[{"dataspace":"a..b"}]`), "targets[0].dataspace"},
			{logBody("t", `,"targets":[{"dataspace":"a`+strings.Repeat("b", 50)+`"}]`), "targets[0].dataspace"},
			{logBody("t", `,"targets":[{"archiveRetention":{"id":"x"}}]`), "targets[0].archiveRetention.id"},
			{logBody("t", `,"targets":[{"priorityOverride":{"quotaBased":{"usageTiers":[{"priority":"PRIORITY_TYPE_UNSPECIFIED"}]}}}]`), "targets[0].priorityOverride.quotaBased.usageTiers[0].priority"},
		}
		for _, c := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, c.body), 400, c.frag)
		}
		// Edges accepted: three tiers, 0 and 100, five targets, a 512-character dataset, a 50-character dataspace.
		ok := []string{
			tiers(`[{"dailyQuotaPercentage":0,"priority":"PRIORITY_TYPE_HIGH"},{"dailyQuotaPercentage":50,"priority":"PRIORITY_TYPE_MEDIUM"},{"dailyQuotaPercentage":100,"priority":"PRIORITY_TYPE_LOW"}]`),
			logBody("t", `,"targets":[{},{},{},{},{"dataset":"`+strings.Repeat("d", 512)+`","dataspace":"a`+strings.Repeat("b", 49)+`"}]`),
		}
		for _, body := range ok {
			if res := env.JSON(t, http.MethodPost, createPath, key, body); res.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", body[:60], res.Status, res.Body)
			}
		}
		// Update and overwrite check the same, naming their paths.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, policiesPath, key,
			fmt.Sprintf(`{"id":%q,"targets":[{"priorityOverride":{"quotaBased":{"usageTiers":[{}]}}}]}`, p.ID)), 400, "targets[0].priorityOverride.quotaBased.usageTiers[0].priority")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, logPath, key,
			`{"policies":[{"policy":{"name":"x","description":"","priority":"PRIORITY_TYPE_LOW","priorityOverride":{"quotaBased":{"usageTiers":[{}]}}},"logRules":{"severities":[]}}]}`),
			400, "policies[0].policy.priorityOverride.quotaBased.usageTiers[0].priority")
	})
}

func TestDescriptionBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, d := range []string{"", strings.Repeat("é", 255), "ÿ~"} {
			p := create(t, env, key, logBody("d", `,"description":`+asJSON(d)))
			if p.Description != d {
				t.Fatalf("description %q stored as %q", d, p.Description)
			}
		}
		bad := []struct{ body, frag string }{
			{logBody("d", `,"description":`+asJSON(strings.Repeat("a", 256))), "description"},
			{logBody("d", `,"description":"ā"`), "description"},
			{logBody("d", `,"description":"日本"`), "description"},
		}
		for _, c := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, c.body), 400, c.frag)
		}
		p := create(t, env, key, logBody("u", ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, policiesPath, key, fmt.Sprintf(`{"id":%q,"description":"ā"}`, p.ID)), 400, "description")
		// The public document requires it in overwrite entries, but a policy without one is read
		// back without one, and a client writes it back so (TestOverwriteReadModifyWrite): not
		// sent, it is not set, and not answered.
		res := env.JSON(t, http.MethodPut, logPath, key,
			`{"policies":[{"policy":{"name":"x","priority":"PRIORITY_TYPE_LOW"},"logRules":{"severities":[]}}]}`)
		if res.Status != http.StatusOK || strings.Contains(string(res.Body), "description") {
			t.Fatalf("overwrite entry without a description: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, spanPath, key,
			`{"policies":[{"policy":{"name":"x","description":"ā","priority":"PRIORITY_TYPE_LOW"},"spanRules":{}}]}`), 400, "policies[0].policy.description")
	})
}

func asJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func importUsage(t *testing.T, env *apitest.Env, team int64, records ...string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, fmt.Sprintf("/admin/v1/teams/%d/usage", team), apitest.OperatorKey, `{"records":[`+strings.Join(records, ",")+`]}`)
	if res.Status != http.StatusOK {
		t.Fatalf("import: %d %s", res.Status, res.Body)
	}
}

// bytesRecord is an hour of processed bytes with the given labels ("key=value" pairs).
func bytesRecord(hour time.Time, bytes int64, labels ...string) string {
	ls := make([]string, len(labels))
	for i, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		ls[i] = fmt.Sprintf(`{"key":%q,"value":%q}`, k, v)
	}
	return fmt.Sprintf(`{"hour":%q,"labels":[%s],"kind":"MEASUREMENT_KIND_PROCESSED_DATA_SIZE","unit":"MEASUREMENT_UNIT_BYTES","value":"%d"}`,
		hour.Format(time.RFC3339), strings.Join(ls, ","), bytes)
}

type forecast struct {
	EstimatedBytes string
	UsageBuckets   []struct{ BucketStartMs, Bytes string }
}

func TestForecastUsage(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		hour := time.Now().UTC().Truncate(time.Hour)
		importUsage(t, env, team,
			bytesRecord(hour, 1000, "pillar=PILLAR_LOGS", "applicationName=batch-1", "subsystemName=loader", "severity=SEVERITY_DEBUG"),
			bytesRecord(hour.Add(-time.Hour), 200, "pillar=PILLAR_LOGS", "applicationName=batch-2", "subsystemName=loader", "severity=SEVERITY_ERROR"),
			bytesRecord(hour.Add(-23*time.Hour), 30, "pillar=PILLAR_LOGS", "applicationName=web", "severity=SEVERITY_DEBUG"),
			bytesRecord(hour.Add(-24*time.Hour), 4, "pillar=PILLAR_LOGS", "applicationName=web", "severity=SEVERITY_DEBUG"),
			bytesRecord(hour.Add(-100*time.Hour), 50000, "pillar=PILLAR_LOGS", "applicationName=batch-1"),
			bytesRecord(hour.Add(-200*time.Hour), 600000, "pillar=PILLAR_LOGS", "applicationName=batch-1"),
			bytesRecord(hour, 7000000, "pillar=PILLAR_SPANS", "applicationName=web", "serviceName=cart", "action=GET /cart", "environment=prod"),
			bytesRecord(hour, 80000000, "pillar=PILLAR_RUM", "applicationName=store", "severity=SEVERITY_ERROR"),
			// Not bytes: never counted.
			`{"hour":"`+hour.Format(time.RFC3339)+`","labels":[{"key":"pillar","value":"PILLAR_LOGS"}],"kind":"MEASUREMENT_KIND_PROCESSED_EVENTS","unit":"MEASUREMENT_UNIT_EVENTS","value":"999999999"}`,
		)
		ask := func(key, body string) forecast {
			t.Helper()
			return apitest.Decode[forecast](t, env.JSON(t, http.MethodPost, forecastPath, key, body))
		}
		cases := []struct{ body, want string }{
			{`{}`, "87001230"},                         // every pillar, the last 24 hours
			{`{"day":{}}`, "87001230"},                 // the same
			{`{"week":{}}`, "87051234"},                // 168 hours: adds the 24h and 100h old records
			{`{"logRules":{"severities":[]}}`, "1230"}, // logs only
			{`{"logRules":{"severities":["SEVERITY_DEBUG"]}}`, "1030"},
			{`{"logRules":{"severities":["SEVERITY_DEBUG","SEVERITY_ERROR"]},"applicationRule":{"name":"batch-","ruleTypeId":"RULE_TYPE_ID_START_WITH"}}`, "1200"},
			{`{"logRules":{"severities":[]},"applicationRule":{"name":"web, batch-2","ruleTypeId":"RULE_TYPE_ID_IS"}}`, "230"},
			{`{"logRules":{"severities":[]},"applicationRule":{"name":"web,batch-2","ruleTypeId":"RULE_TYPE_ID_IS_NOT"}}`, "1000"},
			{`{"logRules":{"severities":[]},"subsystemRule":{"name":"oad","ruleTypeId":"RULE_TYPE_ID_INCLUDES"}}`, "1200"},
			{`{"logRules":{"severities":[]},"subsystemRule":{"name":"loader","ruleTypeId":"RULE_TYPE_ID_IS_NOT"}}`, "30"}, // a missing label is ""
			{`{"logRules":{"severities":[]},"subsystemRule":{"name":"x"}}`, "1230"},                                       // no type: matches all
			{`{"spanRules":{"serviceRule":{"name":"cart","ruleTypeId":"RULE_TYPE_ID_IS"},"tagRules":[{"ruleTypeId":"RULE_TYPE_ID_IS","tagName":"tags.environment","tagValue":"prod"}]}}`, "7000000"},
			{`{"spanRules":{"actionRule":{"name":"POST","ruleTypeId":"RULE_TYPE_ID_START_WITH"}}}`, "0"},
			{`{"rumRules":{"severities":["SEVERITY_ERROR"]}}`, "80000000"},
		}
		for _, c := range cases {
			if got := ask(key, c.body); got.EstimatedBytes != c.want || got.UsageBuckets != nil {
				t.Fatalf("%s: %+v, want %s", c.body, got, c.want)
			}
		}
		// Buckets: a day in 12-hour buckets aligned to the epoch; every bucket that meets the window.
		got := ask(key, `{"logRules":{"severities":[]},"timeBucketMs":"43200000"}`)
		start := hour.Add(-23 * time.Hour)
		first := start.Truncate(12 * time.Hour)
		if got.EstimatedBytes != "1230" || len(got.UsageBuckets) < 2 || len(got.UsageBuckets) > 3 {
			t.Fatalf("buckets %+v", got)
		}
		var sum int64
		for i, b := range got.UsageBuckets {
			if b.BucketStartMs != fmt.Sprint(first.Add(time.Duration(i)*12*time.Hour).UnixMilli()) {
				t.Fatalf("bucket %d starts %s", i, b.BucketStartMs)
			}
			var n int64
			fmt.Sscan(b.Bytes, &n)
			sum += n
		}
		if sum != 1230 {
			t.Fatalf("buckets sum to %d", sum)
		}
		if got := ask(key, `{"week":{},"timeBucketMs":"604800000"}`); len(got.UsageBuckets) < 1 || got.EstimatedBytes != "87051234" {
			t.Fatalf("week in one bucket %+v", got)
		}
		if got := ask(key, `{"timeBucketMs":"3600000"}`); len(got.UsageBuckets) != 24 || got.UsageBuckets[23].Bytes != "87001000" || got.UsageBuckets[0].Bytes != "30" {
			t.Fatalf("hourly %+v", got)
		}
		// Team isolation.
		if got := ask(otherKey, `{"week":{}}`); got.EstimatedBytes != "0" {
			t.Fatalf("other team %+v", got)
		}
		bad := []struct{ body, frag string }{
			{`{"day":{},"week":{}}`, "day, week: must set only one"},
			{`{"logRules":{"severities":[]},"spanRules":{}}`, "must set only one"},
			{`{"logRules":{"severities":[],"dpxlExpression":"x"}}`, "logRules.dpxlExpression: cannot be forecast"},
			{`{"spanRules":{"dpxlExpression":"x"}}`, "spanRules.dpxlExpression"},
			{`{"logRules":{"severities":["SEVERITY_INFO","SEVERITY_INFO"]}}`, "logRules.severities[1]"},
			{`{"timeBucketMs":"0"}`, "timeBucketMs: must be a positive multiple of 3600000"},
			{`{"timeBucketMs":"-3600000"}`, "timeBucketMs"},
			{`{"timeBucketMs":"1800000"}`, "timeBucketMs"},
			{`{"timeBucketMs":"90000000"}`, "timeBucketMs"}, // beyond a day
			{`{"timeBucketMs":"1h"}`, "timeBucketMs"},
			{`{"timeBucketMs":"123456789012345678901"}`, "timeBucketMs"},
			{`{"applicationRule":{"name":"` + strings.Repeat("a,", 50) + `a","ruleTypeId":"RULE_TYPE_ID_IS"}}`, "applicationRule.name: an RULE_TYPE_ID_IS rule lists at most 50"},
		}
		for _, c := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, forecastPath, key, c.body), 400, c.frag)
		}
		// 50 values are fine.
		ask(key, `{"applicationRule":{"name":"`+strings.Repeat("a,", 49)+`a","ruleTypeId":"RULE_TYPE_ID_IS"}}`)
	})
}

type testResults struct {
	TestPoliciesBulkResult []struct {
		MetaFieldsValues struct{ ApplicationNameValues, SubsystemNameValues, SeverityValues string }
		Matched          bool
		Policy           policyOut
	}
}

func TestBulkTestLogPolicies(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		create(t, env, key, `{"name":"batch debug","priority":"PRIORITY_TYPE_BLOCK","applicationRule":{"name":"batch-","ruleTypeId":"RULE_TYPE_ID_START_WITH"},"logRules":{"severities":["SEVERITY_DEBUG"]}}`)
		create(t, env, key, `{"name":"errors","priority":"PRIORITY_TYPE_HIGH","logRules":{"severities":["SEVERITY_ERROR","SEVERITY_CRITICAL"]}}`)
		create(t, env, key, `{"name":"off","disabled":true,"priority":"PRIORITY_TYPE_LOW","logRules":{"severities":[]}}`)
		create(t, env, key, `{"name":"dpxl","priority":"PRIORITY_TYPE_LOW","logRules":{"severities":[],"dpxlExpression":"<v1> true"}}`)
		create(t, env, key, `{"name":"all but web","priority":"PRIORITY_TYPE_LOW","subsystemRule":{"name":"web","ruleTypeId":"RULE_TYPE_ID_IS_NOT"},"logRules":{"severities":[]}}`)
		create(t, env, key, `{"name":"span","priority":"PRIORITY_TYPE_LOW","spanRules":{}}`) // not a log policy
		body := `{"metaFieldsValuesList":[
			{"applicationNameValues":"batch-nightly","subsystemNameValues":"loader","severityValues":"debug"},
			{"applicationNameValues":"shop","subsystemNameValues":"web","severityValues":"SEVERITY_ERROR"},
			{"applicationNameValues":"shop","subsystemNameValues":"api","severityValues":"Info"}]}`
		got := apitest.Decode[testResults](t, env.JSON(t, http.MethodPost, testPath, key, body)).TestPoliciesBulkResult
		want := []string{
			"batch-nightly/batch debug:true", "batch-nightly/errors:false", "batch-nightly/off:false", "batch-nightly/dpxl:false", "batch-nightly/all but web:true",
			"shop/batch debug:false", "shop/errors:true", "shop/off:false", "shop/dpxl:false", "shop/all but web:false",
			"shop/batch debug:false", "shop/errors:false", "shop/off:false", "shop/dpxl:false", "shop/all but web:true",
		}
		if len(got) != len(want) {
			t.Fatalf("%d results, want %d", len(got), len(want))
		}
		for i, r := range got {
			if s := fmt.Sprintf("%s/%s:%v", r.MetaFieldsValues.ApplicationNameValues, r.Policy.Name, r.Matched); s != want[i] {
				t.Fatalf("result %d: %s, want %s", i, s, want[i])
			}
			if r.Policy.ID == "" || r.Policy.Order == 0 {
				t.Fatalf("result %d policy %+v", i, r.Policy)
			}
		}
		if got[0].MetaFieldsValues.SeverityValues != "debug" {
			t.Fatalf("entry echoed as %+v", got[0].MetaFieldsValues)
		}
		// No entries, or a team without log policies: no results.
		if r := apitest.Decode[testResults](t, env.JSON(t, http.MethodPost, testPath, key, `{"metaFieldsValuesList":[]}`)); len(r.TestPoliciesBulkResult) != 0 {
			t.Fatalf("empty list %+v", r)
		}
		if r := apitest.Decode[testResults](t, env.JSON(t, http.MethodPost, testPath, otherKey, body)); len(r.TestPoliciesBulkResult) != 0 {
			t.Fatalf("other team %+v", r)
		}
		entry := `{"applicationNameValues":"a","subsystemNameValues":"b","severityValues":"info"}`
		fifty := `{"metaFieldsValuesList":[` + strings.TrimSuffix(strings.Repeat(entry+",", 50), ",") + `]}`
		if r := apitest.Decode[testResults](t, env.JSON(t, http.MethodPost, testPath, key, fifty)); len(r.TestPoliciesBulkResult) != 250 {
			t.Fatalf("50 entries: %d results", len(r.TestPoliciesBulkResult))
		}
		bad := []struct{ body, frag string }{
			{`{}`, "metaFieldsValuesList"},
			{`{"metaFieldsValuesList":[` + strings.TrimSuffix(strings.Repeat(entry+",", 51), ",") + `]}`, "metaFieldsValuesList"},
			{`{"metaFieldsValuesList":[{"applicationNameValues":"a","subsystemNameValues":"b","severityValues":"loud"}]}`, "metaFieldsValuesList[0].severityValues: must name a severity"},
			{`{"metaFieldsValuesList":[{"applicationNameValues":"a","subsystemNameValues":"b","severityValues":"unspecified"}]}`, "metaFieldsValuesList[0].severityValues"},
			{`{"metaFieldsValuesList":[{"applicationNameValues":"","subsystemNameValues":"b","severityValues":"info"}]}`, "metaFieldsValuesList[0].applicationNameValues"},
			{`{"metaFieldsValuesList":[{"applicationNameValues":"a","severityValues":"info"}]}`, "metaFieldsValuesList[0].subsystemNameValues"},
			{`{"metaFieldsValuesList":[{"applicationNameValues":"` + strings.Repeat("a", 1025) + `","subsystemNameValues":"b","severityValues":"info"}]}`, "metaFieldsValuesList[0].applicationNameValues"},
		}
		for _, c := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, testPath, key, c.body), 400, c.frag)
		}
	})
}

func TestLatin1Message(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, logBody("x", `,"description":"日本"`)), 400,
			"description: must hold only Latin-1 characters (U+0000 to U+00FF)")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, createPath, key, logBody("ā", "")), 400,
			"name: must hold only Latin-1 characters")
	})
}
