package enrichments_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/enrichments"
)

const (
	rules    = "/mgmt/openapi/5/enrichment-rules/enrichment-rules/v1"
	dataSets = "/mgmt/openapi/5/enrichment-rules/custom-enrichment-rules/v1"
	contents = dataSets + "/all/contents"
)

type enrichment struct {
	ID                int64
	FieldName         string
	EnrichedFieldName string
	EnrichmentType    map[string]json.RawMessage
	SelectedColumns   []string
}

type dataSet struct {
	ID          int64
	Name        string
	Description string
	Version     int64
	FileName    string
	FileSize    int64
	IsQueryOnly bool
}

func enrichmentsOf(t *testing.T, res apitest.Response, field string) []enrichment {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", res.Status, res.Body)
	}
	var out map[string][]enrichment
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatalf("decode %s: %v", res.Body, err)
	}
	got, ok := out[field]
	if !ok {
		t.Fatalf("no %s in %s", field, res.Body)
	}
	return got
}

func fields(es []enrichment) string {
	var out []string
	for _, e := range es {
		var kind string
		for k := range e.EnrichmentType {
			kind = k
		}
		out = append(out, e.FieldName+":"+kind)
	}
	return strings.Join(out, ",")
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// createSet uploads csv as the data set name and answers it.
func createSet(t *testing.T, env *apitest.Env, key, name, csv string) dataSet {
	t.Helper()
	res := env.JSON(t, http.MethodPost, dataSets, key, `{"name":"`+name+`","description":"d","file":{"name":"f.csv","extension":"csv","textual":`+quote(csv)+`}}`)
	return apitest.Decode[struct{ CustomEnrichment dataSet }](t, res).CustomEnrichment
}

// search answers the contents of a search with query, as data set name → CSV text, and the next page token.
func search(t *testing.T, env *apitest.Env, key, query string) (map[string]string, string) {
	t.Helper()
	path := contents
	if query != "" {
		path += "?" + query
	}
	res := env.JSON(t, http.MethodPost, path, key, "")
	got := apitest.Decode[struct {
		CustomEnrichmentsData []struct {
			Definition dataSet
			Textual    string
		}
		NextPageToken string
	}](t, res)
	out := map[string]string{}
	for _, d := range got.CustomEnrichmentsData {
		out[d.Definition.Name] = d.Textual
	}
	return out, got.NextPageToken
}

const offices = "prefix,city,address\n10.1.,Berlin,\"Unter den Linden 1, Mitte\"\n10.2.,Lisbon,\"Rua Augusta 2,\nBaixa\"\n10.3.,\"Say \"\"hi\"\"\",x\n"

func TestDataSetLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		d := createSet(t, env, key, "offices", offices)
		if d.ID == 0 || d.Version != 1 || d.Name != "offices" || d.FileName != "f.csv" || d.FileSize != int64(len(offices)) || d.Description != "d" {
			t.Fatalf("created %+v", d)
		}
		got := apitest.Decode[struct{ CustomEnrichment dataSet }](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", dataSets, d.ID), key, "")).CustomEnrichment
		if got != d {
			t.Fatalf("get %+v, want %+v", got, d)
		}
		// The contents come back as CSV, quoted where needed, the embedded comma and line break kept.
		sets, next := search(t, env, key, "")
		if sets["offices"] != offices || next != "" {
			t.Fatalf("contents %q (next %q), want %q", sets["offices"], next, offices)
		}
		// The latest segment serves it too.
		if res := env.JSON(t, http.MethodGet, strings.Replace(dataSets, "/5/", "/latest/", 1), key, ""); res.Status != 200 || !strings.Contains(string(res.Body), `"offices"`) {
			t.Fatalf("latest list: %d %s", res.Status, res.Body)
		}
		// Team isolation.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", dataSets, d.ID), other, ""), 404, "id")
		if sets, _ := search(t, env, other, ""); len(sets) != 0 {
			t.Fatalf("other team sees %v", sets)
		}
		if res := env.JSON(t, http.MethodGet, dataSets, other, ""); string(res.Body) != `{"customEnrichments":[]}` {
			t.Fatalf("other team's list %s", res.Body)
		}
		// An update replaces the contents and bumps the version.
		res := env.JSON(t, http.MethodPut, dataSets, key, fmt.Sprintf(`{"customEnrichmentId":%d,"name":"offices2","file":{"textual":"prefix,city\n10.9.,Oslo\n"}}`, d.ID))
		up := apitest.Decode[struct{ CustomEnrichment dataSet }](t, res).CustomEnrichment
		if up.Version != 2 || up.Name != "offices2" || up.FileName != "offices2.csv" || up.Description != "" {
			t.Fatalf("updated %+v", up)
		}
		env.Restart(t)
		if sets, _ := search(t, env, key, "search_clauses[0][id]="+fmt.Sprint(d.ID)); sets["offices2"] != "prefix,city\n10.9.,Oslo\n" {
			t.Fatalf("after update %v", sets)
		}
		// A bad update changes nothing.
		res = env.JSON(t, http.MethodPut, dataSets, key, fmt.Sprintf(`{"customEnrichmentId":%d,"name":"offices3","file":{"textual":"a,b\n1,2,3\n"}}`, d.ID))
		apitest.ExpectError(t, res, 400, "file.textual", "line 2")
		if sets, _ := search(t, env, key, ""); sets["offices2"] != "prefix,city\n10.9.,Oslo\n" {
			t.Fatalf("after a refused update %v", sets)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, dataSets, key, `{"customEnrichmentId":999,"name":"x","file":{"textual":"a\n"}}`), 404, "customEnrichmentId")
		// Delete.
		res = env.JSON(t, http.MethodDelete, fmt.Sprintf("%s/%d", dataSets, d.ID), key, "")
		if res.Status != 200 || !strings.Contains(string(res.Body), fmt.Sprintf(`"customEnrichmentId":%d`, d.ID)) {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", dataSets, d.ID), key, ""), 404)
		if n := apitest.MustQueryString(t, env.DB, `SELECT COUNT(*) FROM enrichment_data_rows`); n != "0" {
			t.Fatalf("%s rows left", n)
		}
		// The audit log names the data set in each write.
		for _, op := range []string{"CreateEnrichmentDataSet", "UpdateEnrichmentDataSet", "DeleteEnrichmentDataSet"} {
			ids := apitest.MustQueryString(t, env.DB, `SELECT resource_ids FROM audit_records WHERE operation = $1 AND status = 200`, op)
			if !strings.Contains(ids, fmt.Sprint(d.ID)) {
				t.Errorf("audit record of %s: resource ids %q lack %d", op, ids, d.ID)
			}
		}
		if n := apitest.MustQueryString(t, env.DB, `SELECT COUNT(*) FROM audit_records WHERE operation = 'SearchEnrichmentDataSetContents'`); n != "0" {
			t.Errorf("a search wrote %s audit records", n)
		}
		// Ids are not given twice.
		if again := createSet(t, env, key, "offices", offices); again.ID == d.ID {
			t.Fatalf("id %d given twice", d.ID)
		}
	})
}

func TestDataSetRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		create := func(name, file string) apitest.Response {
			return env.JSON(t, http.MethodPost, dataSets, key, `{"name":"`+name+`","file":`+file+`}`)
		}
		text := func(csv string) string { return `{"textual":` + quote(csv) + `}` }
		cases := []struct {
			name, file string
			status     int
			fragments  []string
		}{
			{"a", text("x,y\n1,2\n3\n"), 400, []string{"file.textual", "line 3", "2 fields"}},
			{"a", text("x,y\n1,\"2\n"), 400, []string{"file.textual", "line 2"}},
			{"a", text("x,y\n1,a\"b\n"), 400, []string{"file.textual", "line 2", "quote"}},
			{"a", text(""), 400, []string{"file.textual", "empty", "header"}},
			{"a", text("x,,z\n"), 400, []string{"line 1", "column 2", "empty"}},
			{"a", text("x,x\n"), 400, []string{"line 1", "columns 1 and 2", `"x"`}},
			{"a", text(strings.Repeat("c,", 100) + "c\n"), 400, []string{"line 1", "101 columns", "100"}},
			{"a", `{"binary":"` + "/w==" + `"}`, 400, []string{"file.binary", "line 1", "UTF-8"}},
			{"a", `{"textual":"a","binary":"YQ=="}`, 400, []string{"file", "both"}},
			{"a", `{"name":"x"}`, 400, []string{"file", "textual", "binary"}},
			{"a", `{"textual":"a\n","extension":"txt"}`, 400, []string{"extension"}},
			{"has space", text("a\n"), 400, []string{"name"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, create(c.name, c.file), c.status, c.fragments...)
		}
		// binary holds the CSV too.
		res := create("bin", `{"binary":"YSxiCjEsMgo="}`)
		if res.Status != 200 {
			t.Fatalf("binary: %d %s", res.Status, res.Body)
		}
		if sets, _ := search(t, env, key, "search_clauses[name]=bin"); sets["bin"] != "a,b\n1,2\n" {
			t.Fatalf("binary contents %v", sets)
		}
		// Names are unique; the team holds at most 30.
		apitest.ExpectError(t, create("bin", text("a\n")), 409, "name", `"bin"`)
		for i := 1; i < 30; i++ {
			if res := create(fmt.Sprintf("s%d", i), text("a\n")); res.Status != 200 {
				t.Fatalf("set %d: %d %s", i, res.Status, res.Body)
			}
		}
		apitest.ExpectError(t, create("s30", text("a\n")), 429, "30")
		if n := apitest.MustQueryString(t, env.DB, `SELECT COUNT(*) FROM enrichment_data_sets`); n != "30" {
			t.Fatalf("%s data sets stored", n)
		}
	})
}

func TestSearchFiltersAndPages(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		createSet(t, env, key, "hosts", "host,zone,owner\nweb1,eu,ana\nweb2,us,bo\ndb1,eu,\"cy, jr\"\ndb2,us,ana\n")
		createSet(t, env, key, "users", "owner,team\nana,core\nbo,edge\n")
		q := func(kv ...string) string {
			v := url.Values{}
			for i := 0; i < len(kv); i += 2 {
				v.Add(kv[i], kv[i+1])
			}
			return v.Encode()
		}
		sets, _ := search(t, env, key, q("search_clauses[0][name]", "hosts", "filters[pathAndValues][0][path]", "zone",
			"filters[pathAndValues][0][multipleValues][values]", "eu"))
		if len(sets) != 1 || sets["hosts"] != "host,zone,owner\nweb1,eu,ana\ndb1,eu,\"cy, jr\"\n" {
			t.Fatalf("zone=eu: %v", sets)
		}
		// OR, regular expressions, and a column only one data set has.
		sets, _ = search(t, env, key, q("filters[operator]", "FILTER_OPERATOR_OR",
			"filters[pathAndValues][0][path]", "host", "filters[pathAndValues][0][multipleValues][matcher]", "FILTER_MATCHER_REGEXP",
			"filters[pathAndValues][0][multipleValues][values]", "^db",
			"filters[pathAndValues][1][path]", "owner", "filters[pathAndValues][1][multipleValues][values]", "bo"))
		if sets["hosts"] != "host,zone,owner\nweb2,us,bo\ndb1,eu,\"cy, jr\"\ndb2,us,ana\n" || sets["users"] != "owner,team\nbo,edge\n" {
			t.Fatalf("or: %v", sets)
		}
		// Nested filters: zone us AND (owner ana).
		sets, _ = search(t, env, key, q("search_clauses.name", "hosts", "filters[pathAndValues][0][path]", "zone",
			"filters[pathAndValues][0][multipleValues][values]", "us",
			"filters[pathAndValues][1][filters][pathAndValues][0][path]", "owner",
			"filters[pathAndValues][1][filters][pathAndValues][0][multipleValues][values]", "ana"))
		if sets["hosts"] != "host,zone,owner\ndb2,us,ana\n" {
			t.Fatalf("nested: %v", sets)
		}
		// Pages of two rows over both data sets.
		var pages []map[string]string
		token := ""
		for i := 0; i < 5; i++ {
			query := q("page_size", "2")
			if token != "" {
				query += "&page_token=" + token
			}
			var page map[string]string
			page, token = search(t, env, key, query)
			pages = append(pages, page)
			if token == "" {
				break
			}
		}
		want := `[map[hosts:host,zone,owner
web1,eu,ana
web2,us,bo
] map[hosts:host,zone,owner
db1,eu,"cy, jr"
db2,us,ana
] map[users:owner,team
ana,core
bo,edge
]]`
		if fmt.Sprint(pages) != want {
			t.Fatalf("pages %v", pages)
		}
		for _, c := range []struct {
			query     string
			status    int
			fragments []string
		}{
			{q("search_clauses[0][id]", "999"), 404, []string{"search_clauses[0].id", "999"}},
			{q("search_clauses[0][name]", "nope"), 404, []string{"search_clauses[0].name", "nope"}},
			{q("search_clauses[0][id]", "1", "search_clauses[0][name]", "hosts"), 400, []string{"search_clauses[0]", "exactly one"}},
			{q("filters[pathAndValues][0][path]", "nope", "filters[pathAndValues][0][multipleValues][values]", "x"), 400, []string{"filters", `"nope"`}},
			{q("filters[pathAndValues][0][path]", "host", "filters[pathAndValues][0][multipleValues][matcher]", "FILTER_MATCHER_REGEXP",
				"filters[pathAndValues][0][multipleValues][values]", "("), 400, []string{"filters.pathAndValues[0].multipleValues.values[0]", "regular expression"}},
			{q("filters[pathAndValues][0][path]", "host"), 400, []string{"filters.pathAndValues[0]", "multipleValues"}},
			{q("page_token", "x"), 400, []string{"page_token"}},
			{q("filters[pathAndValues][0][path]", "host", "filters[pathAndValues][0][multipleValues][values]", strings.Repeat("é", 1025)), 400,
				[]string{"filters.pathAndValues[0].multipleValues.values[0]", "1024"}},
			{q("page_size", "0"), 400, []string{"page_size"}},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, contents+"?"+c.query, key, ""), c.status, c.fragments...)
		}
	})
}

func TestEnrichmentLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		d := createSet(t, env, key, "offices", offices)
		custom := fmt.Sprintf(`{"fieldName":"ip","enrichmentType":{"customEnrichment":{"id":%d}},"selectedColumns":["city"]}`, d.ID)
		body := `{"requestEnrichments":[{"fieldName":"ip","enrichedFieldName":"geo","enrichmentType":{"geoIp":{"withAsn":true}},"targets":[{"dataset":"logs"}]},` +
			`{"fieldName":"ip","enrichmentType":{"suspiciousIp":{}}},{"fieldName":"res","enrichmentType":{"aws":{"resourceType":"aws:ec2:instance"}}},` + custom + `]}`
		added := enrichmentsOf(t, env.JSON(t, http.MethodPost, rules, key, body), "enrichments")
		if fields(added) != "ip:geoIp,ip:suspiciousIp,res:aws,ip:customEnrichment" || added[0].ID == 0 || added[0].EnrichedFieldName != "geo" {
			t.Fatalf("added %+v", added)
		}
		all := enrichmentsOf(t, env.JSON(t, http.MethodGet, rules, key, ""), "enrichments")
		if len(all) != 4 || all[3].SelectedColumns[0] != "city" {
			t.Fatalf("list %+v", all)
		}
		if res := env.JSON(t, http.MethodGet, rules, other, ""); string(res.Body) != `{"enrichments":[]}` {
			t.Fatalf("other team: %s", res.Body)
		}
		limit := apitest.Decode[struct{ Limit, Used int64 }](t, env.JSON(t, http.MethodGet, rules+"/limit", key, ""))
		if limit.Limit != 50 || limit.Used != 4 {
			t.Fatalf("limit %+v", limit)
		}
		settings := apitest.Decode[struct{ EnrichmentSettings map[string]any }](t, env.JSON(t, http.MethodGet, rules+"/settings", key, "")).EnrichmentSettings
		if fmt.Sprint(settings) != "map[enrichmentAmountLimit:50 enrichmentsInUse:4 queryOnlyRowLimit:10000 queryOnlySizeLimitBytes:524288 rowLimit:150000 sizeLimitBytes:20971520]" {
			t.Fatalf("settings %v", settings)
		}
		// The data set in use cannot be deleted, nor lose the selected column.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, fmt.Sprintf("%s/%d", dataSets, d.ID), key, ""), 409, "used by enrichments", `"ip"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, dataSets, key, fmt.Sprintf(`{"customEnrichmentId":%d,"name":"offices","file":{"textual":"prefix,town\n"}}`, d.ID)),
			409, "line 1", `"city"`)
		// Overwrite of one type keeps the others.
		got := enrichmentsOf(t, env.JSON(t, http.MethodPut, rules, key, `{"requestEnrichments":[{"fieldName":"src","enrichmentType":{"suspiciousIp":{}}},{"fieldName":"dst","enrichmentType":{"suspiciousIp":{}}}]}`), "enrichments")
		if fields(got) != "src:suspiciousIp,dst:suspiciousIp" {
			t.Fatalf("overwrite %+v", got)
		}
		if all = enrichmentsOf(t, env.JSON(t, http.MethodGet, rules, key, ""), "enrichments"); fields(all) != "ip:geoIp,res:aws,ip:customEnrichment,src:suspiciousIp,dst:suspiciousIp" {
			t.Fatalf("after overwrite %s", fields(all))
		}
		// The older form: one type with its fields; an empty list removes that type.
		got = enrichmentsOf(t, env.JSON(t, http.MethodPut, rules, key, `{"enrichmentType":{"aws":{"resourceType":"aws:ec2:instance"}},"enrichmentFields":[]}`), "enrichments")
		if len(got) != 0 {
			t.Fatalf("older form %+v", got)
		}
		// Remove, all or none.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, fmt.Sprintf("%s?enrichment_ids=%d&enrichment_ids=9999", rules, all[0].ID), key, ""), 404, "9999")
		left := enrichmentsOf(t, env.JSON(t, http.MethodDelete, fmt.Sprintf("%s?enrichment_ids=%d", rules, all[2].ID), key, ""), "remainingEnrichments")
		if fields(left) != "ip:geoIp,src:suspiciousIp,dst:suspiciousIp" {
			t.Fatalf("remaining %s", fields(left))
		}
		// Another team cannot remove them.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, fmt.Sprintf("%s?enrichment_ids=%d", rules, all[0].ID), other, ""), 404)
		// Overwrite all.
		got = enrichmentsOf(t, env.JSON(t, http.MethodPut, rules+"/all", key, `{"requestEnrichments":[{"fieldName":"a","enrichmentType":{"geoIp":{}}}]}`), "enrichments")
		if fields(got) != "a:geoIp" || got[0].ID <= all[len(all)-1].ID {
			t.Fatalf("overwrite all %+v", got)
		}
		// Now the data set is free.
		if res := env.JSON(t, http.MethodDelete, fmt.Sprintf("%s/%d", dataSets, d.ID), key, ""); res.Status != 200 {
			t.Fatalf("delete freed data set: %d %s", res.Status, res.Body)
		}
	})
}

func TestEnrichmentRefusedChangesNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		d := createSet(t, env, key, "offices", offices)
		enrichmentsOf(t, env.JSON(t, http.MethodPost, rules, key, `{"requestEnrichments":[{"fieldName":"ip","enrichmentType":{"geoIp":{}}}]}`), "enrichments")
		before := string(env.JSON(t, http.MethodGet, rules, key, "").Body)
		good := `{"fieldName":"ok","enrichmentType":{"suspiciousIp":{}}}`
		cases := []struct {
			method, path, bad string
			status            int
			fragments         []string
		}{
			{http.MethodPost, rules, `{"fieldName":"x","enrichmentType":{}}`, 400, []string{"requestEnrichments[1].enrichmentType", "geoIp"}},
			{http.MethodPost, rules, `{"fieldName":"x","enrichmentType":{"geoIp":{},"aws":{"resourceType":"r"}}}`, 400, []string{"requestEnrichments[1].enrichmentType", "geoIp and aws"}},
			{http.MethodPost, rules, `{"fieldName":"x","enrichmentType":{"aws":{}}}`, 400, []string{"requestEnrichments[1].enrichmentType.aws.resourceType"}},
			{http.MethodPost, rules, `{"fieldName":"x","enrichmentType":{"customEnrichment":{"id":999}}}`, 404, []string{"requestEnrichments[1].enrichmentType.customEnrichment.id", "999"}},
			{http.MethodPost, rules, fmt.Sprintf(`{"fieldName":"x","enrichmentType":{"customEnrichment":{"id":%d}},"selectedColumns":["nope"]}`, d.ID), 400, []string{"requestEnrichments[1].selectedColumns[0]", `"nope"`, `"city"`}},
			{http.MethodPost, rules, `{"fieldName":"x","enrichmentType":{"geoIp":{}},"selectedColumns":["a"]}`, 400, []string{"requestEnrichments[1].selectedColumns", "geoIp"}},
			{http.MethodPost, rules, `{"fieldName":"ip","enrichmentType":{"geoIp":{}}}`, 409, []string{"requestEnrichments[1].fieldName", `"ip"`}},
			{http.MethodPost, rules, `{"fieldName":"ok","enrichmentType":{"suspiciousIp":{}}}`, 400, []string{"requestEnrichments[1].fieldName", "requestEnrichments[0]"}},
			{http.MethodPost, rules, `{"fieldName":"x","enrichmentType":{"geoIp":{}},"targets":[{"dataset":"a"},{"dataset":"a"}]}`, 400, []string{"requestEnrichments[1].targets[1].dataset"}},
			{http.MethodPost, rules, `{"fieldName":" ","enrichmentType":{"geoIp":{}}}`, 400, []string{"requestEnrichments[1].fieldName"}},
			{http.MethodPut, rules, `{"fieldName":"x","enrichmentType":{"customEnrichment":{"id":999}}}`, 404, []string{"requestEnrichments[1]", "999"}},
			{http.MethodPut, rules + "/all", `{"fieldName":"x","enrichmentType":{"customEnrichment":{"id":999}}}`, 404, []string{"requestEnrichments[1]", "999"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, c.method, c.path, key, `{"requestEnrichments":[`+good+`,`+c.bad+`]}`), c.status, c.fragments...)
			if after := string(env.JSON(t, http.MethodGet, rules, key, "").Body); after != before {
				t.Fatalf("%s %s with %s changed %s to %s", c.method, c.path, c.bad, before, after)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rules, key, `{"requestEnrichments":[`+good+`],"enrichmentType":{"geoIp":{}}}`), 400, "not both")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rules, key, `{"enrichmentFields":[{"fieldName":"a"}]}`), 400, "enrichmentType")
		// The limit: 50 at most, past it 429 and nothing stored, on every writing operation.
		var many []string
		for i := 0; i < 50; i++ {
			many = append(many, fmt.Sprintf(`{"fieldName":"f%d","enrichmentType":{"geoIp":{}}}`, i))
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rules, key, `{"requestEnrichments":[`+strings.Join(many, ",")+`]}`), 429, "51", "50")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rules, key, `{"requestEnrichments":[`+good+`,`+strings.Join(many, ",")+`]}`), 429, "51", "50")
		if after := string(env.JSON(t, http.MethodGet, rules, key, "").Body); after != before {
			t.Fatalf("over the limit changed %s to %s", before, after)
		}
		if got := enrichmentsOf(t, env.JSON(t, http.MethodPut, rules+"/all", key, `{"requestEnrichments":[`+strings.Join(many, ",")+`]}`), "enrichments"); len(got) != 50 {
			t.Fatalf("50 enrichments: %d", len(got))
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rules, key, `{"requestEnrichments":[`+good+`]}`), 429, "51")
	})
}

func TestEnrichmentPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		d := createSet(t, env, key, "offices", offices)
		geo := env.MustKey(t, key, "geo-enrichment:ReadConfig", "geo-enrichment:UpdateConfig")
		reader := env.MustKey(t, key, "geo-enrichment:ReadConfig")
		dataReader := env.MustKey(t, key, "team-custom-enrichment:ReadData")
		configReader := env.MustKey(t, key, "team-custom-enrichment:ReadConfig")
		enrichmentsOf(t, env.JSON(t, http.MethodPost, rules, geo, `{"requestEnrichments":[{"fieldName":"ip","enrichmentType":{"geoIp":{}}}]}`), "enrichments")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rules, geo, `{"requestEnrichments":[{"fieldName":"ip","enrichmentType":{"suspiciousIp":{}}}]}`), 403, "security-enrichment:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rules, geo, fmt.Sprintf(`{"requestEnrichments":[{"fieldName":"ip","enrichmentType":{"customEnrichment":{"id":%d}}}]}`, d.ID)), 403, "team-custom-enrichment:UpdateConfig")
		enrichmentsOf(t, env.JSON(t, http.MethodPost, rules, key, `{"requestEnrichments":[{"fieldName":"r","enrichmentType":{"aws":{"resourceType":"aws:s3:bucket"}}}]}`), "enrichments")
		// Replacing all removes the AWS one: its permission is needed too.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rules+"/all", geo, `{"requestEnrichments":[]}`), 403, "cloud-metadata-enrichment:UpdateConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rules, reader, `{"requestEnrichments":[]}`), 403)
		enrichmentsOf(t, env.JSON(t, http.MethodGet, rules, reader, ""), "enrichments")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, contents, configReader, ""), 403)
		search(t, env, dataReader, "")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, dataSets, dataReader, ""), 403)
		if res := env.JSON(t, http.MethodGet, dataSets, configReader, ""); res.Status != 200 {
			t.Fatalf("list with ReadConfig: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, rules, "nope", ""), 401)
	})
}

// TestDataSetRowBound: the most rows a data set may have are accepted and searched in pages; one
// more is refused naming its line, and the stored data set is as before.
func TestDataSetRowBound(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 150000 rows")
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		var b strings.Builder
		b.WriteString("id,zone\n")
		for i := 1; i <= enrichments.MaxRows; i++ {
			fmt.Fprintf(&b, "%d,z%d\n", i, i%7)
		}
		full := b.String()
		d := createSet(t, env, key, "big", full)
		if d.FileSize != int64(len(full)) {
			t.Fatalf("created %+v", d)
		}
		page, next := search(t, env, key, "page_size=2&page_token=149998")
		if page["big"] != "id,zone\n149999,z3\n150000,z4\n" || next != "" {
			t.Fatalf("last page %q, next %q", page["big"], next)
		}
		over := full + "150001,z0\n"
		res := env.JSON(t, http.MethodPut, dataSets, key, fmt.Sprintf(`{"customEnrichmentId":%d,"name":"big","file":{"textual":%s}}`, d.ID, quote(over)))
		apitest.ExpectError(t, res, 400, "file.textual", "line 150002", "150000 rows")
		if got := apitest.MustQueryString(t, env.DB, `SELECT COUNT(*) FROM enrichment_data_rows`); got != "150000" {
			t.Fatalf("%s rows stored after the refused update", got)
		}
	})
}
