package incidents

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// dayRollupFrom is the FROM clause of an aggregation over incident_day_rollup, whose rows carry
// incident_rollup's columns and the days of creation and close.
const dayRollupFrom = "incident_day_rollup i"

// dayRanged reports whether incident_day_rollup, with the incidents of a range's partial days,
// can answer the filter: it has a createdAt or duration range (not the deprecated startTime and
// endTime, nor a time before 1970) and every other condition is a rollupFilter's.
func dayRanged(f oas.IncidentQueryFilter) bool {
	if !f.CreatedAtRange.Set && !f.IncidentDurationRange.Set {
		return false
	}
	//lint:ignore SA1019 the deprecated pair is left to the generic path
	if f.StartTime.Set || f.EndTime.Set {
		return false
	}
	for _, r := range []oas.OptIncidentTimeRange{f.CreatedAtRange, f.IncidentDurationRange} {
		if r.Set && (micros(r.Value.StartTime) < 0 || micros(r.Value.EndTime) < 0) {
			return false
		}
	}
	rest := f
	rest.CreatedAtRange.Reset()
	rest.IncidentDurationRange.Reset()
	return rollupFilter(rest)
}

// dayParts are the queries that together select a dayRanged filter's incidents exactly once:
// the rows of incident_day_rollup whose days lie wholly inside the ranges, and the incidents of
// the partial days (edges) that match the filter, each edge read through the index on its time.
type dayParts struct {
	rowsWhere string // over incident_day_rollup i
	rowsArgs  []any
	whole     string    // the rows' incidents: the condition on an incident's times, literals only
	edges     []dayEdge // over incidents, disjoint, and none in the rows
}

type dayEdge struct {
	from, where string
	args        []any
}

// ceilDay is the first microsecond of the first UTC day that starts at or after t.
func ceilDay(t int64) int64 {
	if d := dayOf(t); d < t {
		return d + dayMicros
	}
	return t
}

// dayRollupParts splits a dayRanged filter into whole days and edges. Only the edges read f's
// contextual-label conditions (labelDayRolledGroups passes them; the rows' condition is then
// that of the filter without them, which the caller builds).
//
// A row of incident_day_rollup (created_day d, closed_day c) holds the incidents created in
// [d, d+1 day) and closed in [c, c+1 day) (or open): with day-aligned bounds a condition on the
// times holds for all of a row's incidents or none. The whole days are, for createdAtRange [s, e),
// created in [ceil(s), floor(e)), and for incidentDurationRange [s, e) (created before e, open
// or closed at or after s), created before floor(e) and open or closed at or after ceil(s). The
// other matching incidents were created in [s, ceil(s)) or [floor(e), e), or closed in
// [s, ceil(s)): at most a day each.
func dayRollupParts(engine db.Engine, teamID int64, f oas.IncidentQueryFilter) (dayParts, error) {
	rest := f
	rest.CreatedAtRange.Reset()
	rest.IncidentDurationRange.Reset()
	rowsArgs := &sqlArgs{}
	_, restWhere, err := filterSQL(engine, teamID, rest, "filter", rowsArgs)
	if err != nil {
		return dayParts{}, err
	}
	rowConds := []string{restWhere}
	var whole []string // the same condition on an incident's times; its bounds are literals
	lit := func(v int64) string { return strconv.FormatInt(v, 10) }
	type span struct {
		column string
		lo, hi int64
	}
	var spans []span
	if r, ok := f.CreatedAtRange.Get(); ok {
		s, e := micros(r.StartTime), micros(r.EndTime)
		lo, hi := ceilDay(s), dayOf(e)
		rowConds = append(rowConds, "i.created_day >= "+rowsArgs.add(lo), "i.created_day < "+rowsArgs.add(hi))
		whole = append(whole, "i.created_at >= "+lit(lo), "i.created_at < "+lit(hi))
		spans = append(spans, span{"created_at", s, min(lo, e)}, span{"created_at", max(hi, s), e})
	}
	if r, ok := f.IncidentDurationRange.Get(); ok {
		s, e := micros(r.StartTime), micros(r.EndTime)
		lo, hi := ceilDay(s), dayOf(e)
		rowConds = append(rowConds, "i.created_day < "+rowsArgs.add(hi),
			"(i.closed_day = "+lit(openDay)+" OR i.closed_day >= "+rowsArgs.add(lo)+")")
		whole = append(whole, "i.created_at < "+lit(hi), "(i.closed_at IS NULL OR i.closed_at >= "+lit(lo)+")")
		spans = append(spans, span{"created_at", hi, e}, span{"closed_at", s, lo})
	}
	parts := dayParts{rowsWhere: strings.Join(rowConds, " AND "), rowsArgs: rowsArgs.list, whole: strings.Join(whole, " AND ")}
	var earlier []string
	for _, sp := range spans {
		if sp.lo >= sp.hi {
			continue
		}
		args := &sqlArgs{}
		// label conditions as seeks of the incident's own rows: the edge stays on the time's index
		from, where, err := filterSQLFrom(engine, teamID, f, "filter", args, seekLabels)
		if err != nil {
			return dayParts{}, err
		}
		in := "(i." + sp.column + " IS NOT NULL AND i." + sp.column + " >= " + lit(sp.lo) + " AND i." + sp.column + " < " + lit(sp.hi) + ")"
		conds := append([]string{where, "NOT (" + strings.Join(whole, " AND ") + ")", in}, earlier...)
		earlier = append(earlier, "NOT "+in)
		if engine == db.SQLite && from == "incidents i" {
			// a day at most of the time's index, whatever other index the filter could walk
			from = "incidents i INDEXED BY incidents_by_created"
			if sp.column == "closed_at" {
				from = "incidents i INDEXED BY incidents_by_closed"
			}
		}
		parts.edges = append(parts.edges, dayEdge{from: from, where: strings.Join(conds, " AND "), args: args.list})
	}
	return parts, nil
}

// dayRolledGroups folds the groups (columns of rollupFields) of a dayRanged filter's incidents
// from incident_day_rollup's whole days and the incidents of the partial days, in one snapshot.
func (h *IncidentHandler) dayRolledGroups(ctx context.Context, teamID int64, f oas.IncidentQueryFilter, cols []column) ([]*group, error) {
	parts, err := dayRollupParts(h.db.Engine, teamID, f)
	if err != nil {
		return nil, err
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	into := newGroupFolder()
	if err := into.fold(ctx, tx, aggQuerySQL(cols, "i.", dayRollupFrom, parts.rowsWhere), parts.rowsArgs, len(cols)); err != nil {
		return nil, err
	}
	for _, e := range parts.edges {
		if err := into.fold(ctx, tx, aggQuerySQL(cols, "i.", e.from, e.where), e.args, len(cols)); err != nil {
			return nil, err
		}
	}
	return into.order, nil
}

// dayRolledCount is the number of a dayRanged filter's incidents, in one snapshot.
func (h *IncidentHandler) dayRolledCount(ctx context.Context, teamID int64, f oas.IncidentQueryFilter) (int64, error) {
	parts, err := dayRollupParts(h.db.Engine, teamID, f)
	if err != nil {
		return 0, err
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(CAST(SUM(i.n) AS BIGINT), 0) FROM `+dayRollupFrom+` WHERE `+parts.rowsWhere,
		parts.rowsArgs...).Scan(&total); err != nil {
		return 0, fmt.Errorf("count incidents: %w", err)
	}
	for _, e := range parts.edges {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+e.from+` WHERE `+e.where, e.args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("count incidents: %w", err)
		}
		total += n
	}
	return total, nil
}

// labelDayRollupFrom is the FROM clause of an aggregation over incident_label_day_rollup, whose
// rows carry incident_day_rollup's columns and the label's key and value.
const labelDayRollupFrom = "incident_label_day_rollup i"

// withoutRanges is f without its createdAt and duration ranges.
func withoutRanges(f oas.IncidentQueryFilter) oas.IncidentQueryFilter {
	f.CreatedAtRange.Reset()
	f.IncidentDurationRange.Reset()
	return f
}

// labelDayQuery reports whether incident_label_day_rollup, with the incidents of a range's partial
// days, can answer the aggregation: without its createdAt and duration ranges labelRollupQuery
// accepts it, and with them the filter less its label conditions is dayRanged. It answers the
// label's key and the filter less its label conditions (ranges kept).
func labelDayQuery(aq aggQuery) (key string, rest oas.IncidentQueryFilter, ok bool) {
	if !aq.filter.CreatedAtRange.Set && !aq.filter.IncidentDurationRange.Set {
		return "", rest, false
	}
	stripped := aq
	stripped.filter = withoutRanges(aq.filter)
	if key, rest, ok = labelRollupQuery(stripped); !ok {
		return "", rest, false
	}
	rest.CreatedAtRange, rest.IncidentDurationRange = aq.filter.CreatedAtRange, aq.filter.IncidentDurationRange
	if !dayRanged(rest) {
		return "", rest, false
	}
	return key, rest, true
}

// rangeConds are the conditions of f's createdAt and duration ranges on rows that carry
// created_at and closed_at (the incidents, the label rows), with their bounds as literals.
func rangeConds(f oas.IncidentQueryFilter) string {
	lit := func(t int64) string { return strconv.FormatInt(t, 10) }
	var conds []string
	if r, ok := f.CreatedAtRange.Get(); ok {
		conds = append(conds, "created_at >= "+lit(micros(r.StartTime)), "created_at < "+lit(micros(r.EndTime)))
	}
	if r, ok := f.IncidentDurationRange.Get(); ok {
		conds = append(conds, "created_at < "+lit(micros(r.EndTime)), "(closed_at IS NULL OR closed_at >= "+lit(micros(r.StartTime))+")")
	}
	return strings.Join(conds, " AND ")
}

// labelDayRolledGroups folds the groups of an aggregation that labelDayQuery accepts (key, rest)
// from incident_label_day_rollup's rows of the key for the ranges' whole days and from the
// incidents of their partial days, in one snapshot. When the query does not filter on the label,
// the whole days' incidents without it would form the "" group, which those rows do not hold:
// then, unless incident_day_rollup counts as many whole-day incidents as the label's rows (none
// lacks it), it answers ok=false and the generic path answers. The partial days' incidents are
// grouped by the label's value as the generic path groups them ("" included).
func (h *IncidentHandler) labelDayRolledGroups(ctx context.Context, teamID int64, key string, aq aggQuery,
	rest oas.IncidentQueryFilter) (order []*group, ok bool, err error) {
	parts, err := dayRollupParts(h.db.Engine, teamID, rest)
	if err != nil {
		return nil, false, err
	}
	edges, err := dayRollupParts(h.db.Engine, teamID, aq.filter)
	if err != nil {
		return nil, false, err
	}
	args := &sqlArgs{list: append([]any(nil), parts.rowsArgs...)}
	conds := append([]string{parts.rowsWhere}, labelValueConds(h.db.Engine, key, aq.filter, args)...)
	filtered := labelFiltered(aq.filter)
	rollupCols := make([]column, len(aq.groupBys))
	for i, g := range aq.groupBys {
		if g.IncidentField != nil {
			rollupCols[i], _ = fieldColumn(oas.IncidentFields(*g.IncidentField))
		} else {
			rollupCols[i] = column{expr: "i.value"}
		}
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	into := newGroupFolder()
	if err := into.fold(ctx, tx, aggQuerySQL(rollupCols, "i.", labelDayRollupFrom, strings.Join(conds, " AND ")), args.list, len(rollupCols)); err != nil {
		return nil, false, err
	}
	if !filtered {
		var all, labeled int64
		for _, g := range into.order {
			labeled += g.total
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(CAST(SUM(i.n) AS BIGINT), 0) FROM `+dayRollupFrom+` WHERE `+parts.rowsWhere,
			parts.rowsArgs...).Scan(&all); err != nil {
			return nil, false, fmt.Errorf("aggregate incidents: %w", err)
		}
		if all != labeled {
			return nil, false, nil
		}
	}
	for _, e := range edges.edges {
		edgeArgs := &sqlArgs{list: append([]any(nil), e.args...)}
		cols := make([]column, len(aq.groupBys))
		for i, g := range aq.groupBys {
			if g.IncidentField != nil {
				cols[i], _ = fieldColumn(oas.IncidentFields(*g.IncidentField))
			} else {
				cols[i] = labelColumn(*g.ContextualLabel, edgeArgs)
			}
		}
		if err := into.fold(ctx, tx, aggQuerySQL(cols, "i.", e.from, e.where), edgeArgs.list, len(cols)); err != nil {
			return nil, false, err
		}
	}
	return into.order, true, nil
}

// closedRange is what closedRangeGroupCount tells of the groups by closedAt of a range's
// incidents: how many, whether the open incidents' group is one of them, and bounds of the
// closed ones' times (every matching closedAt is in [lo, hi)).
type closedRange struct {
	total  int64
	open   bool
	lo, hi int64
}

// closedRangeGroupCount counts the groups by closedAt alone of the incidents that match a filter
// of createdAt and duration ranges and nothing else (ok=false for any other filter): the distinct
// closedAt values of the ranges' whole days are the sum of their incident_closed_day_times rows
// less, per time incident_closed_day_ties lists, its days among them less one; the partial days'
// incidents add the closed times not among the whole days' (one seek of incidents_by_closed
// each), and the open incidents' group when one of them, or of the whole days', is open. The
// bounds of the closed times come from incident_day_rollup's rows (their day of close, their
// last close) and the partial days' times. One snapshot.
func (h *IncidentHandler) closedRangeGroupCount(ctx context.Context, teamID int64, f oas.IncidentQueryFilter) (cr closedRange, ok bool, err error) {
	if !dayRanged(f) || !reflect.DeepEqual(withoutRanges(f), oas.IncidentQueryFilter{}) {
		return cr, false, nil
	}
	parts, err := dayRollupParts(h.db.Engine, teamID, f)
	if err != nil {
		return cr, false, err
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return cr, false, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	var whole, repeats, open int64
	var lo, last sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT COALESCE(CAST(SUM(i.n) AS BIGINT), 0) FROM incident_closed_day_times i WHERE `+parts.rowsWhere,
		parts.rowsArgs...).Scan(&whole)
	if err == nil {
		err = tx.QueryRowContext(ctx, `SELECT COUNT(*) - COUNT(DISTINCT i.closed_at) FROM incident_closed_day_ties i WHERE `+parts.rowsWhere,
			parts.rowsArgs...).Scan(&repeats)
	}
	if err == nil {
		err = tx.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(CASE WHEN i.closed_day = `+strconv.Itoa(openDay)+` THEN i.n ELSE 0 END), 0) AS BIGINT),
			MIN(CASE WHEN i.closed_day <> `+strconv.Itoa(openDay)+` THEN i.closed_day END), MAX(i.last_closed)
			FROM `+dayRollupFrom+` WHERE `+parts.rowsWhere, parts.rowsArgs...).Scan(&open, &lo, &last)
	}
	if err != nil {
		return cr, false, fmt.Errorf("count incident groups: %w", err)
	}
	// a day of close is its time's less up to a day (the remainder truncates toward zero)
	cr = closedRange{total: whole - repeats, open: open > 0, lo: lo.Int64 - dayMicros, hi: last.Int64 + 1}
	if !lo.Valid {
		cr.lo, cr.hi = 0, 0
	}
	edgeTimes := map[int64]bool{}
	for _, e := range parts.edges {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT i.closed_at FROM `+e.from+` WHERE `+e.where, e.args...)
		if err != nil {
			return cr, false, fmt.Errorf("count incident groups: %w", err)
		}
		for rows.Next() {
			var t sql.NullInt64
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return cr, false, err
			}
			if !t.Valid {
				cr.open = true
				continue
			}
			edgeTimes[t.Int64] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return cr, false, fmt.Errorf("count incident groups: %w", err)
		}
	}
	seek := "incidents i"
	if h.db.Engine == db.SQLite {
		seek += " INDEXED BY incidents_by_closed"
	}
	for t := range edgeTimes {
		if cr.lo == cr.hi {
			cr.lo, cr.hi = t, t+1
		}
		cr.lo, cr.hi = min(cr.lo, t), max(cr.hi, t+1)
		var inWhole int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+seek+` WHERE i.team_id = $1 AND i.closed_at = $2 AND `+parts.whole,
			teamID, t).Scan(&inWhole); err != nil {
			return cr, false, fmt.Errorf("count incident groups: %w", err)
		}
		if inWhole == 0 {
			cr.total++
		}
	}
	if cr.open {
		cr.total++
	}
	return cr, true, nil
}

// updateBounds bounds the last state updates of a dayRanged filter's incidents: every one is in
// [lo, hi), from incident_day_rollup's rows of the whole days (first_update, a lower bound of
// the row's updates, and last_update, their greatest) and the partial days' incidents, in one
// snapshot; ok=false when none matches or a row has no first_update (not yet filled).
func (h *IncidentHandler) updateBounds(ctx context.Context, teamID int64, f oas.IncidentQueryFilter) (lo, hi int64, ok bool, err error) {
	parts, err := dayRollupParts(h.db.Engine, teamID, f)
	if err != nil {
		return 0, 0, false, err
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return 0, 0, false, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	var rows, filled int64
	var least, most sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(i.first_update), MIN(i.first_update), MAX(i.last_update) FROM `+
		dayRollupFrom+` WHERE `+parts.rowsWhere, parts.rowsArgs...).Scan(&rows, &filled, &least, &most); err != nil {
		return 0, 0, false, fmt.Errorf("page incident groups: %w", err)
	}
	if rows != filled {
		return 0, 0, false, nil
	}
	for _, e := range parts.edges {
		var l, m sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MIN(i.last_state_update_time), MAX(i.last_state_update_time) FROM `+e.from+
			` WHERE `+e.where, e.args...).Scan(&l, &m); err != nil {
			return 0, 0, false, fmt.Errorf("page incident groups: %w", err)
		}
		if l.Valid && (!least.Valid || l.Int64 < least.Int64) {
			least = l
		}
		if m.Valid && (!most.Valid || m.Int64 > most.Int64) {
			most = m
		}
	}
	if !least.Valid || !most.Valid {
		return 0, 0, false, nil
	}
	return least.Int64, most.Int64 + 1, true, nil
}
