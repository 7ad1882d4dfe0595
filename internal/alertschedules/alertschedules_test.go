package alertschedules_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/alertschedules"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	rulesPath = "/mgmt/openapi/latest/alerts/suppression-rules/v1"
	bulkPath  = rulesPath + "/all/rules"
)

type timeframe struct {
	StartTime          string `json:"startTime"`
	EndTime            string `json:"endTime"`
	Timezone           string `json:"timezone"`
	SubmittedStartTime string `json:"submittedStartTime"`
}

type ruleOut struct {
	ID               string `json:"id"`
	UniqueIdentifier string `json:"uniqueIdentifier"`
	Name             string `json:"name"`
	Enabled          *bool  `json:"enabled"`
	CreatedAt        string `json:"createdAt"`
	UpdatedAt        string `json:"updatedAt"`
	Filter           json.RawMessage
	Schedule         struct {
		ScheduleOperation string `json:"scheduleOperation"`
		OneTime           *struct {
			Timeframe timeframe `json:"timeframe"`
		} `json:"oneTime"`
	} `json:"schedule"`
}

type envelope struct {
	AlertSchedulerRule ruleOut `json:"alertSchedulerRule"`
}

type page struct {
	AlertSchedulerRules []struct {
		AlertSchedulerRule   ruleOut     `json:"alertSchedulerRule"`
		NextActiveTimeframes []timeframe `json:"nextActiveTimeframes"`
	} `json:"alertSchedulerRules"`
	NextPageToken string `json:"nextPageToken"`
}

// oneTimeRule is a one-time rule body (the inside of alertSchedulerRule) with the filter given.
func oneTimeRule(name, filter, start, end, zone string) string {
	f := ""
	if filter != "" {
		f = `"filter":` + filter + `,`
	}
	return fmt.Sprintf(`{"name":%q,"enabled":true,%s"schedule":{"oneTime":{"timeframe":{"startTime":%q,"endTime":%q,"timezone":%q}}}}`,
		name, f, start, end, zone)
}

const dailyBerlin = `{"name":"nightly","enabled":true,"filter":{"alertMetaLabels":{"value":[{"key":"team","value":"db"}]}},` +
	`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","recurring":{"schedule":{"repeatEvery":1,"daily":{},` +
	`"timeframe":{"startTime":"2026-03-01T02:30:00","duration":{"forOver":1,"frequency":"DURATION_FREQUENCY_HOUR"},"timezone":"Europe/Berlin"}}}}}`

func create(t *testing.T, env *apitest.Env, key, rule string) ruleOut {
	t.Helper()
	return apitest.Decode[envelope](t, env.JSON(t, http.MethodPost, rulesPath, key, `{"alertSchedulerRule":`+rule+`}`)).AlertSchedulerRule
}

func list(t *testing.T, env *apitest.Env, key, query string) page {
	t.Helper()
	return apitest.Decode[page](t, env.JSON(t, http.MethodGet, rulesPath+query, key, ""))
}

func TestCreateGetReplaceDelete(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "a")
		r := create(t, env, key, oneTimeRule("window", `{"alertUniqueIds":{"value":["def-1"]}}`, "2026-06-01T22:00:00", "2026-06-02T02:00:00", "UTC+2"))
		if r.ID == "" || r.UniqueIdentifier == "" || r.ID == r.UniqueIdentifier || r.CreatedAt == "" || r.Enabled == nil || !*r.Enabled {
			t.Fatalf("created %+v", r)
		}
		if r.Schedule.ScheduleOperation != "SCHEDULE_OPERATION_MUTE" {
			t.Fatalf("operation %q, want the default MUTE answered", r.Schedule.ScheduleOperation)
		}
		if tf := r.Schedule.OneTime.Timeframe; tf.SubmittedStartTime != "2026-06-01T22:00:00" {
			t.Fatalf("create answers submittedStartTime %+v", tf)
		}
		g := apitest.Decode[envelope](t, env.JSON(t, http.MethodGet, rulesPath+"/"+r.UniqueIdentifier, key, "")).AlertSchedulerRule
		if g.ID != r.ID || g.Name != "window" || g.Schedule.OneTime.Timeframe.SubmittedStartTime != "" || g.Schedule.OneTime.Timeframe.Timezone != "UTC+2" {
			t.Fatalf("read back %+v", g)
		}
		up := apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, rulesPath, key,
			`{"alertSchedulerRule":{"uniqueIdentifier":"`+r.UniqueIdentifier+`","name":"renamed","schedule":{"recurring":{"alwaysActive":{}}}}}`)).AlertSchedulerRule
		if up.UniqueIdentifier != r.UniqueIdentifier || up.ID == r.ID || up.CreatedAt != r.CreatedAt || up.Enabled == nil || *up.Enabled {
			t.Fatalf("replaced %+v (was %+v): want a new version id, the same createdAt, enabled false when left out", up, r)
		}
		// The version ids filter finds the current version only.
		if p := list(t, env, key, "?alert_scheduler_rules_ids.alertSchedulerVersionIds.alertSchedulerRuleVersionIds="+r.ID); len(p.AlertSchedulerRules) != 0 {
			t.Fatalf("old version id still lists %+v", p)
		}
		if p := list(t, env, key, "?alert_scheduler_rules_ids[alertSchedulerVersionIds][alertSchedulerRuleVersionIds]="+up.ID); len(p.AlertSchedulerRules) != 1 {
			t.Fatalf("current version id lists %+v", p)
		}
		if res := env.JSON(t, http.MethodDelete, rulesPath+"/"+r.UniqueIdentifier, key, ""); res.Status != 200 || strings.TrimSpace(string(res.Body)) != "{}" {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath+"/"+r.UniqueIdentifier, key, ""), 404, "alert_scheduler_rule_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, rulesPath+"/"+r.UniqueIdentifier, key, ""), 404, "alert_scheduler_rule_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, `{"alertSchedulerRule":`+strings.Replace(dailyBerlin, `{"name"`, `{"uniqueIdentifier":"`+r.UniqueIdentifier+`","name"`, 1)+`}`),
			404, "alertSchedulerRule.uniqueIdentifier")
	})
}

func TestBadBodiesNameTheField(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "a")
		dyn := func(inner string) string {
			return `{"name":"r","schedule":{"recurring":{"schedule":{` + inner + `}}}}`
		}
		tf := `"timeframe":{"startTime":"2026-01-01T00:00","endTime":"2026-01-01T01:00","timezone":"UTC"}`
		cases := []struct {
			name, rule string
			status     int
			fragments  []string
		}{
			{"no name", `{"schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.name: required"}},
			{"blank name", `{"name":"  ","schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.name"}},
			{"long name", `{"name":"` + strings.Repeat("n", 256) + `","schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.name"}},
			{"no schedule", `{"name":"r"}`, 400, []string{"alertSchedulerRule.schedule: required"}},
			{"both windows", `{"name":"r","schedule":{"oneTime":{` + tf + `},"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.schedule: exactly one of oneTime and recurring"}},
			{"bad zone", oneTimeRule("r", "", "2026-01-01T00:00", "2026-01-02T00:00", "Europe/Atlantis"), 400, []string{"alertSchedulerRule.schedule.oneTime.timeframe.timezone", "Europe/Atlantis"}},
			{"end before start", oneTimeRule("r", "", "2026-01-02T00:00", "2026-01-01T00:00", "UTC"), 400, []string{"alertSchedulerRule.schedule.oneTime.timeframe.endTime: must be after startTime"}},
			{"end and duration", `{"name":"r","schedule":{"oneTime":{"timeframe":{"startTime":"2026-01-01T00:00","endTime":"2026-01-02T00:00","duration":{"forOver":1,"frequency":"DURATION_FREQUENCY_DAY"}}}}}`, 400, []string{"timeframe: exactly one of endTime and duration, not both"}},
			{"bad frequency enum", `{"name":"r","schedule":{"oneTime":{"timeframe":{"startTime":"2026-01-01T00:00","duration":{"forOver":1,"frequency":"WEEKS"}}}}}`, 400, []string{"frequency"}},
			{"bad operation enum", `{"name":"r","schedule":{"scheduleOperation":"SNOOZE","recurring":{"alwaysActive":{}}}}`, 400, []string{"scheduleOperation"}},
			{"always with a field", `{"name":"r","schedule":{"recurring":{"alwaysActive":{"x":1}}}}`, 400, []string{"alwaysActive"}},
			{"no frequency", dyn(tf), 400, []string{"alertSchedulerRule.schedule.recurring.schedule: exactly one of daily, weekly and monthly is required"}},
			{"weekday 8", dyn(`"weekly":{"daysOfWeek":[1,8]},` + tf), 400, []string{"alertSchedulerRule.schedule.recurring.schedule.weekly.daysOfWeek[1]: must be 1 (Sunday) to 7 (Saturday), not 8"}},
			{"month day 0", dyn(`"monthly":{"daysOfMonth":[0]},` + tf), 400, []string{"monthly.daysOfMonth[0]: must be 1 to 31, not 0"}},
			{"repeat too often", dyn(`"daily":{},"repeatEvery":1001,` + tf), 400, []string{"repeatEvery"}},
			{"bad termination", dyn(`"daily":{},"terminationDate":"soon",` + tf), 400, []string{"terminationDate", "is not a date"}},
			{"both filters, one empty", `{"name":"r","filter":{"alertUniqueIds":{},"alertMetaLabels":{"value":[{"key":"k"}]}},"schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.filter: at most one of alertMetaLabels and alertUniqueIds"}},
			{"both filters", `{"name":"r","filter":{"alertUniqueIds":{"value":["a"]},"alertMetaLabels":{"value":[{"key":"k"}]}},"schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.filter: at most one of alertMetaLabels and alertUniqueIds"}},
			{"label without key", `{"name":"r","filter":{"alertMetaLabels":{"value":[{"value":"v"}]}},"schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"alertSchedulerRule.filter.alertMetaLabels.value[0].key: required"}},
			{"string for bool", `{"name":"r","enabled":"yes","schedule":{"recurring":{"alwaysActive":{}}}}`, 400, []string{"enabled"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, `{"alertSchedulerRule":`+c.rule+`}`), c.status, c.fragments...)
			})
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, `{"alertSchedulerRule":`+dailyBerlin+`}`), 400, "alertSchedulerRule.uniqueIdentifier: required")
		if p := list(t, env, key, ""); len(p.AlertSchedulerRules) != 0 {
			t.Fatalf("refused bodies stored %+v", p)
		}
		for _, q := range []struct{ query, fragment string }{
			{"?active_timeframe[startTime]=2026-01-01T00:00&active_timeframe[endTime]=2026-01-02T00:00&active_timeframe[timezone]=Moon/Base", "active_timeframe.timezone"},
			{"?active_timeframe[startTime]=2026-01-02T00:00&active_timeframe[endTime]=2026-01-01T00:00", "active_timeframe.endTime: must be after startTime"},
			{"?active_timeframe[startTime]=2026-01-02T00:00", "active_timeframe: startTime and endTime are both required"},
			{"?alert_scheduler_rules_ids[alertSchedulerIds][alertSchedulerRuleIds]=a&alert_scheduler_rules_ids[alertSchedulerVersionIds][alertSchedulerRuleVersionIds]=b", "alert_scheduler_rules_ids: at most one"},
			{"?next_page_token=garbage", "next_page_token"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath+q.query, key, ""), 400, q.fragment)
		}
	})
}

func TestBulkIsAllOrNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "a")
		good := oneTimeRule("good", "", "2026-01-01T00:00", "2026-01-02T00:00", "UTC")
		bad := oneTimeRule("bad", "", "2026-01-01T00:00", "2026-01-02T00:00", "Nowhere/Zone")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, bulkPath, key,
			`{"createAlertSchedulerRuleRequests":[{"alertSchedulerRule":`+good+`},{"alertSchedulerRule":`+bad+`}]}`),
			400, "createAlertSchedulerRuleRequests[1].alertSchedulerRule.schedule.oneTime.timeframe.timezone")
		if p := list(t, env, key, ""); len(p.AlertSchedulerRules) != 0 {
			t.Fatalf("a refused bulk create stored %+v", p)
		}
		res := apitest.Decode[struct {
			CreateSuppressionResponses []envelope `json:"createSuppressionResponses"`
		}](t, env.JSON(t, http.MethodPost, bulkPath, key,
			`{"createAlertSchedulerRuleRequests":[{"alertSchedulerRule":`+good+`},{"alertSchedulerRule":`+dailyBerlin+`}]}`))
		if len(res.CreateSuppressionResponses) != 2 || res.CreateSuppressionResponses[1].AlertSchedulerRule.Name != "nightly" {
			t.Fatalf("bulk create answered %+v", res)
		}
		a, b := res.CreateSuppressionResponses[0].AlertSchedulerRule, res.CreateSuppressionResponses[1].AlertSchedulerRule
		upd := func(id, name string) string {
			return `{"alertSchedulerRule":{"uniqueIdentifier":"` + id + `","name":"` + name + `","enabled":true,"schedule":{"recurring":{"alwaysActive":{}}}}}`
		}
		// An unknown rule in the middle changes nothing.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, bulkPath, key,
			`{"updateAlertSchedulerRuleRequests":[`+upd(a.UniqueIdentifier, "a2")+`,`+upd("missing", "x")+`]}`),
			404, "updateAlertSchedulerRuleRequests[1].alertSchedulerRule.uniqueIdentifier", "missing")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, bulkPath, key,
			`{"updateAlertSchedulerRuleRequests":[`+upd(a.UniqueIdentifier, "a2")+`,`+upd(a.UniqueIdentifier, "a3")+`]}`),
			400, "updateAlertSchedulerRuleRequests[1].alertSchedulerRule.uniqueIdentifier", "name each rule once")
		if g := apitest.Decode[envelope](t, env.JSON(t, http.MethodGet, rulesPath+"/"+a.UniqueIdentifier, key, "")).AlertSchedulerRule; g.Name != "good" || g.ID != a.ID {
			t.Fatalf("a refused bulk update changed %+v", g)
		}
		ok := apitest.Decode[struct {
			UpdateSuppressionResponses []envelope `json:"updateSuppressionResponses"`
		}](t, env.JSON(t, http.MethodPut, bulkPath, key,
			`{"updateAlertSchedulerRuleRequests":[`+upd(b.UniqueIdentifier, "b2")+`,`+upd(a.UniqueIdentifier, "a2")+`]}`))
		if len(ok.UpdateSuppressionResponses) != 2 || ok.UpdateSuppressionResponses[0].AlertSchedulerRule.Name != "b2" ||
			ok.UpdateSuppressionResponses[1].AlertSchedulerRule.UniqueIdentifier != a.UniqueIdentifier {
			t.Fatalf("bulk update answered %+v", ok)
		}
		var names []string
		for _, r := range list(t, env, key, "").AlertSchedulerRules {
			names = append(names, r.AlertSchedulerRule.Name)
		}
		if strings.Join(names, ",") != "a2,b2" {
			t.Fatalf("after bulk update %v", names)
		}
		empty := env.JSON(t, http.MethodPost, bulkPath, key, `{"createAlertSchedulerRuleRequests":[]}`)
		if empty.Status != 200 || !strings.Contains(string(empty.Body), `"createSuppressionResponses":[]`) {
			t.Fatalf("empty bulk create: %d %s", empty.Status, empty.Body)
		}
		many := make([]string, 501)
		for i := range many {
			many[i] = `{"alertSchedulerRule":` + good + `}`
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, bulkPath, key, `{"createAlertSchedulerRuleRequests":[`+strings.Join(many, ",")+`]}`), 400, "createAlertSchedulerRuleRequests")
	})
}

func TestListFiltersTimeframesAndPages(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "a")
		night := create(t, env, key, dailyBerlin)
		off := create(t, env, key, strings.Replace(oneTimeRule("june", "", "2026-06-01T22:00:00", "2026-06-02T02:00:00", "UTC"), `"enabled":true`, `"enabled":false`, 1))
		if p := list(t, env, key, "?enabled=true"); len(p.AlertSchedulerRules) != 1 || p.AlertSchedulerRules[0].AlertSchedulerRule.UniqueIdentifier != night.UniqueIdentifier {
			t.Fatalf("enabled=true lists %+v", p)
		}
		if p := list(t, env, key, "?enabled=false"); len(p.AlertSchedulerRules) != 1 || p.AlertSchedulerRules[0].AlertSchedulerRule.UniqueIdentifier != off.UniqueIdentifier {
			t.Fatalf("enabled=false lists %+v", p)
		}
		if p := list(t, env, key, "?alert_scheduler_rules_ids.alertSchedulerIds.alertSchedulerRuleIds="+off.UniqueIdentifier+"&alert_scheduler_rules_ids.alertSchedulerIds.alertSchedulerRuleIds=other"); len(p.AlertSchedulerRules) != 1 ||
			p.AlertSchedulerRules[0].AlertSchedulerRule.Name != "june" {
			t.Fatalf("by id lists %+v", p)
		}
		// The spring-forward day in Berlin: the nightly window is 03:30–04:30 CEST.
		q := "?active_timeframe[startTime]=" + url.QueryEscape("2026-03-29T00:00:00") + "&active_timeframe[endTime]=" + url.QueryEscape("2026-03-30T00:00:00") +
			"&active_timeframe[timezone]=Europe/Berlin"
		p := list(t, env, key, q)
		if len(p.AlertSchedulerRules) != 1 || p.AlertSchedulerRules[0].AlertSchedulerRule.Name != "nightly" {
			t.Fatalf("active on 29 March: %+v", p)
		}
		tfs := p.AlertSchedulerRules[0].NextActiveTimeframes
		if len(tfs) != 1 || tfs[0].StartTime != "2026-03-29T03:30:00+02:00" || tfs[0].EndTime != "2026-03-29T04:30:00+02:00" || tfs[0].Timezone != "Europe/Berlin" {
			t.Fatalf("29 March timeframes %+v", tfs)
		}
		// June 2: both rules have a window then.
		p = list(t, env, key, "?active_timeframe.startTime=2026-06-01T23:00:00Z&active_timeframe.endTime=2026-06-02T01:00:00Z")
		if len(p.AlertSchedulerRules) != 2 {
			t.Fatalf("active around 2 June: %+v", p)
		}
		// Without a window asked, each rule answers its current or next window.
		for _, r := range list(t, env, key, "").AlertSchedulerRules {
			if r.AlertSchedulerRule.Name == "nightly" && len(r.NextActiveTimeframes) != 1 {
				t.Fatalf("nightly next windows %+v", r.NextActiveTimeframes)
			}
		}
		// Pages of 200.
		bodies := make([]string, 250)
		for i := range bodies {
			bodies[i] = `{"alertSchedulerRule":{"name":"r` + fmt.Sprint(i) + `","schedule":{"recurring":{"alwaysActive":{}}}}}`
		}
		if res := env.JSON(t, http.MethodPost, bulkPath, key, `{"createAlertSchedulerRuleRequests":[`+strings.Join(bodies, ",")+`]}`); res.Status != 200 {
			t.Fatalf("bulk: %d %.300s", res.Status, res.Body)
		}
		first := list(t, env, key, "")
		if len(first.AlertSchedulerRules) != 200 || first.NextPageToken == "" {
			t.Fatalf("first page: %d rules, token %q", len(first.AlertSchedulerRules), first.NextPageToken)
		}
		second := list(t, env, key, "?next_page_token="+url.QueryEscape(first.NextPageToken))
		if len(second.AlertSchedulerRules) != 52 || second.NextPageToken != "" {
			t.Fatalf("second page: %d rules, token %q", len(second.AlertSchedulerRules), second.NextPageToken)
		}
		seen := map[string]bool{}
		for _, pg := range []page{first, second} {
			for _, r := range pg.AlertSchedulerRules {
				if seen[r.AlertSchedulerRule.UniqueIdentifier] {
					t.Fatalf("rule %s on two pages", r.AlertSchedulerRule.UniqueIdentifier)
				}
				seen[r.AlertSchedulerRule.UniqueIdentifier] = true
			}
		}
	})
}

func TestTeamIsolationAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamA, a := env.MustTeam(t, "a")
		_, b := env.MustTeam(t, "b")
		r := create(t, env, a, dailyBerlin)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath+"/"+r.UniqueIdentifier, b, ""), 404, "alert_scheduler_rule_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, rulesPath+"/"+r.UniqueIdentifier, b, ""), 404, "alert_scheduler_rule_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, b,
			`{"alertSchedulerRule":{"uniqueIdentifier":"`+r.UniqueIdentifier+`","name":"x","schedule":{"recurring":{"alwaysActive":{}}}}}`), 404, "alertSchedulerRule.uniqueIdentifier")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, bulkPath, b,
			`{"updateAlertSchedulerRuleRequests":[{"alertSchedulerRule":{"uniqueIdentifier":"`+r.UniqueIdentifier+`","name":"x","schedule":{"recurring":{"alwaysActive":{}}}}}]}`), 404, "uniqueIdentifier")
		if p := list(t, env, b, "?alert_scheduler_rules_ids.alertSchedulerIds.alertSchedulerRuleIds="+r.UniqueIdentifier); len(p.AlertSchedulerRules) != 0 {
			t.Fatalf("team b lists %+v", p)
		}
		if g := apitest.Decode[envelope](t, env.JSON(t, http.MethodGet, rulesPath+"/"+r.UniqueIdentifier, a, "")).AlertSchedulerRule; g.Name != "nightly" {
			t.Fatalf("team a lost its rule: %+v", g)
		}
		// Team b's rules never silence team a's alerts.
		if _, ok, err := alertschedules.Suppressing(context.Background(), env.DB.Read(), teamA+1000, "d", map[string]string{"team": "db"}, time.Date(2026, 3, 29, 1, 45, 0, 0, time.UTC)); err != nil || ok {
			t.Fatalf("another team's rule silences: %v %v", ok, err)
		}

		reader := env.MustKey(t, a, "suppression-rules:ReadConfig")
		for _, path := range []string{rulesPath, rulesPath + "/" + r.UniqueIdentifier} {
			if res := env.JSON(t, http.MethodGet, path, reader, ""); res.Status != 200 {
				t.Fatalf("reader GET %s: %d %s", path, res.Status, res.Body)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, reader, `{"alertSchedulerRule":`+dailyBerlin+`}`), 403, "suppression-rules:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, bulkPath, reader, `{"createAlertSchedulerRuleRequests":[]}`), 403, "suppression-rules:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, bulkPath, reader, `{"updateAlertSchedulerRuleRequests":[]}`), 403, "suppression-rules:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, rulesPath+"/"+r.UniqueIdentifier, reader, ""), 403, "suppression-rules:UpdateConfig")
		writer := env.MustKey(t, a, "suppression-rules:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath, writer, ""), 403, "suppression-rules:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath+"/"+r.UniqueIdentifier, writer, ""), 403, "suppression-rules:ReadConfig")
		if res := env.JSON(t, http.MethodPost, rulesPath, writer, `{"alertSchedulerRule":`+dailyBerlin+`}`); res.Status != 200 {
			t.Fatalf("writer create: %d %s", res.Status, res.Body)
		}
		other := env.MustKey(t, a, "alerts:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rulesPath, other, ""), 403, "suppression-rules:ReadConfig")
	})
}

func TestSuppressing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "a")
		night := create(t, env, key, dailyBerlin)
		byID := create(t, env, key, oneTimeRule("one alert", `{"alertUniqueIds":{"value":["def-7"]}}`, "2026-06-01T22:00:00", "2026-06-02T02:00:00", "UTC+2"))
		activate := create(t, env, key, `{"name":"business hours only","enabled":true,"filter":{"alertMetaLabels":{"value":[{"key":"tier","value":"office"}]}},`+
			`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_ACTIVATE","recurring":{"schedule":{"weekly":{"daysOfWeek":[2,3,4,5,6]},`+
			`"timeframe":{"startTime":"2026-01-05T09:00:00","endTime":"2026-01-05T17:00:00","timezone":"America/New_York"}}}}}`)
		disabled := create(t, env, key, strings.Replace(oneTimeRule("disabled", "", "2026-01-01T00:00", "2030-01-01T00:00", "UTC"), `"enabled":true`, `"enabled":false`, 1))
		_ = disabled
		q := env.DB.Read()
		cases := []struct {
			name   string
			def    string
			labels map[string]string
			at     time.Time
			want   string
		}{
			{"nightly on spring forward, inside", "d", map[string]string{"team": "db"}, time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC), night.UniqueIdentifier},
			{"nightly on spring forward, end exclusive", "d", map[string]string{"team": "db"}, time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC), ""},
			{"nightly, other team label", "d", map[string]string{"team": "web"}, time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC), ""},
			{"nightly on fall back", "d", map[string]string{"team": "db"}, time.Date(2026, 10, 25, 2, 29, 59, 0, time.UTC), night.UniqueIdentifier},
			{"by alert id, start inclusive", "def-7", nil, time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC), byID.UniqueIdentifier},
			{"by alert id, before", "def-7", nil, time.Date(2026, 6, 1, 19, 59, 59, 0, time.UTC), ""},
			{"by alert id, other alert", "def-8", nil, time.Date(2026, 6, 1, 21, 0, 0, 0, time.UTC), ""},
			{"activate: Monday noon in New York lets through", "d", map[string]string{"tier": "office"}, time.Date(2026, 3, 9, 16, 0, 0, 0, time.UTC), ""},
			{"activate: Monday night is silenced", "d", map[string]string{"tier": "office"}, time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC), activate.UniqueIdentifier},
			{"activate: Sunday is silenced", "d", map[string]string{"tier": "office"}, time.Date(2026, 3, 8, 16, 0, 0, 0, time.UTC), activate.UniqueIdentifier},
		}
		for _, c := range cases {
			id, ok, err := alertschedules.Suppressing(context.Background(), q, teamID, c.def, c.labels, c.at)
			if err != nil || ok != (c.want != "") || id != c.want {
				t.Errorf("%s: (%q, %v, %v), want %q", c.name, id, ok, err, c.want)
			}
		}
	})
}

// TestAnEmptyAlertIdsFilterMatchesEveryAlert: a filter of alertUniqueIds {} or {"value": []} (as
// clients send "all alerts") is accepted, answered as sent, and the rule silences every alert of
// the team, whatever its definition and labels; so does an empty alertMetaLabels. Both at once,
// even empty, stay a 400 (the public document makes them alternatives).
func TestAnEmptyAlertIdsFilterMatchesEveryAlert(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "a")
		for _, filter := range []string{`{"alertUniqueIds":{}}`, `{"alertUniqueIds":{"value":[]}}`, `{"alertMetaLabels":{}}`} {
			res := env.JSON(t, http.MethodPost, rulesPath, key, `{"alertSchedulerRule":`+oneTimeRule("all", filter, "2026-06-01T00:00:00", "2026-06-02T00:00:00", "UTC")+`}`)
			if res.Status != http.StatusOK {
				t.Fatalf("filter %s: %d %s", filter, res.Status, res.Body)
			}
			got := apitest.Decode[struct {
				AlertSchedulerRule struct {
					UniqueIdentifier string
					Filter           json.RawMessage
				}
			}](t, res).AlertSchedulerRule
			if !strings.Contains(string(got.Filter), `"alertUniqueIds":{`) && !strings.Contains(string(got.Filter), `"alertMetaLabels":{`) {
				t.Errorf("filter %s answered as %s", filter, got.Filter)
			}
			at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
			labels := map[string]string{"tier": "web"}
			for _, def := range []string{"def-1", "def-2", ""} {
				id, ok, err := alertschedules.Suppressing(context.Background(), env.DB.Read(), teamID, def, labels, at)
				if err != nil || !ok || id != got.UniqueIdentifier {
					t.Errorf("filter %s, definition %q: (%q, %v, %v), want the rule %q", filter, def, id, ok, err, got.UniqueIdentifier)
				}
			}
			if res := env.JSON(t, http.MethodDelete, rulesPath+"/"+got.UniqueIdentifier, key, ""); res.Status != http.StatusOK {
				t.Fatalf("delete: %d %s", res.Status, res.Body)
			}
		}
	})
}
