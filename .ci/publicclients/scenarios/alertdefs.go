package main

import (
	"encoding/json"
	"strconv"

	"mgmtapi-ci/publicclients/alertdefinitions"
)

// metricThresholdDef is the alertDefProperties of an enabled metric threshold definition: one
// PromQL filter, one rule.
func metricThresholdDef(name, description, priority string, threshold float64) string {
	return `{"name":"` + name + `","description":"` + description + `","enabled":true,"priority":"` + priority + `",
		"type":"ALERT_DEF_TYPE_METRIC_THRESHOLD","groupByKeys":["service"],"entityLabels":{"team":"publicclients"},
		"metricThreshold":{"metricFilter":{"promql":"sum by (service) (rate(http_requests_total{code=~\"5..\"}[5m]))"},
		"missingValues":{"replaceWithZero":true},
		"rules":[{"condition":{"threshold":` + strconv.FormatFloat(threshold, 'f', -1, 64) + `,"forOverPct":100,
		"ofTheLast":{"metricTimeWindowSpecificValue":"METRIC_TIME_WINDOW_VALUE_MINUTES_5"},
		"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_UNSPECIFIED"},"override":{"priority":"` + priority + `"}}]}}`
}

// createAlertDef creates an enabled metric threshold definition through the generated client and
// returns its id and version id (the events scenarios name it in their alerts).
func (s *S) createAlertDef(c *alertdefinitions.ClientWithResponses, step, name string) (string, string) {
	r, err := c.AlertDefsServiceCreateAlertDefWithResponse(s.ctx, body[alertdefinitions.AlertDefsServiceCreateAlertDefJSONRequestBody](s, step,
		`{"alertDefProperties":`+metricThresholdDef(name, "publicclients scenario", "ALERT_DEF_PRIORITY_P2", 0.5)+`}`))
	out := s.must(step, r, err, 200)
	s.typed(step, r.JSON200)
	id, version := str(out, "alertDef.id"), str(out, "alertDef.alertVersionId")
	if id == "" || version == "" {
		s.failf(step, "no alertDef.id or alertDef.alertVersionId: %v", out)
	}
	return id, version
}

// number fails the step unless the answer's field at path is the JSON number want (str prints
// numbers as integers).
func (s *S) number(step string, answer any, path string, want float64) {
	if got, ok := get(answer, path).(float64); !ok || got != want {
		b, _ := json.Marshal(answer)
		s.failf(step, "%s is %v, want %v; body: %s", path, get(answer, path), want, clip(b))
	}
}

// typeCount is the count of type in a filter option counts answer (0 when absent).
func typeCount(counts *alertdefinitions.FilterOptionCountsResponse, typ string) int64 {
	if counts == nil || counts.Counts == nil || counts.Counts.TypeCounts == nil {
		return 0
	}
	for _, t := range *counts.Counts.TypeCounts {
		if t.Type != nil && string(*t.Type) == typ && t.Count != nil {
			return *t.Count
		}
	}
	return 0
}

func init() {
	register("alert_definitions_service", func(s *S) {
		c, err := alertdefinitions.NewClientWithResponses(s.base, alertdefinitions.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		const metric = "ALERT_DEF_TYPE_METRIC_THRESHOLD"
		r0, err := c.AlertDefsServiceFilterOptionCountsWithResponse(s.ctx, nil)
		s.must("counts before", r0, err, 200)
		s.typed("counts before", r0.JSON200)
		before := typeCount(r0.JSON200, metric)

		name := unique("alertdef")
		id, version := s.createAlertDef(c, "create", name)

		r1, err := c.AlertDefsServiceGetAlertDefWithResponse(s.ctx, id, nil)
		got := s.must("read", r1, err, 200)
		s.typed("read", r1.JSON200)
		s.equal("read", got, "alertDef.id", id)
		s.equal("read", got, "alertDef.alertVersionId", version)
		s.equal("read", got, "alertDef.alertDefProperties.name", name)
		s.equal("read", got, "alertDef.alertDefProperties.enabled", "true")
		s.equal("read", got, "alertDef.alertDefProperties.type", metric)
		s.equal("read", got, "alertDef.alertDefProperties.priority", "ALERT_DEF_PRIORITY_P2")
		s.equal("read", got, "alertDef.alertDefProperties.metricThreshold.metricFilter.promql",
			`sum by (service) (rate(http_requests_total{code=~"5.."}[5m]))`)
		s.number("read", got, "alertDef.alertDefProperties.metricThreshold.rules.0.condition.threshold", 0.5)
		if d := r1.JSON200.AlertDef; d == nil || d.AlertDefProperties == nil || d.AlertDefProperties.Name == nil || *d.AlertDefProperties.Name != name {
			s.failf("read", "the generated type does not hold the name %q", name)
		}

		r2, err := c.AlertDefsServiceReplaceAlertDefWithResponse(s.ctx, body[alertdefinitions.AlertDefsServiceReplaceAlertDefJSONRequestBody](s, "replace",
			`{"id":"`+id+`","alertDefProperties":`+metricThresholdDef(name+"-2", "publicclients scenario 2", "ALERT_DEF_PRIORITY_P1", 0.75)+`}`))
		replaced := s.must("replace", r2, err, 200)
		s.typed("replace", r2.JSON200)
		s.equal("replace", replaced, "alertDef.id", id)
		version2 := str(replaced, "alertDef.alertVersionId")
		if version2 == "" || version2 == version {
			s.failf("replace", "alertVersionId is %q after the replace, want a new one (was %q)", version2, version)
		}
		r3, err := c.AlertDefsServiceGetAlertDefWithResponse(s.ctx, id, nil)
		got = s.must("read after replace", r3, err, 200)
		s.equal("read after replace", got, "alertDef.alertVersionId", version2)
		s.equal("read after replace", got, "alertDef.alertDefProperties.name", name+"-2")
		s.equal("read after replace", got, "alertDef.alertDefProperties.priority", "ALERT_DEF_PRIORITY_P1")
		s.number("read after replace", got, "alertDef.alertDefProperties.metricThreshold.rules.0.condition.threshold", 0.75)

		r4, err := c.AlertDefsServiceGetAlertDefByVersionIdWithResponse(s.ctx, version2, nil)
		got = s.must("read by version id", r4, err, 200)
		s.typed("read by version id", r4.JSON200)
		s.equal("read by version id", got, "alertDef.id", id)
		s.equal("read by version id", got, "alertDef.alertVersionId", version2)
		s.equal("read by version id", got, "alertDef.alertDefProperties.name", name+"-2")
		r5, err := c.AlertDefsServiceGetAlertDefByVersionIdWithResponse(s.ctx, version, nil)
		got = s.must("read the first version by its id", r5, err, 200)
		s.equal("read the first version by its id", got, "alertDef.alertVersionId", version)
		s.equal("read the first version by its id", got, "alertDef.alertDefProperties.name", name)

		r6, err := c.AlertDefsServiceListAlertDefsWithResponse(s.ctx, nil)
		list := s.must("list", r6, err, 200)
		s.typed("list", r6.JSON200)
		s.contains("list", list, "alertDefs", "id", id)
		s.contains("list", list, "alertDefs", "alertDefProperties.name", name+"-2")

		// Filtered (the query objects in deepObject form: overlays/alert_definitions_service.yaml).
		r6b, err := c.AlertDefsServiceListAlertDefsWithResponse(s.ctx, ptr(body[alertdefinitions.AlertDefsServiceListAlertDefsParams](s, "list by name",
			`{"query_filter":{"nameFilter":{"name":["`+name+`-2"]}},"pagination":{"pageSize":10}}`)))
		s.must("list by name", r6b, err, 200)
		if d := r6b.JSON200.AlertDefs; d == nil || len(*d) != 1 || (*d)[0].Id == nil || *(*d)[0].Id != id {
			s.failf("list by name", "want exactly the definition %s: %s", id, clip(r6b.Body))
		}
		r6c, err := c.AlertDefsServiceFilterOptionCountsWithResponse(s.ctx, ptr(body[alertdefinitions.AlertDefsServiceFilterOptionCountsParams](s, "counts by name",
			`{"query_filter":{"nameFilter":{"name":["`+name+`-2"]}}}`)))
		s.must("counts by name", r6c, err, 200)
		if n := typeCount(r6c.JSON200, metric); n != 1 {
			s.failf("counts by name", "%d metric threshold definitions named %s-2, want 1: %s", n, name, clip(r6c.Body))
		}

		r7, err := c.AlertDefsServiceFilterOptionCountsWithResponse(s.ctx, nil)
		s.must("counts", r7, err, 200)
		s.typed("counts", r7.JSON200)
		if after := typeCount(r7.JSON200, metric); after != before+1 {
			s.failf("counts", "%d metric threshold definitions, want %d (one more than before the create)", after, before+1)
		}

		r8, err := c.AlertDefsServiceDownloadAlertsWithResponse(s.ctx, &alertdefinitions.AlertDefsServiceDownloadAlertsParams{Ids: &[]string{id}})
		s.must("download", r8, err, 200)
		s.typed("download", r8.JSON200)
		if r8.JSON200.Content == nil {
			s.failf("download", "no content: %s", clip(r8.Body))
		}
		var downloaded struct {
			AlertDefs []alertdefinitions.AlertDef `json:"alertDefs"`
		}
		if err := json.Unmarshal(*r8.JSON200.Content, &downloaded); err != nil {
			s.failf("download", "the content is not a JSON list of definitions (%v): %s", err, clip(*r8.JSON200.Content))
		}
		if len(downloaded.AlertDefs) != 1 || downloaded.AlertDefs[0].Id == nil || *downloaded.AlertDefs[0].Id != id {
			s.failf("download", "the content holds %d definitions, want the one asked for (%s): %s", len(downloaded.AlertDefs), id, clip(*r8.JSON200.Content))
		}

		bulk := unique("alertdef-bulk")
		r9, err := c.AlertDefsServiceBulkCreateAlertDefsWithResponse(s.ctx, body[alertdefinitions.AlertDefsServiceBulkCreateAlertDefsJSONRequestBody](s, "bulk create",
			`{"alertDefsToCreate":[{"alertDefProperties":`+metricThresholdDef(bulk+"-a", "bulk a", "ALERT_DEF_PRIORITY_P4", 1)+`},
			{"alertDefProperties":`+metricThresholdDef(bulk+"-b", "bulk b", "ALERT_DEF_PRIORITY_P3", 2)+`}]}`))
		created := s.must("bulk create", r9, err, 200)
		s.typed("bulk create", r9.JSON200)
		defs := s.array("bulk create", created, "alertDefs")
		if len(defs) != 2 {
			s.failf("bulk create", "%d definitions created, want 2: %v", len(defs), created)
		}
		if n := len(s.array("bulk create", created, "failedToCreateAlertDefs")); n != 0 {
			s.failf("bulk create", "%d failed, want none: %v", n, created)
		}
		s.contains("bulk create", created, "alertDefs", "alertDefProperties.name", bulk+"-a")
		s.contains("bulk create", created, "alertDefs", "alertDefProperties.name", bulk+"-b")
		ids := []string{str(defs[0], "id"), str(defs[1], "id")}
		r10, err := c.AlertDefsServiceListAlertDefsWithResponse(s.ctx, nil)
		list = s.must("list after bulk create", r10, err, 200)
		s.contains("list after bulk create", list, "alertDefs", "id", ids[0])
		s.contains("list after bulk create", list, "alertDefs", "id", ids[1])
		r11, err := c.AlertDefsServiceFilterOptionCountsWithResponse(s.ctx, nil)
		s.must("counts after bulk create", r11, err, 200)
		if after := typeCount(r11.JSON200, metric); after != before+3 {
			s.failf("counts after bulk create", "%d metric threshold definitions, want %d", after, before+3)
		}

		r12, err := c.AlertDefsServiceBulkDeleteAlertDefsWithResponse(s.ctx, alertdefinitions.AlertDefsServiceBulkDeleteAlertDefsJSONRequestBody{Ids: &ids})
		deleted := s.must("bulk delete", r12, err, 200)
		s.typed("bulk delete", r12.JSON200)
		if got := s.array("bulk delete", deleted, "deletedIds"); len(got) != 2 {
			s.failf("bulk delete", "%d deleted, want 2: %v", len(got), deleted)
		}
		for _, bid := range ids {
			r, err := c.AlertDefsServiceGetAlertDefWithResponse(s.ctx, bid, nil)
			s.must("read after bulk delete", r, err, 404)
		}

		r13, err := c.AlertDefsServiceDeleteAlertDefWithResponse(s.ctx, id)
		s.must("delete", r13, err, 200)
		r14, err := c.AlertDefsServiceGetAlertDefWithResponse(s.ctx, id, nil)
		s.must("read after delete", r14, err, 404)
		r15, err := c.AlertDefsServiceListAlertDefsWithResponse(s.ctx, nil)
		list = s.must("list after delete", r15, err, 200)
		s.lacks("list after delete", list, "alertDefs", "id", id)
		r16, err := c.AlertDefsServiceFilterOptionCountsWithResponse(s.ctx, nil)
		s.must("counts after delete", r16, err, 200)
		if after := typeCount(r16.JSON200, metric); after != before {
			s.failf("counts after delete", "%d metric threshold definitions, want %d (as before the create)", after, before)
		}
	})
}
