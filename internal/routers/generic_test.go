package routers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// TestTheDefaultGenericBody: a generic webhook whose preset renders no body receives, beside the
// rendered title and description, what Alertmanager's and Grafana's webhook receivers expect: the
// alert's status, name, severity and priority, labels and annotations, when its incident opened
// (and resolved), and the incident's and case's ids, for the firing and for the resolution.
func TestTheDefaultGenericBody(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var mu sync.Mutex
		var bodies []map[string]any
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("the body is not a JSON object: %s", b)
			}
			mu.Lock()
			bodies = append(bodies, m)
			mu.Unlock()
		}))
		defer receiver.Close()

		key := env.RootKey
		hook := connectorWith(t, env, key, "GENERIC_HTTPS", map[string]string{"url": receiver.URL + "/hook", "method": "post"})
		create(t, env, key, `{"name":"all","entityType":"ALERTS","rules":[{"condition":"true","targets":[{"connectorId":"`+hook+`"}]}]}`)
		ingest := env.MustKey(t, key, "contextual-data:SendData")
		startsAt := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		alertmanager(t, env, ingest, "DiskFull", "critical", startsAt, time.Time{})
		alertmanager(t, env, ingest, "DiskFull", "critical", startsAt, time.Now().UTC().Truncate(time.Second))

		w := env.NewWorker(delivery.Options{Policy: delivery.Policy{AllowPrivate: true}, PollInterval: 10 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		incidents := apitest.Decode[struct{ Incidents []struct{ ID string } }](t,
			env.JSON(t, http.MethodPost, "/mgmt/openapi/5/incidents/incidents/v1", key, `{}`)).Incidents
		cases := apitest.Decode[struct{ Cases []struct{ ID string } }](t, env.JSON(t, http.MethodPost, "/mgmt/openapi/5/cases/cases/v1", key, `{}`)).Cases
		if len(incidents) != 1 || len(cases) != 1 {
			t.Fatalf("%d incidents, %d cases", len(incidents), len(cases))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(bodies) != 2 {
			t.Fatalf("%d requests, want the firing and the resolution", len(bodies))
		}
		// The worker sends the two in either order.
		byStatus := map[string]map[string]any{}
		for _, b := range bodies {
			s, _ := b["status"].(string)
			byStatus[s] = b
		}
		for _, status := range []string{"Triggered", "Resolved"} {
			b := byStatus[status]
			labels, _ := b["labels"].(map[string]any)
			annotations, _ := b["annotations"].(map[string]any)
			if b == nil || b["alertName"] != "DiskFull" || b["severity"] != "CRITICAL" || b["priority"] != "P1" ||
				labels["service"] != "api" || annotations["summary"] != "DiskFull summary" ||
				b["incidentId"] != incidents[0].ID || b["caseId"] != cases[0].ID || b["title"] != "["+status+"] DiskFull" {
				t.Errorf("%s: %v", status, b)
				continue
			}
			// The link is the incident's URL in the API, on the server's external URL.
			link, _ := b["link"].(string)
			path, ok := strings.CutPrefix(link, apitest.ExternalURL)
			if !ok || path != "/mgmt/openapi/latest/incidents/incidents/v1/"+incidents[0].ID {
				t.Errorf("%s: link %q", status, link)
			} else if res := env.JSON(t, http.MethodGet, path, key, ""); res.Status != http.StatusOK || !strings.Contains(string(res.Body), incidents[0].ID) {
				t.Errorf("%s: the link answers %d %s", status, res.Status, res.Body)
			}
			// startsAt is when the incident opened; endsAt when it resolved, empty while it fires.
			starts, err := time.Parse(time.RFC3339, b["startsAt"].(string))
			if err != nil || starts.Before(startsAt) {
				t.Errorf("%s: startsAt %v", status, b["startsAt"])
			}
			ends, _ := b["endsAt"].(string)
			if status == "Triggered" && ends != "" {
				t.Errorf("a firing alert's endsAt is %q", ends)
			}
			if status == "Resolved" {
				if e, err := time.Parse(time.RFC3339, ends); err != nil || e.Before(starts) {
					t.Errorf("a resolved alert's endsAt is %q", ends)
				}
			}
		}
	})
}
