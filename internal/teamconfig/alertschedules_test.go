package teamconfig_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// The alert scheduler rules' area (alertSchedulerRules).

const (
	// oneTimeWindow is a one-time muting window in a fixed-offset zone, for two alert
	// definitions.
	oneTimeWindow = `{"name":"release freeze","description":"d","enabled":true,"metaLabels":[{"key":"owner","value":"sre"}],` +
		`"filter":{"alertUniqueIds":{"value":["def-7","def-8"]}},"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE",` +
		`"oneTime":{"timeframe":{"startTime":"2026-06-01T22:00:00","endTime":"2026-06-02T02:00:00","timezone":"UTC+2"}}}}`
	// weeklyBerlin is a recurring window in an IANA zone that lets alerts through only during
	// office hours, by labels (one without a value), enabled left out.
	weeklyBerlin = `{"name":"office hours","filter":{"alertMetaLabels":{"value":[{"key":"team","value":"db"},{"key":"tier"}]}},` +
		`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_ACTIVATE","recurring":{"schedule":{"repeatEvery":2,"weekly":{"daysOfWeek":[2,4,6]},` +
		`"timeframe":{"startTime":"2026-01-05T09:00","duration":{"forOver":8,"frequency":"DURATION_FREQUENCY_HOUR"},"timezone":"Europe/Berlin"},` +
		`"terminationDate":"2027-12-31"}}}}`
	// sparseWindow leaves out what the create fills in (the operation, the zone), gives an
	// empty endTime beside a duration and an RFC 3339 start with an offset.
	sparseWindow = `{"name":"sparse","schedule":{"scheduleOperation":"SCHEDULE_OPERATION_UNSPECIFIED","oneTime":{"timeframe":` +
		`{"startTime":"2026-07-01T00:00:00+02:00","endTime":"","duration":{"forOver":90,"frequency":"DURATION_FREQUENCY_MINUTE"}}}}}`
)

// schedulerRule answers the team's rule uid as GetAlertSchedulerRule does, as a generic value.
func schedulerRule(t *testing.T, env *apitest.Env, key, uid string) map[string]any {
	t.Helper()
	return apitest.Decode[struct{ AlertSchedulerRule map[string]any }](t,
		env.JSON(t, http.MethodGet, schedulerRules+"/"+url.PathEscape(uid), key, "")).AlertSchedulerRule
}

// withoutServerFields is a rule answer without the version id and the times.
func withoutServerFields(rule map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range rule {
		if k != "id" && k != "createdAt" && k != "updatedAt" {
			out[k] = v
		}
	}
	return out
}

// onlyActions fails unless the plan changes nothing but what want counts ("area action" → n).
func onlyActions(t *testing.T, p plan, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for k, n := range actions(p) {
		if !strings.HasSuffix(k, " unchanged") {
			got[k] = n
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plan %v, want %v", got, want)
	}
}

// TestAlertSchedulerRulesCopy: rules made over the HTTP operations (one-time and recurring, with
// zones) export without their version ids and times, apply to another team as creates under the
// same uniqueIdentifiers, read back there as in the source, export the same text, and applying
// the document again to either team changes nothing. Prune in one team leaves the other alone.
func TestAlertSchedulerRulesCopy(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, source := env.MustTeam(t, "source")
		var uids []string
		for _, rule := range []string{oneTimeWindow, weeklyBerlin, sparseWindow} {
			created := apitest.Decode[struct {
				AlertSchedulerRule struct{ ID, UniqueIdentifier string }
			}](t, apitest.Response{Status: 200,
				Body: mustCreate(t, env, source, http.MethodPost, schedulerRules, `{"alertSchedulerRule":`+rule+`}`)}).AlertSchedulerRule
			uids = append(uids, created.UniqueIdentifier)
			doc := mustExport(t, env, source, false)
			if strings.Contains(doc, created.ID) {
				t.Errorf("the export holds the version id %s:\n%s", created.ID, doc)
			}
		}
		doc := mustExport(t, env, source, false)
		for _, server := range []string{"createdAt", "updatedAt", "submittedStartTime"} {
			if strings.Contains(doc, server) {
				t.Errorf("the export holds %s:\n%s", server, doc)
			}
		}
		for _, want := range []string{"timezone: UTC+2", "timezone: Europe/Berlin", `startTime: "2026-07-01T00:00:00+02:00"`,
			"scheduleOperation: SCHEDULE_OPERATION_MUTE", "enabled: false"} {
			if !strings.Contains(doc, want) {
				t.Errorf("the export lacks %q:\n%s", want, doc)
			}
		}

		_, target := env.MustTeam(t, "target")
		onlyActions(t, mustApply(t, env, target, "", doc), map[string]int{"alertSchedulerRules create": 3})
		if copied := mustExport(t, env, target, false); copied != doc {
			t.Fatalf("the copy exports otherwise:\n--- source\n%s\n--- copy\n%s", doc, copied)
		}
		for _, uid := range uids {
			want, got := withoutServerFields(schedulerRule(t, env, source, uid)), withoutServerFields(schedulerRule(t, env, target, uid))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rule %s in the copy:\n%v\nwant as in the source:\n%v", uid, got, want)
			}
		}
		for _, key := range []string{source, target} {
			if p := mustApply(t, env, key, "", doc); p.Summary["unchanged"] != len(p.Changes) {
				t.Errorf("the same document again: %+v", p)
			}
		}

		onlyActions(t, mustApply(t, env, target, "?prune=true", "alertSchedulerRules: []\n"), map[string]int{"alertSchedulerRules delete": 3})
		if after := mustExport(t, env, source, false); after != doc {
			t.Fatalf("pruning another team changed the source:\n%s", after)
		}
	})
}

// TestAlertSchedulerRulesUpdateAndPrune: a changed rule is an update, as a replace (a new version
// id, the same createdAt); the others stay unchanged; a rule without a uniqueIdentifier gets a
// fresh one; prune deletes the rules the document lacks.
func TestAlertSchedulerRulesUpdateAndPrune(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "rules")
		withUID := func(uid, rule string) string { return `{"uniqueIdentifier":"` + uid + `",` + rule[1:] }
		doc := func(freeze string) string {
			return `{"alertSchedulerRules":[` + withUID("freeze", freeze) + `,` + withUID("office", weeklyBerlin) + `]}`
		}
		onlyActions(t, apitest.Decode[plan](t, apply(t, env, key, "", "application/json", doc(oneTimeWindow))),
			map[string]int{"alertSchedulerRules create": 2})
		before := schedulerRule(t, env, key, "freeze")
		if before["name"] != "release freeze" || before["id"] == "" || before["id"] == nil {
			t.Fatalf("the applied rule: %v", before)
		}

		changed := strings.NewReplacer(`"UTC+2"`, `"Asia/Tokyo"`, `"release freeze"`, `"frozen"`).Replace(oneTimeWindow)
		p := apitest.Decode[plan](t, apply(t, env, key, "", "application/json", doc(changed)))
		if got := changeOf(t, p, "alertSchedulerRules", "freeze"); got != "update" {
			t.Errorf("the changed rule is %s, want update", got)
		}
		if got := changeOf(t, p, "alertSchedulerRules", "office"); got != "unchanged" {
			t.Errorf("the other rule is %s, want unchanged", got)
		}
		after := schedulerRule(t, env, key, "freeze")
		tf := after["schedule"].(map[string]any)["oneTime"].(map[string]any)["timeframe"].(map[string]any)
		if after["name"] != "frozen" || tf["timezone"] != "Asia/Tokyo" {
			t.Errorf("the replaced rule: %v", after)
		}
		if after["id"] == before["id"] || after["createdAt"] != before["createdAt"] {
			t.Errorf("a replace gives a new version id and keeps createdAt: before %v, after %v", before, after)
		}

		p = mustApply(t, env, key, "", "alertSchedulerRules:\n- "+weeklyBerlin+"\n")
		if len(p.Changes) != 1 || p.Changes[0].Action != "create" || p.Changes[0].ID == "" || p.Changes[0].ID == "office" {
			t.Errorf("a rule without uniqueIdentifier: %+v", p.Changes)
		}
		fresh := p.Changes[0].ID

		p = mustApply(t, env, key, "?prune=true", `{"alertSchedulerRules":[`+withUID("office", weeklyBerlin)+`]}`)
		onlyActions(t, p, map[string]int{"alertSchedulerRules delete": 2})
		for _, gone := range []string{"freeze", fresh} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, schedulerRules+"/"+gone, key, ""), 404, "alert_scheduler_rule_id")
		}
		if got := schedulerRule(t, env, key, "office"); got["name"] != "office hours" {
			t.Errorf("the kept rule: %v", got)
		}
	})
}

// TestAlertSchedulerRulesRefused: a rule that CreateAlertSchedulerRule would refuse is a 400 naming
// alertSchedulerRules[i] and the field, and the apply changes nothing (the valid rule before it
// is not created, prune deletes nothing).
func TestAlertSchedulerRulesRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "refused")
		mustApply(t, env, key, "", "alertSchedulerRules:\n- {uniqueIdentifier: kept, name: kept, schedule: {recurring: {alwaysActive: {}}}}\n")
		before := mustExport(t, env, key, false)
		const fine = "- {name: fine, schedule: {recurring: {alwaysActive: {}}}}\n"
		for _, c := range []struct{ name, rule, want string }{
			{"unknown zone", `{name: bad, schedule: {oneTime: {timeframe: {startTime: "2026-06-01T22:00", endTime: "2026-06-02T02:00", timezone: Mars/Olympus}}}}`,
				`alertSchedulerRules[1] ("bad"): schedule.oneTime.timeframe.timezone: unknown time zone "Mars/Olympus"`},
			{"end before start", `{name: bad, schedule: {oneTime: {timeframe: {startTime: "2026-06-02T02:00", endTime: "2026-06-01T22:00"}}}}`,
				`alertSchedulerRules[1] ("bad"): schedule.oneTime.timeframe.endTime: must be after startTime`},
			{"day of week", `{name: bad, schedule: {recurring: {schedule: {weekly: {daysOfWeek: [9]}, timeframe: {startTime: "2026-01-05T09:00", endTime: "2026-01-05T17:00"}}}}}`,
				`alertSchedulerRules[1] ("bad"): schedule.recurring.schedule.weekly.daysOfWeek[0]: must be 1 (Sunday) to 7 (Saturday), not 9`},
			{"two filters", `{name: bad, filter: {alertUniqueIds: {value: [d]}, alertMetaLabels: {value: [{key: k}]}}, schedule: {recurring: {alwaysActive: {}}}}`,
				`alertSchedulerRules[1] ("bad"): filter: at most one of alertMetaLabels and alertUniqueIds`},
			{"no schedule", `{name: bad}`, `alertSchedulerRules[1] ("bad"): schedule: required`},
			{"blank name", `{name: " ", schedule: {recurring: {alwaysActive: {}}}}`, `alertSchedulerRules[1] (" "): name: required`},
			{"operation", `{name: bad, schedule: {scheduleOperation: SNOOZE, recurring: {alwaysActive: {}}}}`,
				`alertSchedulerRules[1] ("bad"): schedule.scheduleOperation`},
			{"bound of the body", `{name: bad, schedule: {recurring: {schedule: {repeatEvery: 5000, daily: {}, timeframe: {startTime: "2026-01-05T09:00", endTime: "2026-01-05T17:00"}}}}}`,
				`alertSchedulerRules[1] ("bad"): schedule.recurring.schedule.repeatEvery: must be at most 1000`},
			{"uniqueIdentifier", `{uniqueIdentifier: a/b, name: bad, schedule: {recurring: {alwaysActive: {}}}}`,
				`alertSchedulerRules[1] ("bad"): uniqueIdentifier: "a/b" holds a control character or '/'`},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, apply(t, env, key, "?prune=true", "application/yaml", "alertSchedulerRules:\n"+fine+"- "+c.rule+"\n"), 400, c.want)
				if after := mustExport(t, env, key, false); after != before {
					t.Fatalf("a refused apply changed the team:\n%s", after)
				}
			})
		}
	})
}

// TestAlertSchedulerRulesPermissions: exporting needs suppression-rules:ReadConfig, changing the
// rules suppression-rules:UpdateConfig (as the HTTP operations), each a 403 naming it; an
// unchanged document needs neither.
func TestAlertSchedulerRulesPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, team := env.MustTeam(t, "permissions")
		mustApply(t, env, team, "", "alertSchedulerRules:\n- {uniqueIdentifier: r, name: r, schedule: {recurring: {alwaysActive: {}}}}\n")
		doc := mustExport(t, env, team, false)

		// A key with every other area's read permission: the framework names the first permission
		// missing, so they are collected from its answers.
		named := regexp.MustCompile(`lacks the permission "([^"]+)"`)
		perms := []string{"org-settings:ReadConfig"}
		for {
			res := export(t, env, env.MustKey(t, team, perms...), false)
			if res.Status == http.StatusOK {
				t.Fatalf("export without suppression-rules:ReadConfig: 200")
			}
			var answer struct{ Message string }
			_ = json.Unmarshal(res.Body, &answer)
			m := named.FindStringSubmatch(answer.Message)
			if res.Status != http.StatusForbidden || m == nil || slices.Contains(perms, m[1]) || len(perms) > 50 {
				t.Fatalf("export with %v: %d %s", perms, res.Status, res.Body)
			}
			if m[1] == "suppression-rules:ReadConfig" {
				apitest.ExpectError(t, res, 403, `"suppression-rules:ReadConfig"`, "alertSchedulerRules")
				break
			}
			perms = append(perms, m[1])
		}
		// The areas after this one (in AreaOrder) need their own read permissions too.
		perms = append(perms, "suppression-rules:ReadConfig")
		for {
			res := export(t, env, env.MustKey(t, team, perms...), false)
			if res.Status == http.StatusOK {
				if string(res.Body) != doc {
					t.Errorf("export with the permission:\n%s", res.Body)
				}
				break
			}
			var answer struct{ Message string }
			_ = json.Unmarshal(res.Body, &answer)
			m := named.FindStringSubmatch(answer.Message)
			if res.Status != http.StatusForbidden || m == nil || slices.Contains(perms, m[1]) || len(perms) > 50 {
				t.Fatalf("export with %v: %d %s", perms, res.Status, res.Body)
			}
			perms = append(perms, m[1])
		}

		applyOnly := env.MustKey(t, team, "org-settings:UpdateConfig")
		if p := mustApply(t, env, applyOnly, "", doc); p.Summary["unchanged"] != len(p.Changes) {
			t.Errorf("an unchanged document: %+v", p)
		}
		renamed := strings.Replace(doc, "name: r\n", "name: renamed\n", 1)
		apitest.ExpectError(t, apply(t, env, applyOnly, "", "application/yaml", renamed), 403, `"suppression-rules:UpdateConfig"`, "alertSchedulerRules")
		apitest.ExpectError(t, apply(t, env, applyOnly, "?prune=true", "application/yaml", "alertSchedulerRules: []\n"), 403, `"suppression-rules:UpdateConfig"`)
		if after := mustExport(t, env, team, false); after != doc {
			t.Fatalf("a refused apply changed the team:\n%s", after)
		}
		writer := env.MustKey(t, team, "org-settings:UpdateConfig", "suppression-rules:UpdateConfig")
		onlyActions(t, mustApply(t, env, writer, "", renamed), map[string]int{"alertSchedulerRules update": 1})
	})
}

// TestAppliedRuleMutesAtIngestion: an enabled rule applied by a document, whose window holds now,
// silences the firing of the alert definition it names as one created over the API does (the
// event records the rule), and not another definition's.
func TestAppliedRuleMutesAtIngestion(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "ingestion")
		now := time.Now().UTC()
		mustApply(t, env, key, "", fmt.Sprintf(`alertSchedulerRules:
- uniqueIdentifier: maintenance
  name: maintenance
  enabled: true
  filter: {alertUniqueIds: {value: [def-muted]}}
  schedule: {oneTime: {timeframe: {startTime: "%s", endTime: "%s", timezone: UTC}}}
`, now.Add(-time.Hour).Format("2006-01-02T15:04:05"), now.Add(time.Hour).Format("2006-01-02T15:04:05")))

		startsAt := now.Add(-time.Minute).Truncate(time.Second)
		var alerts []any
		for _, def := range []string{"def-muted", "def-loud"} {
			alerts = append(alerts, map[string]any{"status": "firing", "fingerprint": "fp-" + def, "startsAt": startsAt.Format(time.RFC3339),
				"endsAt": "0001-01-01T00:00:00Z", "annotations": map[string]string{},
				"labels": map[string]string{"alertname": "Latency", "alert_def_id": def, "alert_def_name": def}})
		}
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		body := apitest.JSONOf(t, map[string]any{"version": "4", "groupKey": "{}:{}", "status": "firing", "receiver": "mgmtapi",
			"groupLabels": map[string]string{}, "commonLabels": map[string]string{}, "commonAnnotations": map[string]string{},
			"externalURL": "http://am", "alerts": alerts})
		if res := env.JSON(t, http.MethodPost, "/ingest/alertmanager/v1", ingest, body); res.Status != http.StatusOK {
			t.Fatalf("ingest: %d %s", res.Status, res.Body)
		}

		q := url.Values{"filter[timestamp][from]": {startsAt.Add(-time.Minute).Format(time.RFC3339)},
			"filter[timestamp][to]": {startsAt.Add(time.Minute).Format(time.RFC3339)}}
		feed := apitest.Decode[struct {
			Events []struct {
				Metadata map[string]string          `json:"platformEventMetadata"`
				Payload  map[string]json.RawMessage `json:"platformEventPayload"`
			} `json:"events"`
		}](t, env.Get(t, "/mgmt/openapi/latest/alerts/events/v3?"+q.Encode(), key, nil))
		suppressedBy := map[string]string{}
		for _, e := range feed.Events {
			var rule string
			if raw, ok := e.Payload["suppressedBy"]; ok {
				_ = json.Unmarshal(raw, &rule)
			}
			suppressedBy[e.Metadata["alertDefId"]] = rule
		}
		if want := map[string]string{"def-muted": "maintenance", "def-loud": ""}; !reflect.DeepEqual(suppressedBy, want) {
			t.Errorf("suppressed by %v, want %v", suppressedBy, want)
		}
	})
}
