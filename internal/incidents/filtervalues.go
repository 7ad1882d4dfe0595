package incidents

import (
	"context"
	"fmt"
	"sort"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// maxFilterValueEntries bounds each list of a filter-values answer (the public bound).
const maxFilterValueEntries = 1000

// maxCount is the largest count a filter-values answer carries (the public bound).
const maxCount = 1_000_000_000

// GetIncidentFilterValues counts, among the team's incidents that match the filter, the
// incidents per severity, state, status, assignee, meta label, and per value of each contextual
// and display label.
//
// Errors: Invalid for a filter that breaks its rules (as ListIncidents).
func (h *IncidentHandler) GetIncidentFilterValues(ctx context.Context, req oas.OptIncidentFilterValuesRequest) (*oas.IncidentFilterValuesResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	filter := req.Or(oas.IncidentFilterValuesRequest{}).Filter.Or(oas.IncidentQueryFilter{})
	args := &sqlArgs{}
	from, where, err := filterSQL(h.db.Engine, caller.TeamID, filter, "filter", args)
	if err != nil {
		return nil, err
	}
	op := oas.IncidentFilterValuesMetaLabelsOp(filter.MetaLabelsOp.Or(oas.IncidentQueryFilterMetaLabelsOpFILTEROPERATORORORUNSPECIFIED))
	values, err := h.filterValues(ctx, from, where, args.list, op)
	if err != nil {
		return nil, err
	}
	return &oas.IncidentFilterValuesResponse{FiltersValues: values}, nil
}

// ListIncidentEventFilterValues answers what GetIncidentFilterValues answers, over the
// incidents that have an event the events feed lists for the same filter.
//
// Errors: Invalid for a filter that breaks its rules (as ListIncidentEventsFeed).
func (h *IncidentHandler) ListIncidentEventFilterValues(ctx context.Context) (*oas.IncidentFilterValuesResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	q, err := h.readEventFilter(ctx, caller.TeamID)
	if err != nil {
		return nil, err
	}
	where := q.where
	if q.start != nil {
		// Without a time range every incident qualifies: each has at least its OPEN event.
		where += " AND EXISTS (SELECT 1 FROM incident_events e WHERE e.team_id = i.team_id AND e.incident_id = i.id AND e.created_at >= " +
			q.args.add(*q.start) + " AND e.created_at < " + q.args.add(*q.end) + ")"
	}
	values, err := h.filterValues(ctx, q.from, where, q.args.list, q.metaLabelsOp)
	if err != nil {
		return nil, err
	}
	return &oas.IncidentFilterValuesResponse{FiltersValues: values}, nil
}

// filterValues counts the incidents selected by from and where (alias i, parameters args) per
// value of each field. Severity, state and status come in their enumeration's order; the other
// lists hold at most maxFilterValueEntries values, the largest counts first, then by value.
func (h *IncidentHandler) filterValues(ctx context.Context, from, where string, args []any, op oas.IncidentFilterValuesMetaLabelsOp) (oas.IncidentFilterValues, error) {
	out := oas.IncidentFilterValues{
		AssigneeWithCount:   []oas.IncidentFilterValuesAssigneeWithCountItem{},
		StatusWithCount:     []oas.IncidentFilterValuesStatusWithCountItem{},
		StateWithCount:      []oas.IncidentFilterValuesStateWithCountItem{},
		SeverityWithCount:   []oas.IncidentFilterValuesSeverityWithCountItem{},
		ContextualLabels:    oas.IncidentFilterValuesContextualLabels{},
		DisplayLabels:       oas.IncidentFilterValuesDisplayLabels{},
		MetaLabelsWithCount: []oas.IncidentFilterValuesMetaLabelsWithCountItem{},
		MetaLabelsOp:        op,
	}
	read := h.db.Read()
	severity, state, status, assignee := map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
	meta := map[metaLabel]int64{}
	err := eachRow(ctx, read, `SELECT i.severity, i.state, i.status, i.assigned_to, i.meta_labels, COUNT(*) FROM `+from+
		` WHERE `+where+` GROUP BY i.severity, i.state, i.status, i.assigned_to, i.meta_labels`, args,
		func(scan func(...any) error) error {
			var sev, st, stat, who, metaColumn string
			var n int64
			if err := scan(&sev, &st, &stat, &who, &metaColumn, &n); err != nil {
				return err
			}
			severity[sev] += n
			state[st] += n
			status[stat] += n
			if who != "" {
				assignee[who] += n
			}
			labels, err := parseMetaLabels(metaColumn)
			if err != nil {
				return fmt.Errorf("meta labels: %w", err)
			}
			for _, l := range labels {
				if l.Key != "" && l.Value != "" {
					meta[l] += n
				}
			}
			return nil
		})
	if err != nil {
		return out, err
	}
	for _, s := range oas.IncidentSeverity("").AllValues() {
		if n := severity[string(s)]; n > 0 {
			out.SeverityWithCount = append(out.SeverityWithCount, oas.IncidentFilterValuesSeverityWithCountItem{Severity: s, Count: count32(n)})
		}
	}
	for _, s := range oas.IncidentState("").AllValues() {
		if n := state[string(s)]; n > 0 {
			out.StateWithCount = append(out.StateWithCount, oas.IncidentFilterValuesStateWithCountItem{State: s, Count: count32(n)})
		}
	}
	for _, s := range oas.IncidentStatus("").AllValues() {
		if n := status[string(s)]; n > 0 {
			out.StatusWithCount = append(out.StatusWithCount, oas.IncidentFilterValuesStatusWithCountItem{Status: s, Count: count32(n)})
		}
	}
	for _, v := range topValues(assignee) {
		out.AssigneeWithCount = append(out.AssigneeWithCount, oas.IncidentFilterValuesAssigneeWithCountItem{Assignee: v.value, Count: count32(v.n)})
	}
	metaList := make([]metaLabel, 0, len(meta))
	for l := range meta {
		metaList = append(metaList, l)
	}
	sort.Slice(metaList, func(a, b int) bool {
		x, y := metaList[a], metaList[b]
		if meta[x] != meta[y] {
			return meta[x] > meta[y]
		}
		if x.Key != y.Key {
			return x.Key < y.Key
		}
		return x.Value < y.Value
	})
	if len(metaList) > maxFilterValueEntries {
		metaList = metaList[:maxFilterValueEntries]
	}
	for _, l := range metaList {
		out.MetaLabelsWithCount = append(out.MetaLabelsWithCount, oas.IncidentFilterValuesMetaLabelsWithCountItem{
			MetaLabel: oas.MetaLabel{Key: oas.NewOptString(l.Key), Value: oas.NewOptString(l.Value)}, Count: count32(meta[l])})
	}

	contextual, err := labelValueCounts(ctx, read, `SELECT l.key, l.value, COUNT(*) FROM `+from+
		` CROSS JOIN incident_labels l WHERE `+where+` AND l.team_id = i.team_id AND l.incident_id = i.id GROUP BY l.key, l.value`, args)
	if err != nil {
		return out, err
	}
	for key, counts := range contextual {
		item := oas.IncidentFilterValuesContextualLabelsItem{ValuesWithCount: []oas.IncidentFilterValuesContextualLabelsItemValuesWithCountItem{}}
		for _, v := range topValues(counts) {
			item.ValuesWithCount = append(item.ValuesWithCount, oas.IncidentFilterValuesContextualLabelsItemValuesWithCountItem{ContextualLabelValue: v.value, Count: count32(v.n)})
		}
		out.ContextualLabels[key] = item
	}
	each := "CROSS JOIN json_each(i.display_labels) d"
	if h.db.Engine == db.Postgres {
		each = "CROSS JOIN LATERAL jsonb_each_text(i.display_labels::jsonb) d"
	}
	display, err := labelValueCounts(ctx, read, `SELECT d.key, d.value, COUNT(*) FROM `+from+` `+each+
		` WHERE `+where+` GROUP BY d.key, d.value`, args)
	if err != nil {
		return out, err
	}
	for key, counts := range display {
		item := oas.IncidentFilterValuesDisplayLabelsItem{ValuesWithCount: []oas.IncidentFilterValuesDisplayLabelsItemValuesWithCountItem{}}
		for _, v := range topValues(counts) {
			item.ValuesWithCount = append(item.ValuesWithCount, oas.IncidentFilterValuesDisplayLabelsItemValuesWithCountItem{DisplayLabelValue: v.value, Count: count32(v.n)})
		}
		out.DisplayLabels[key] = item
	}
	return out, nil
}

// eachRow runs query and calls fn with each row's Scan.
func eachRow(ctx context.Context, q db.Querier, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("filter values: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// labelValueCounts runs a query answering (key, value, count) rows and returns the counts by
// key, then value.
func labelValueCounts(ctx context.Context, q db.Querier, query string, args []any) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	err := eachRow(ctx, q, query, args, func(scan func(...any) error) error {
		var key, value string
		var n int64
		if err := scan(&key, &value, &n); err != nil {
			return err
		}
		if out[key] == nil {
			out[key] = map[string]int64{}
		}
		out[key][value] += n
		return nil
	})
	return out, err
}

// valueCount is a value and the number of incidents that have it.
type valueCount struct {
	value string
	n     int64
}

// topValues lists counts, the largest first (then by value), at most maxFilterValueEntries.
func topValues(counts map[string]int64) []valueCount {
	out := make([]valueCount, 0, len(counts))
	for v, n := range counts {
		out = append(out, valueCount{v, n})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].n != out[b].n {
			return out[a].n > out[b].n
		}
		return out[a].value < out[b].value
	})
	if len(out) > maxFilterValueEntries {
		out = out[:maxFilterValueEntries]
	}
	return out
}

func count32(n int64) int32 {
	if n > maxCount {
		n = maxCount
	}
	return int32(n)
}
