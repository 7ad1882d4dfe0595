package incidents_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The generated client sends group_bys and pagination as the deepObject parameters the document
// declares (group_bys[incidentField]=…, pagination[pageSize]=…); the operation reads them as a
// one-item group-by array and a page request, page tokens included.
func TestAggregationsFromTheGeneratedClient(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := loadFixture(t, env)
		client := env.Client(t, env.RootKey)
		params := oas.ListIncidentAggregationsParams{
			GroupBys: oas.NewOptIncidentGroupBy(oas.IncidentGroupBy{
				IncidentField:    oas.NewOptIncidentFields(oas.IncidentFieldsINCIDENTSFIELDSSEVERITY),
				OrderByDirection: oas.NewOptOrderByDirection(oas.OrderByDirectionORDERBYDIRECTIONDESC),
			}),
			Pagination: oas.NewOptIncidentPageRequest(oas.IncidentPageRequest{PageSize: 2}),
		}
		severities := func(res *oas.IncidentAggregationsResponse) string {
			var out []string
			for _, g := range res.IncidentAggs {
				out = append(out, fmt.Sprintf("%s:%d", g.GroupBysValue[0].IncidentField.Value.Severity.Value, g.AllValuesCount))
			}
			return strings.Join(out, " ")
		}
		first, err := client.ListIncidentAggregations(context.Background(), params)
		if err != nil {
			t.Fatalf("first page: %v", err)
		}
		equal(t, "first page", severities(first), "INCIDENT_SEVERITY_CRITICAL:1 INCIDENT_SEVERITY_ERROR:2")
		equal(t, "total groups", first.Pagination.TotalSize, int64(3))
		equal(t, "error ids", strings.Join(first.IncidentAggs[1].ListIncidentsId, ","), sortedIDs(f.a, f.b))
		token, ok := first.Pagination.NextPageToken.Get()
		if !ok {
			t.Fatal("the first of two pages has no next page token")
		}
		params.Pagination.Value.PageToken = oas.NewOptString(token)
		second, err := client.ListIncidentAggregations(context.Background(), params)
		if err != nil {
			t.Fatalf("second page: %v", err)
		}
		equal(t, "second page", severities(second), "INCIDENT_SEVERITY_INFO:1")
		if _, more := second.Pagination.NextPageToken.Get(); more {
			t.Fatal("the last page has a next page token")
		}

		// The same query written by hand in the unindexed bracket and dot forms.
		for _, q := range []string{
			"group_bys[incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[orderByDirection]=ORDER_BY_DIRECTION_DESC&pagination[pageSize]=2",
			"group_bys.incidentField=INCIDENTS_FIELDS_SEVERITY&group_bys.orderByDirection=ORDER_BY_DIRECTION_DESC&pagination.pageSize=2",
		} {
			out := aggs(t, env, q)
			equal(t, q+": groups", len(out.IncidentAggs), 2)
			equal(t, q+": first", out.IncidentAggs[0].GroupBysValue[0].IncidentField["severity"], "INCIDENT_SEVERITY_CRITICAL")
		}
	})
}
