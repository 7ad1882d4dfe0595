package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// TestEventsForTheNotificationCenter: what alert ingestion and the users' own changes hand the
// notification center (db.Tx.Emit records them in notification_events), in order: an alert firing opens a case and triggers its
// incident; acknowledging the incident and commenting on the case follow; the alert resolving
// resolves the incident and changes the case. A redelivery hands nothing, and a request that is
// refused hands nothing.
func TestEventsForTheNotificationCenter(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		// The events recorded (notification_events), as the worker's routing reads them; take
		// answers those recorded since its last call.
		taken := 0
		take := func() string {
			rows, err := env.DB.Read().QueryContext(context.Background(), `SELECT team_id, entity_type, entity_id, kind
				FROM notification_events ORDER BY created_at, seq`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var team int64
				var entityType, entityID, kind string
				if err := rows.Scan(&team, &entityType, &entityID, &kind); err != nil {
					t.Fatal(err)
				}
				if team == 0 || entityID == "" {
					t.Errorf("event without its team or entity: %d %s %s", team, entityType, entityID)
				}
				got = append(got, entityType+":"+kind)
			}
			s := strings.Join(got[taken:], " ")
			taken = len(got)
			return s
		}

		env.MustRouter(t, env.RootKey, "CASES")
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		alert := firing("DiskFull", "critical", "db", t0)
		opened := send(t, env, key, group(`{}:{alertname="DiskFull"}`, alert))
		if s := take(); s != "CASES:opened ALERTS:triggered" {
			t.Fatalf("an alert firing handed %q", s)
		}
		send(t, env, key, group(`{}:{alertname="DiskFull"}`, alert))
		if s := take(); s != "" {
			t.Fatalf("a redelivery handed %q", s)
		}

		incident := listIncidents(t, env, env.RootKey)[0]
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1/all/acknowledge",
			env.RootKey, `{"incidentIds":["`+incident.ID+`"]}`))
		if s := take(); s != "ALERTS:acknowledged" {
			t.Fatalf("acknowledging handed %q", s)
		}
		apitest.Decode[struct{}](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1/"+opened.CaseID+"/comments",
			env.RootKey, `{"text":"looking"}`))
		if s := take(); s != "CASES:commented" {
			t.Fatalf("a comment handed %q", s)
		}
		// The comment's snapshot (made from the row its UPDATE returned, without reading the case
		// again) is the case as GET answers it, but for the duration, which runs with the clock.
		var snapshot string
		if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT snapshot FROM notification_events
			WHERE kind = 'commented'`).Scan(&snapshot); err != nil {
			t.Fatal(err)
		}
		got := apitest.Decode[map[string]any](t, env.JSON(t, http.MethodGet, "/mgmt/openapi/5/cases/cases/v1/"+opened.CaseID, env.RootKey, ""))
		var recorded map[string]any
		if err := json.Unmarshal([]byte(snapshot), &recorded); err != nil {
			t.Fatal(err)
		}
		answered, _ := got["case"].(map[string]any)
		delete(answered, "duration")
		delete(recorded, "duration")
		if !reflect.DeepEqual(recorded, answered) {
			t.Errorf("the comment's snapshot\n%v\nis not the case GET answers\n%v", recorded, answered)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1/all/acknowledge",
			env.RootKey, `{"incidentIds":["`+incident.ID+`","00000000-0000-4000-8000-000000000000"]}`), 404)
		if s := take(); s != "" {
			t.Fatalf("a refused acknowledge handed %q", s)
		}

		send(t, env, key, group(`{}:{alertname="DiskFull"}`, resolved(alert, t0.Add(time.Hour))))
		if s := take(); s != "ALERTS:resolved CASES:changed" {
			t.Fatalf("the alert resolving handed %q", s)
		}
	})
}

// TestAResolvedAlertFiringAgainWithItsStartReopens (issue 37): Alertmanager resolves an alert
// (it timed out, or Prometheus's resend came late) and then receives it again from Prometheus
// with the same start time, and notifies it firing. The incident its source resolved is
// triggered again (the same incident: it is keyed by fingerprint and start), in the group's open
// case (a new one, the old one having resolved), with a triggered notification event; a
// redelivery of that firing changes nothing; the next resolution resolves it again. The incident
// counts follow.
func TestAResolvedAlertFiringAgainWithItsStartReopens(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		env.MustRouter(t, env.RootKey, "ALERTS")
		key := env.MustKey(t, env.RootKey, "contextual-data:SendData")
		kinds := func() string {
			rows, err := env.DB.Read().QueryContext(context.Background(), `SELECT entity_type, kind FROM notification_events ORDER BY created_at, seq`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var entityType, kind string
				if err := rows.Scan(&entityType, &kind); err != nil {
					t.Fatal(err)
				}
				got = append(got, entityType+":"+kind)
			}
			return strings.Join(got, " ")
		}
		counts := func() string {
			var open, resolved int
			if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT
				COALESCE(SUM(CASE WHEN state = 'INCIDENT_STATE_TRIGGERED' THEN n ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN state = 'INCIDENT_STATE_RESOLVED' THEN n ELSE 0 END), 0) FROM incident_counts`).Scan(&open, &resolved); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("%d open %d resolved", open, resolved)
		}
		alert := firing("DiskFull", "critical", "db", t0)
		first := send(t, env, key, group(`{}:{alertname="DiskFull"}`, alert))
		send(t, env, key, group(`{}:{alertname="DiskFull"}`, resolved(alert, t0.Add(3*time.Minute))))
		incident := listIncidents(t, env, env.RootKey)[0]
		if incident.State != "INCIDENT_STATE_RESOLVED" || counts() != "0 open 1 resolved" {
			t.Fatalf("after the resolution: %+v, %s", incident, counts())
		}

		again := send(t, env, key, group(`{}:{alertname="DiskFull"}`, alert))
		if again.IncidentsOpened != 1 || again.CaseID == "" || again.CaseID == first.CaseID {
			t.Fatalf("firing again with its start: %+v (the first case %s)", again, first.CaseID)
		}
		list := listIncidents(t, env, env.RootKey)
		if len(list) != 1 || list[0].ID != incident.ID || list[0].State != "INCIDENT_STATE_TRIGGERED" ||
			list[0].Status != "INCIDENT_STATUS_TRIGGERED" || list[0].ClosedAt != "" || counts() != "1 open 0 resolved" {
			t.Fatalf("firing again with its start: incidents %+v, %s", list, counts())
		}
		want := "CASES:opened ALERTS:triggered ALERTS:resolved CASES:changed CASES:opened ALERTS:triggered"
		if got := kinds(); got != want {
			t.Fatalf("notification events %q, want %q", got, want)
		}
		if redelivered := send(t, env, key, group(`{}:{alertname="DiskFull"}`, alert)); redelivered.IncidentsOpened != 0 || redelivered.Unchanged != 1 {
			t.Fatalf("a redelivery of the firing: %+v", redelivered)
		}
		if got := kinds(); got != want {
			t.Fatalf("a redelivery recorded events: %q", got)
		}

		if ended := send(t, env, key, group(`{}:{alertname="DiskFull"}`, resolved(alert, t0.Add(9*time.Minute)))); ended.IncidentsResolved != 1 {
			t.Fatalf("the second resolution: %+v", ended)
		}
		list = listIncidents(t, env, env.RootKey)
		if len(list) != 1 || list[0].State != "INCIDENT_STATE_RESOLVED" || !strings.HasPrefix(list[0].ClosedAt, "2026-11-20T10:09:00") ||
			counts() != "0 open 1 resolved" {
			t.Fatalf("after the second resolution: %+v, %s", list, counts())
		}
	})
}
