package cases_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const settingsPath = "/mgmt/openapi/5/cases/cases/case-settings/v1/configs"

var lowerUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func decodeSettings(t *testing.T, res apitest.Response) oas.CaseSettings {
	t.Helper()
	var out oas.CaseSettingsAnswer
	if err := out.UnmarshalJSON(res.Body); err != nil {
		t.Fatalf("decode case settings: %v; body %s", err, res.Body)
	}
	return out.CaseSettings
}

func (h *harness) createSettings(key, body string) oas.CaseSettings {
	h.t.Helper()
	return decodeSettings(h.t, h.ok(h.do("POST", settingsPath, key, body), "create case settings"))
}

// stampedBetween reports whether stamp, a time the API answers in whole seconds, was taken
// between from and to: the test's clock read before the request was sent and after its answer
// came (a request can cross a second's boundary).
func stampedBetween(stamp, from, to time.Time) bool {
	return !stamp.Before(from.Truncate(time.Second)) && !stamp.After(to)
}

// TestCaseSettingsLifecycle: create, read by id and as the active one, partial updates, delete;
// a team holds one configuration, which is its active one.
func TestCaseSettingsLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		apitest.ExpectError(t, h.do("GET", settingsPath+":getActive", h.RootKey, ""), 404, "no active case settings")

		// The defaults: every alert processed, the built-in thresholds as 15 enabled entries.
		res := h.ok(h.do("GET", settingsPath+":getSystemDefaults", h.RootKey, ""), "defaults")
		var defaults oas.CaseSettingsDefaults
		if err := defaults.UnmarshalJSON(res.Body); err != nil {
			t.Fatal(err)
		}
		if !defaults.GlobalIndicatorSettings.Enabled.Value || defaults.GlobalIndicatorSettings.FilteringConditions == nil {
			t.Fatalf("default indicator settings %s", res.Body)
		}
		entries := defaults.CaseLifecycle.Kpi.Value.Thresholds
		if len(entries) != 15 {
			t.Fatalf("%d default KPI entries, want 15: %s", len(entries), res.Body)
		}
		for _, want := range []string{
			`{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P1","threshold":"900s","enabled":true}`,
			`{"type":"KPI_TYPE_TIME_TO_RESOLVE","priority":"CASE_PRIORITY_P5","threshold":"604800s","enabled":true}`,
			`{"type":"KPI_TYPE_TIME_TO_UPDATE","priority":"CASE_PRIORITY_P3","threshold":"14400s","enabled":true}`,
		} {
			if !strings.Contains(string(res.Body), want) {
				t.Errorf("defaults lack %s: %s", want, res.Body)
			}
		}

		sent := h.Clock.Now()
		created := h.createSettings(h.RootKey, `{"globalIndicatorSettings":{}}`)
		if !lowerUUID.MatchString(string(created.ID)) || created.Name.Set || created.CaseLifecycle.Set ||
			!stampedBetween(time.Time(created.CreateTime), sent, h.Clock.Now()) || created.CreateTime != created.UpdateTime {
			t.Fatalf("created %+v (sent at %v, clock %v)", created, sent, h.Clock.Now())
		}
		id := string(created.ID)
		apitest.ExpectError(t, h.do("POST", settingsPath, h.RootKey, `{"name":"second","globalIndicatorSettings":{"enabled":true}}`),
			409, "already has case settings "+id, "update or delete")

		byID := decodeSettings(t, h.ok(h.do("GET", settingsPath+"/"+id, h.RootKey, ""), "get"))
		active := decodeSettings(t, h.ok(h.do("GET", settingsPath+":getActive", h.RootKey, ""), "get active"))
		if byID.ID != created.ID || active.ID != created.ID || byID.CreateTime != created.CreateTime {
			t.Fatalf("read back %+v, active %+v", byID, active)
		}
		apitest.ExpectError(t, h.do("GET", settingsPath+"/00000000-0000-4000-8000-000000000001", h.RootKey, ""), 404,
			"id: the team has no case settings 00000000-0000-4000-8000-000000000001")
		apitest.ExpectError(t, h.do("GET", settingsPath+"/00000000-0000-4000-8000-00000000000A", h.RootKey, ""), 400, "id")

		// PATCH: each member sent replaces the stored one whole; those left out stay.
		h.Clock.Advance(time.Minute)
		lifecycle := `{"caseLifecycle":{"suppressionPeriod":"3600s","autoClose":{"postResolutionPeriod":"86400s"},
			"kpi":{"thresholds":[{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P1","threshold":"300s","enabled":true}]}}}`
		sent = h.Clock.Now()
		after := decodeSettings(t, h.ok(h.do("PATCH", settingsPath+"/"+id, h.RootKey, lifecycle), "patch lifecycle"))
		lc := after.CaseLifecycle.Value
		if after.Name.Set || lc.SuppressionPeriod.Value != "3600s" || lc.AutoClose.Value.PostResolutionPeriod != "86400s" ||
			len(lc.Kpi.Value.Thresholds) != 1 || !stampedBetween(time.Time(after.UpdateTime), sent, h.Clock.Now()) || after.CreateTime != created.CreateTime {
			t.Fatalf("after the lifecycle patch %+v", after)
		}
		h.Clock.Advance(time.Minute)
		after = decodeSettings(t, h.ok(h.do("PATCH", settingsPath+"/"+id, h.RootKey, `{"name":"On call"}`), "patch name"))
		if after.Name.Value != "On call" || after.CaseLifecycle.Value.SuppressionPeriod.Value != "3600s" {
			t.Fatalf("a name patch lost the lifecycle: %+v", after)
		}
		stamp := after.UpdateTime
		h.Clock.Advance(time.Minute)
		for _, body := range []string{"", `{}`, `{"name":null}`, `{"name":"On call"}`} {
			same := decodeSettings(t, h.ok(h.do("PATCH", settingsPath+"/"+id, h.RootKey, body), "patch nothing "+body))
			if same.UpdateTime != stamp || same.Name.Value != "On call" {
				t.Fatalf("patch %q changed %+v", body, same)
			}
		}
		// caseLifecycle sent replaces it whole: suppressionPeriod and autoClose go.
		after = decodeSettings(t, h.ok(h.do("PATCH", settingsPath+"/"+id, h.RootKey, `{"caseLifecycle":{"resolutionSnoozePeriod":"600s"}}`), "patch"))
		lc = after.CaseLifecycle.Value
		if lc.SuppressionPeriod.Set || lc.AutoClose.Set || lc.Kpi.Set || lc.ResolutionSnoozePeriod.Value != "600s" || after.Name.Value != "On call" {
			t.Fatalf("after replacing the lifecycle %+v", after)
		}
		reread := decodeSettings(t, h.ok(h.do("GET", settingsPath+":getActive", h.RootKey, ""), "get active"))
		if reread.UpdateTime != after.UpdateTime || reread.CaseLifecycle.Value.ResolutionSnoozePeriod.Value != "600s" {
			t.Fatalf("stored %+v, answered %+v", reread, after)
		}
		apitest.ExpectError(t, h.do("PATCH", settingsPath+"/00000000-0000-4000-8000-000000000001", h.RootKey, `{"name":"x"}`), 404, "id")

		// Deleting the active configuration leaves the team with none; a new one may be created.
		res = h.ok(h.do("DELETE", settingsPath+"/"+id, h.RootKey, ""), "delete")
		if strings.TrimSpace(string(res.Body)) != "{}" {
			t.Fatalf("delete answered %s", res.Body)
		}
		apitest.ExpectError(t, h.do("GET", settingsPath+"/"+id, h.RootKey, ""), 404, id)
		apitest.ExpectError(t, h.do("GET", settingsPath+":getActive", h.RootKey, ""), 404)
		apitest.ExpectError(t, h.do("DELETE", settingsPath+"/"+id, h.RootKey, ""), 404, id)
		again := h.createSettings(h.RootKey, `{"name":"Again","globalIndicatorSettings":{"enabled":false}}`)
		if again.ID == created.ID || again.GlobalIndicatorSettings.Enabled.Value {
			t.Fatalf("re-created %+v", again)
		}
	})
}

// TestCaseSettingsRefusals: each rule's 400 names the field and the rule, and stores nothing.
func TestCaseSettingsRefusals(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		kpi := func(entries string) string {
			return `{"globalIndicatorSettings":{},"caseLifecycle":{"kpi":{"thresholds":[` + entries + `]}}}`
		}
		entry := func(typ, prio, threshold string, enabled bool) string {
			return fmt.Sprintf(`{"type":%q,"priority":%q,"threshold":%q,"enabled":%v}`, typ, prio, threshold, enabled)
		}
		const ack, p1 = "KPI_TYPE_TIME_TO_ACKNOWLEDGE", "CASE_PRIORITY_P1"
		for _, c := range []struct{ body, want string }{
			{`{}`, "globalIndicatorSettings"},
			{`{"name":"","globalIndicatorSettings":{}}`, "name"},
			{`{"name":"` + strings.Repeat("n", 4097) + `","globalIndicatorSettings":{}}`, "name"},
			{`{"globalIndicatorSettings":{"filteringConditions":[{"priorities":{"all":{},"values":{"items":[]}}}]}}`,
				"globalIndicatorSettings.filteringConditions[0].priorities: set all or values, not both"},
			{`{"globalIndicatorSettings":{"filteringConditions":[{},{"entityLabels":{"all":{},"values":{}}}]}}`,
				"globalIndicatorSettings.filteringConditions[1].entityLabels: set all or values, not both"},
			{`{"globalIndicatorSettings":{"filteringConditions":[{"priorities":{"values":{"items":["INDICATOR_PRIORITY_UNSPECIFIED"]}}}]}}`,
				"priorities.values.items[0]: must name a priority"},
			{`{"globalIndicatorSettings":{"filteringConditions":[{"priorities":{"values":{"items":["P1"]}}}]}}`, "items"},
			{`{"globalIndicatorSettings":{"filteringConditions":[{"entityLabels":{"values":{"items":[{"key":"","value":"v"}]}}}]}}`, "key"},
			{`{"globalIndicatorSettings":{"filteringConditions":[{"priorities":{"all":{"x":1}}}]}}`, "all"},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"suppressionPeriod":"1h"}}`,
				`caseLifecycle.suppressionPeriod: "1h" is not a duration`},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"resolutionSnoozePeriod":"-5s"}}`, "caseLifecycle.resolutionSnoozePeriod"},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"autoResolve":{"enabled":true,"inactivePeriod":"999999999999s"}}}`,
				"caseLifecycle.autoResolve.inactivePeriod: \"999999999999s\" is longer than 315576000000s"},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"autoClose":{}}}`, "postResolutionPeriod"},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"autoClose":{"postResolutionPeriod":"s"}}}`, "postResolutionPeriod"},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"autoClose":{"postResolutionPeriod":"tomorrow"}}}`,
				"caseLifecycle.autoClose.postResolutionPeriod"},
			{`{"globalIndicatorSettings":{},"caseLifecycle":{"alertSuppressionStrategy":"SOMETIMES"}}`, "alertSuppressionStrategy"},
			{kpi(`{"priority":"CASE_PRIORITY_P1","threshold":"300s","enabled":true}`), "caseLifecycle.kpi.thresholds[0].type: required"},
			{kpi(entry("KPI_TYPE_UNSPECIFIED", p1, "300s", true)), "thresholds[0].type: required"},
			{kpi(entry(ack, "CASE_PRIORITY_UNSPECIFIED", "300s", true)), "thresholds[0].priority: required"},
			{kpi(entry(ack, p1, "300s", true) + "," + entry(ack, p1, "600s", false)),
				"caseLifecycle.kpi.thresholds[1]: KPI_TYPE_TIME_TO_ACKNOWLEDGE for CASE_PRIORITY_P1 is also thresholds[0]"},
			{kpi(`{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P1","enabled":true}`),
				"thresholds[0].threshold: required when the entry is enabled"},
			{kpi(entry(ack, p1, "", true)), "thresholds[0].threshold: required when the entry is enabled"},
			{kpi(entry(ack, p1, "59s", true)), `thresholds[0].threshold: "59s" is out of range; a KPI threshold is from 60s to 31536000s`},
			{kpi(entry(ack, p1, "31536001s", false)), "out of range"},
			{kpi(entry(ack, p1, "90.5s", true)), `thresholds[0].threshold: "90.5s" is not a KPI threshold; write whole seconds`},
			{kpi(strings.TrimSuffix(strings.Repeat(entry(ack, p1, "60s", true)+",", 16), ",")), "thresholds"},
		} {
			apitest.ExpectError(t, h.do("POST", settingsPath, h.RootKey, c.body), 400, c.want)
		}
		apitest.ExpectError(t, h.do("GET", settingsPath+":getActive", h.RootKey, ""), 404)

		// A refused update changes nothing.
		s := h.createSettings(h.RootKey, `{"name":"Kept","globalIndicatorSettings":{}}`)
		apitest.ExpectError(t, h.do("PATCH", settingsPath+"/"+string(s.ID), h.RootKey, `{"name":"New","caseLifecycle":{"suppressionPeriod":"soon"}}`),
			400, "caseLifecycle.suppressionPeriod")
		apitest.ExpectError(t, h.do("PATCH", settingsPath+"/"+string(s.ID), h.RootKey, `{"globalIndicatorSettings":{"enabled":"yes"}}`), 400, "enabled")
		if got := decodeSettings(t, h.ok(h.do("GET", settingsPath+"/"+string(s.ID), h.RootKey, ""), "get")); got.Name.Value != "Kept" || got.UpdateTime != s.UpdateTime {
			t.Fatalf("a refused update changed %+v", got)
		}

		// Accepted edges: 60s and 31536000s, a disabled entry without threshold, empty periods
		// (not set: not stored, not answered), fractional periods.
		h.ok(h.do("DELETE", settingsPath+"/"+string(s.ID), h.RootKey, ""), "delete")
		ok := h.createSettings(h.RootKey, `{"globalIndicatorSettings":{"filteringConditions":[{"enabled":true,
			"priorities":{"values":{"items":["INDICATOR_PRIORITY_P1"]}},"entityLabels":{"all":{}}}]},
			"caseLifecycle":{"suppressionPeriod":"","resolutionSnoozePeriod":"1.5s","autoClose":{"postResolutionPeriod":"0s"},
			"kpi":{"thresholds":[`+entry(ack, p1, "60s", true)+`,`+entry("KPI_TYPE_TIME_TO_RESOLVE", "CASE_PRIORITY_P5", "31536000s", true)+`,
			{"type":"KPI_TYPE_TIME_TO_UPDATE","priority":"CASE_PRIORITY_P2"}]}}}`)
		lc := ok.CaseLifecycle.Value
		if lc.SuppressionPeriod.Set || lc.ResolutionSnoozePeriod.Value != "1.5s" || len(lc.Kpi.Value.Thresholds) != 3 ||
			lc.Kpi.Value.Thresholds[2].Threshold.Set || len(ok.GlobalIndicatorSettings.FilteringConditions) != 1 {
			t.Fatalf("accepted edges answered %+v", ok)
		}
		res := h.ok(h.do("GET", settingsPath+":getActive", h.RootKey, ""), "get")
		if strings.Contains(string(res.Body), "suppressionPeriod") || !strings.Contains(string(res.Body), `"entityLabels":{"all":{}}`) {
			t.Fatalf("stored %s", res.Body)
		}
	})
}

// TestCaseSettingsTeamsAndPermissions: one team never reads, changes or deletes another's
// configuration; reads need case-config:Read and writes case-config:Update.
func TestCaseSettingsTeamsAndPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ours := h.createSettings(h.RootKey, `{"name":"Team one","globalIndicatorSettings":{}}`)
		id := string(ours.ID)
		_, otherKey := h.team("other")
		apitest.ExpectError(t, h.do("GET", settingsPath+":getActive", otherKey, ""), 404)
		apitest.ExpectError(t, h.do("GET", settingsPath+"/"+id, otherKey, ""), 404, id)
		apitest.ExpectError(t, h.do("PATCH", settingsPath+"/"+id, otherKey, `{"name":"taken"}`), 404, id)
		apitest.ExpectError(t, h.do("DELETE", settingsPath+"/"+id, otherKey, ""), 404, id)
		theirs := h.createSettings(otherKey, `{"name":"Team two","globalIndicatorSettings":{}}`)
		if theirs.ID == ours.ID {
			t.Fatal("two teams share a configuration id")
		}
		if got := decodeSettings(t, h.ok(h.do("GET", settingsPath+":getActive", h.RootKey, ""), "active")); got.ID != ours.ID || got.Name.Value != "Team one" {
			t.Fatalf("team one's active configuration is %+v", got)
		}

		reader := h.key(h.RootKey, "case-config:Read")
		writer := h.key(h.RootKey, "case-config:Update")
		caseReader := h.key(h.RootKey, "case:Read")
		h.ok(h.do("GET", settingsPath+"/"+id, reader, ""), "reader gets")
		h.ok(h.do("GET", settingsPath+":getActive", reader, ""), "reader gets active")
		h.ok(h.do("GET", settingsPath+":getSystemDefaults", reader, ""), "reader gets defaults")
		for _, w := range []struct{ method, path, body string }{
			{"POST", settingsPath, `{"globalIndicatorSettings":{}}`},
			{"PATCH", settingsPath + "/" + id, `{"name":"x"}`},
			{"DELETE", settingsPath + "/" + id, ""},
		} {
			apitest.ExpectError(t, h.do(w.method, w.path, reader, w.body), 403, "case-config:Update")
			apitest.ExpectError(t, h.do(w.method, w.path, caseReader, w.body), 403, "case-config:Update")
		}
		for _, path := range []string{settingsPath + "/" + id, settingsPath + ":getActive", settingsPath + ":getSystemDefaults"} {
			apitest.ExpectError(t, h.do("GET", path, caseReader, ""), 403, "case-config:Read")
			apitest.ExpectError(t, h.do("GET", path, "", ""), 401)
		}
		h.ok(h.do("PATCH", settingsPath+"/"+id, writer, `{"name":"By the writer"}`), "writer patches")
		h.ok(h.do("DELETE", settingsPath+"/"+id, writer, ""), "writer deletes")
		h.createSettings(writer, `{"globalIndicatorSettings":{}}`)
		if got := decodeSettings(t, h.ok(h.do("GET", settingsPath+":getActive", otherKey, ""), "active")); got.ID != theirs.ID {
			t.Fatalf("team two's configuration changed with team one's: %+v", got)
		}
	})
}

// TestCaseSettingsConcurrentWrites: of concurrent creates of one team exactly one stores and the
// others are 409s naming it; concurrent updates of different members all land.
func TestCaseSettingsConcurrentWrites(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		const n = 8
		res := make([]apitest.Response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = env.Do(t, "POST", settingsPath, "Bearer "+h.RootKey, "application/json",
					fmt.Sprintf(`{"name":"racer %d","globalIndicatorSettings":{}}`, i))
			}()
		}
		wg.Wait()
		var winner string
		for _, r := range res {
			if r.Status == 200 {
				if winner != "" {
					t.Fatalf("two concurrent creates stored: %s and %s", winner, r.Body)
				}
				winner = string(decodeSettings(t, r).ID)
			}
		}
		if winner == "" {
			t.Fatal("no concurrent create stored")
		}
		for _, r := range res {
			if r.Status != 200 {
				apitest.ExpectError(t, r, 409, "already has case settings "+winner)
			}
		}
		active := decodeSettings(t, h.ok(h.do("GET", settingsPath+":getActive", h.RootKey, ""), "active"))
		if string(active.ID) != winner {
			t.Fatalf("active %s, winner %s", active.ID, winner)
		}

		// Updates of different members, at the same time: none is lost.
		bodies := []string{
			`{"name":"Renamed"}`,
			`{"globalIndicatorSettings":{"enabled":true}}`,
			`{"caseLifecycle":{"suppressionPeriod":"60s"}}`,
		}
		for round := range 3 {
			for _, b := range bodies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := env.Do(t, "PATCH", settingsPath+"/"+winner, "Bearer "+h.RootKey, "application/json", b)
					if r.Status != 200 {
						t.Errorf("round %d: patch %s: %d %s", round, b, r.Status, r.Body)
					}
				}()
			}
		}
		wg.Wait()
		got := decodeSettings(t, h.ok(h.do("GET", settingsPath+"/"+winner, h.RootKey, ""), "get"))
		if got.Name.Value != "Renamed" || !got.GlobalIndicatorSettings.Enabled.Value || got.CaseLifecycle.Value.SuppressionPeriod.Value != "60s" {
			t.Fatalf("after concurrent patches %+v", got)
		}

		// Create and delete racing: the team ends with zero or one configuration, and the active
		// one answers exactly when one exists.
		for i := range 4 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				env.Do(t, "DELETE", settingsPath+"/"+winner, "Bearer "+h.RootKey, "", "")
			}()
			go func() {
				defer wg.Done()
				env.Do(t, "POST", settingsPath, "Bearer "+h.RootKey, "application/json", fmt.Sprintf(`{"name":"late %d","globalIndicatorSettings":{}}`, i))
			}()
		}
		wg.Wait()
		var count int
		if err := h.DB.Read().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM case_settings WHERE team_id = 1`).Scan(&count); err != nil {
			t.Fatal(err)
		}
		r := h.do("GET", settingsPath+":getActive", h.RootKey, "")
		if count > 1 || (count == 1) != (r.Status == 200) {
			t.Fatalf("%d rows for the team; active answered %d %s", count, r.Status, r.Body)
		}
	})
}

// TestKPIsFollowTheActiveCaseSettings: the active configuration's entries win over the team's
// defaults (the operator's thresholds here), a disabled entry turns its KPI off, and deleting
// the configuration brings the defaults back.
func TestKPIsFollowTheActiveCaseSettings(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		teamID, teamKey := h.team("kpi settings")
		// The operator's thresholds for the team: P5 acknowledge 600s, resolve 1200s, update 1800s.
		operator := `{"timeToAcknowledge":{"p1":60,"p2":60,"p3":60,"p4":60,"p5":600},
			"timeToResolve":{"p1":60,"p2":60,"p3":60,"p4":60,"p5":1200},
			"timeToUpdate":{"p1":60,"p2":60,"p3":60,"p4":60,"p5":1800}}`
		h.ok(h.do("PUT", fmt.Sprintf("/admin/v1/teams/%d/case-kpis", teamID), apitest.OperatorKey, operator), "operator thresholds")
		res := h.ok(h.do("GET", settingsPath+":getSystemDefaults", teamKey, ""), "defaults")
		if !strings.Contains(string(res.Body), `{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P5","threshold":"600s","enabled":true}`) {
			t.Fatalf("the defaults do not answer the operator's thresholds: %s", res.Body)
		}

		// Active configuration: acknowledge P5 in 120s, update P5 off; resolve P5 not listed.
		s := h.createSettings(teamKey, `{"globalIndicatorSettings":{},"caseLifecycle":{"kpi":{"thresholds":[
			{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P5","threshold":"120s","enabled":true},
			{"type":"KPI_TYPE_TIME_TO_UPDATE","priority":"CASE_PRIORITY_P5","threshold":"60s"}]}}}`)
		ref := h.open(teamID, "g", "settings") // no priority: P5's limits
		other := h.open(1, "g", "team one")    // team one: the built-in P5 limits
		h.Clock.Advance(119 * time.Second)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("%d breaches at 119s", n)
		}
		h.Clock.Advance(2 * time.Second) // 121s: acknowledge breached by the configuration's 120s
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches at 121s, want the time-to-acknowledge one", n)
		}
		evs := kpiEvents(h.events(teamKey, ref.ID))
		if len(evs) != 1 || evs[0].EventData.KpiBreached.Value.Threshold.Value != "120s" ||
			evs[0].EventData.KpiBreached.Value.KpiType.Value != oas.KPITypeKPITYPETIMETOACKNOWLEDGE {
			t.Fatalf("kpiBreached events %+v", evs)
		}
		h.Clock.Advance(1200 * time.Second) // 1321s: resolve breached by the operator's 1200s; update is off
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches at 1321s, want the time-to-resolve one", n)
		}
		evs = kpiEvents(h.events(teamKey, ref.ID))
		if len(evs) != 2 || evs[1].EventData.KpiBreached.Value.Threshold.Value != "1200s" ||
			evs[1].EventData.KpiBreached.Value.KpiType.Value != oas.KPITypeKPITYPETIMETORESOLVE {
			t.Fatalf("kpiBreached events %+v", evs)
		}
		h.Clock.Advance(3600 * time.Second)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("%d breaches with time to update off", n)
		}
		if evs := kpiEvents(h.events(h.RootKey, other.ID)); len(evs) != 0 {
			t.Fatalf("team one breached by another team's settings: %+v", evs)
		}

		// An update of the configuration applies at the next evaluation: update P5 on at 60s.
		h.ok(h.do("PATCH", settingsPath+"/"+string(s.ID), teamKey, `{"caseLifecycle":{"kpi":{"thresholds":[
			{"type":"KPI_TYPE_TIME_TO_UPDATE","priority":"CASE_PRIORITY_P5","threshold":"60s","enabled":true}]}}}`), "patch")
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches after turning time to update on, want 1", n)
		}
		// Deleting it brings the operator's 1800s back: a fresh human update is not due at 1799s.
		h.ok(h.do("DELETE", settingsPath+"/"+string(s.ID), teamKey, ""), "delete")
		h.ok(h.comment(teamKey, ref.ID, `{"text":"on it"}`), "comment")
		h.Clock.Advance(1799 * time.Second)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("%d breaches 1799s after the update with the defaults back", n)
		}
		h.Clock.Advance(2 * time.Second)
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches 1801s after the update, want 1", n)
		}
		evs = kpiEvents(h.events(teamKey, ref.ID))
		if last := evs[len(evs)-1].EventData.KpiBreached.Value; last.Threshold.Value != "1800s" || last.KpiType.Value != oas.KPITypeKPITYPETIMETOUPDATE {
			t.Fatalf("last kpiBreached %+v", last)
		}
	})
}
