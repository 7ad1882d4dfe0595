package api

import (
	"slices"
	"strings"
	"testing"

	spec "github.com/mgmtapi/mgmtapi/api"
)

// Every query object of the contract is a deepObject parameter of its operation in the document.
func TestQueryObjectsAreDeclaredAsDeepObjects(t *testing.T) {
	table, err := operations()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for id, op := range table.byID {
		got[id] = op.queryObjects
	}
	want := map[string][]string{
		"ListIncidentAggregations":      {"filter", "group_bys", "pagination"},
		"GetDataUsageV2":                {"date_range", "dimension_filters"},
		"GetSpansCountV2":               {"date_range", "filters"},
		"GetLogsCountV2":                {"date_range", "filters"},
		"DeployExtension":               {"extension_deployment"},
		"UpdateExtensionDeployment":     {"extension_deployment"},
		"ListIncidentEventsFeed":        {"filter", "order_by", "pagination"},
		"CountIncidentEvents":           {"filter"},
		"ListIncidentEventFilterValues": {"filter"},
		"ListSlos":                      {"filters"},
		"ListE2MLabelsCardinality":      {"logs_query", "metric_labels", "spans_query"},
	}
	// No operation documents its query objects any other way.
	if strings.Contains(string(spec.OpenAPIYAML), "x-query-objects") {
		t.Error("api/openapi.yaml still declares query objects under x-query-objects; declare them as deepObject parameters")
	}
	for op, names := range want {
		have := slices.Clone(got[op])
		slices.Sort(have)
		if !slices.Equal(have, names) {
			t.Errorf("%s: deepObject parameters %v, want %v", op, have, names)
		}
	}
}

// The generated decoder is handed the query without the query objects, in every form, and with
// everything else as written.
func TestWithoutQueryObjects(t *testing.T) {
	names := []string{"filter", "group_bys"}
	cases := []struct{ in, want string }{
		{"", ""},
		{"a=1", "a=1"},
		{"filter[severity]=X&a=1", "a=1"},
		{"filter.severity=X&group_bys%5B0%5D%5BincidentField%5D=Y&a=%20&b", "a=%20&b"},
		{"filter=%7B%7D&filters=1&group_bysx=2", "filters=1&group_bysx=2"},
		{"group_bys[incidentField]=Y&group_bys.contextualLabel=z", ""},
		{"%zz=1&filter[a]=1", "%zz=1"},
	}
	for _, c := range cases {
		if got := withoutQueryObjects(c.in, names); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
