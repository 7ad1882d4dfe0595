package e2m

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/datausage"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// cardinalityDays is how many UTC days, ending today, the label cardinality answer covers.
const cardinalityDays = 30

// cardinalityQuery is what the cardinality operation counts: the records it selects and the
// record label each metric label reads.
type cardinalityQuery struct {
	pillar  string              // "" selects every pillar
	filters map[string][]string // record label → allowed values (an empty list allows all)
	sources []string            // record label read by each metric label, in order
}

// ListE2MLabelsCardinality answers, for each of the last 30 UTC days, the number of distinct
// value combinations the requested metric labels take over the team's usage records of that day
// that the query selects (see readCardinalityQuery).
//
// Errors: Invalid naming the query parameter path (see readCardinalityQuery).
func (h *E2MHandler) ListE2MLabelsCardinality(ctx context.Context) (*oas.E2MLabelsCardinality, error) {
	caller := auth.PrincipalFrom(ctx)
	q, err := readCardinalityQuery(queryobject.Values(ctx))
	if err != nil {
		return nil, err
	}
	now := h.db.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	start := today.AddDate(0, 0, -(cardinalityDays - 1))
	recs, err := datausage.Records(ctx, h.db.Read(), caller.TeamID, start, today.AddDate(0, 0, 1))
	if err != nil {
		return nil, err
	}
	seen := make([]map[string]bool, cardinalityDays)
	for _, r := range recs {
		if !q.selects(r.Labels) {
			continue
		}
		day := int(r.Hour.Sub(start) / (24 * time.Hour))
		if day < 0 || day >= cardinalityDays {
			continue
		}
		if seen[day] == nil {
			seen[day] = map[string]bool{}
		}
		values := make([]string, len(q.sources))
		for i, src := range q.sources {
			values[i] = r.Labels[src]
		}
		seen[day][strings.Join(values, "\x00")] = true
	}
	out := make([]oas.E2MLabelsCardinalityDay, cardinalityDays)
	for i := range out {
		out[i] = oas.E2MLabelsCardinalityDay{Day: start.AddDate(0, 0, i).Format(time.DateOnly), Permutations: clampInt32(int64(len(seen[i])))}
	}
	return &oas.E2MLabelsCardinality{Permutations: out}, nil
}

// selects tells whether a record with these labels is one the query counts.
func (q cardinalityQuery) selects(labels map[string]string) bool {
	if q.pillar != "" && labels[datausage.PillarLabel] != q.pillar {
		return false
	}
	for label, allowed := range q.filters {
		if len(allowed) == 0 {
			continue
		}
		found := false
		for _, v := range allowed {
			if labels[label] == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

var (
	stringList      = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}}
	logsQuerySchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"alias": {Kind: queryobject.String}, "lucene": {Kind: queryobject.String},
		"applicationnameFilters": stringList, "subsystemnameFilters": stringList, "severityFilters": stringList,
	}}
	spansQuerySchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"lucene":                 {Kind: queryobject.String},
		"applicationnameFilters": stringList, "subsystemnameFilters": stringList,
		"serviceFilters": stringList, "actionFilters": stringList,
	}}
	metricLabelsSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{
		Kind: queryobject.Object, Required: []string{"sourceField", "targetLabel"},
		Fields: map[string]*queryobject.Schema{"sourceField": {Kind: queryobject.String}, "targetLabel": {Kind: queryobject.String}},
	}}
)

// readCardinalityQuery reads logs_query, spans_query and metric_labels from the query string.
//
// Errors: Invalid naming the path: a value out of its public bounds, both queries given, a
// non-empty lucene (records hold no event text), a target label given twice.
func readCardinalityQuery(values url.Values) (cardinalityQuery, error) {
	var q cardinalityQuery
	logsDoc, err := queryobject.Decode(values, "logs_query", logsQuerySchema)
	if err != nil {
		return q, err
	}
	spansDoc, err := queryobject.Decode(values, "spans_query", spansQuerySchema)
	if err != nil {
		return q, err
	}
	if logsDoc != nil && spansDoc != nil {
		return q, apierror.Invalidf("logs_query, spans_query: give at most one of them")
	}
	lucene := ""
	switch {
	case logsDoc != nil:
		var lq oas.E2MLogsQuery
		if err := queryobject.Unmarshal("logs_query", logsDoc, &lq); err != nil {
			return q, err
		}
		q.pillar, lucene = "PILLAR_LOGS", string(lq.Lucene.Or(""))
		q.filters = map[string][]string{
			datausage.ApplicationLabel: strs(lq.ApplicationnameFilters), datausage.SubsystemLabel: strs(lq.SubsystemnameFilters), datausage.SeverityLabel: strs(lq.SeverityFilters),
		}
		if lucene != "" {
			return q, apierror.Invalidf("logs_query.lucene: cannot be evaluated here: usage records hold no event text; leave it empty and use the filters")
		}
	case spansDoc != nil:
		var sq oas.E2MSpansQuery
		if err := queryobject.Unmarshal("spans_query", spansDoc, &sq); err != nil {
			return q, err
		}
		q.pillar, lucene = "PILLAR_SPANS", string(sq.Lucene.Or(""))
		q.filters = map[string][]string{
			datausage.ApplicationLabel: strs(sq.ApplicationnameFilters), datausage.SubsystemLabel: strs(sq.SubsystemnameFilters),
			datausage.ServiceLabel: strs(sq.ServiceFilters), datausage.ActionLabel: strs(sq.ActionFilters),
		}
		if lucene != "" {
			return q, apierror.Invalidf("spans_query.lucene: cannot be evaluated here: usage records hold no event text; leave it empty and use the filters")
		}
	}
	labelsDoc, err := queryobject.Decode(values, "metric_labels", metricLabelsSchema)
	if err != nil || labelsDoc == nil {
		return q, err
	}
	var labels oas.E2MMetricLabels
	if err := queryobject.Unmarshal("metric_labels", labelsDoc, &labels); err != nil {
		return q, err
	}
	targets := map[string]int{}
	for i, l := range labels {
		if first, dup := targets[l.TargetLabel]; dup {
			return q, apierror.Invalidf("metric_labels[%d].targetLabel: %q is already the target of metric_labels[%d]; target labels must be unique", i, l.TargetLabel, first)
		}
		targets[l.TargetLabel] = i
		q.sources = append(q.sources, recordLabel(l.SourceField))
	}
	return q, nil
}

// recordLabel is the usage-record label a metric label's source field reads: the field itself, or
// its last dot-separated part when it has dots (record label keys have none).
func recordLabel(sourceField string) string {
	if i := strings.LastIndex(sourceField, "."); i >= 0 {
		return sourceField[i+1:]
	}
	return sourceField
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
