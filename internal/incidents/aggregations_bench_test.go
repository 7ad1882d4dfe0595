package incidents_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/teams"
)

// BenchmarkAggregations measures E18 over N incidents of one team (N from
// MGMTAPI_BENCH_INCIDENTS, default 1,000,000) on SQLite, and on PostgreSQL when
// MGMTAPI_TEST_DATABASE_URL is set, for every group-by field (and a contextual label, and two
// pairs) under every kind of filter the document has. Besides ns/op it reports the median request
// time (p50-ms).
//
// Seeding a million incidents takes minutes; to seed once and measure many times, name a data
// directory (MGMTAPI_BENCH_DIR, SQLite) and a schema (MGMTAPI_BENCH_SCHEMA, PostgreSQL) that are
// kept: a database that already holds N incidents is used as it is. MGMTAPI_BENCH_ONLY (a regular
// expression) keeps the cases whose name matches it; MGMTAPI_BENCH_ENGINE (sqlite or postgres)
// keeps one engine.
//
//	MGMTAPI_BENCH_DIR=/tmp/e18 go test -run '^$' -bench Aggregations -benchtime 5x ./internal/incidents/
func BenchmarkAggregations(b *testing.B) {
	n := 1000000
	if v := os.Getenv("MGMTAPI_BENCH_INCIDENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("MGMTAPI_BENCH_INCIDENTS=%q: must be a positive integer", v)
		}
	}
	engines := []db.Engine{db.SQLite}
	if os.Getenv(apitest.DatabaseURLVariable) != "" {
		engines = append(engines, db.Postgres)
	}
	if v := os.Getenv("MGMTAPI_BENCH_ENGINE"); v != "" {
		if v != string(db.SQLite) && v != string(db.Postgres) {
			b.Fatalf("MGMTAPI_BENCH_ENGINE=%q: must be sqlite or postgres", v)
		}
		engines = []db.Engine{db.Engine(v)}
	}
	only, err := regexp.Compile(os.Getenv("MGMTAPI_BENCH_ONLY"))
	if err != nil {
		b.Fatalf("MGMTAPI_BENCH_ONLY: %v", err)
	}
	for _, engine := range engines {
		srv, key := benchServer(b, engine)
		var have int
		if err := srv.db.Read().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM incidents WHERE team_id = 1`).Scan(&have); err != nil {
			b.Fatalf("count: %v", err)
		}
		if have != n {
			if have != 0 {
				b.Fatalf("%s: the kept database holds %d incidents, not %d", engine, have, n)
			}
			start := time.Now()
			bulkLoad(b, srv.db, n)
			b.Logf("%s: loaded %d incidents in %s", engine, n, time.Since(start).Round(time.Millisecond))
		}
		if engine == db.Postgres {
			vacuumSchema(b, srv.pgURL)
		}
		for _, q := range benchQueries() {
			if !only.MatchString(q.name) {
				continue
			}
			b.Run(string(engine)+"/"+q.name, func(b *testing.B) {
				u := srv.url + aggPath + "?" + encodeQuery(q.query)
				var took []time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					benchGet(b, u, key)
					took = append(took, time.Since(t0))
				}
				b.StopTimer()
				sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			})
		}
	}
}

// benchGroupBys are every groupable incident field, a contextual label and two pairs.
var benchGroupBys = []struct{ name, query string }{
	{"none", ""},
	{"id", "group_bys[0][incidentField]=INCIDENTS_FIELDS_ID"},
	{"severity", "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY"},
	{"name", "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME"},
	{"created", "group_bys[0][incidentField]=INCIDENTS_FIELDS_CREATED_TIME"},
	{"closed", "group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC"},
	{"state", "group_bys[0][incidentField]=INCIDENTS_FIELDS_STATE"},
	{"status", "group_bys[0][incidentField]=INCIDENTS_FIELDS_STATUS"},
	{"updated", "group_bys[0][incidentField]=INCIDENTS_FIELDS_LAST_STATE_UPDATE_TIME"},
	{"application", "group_bys[0][incidentField]=INCIDENTS_FIELDS_APPLICATION_NAME"},
	{"subsystem", "group_bys[0][incidentField]=INCIDENTS_FIELDS_SUBSYSTEM_NAME"},
	{"label", "group_bys[0][contextualLabel]=service"},
	{"severity+status", "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATUS"},
	{"label+name", "group_bys[0][contextualLabel]=service&group_bys[1][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[1][orderByDirection]=ORDER_BY_DIRECTION_DESC"},
}

// benchFilters are every kind of filter the document has (over the bulk-loaded incidents).
var benchFilters = []struct{ name, query string }{
	{"all", ""},
	{"muted", "filter[isMuted]=false"}, // matches every incident
	{"severity", "filter[severity]=INCIDENT_SEVERITY_ERROR"},
	{"state", "filter[state]=INCIDENT_STATE_TRIGGERED"},
	{"status", "filter[status]=INCIDENT_STATUS_ACKNOWLEDGED&filter[status]=INCIDENT_STATUS_RESOLVED"},
	{"assignee", "filter[assignee]=user-3"},
	{"application", "filter[applicationName]=shop"},
	{"subsystem", "filter[subsystemName]=svc-7&filter[subsystemName]=svc-8"},
	{"label", "filter[contextualLabels][service][contextualLabelValues]=svc-7"},
	{"display", "filter[displayLabels][runbook][displayLabelValues]=x"},
	{"meta", "filter[metaLabels][0][key]=team&filter[metaLabels][0][value]=team-1"},
	{"created", "filter[createdAtRange][startTime]=2024-01-03T00:00:00Z&filter[createdAtRange][endTime]=2024-01-09T00:00:00Z"},
	{"duration", "filter[incidentDurationRange][startTime]=2024-01-03T00:00:00Z&filter[incidentDurationRange][endTime]=2024-01-09T00:00:00Z"},
	{"search", "filter[searchQuery][query]=ALERT-4&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME"},
	{"search-label", "filter[searchQuery][query]=svc-1&filter[searchQuery][contextualLabel]=service"},
	{"severity+label", "filter[severity]=INCIDENT_SEVERITY_ERROR&filter[contextualLabels][service][contextualLabelValues]=svc-7"},
}

type benchQuery struct{ name, query string }

// benchQueries is every group-by under every filter.
func benchQueries() []benchQuery {
	var out []benchQuery
	for _, g := range benchGroupBys {
		for _, f := range benchFilters {
			q := g.query
			if f.query != "" {
				if q != "" {
					q += "&"
				}
				q += f.query
			}
			out = append(out, benchQuery{"group-" + g.name + "/filter-" + f.name, q})
		}
	}
	return out
}

// encodeQuery escapes the brackets of a readable query string.
func encodeQuery(q string) string {
	if q == "" {
		return ""
	}
	v := url.Values{}
	for _, part := range strings.Split(q, "&") {
		k, val, _ := strings.Cut(part, "=")
		v.Add(k, val)
	}
	return v.Encode()
}

type benchEnv struct {
	url   string
	db    *db.DB
	pgURL string // the schema's, on PostgreSQL
}

func benchServer(b *testing.B, engine db.Engine) (benchEnv, string) {
	ctx := context.Background()
	opts := db.Options{DataDir: b.TempDir()}
	if dir := os.Getenv("MGMTAPI_BENCH_DIR"); dir != "" {
		opts.DataDir = dir
	}
	if engine == db.Postgres {
		opts.URL = benchSchema(b)
	}
	database, err := db.Open(ctx, opts)
	if err != nil {
		b.Fatalf("open: %v", err)
	}
	b.Cleanup(func() { database.Close() })
	const key = "mgmt_bench_root_key"
	if _, err := teams.Bootstrap(ctx, database, key); err != nil {
		b.Fatalf("bootstrap: %v", err)
	}
	a, err := api.New(api.Options{DB: database, Authn: auth.NewAuthenticator(database, time.Now)})
	if err != nil {
		b.Fatalf("api: %v", err)
	}
	s := httptest.NewServer(a)
	b.Cleanup(s.Close)
	return benchEnv{url: s.URL, db: database, pgURL: opts.URL}, key
}

func benchSchema(b *testing.B) string {
	base := os.Getenv(apitest.DatabaseURLVariable)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatalf("open postgres: %v", err)
	}
	defer admin.Close()
	name := fmt.Sprintf("bench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	kept := os.Getenv("MGMTAPI_BENCH_SCHEMA")
	if kept != "" {
		name = kept
	}
	if _, err := admin.Exec(`CREATE SCHEMA IF NOT EXISTS ` + name); err != nil {
		b.Fatalf("create schema: %v", err)
	}
	b.Cleanup(func() {
		if kept != "" {
			return
		}
		if admin, err := sql.Open("pgx", base); err == nil {
			_, _ = admin.Exec(`DROP SCHEMA ` + name + ` CASCADE`)
			admin.Close()
		}
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func benchGet(b *testing.B, u, key string) {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatalf("GET: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("status %d: %s", res.StatusCode, body)
	}
}

// bulkLoad inserts n realistic incidents of team 1 with multi-row INSERTs: six severities, a mix
// of states and statuses (half closed), 20 services as the contextual label "service", two meta
// labels, a third assigned.
func bulkLoad(b *testing.B, database *db.DB, n int) {
	severities := []string{"INCIDENT_SEVERITY_UNSPECIFIED", "INCIDENT_SEVERITY_INFO", "INCIDENT_SEVERITY_WARNING",
		"INCIDENT_SEVERITY_ERROR", "INCIDENT_SEVERITY_CRITICAL", "INCIDENT_SEVERITY_LOW"}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	const perStatement = 100
	const perTx = 100000
	ctx := context.Background()
	type countKey struct{ severity, state, status, assigned, meta string }
	counts := map[countKey]int64{}
	for txStart := 0; txStart < n; txStart += perTx {
		err := database.InTx(ctx, func(tx *db.Tx) error {
			for s := txStart; s < txStart+perTx && s < n; s += perStatement {
				var inc, lab strings.Builder
				var incArgs, labArgs []any
				inc.WriteString(`INSERT INTO incidents (team_id, id, case_id, fingerprint, starts_at, name, description, severity,
					state, status, is_muted, application_name, subsystem_name, assigned_to, assigned_by, contextual_labels,
					display_labels, meta_labels, created_at, closed_at, last_state_update_time, last_state_update_key) VALUES `)
				lab.WriteString(`INSERT INTO incident_labels (team_id, key, value, incident_id, severity, state, status,
					assigned_to, meta_labels, created_at, closed_at, last_state_update_time, name, application_name, subsystem_name,
					is_muted) VALUES `)
				for i := s; i < s+perStatement && i < n; i++ {
					id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
					svc := fmt.Sprintf("svc-%d", i%20)
					created := base + int64(i)*1e6
					state, status := "INCIDENT_STATE_TRIGGERED", "INCIDENT_STATUS_TRIGGERED"
					var closed any
					if i%2 == 0 {
						state, status, closed = "INCIDENT_STATE_RESOLVED", "INCIDENT_STATUS_RESOLVED", created+int64(i%3600)*1e6
					} else if i%5 == 0 {
						status = "INCIDENT_STATUS_ACKNOWLEDGED"
					}
					assigned, by := "", ""
					if i%3 == 0 {
						assigned, by = fmt.Sprintf("user-%d", i%7), "apikey:bench"
					}
					meta := fmt.Sprintf(`[{"key":"env","value":"%s"},{"key":"team","value":"team-%d"}]`, []string{"prod", "staging"}[i%2], i%4)
					if i > s {
						inc.WriteByte(',')
						lab.WriteByte(',')
					}
					p := len(incArgs)
					inc.WriteString("(" + placeholderList(p+1, 22) + ")")
					incArgs = append(incArgs, int64(1), id, "case", "fp-"+strconv.Itoa(i), created, fmt.Sprintf("alert-%d", i%50), "",
						severities[(i*7)%6], state, status, false, "shop", svc, assigned, by,
						`{"service":"`+svc+`"}`, `{}`, meta, created, closed, created, "bench")
					q := len(labArgs)
					lab.WriteString("(" + placeholderList(q+1, 16) + ")")
					labArgs = append(labArgs, int64(1), "service", svc, id, severities[(i*7)%6], state, status, assigned, meta,
						created, closed, created, fmt.Sprintf("alert-%d", i%50), "shop", svc, false)
					counts[countKey{severities[(i*7)%6], state, status, assigned, meta}]++
				}
				if _, err := tx.ExecContext(ctx, inc.String(), incArgs...); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, lab.String(), labArgs...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("bulk load: %v", err)
		}
	}
	err := database.InTx(ctx, func(tx *db.Tx) error {
		for k, c := range counts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO incident_counts (team_id, severity, state, status, assigned_to, meta_labels, n)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, int64(1), k.severity, k.state, k.status, k.assigned, k.meta, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("bulk load counts: %v", err)
	}
	// incident_rollup as migration 0024 backfills it, incident_day_rollup and incident_time_ties
	// as 0026 does (the bulk incidents have no display labels) with 0030's first_update
	err = database.InTx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO incident_rollup (team_id, name, application_name, subsystem_name, severity,
			state, status, assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update)
			SELECT team_id, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
				COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time)
			FROM incidents WHERE team_id = 1
			GROUP BY team_id, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_label_rollup (team_id, key, value, name, application_name, subsystem_name,
			severity, state, status, assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update)
			SELECT l.team_id, l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status,
				i.assigned_to, i.meta_labels, i.is_muted, COUNT(*), MIN(i.created_at), MAX(i.closed_at), MAX(i.last_state_update_time)
			FROM incident_labels l JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id WHERE l.team_id = 1
			GROUP BY l.team_id, l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status,
				i.assigned_to, i.meta_labels, i.is_muted`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_day_rollup (team_id, created_day, closed_day, name, application_name,
			subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update,
			first_update)
			SELECT team_id, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name,
				application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
				COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time), MIN(last_state_update_time)
			FROM incidents WHERE team_id = 1
			GROUP BY team_id, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name,
				application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_time_ties (team_id, field, at)
			SELECT team_id, 'created', created_at FROM incidents WHERE team_id = 1 GROUP BY team_id, created_at HAVING COUNT(*) > 1
			UNION ALL
			SELECT team_id, 'updated', last_state_update_time FROM incidents WHERE team_id = 1
			GROUP BY team_id, last_state_update_time HAVING COUNT(*) > 1`)
		if err != nil {
			return err
		}
		// incident_closed_times as 0029 backfills it
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_closed_times (team_id, n)
			SELECT team_id, COUNT(DISTINCT closed_at) FROM incidents WHERE team_id = 1 AND closed_at IS NOT NULL GROUP BY team_id`)
		if err != nil {
			return err
		}
		// incident_label_day_rollup as 0030 backfills it
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_label_day_rollup (team_id, key, value, created_day, closed_day, name,
			application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted, n, first_created,
			last_closed, last_update)
			SELECT team_id, key, value, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1),
				name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
				COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time)
			FROM incident_labels WHERE team_id = 1
			GROUP BY team_id, key, value, created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1),
				name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
		if err != nil {
			return err
		}
		// incident_closed_day_times and incident_closed_day_ties as 0030 backfills them
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_closed_day_times (team_id, created_day, closed_day, n)
			SELECT team_id, created_at - created_at % 86400000000, closed_at - closed_at % 86400000000, COUNT(DISTINCT closed_at)
			FROM incidents WHERE team_id = 1 AND closed_at IS NOT NULL
			GROUP BY team_id, created_at - created_at % 86400000000, closed_at - closed_at % 86400000000`)
		if err != nil {
			return err
		}
		byClosed := ""
		if database.Engine == db.SQLite {
			byClosed = " INDEXED BY incidents_by_closed"
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_closed_day_ties (team_id, closed_at, created_day, closed_day)
			SELECT DISTINCT i.team_id, i.closed_at, i.created_at - i.created_at % 86400000000, i.closed_at - i.closed_at % 86400000000
			FROM incidents i`+byClosed+` WHERE i.team_id = 1 AND i.closed_at IS NOT NULL AND EXISTS (SELECT 1 FROM incidents j`+byClosed+`
				WHERE j.team_id = i.team_id AND j.closed_at = i.closed_at
				AND j.created_at - j.created_at % 86400000000 <> i.created_at - i.created_at % 86400000000)`)
		if err != nil {
			return err
		}
		// incident_value_closed_times and incident_value_closed_ties as 0032 backfills them
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_value_closed_times (team_id, field, key, value, n, closed)
			SELECT team_id, 'label', key, value, COUNT(DISTINCT closed_at), COUNT(*) FROM incident_labels
			WHERE team_id = 1 AND closed_at IS NOT NULL GROUP BY team_id, key, value
			UNION ALL
			SELECT team_id, 'name', '', name, COUNT(DISTINCT closed_at), COUNT(*) FROM incidents
			WHERE team_id = 1 AND closed_at IS NOT NULL GROUP BY team_id, name`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO incident_value_closed_ties (team_id, field, key, closed_at, value)
			SELECT l.team_id, 'label', l.key, l.closed_at, l.value
			FROM incident_labels l JOIN (SELECT team_id, key, closed_at FROM incident_labels WHERE team_id = 1 AND closed_at IS NOT NULL
					GROUP BY team_id, key, closed_at HAVING COUNT(DISTINCT value) > 1) s
				ON s.team_id = l.team_id AND s.key = l.key AND s.closed_at = l.closed_at
			GROUP BY l.team_id, l.key, l.closed_at, l.value
			UNION ALL
			SELECT i.team_id, 'name', '', i.closed_at, i.name
			FROM incidents i JOIN (SELECT team_id, closed_at FROM incidents WHERE team_id = 1 AND closed_at IS NOT NULL
					GROUP BY team_id, closed_at HAVING COUNT(DISTINCT name) > 1) s
				ON s.team_id = i.team_id AND s.closed_at = i.closed_at
			GROUP BY i.team_id, i.closed_at, i.name`)
		return err
	})
	if err != nil {
		b.Fatalf("bulk load rollup: %v", err)
	}
}

// vacuumSchema vacuums and analyzes every table of the schema that pgURL's search_path names,
// as autovacuum does on a server after writes of this size: it sets the visibility map, without
// which an index-only scan (the label rows' ids, the counts) reads the table's pages too. The
// local PostgreSQL this runs on may have autovacuum off (this machine's has); the kept schema is
// vacuumed again at each run, which is quick when nothing changed.
func vacuumSchema(b *testing.B, pgURL string) {
	conn, err := sql.Open("pgx", pgURL)
	if err != nil {
		b.Fatalf("open postgres: %v", err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		b.Fatalf("list tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			b.Fatalf("list tables: %v", err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	if len(tables) == 0 {
		b.Fatalf("vacuum: no tables in the schema of %s", pgURL)
	}
	if _, err := conn.Exec(`VACUUM (ANALYZE) ` + strings.Join(tables, ", ")); err != nil {
		b.Fatalf("vacuum: %v", err)
	}
}

func placeholderList(from, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("$" + strconv.Itoa(from+i))
	}
	return sb.String()
}
