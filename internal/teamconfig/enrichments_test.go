package teamconfig_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// The enrichments' areas (enrichmentDataSets, enrichments).

const (
	enrichmentRules = "/mgmt/openapi/5/enrichment-rules/enrichment-rules/v1"
	dataSetsPath    = "/mgmt/openapi/5/enrichment-rules/custom-enrichment-rules/v1"
	officesCSV      = "prefix,city,address\n10.1.,Berlin,\"Unter den Linden 1, Mitte\"\n10.2.,Lisbon,\"Rua Augusta 2,\nBaixa\"\n"
)

// fillEnrichments gives the team a data set and two enrichments, one of them custom on it.
func fillEnrichments(t *testing.T, env *apitest.Env, key string) int64 {
	t.Helper()
	set := apitest.Decode[struct{ CustomEnrichment struct{ ID int64 } }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, dataSetsPath, `{"name":"offices","description":"by prefix","file":{"name":"offices.csv","textual":`+
			fmt.Sprintf("%q", officesCSV)+`}}`)}).CustomEnrichment.ID
	mustCreate(t, env, key, http.MethodPost, enrichmentRules, fmt.Sprintf(`{"requestEnrichments":[`+
		`{"fieldName":"client.ip","enrichedFieldName":"client.geo","enrichmentType":{"geoIp":{"withAsn":true}},"targets":[{"dataset":"logs"}]},`+
		`{"fieldName":"client.ip","enrichmentType":{"customEnrichment":{"id":%d}},"selectedColumns":["city"]}]}`, set))
	return set
}

// TestEnrichmentsCopyAndPrune: the data set's contents travel as CSV text and come back the
// same; the enrichments keep their ids and the data set it names; prune deletes the enrichments
// before the data set they name; an update of the contents bumps the version.
func TestEnrichmentsCopyAndPrune(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, source := env.MustTeam(t, "source")
		set := fillEnrichments(t, env, source)
		doc := mustExport(t, env, source, true)
		for _, want := range []string{`"textual": "prefix,city,address\n10.1.,Berlin,\"Unter den Linden 1, Mitte\"\n10.2.,Lisbon,\"Rua Augusta 2,\nBaixa\"\n"`,
			`"customEnrichment": {`, `"withAsn": true`} {
			if !strings.Contains(doc, want) {
				t.Errorf("the export lacks %s:\n%s", want, doc)
			}
		}
		_, target := env.MustTeam(t, "target")
		onlyActions(t, mustApply(t, env, target, "", doc), map[string]int{"enrichmentDataSets create": 1, "enrichments create": 2})
		if copied := mustExport(t, env, target, true); copied != doc {
			t.Fatalf("the copy exports otherwise:\n--- source\n%s\n--- copy\n%s", doc, copied)
		}
		res := env.JSON(t, http.MethodPost, dataSetsPath+"/all/contents", target, "")
		if !strings.Contains(string(res.Body), `"textual":"prefix,city,address\n10.1.,Berlin`) {
			t.Fatalf("the copy's contents: %s", res.Body)
		}
		// A changed file is an update, which bumps the version.
		changed := strings.Replace(doc, `Berlin`, `Hamburg`, 1)
		onlyActions(t, mustApply(t, env, target, "", changed), map[string]int{"enrichmentDataSets update": 1})
		got := apitest.Decode[struct{ CustomEnrichment struct{ Version int64 } }](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", dataSetsPath, set), target, ""))
		if got.CustomEnrichment.Version != 2 {
			t.Fatalf("version after the update: %d", got.CustomEnrichment.Version)
		}
		// Prune everything: the enrichments go first, then the data set.
		onlyActions(t, mustApply(t, env, target, "?prune=true", `{"enrichmentDataSets":[],"enrichments":[]}`),
			map[string]int{"enrichmentDataSets delete": 1, "enrichments delete": 2})
		if res := env.JSON(t, http.MethodGet, enrichmentRules, target, ""); string(res.Body) != `{"enrichments":[]}` {
			t.Fatalf("after prune: %s", res.Body)
		}
		if after := mustExport(t, env, source, true); after != doc {
			t.Fatalf("pruning another team changed the source:\n%s", after)
		}
	})
}

// TestEnrichmentsRefused: a broken file names its line; a custom enrichment of a data set the
// document lacks is a 404; a data set still named cannot be pruned alone; nothing changes.
func TestEnrichmentsRefused(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		set := fillEnrichments(t, env, key)
		before := mustExport(t, env, key, false)
		for _, c := range []struct {
			query, doc string
			status     int
			fragments  []string
		}{
			{"", `{"enrichmentDataSets":[{"name":"bad","file":{"textual":"a,b\n1\n"}}]}`, 400, []string{"enrichmentDataSets[0]", "file.textual", "line 2"}},
			{"", `{"enrichments":[{"fieldName":"x","enrichmentType":{"customEnrichment":{"id":999}}}]}`, 400, []string{`enrichments[0] ("x"): enrichmentType.customEnrichment.id`, "999"}},
			{"", `{"enrichments":[{"fieldName":"x","enrichmentType":{}}]}`, 400, []string{"enrichments[0]", "enrichmentType"}},
			{"?prune=true", `{"enrichmentDataSets":[]}`, 409, []string{"enrichmentDataSets", fmt.Sprint(set), "used by enrichments"}},
		} {
			apitest.ExpectError(t, apply(t, env, key, c.query, "application/json", c.doc), c.status, c.fragments...)
			if after := mustExport(t, env, key, false); after != before {
				t.Fatalf("%s changed the team:\n%s", c.doc, after)
			}
		}
	})
}
