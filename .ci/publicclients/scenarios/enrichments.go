package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"mgmtapi-ci/publicclients/customenrichments"
	"mgmtapi-ci/publicclients/enrichments"
)

// officesCSV has a quoted field with a comma, one with a line break and one with a doubled quote.
const officesCSV = "prefix,city,address\n10.1.,Berlin,\"Unter den Linden 1, Mitte\"\n10.2.,Lisbon,\"Rua Augusta 2,\nBaixa\"\n10.3.,Oslo,\"Karl Johans \"\"gate\"\"\"\n"

// withQuery is a request editor that adds a query parameter the generated client cannot write
// (search_clauses is an array of objects in the query).
func withQuery(key, value string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		q := r.URL.Query()
		q.Add(key, value)
		r.URL.RawQuery = q.Encode()
		return nil
	}
}

func init() {
	// A data set as the vendor's Terraform provider uploads it (file name, extension, textual
	// CSV): create, read, list, search its contents (the row with quoted commas found), replace
	// (the version goes up), delete.
	register("custom_enrichments_service", func(s *S) {
		c, err := customenrichments.NewClientWithResponses(s.base, customenrichments.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := strings.ReplaceAll(unique("offices"), "-", "_")
		step := "upload a CSV data set"
		r1, err := c.CustomEnrichmentServiceCreateCustomEnrichmentWithResponse(s.ctx,
			body[customenrichments.CustomEnrichmentServiceCreateCustomEnrichmentJSONRequestBody](s, step,
				`{"name":"`+name+`","description":"offices by prefix","file":{"name":"0a1b2c3d","extension":"csv","textual":`+strconv.Quote(officesCSV)+`}}`))
		created := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		s.equal(step, created, "customEnrichment.name", name)
		s.equal(step, created, "customEnrichment.version", "1")
		id, err := strconv.ParseInt(str(created, "customEnrichment.id"), 10, 64)
		if err != nil {
			s.failf(step, "no numeric id: %v", created)
		}

		step = "read the data set"
		r2, err := c.CustomEnrichmentServiceGetCustomEnrichmentWithResponse(s.ctx, id)
		got := s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.equal(step, got, "customEnrichment.name", name)
		s.equal(step, got, "customEnrichment.description", "offices by prefix")
		s.equal(step, got, "customEnrichment.fileName", "0a1b2c3d")
		s.equal(step, got, "customEnrichment.fileSize", strconv.Itoa(len(officesCSV)))

		step = "list the data sets"
		r3, err := c.CustomEnrichmentServiceGetCustomEnrichmentsWithResponse(s.ctx)
		list := s.must(step, r3, err, 200)
		s.typed(step, r3.JSON200)
		s.contains(step, list, "customEnrichments", "name", name)

		step = "search the contents"
		r4, err := c.CustomEnrichmentServiceSearchCustomEnrichmentDataWithResponse(s.ctx, nil, withQuery("search_clauses[0][id]", strconv.FormatInt(id, 10)))
		found := s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		data := s.array(step, found, "customEnrichmentsData")
		if len(data) != 1 {
			s.failf(step, "%d data sets for one clause: %v", len(data), found)
		}
		s.equal(step, data[0], "definition.name", name)
		s.equal(step, data[0], "textual", officesCSV)

		step = "search a row by a cell"
		r5, err := c.CustomEnrichmentServiceSearchCustomEnrichmentDataWithResponse(s.ctx, nil, withQuery("search_clauses[0][name]", name),
			withQuery("filters[pathAndValues][0][path]", "address"), withQuery("filters[pathAndValues][0][multipleValues][values]", "Unter den Linden 1, Mitte"))
		row := s.must(step, r5, err, 200)
		s.typed(step, r5.JSON200)
		s.equal(step, s.array(step, row, "customEnrichmentsData")[0], "textual", "prefix,city,address\n10.1.,Berlin,\"Unter den Linden 1, Mitte\"\n")

		step = "replace the data set"
		r6, err := c.CustomEnrichmentServiceUpdateCustomEnrichmentWithResponse(s.ctx,
			body[customenrichments.CustomEnrichmentServiceUpdateCustomEnrichmentJSONRequestBody](s, step,
				fmt.Sprintf(`{"customEnrichmentId":%d,"name":"%s","description":"v2","file":{"name":"4e5f","extension":"csv","textual":"prefix,city\n10.9.,Porto\n"}}`, id, name)))
		updated := s.must(step, r6, err, 200)
		s.typed(step, r6.JSON200)
		s.equal(step, updated, "customEnrichment.version", "2")
		r7, err := c.CustomEnrichmentServiceSearchCustomEnrichmentDataWithResponse(s.ctx, nil, withQuery("search_clauses[0][id]", strconv.FormatInt(id, 10)))
		after := s.must(step, r7, err, 200)
		s.equal(step, s.array(step, after, "customEnrichmentsData")[0], "textual", "prefix,city\n10.9.,Porto\n")

		step = "delete the data set"
		r8, err := c.CustomEnrichmentServiceDeleteCustomEnrichmentWithResponse(s.ctx, id)
		s.must(step, r8, err, 200)
		s.typed(step, r8.JSON200)
		r9, err := c.CustomEnrichmentServiceGetCustomEnrichmentWithResponse(s.ctx, id)
		s.must(step, r9, err, 404)
	})

	// Enrichments as the vendor's Terraform provider writes them: geo-IP with an empty type
	// object, suspicious IP, an AWS resource type and a custom one on a data set; add, list, the
	// limit and the settings, overwrite one type, remove by ids, and the data set held while named.
	register("enrichments_service", func(s *S) {
		c, err := enrichments.NewClientWithResponses(s.base, enrichments.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		sets, err := customenrichments.NewClientWithResponses(s.base, customenrichments.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		setName := strings.ReplaceAll(unique("hosts"), "-", "_")
		step := "upload the data set the custom enrichment names"
		r0, err := sets.CustomEnrichmentServiceCreateCustomEnrichmentWithResponse(s.ctx,
			body[customenrichments.CustomEnrichmentServiceCreateCustomEnrichmentJSONRequestBody](s, step,
				`{"name":"`+setName+`","file":{"name":"h","extension":"csv","textual":"local_id,instance_type\nfoo1,t2.micro\nbar1,m3.large\n"}}`))
		setID := str(s.must(step, r0, err, 200), "customEnrichment.id")

		field := unique("field")
		step = "add enrichments of the four types"
		r1, err := c.EnrichmentServiceAddEnrichmentsWithResponse(s.ctx,
			body[enrichments.EnrichmentServiceAddEnrichmentsJSONRequestBody](s, step, `{"requestEnrichments":[`+
				`{"fieldName":"`+field+`.ip","enrichmentType":{"geoIp":{}}},`+
				`{"fieldName":"`+field+`.ip","enrichmentType":{"suspiciousIp":{}}},`+
				`{"fieldName":"`+field+`.res","enrichmentType":{"aws":{"resourceType":"aws:ec2:instance"}}},`+
				`{"fieldName":"`+field+`.host","enrichedFieldName":"`+field+`.hostinfo","enrichmentType":{"customEnrichment":{"id":`+setID+`}},"selectedColumns":["instance_type"]}]}`))
		added := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		ids := s.array(step, added, "enrichments")
		if len(ids) != 4 {
			s.failf(step, "%d enrichments answered: %v", len(ids), added)
		}

		step = "list the enrichments"
		r2, err := c.EnrichmentServiceGetEnrichmentsWithResponse(s.ctx)
		all := s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.contains(step, all, "enrichments", "fieldName", field+".res")
		s.contains(step, all, "enrichments", "fieldName", field+".host")

		step = "read the limit and the settings"
		r3, err := c.EnrichmentServiceGetEnrichmentLimitWithResponse(s.ctx)
		limit := s.must(step, r3, err, 200)
		s.typed(step, r3.JSON200)
		s.present(step, limit, "limit")
		s.present(step, limit, "used")
		r4, err := c.EnrichmentServiceGetCompanyEnrichmentSettingsWithResponse(s.ctx)
		settings := s.must(step, r4, err, 200)
		s.typed(step, r4.JSON200)
		s.equal(step, settings, "enrichmentSettings.rowLimit", "150000")

		step = "the named data set cannot be deleted"
		id, _ := strconv.ParseInt(setID, 10, 64)
		r5, err := sets.CustomEnrichmentServiceDeleteCustomEnrichmentWithResponse(s.ctx, id)
		s.must(step, r5, err, 409)

		step = "overwrite the suspicious-IP enrichments"
		r6, err := c.EnrichmentServiceAtomicOverwriteEnrichmentsWithResponse(s.ctx,
			body[enrichments.EnrichmentServiceAtomicOverwriteEnrichmentsJSONRequestBody](s, step,
				`{"requestEnrichments":[{"fieldName":"`+field+`.src","enrichmentType":{"suspiciousIp":{}}}]}`))
		over := s.must(step, r6, err, 200)
		s.typed(step, r6.JSON200)
		s.contains(step, over, "enrichments", "fieldName", field+".src")
		r7, err := c.EnrichmentServiceGetEnrichmentsWithResponse(s.ctx)
		all = s.must(step, r7, err, 200)
		s.contains(step, all, "enrichments", "fieldName", field+".res")
		s.contains(step, all, "enrichments", "fieldName", field+".src")

		step = "remove the enrichments"
		var remove []int64
		for _, e := range s.array(step, all, "enrichments") {
			if strings.HasPrefix(str(e, "fieldName"), field+".") {
				n, _ := strconv.ParseInt(str(e, "id"), 10, 64)
				remove = append(remove, n)
			}
		}
		r8, err := c.EnrichmentServiceRemoveEnrichmentsWithResponse(s.ctx, &enrichments.EnrichmentServiceRemoveEnrichmentsParams{EnrichmentIds: remove})
		left := s.must(step, r8, err, 200)
		s.typed(step, r8.JSON200)
		s.lacks(step, left, "remainingEnrichments", "fieldName", field+".src")
		s.lacks(step, left, "remainingEnrichments", "fieldName", field+".host")

		step = "delete the freed data set"
		r9, err := sets.CustomEnrichmentServiceDeleteCustomEnrichmentWithResponse(s.ctx, id)
		s.must(step, r9, err, 200)
	})
}
