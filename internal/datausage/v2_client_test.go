package datausage_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The generated client sends date_range as the deepObject parameter the document declares
// (date_range[fromDate]=…) and aggregate repeated; the operation reads both.
func TestV2DataUsageFromTheGeneratedClient(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		mustImport(t, env, team, records(
			rec("2026-03-01T22:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_HIGH", "1500000000", "1.5"),
			rec("2026-03-01T23:00:00Z", "pillar=PILLAR_SPANS,priority=PRIORITY_LOW", "500000000", "0.25"),
			rec("2026-03-02T00:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_LOW", "2000000000", "2"),
			rec("2026-03-05T00:00:00Z", "pillar=PILLAR_LOGS,priority=PRIORITY_LOW", "2000000000", "7"),
		))
		//lint:ignore SA1019 the deprecated operation is the one under test
		res, err := env.Client(t, key).GetDataUsageV2(context.Background(), oas.GetDataUsageV2Params{
			DateRange: oas.NewOptUsageV2TimeRange(oas.UsageV2TimeRange{
				FromDate: oas.NewOptDateTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)),
				ToDate:   oas.NewOptDateTime(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)),
			}),
			Aggregate:  []oas.GetDataUsageV2AggregateItem{oas.GetDataUsageV2AggregateItemAGGREGATEBYPILLAR},
			Resolution: oas.NewOptString("86400s"),
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.Response.Entries {
			pillar := ""
			for _, d := range e.Dimensions {
				if p, ok := d.Pillar.Get(); ok {
					pillar = string(p)
				}
			}
			got = append(got, fmt.Sprintf("%s[%s]%g", e.Timestamp.UTC().Format("02T15"), pillar, e.Units))
		}
		// The record of March 5th is outside the range the client sent.
		if s := strings.Join(got, ";"); s != "01T00[PILLAR_LOGS]1.5;01T00[PILLAR_SPANS]0.25;02T00[PILLAR_LOGS]2" {
			t.Fatalf("entries %s", s)
		}

		// One dimension filter written without its index, in bracket and dot form, is a one-item
		// array; mixed with indexed items it is refused.
		span := v2Usage + "?date_range[fromDate]=2026-03-01T00:00:00Z&date_range[toDate]=2026-03-03T00:00:00Z&resolution=86400s&aggregate=AGGREGATE_BY_PRIORITY"
		for _, q := range []string{"&dimension_filters[pillar]=PILLAR_LOGS", "&dimension_filters.pillar=PILLAR_LOGS"} {
			a := deprecatedOK[usageAnswer](t, env.JSON(t, http.MethodGet, span+q, key, ""), true)
			if got := usageSummary(a); got != "01T00[priority:PRIORITY_HIGH]1.5/1.5;02T00[priority:PRIORITY_LOW]2/2" {
				t.Fatalf("%s: %s", q, got)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, span+"&dimension_filters[pillar]=PILLAR_LOGS&dimension_filters[1][pillar]=PILLAR_SPANS", key, ""),
			400, "dimension_filters: index every item")
	})
}
