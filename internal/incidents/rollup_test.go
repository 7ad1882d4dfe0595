package incidents_test

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
)

// TestRollupsUnderConcurrentWrites runs eight writers at once over few rollup rows (new
// incidents, the source resolving them, acknowledge, close, assign, unassign, in batches), then
// checks that incident_rollup, incident_label_rollup, the day rollups and the closed times (per
// day, per label value, and their ties) are exactly what the incidents say, times included, and
// that E18 answers from them what the generic path answers. It runs twice: a day row whose
// last update left finds it among the key's latest updates, then by reading its day whole.
func TestRollupsUnderConcurrentWrites(t *testing.T) {
	t.Run("latest-updates", testRollupsUnderConcurrentWrites)
	t.Run("whole-days", func(t *testing.T) {
		defer incidents.DayProbe(0)()
		testRollupsUnderConcurrentWrites(t)
	})
}

func testRollupsUnderConcurrentWrites(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		var mu sync.Mutex
		var alerts []incidents.Alert
		var ids []string
		newAlert := func(i int) incidents.Alert {
			a := alert(fmt.Sprintf("conc-%d", i))
			a.StartsAt = a.StartsAt.Add(time.Duration(i) * time.Second)
			a.Name = fmt.Sprintf("alert-%d", i%2)
			a.Labels = map[string]string{"service": fmt.Sprintf("svc-%d", i%3)}
			return a
		}
		for i := 0; i < 30; i++ {
			a := newAlert(i)
			id, _ := trigger(t, env, a)
			alerts, ids = append(alerts, a), append(ids, id)
		}
		ctx := context.Background()
		errs := make(chan error, 1000)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(w)))
				post := func(method, path, body string) {
					req, _ := http.NewRequest(method, env.URL+path, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+env.RootKey)
					req.Header.Set("Content-Type", "application/json")
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err
						return
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					// 409: acknowledging a resolved incident
					if res.StatusCode != 200 && res.StatusCode != 409 {
						errs <- fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
					}
				}
				for op := 0; op < 25; op++ {
					mu.Lock()
					n := len(ids)
					pick := func() (string, incidents.Alert) { k := rng.Intn(n); return ids[k], alerts[k] }
					id1, a1 := pick()
					id2, _ := pick()
					mu.Unlock()
					switch rng.Intn(7) {
					case 0:
						a := newAlert(1000 + w*100 + op)
						var id string
						err := env.DB.InTx(ctx, func(tx *db.Tx) error {
							var err error
							id, _, err = incidents.Trigger(ctx, tx, a)
							return err
						})
						if err != nil {
							errs <- err
							continue
						}
						mu.Lock()
						alerts, ids = append(alerts, a), append(ids, id)
						mu.Unlock()
					case 1:
						err := env.DB.InTx(ctx, func(tx *db.Tx) error {
							_, _, _, err := incidents.ResolveFromSource(ctx, tx, a1.TeamID, a1.Fingerprint, a1.StartsAt,
								a1.StartsAt.Add(time.Duration(rng.Intn(3600))*time.Second), "conc")
							return err
						})
						if err != nil {
							errs <- err
						}
					case 2:
						post("POST", ackPath, ids2(id1, id2))
					case 3:
						post("POST", closePath, ids2(id1, id2))
					case 4:
						post("POST", assignPath, `{"incidentIds":["`+id1+`","`+id2+`"],"assignedTo":{"userId":"u-`+fmt.Sprint(rng.Intn(2))+`"}}`)
					case 5:
						post("DELETE", assignPath+"?incident_ids="+id1, "")
					case 6:
						post("POST", resolvePth, ids2(id1, id2))
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}
		checkRollups(t, env, "after concurrent writes")
		for _, q := range []string{"", "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATUS",
			"group_bys[0][contextualLabel]=service&filter[assignee]=u-1",
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_STATE&filter[contextualLabels][service][contextualLabelValues]=svc-2",
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_STATUS&filter[incidentDurationRange][startTime]=2000-01-01T00:00:00Z&filter[incidentDurationRange][endTime]=2100-01-01T00:00:00Z",
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&filter[createdAtRange][startTime]=2000-01-01T00:00:00Z&filter[createdAtRange][endTime]=2100-01-01T00:00:00Z",
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME&filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=svc-&pagination[pageSize]=5",
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME&filter[contextualLabels][service][contextualLabelValues][0]=svc-0&filter[contextualLabels][service][contextualLabelValues][1]=svc-1",
			"group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC&filter[searchQuery][query]=alert&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME"} {
			got := aggJSON(t, env, q)
			restore := incidents.GenericAggregations()
			want := aggJSON(t, env, q)
			restore()
			equal(t, q, got, want)
		}
	})
}

// TestDayRowLastUpdateAfterItsHolderLeaves acknowledges, one at a time and newest first, the
// incidents of one rollup key created over two days (the label's values alternating), so that
// each acknowledgement takes away the last update of its triggered day row and of its label's:
// the rows find it again among the key's latest updates (a walk cut at two), or by reading their
// day whole, and stay what the incidents say.
func TestDayRowLastUpdateAfterItsHolderLeaves(t *testing.T) {
	for _, probe := range []int64{2, 0} {
		t.Run(fmt.Sprintf("probe-%d", probe), func(t *testing.T) {
			defer incidents.DayProbe(probe)()
			apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
				var opened []string
				for i := 0; i < 16; i++ {
					a := alert(fmt.Sprintf("day-%d", i))
					a.StartsAt = a.StartsAt.Add(time.Duration(i) * time.Minute)
					a.Labels = map[string]string{"service": fmt.Sprintf("svc-%d", i%2)}
					id, _ := trigger(t, env, a)
					opened = append(opened, id)
					env.Clock.Advance(2 * time.Hour) // twelve a day, on two or three days
				}
				checkRollups(t, env, "triggered")
				for i := len(opened) - 1; i >= 0; i-- {
					env.Clock.Advance(time.Minute)
					decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(opened[i])), &incidentsOut{})
					checkRollups(t, env, fmt.Sprintf("acknowledged %d", i))
				}
			})
		})
	}
}

func ids2(a, b string) string { return `{"incidentIds":["` + a + `","` + b + `"]}` }

// TestDisplayLabelsAndDaysBackfill runs the backfills of migrations 0026, 0029, 0030 and 0032 over
// incidents whose display-label rows, day rollup rows, shared times, label rows' fixed fields,
// count of closed times and label day rollup rows were lost, and expects them to be what the incidents say.
func TestDisplayLabelsAndDaysBackfill(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for i := 0; i < 12; i++ {
			a := alert(fmt.Sprintf("backfill-%d", i))
			a.StartsAt = a.StartsAt.Add(time.Duration(i) * time.Minute)
			a.Annotations = map[string]string{"summary": fmt.Sprintf("s-%d", i%3), "runbook": "r"}
			a.Labels = map[string]string{"alertname": "HighLatency", "service": fmt.Sprintf("api-%d", i%4/2)}
			a.Name = fmt.Sprintf("alert-%d", i%4/2)
			trigger(t, env, a)
			if i%2 == 0 {
				// two by two at one time, each pair with both services: shared across values
				resolveFromSource(t, env, a, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i/4)*25*time.Hour))
			}
			env.Clock.Advance(7 * time.Hour)
		}
		refill := func(table string) backfillStep { return backfillStep{"DELETE FROM " + table, "INSERT INTO " + table} }
		rerunBackfill(t, env, "0026_incident_display_labels_day_rollup.sql",
			refill("incident_display_labels"), refill("incident_day_rollup"), refill("incident_time_ties"))
		// and those of 0029: the label rows' copies of the fixed fields, the distinct closed times
		rerunBackfill(t, env, "0029_incident_label_columns_closed_times.sql",
			backfillStep{`UPDATE incident_labels SET name = '', application_name = '', subsystem_name = ''`, "UPDATE incident_labels"},
			refill("incident_closed_times"))
		// and those of 0030: the label day rollup, the closed times per day and their ties
		rerunBackfill(t, env, "0030_incident_label_day_rollup.sql",
			backfillStep{`UPDATE incident_day_rollup SET first_update = NULL`, "UPDATE incident_day_rollup"},
			refill("incident_label_day_rollup"), refill("incident_closed_day_times"), refill("incident_closed_day_ties"))
		// and those of 0032: the closed times per label value and their ties
		rerunBackfill(t, env, "0032_incident_value_closed_times.sql",
			refill("incident_value_closed_times"), refill("incident_value_closed_ties"))
		equal(t, "value closed rows", sqlRows(t, env, `SELECT field, COUNT(*) FROM incident_value_closed_times GROUP BY field ORDER BY field`),
			`[["label",3],["name",2]]`)
		equal(t, "value closed ties", sqlRows(t, env, `SELECT field, COUNT(*) FROM incident_value_closed_ties GROUP BY field ORDER BY field`),
			`[["label",6],["name",6]]`)
		equal(t, "label day rows", sqlRows(t, env, `SELECT CASE WHEN COUNT(*) > 3 THEN 'several' ELSE 'few' END FROM incident_label_day_rollup`), `[["several"]]`)
		equal(t, "label rows", sqlRows(t, env, `SELECT COUNT(*) FROM incident_labels l JOIN incidents i ON i.team_id = l.team_id
			AND i.id = l.incident_id WHERE l.name = i.name AND l.application_name = i.application_name
			AND l.subsystem_name = i.subsystem_name AND l.is_muted = i.is_muted AND l.name <> ''`), "[[24]]")
		equal(t, "day rows", sqlRows(t, env, `SELECT CASE WHEN COUNT(*) > 3 THEN 'several' ELSE 'few' END FROM incident_day_rollup`), `[["several"]]`)
		equal(t, "display rows", sqlRows(t, env, `SELECT COUNT(*) FROM incident_display_labels`), "[[24]]")
		checkRollups(t, env, "after the backfill")
	})
}

// backfillStep undoes what a migration filled (reset, run as is), then runs the migration's own
// statement that begins with start, up to its semicolon.
type backfillStep struct{ reset, start string }

// rerunBackfill runs steps, in order and in one transaction, against the migration file of the
// env's engine: the backfill of rows that already exist is tested by emptying what it fills and
// filling it again.
func rerunBackfill(t *testing.T, env *apitest.Env, file string, steps ...backfillStep) {
	t.Helper()
	migration, err := os.ReadFile(filepath.Join("..", "db", "migrations", string(env.DB.Engine), file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = env.DB.InTx(ctx, func(tx *db.Tx) error {
		for _, step := range steps {
			if _, err := tx.ExecContext(ctx, step.reset); err != nil {
				return err
			}
			_, rest, ok := strings.Cut(string(migration), step.start)
			if !ok {
				return fmt.Errorf("%s has no statement beginning %q", file, step.start)
			}
			rest, _, _ = strings.Cut(rest, ";")
			if _, err := tx.ExecContext(ctx, step.start+rest); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
