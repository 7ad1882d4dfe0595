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
	v2Usage  = "/mgmt/openapi/5/dataplans/data-usage/v2"
	v2Spans  = "/mgmt/openapi/5/dataplans/data-usage/v2/spans/count"
	v2Logs   = "/mgmt/openapi/5/dataplans/data-usage/v2/logs/count"
	marchDay = "date_range[fromDate]=2026-03-01T00:00:00Z&date_range[toDate]=2026-03-02T00:00:00Z"
)

// events is an import record of processed events.
func events(hour, labels, value string) string {
	return kindRec(hour, labels, "MEASUREMENT_KIND_PROCESSED_EVENTS", "MEASUREMENT_UNIT_EVENTS", value, "")
}

type spansAnswer struct {
	SpansCount []struct {
		Timestamp                                    time.Time
		SuccessSpanCount, ErrorSpanCount             string
		LowSuccessSpanCount, LowErrorSpanCount       string
		MediumSuccessSpanCount, MediumErrorSpanCount string
	}
}

func spansSummary(a spansAnswer) string {
	var parts []string
	for _, s := range a.SpansCount {
		parts = append(parts, fmt.Sprintf("%s:%s/%s/%s/%s/%s/%s", s.Timestamp.UTC().Format("02T15"), s.SuccessSpanCount, s.ErrorSpanCount,
			s.LowSuccessSpanCount, s.LowErrorSpanCount, s.MediumSuccessSpanCount, s.MediumErrorSpanCount))
	}
	return strings.Join(parts, ";")
}

type logsAnswer struct {
	LogsCount []struct {
		Timestamp                      time.Time
		LogsCount, Priority, Severity  string
		ApplicationName, SubsystemName *string
	}
}

func logsSummary(a logsAnswer) string {
	var parts []string
	for _, l := range a.LogsCount {
		s := fmt.Sprintf("%s:%s/%s=%s", l.Timestamp.UTC().Format("02T15"), l.Priority, l.Severity, l.LogsCount)
		if l.ApplicationName != nil {
			s += "/a=" + *l.ApplicationName
		}
		if l.SubsystemName != nil {
			s += "/s=" + *l.SubsystemName
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ";")
}

type usageAnswer struct {
	Entries []struct {
		Timestamp     time.Time
		Dimensions    []map[string]any
		Units, SizeGb float64
	}
}

func usageSummary(a usageAnswer) string {
	var parts []string
	for _, e := range a.Entries {
		var ds []string
		for _, d := range e.Dimensions {
			for k, v := range d {
				if g, ok := v.(map[string]any); ok {
					v = fmt.Sprintf("%v=%v", g["key"], g["value"])
				}
				ds = append(ds, fmt.Sprintf("%s:%v", k, v))
			}
		}
		parts = append(parts, fmt.Sprintf("%s[%s]%g/%g", e.Timestamp.UTC().Format("02T15"), strings.Join(ds, ","), e.Units, e.SizeGb))
	}
	return strings.Join(parts, ";")
}

func TestV2SpansCountFromRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		mustImport(t, env, team, records(
			events("2026-03-01T00:00:00Z", "pillar=PILLAR_SPANS,status=success,priority=PRIORITY_LOW,applicationName=web", "10"),
			events("2026-03-01T00:00:00Z", "pillar=PILLAR_SPANS,status=error,priority=PRIORITY_MEDIUM,applicationName=web", "3"),
			events("2026-03-01T01:00:00Z", "pillar=PILLAR_SPANS,status=success,priority=PRIORITY_HIGH,applicationName=api", "7"),
			events("2026-03-01T13:00:00Z", "pillar=PILLAR_SPANS,status=error,priority=PRIORITY_LOW,applicationName=api,subsystemName=db", "9223372036854775807"),
			events("2026-03-01T13:00:00Z", "pillar=PILLAR_SPANS,status=error,priority=PRIORITY_LOW,applicationName=api,subsystemName=q", "1"),
			// Not spans, no status, or bytes: counted nowhere.
			events("2026-03-01T02:00:00Z", "pillar=PILLAR_LOGS,status=success", "100"),
			events("2026-03-01T02:00:00Z", "pillar=PILLAR_SPANS", "100"),
			rec("2026-03-01T02:00:00Z", "pillar=PILLAR_SPANS,status=success", "100", "1"),
			// Outside the range.
			events("2026-03-02T00:00:00Z", "pillar=PILLAR_SPANS,status=success", "100"),
		))
		a := deprecatedOK[spansAnswer](t, env.JSON(t, http.MethodGet, v2Spans+"?"+marchDay+"&resolution=43200s", key, ""), true)
		if got := spansSummary(a); got != "01T00:17/3/10/0/0/3;01T12:0/9223372036854775808/0/9223372036854775808/0/0" {
			t.Fatalf("spans %s", got)
		}
		// Absent resolution: one bucket; the dot form and a filter.
		a = deprecatedOK[spansAnswer](t, env.JSON(t, http.MethodGet, v2Spans+
			"?date_range.fromDate=2026-03-01T00:30:00Z&date_range.toDate=2026-03-01T13:10:00Z&filters.application=api&filters.subsystem=db&filters.subsystem=x", key, ""), true)
		if got := spansSummary(a); got != "01T00:0/9223372036854775807/0/9223372036854775807/0/0" {
			t.Fatalf("filtered spans %s", got)
		}
		// Bracket form, indexed; empty buckets answer zeros.
		a = deprecatedOK[spansAnswer](t, env.JSON(t, http.MethodGet, v2Spans+"?"+marchDay+"&resolution=28800s&filters[application][0]=web", key, ""), true)
		if got := spansSummary(a); got != "01T00:10/3/10/0/0/3;01T08:0/0/0/0/0/0;01T16:0/0/0/0/0/0" {
			t.Fatalf("bracket spans %s", got)
		}
	})
}

func TestV2LogsCountFromRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		mustImport(t, env, team, records(
			events("2026-03-01T00:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_HIGH,severity=SEVERITY_ERROR,applicationName=web,subsystemName=ui", "4"),
			events("2026-03-01T00:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_HIGH,severity=SEVERITY_ERROR,applicationName=api,subsystemName=ui", "5"),
			events("2026-03-01T05:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_LOW,severity=SEVERITY_INFO,applicationName=api,subsystemName=db", "6"),
			events("2026-03-01T05:00:00Z", "pillar=PILLAR_LOGS,priority=odd", "1"),
			events("2026-03-01T05:00:00Z", "pillar=PILLAR_SPANS,priority=PRIORITY_LOW", "50"),
		))
		a := deprecatedOK[logsAnswer](t, env.JSON(t, http.MethodGet, v2Logs+"?"+marchDay, key, ""), true)
		if got := logsSummary(a); got != "01T00:PRIORITY_HIGH/SEVERITY_ERROR=9;01T00:PRIORITY_LOW/SEVERITY_INFO=6;01T00:PRIORITY_UNSPECIFIED/SEVERITY_UNSPECIFIED=1" {
			t.Fatalf("logs %s", got)
		}
		a = deprecatedOK[logsAnswer](t, env.JSON(t, http.MethodGet, v2Logs+"?"+marchDay+"&resolution=3600s&application_aggregation=true&filters[subsystem]=ui", key, ""), true)
		if got := logsSummary(a); got != "01T00:PRIORITY_HIGH/SEVERITY_ERROR=5/a=api;01T00:PRIORITY_HIGH/SEVERITY_ERROR=4/a=web" {
			t.Fatalf("logs by application %s", got)
		}
		a = deprecatedOK[logsAnswer](t, env.JSON(t, http.MethodGet, v2Logs+"?"+marchDay+"&resolution=3600s&subsystem_aggregation=true&filters.application=api", key, ""), true)
		if got := logsSummary(a); got != "01T00:PRIORITY_HIGH/SEVERITY_ERROR=5/s=ui;01T05:PRIORITY_LOW/SEVERITY_INFO=6/s=db" {
			t.Fatalf("logs by subsystem %s", got)
		}
	})
}

func TestV2DataUsageFromRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		mustImport(t, env, team, records(
			rec("2026-03-01T22:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_HIGH,team=a", "1500000000", "1.5"),
			rec("2026-03-01T23:00:00Z", "pillar=PILLAR_SPANS,priority=PRIORITY_LOW,team=b", "500000000", "0.25"),
			rec("2026-03-02T00:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_LOW", "2000000000", "2"),
			kindRec("2026-03-02T01:00:00Z", "evaluator=pii", "MEASUREMENT_KIND_EVALUATIONS", "MEASUREMENT_UNIT_TOKENS", "300", "0.75"),
		))
		span := "?date_range[fromDate]=2026-03-01T00:00:00Z&date_range[toDate]=2026-03-03T00:00:00Z&resolution=86400s"
		a := deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, v2Usage+span, key, ""), true)
		if got := usageSummary(a); got != "01T00[]1.75/2;02T00[]2.75/2" {
			t.Fatalf("usage %s", got)
		}
		// The units equal the v1 query's quota units for the same days.
		v1 := apitest.Decode[answer](t, env.JSON(t, http.MethodPost, queryPath, key,
			`{"daily":{"dateRange":{"start":{"year":2026,"month":3,"day":1},"end":{"year":2026,"month":3,"day":2}}}}`))
		for i, b := range v1.Buckets {
			sum := 0.0
			for _, e := range b.Entries {
				for _, m := range e.Measurements {
					var f float64
					fmt.Sscan(m.PlatformQuotaUnits.Value, &f)
					sum += f
				}
			}
			if sum != a.Entries[i].Units {
				t.Fatalf("day %d: v1 %g, v2 %g", i, sum, a.Entries[i].Units)
			}
		}
		a = deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, v2Usage+span+"&aggregate=AGGREGATE_BY_PILLAR&aggregate=AGGREGATE_BY_APPLICATION&aggregate=AGGREGATE_BY_PILLAR", key, ""), true)
		if got := usageSummary(a); got != "01T00[pillar:PILLAR_LOGS,genericDimension:applicationName=]1.5/1.5;01T00[pillar:PILLAR_SPANS,genericDimension:applicationName=]0.25/0.5;"+
			"02T00[pillar:PILLAR_LOGS,genericDimension:applicationName=]2/2;02T00[pillar:PILLAR_UNSPECIFIED,genericDimension:applicationName=]0.75/0" {
			t.Fatalf("aggregated %s", got)
		}
		a = deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, v2Usage+span+"&aggregate[0]=AGGREGATE_BY_PRIORITY&dimension_filters[0][pillar]=PILLAR_LOGS", key, ""), true)
		if got := usageSummary(a); got != "01T00[priority:PRIORITY_HIGH]1.5/1.5;02T00[priority:PRIORITY_LOW]2/2" {
			t.Fatalf("filtered %s", got)
		}
		a = deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, v2Usage+span+"&dimension_filters[0].genericDimension.key=team&dimension_filters[0].genericDimension.value=b&dimension_filters[1].priority=PRIORITY_LOW", key, ""), true)
		if got := usageSummary(a); got != "01T00[]0.25/0.5" {
			t.Fatalf("generic filter %s", got)
		}
	})
}

func TestV2GetBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ok := func(path string) {
			t.Helper()
			if res := env.JSON(t, http.MethodGet, path, key, ""); res.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, res.Status, res.Body)
			}
		}
		bad := func(path, msg string) {
			t.Helper()
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, path, key, ""), 400, msg)
		}
		from := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
		dr := func(to time.Time) string {
			return "date_range[fromDate]=" + from.Format(time.RFC3339) + "&date_range[toDate]=" + to.Format(time.RFC3339)
		}
		longest := from.AddDate(0, 0, 1827)
		ok(v2Usage + "?" + dr(longest) + "&resolution=86400s")
		bad(v2Usage+"?"+dr(longest.Add(time.Second))+"&resolution=86400s", "date_range: must cover at most 1827 days")
		ok(v2Usage) // the last 24 hours
		ok(v2Spans + "?" + marchDay + "&resolution=1s")
		bad(v2Spans+"?"+marchDay+"&resolution=0s", "resolution: must be at least 1s")
		bad(v2Logs+"?"+marchDay+"&resolution=0s", "resolution: must be at least 1s")
		ok(v2Usage + "?" + marchDay + "&resolution=3600s")
		bad(v2Usage+"?"+marchDay+"&resolution=3599s", "resolution: must be at least 3600s")
		ok(v2Usage + "?" + marchDay + "&resolution=86400s")
		bad(v2Usage+"?"+marchDay+"&resolution=86401s", "resolution: must be at most the range's length (86400s)")
		ok(v2Spans + "?" + dr(from.Add(1000*time.Hour)) + "&resolution=36s") // exactly 100000 buckets
		bad(v2Spans+"?"+dr(from.Add(1001*time.Hour))+"&resolution=36s", "resolution: makes 100100 buckets, at most 100000")
		for _, r := range []string{"1h", "60", "s", "-5s", "1.5s"} {
			bad(v2Spans+"?"+marchDay+"&resolution="+r, "resolution: must be whole seconds with an s suffix")
		}
		bad(v2Spans+"?date_range[fromDate]=2026-03-01T00:00:00Z", "date_range.toDate: is required with date_range")
		bad(v2Spans+"?date_range.toDate=2026-03-01T00:00:00Z", "date_range.fromDate: is required with date_range")
		bad(v2Spans+"?date_range[fromDate]=2026-03-01T00:00:00Z&date_range[toDate]=2026-03-01T00:00:00Z", "date_range.toDate: must be after date_range.fromDate")
		bad(v2Spans+"?date_range[fromDate]=yesterday&date_range[toDate]=2026-03-01T00:00:00Z", "date_range.fromDate")
		many := func(name string, n int) string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "&filters[%s]=v%d", name, i)
			}
			return b.String()
		}
		ok(v2Logs + "?" + marchDay + many("application", 100) + many("subsystem", 100))
		bad(v2Logs+"?"+marchDay+many("application", 101), "filters.application: must have at most 100 items (got 101)")
		bad(v2Spans+"?"+marchDay+many("subsystem", 101), "filters.subsystem: must have at most 100 items (got 101)")
		ok(v2Spans + "?" + marchDay + "&filters[application]=" + strings.Repeat("a", 1024))
		bad(v2Spans+"?"+marchDay+"&filters[application]="+strings.Repeat("a", 1025), "filters.application[0]: must be at most 1024 characters")
		dims := func(n int) string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "&dimension_filters[%d][severity]=SEVERITY_INFO", i)
			}
			return b.String()
		}
		ok(v2Usage + "?" + marchDay + dims(16))
		bad(v2Usage+"?"+marchDay+dims(17), "dimension_filters: must have at most 16 items (got 17)")
		bad(v2Usage+"?"+marchDay+"&dimension_filters[0][pillar]=PILLAR_LOGS&dimension_filters[0][tier]=TCO_TIER_LOW", "dimension_filters[0]: must set at most one of")
		bad(v2Usage+"?"+marchDay+"&dimension_filters[0][pillar]=LOGS", "dimension_filters[0].pillar")
		ok(v2Usage + "?" + marchDay + "&dimension_filters[0][genericDimension][key]=" + strings.Repeat("k", 256))
		bad(v2Usage+"?"+marchDay+"&dimension_filters[0][genericDimension][key]="+strings.Repeat("k", 257), "dimension_filters[0].genericDimension.key: must be 1 to 256 characters")
		bad(v2Usage+"?"+marchDay+"&dimension_filters[0][genericDimension][value]=x", "dimension_filters[0].genericDimension.key: must be 1 to 256 characters")
		ok(v2Usage + "?" + marchDay + "&dimension_filters[0][genericDimension][key]=k&dimension_filters[0][genericDimension][value]=" + strings.Repeat("v", 1024))
		bad(v2Usage+"?"+marchDay+"&dimension_filters[0][genericDimension][key]=k&dimension_filters[0][genericDimension][value]="+strings.Repeat("v", 1025), "dimension_filters[0].genericDimension.value: must be at most 1024 characters")
		ok(v2Usage + "?" + marchDay + "&aggregate=AGGREGATE_BY_APPLICATION&aggregate=AGGREGATE_BY_SUBSYSTEM&aggregate=AGGREGATE_BY_PILLAR&aggregate=AGGREGATE_BY_PRIORITY&aggregate=AGGREGATE_BY_POLICY_NAME&aggregate=AGGREGATE_BY_SEVERITY")
		bad(v2Usage+"?"+marchDay+"&aggregate=AGGREGATE_BY_APPLICATION&aggregate=AGGREGATE_BY_SUBSYSTEM&aggregate=AGGREGATE_BY_PILLAR&aggregate=AGGREGATE_BY_PRIORITY&aggregate=AGGREGATE_BY_POLICY_NAME&aggregate=AGGREGATE_BY_SEVERITY&aggregate=AGGREGATE_BY_PILLAR", "aggregate: must have at most 6 items (got 7)")
		bad(v2Usage+"?"+marchDay+"&aggregate=AGGREGATE_BY_UNSPECIFIED", "aggregate")
	})
}

func TestV2GetPermissionsAndIsolation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		mustImport(t, env, team, records(
			events("2026-03-01T00:00:00Z", "pillar=PILLAR_SPANS,status=success", "5"),
			events("2026-03-01T00:00:00Z", "pillar=PILLAR_LOGS", "6"),
		))
		reader := env.MustKey(t, key, "data-usage:Read")
		if got := spansSummary(deprecatedOK[spansAnswer](t, env.JSON(t, http.MethodGet, v2Spans+"?"+marchDay, reader, ""), true)); got != "01T00:5/0/0/0/0/0" {
			t.Fatalf("reader spans %s", got)
		}
		if got := logsSummary(deprecatedOK[logsAnswer](t, env.JSON(t, http.MethodGet, v2Logs+"?"+marchDay, reader, ""), true)); got != "01T00:PRIORITY_UNSPECIFIED/SEVERITY_UNSPECIFIED=6" {
			t.Fatalf("reader logs %s", got)
		}
		if got := usageSummary(deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, v2Usage+"?"+marchDay, reader, ""), true)); got != "01T00[]0/0" {
			t.Fatalf("reader usage %s", got)
		}
		other := env.MustKey(t, key, "data-usage:Manage")
		for _, p := range []string{v2Usage, v2Spans, v2Logs} {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p+"?"+marchDay, other, ""), 403, "data-usage:Read")
		}
		if got := spansSummary(deprecatedOK[spansAnswer](t, env.JSON(t, http.MethodGet, v2Spans+"?"+marchDay, otherKey, ""), true)); got != "01T00:0/0/0/0/0/0" {
			t.Fatalf("other team spans %s", got)
		}
		if got := logsSummary(deprecatedOK[logsAnswer](t, env.JSON(t, http.MethodGet, v2Logs+"?"+marchDay, otherKey, ""), true)); got != "" {
			t.Fatalf("other team logs %s", got)
		}
		if got := usageSummary(deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, v2Usage+"?"+marchDay, otherKey, ""), true)); got != "" {
			t.Fatalf("other team usage %s", got)
		}
	})
}
