package routers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestAlertDefinitionsChooseTheirConnectors: an incident of an alert definition (its alert
// carries alert_def_id) goes where the definition's notification group says: its destinations
// (triggered only, by default) and its router (whose entity labels are not asked), and no
// global router; a definition without destinations or router, or an alert naming no definition
// of the team, goes through the global routers. While a scheduler rule silences the definition,
// nothing is sent.
func TestAlertDefinitionsChooseTheirConnectors(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		hook := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/hook"})
		slack := connectorWith(t, env, key, "SLACK", map[string]string{"integrationId": hookTo(t, env, key, "SLACK", "http://127.0.0.1:9/slack")})
		pd := connectorWith(t, env, key, "PAGERDUTY", map[string]string{"integrationKey": "k", "eventsUrl": "http://127.0.0.1:9/pd"})
		names := map[string]string{hook: "hook", slack: "slack", pd: "pd"}
		create(t, env, key, `{"name":"Global","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+pd+`"}]}]}`)
		chosen := create(t, env, key, `{"name":"Chosen","entityType":"ALERTS","entityLabels":{"environment":"staging"},
			"rules":[{"condition":"true","targets":[{"connectorId":"`+slack+`"}]}]}`)
		definition := func(name, group string) string {
			res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"`+name+`",
				"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]}`+group+`}}`)
			return apitest.Decode[struct{ AlertDef struct{ ID string } }](t, res).AlertDef.ID
		}
		routed := definition("Routed", fmt.Sprintf(`,"notificationGroup":{"destinations":[{"connectorId":%q}],
			"router":{"id":%q,"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"}}`, hook, chosen.ID))
		plain := definition("Plain", "")

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		of := func(id string) map[string]string { return map[string]string{"alert_def_id": id} }
		alertmanagerWith(t, env, ingest, "Routed", "error", of(routed), t0, time.Time{})
		if k := kinds(outbox(t, env), names); k != "hook:triggered slack:triggered" {
			t.Fatalf("a routed definition's firing: the outbox holds %q", k)
		}
		alertmanagerWith(t, env, ingest, "Routed", "error", of(routed), t0, t0.Add(time.Minute))
		if k := kinds(outbox(t, env), names); k != "hook:triggered slack:triggered slack:resolved" {
			t.Fatalf("a routed definition's resolution: the outbox holds %q", k)
		}
		alertmanagerWith(t, env, ingest, "Plain", "error", of(plain), t0, time.Time{})
		alertmanagerWith(t, env, ingest, "Gone", "error", of("0f6c2a9e-5d2f-4c1e-9a7b-3f2e1d0c9b8a"), t0, time.Time{})
		if k := kinds(outbox(t, env), names); k != "hook:triggered slack:triggered slack:resolved pd:triggered pd:triggered" {
			t.Fatalf("a definition without a group, and a definition that is gone: the outbox holds %q", k)
		}

		// A scheduler rule silences the routed definition: its next firing sends nothing. The
		// question is asked once, by ingestion at the firing's instant, and the routing uses that
		// answer: the rule deleted before the worker routes the firing still silences it.
		now := time.Now().UTC()
		res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/suppression-rules/v1", key, fmt.Sprintf(
			`{"alertSchedulerRule":{"name":"maintenance","enabled":true,"filter":{"alertUniqueIds":{"value":[%q]}},`+
				`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","oneTime":{"timeframe":{"startTime":%q,"endTime":%q,"timezone":"UTC"}}}}}`,
			routed, now.Add(-time.Minute).Format("2006-01-02T15:04:05"), now.Add(time.Hour).Format("2006-01-02T15:04:05")))
		if res.Status != http.StatusOK {
			t.Fatalf("scheduler rule: %d %s", res.Status, res.Body)
		}
		rule := apitest.Decode[struct {
			AlertSchedulerRule struct{ UniqueIdentifier string }
		}](t, res).AlertSchedulerRule.UniqueIdentifier
		alertmanagerWith(t, env, ingest, "Routed", "error", of(routed), t0.Add(2*time.Minute), time.Time{})
		if res := env.JSON(t, http.MethodDelete, "/mgmt/openapi/latest/alerts/suppression-rules/v1/"+rule, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete the scheduler rule: %d %s", res.Status, res.Body)
		}
		if k := kinds(outbox(t, env), names); k != "hook:triggered slack:triggered slack:resolved pd:triggered pd:triggered" {
			t.Fatalf("a firing silenced when it was ingested (the rule deleted before its routing): the outbox holds %q", k)
		}
	})
}

// TestARouterWithoutIdRoutesByTheDefinitionsLabels: a definition's notification group may hold
// a router without an id ({"notifyOn": …}, or {} as clients send it): it is accepted and
// answered as sent, and the definition's alerts go through the team's routers that take its
// labels: those whose entityLabels match the definition's entityLabels (over the alert's own),
// and those whose routingLabels are among them as routing.<name>. Routers of other labels send
// nothing; the resolution follows notifyOn.
func TestARouterWithoutIdRoutesByTheDefinitionsLabels(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		prod := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/prod"})
		staging := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/staging"})
		db := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/db"})
		web := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/web"})
		names := map[string]string{prod: "prod", staging: "staging", db: "db", web: "web"}
		rule := func(conn string) string {
			return `"rules":[{"condition":"true","targets":[{"connectorId":"` + conn + `"}]}]`
		}
		create(t, env, key, `{"name":"Prod","entityLabels":{"environment":"prod"},`+rule(prod)+`}`)
		create(t, env, key, `{"name":"Staging","entityLabels":{"environment":"staging"},`+rule(staging)+`}`)
		create(t, env, key, `{"name":"Databases","routingLabels":{"team":"db"},`+rule(db)+`}`)
		create(t, env, key, `{"name":"Web","routingLabels":{"team":"web","environment":"prod"},`+rule(web)+`}`)
		definition := func(name, labels, router string) string {
			res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"`+name+`",
				"entityLabels":`+labels+`,"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]},
				"notificationGroup":{"router":`+router+`}}}`)
			if res.Status != http.StatusOK {
				t.Fatalf("definition %s with router %s: %d %s", name, router, res.Status, res.Body)
			}
			def := apitest.Decode[struct {
				AlertDef struct {
					ID                 string
					AlertDefProperties struct {
						NotificationGroup struct{ Router json.RawMessage }
					}
				}
			}](t, res).AlertDef
			if got := string(def.AlertDefProperties.NotificationGroup.Router); got != router {
				t.Errorf("definition %s: router answered as %s, sent as %s", name, got, router)
			}
			return def.ID
		}
		both := definition("Both", `{"environment":"prod","routing.team":"db"}`, `{"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED"}`)
		stag := definition("Staged", `{"environment":"staging","routing.team":"web"}`, `{}`)

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		of := func(id string) map[string]string { return map[string]string{"alert_def_id": id} }
		alertmanagerWith(t, env, ingest, "Both", "error", of(both), t0, time.Time{})
		if k := kinds(outbox(t, env), names); k != "prod:triggered db:triggered" {
			t.Fatalf("a definition of environment prod and routing.team db: the outbox holds %q", k)
		}
		alertmanagerWith(t, env, ingest, "Both", "error", of(both), t0, t0.Add(time.Minute))
		if k := kinds(outbox(t, env), names); k != "prod:triggered db:triggered prod:resolved db:resolved" {
			t.Fatalf("its resolution (notifyOn triggered and resolved): the outbox holds %q", k)
		}
		alertmanagerWith(t, env, ingest, "Staged", "error", of(stag), t0, time.Time{})
		alertmanagerWith(t, env, ingest, "Staged", "error", of(stag), t0, t0.Add(time.Minute))
		if k := kinds(outbox(t, env), names); k != "prod:triggered db:triggered prod:resolved db:resolved staging:triggered" {
			t.Fatalf("a definition of environment staging and routing.team web, router {} (triggered only): the outbox holds %q", k)
		}
	})
}

// TestDeletingARouterADefinitionNamesRoutesItByLabels: the router an alert definition names can
// be deleted (200, as the public document answers); the definition's next alerts go through the
// routers its labels choose, and no longer through the deleted router's targets.
func TestDeletingARouterADefinitionNamesRoutesItByLabels(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		named := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/named"})
		prod := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/prod"})
		staging := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/staging"})
		names := map[string]string{named: "named", prod: "prod", staging: "staging"}
		rule := func(conn string) string {
			return `"rules":[{"condition":"true","targets":[{"connectorId":"` + conn + `"}]}]`
		}
		chosen := create(t, env, key, `{"name":"Chosen","entityLabels":{"environment":"nowhere"},`+rule(named)+`}`)
		create(t, env, key, `{"name":"Prod","entityLabels":{"environment":"prod"},`+rule(prod)+`}`)
		create(t, env, key, `{"name":"Staging","entityLabels":{"environment":"staging"},`+rule(staging)+`}`)
		res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"Disk",
			"entityLabels":{"environment":"prod"},"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]},
			"notificationGroup":{"router":{"id":"`+chosen.ID+`"}}}}`)
		def := apitest.Decode[struct{ AlertDef struct{ ID string } }](t, res).AlertDef.ID

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		of := map[string]string{"alert_def_id": def}
		alertmanagerWith(t, env, ingest, "Disk", "error", of, t0, time.Time{})
		if k := kinds(outbox(t, env), names); k != "named:triggered" {
			t.Fatalf("before the delete: the outbox holds %q", k)
		}
		// The alert resolves (one alert of a definition is one incident while it fires, issue 37).
		alertmanagerWith(t, env, ingest, "Disk", "error", of, t0, t0.Add(30*time.Second))
		if res := env.JSON(t, http.MethodDelete, routersPath+"/"+chosen.ID, key, ""); res.Status != http.StatusOK {
			t.Fatalf("delete of the router a definition names: %d %s", res.Status, res.Body)
		}
		alertmanagerWith(t, env, ingest, "Disk", "error", of, t0.Add(time.Minute), time.Time{})
		if k := kinds(outbox(t, env), names); k != "named:triggered prod:triggered" {
			t.Fatalf("after the delete: the outbox holds %q", k)
		}
	})
}

// TestAResolutionGoesOnlyWhereItsTriggerWent: routing reads the routers of the moment it routes,
// so a connector that a router gained after an alert's trigger was routed is not sent that
// alert's acknowledgement nor its resolution; the connector that was sent the trigger is sent
// both, and the late one is sent the next alert's trigger and resolution.
func TestAResolutionGoesOnlyWhereItsTriggerWent(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		early := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/early"})
		late := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/late"})
		names := map[string]string{early: "early", late: "late"}
		create(t, env, key, `{"name":"Early","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+early+`"}]}]}`)
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		alertmanager(t, env, ingest, "DiskFull", "error", t0, time.Time{})
		if k := kinds(outbox(t, env), names); k != "early:triggered" {
			t.Fatalf("the trigger: the outbox holds %q", k)
		}
		create(t, env, key, `{"name":"Late","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+late+`"}]}]}`)
		alertmanager(t, env, ingest, "DiskFull", "error", t0, t0.Add(time.Minute))
		if k := kinds(outbox(t, env), names); k != "early:triggered early:resolved" {
			t.Fatalf("the resolution after a router gained a connector: the outbox holds %q", k)
		}
		alertmanager(t, env, ingest, "CPUHigh", "error", t0, time.Time{})
		alertmanager(t, env, ingest, "CPUHigh", "error", t0, t0.Add(time.Minute))
		rows := outbox(t, env)
		next := strings.Fields(kinds(rows[2:], names))
		sort.Strings(next)
		if len(rows) != 6 || strings.Join(next, " ") != "early:resolved early:triggered late:resolved late:triggered" {
			t.Fatalf("the next alert: the outbox holds %q", kinds(rows, names))
		}
	})
}

// TestNotifyOnRetriggeringAndPhantomMode (issue 37): a definition's incidentsSettings are the
// default of its destinations, router and webhooks: notifyOn TRIGGERED_AND_RESOLVED sends the
// resolution to a destination that does not say otherwise, and not to one that says
// NOTIFY_ON_TRIGGERED_ONLY_UNSPECIFIED; a firing again of the same alert within the retriggering period
// (incidentsSettings.minutes, or a destination's retriggeringPeriodMinutes) is recorded and not
// sent, nor is its resolution, and is sent after it; a definition in phantom mode makes its incident and sends nothing,
// not even through the team's routers.
func TestNotifyOnRetriggeringAndPhantomMode(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		both := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/both"})
		only := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/only"})
		slow := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/slow"})
		global := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/global"})
		names := map[string]string{both: "both", only: "only", slow: "slow", global: "global"}
		create(t, env, key, `{"name":"Global","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+global+`"}]}]}`)
		definition := func(name, rest string) string {
			res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"`+name+`",
				"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]}`+rest+`}}`)
			return apitest.Decode[struct{ AlertDef struct{ ID string } }](t, res).AlertDef.ID
		}
		settled := definition("Settled", fmt.Sprintf(`,"incidentsSettings":{"notifyOn":"NOTIFY_ON_TRIGGERED_AND_RESOLVED","minutes":10},
			"notificationGroup":{"destinations":[{"connectorId":%q},{"connectorId":%q,"notifyOn":"NOTIFY_ON_TRIGGERED_ONLY_UNSPECIFIED"},
			{"connectorId":%q,"retriggeringPeriodMinutes":30}]}`, both, only, slow))
		phantom := definition("Phantom", fmt.Sprintf(`,"phantomMode":true,"notificationGroup":{"destinations":[{"connectorId":%q}]}`, both))
		phantomGlobal := definition("PhantomGlobal", `,"phantomMode":true`)

		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		of := func(id string) map[string]string { return map[string]string{"alert_def_id": id} }
		alertmanagerWith(t, env, ingest, "Settled", "error", of(settled), t0, time.Time{})
		alertmanagerWith(t, env, ingest, "Settled", "error", of(settled), t0, t0.Add(time.Minute))
		if k := kinds(outbox(t, env), names); k != "both:triggered only:triggered slow:triggered both:resolved slow:resolved" {
			t.Fatalf("firing and resolution: the outbox holds %q", k)
		}
		// Fires again 5 minutes later: within both periods, nothing is sent.
		env.Clock.Advance(5 * time.Minute)
		alertmanagerWith(t, env, ingest, "Settled", "error", of(settled), t0.Add(5*time.Minute), time.Time{})
		if k := kinds(outbox(t, env), names); k != "both:triggered only:triggered slow:triggered both:resolved slow:resolved" {
			t.Fatalf("a firing again within the retriggering period: the outbox holds %q", k)
		}
		alertmanagerWith(t, env, ingest, "Settled", "error", of(settled), t0.Add(5*time.Minute), t0.Add(6*time.Minute))
		// 11 minutes after the first: past the definition's 10, within the destination's 30.
		env.Clock.Advance(6 * time.Minute)
		alertmanagerWith(t, env, ingest, "Settled", "error", of(settled), t0.Add(11*time.Minute), time.Time{})
		got := kinds(outbox(t, env), names)
		// The held-back firing's resolution went nowhere: no connector was sent that firing
		// (delivery.TriggerSent).
		if want := "both:triggered only:triggered slow:triggered both:resolved slow:resolved both:triggered only:triggered"; got != want {
			t.Fatalf("a firing again after the definition's period: the outbox holds %q, want %q", got, want)
		}

		// Phantom mode: incidents are made, nothing is sent.
		before := len(outbox(t, env))
		alertmanagerWith(t, env, ingest, "Phantom", "error", of(phantom), t0, time.Time{})
		alertmanagerWith(t, env, ingest, "PhantomGlobal", "error", of(phantomGlobal), t0, time.Time{})
		if rows := outbox(t, env); len(rows) != before {
			t.Fatalf("phantom definitions sent %q", kinds(rows[before:], names))
		}
		var incidents int
		if err := env.DB.Read().QueryRowContext(t.Context(), `SELECT count(*) FROM incidents WHERE name IN ('Phantom', 'PhantomGlobal')`).Scan(&incidents); err != nil || incidents != 2 {
			t.Fatalf("phantom definitions made %d incidents (%v), want 2", incidents, err)
		}
	})
}

// TestAFiringThatContinuesIsReminded (issue 37): an alert of a definition that keeps firing is
// notified again once per retriggering period, and not before: a destination with its own
// retriggeringPeriodMinutes (5) at 5, 10, 15 minutes; a destination without one at the
// definition's incidentsSettings.minutes (15); a webhook at its minutes (10); the team's router
// of a definition without a notification group at its incidentsSettings.minutes (10). A
// definition without periods whose alerts go through the team's routers is never reminded. Each look is a new worker over the same database, as after a
// restart: the reminders are rows, not timers. Once the incident is acknowledged, no reminder
// follows; a resolved one has none either.
func TestAFiringThatContinuesIsReminded(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		fast := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/fast"})
		plain := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/plain"})
		global := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": "http://127.0.0.1:9/global"})
		hook := outgoingWebhook(t, env, key, `{"name":"g","type":"GENERIC","url":"http://127.0.0.1:9/hook"}`)
		create(t, env, key, `{"name":"Global","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+global+`"}]}]}`)
		definition := func(name, rest string) string {
			res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/alerts/v3", key, `{"alertDefProperties":{"name":"`+name+`",
				"metricThreshold":{"metricFilter":{"promql":"up"},"rules":[{"condition":{"threshold":1}}]}`+rest+`}}`)
			if res.Status != http.StatusOK {
				t.Fatalf("definition %s: %d %s", name, res.Status, res.Body)
			}
			return apitest.Decode[struct{ AlertDef struct{ ID string } }](t, res).AlertDef.ID
		}
		reminded := definition("Reminded", fmt.Sprintf(`,"incidentsSettings":{"minutes":15},
			"notificationGroup":{"destinations":[{"connectorId":%q,"retriggeringPeriodMinutes":5},{"connectorId":%q}],
			"webhooks":[{"integration":{"integrationId":%d},"minutes":10}]}`, fast, plain, hook))
		unperiodic := definition("Unperiodic", "")
		routed := definition("Routed", `,"incidentsSettings":{"minutes":10}`) // no group: the team's routers
		names := map[string]string{fast: "fast", plain: "plain", global: "global"}
		seen := 0
		since := func() string { // what the outbox gained since the last call
			t.Helper()
			rows := outbox(t, env)
			var s []string
			for _, r := range rows[seen:] {
				name := names[r.Connector]
				if strings.HasPrefix(r.Connector, "webhook-") {
					name = "hook"
				}
				s = append(s, name+":"+r.Kind)
			}
			seen = len(rows)
			sort.Strings(s)
			return strings.Join(s, " ")
		}
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		alertmanagerWith(t, env, ingest, "Reminded", "error", map[string]string{"alert_def_id": reminded}, t0, time.Time{})
		alertmanagerWith(t, env, ingest, "Unperiodic", "error", map[string]string{"alert_def_id": unperiodic}, t0, time.Time{})
		alertmanagerWith(t, env, ingest, "Routed", "error", map[string]string{"alert_def_id": routed}, t0, time.Time{})
		if got := since(); got != "fast:triggered global:triggered global:triggered hook:triggered plain:triggered" {
			t.Fatalf("the firings: the outbox gained %q", got)
		}
		steps := []struct {
			advance time.Duration
			want    string
		}{
			{time.Minute, ""},
			{4*time.Minute - time.Second, ""}, // 4:59, before any period
			{time.Second, "fast:triggered"},   // 5:00
			{4 * time.Minute, ""},             // 9:00
			{time.Minute, "fast:triggered global:triggered hook:triggered"}, // 10:00, Routed's through the team's router too
			{5 * time.Minute, "fast:triggered plain:triggered"},             // 15:00
			{2 * time.Minute, ""},
			{13 * time.Minute, "fast:triggered global:triggered hook:triggered plain:triggered"}, // 30:00, looked at late (20 and 25 missed): one reminder each
		}
		elapsed := time.Duration(0)
		for _, s := range steps {
			env.Clock.Advance(s.advance)
			elapsed += s.advance
			if got := since(); got != s.want {
				t.Fatalf("%v after the firing: the outbox gained %q, want %q", elapsed, got, s.want)
			}
		}
		var reminders int
		if err := env.DB.Read().QueryRowContext(t.Context(), `SELECT count(*) FROM alert_reminders`).Scan(&reminders); err != nil || reminders != 3 {
			t.Fatalf("alert_reminders holds %d rows (%v), want 3 (the three incidents still fire)", reminders, err)
		}

		// Acknowledged: no reminder any more, and the row goes.
		incidents := apitest.Decode[struct{ Incidents []struct{ ID, Name string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`)).Incidents
		for _, inc := range incidents {
			if inc.Name == "Reminded" || inc.Name == "Routed" {
				apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1/all/acknowledge", key,
					`{"incidentIds":["`+inc.ID+`"]}`))
			}
		}
		since() // the acknowledgement goes through the team's routers only: not this test's question
		env.Clock.Advance(30 * time.Minute)
		if got := since(); got != "" {
			t.Fatalf("after the acknowledgement: the outbox gained %q", got)
		}
		if err := env.DB.Read().QueryRowContext(t.Context(), `SELECT count(*) FROM alert_reminders`).Scan(&reminders); err != nil || reminders != 1 {
			t.Fatalf("alert_reminders holds %d rows (%v), want 1 (the unperiodic one, looked at again later)", reminders, err)
		}
	})
}
