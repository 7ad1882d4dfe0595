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
	queryPath = "/mgmt/openapi/5/dataplan/data-usage/v1/query"
	capsPath  = "/mgmt/openapi/5/dataplan/data-usage/v1/capabilities"
)

func importPath(team int64) string { return fmt.Sprintf("/admin/v1/teams/%d/usage", team) }

type answer struct {
	QueryRange struct{ Start, End time.Time }
	Buckets    []struct {
		Range   struct{ Start, End time.Time }
		Entries []struct {
			Labels       []struct{ Key, Value string }
			Measurements []struct {
				Kind               string
				MeasuredUnit       string
				MeasuredValue      string
				PlatformQuotaUnits struct{ Value string }
			}
		}
	}
}

// rec is an import record: bytes processed in the hour, with labels "k=v,k=v".
func rec(hour, labels, value, quota string) string {
	var ls []string
	if labels != "" {
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			ls = append(ls, fmt.Sprintf(`{"key":%q,"value":%q}`, k, v))
		}
	}
	q := ""
	if quota != "" {
		q = `,"quotaUnits":"` + quota + `"`
	}
	return fmt.Sprintf(`{"hour":%q,"labels":[%s],"kind":"MEASUREMENT_KIND_PROCESSED_DATA_SIZE","unit":"MEASUREMENT_UNIT_BYTES","value":%q%s}`,
		hour, strings.Join(ls, ","), value, q)
}

func records(rs ...string) string { return `{"records":[` + strings.Join(rs, ",") + `]}` }

func mustImport(t *testing.T, env *apitest.Env, team int64, body string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, importPath(team), apitest.OperatorKey, body)
	if res.Status != http.StatusOK {
		t.Fatalf("import: %d %s", res.Status, res.Body)
	}
}

// summary renders an answer as "start:labels=value/quota;…|…" over non-empty buckets.
func summary(a answer) string {
	var parts []string
	for _, b := range a.Buckets {
		if len(b.Entries) == 0 {
			continue
		}
		var es []string
		for _, e := range b.Entries {
			var ls []string
			for _, l := range e.Labels {
				ls = append(ls, l.Key+"="+l.Value)
			}
			for _, m := range e.Measurements {
				es = append(es, strings.Join(ls, ",")+"="+m.MeasuredValue+"/"+m.PlatformQuotaUnits.Value)
			}
		}
		parts = append(parts, b.Range.Start.Format("01-02T15")+":"+strings.Join(es, ";"))
	}
	return strings.Join(parts, "|")
}

func TestDailyAndHourlyBucketsAcrossMidnightUTC(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		mustImport(t, env, team, records(
			rec("2026-03-01T22:00:00Z", "feature_id=logs,app=a", "100", "1.5"),
			rec("2026-03-01T23:00:00Z", "feature_id=logs,app=b", "200", "0.25"),
			// An offset time names the same UTC hour: 2026-03-02T00:00Z.
			rec("2026-03-02T01:00:00+01:00", "feature_id=logs,app=a", "1000", ""),
			rec("2026-03-02T05:00:00Z", "feature_id=spans", "7", "2"),
		))
		daily := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":3}}}}`))
		if len(daily.Buckets) != 3 || !daily.QueryRange.Start.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)) ||
			!daily.QueryRange.End.Equal(time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("daily range %+v, %d buckets", daily.QueryRange, len(daily.Buckets))
		}
		if got := summary(daily); got != "03-01T00:=300/1.75|03-02T00:=1007/2" {
			t.Fatalf("daily %s", got)
		}
		m := daily.Buckets[0].Entries[0].Measurements[0]
		if m.Kind != "MEASUREMENT_KIND_PROCESSED_DATA_SIZE" || m.MeasuredUnit != "MEASUREMENT_UNIT_BYTES" {
			t.Fatalf("measurement %+v", m)
		}
		if len(daily.Buckets[2].Entries) != 0 || daily.Buckets[2].Entries == nil {
			t.Fatalf("empty bucket %+v", daily.Buckets[2])
		}
		grouped := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":2}}},"groupBy":{"keys":["app","feature_id"]}}`))
		if got := summary(grouped); got != "03-01T00:app=a,feature_id=logs=100/1.5;app=b,feature_id=logs=200/0.25|03-02T00:app=,feature_id=spans=7/2;app=a,feature_id=logs=1000/0" {
			t.Fatalf("grouped %s", got)
		}
		// Hourly across midnight; the range is widened to whole hours.
		hourly := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"hourly":{"timeRange":{"start":"2026-03-01T23:30:00Z","end":"2026-03-02T00:10:00Z"}},"groupBy":{"keys":["app"]}}`))
		if len(hourly.Buckets) != 2 || !hourly.QueryRange.Start.Equal(time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)) {
			t.Fatalf("hourly %+v", hourly.QueryRange)
		}
		if got := summary(hourly); got != "03-01T23:app=b=200/0.25|03-02T00:app=a=1000/0" {
			t.Fatalf("hourly %s", got)
		}
		// Filters: IN and NOT_IN; a record without the label is NOT_IN.
		for _, c := range []struct{ filter, want string }{
			{`{"key":"app","operator":"FILTER_OPERATOR_IN","values":["a"]}`, "03-01T00:=100/1.5|03-02T00:=1000/0"},
			{`{"key":"app","operator":"FILTER_OPERATOR_NOT_IN","values":["a"]}`, "03-01T00:=200/0.25|03-02T00:=7/2"},
			{`{"key":"feature_id","operator":"FILTER_OPERATOR_IN","values":["nope"]}`, ""},
		} {
			a := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
				`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":2}}},"filters":[`+c.filter+`]}`))
			if got := summary(a); got != c.want {
				t.Fatalf("filter %s: %s, want %s", c.filter, got, c.want)
			}
		}
		// Per-bucket limit keeps the first entries by label value.
		limited := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":1}}},"groupBy":{"keys":["app"]},"limit":{"perBucket":1}}`))
		if got := summary(limited); got != "03-01T00:app=a=100/1.5" {
			t.Fatalf("limited %s", got)
		}
		// Measurement kind filter: no evaluations were imported.
		none := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":2}}},"measurementKindFilter":["MEASUREMENT_KIND_EVALUATIONS"]}`))
		if got := summary(none); got != "" {
			t.Fatalf("kind filter %s", got)
		}
	})
}

func TestImportIsIdempotentPerHourAndLabels(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		body := records(rec("2026-03-01T10:00:00Z", "a=1,b=2", "5", "0.5"))
		mustImport(t, env, team, body)
		mustImport(t, env, team, body)
		// The same label set in another order is the same record: it replaces.
		mustImport(t, env, team, records(rec("2026-03-01T10:00:00Z", "b=2,a=1", "6", "0.000001")))
		// Another label set in the same hour is another record.
		mustImport(t, env, team, records(rec("2026-03-01T10:00:00Z", "a=1", "10", "")))
		q := `{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":1}}}}`
		if got := summary(apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, q))); got != "03-01T00:=16/0.000001" {
			t.Fatalf("after imports %s", got)
		}
		env.Restart(t)
		if got := summary(apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, q))); got != "03-01T00:=16/0.000001" {
			t.Fatalf("after restart %s", got)
		}
		caps := apitest.Decode[struct {
			MaxFilters, MaxFilterValues, MaxGroupByLabels, MaxUsageEntriesPerMessage int
			SupportedLabels                                                          []struct {
				Key             string
				HighCardinality bool
				KnownValues     []struct{ Value string }
			}
			SupportedMeasurements []struct{ Kind, Unit string }
		}](t, env.JSON(t, http.MethodGet, capsPath, key, ""))
		if caps.MaxFilters != 16 || caps.MaxFilterValues != 1024 || caps.MaxGroupByLabels != 16 || caps.MaxUsageEntriesPerMessage != 100000 ||
			len(caps.SupportedMeasurements) != 3 || len(caps.SupportedLabels) != 2 || caps.SupportedLabels[0].Key != "a" ||
			len(caps.SupportedLabels[0].KnownValues) != 1 || caps.SupportedLabels[1].KnownValues[0].Value != "2" {
			t.Fatalf("capabilities %+v", caps)
		}
		// An atomic import: one bad record stores nothing.
		res := env.JSON(t, http.MethodPost, importPath(team), apitest.OperatorKey,
			records(rec("2026-03-01T11:00:00Z", "", "1", ""), rec("2026-03-01T11:30:00Z", "", "1", "")))
		apitest.ExpectError(t, res, 400, "records[1].hour: must be the start of an hour")
		if got := summary(apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, q))); got != "03-01T00:=16/0.000001" {
			t.Fatalf("after failed import %s", got)
		}
	})
}

func TestRelativeRanges(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		now := env.Clock.Now().UTC()
		hour := now.Truncate(time.Hour)
		mustImport(t, env, team, records(rec(hour.Format(time.RFC3339), "", "1", ""),
			rec(hour.Add(-23*time.Hour).Format(time.RFC3339), "", "2", ""),
			rec(hour.Add(-24*time.Hour).Format(time.RFC3339), "", "4", "")))
		for _, c := range []struct {
			body    string
			buckets int
			step    time.Duration
		}{
			{`{}`, 30, 24 * time.Hour},
			{`{"daily":{}}`, 30, 24 * time.Hour},
			{`{"daily":{"relativeRange":"DAILY_RELATIVE_RANGE_LAST_7_DAYS"}}`, 7, 24 * time.Hour},
			{`{"daily":{"relativeRange":"DAILY_RELATIVE_RANGE_LAST_365_DAYS"}}`, 365, 24 * time.Hour},
			{`{"hourly":{}}`, 24, time.Hour},
			{`{"hourly":{"relativeRange":"HOURLY_RELATIVE_RANGE_LAST_12_HOURS"}}`, 12, time.Hour},
			{`{"hourly":{"relativeRange":"HOURLY_RELATIVE_RANGE_LAST_14_DAYS"}}`, 336, time.Hour},
		} {
			a := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, c.body))
			last := a.Buckets[len(a.Buckets)-1]
			if len(a.Buckets) != c.buckets || last.Range.End.Sub(last.Range.Start) != c.step || !a.QueryRange.End.Equal(last.Range.End) {
				t.Fatalf("%s: %d buckets, last %+v", c.body, len(a.Buckets), last.Range)
			}
			if !last.Range.Start.Before(env.Clock.Now()) || last.Range.End.Before(now) {
				t.Fatalf("%s: last bucket %+v does not hold now %s", c.body, last.Range, now)
			}
		}
		// The last 24 hours hold the current hour and the one 23 hours before, not 24.
		a := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, `{"hourly":{"relativeRange":"HOURLY_RELATIVE_RANGE_LAST_24_HOURS"}}`))
		total := 0
		for _, b := range a.Buckets {
			for _, e := range b.Entries {
				var v int
				fmt.Sscan(e.Measurements[0].MeasuredValue, &v)
				total += v
			}
		}
		if total != 3 && env.Clock.Now().Truncate(time.Hour).Equal(hour) {
			t.Fatalf("last 24 hours sum %d, want 3", total)
		}
		month := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, `{"daily":{"relativeRange":"DAILY_RELATIVE_RANGE_PREVIOUS_MONTH"}}`))
		if month.QueryRange.Start.Day() != 1 || month.QueryRange.End.Day() != 1 || len(month.Buckets) < 28 || len(month.Buckets) > 31 {
			t.Fatalf("previous month %+v (%d)", month.QueryRange, len(month.Buckets))
		}
		cur := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, `{"daily":{"relativeRange":"DAILY_RELATIVE_RANGE_CURRENT_YEAR"}}`))
		if cur.QueryRange.Start.YearDay() != 1 || len(cur.Buckets) != now.YearDay() && len(cur.Buckets) != env.Clock.Now().UTC().YearDay() {
			t.Fatalf("current year %+v (%d)", cur.QueryRange, len(cur.Buckets))
		}
	})
}

func TestQueryAndImportValidation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		day := func(y, m, d int) string { return fmt.Sprintf(`{"year":%d,"month":%d,"day":%d}`, y, m, d) }
		dr := func(a, b string) string { return `{"daily":{"dateRange":{"start":` + a + `,"end":` + b + `}}}` }
		filter := func(n int) string {
			vals := make([]string, n)
			for i := range vals {
				vals[i] = fmt.Sprintf(`"v%d"`, i)
			}
			return `{"key":"k","operator":"FILTER_OPERATOR_IN","values":[` + strings.Join(vals, ",") + `]}`
		}
		filters := func(n int) string {
			fs := make([]string, n)
			for i := range fs {
				fs[i] = filter(1)
			}
			return `{"filters":[` + strings.Join(fs, ",") + `]}`
		}
		keys := func(n int) string {
			ks := make([]string, n)
			for i := range ks {
				ks[i] = fmt.Sprintf(`"k%d"`, i)
			}
			return `{"groupBy":{"keys":[` + strings.Join(ks, ",") + `]}}`
		}
		ok := []string{
			dr(day(1, 1, 1), day(1, 1, 1)),
			dr(day(9999, 12, 31), day(9999, 12, 31)),
			dr(day(2024, 2, 29), day(2024, 2, 29)),
			dr(day(2020, 1, 1), day(2024, 12, 31)),                                                   // 1827 days
			`{"hourly":{"timeRange":{"start":"2026-01-01T00:00:00Z","end":"2026-03-18T03:00:00Z"}}}`, // 1827 hours
			filters(16), `{"filters":[` + filter(1024) + `]}`, keys(16),
			`{"limit":{"perBucket":1}}`, `{"limit":{"perBucket":100000}}`,
			`{"measurementKindFilter":["MEASUREMENT_KIND_UNSPECIFIED","MEASUREMENT_KIND_OLLY","MEASUREMENT_KIND_EVALUATIONS","MEASUREMENT_KIND_PROCESSED_EVENTS","MEASUREMENT_KIND_PROCESSED_DATA_SIZE","MEASUREMENT_KIND_EVALUATIONS","MEASUREMENT_KIND_OLLY","MEASUREMENT_KIND_OLLY"]}`,
			`{"groupBy":{"keys":["` + strings.Repeat("a", 256) + `"]}}`,
			`{"filters":[{"key":"k","operator":"FILTER_OPERATOR_NOT_IN","values":["` + strings.Repeat("x", 1024) + `"]}]}`,
		}
		for _, body := range ok {
			apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, body))
		}
		bad := []struct{ body, msg string }{
			{dr(day(0, 1, 1), day(1, 1, 1)), "year"},
			{dr(day(10000, 1, 1), day(10000, 1, 1)), "year"},
			{dr(day(2026, 0, 1), day(2026, 1, 1)), "month"},
			{dr(day(2026, 13, 1), day(2026, 1, 1)), "month"},
			{dr(day(2026, 1, 0), day(2026, 1, 1)), "day"},
			{dr(day(2026, 1, 32), day(2026, 1, 1)), "day"},
			{dr(day(2025, 2, 29), day(2025, 3, 1)), "daily.dateRange.start: 2025-02-29 is not a calendar date"},
			{dr(day(2026, 1, 2), day(2026, 1, 1)), "daily.dateRange.end: must not be before"},
			{dr(day(2020, 1, 1), day(2025, 1, 1)), "daily.dateRange: covers 1828 buckets, at most 1827"},
			{`{"hourly":{"timeRange":{"start":"2026-01-01T00:00:00Z","end":"2026-03-18T03:00:01Z"}}}`, "hourly.timeRange: covers 1828 buckets"},
			{`{"hourly":{"timeRange":{"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z"}}}`, "hourly.timeRange.end: must be after"},
			{`{"daily":{},"hourly":{}}`, "daily, hourly: must set only one of them"},
			{`{"daily":{"dateRange":{"start":` + day(2026, 1, 1) + `,"end":` + day(2026, 1, 1) + `},"relativeRange":"DAILY_RELATIVE_RANGE_LAST_7_DAYS"}}`, "daily.dateRange, daily.relativeRange"},
			{`{"hourly":{"timeRange":{"start":"2026-01-01T00:00:00Z","end":"2026-01-01T01:00:00Z"},"relativeRange":"HOURLY_RELATIVE_RANGE_LAST_12_HOURS"}}`, "hourly.timeRange, hourly.relativeRange"},
			{filters(17), "filters"},
			{`{"filters":[` + filter(1025) + `]}`, "filters[0].values"},
			{`{"filters":[` + filter(0) + `]}`, "filters[0].values"},
			{`{"filters":[{"key":"k","operator":"FILTER_OPERATOR_UNSPECIFIED","values":["a"]}]}`, "filters[0].operator: must be FILTER_OPERATOR_IN or FILTER_OPERATOR_NOT_IN"},
			{`{"filters":[{"key":"1k","operator":"FILTER_OPERATOR_IN","values":["a"]}]}`, "filters[0].key"},
			{`{"filters":[{"key":"k","operator":"FILTER_OPERATOR_IN","values":["` + strings.Repeat("x", 1025) + `"]}]}`, "filters[0].values[0]"},
			{keys(17), "groupBy.keys"},
			{`{"groupBy":{"keys":["` + strings.Repeat("a", 257) + `"]}}`, "groupBy.keys[0]"},
			{`{"groupBy":{"keys":[""]}}`, "groupBy.keys[0]"},
			{`{"groupBy":{"keys":["a","a"]}}`, `groupBy.keys[1]: repeats key "a"`},
			{`{"limit":{"perBucket":0}}`, "limit.perBucket"},
			{`{"limit":{"perBucket":100001}}`, "limit.perBucket"},
			{`{"measurementKindFilter":["MEASUREMENT_KIND_UNSPECIFIED","MEASUREMENT_KIND_OLLY","MEASUREMENT_KIND_EVALUATIONS","MEASUREMENT_KIND_PROCESSED_EVENTS","MEASUREMENT_KIND_PROCESSED_DATA_SIZE","MEASUREMENT_KIND_EVALUATIONS","MEASUREMENT_KIND_OLLY","MEASUREMENT_KIND_OLLY","MEASUREMENT_KIND_OLLY"]}`, "measurementKindFilter"},
		}
		for _, c := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, queryPath, key, c.body), 400, c.msg)
		}

		labels := func(n int) string {
			ls := make([]string, n)
			for i := range ls {
				ls[i] = fmt.Sprintf(`{"key":"k%d","value":"v"}`, i)
			}
			return strings.Join(ls, ",")
		}
		raw := func(labels, kind, unit, value, quota string) string {
			return `{"records":[{"hour":"2026-01-01T00:00:00Z","labels":[` + labels + `],"kind":"` + kind + `","unit":"` + unit + `","value":"` + value + `"` + quota + `}]}`
		}
		const bytes, kindSize = "MEASUREMENT_UNIT_BYTES", "MEASUREMENT_KIND_PROCESSED_DATA_SIZE"
		many := make([]string, 10000)
		for i := range many {
			many[i] = rec(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour).Format(time.RFC3339), "", "1", "")
		}
		for _, body := range []string{
			raw(labels(16), kindSize, bytes, "9223372036854775807", `,"quotaUnits":"9223372036853.999999"`),
			raw("", "MEASUREMENT_KIND_EVALUATIONS", "MEASUREMENT_UNIT_TOKENS", "0", `,"quotaUnits":"0.000001"`),
			raw("", "MEASUREMENT_KIND_PROCESSED_EVENTS", "MEASUREMENT_UNIT_EVENTS", "1", ""),
			records(many...),
		} {
			mustImport(t, env, team, body)
		}
		for _, c := range []struct{ body, msg string }{
			{raw(labels(17), kindSize, bytes, "1", ""), "records[0].labels"},
			{raw(`{"key":"a","value":"1"},{"key":"a","value":"2"}`, kindSize, bytes, "1", ""), `records[0].labels[1].key: repeats label key "a"`},
			{raw(`{"key":"_a","value":"1"}`, kindSize, bytes, "1", ""), "records[0].labels[0].key"},
			{raw("", "MEASUREMENT_KIND_OLLY", bytes, "1", ""), "records[0].kind: must be one of"},
			{raw("", "MEASUREMENT_KIND_UNSPECIFIED", bytes, "1", ""), "records[0].kind: must be one of"},
			{raw("", kindSize, "MEASUREMENT_UNIT_TOKENS", "1", ""), "records[0].unit: must be MEASUREMENT_UNIT_BYTES for MEASUREMENT_KIND_PROCESSED_DATA_SIZE"},
			{raw("", kindSize, bytes, "9223372036854775808", ""), "records[0].value: must be a whole number from 0 to 9223372036854775807"},
			{raw("", kindSize, bytes, "-1", ""), "records[0].value"},
			{raw("", kindSize, bytes, "", ""), "records[0].value"},
			{raw("", kindSize, bytes, "1", `,"quotaUnits":"9223372036854"`), "records[0].quotaUnits"},
			{raw("", kindSize, bytes, "1", `,"quotaUnits":"0.0000001"`), "records[0].quotaUnits"},
			{raw("", kindSize, bytes, "1", `,"quotaUnits":"1e3"`), "records[0].quotaUnits"},
			{`{"records":[]}`, "records"},
			{records(append(many, rec("2026-01-01T00:00:00Z", "", "1", ""))...), "records"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, importPath(team), apitest.OperatorKey, c.body), 400, c.msg)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, importPath(999), apitest.OperatorKey, raw("", kindSize, bytes, "1", "")), 404, "team_id: no team 999")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, importPath(team), key, raw("", kindSize, bytes, "1", "")), 401)
		// The largest record reads back exactly.
		a := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key, dr(day(2026, 1, 1), day(2026, 1, 1))))
		if got := summary(a); got != "01-01T00:=9223372036854775807/9223372036853.999999;=0/0.000001;=1/0" {
			t.Fatalf("largest %s", got)
		}
	})
}

func TestUsagePermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		mustImport(t, env, team, records(rec("2026-03-01T10:00:00Z", "app=a", "5", "")))
		q := `{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":1}}}}`
		reader := env.MustKey(t, key, "data-usage:Read")
		if got := summary(apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, reader, q))); got != "03-01T00:=5/0" {
			t.Fatalf("reader %s", got)
		}
		apitest.Decode[answer](t, env.JSON(t, http.MethodGet, capsPath, reader, ""))
		other := env.MustKey(t, key, "team-quota-rules:Read")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, queryPath, other, q), 403, "data-usage:Read")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, capsPath, other, ""), 403, "data-usage:Read")
		// Another team's usage is its own: none here.
		if got := summary(apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, otherKey, q))); got != "" {
			t.Fatalf("other team sees %s", got)
		}
		caps := apitest.Decode[struct{ SupportedLabels []any }](t, env.JSON(t, http.MethodGet, capsPath, otherKey, ""))
		if len(caps.SupportedLabels) != 0 {
			t.Fatalf("other team labels %+v", caps)
		}
	})
}
