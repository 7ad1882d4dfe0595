package cases

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// maxAggregationItems bounds every list of the filter values (the public maxItems).
const maxAggregationItems = 1000

// valueCount is one value of a field with the number of matching cases that have it.
type valueCount struct {
	value string
	count int64
}

// counter counts values and returns them most frequent first (ties by value), at most
// maxAggregationItems of them.
type counter map[string]int64

func (c counter) add(v string) {
	if v != "" {
		c[v]++
	}
}

func (c counter) sorted() []valueCount {
	out := make([]valueCount, 0, len(c))
	for v, n := range c {
		out = append(out, valueCount{v, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].value < out[j].value
	})
	if len(out) > maxAggregationItems {
		out = out[:maxAggregationItems]
	}
	return out
}

// groupCounter counts the values of each key of labels or groupings.
type groupCounter map[string]counter

func (g groupCounter) add(kvs []oas.KeyValue) {
	for _, kv := range kvs {
		if kv.Key == "" || kv.Value == "" {
			continue
		}
		if g[kv.Key] == nil {
			g[kv.Key] = counter{}
		}
		g[kv.Key].add(kv.Value)
	}
}

func (g groupCounter) aggregations() []oas.CaseFilterGroupAggregation {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > maxAggregationItems {
		keys = keys[:maxAggregationItems]
	}
	out := make([]oas.CaseFilterGroupAggregation, 0, len(keys))
	for _, k := range keys {
		agg := oas.CaseFilterGroupAggregation{Key: k, ValueCounts: []oas.CaseFilterGroupAggregationValueCountsItem{}}
		for _, vc := range g[k].sorted() {
			agg.ValueCounts = append(agg.ValueCounts, oas.CaseFilterGroupAggregationValueCountsItem{Value: vc.value, Count: vc.count})
		}
		out = append(out, agg)
	}
	return out
}

// GetCaseFilterValues counts, among the team's cases that match the filters (the list's rules),
// the cases having each status, priority, category, assignee (and those without one), label
// and grouping value, label pair and alert indicator id. Each list holds at most 1000 entries,
// most frequent first (ties by value); label and grouping keys are sorted.
//
// Errors: those of the list's filters (Invalid naming the field under filters).
func (h *CaseHandler) GetCaseFilterValues(ctx context.Context, req oas.OptCaseFilterValuesInput) (*oas.CaseFilterValues, error) {
	caller := auth.PrincipalFrom(ctx)
	q, err := filterCases(caller.TeamID, req.Value.Filters.Value)
	if err != nil {
		return nil, err
	}
	rows, err := h.db.Read().QueryContext(ctx, `SELECT c.status, c.priority, c.category, c.assignee,
		c.labels, c.groupings, c.indicators FROM cases c WHERE `+strings.Join(q.where, " AND "), q.args...)
	if err != nil {
		return nil, fmt.Errorf("read case filter values: %w", err)
	}
	defer rows.Close()
	statuses, priorities, categories, assignees := counter{}, counter{}, counter{}, counter{}
	flat, alertIDs := counter{}, counter{}
	labels, groupings := groupCounter{}, groupCounter{}
	var unassigned int64
	for rows.Next() {
		var status, priority, category, assignee, labelsJSON, groupingsJSON, indicatorsJSON string
		if err := rows.Scan(&status, &priority, &category, &assignee, &labelsJSON, &groupingsJSON, &indicatorsJSON); err != nil {
			return nil, fmt.Errorf("read case filter values: %w", err)
		}
		statuses.add(status)
		priorities.add(priority)
		categories.add(category)
		if assignee == "" {
			unassigned++
		} else {
			assignees.add(assignee)
		}
		var caseLabels, caseGroupings []oas.KeyValue
		var indicators []oas.AlertIndicator
		if err := json.Unmarshal([]byte(labelsJSON), &caseLabels); err != nil {
			return nil, fmt.Errorf("case labels: %w", err)
		}
		if err := json.Unmarshal([]byte(groupingsJSON), &caseGroupings); err != nil {
			return nil, fmt.Errorf("case groupings: %w", err)
		}
		if err := json.Unmarshal([]byte(indicatorsJSON), &indicators); err != nil {
			return nil, fmt.Errorf("case indicators: %w", err)
		}
		labels.add(caseLabels)
		groupings.add(caseGroupings)
		for _, kv := range caseLabels {
			if kv.Key != "" && kv.Value != "" {
				flat.add(flatLabelKey(kv))
			}
		}
		seen := map[string]bool{}
		for _, ind := range indicators {
			if !seen[ind.AlertId] {
				seen[ind.AlertId] = true
				alertIDs.add(ind.AlertId)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read case filter values: %w", err)
	}

	out := &oas.CaseFilterValues{
		PriorityAggregations:  []oas.CaseFilterValuesPriorityAggregationsItem{},
		CategoryAggregations:  []oas.CaseFilterValuesCategoryAggregationsItem{},
		StatusAggregations:    []oas.CaseFilterValuesStatusAggregationsItem{},
		LabelAggregations:     labels.aggregations(),
		GroupingAggregations:  groupings.aggregations(),
		FlatLabelsAggregation: []oas.CaseFilterValuesFlatLabelsAggregationItem{},
		AlertIdAggregations:   []oas.CaseFilterValuesAlertIdAggregationsItem{},
		AssigneeAggregations: oas.CaseFilterValuesAssigneeAggregations{
			AssignedCounts:  []oas.CaseFilterValuesAssigneeAggregationsAssignedCountsItem{},
			UnassignedCount: unassigned,
		},
	}
	for _, vc := range priorities.sorted() {
		out.PriorityAggregations = append(out.PriorityAggregations, oas.CaseFilterValuesPriorityAggregationsItem{
			Priority: oas.CasePriority(vc.value), Count: vc.count})
	}
	for _, vc := range categories.sorted() {
		out.CategoryAggregations = append(out.CategoryAggregations, oas.CaseFilterValuesCategoryAggregationsItem{
			Category: oas.CaseCategory(vc.value), Count: vc.count})
	}
	for _, vc := range statuses.sorted() {
		out.StatusAggregations = append(out.StatusAggregations, oas.CaseFilterValuesStatusAggregationsItem{
			Status: oas.CaseStatus(vc.value), Count: vc.count})
	}
	for _, vc := range assignees.sorted() {
		out.AssigneeAggregations.AssignedCounts = append(out.AssigneeAggregations.AssignedCounts,
			oas.CaseFilterValuesAssigneeAggregationsAssignedCountsItem{Assignee: vc.value, Count: vc.count})
	}
	for _, vc := range flat.sorted() {
		key, value, _ := strings.Cut(vc.value, "\x00")
		out.FlatLabelsAggregation = append(out.FlatLabelsAggregation, oas.CaseFilterValuesFlatLabelsAggregationItem{
			Filter: oas.KeyValue{Key: key, Value: value}, Count: vc.count})
	}
	for _, vc := range alertIDs.sorted() {
		out.AlertIdAggregations = append(out.AlertIdAggregations, oas.CaseFilterValuesAlertIdAggregationsItem{
			AlertId: vc.value, Count: vc.count})
	}
	return out, nil
}

// flatLabelKey joins a label's key and value with a NUL, which neither holds.
func flatLabelKey(kv oas.KeyValue) string { return kv.Key + "\x00" + kv.Value }

// GetCaseGroupingKeys returns the distinct keys of the groupings of the team's cases, sorted,
// at most 1000 of them.
func (h *CaseHandler) GetCaseGroupingKeys(ctx context.Context) (*oas.CaseGroupingKeys, error) {
	caller := auth.PrincipalFrom(ctx)
	rows, err := h.db.Read().QueryContext(ctx, `SELECT DISTINCT key FROM case_labels
		WHERE team_id = $1 AND kind = 'grouping' AND key <> '' ORDER BY key LIMIT 1000`, caller.TeamID)
	if err != nil {
		return nil, fmt.Errorf("read grouping keys: %w", err)
	}
	defer rows.Close()
	out := &oas.CaseGroupingKeys{GroupingKeys: []string{}}
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, fmt.Errorf("read grouping keys: %w", err)
		}
		out.GroupingKeys = append(out.GroupingKeys, key)
	}
	return out, rows.Err()
}

// GetCaseDeepLinks returns the links of a case. mgmtapi has no web interface: detail is the
// path of the case in this API (GetCase, by id), a reference relative to the server the client
// called; there is no alert definition or impacted entity to link to, so alertIndicators is
// empty and so is impactedEntities.
//
// Errors: NotFound when the team has no such case.
func (h *CaseHandler) GetCaseDeepLinks(ctx context.Context, params oas.GetCaseDeepLinksParams) (*oas.CaseDeepLinks, error) {
	caller := auth.PrincipalFrom(ctx)
	c, err := findCase(ctx, h.db.Read(), h.db.Engine, caller.TeamID, string(params.CaseID), false)
	if err != nil {
		return nil, err
	}
	return &oas.CaseDeepLinks{DeepLinks: oas.CaseDeepLinksDeepLinks{
		Detail:           caseDetailPath + c.ID,
		AlertIndicators:  oas.CaseDeepLinksDeepLinksAlertIndicators{},
		ImpactedEntities: []oas.EmptyObject{},
	}}, nil
}

// caseDetailPath is where GetCase serves a case, its id appended.
const caseDetailPath = "/mgmt/openapi/5/cases/cases/v1/"

// GetCaseByIndicator returns the team's case whose alerts include the Alertmanager alert with
// the fingerprint that started at startedAt (to the microsecond, as alerts are stored); the
// most recently opened one when several cases hold it.
//
// Errors: Invalid for a blank fingerprint; NotFound naming prometheusAlert when no case of the
// team holds the alert.
func (h *CaseHandler) GetCaseByIndicator(ctx context.Context, req *oas.CaseByIndicatorInput) (*oas.CaseResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	alert := req.PrometheusAlert
	if strings.TrimSpace(alert.Fingerprint) == "" {
		return nil, apierror.Invalidf("prometheusAlert.fingerprint: must contain a non-whitespace character")
	}
	started := micros(alert.StartedAt.Truncate(time.Microsecond))
	quoted, _ := json.Marshal(alert.Fingerprint)
	rq := h.db.Read()
	rows, err := rq.QueryContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE team_id = $1
		AND alerts LIKE $2 ESCAPE '\' ORDER BY number DESC`,
		caller.TeamID, likeEscape(`"fingerprint":`+string(quoted)))
	if err != nil {
		return nil, fmt.Errorf("find case by indicator: %w", err)
	}
	var found *caseRow
	for rows.Next() && found == nil {
		c, err := scanCase(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("find case by indicator: %w", err)
		}
		var alerts []storedAlert
		if err := json.Unmarshal([]byte(c.Alerts), &alerts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("case %s alerts: %w", c.ID, err)
		}
		for _, a := range alerts {
			if a.Fingerprint == alert.Fingerprint && a.StartsAt == started {
				found = &c
				break
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find case by indicator: %w", err)
	}
	if found == nil {
		return nil, apierror.NotFoundf("prometheusAlert: no case holds the alert with fingerprint %q started at %s",
			alert.Fingerprint, alert.StartedAt.UTC().Format(time.RFC3339Nano))
	}
	out, err := buildCase(ctx, rq, *found, h.db.Now())
	if err != nil {
		return nil, err
	}
	return &oas.CaseResponse{Case: out}, nil
}
