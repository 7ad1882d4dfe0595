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

		// A scheduler rule silences the routed definition: its next firing sends nothing.
		now := time.Now().UTC()
		if res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/alerts/suppression-rules/v1", key, fmt.Sprintf(
			`{"alertSchedulerRule":{"name":"maintenance","enabled":true,"filter":{"alertUniqueIds":{"value":[%q]}},`+
				`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","oneTime":{"timeframe":{"startTime":%q,"endTime":%q,"timezone":"UTC"}}}}}`,
			routed, now.Add(-time.Minute).Format("2006-01-02T15:04:05"), now.Add(time.Hour).Format("2006-01-02T15:04:05"))); res.Status != http.StatusOK {
			t.Fatalf("scheduler rule: %d %s", res.Status, res.Body)
		}
		alertmanagerWith(t, env, ingest, "Routed", "error", of(routed), t0.Add(2*time.Minute), time.Time{})
		if k := kinds(outbox(t, env), names); k != "hook:triggered slack:triggered slack:resolved pd:triggered pd:triggered" {
			t.Fatalf("a silenced firing: the outbox holds %q", k)
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
