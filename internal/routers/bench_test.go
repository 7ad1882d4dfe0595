package routers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// BenchmarkIngestWithRouting is the cost routing adds to an alert's write: each iteration posts
// one Alertmanager notification of a new alert group (a case opened, an incident triggered,
// through the whole HTTP stack), for a team without routers, and for a team whose router sends every alert to
// one connector (its rule's condition evaluated, the system preset rendered, one outbox record
// written in the incident's transaction; nothing is sent: no worker runs).
func BenchmarkIngestWithRouting(b *testing.B) {
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	for _, engine := range engines {
		for _, routed := range []bool{false, true} {
			name := fmt.Sprintf("%s/routers=%v", engine, routed)
			b.Run(name, func(b *testing.B) {
				env := apitest.Start(b, apitest.Options{}, engine)
				key := env.RootKey
				if routed {
					conn := connectorWith(b, env, key, "GENERIC_HTTPS", map[string]string{"url": "https://receiver.example/hook"})
					res := env.JSON(b, http.MethodPost, routersPath, key, `{"router":{"name":"all","entityType":"ALERTS",
						"rules":[{"condition":"alertDef.priority == 'P1'","targets":[{"connectorId":"`+conn+`"}]}]}}`)
					if res.Status != http.StatusOK {
						b.Fatalf("router: %d %s", res.Status, res.Body)
					}
				}
				ingest := env.MustKey(b, key, "contextual-data:SendData")
				t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					name := fmt.Sprintf("DiskFull%d", i)
					alert := map[string]any{"status": "firing", "fingerprint": "fp-" + name,
						"labels":   map[string]string{"alertname": name, "severity": "critical"},
						"startsAt": t0.Format(time.RFC3339), "endsAt": "0001-01-01T00:00:00Z"}
					body, _ := json.Marshal(map[string]any{"version": "4", "groupKey": `{}:{alertname="` + name + `"}`, "status": "firing",
						"receiver": "mgmtapi", "groupLabels": map[string]string{"alertname": name}, "alerts": []any{alert}})
					if res := env.JSON(b, http.MethodPost, "/ingest/alertmanager/v1", ingest, string(body)); res.Status != http.StatusOK {
						b.Fatalf("ingest: %d %s", res.Status, res.Body)
					}
				}
			})
		}
	}
}
