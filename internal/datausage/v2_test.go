package datausage_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	v2Units  = "/mgmt/openapi/5/dataplans/data-usage/v2/daily/units"
	v2Gbs    = "/mgmt/openapi/5/dataplans/data-usage/v2/daily/processed-gbs"
	v2Tokens = "/mgmt/openapi/5/dataplans/data-usage/v2/daily/evaluation-tokens"
	v2Export = "/mgmt/openapi/5/dataplans/data-usage/v2/export-status"
)

type v2num struct{ Value float64 }

// kindRec is an import record of any kind.
func kindRec(hour, labels, kind, unit, value, quota string) string {
	r := rec(hour, labels, value, quota)
	r = strings.Replace(r, "MEASUREMENT_KIND_PROCESSED_DATA_SIZE", kind, 1)
	return strings.Replace(r, "MEASUREMENT_UNIT_BYTES", unit, 1)
}

// deprecatedOK checks the v2 headers and decodes the answer.
func deprecatedOK[T any](t *testing.T, res apitest.Response, link bool) T {
	t.Helper()
	if got := res.Header.Get("Deprecation"); got != "true" {
		t.Fatalf("Deprecation %q; body %s", got, res.Body)
	}
	want := ""
	if link {
		want = `</mgmt/openapi/5/dataplan/data-usage/v1/query>; rel="successor-version"`
	}
	if got := res.Header.Get("Link"); got != want {
		t.Fatalf("Link %q, want %q", got, want)
	}
	return apitest.Decode[T](t, res)
}

func TestV2DailyOperationsComputeFromRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		mustImport(t, env, team, records(
			rec("2026-03-01T22:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_HIGH", "1500000000", "1.5"),
			rec("2026-03-01T23:00:00Z", "pillar=PILLAR_SPANS,priority=PRIORITY_LOW", "500000000", "0.25"),
			rec("2026-03-02T00:00:00Z", "pillar=PILLAR_METRICS,priority=PRIORITY_BLOCKED", "2000000000", "2"),
			rec("2026-03-02T01:00:00Z", "pillar=PILLAR_PROFILES", "1000000000", "0.5"),
			kindRec("2026-03-02T02:00:00Z", "evaluator=pii", "MEASUREMENT_KIND_EVALUATIONS", "MEASUREMENT_UNIT_TOKENS", "300", "0.75"),
			kindRec("2026-03-02T03:00:00Z", "evaluator=toxicity", "MEASUREMENT_KIND_EVALUATIONS", "MEASUREMENT_UNIT_TOKENS", "40", "0"),
			kindRec("2026-03-02T04:00:00Z", "", "MEASUREMENT_KIND_EVALUATIONS", "MEASUREMENT_UNIT_TOKENS", "2", ""),
		))
		// A time inside a day stands for the whole UTC day.
		body := `{"dateRange":{"fromDate":"2026-03-01T12:00:00Z","toDate":"2026-03-03T01:00:00-02:00"}}`
		units := deprecatedOK[struct {
			Units []struct {
				StatsDate                                                                     time.Time
				TotalUnits, EvaluationUnits, HighLogsUnits, LowTracingUnits, CpuProfilesUnits v2num
				BlockedMetricsUnits, BlockedUnits, MediumLogsUnits                            v2num
			}
		}](t, env.JSON(t, http.MethodPost, v2Units, key, body), true)
		if len(units.Units) != 3 || !units.Units[0].StatsDate.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("units days %+v", units.Units)
		}
		d0, d1 := units.Units[0], units.Units[1]
		if d0.TotalUnits.Value != 1.75 || d0.HighLogsUnits.Value != 1.5 || d0.LowTracingUnits.Value != 0.25 || d0.MediumLogsUnits.Value != 0 ||
			d1.TotalUnits.Value != 3.25 || d1.BlockedMetricsUnits.Value != 2 || d1.BlockedUnits.Value != 0 ||
			d1.CpuProfilesUnits.Value != 0.5 || d1.EvaluationUnits.Value != 0.75 || units.Units[2].TotalUnits.Value != 0 {
			t.Fatalf("units %+v", units.Units)
		}
		// The daily totals equal the v1 query's quota units for the same days.
		v1 := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":3}}}}`))
		for i, b := range v1.Buckets {
			sum := 0.0
			for _, e := range b.Entries {
				for _, m := range e.Measurements {
					var f float64
					fmt.Sscan(m.PlatformQuotaUnits.Value, &f)
					sum += f
				}
			}
			if sum != units.Units[i].TotalUnits.Value {
				t.Fatalf("day %d: v1 %v, v2 %v", i, sum, units.Units[i].TotalUnits.Value)
			}
		}
		gbs := deprecatedOK[struct {
			Gbs []struct {
				StatsDate                                                               time.Time
				TotalGbs, HighLogsGbs, LowTracingGbs, BlockedMetricsGbs, CpuProfilesGbs v2num
			}
		}](t, env.JSON(t, http.MethodPost, v2Gbs, key, body), true)
		if len(gbs.Gbs) != 3 || gbs.Gbs[0].TotalGbs.Value != 2 || gbs.Gbs[0].HighLogsGbs.Value != 1.5 || gbs.Gbs[0].LowTracingGbs.Value != 0.5 ||
			gbs.Gbs[1].TotalGbs.Value != 3 || gbs.Gbs[1].BlockedMetricsGbs.Value != 2 || gbs.Gbs[1].CpuProfilesGbs.Value != 1 {
			t.Fatalf("gbs %+v", gbs.Gbs)
		}
		tokens := deprecatedOK[struct {
			Tokens []struct {
				StatsDate   time.Time
				TotalTokens v2num
				Evaluations []struct {
					EvaluatorName    string
					EvaluationTokens v2num
				}
			}
		}](t, env.JSON(t, http.MethodPost, v2Tokens, key, body), true)
		if len(tokens.Tokens) != 3 || tokens.Tokens[0].TotalTokens.Value != 0 || len(tokens.Tokens[0].Evaluations) != 0 ||
			tokens.Tokens[1].TotalTokens.Value != 342 || fmt.Sprint(tokens.Tokens[1].Evaluations) != "[{ {2}} {pii {300}} {toxicity {40}}]" {
			t.Fatalf("tokens %+v", tokens.Tokens)
		}
		// Relative ranges end today (the test clock's day); no range means the last 30 days.
		for _, c := range []struct {
			body string
			days int
		}{{`{}`, 30}, {`{"range":"RANGE_UNSPECIFIED"}`, 30}, {`{"range":"RANGE_LAST_30_DAYS"}`, 30}, {`{"range":"RANGE_LAST_WEEK"}`, 7},
			{`{"range":"RANGE_LAST_90_DAYS"}`, 90}, {`{"range":"RANGE_LAST_YEAR"}`, 365}} {
			got := deprecatedOK[struct {
				Units []struct{ StatsDate time.Time }
			}](t, env.JSON(t, http.MethodPost, v2Units, key, c.body), true)
			today := env.DB.Now().UTC().Truncate(24 * time.Hour)
			if len(got.Units) != c.days || !got.Units[c.days-1].StatsDate.Equal(today) {
				t.Fatalf("%s: %d days ending %v", c.body, len(got.Units), got.Units[len(got.Units)-1].StatsDate)
			}
		}
		month := deprecatedOK[struct {
			Units []struct{ StatsDate time.Time }
		}](t, env.JSON(t, http.MethodPost, v2Units, key, `{"range":"RANGE_CURRENT_MONTH"}`), true)
		if month.Units[0].StatsDate.Day() != 1 {
			t.Fatalf("current month starts %v", month.Units[0].StatsDate)
		}
	})
}

func TestV2Bounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		// 1827 days is the most: 2020-01-01 … 2024-12-31 inclusive.
		ok := deprecatedOK[struct{ Units []any }](t, env.JSON(t, http.MethodPost, v2Units, key,
			`{"dateRange":{"fromDate":"2020-01-01T00:00:00Z","toDate":"2024-12-31T23:59:59Z"}}`), true)
		if len(ok.Units) != 1827 {
			t.Fatalf("%d days", len(ok.Units))
		}
		// One day: from and to the same instant.
		one := deprecatedOK[struct{ Units []any }](t, env.JSON(t, http.MethodPost, v2Units, key,
			`{"dateRange":{"fromDate":"2026-03-01T05:00:00Z","toDate":"2026-03-01T05:00:00Z"}}`), true)
		if len(one.Units) != 1 {
			t.Fatalf("%d days", len(one.Units))
		}
		for _, path := range []string{v2Units, v2Gbs, v2Tokens} {
			for _, c := range []struct{ body, msg string }{
				{`{"dateRange":{"fromDate":"2020-01-01T00:00:00Z","toDate":"2025-01-01T00:00:00Z"}}`, "dateRange: covers 1828 buckets, at most 1827"},
				{`{"dateRange":{"fromDate":"2026-03-02T00:00:00Z","toDate":"2026-03-01T23:59:59Z"}}`, "dateRange.toDate: must not be before dateRange.fromDate"},
				{`{"dateRange":{"toDate":"2026-03-01T00:00:00Z"}}`, "dateRange.fromDate: is required"},
				{`{"dateRange":{"fromDate":"2026-03-01T00:00:00Z"}}`, "dateRange.toDate: is required"},
				{`{"dateRange":{"fromDate":"2026-03-01T00:00:00Z","toDate":"2026-03-01T00:00:00Z"},"range":"RANGE_LAST_WEEK"}`, "dateRange, range: must set only one"},
				{`{"range":"RANGE_NEXT_WEEK"}`, "range"},
				{`{"dateRange":{"fromDate":"yesterday","toDate":"2026-03-01T00:00:00Z"}}`, "fromDate"},
			} {
				apitest.ExpectError(t, env.JSON(t, http.MethodPost, path, key, c.body), 400, c.msg)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, v2Export, key, `{"enabled":"yes"}`), 400, "enabled")
	})
}

func TestV2ExportStatusPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		type status struct{ Enabled bool }
		if got := deprecatedOK[status](t, env.JSON(t, http.MethodGet, v2Export, key, ""), false); got.Enabled {
			t.Fatal("enabled before any setting")
		}
		if got := deprecatedOK[status](t, env.JSON(t, http.MethodPost, v2Export, key, `{"enabled":true}`), false); !got.Enabled {
			t.Fatal("update answered false")
		}
		env.Restart(t)
		if got := deprecatedOK[status](t, env.JSON(t, http.MethodGet, v2Export, key, ""), false); !got.Enabled {
			t.Fatal("not stored")
		}
		// Another team's setting is its own.
		if got := deprecatedOK[status](t, env.JSON(t, http.MethodGet, v2Export, otherKey, ""), false); got.Enabled {
			t.Fatal("other team sees the setting")
		}
		// An absent enabled means false.
		if got := deprecatedOK[status](t, env.JSON(t, http.MethodPost, v2Export, key, `{}`), false); got.Enabled {
			t.Fatal("absent enabled stored true")
		}
		// Usage of one team is not another's.
		mustImport(t, env, team, records(rec("2026-03-01T10:00:00Z", "", "1000000000", "4")))
		body := `{"dateRange":{"fromDate":"2026-03-01T00:00:00Z","toDate":"2026-03-01T00:00:00Z"}}`
		other := deprecatedOK[struct{ Units []struct{ TotalUnits v2num } }](t, env.JSON(t, http.MethodPost, v2Units, otherKey, body), true)
		mine := deprecatedOK[struct{ Units []struct{ TotalUnits v2num } }](t, env.JSON(t, http.MethodPost, v2Units, key, body), true)
		if other.Units[0].TotalUnits.Value != 0 || mine.Units[0].TotalUnits.Value != 4 {
			t.Fatalf("other %+v, mine %+v", other, mine)
		}
		// Permissions: reads need data-usage:Read, the update data-usage:Manage.
		reader := env.MustKey(t, key, "data-usage:Read")
		for _, path := range []string{v2Units, v2Gbs, v2Tokens} {
			deprecatedOK[struct{}](t, env.JSON(t, http.MethodPost, path, reader, "{}"), true)
		}
		deprecatedOK[status](t, env.JSON(t, http.MethodGet, v2Export, reader, ""), false)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, v2Export, reader, `{"enabled":true}`), 403, "data-usage:Manage")
		manager := env.MustKey(t, key, "data-usage:Manage")
		deprecatedOK[status](t, env.JSON(t, http.MethodPost, v2Export, manager, `{"enabled":true}`), false)
		for _, path := range []string{v2Units, v2Gbs, v2Tokens} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, path, manager, "{}"), 403, "data-usage:Read")
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, v2Export, manager, ""), 403, "data-usage:Read")
	})
}
