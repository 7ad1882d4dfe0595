package ingest_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestEventsForTheNotificationCenter: what alert ingestion and the users' own changes hand the
// notification center (db.Tx.Emit), in order: an alert firing opens a case and triggers its
// incident; acknowledging the incident and commenting on the case follow; the alert resolving
// resolves the incident and changes the case. A redelivery hands nothing, and a request that is
// refused hands nothing.
func TestEventsForTheNotificationCenter(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var mu sync.Mutex
		var got []string
		env.DB.SetEventSink(func(ctx context.Context, tx *db.Tx, events []db.Event) error {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range events {
				if e.TeamID == 0 || e.EntityID == "" {
					t.Errorf("event without its team or entity: %+v", e)
				}
				got = append(got, e.EntityType+":"+e.Kind)
			}
			return nil
		})
		t.Cleanup(func() { env.DB.SetEventSink(nil) })
		take := func() string {
			mu.Lock()
			defer mu.Unlock()
			s := strings.Join(got, " ")
			got = nil
			return s
		}

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
