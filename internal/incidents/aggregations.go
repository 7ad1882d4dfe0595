package incidents

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// groupBy is one item of E18's group_bys query object (it has no generated type).
type groupBy struct {
	IncidentField    *string `json:"incidentField,omitempty"`
	ContextualLabel  *string `json:"contextualLabel,omitempty"`
	OrderByDirection *string `json:"orderByDirection,omitempty"`
}

// aggQuery is E18's three query objects, read and checked.
type aggQuery struct {
	filter   oas.IncidentQueryFilter
	groupBys []groupBy
	page     oas.IncidentPageRequest
	hash     string
}

// readAggQuery reads filter, group_bys and pagination from the request's query.
//
// Errors: Invalid naming the full path of the first value that breaks a rule.
func readAggQuery(ctx context.Context) (aggQuery, error) {
	values := queryobject.Values(ctx)
	var q aggQuery
	doc, err := queryobject.Decode(values, "filter", filterSchema)
	if err != nil {
		return q, err
	}
	filterDoc := doc
	if doc != nil {
		if err := queryobject.Unmarshal("filter", doc, &q.filter); err != nil {
			return q, err
		}
	}
	doc, err = queryobject.Decode(values, "group_bys", groupBysSchema)
	if err != nil {
		return q, err
	}
	if doc != nil {
		if err := json.Unmarshal(doc, &q.groupBys); err != nil {
			return q, apierror.Invalidf("group_bys: must be an array of objects with incidentField, contextualLabel and orderByDirection strings")
		}
	}
	if len(q.groupBys) > maxGroupBys {
		return q, apierror.Invalidf("group_bys: must have at most %d items (got %d)", maxGroupBys, len(q.groupBys))
	}
	for i, g := range q.groupBys {
		path := fmt.Sprintf("group_bys[%d]", i)
		if (g.IncidentField == nil) == (g.ContextualLabel == nil) {
			return q, apierror.Invalidf("%s: must set exactly one of incidentField, contextualLabel", path)
		}
		if g.IncidentField != nil {
			f := oas.IncidentFields(*g.IncidentField)
			if err := f.Validate(); err != nil {
				return q, apierror.Invalidf("%s.incidentField: must be one of %s", path, strings.Join(enumStrings(f.AllValues()), ", "))
			}
			if _, ok := fieldColumn(f); !ok {
				return q, apierror.Invalidf("%s.incidentField: %s is not groupable", path, f)
			}
		}
		if g.ContextualLabel != nil {
			if n := utf8.RuneCountInString(*g.ContextualLabel); n < 1 || n > 256 {
				return q, apierror.Invalidf("%s.contextualLabel: must have 1 to 256 characters (got %d)", path, n)
			}
		}
		if g.OrderByDirection != nil {
			d := oas.OrderByDirection(*g.OrderByDirection)
			if err := d.Validate(); err != nil {
				return q, apierror.Invalidf("%s.orderByDirection: must be one of %s", path, strings.Join(enumStrings(d.AllValues()), ", "))
			}
		}
	}
	q.page = oas.IncidentPageRequest{PageSize: defaultPageSize}
	doc, err = queryobject.Decode(values, "pagination", paginationSchema)
	if err != nil {
		return q, err
	}
	if doc != nil {
		if err := queryobject.Unmarshal("pagination", doc, &q.page); err != nil {
			return q, err
		}
	}
	groupDoc, _ := json.Marshal(q.groupBys)
	if filterDoc != nil {
		filterDoc, _ = q.filter.MarshalJSON()
	}
	q.hash = hashQuery(filterDoc, groupDoc)
	return q, nil
}

// groupValue is one group-by value of a group: a string, a time (Unix microseconds) or none.
type groupValue struct {
	null bool
	s    string
	n    int64
}

func toGroupValue(v any) groupValue {
	switch x := v.(type) {
	case nil:
		return groupValue{null: true}
	case int64:
		return groupValue{n: x}
	case []byte:
		return groupValue{s: string(x)}
	case string:
		return groupValue{s: x}
	default:
		return groupValue{s: fmt.Sprint(x)}
	}
}

type group struct {
	values      []groupValue
	severity    map[string]int64
	state       map[string]int64
	status      map[string]int64
	assignee    map[string]int64
	metaStrings map[string]int64 // meta-label columns seen, before parsing
	total       int64
	firstCreate int64
	lastClosed  *int64
	lastUpdate  int64
	ids         []string // up to maxListedIDs, sorted, when read with the group (paged in SQL)
}

// ListIncidentAggregations answers E18: the team's incidents that match filter, grouped by
// group_bys (one group of all when none; no group when nothing matches), one page of groups in
// the order of their values. See the package documentation for the grouping rules.
//
// Errors: Invalid for a malformed query object (full path named), a field that cannot be grouped
// by, or a page token of another query.
//
// The generated params hold only the flat objects a generated client sends; the query is read
// whole from the context (readAggQuery), so every form of the contract is accepted.
func (h *IncidentHandler) ListIncidentAggregations(ctx context.Context, _ oas.ListIncidentAggregationsParams) (*oas.IncidentAggregationsResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	aq, err := readAggQuery(ctx)
	if err != nil {
		return nil, err
	}
	offset := 0
	if tok, ok := aq.page.PageToken.Get(); ok {
		if offset, err = readPageToken("pagination.pageToken", tok, aq.hash); err != nil {
			return nil, err
		}
	}
	args := &sqlArgs{}
	from, where, err := filterSQL(h.db.Engine, caller.TeamID, aq.filter, "filter", args)
	if err != nil {
		return nil, err
	}
	cols := make([]column, len(aq.groupBys))
	desc := make([]bool, len(aq.groupBys))
	for i, g := range aq.groupBys {
		if g.IncidentField != nil {
			cols[i], _ = fieldColumn(oas.IncidentFields(*g.IncidentField))
		} else {
			cols[i] = labelColumn(*g.ContextualLabel, args)
		}
		desc[i] = g.OrderByDirection != nil && *g.OrderByDirection == string(oas.OrderByDirectionORDERBYDIRECTIONDESC)
	}
	// Fast paths (see the package documentation); where is exactly the team's condition when the
	// filter selects every incident of the team.
	var order []*group
	total := 0
	labelRolled := false
	if key, rest, ok := labelRollupQuery(aq); ok && !genericOnly.Load() {
		order, labelRolled, err = h.labelRollupGroups(ctx, caller.TeamID, key, aq, rest)
		if err != nil {
			return nil, err
		}
	} else if key, rest, ok := labelDayQuery(aq); ok && !genericOnly.Load() {
		// whole days from incident_label_day_rollup, partial days from the incidents
		order, labelRolled, err = h.labelDayRolledGroups(ctx, caller.TeamID, key, aq, rest)
		if err != nil {
			return nil, err
		}
	}
	switch {
	case labelRolled: // folded from incident_label_rollup above
	case genericOnly.Load() && !pagedInSQL(cols):
		order, err = h.foldGroups(ctx, aggQuerySQL(cols, "i.", from, where), args.list, len(cols))
	case where == "i.team_id = $1" && onlyFields(aq.groupBys, oas.IncidentFieldsINCIDENTSFIELDSSEVERITY):
		order, err = h.countedGroups(ctx, caller.TeamID, len(cols))
	case pagedInSQL(cols) && !foldEveryGroup.Load():
		// the page's groups are few: they are folded from the incidents of their values, each
		// checked for its label by its own label row
		_, seekWhere, err := filterSQLFrom(h.db.Engine, caller.TeamID, aq.filter, "filter", &sqlArgs{}, seekLabels)
		if err != nil {
			return nil, err
		}
		pageFrom, pageWhere := from, where
		if labelRowsFilter(aq.filter) && labelValuesFilter(aq.filter) && onlyFields(aq.groupBys, labelRowFields...) {
			// the matching incidents are the label's rows, which carry every grouped column: the
			// groups are counted and paged from them alone (same parameters)
			if pageFrom, pageWhere, err = filterSQLFrom(h.db.Engine, caller.TeamID, aq.filter, "filter", &sqlArgs{}, onLabelRows); err != nil {
				return nil, err
			}
		}
		order, total, err = h.pagedGroups(ctx, caller.TeamID, aq.filter, pageFrom, pageWhere, seekWhere, args.list, cols, desc, offset, int(aq.page.PageSize))
		if err != nil {
			return nil, err
		}
		return h.aggregationsPage(ctx, aq, from, where, args.list, cols, order, offset, total)
	case onlyFields(aq.groupBys, rollupFields...) && dayRanged(aq.filter):
		// whole days from incident_day_rollup, partial days from the incidents
		order, err = h.dayRolledGroups(ctx, caller.TeamID, aq.filter, cols)
	case onlyFields(aq.groupBys, rollupFields...) && rollupFilter(aq.filter):
		order, err = h.foldGroups(ctx, rollupAggSQL(cols, where), args.list, len(cols))
	default:
		order, err = h.foldGroups(ctx, aggQuerySQL(cols, "i.", from, where), args.list, len(cols))
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(order, func(a, b int) bool {
		for i, c := range cols {
			if cmp := compareValues(c, order[a].values[i], order[b].values[i]); cmp != 0 {
				if desc[i] {
					return cmp > 0
				}
				return cmp < 0
			}
		}
		return false
	})
	total = len(order)
	if offset > total {
		offset = total
	}
	end := min(offset+int(aq.page.PageSize), total)
	page := order[offset:end]
	byLabelRows, err := h.labelRowIDs(ctx, caller.TeamID, aq, cols, page)
	if err != nil {
		return nil, err
	}
	if err := h.rollupRowIDs(ctx, caller.TeamID, aq, cols, page); err != nil {
		return nil, err
	}
	if from != "incidents i" && len(page) > batchedIDsAbove && !byLabelRows {
		// Driven from the label rows, a query per group walks them until it has its group's ids,
		// all of them for a small group: for many groups, read the page's ids in one query per
		// chunk instead.
		for start := 0; start < len(page); start += pagedFoldChunk {
			chunk := page[start:min(start+pagedFoldChunk, len(page))]
			chunkArgs := &sqlArgs{list: append([]any(nil), args.list...)}
			groups := map[string]*group{}
			for _, g := range chunk {
				g.ids = []string{}
				groups[groupKey(g.values)] = g
			}
			if err := h.pageIDs(ctx, from, pageConds(where, cols, chunk, chunkArgs, h.db.Engine == db.SQLite), chunkArgs.list, cols, groups); err != nil {
				return nil, err
			}
		}
	}
	return h.aggregationsPage(ctx, aq, from, where, args.list, cols, page, offset, total)
}

// aggregationsPage renders one page of folded groups (page starts at offset of total groups),
// each with the ids of its incidents.
func (h *IncidentHandler) aggregationsPage(ctx context.Context, aq aggQuery, from, where string, args []any, cols []column,
	page []*group, offset, total int) (*oas.IncidentAggregationsResponse, error) {
	res := &oas.IncidentAggregationsResponse{IncidentAggs: []oas.IncidentAggregation{},
		Pagination: oas.IncidentPageResponse{TotalSize: int64(total)}}
	if end := offset + len(page); end < total {
		res.Pagination.NextPageToken = oas.NewOptString(pageToken(end, aq.hash))
	}
	for _, g := range page {
		ids := g.ids
		if ids == nil {
			var err error
			if ids, err = h.groupIDs(ctx, from, where, args, cols, g.values, aq.filter.CreatedAtRange.Set); err != nil {
				return nil, err
			}
		}
		item, err := g.aggregation(cols, aq.groupBys, ids)
		if err != nil {
			return nil, err
		}
		res.IncidentAggs = append(res.IncidentAggs, item)
	}
	return res, nil
}

// labelRowIDs reads the ids of the page's groups from incident_labels alone when the query
// involves one contextual label key and otherwise only fields of incident_rollup (what
// labelRollupQuery accepts): the label rows carry every such column (incident_labels_by_rollup
// has them all), so a group's ids are an index walk of its label value's rows instead of a
// lookup of every incident the walk meets. A group whose label value is "" (incidents without
// the label) has no rows there; it is left to groupIDs, as every group is when ok=false. Which
// ids a group of more than maxListedIDs lists depends on the walk, as with groupIDs; the generic
// path (genericOnly) lists them by groupIDs, so that the equivalence test, whose groups are
// smaller, checks that the label rows list the same incidents.
//
// Under createdAt or duration ranges (a query labelDayQuery accepts) the rows are those of the
// filter without its ranges, and each row's label rows are sought within the ranges
// (incident_labels_by_rollup has createdAt after the key).
func (h *IncidentHandler) labelRowIDs(ctx context.Context, teamID int64, aq aggQuery, cols []column, page []*group) (ok bool, err error) {
	if genericOnly.Load() {
		return false, nil
	}
	filter, within := aq.filter, ""
	key, rest, ok := labelRollupQuery(aq)
	if !ok {
		if key, rest, ok = labelDayQuery(aq); !ok {
			return false, nil
		}
		filter, rest, within = withoutRanges(aq.filter), withoutRanges(rest), rangeConds(aq.filter)
	}
	lw, err := labelRollupWhere(h.db.Engine, teamID, key, filter, rest)
	if err != nil {
		return false, err
	}
	for _, g := range page {
		if g.ids != nil {
			continue
		}
		args := &sqlArgs{list: append([]any(nil), lw.args.list...)}
		conds := []string{lw.where}
		labeled := true
		for i, c := range cols {
			v := g.values[i]
			switch {
			case c.label != "" && v.s == "":
				labeled = false
			case c.label != "":
				conds = append(conds, "i.value = "+args.add(v.s))
			default:
				conds = append(conds, c.expr+" = "+args.add(v.s))
			}
		}
		if !labeled {
			continue
		}
		if g.ids, err = h.idsOfRollupRows(ctx, teamID, true, strings.Join(conds, " AND "), args.list, within); err != nil {
			return false, err
		}
	}
	return true, nil
}

// idsOfRollupRows lists up to maxListedIDs ids, sorted, of the incidents counted by the rows of
// incident_rollup (or, labeled, incident_label_rollup) that where selects (alias i, with args):
// the rows in key order, each row's incidents by a seek of its whole key in incidents_by_rollup
// (incident_labels_by_rollup), until there are enough. within, when not empty, is a further
// condition on each row's incidents (on the times that follow the key in the index; literals only).
func (h *IncidentHandler) idsOfRollupRows(ctx context.Context, teamID int64, labeled bool, where string, args []any, within string) ([]string, error) {
	table, columns, seek, match := rollupFrom, rollupKeyColumns, "incidents", rollupKeyMatch
	if labeled {
		table, columns, seek, match = labelRollupFrom, "key, value, "+rollupKeyColumns, "incident_labels", labelRollupKeyMatch
	}
	if h.db.Engine == db.SQLite {
		seek += map[bool]string{false: " INDEXED BY incidents_by_rollup", true: " INDEXED BY incident_labels_by_rollup"}[labeled]
	}
	id := map[bool]string{false: "id", true: "incident_id"}[labeled]
	var keys []rollupRow
	rows, err := h.db.Read().QueryContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+where+` ORDER BY `+columns, args...)
	if err != nil {
		return nil, fmt.Errorf("list group incidents: %w", err)
	}
	for rows.Next() {
		r := rollupRow{labeled: labeled}
		k := &r.key
		dest := []any{&k.name, &k.application, &k.subsystem, &k.severity, &k.state, &k.status, &k.assignedTo, &k.meta, &k.muted}
		if labeled {
			dest = append([]any{&r.labelKey, &r.labelValue}, dest...)
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		keys = append(keys, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list group incidents: %w", err)
	}
	arms := make([]seekArm, len(keys))
	for i, r := range keys {
		arms[i] = seekArm{`SELECT ` + id + ` FROM ` + seek + ` WHERE team_id = $1 AND ` + match, r.args(teamID)}
		if within != "" {
			arms[i].query += ` AND ` + within
		}
	}
	return h.unionIDs(ctx, arms)
}

// seekArm is one query of ids (with its own parameters from $1) that unionIDs chains.
type seekArm struct {
	query string
	args  []any
}

// seekArmsPerQuery is how many seeks one statement of unionIDs chains on PostgreSQL, where each
// statement is a round trip. SQLite runs in process: there a statement per seek is cheaper than
// preparing a long compound one (name groups under a range: 0.19–0.27 s → 0.38–0.46 s chained).
const seekArmsPerQuery = 64

// unionIDs runs the arms in order, on PostgreSQL as few statements as possible (UNION ALL of up
// to seekArmsPerQuery arms, each statement stopping at the ids still wanted: one round trip
// instead of one per arm), on SQLite one statement per arm, until it has maxListedIDs ids; it
// answers them sorted.
func (h *IncidentHandler) unionIDs(ctx context.Context, arms []seekArm) ([]string, error) {
	ids := []string{}
	perQuery := seekArmsPerQuery
	if h.db.Engine == db.SQLite {
		perQuery = 1
	}
	for start := 0; start < len(arms) && len(ids) < maxListedIDs; start += perQuery {
		var parts []string
		var args []any
		for _, a := range arms[start:min(start+perQuery, len(arms))] {
			parts = append(parts, renumberParams(a.query, len(args)))
			args = append(args, a.args...)
		}
		args = append(args, int64(maxListedIDs-len(ids)))
		found, err := readIDs(ctx, h.db.Read(), strings.Join(parts, " UNION ALL ")+` LIMIT $`+strconv.Itoa(len(args)), args)
		if err != nil {
			return nil, err
		}
		ids = append(ids, found...)
	}
	sort.Strings(ids)
	return ids, nil
}

var paramPattern = regexp.MustCompile(`\$[0-9]+`)

// renumberParams adds by to every $n of query.
func renumberParams(query string, by int) string {
	if by == 0 {
		return query
	}
	return paramPattern.ReplaceAllStringFunc(query, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(n+by)
	})
}

// rollupRowIDs reads the ids of the page's groups through their incident_rollup rows when the
// query groups only by fields of incident_rollup and filters only on its columns: every incident
// of a matching row matches, so a group's ids are seeks of incidents_by_rollup, row after row in
// key order, until it has maxListedIDs; groupIDs instead walks an index that starts with the
// group's values where there is one and otherwise the incidents in id order, past every incident
// the filter or the group leaves out (a subsystem group under an assignee filter met one match in
// hundreds). The generic path (genericOnly) lists them by groupIDs; for groups of at most
// maxListedIDs both list them all.
func (h *IncidentHandler) rollupRowIDs(ctx context.Context, teamID int64, aq aggQuery, cols []column, page []*group) error {
	if genericOnly.Load() || len(cols) == 0 || !onlyFields(aq.groupBys, rollupFields...) {
		return nil
	}
	filter, within := aq.filter, ""
	if dayRanged(aq.filter) {
		// the rows of the filter without its ranges, each row's incidents sought within them
		// (incidents_by_rollup has createdAt after the key)
		filter, within = withoutRanges(aq.filter), rangeConds(aq.filter)
	} else if !rollupFilter(aq.filter) {
		return nil
	}
	for _, g := range page {
		if g.ids != nil {
			continue
		}
		args := &sqlArgs{}
		_, where, err := filterSQL(h.db.Engine, teamID, filter, "filter", args)
		if err != nil {
			return err
		}
		conds := []string{where}
		for i, c := range cols {
			conds = append(conds, c.expr+" = "+args.add(g.values[i].s))
		}
		if g.ids, err = h.idsOfRollupRows(ctx, teamID, false, strings.Join(conds, " AND "), args.list, within); err != nil {
			return err
		}
	}
	return nil
}

// readIDs runs a query of one id column and answers its ids, sorted.
func readIDs(ctx context.Context, q db.Querier, query string, args []any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list group incidents: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, rows.Err()
}

// compareValues orders two values of column c: enumerations by position, no value first.
func compareValues(c column, a, b groupValue) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		return -1
	case b.null:
		return 1
	}
	switch c.kind {
	case timeCol:
		return cmpInt(a.n, b.n)
	case enumCol:
		return cmpInt(int64(position(c.order, a.s)), int64(position(c.order, b.s)))
	}
	return strings.Compare(a.s, b.s)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func position(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return len(list)
}

// groupIDs returns up to maxListedIDs ids of the group's incidents, sorted. createdRange says that
// where holds a createdAt range.
func (h *IncidentHandler) groupIDs(ctx context.Context, from, where string, base []any, cols []column, values []groupValue, createdRange bool) ([]string, error) {
	args := &sqlArgs{list: append([]any(nil), base...)}
	conds := []string{where}
	byLabel := false
	byName := slices.ContainsFunc(cols, func(c column) bool { return c.field == oas.IncidentFieldsINCIDENTSFIELDSNAME })
	for i, c := range cols {
		v := values[i]
		switch {
		case v.null:
			conds = append(conds, c.expr+" IS NULL")
		case c.kind == timeCol:
			conds = append(conds, c.expr+" = "+args.add(v.n))
		case c.label != "" && v.s != "" && from == "incidents i" && !byLabel && !byName:
			// the same incidents, walked from the label's rows ($1 is the team)
			byLabel = true
			from = "incident_labels lg CROSS JOIN incidents i"
			conds = append(conds, "lg.team_id = $1", "lg.key = "+c.labelParam, "lg.value = "+args.add(v.s), "i.id = lg.incident_id")
		case c.label != "" && v.s != "":
			// the same incidents, each label looked up by its key
			conds = append(conds, "EXISTS (SELECT 1 FROM incident_labels l WHERE l.team_id = $1 AND l.key = "+c.labelParam+
				" AND l.value = "+args.add(v.s)+" AND l.incident_id = i.id)")
		default:
			conds = append(conds, c.expr+" = "+args.add(v.s))
		}
	}
	bySeverity := slices.ContainsFunc(cols, func(c column) bool { return c.field == oas.IncidentFieldsINCIDENTSFIELDSSEVERITY })
	switch {
	case from != "incidents i" || h.db.Engine != db.SQLite:
	case byName:
		// Without statistics SQLite may walk another index with as many equalities (severity's)
		// and look every incident up for its name.
		from = "incidents i INDEXED BY incidents_by_rollup"
	case bySeverity:
		// and may walk a covering index in name order for a severity's incidents
		from = "incidents i INDEXED BY incidents_by_severity"
	case createdRange && !byLabel:
		// the range's incidents, in createdAt order: in id order they may come only after every
		// incident before the range
		from = "incidents i INDEXED BY incidents_by_created"
	case !byLabel:
		// No index starts with the group's values: walking a covering index in name order, a
		// filter on the name (a search) finds its matches only late; in id order they come as
		// often as they match.
		from = "incidents i INDEXED BY sqlite_autoindex_incidents_1"
	}
	rows, err := h.db.Read().QueryContext(ctx, `SELECT i.id FROM `+from+` WHERE `+strings.Join(conds, " AND ")+
		` LIMIT `+args.add(int64(maxListedIDs)), args.list...)
	if err != nil {
		return nil, fmt.Errorf("list group incidents: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, rows.Err()
}

// aggregation renders a folded group.
func (g *group) aggregation(cols []column, groupBys []groupBy, ids []string) (oas.IncidentAggregation, error) {
	item := oas.IncidentAggregation{
		GroupBysValue:       []oas.GroupByValue{},
		AggSeverityCount:    []oas.IncidentAggregationAggSeverityCountItem{},
		AggStateCount:       []oas.IncidentAggregationAggStateCountItem{},
		AggStatusCount:      []oas.IncidentAggregationAggStatusCountItem{},
		AggAssignmentsCount: []oas.IncidentAggregationAggAssignmentsCountItem{},
		AggMetaLabelsCount:  []oas.IncidentAggregationAggMetaLabelsCountItem{},
		AllValuesCount:      g.total,
		FirstCreatedAt:      fromMicros(g.firstCreate),
		LastStateUpdateTime: fromMicros(g.lastUpdate),
		// The field is required; a group without a closed incident answers the Unix epoch.
		LastClosedAt:    fromMicros(0),
		ListIncidentsId: ids,
	}
	if g.lastClosed != nil {
		item.LastClosedAt = fromMicros(*g.lastClosed)
	}
	for _, s := range oas.IncidentSeverity("").AllValues() {
		if c := g.severity[string(s)]; c > 0 {
			item.AggSeverityCount = append(item.AggSeverityCount, oas.IncidentAggregationAggSeverityCountItem{Severity: s, Count: c})
		}
	}
	for _, s := range oas.IncidentState("").AllValues() {
		if c := g.state[string(s)]; c > 0 {
			item.AggStateCount = append(item.AggStateCount, oas.IncidentAggregationAggStateCountItem{State: s, Count: c})
		}
	}
	for _, s := range oas.IncidentStatus("").AllValues() {
		if c := g.status[string(s)]; c > 0 {
			item.AggStatusCount = append(item.AggStatusCount, oas.IncidentAggregationAggStatusCountItem{Status: s, Count: c})
		}
	}
	users := make([]string, 0, len(g.assignee))
	for u := range g.assignee {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		item.AggAssignmentsCount = append(item.AggAssignmentsCount, oas.IncidentAggregationAggAssignmentsCountItem{
			AssignedTo: oas.IncidentUser{UserId: u}, Count: g.assignee[u]})
	}
	metaCounts := map[metaLabel]int64{}
	for s, c := range g.metaStrings {
		labels, err := parseMetaLabels(s)
		if err != nil {
			return item, fmt.Errorf("meta labels %q: %w", s, err)
		}
		for _, l := range labels {
			metaCounts[l] += c
		}
	}
	metas := make([]metaLabel, 0, len(metaCounts))
	for l := range metaCounts {
		metas = append(metas, l)
	}
	sort.Slice(metas, func(a, b int) bool {
		if metas[a].Key != metas[b].Key {
			return metas[a].Key < metas[b].Key
		}
		return metas[a].Value < metas[b].Value
	})
	for _, l := range metas {
		item.AggMetaLabelsCount = append(item.AggMetaLabelsCount, oas.IncidentAggregationAggMetaLabelsCountItem{
			MetaLabel: oas.MetaLabel{Key: oas.NewOptString(l.Key), Value: oas.NewOptString(l.Value)}, Count: metaCounts[l]})
	}
	for i, c := range cols {
		v := g.values[i]
		if groupBys[i].ContextualLabel != nil {
			item.GroupBysValue = append(item.GroupBysValue, oas.GroupByValue{ContextualLabels: oas.NewOptGroupByValueContextualLabels(
				oas.GroupByValueContextualLabels{FieldName: *groupBys[i].ContextualLabel, FieldValue: v.s})})
			continue
		}
		var f oas.GroupByValueIncidentField
		// No value (an open incident's closedAt, an empty application name) is the empty
		// incidentField: the public text fields are at least one character long.
		if !v.null && (c.kind != textCol || v.s != "") {
			switch c.field {
			case oas.IncidentFieldsINCIDENTSFIELDSID:
				f.ID = oas.NewOptString(v.s)
			case oas.IncidentFieldsINCIDENTSFIELDSSEVERITY:
				f.Severity = oas.NewOptIncidentSeverity(oas.IncidentSeverity(v.s))
			case oas.IncidentFieldsINCIDENTSFIELDSNAME:
				f.Name = oas.NewOptString(v.s)
			case oas.IncidentFieldsINCIDENTSFIELDSCREATEDTIME:
				f.CreatedAt = oas.NewOptDateTime(fromMicros(v.n))
			case oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME:
				f.ClosedAt = oas.NewOptDateTime(fromMicros(v.n))
			case oas.IncidentFieldsINCIDENTSFIELDSSTATE:
				f.State = oas.NewOptIncidentState(oas.IncidentState(v.s))
			case oas.IncidentFieldsINCIDENTSFIELDSSTATUS:
				f.Status = oas.NewOptIncidentStatus(oas.IncidentStatus(v.s))
			case oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME:
				f.LastStateUpdateTime = oas.NewOptDateTime(fromMicros(v.n))
			case oas.IncidentFieldsINCIDENTSFIELDSAPPLICATIONNAME:
				f.ApplicationName = oas.NewOptString(v.s)
			case oas.IncidentFieldsINCIDENTSFIELDSSUBSYSTEMNAME:
				f.SubsystemName = oas.NewOptString(v.s)
			}
		}
		item.GroupBysValue = append(item.GroupBysValue, oas.GroupByValue{IncidentField: oas.NewOptGroupByValueIncidentField(f)})
	}
	return item, nil
}

// aggQuerySQL groups the rows of from (alias i) that match where by the requested columns and the
// counted ones, whose names it takes with prefix ("i." for incidents, "l." for incident_labels,
// whose requested columns must then be plain incident columns). It selects the requested
// columns, then severity, state, status, assigned_to, meta_labels, the count and the times, as
// foldGroups reads them. The counted columns come in the order of the indexes
// incidents_by_severity and incident_labels_aggregated, so that grouping by severity walks them.
func aggQuerySQL(cols []column, prefix, from, where string) string {
	var groupExprs []string
	seen := map[string]bool{}
	counted := []column{{expr: "i.severity"}, {expr: "i.state"}, {expr: "i.status"}, {expr: "i.assigned_to"}, {expr: "i.meta_labels"}}
	exprs := make([]string, 0, len(cols)+5)
	for _, c := range append(append([]column(nil), cols...), counted...) {
		e := c.expr
		if prefix != "i." {
			e = prefix + strings.TrimPrefix(e, "i.")
		}
		exprs = append(exprs, e)
		if !seen[e] {
			seen[e] = true
			groupExprs = append(groupExprs, e)
		}
	}
	aggregates := []string{"COUNT(*)", "MIN(" + prefix + "created_at)", "MAX(" + prefix + "closed_at)", "MAX(" + prefix + "last_state_update_time)"}
	if from == rollupFrom || from == labelRollupFrom || from == dayRollupFrom || from == labelDayRollupFrom {
		aggregates = []string{"CAST(SUM(i.n) AS BIGINT)", "MIN(i.first_created)", "MAX(i.last_closed)", "MAX(i.last_update)"}
	}
	selects := append(exprs, aggregates...)
	return `SELECT ` + strings.Join(selects, ", ") + ` FROM ` + from + ` WHERE ` + where + ` GROUP BY ` + strings.Join(groupExprs, ", ")
}

// rollupFrom is the FROM clause of an aggregation over incident_rollup (whose rows carry every
// column a rollupFilter condition and a rollupFields group-by name, with the same names).
const rollupFrom = "incident_rollup i"

// rollupAggSQL is aggQuerySQL over incident_rollup: where (of filterSQL, for a rollupFilter)
// selects rows of the rollup, which add up their counts and times.
func rollupAggSQL(cols []column, where string) string {
	return aggQuerySQL(cols, "i.", rollupFrom, where)
}

// labelRowsFrom is the FROM clause of a query that reads incident_labels rows as the incidents
// (filterSQLFrom's onLabelRows).
const labelRowsFrom = "incident_labels i"

// labelRowFields are the group-by fields whose columns incident_labels rows carry: with the same
// names, and the id as incident_id.
var labelRowFields = []oas.IncidentFields{oas.IncidentFieldsINCIDENTSFIELDSID, oas.IncidentFieldsINCIDENTSFIELDSSEVERITY, oas.IncidentFieldsINCIDENTSFIELDSNAME,
	oas.IncidentFieldsINCIDENTSFIELDSSTATE, oas.IncidentFieldsINCIDENTSFIELDSSTATUS,
	oas.IncidentFieldsINCIDENTSFIELDSAPPLICATIONNAME, oas.IncidentFieldsINCIDENTSFIELDSSUBSYSTEMNAME,
	oas.IncidentFieldsINCIDENTSFIELDSCREATEDTIME, oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME,
	oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME}

// rollupFields are the group-by fields incident_rollup has.
var rollupFields = []oas.IncidentFields{oas.IncidentFieldsINCIDENTSFIELDSSEVERITY, oas.IncidentFieldsINCIDENTSFIELDSNAME,
	oas.IncidentFieldsINCIDENTSFIELDSSTATE, oas.IncidentFieldsINCIDENTSFIELDSSTATUS,
	oas.IncidentFieldsINCIDENTSFIELDSAPPLICATIONNAME, oas.IncidentFieldsINCIDENTSFIELDSSUBSYSTEMNAME}

// rollupFilter reports whether every condition of the filter is on a column of incident_rollup:
// application, subsystem, assignee, severity, state, status, meta labels, isMuted, and a search
// in a field the rollup has (not the id, not a label).
func rollupFilter(f oas.IncidentQueryFilter) bool {
	if sq, ok := f.SearchQuery.Get(); ok {
		if !sq.IncidentField.Set || sq.ContextualLabel.Set || sq.IncidentField.Value == oas.IncidentFieldsINCIDENTSFIELDSID {
			return false
		}
		if !slices.Contains(rollupFields, sq.IncidentField.Value) {
			return false
		}
	}
	kept := oas.IncidentQueryFilter{ApplicationName: f.ApplicationName, SubsystemName: f.SubsystemName, Assignee: f.Assignee,
		Severity: f.Severity, State: f.State, Status: f.Status, MetaLabels: f.MetaLabels, MetaLabelsOp: f.MetaLabelsOp,
		IsMuted: f.IsMuted, SearchQuery: f.SearchQuery}
	return reflect.DeepEqual(kept, f)
}

// labelRollupFrom is the FROM clause of an aggregation over incident_label_rollup, whose rows carry
// the columns of incident_rollup and the label's key and value.
const labelRollupFrom = "incident_label_rollup i"

// labelRollupQuery reports whether incident_label_rollup can answer the aggregation: it involves
// exactly one contextual label key (grouped by, filtered on with or without values, searched in),
// every other group-by is one of rollupFields and every other condition is a rollupFilter's. It
// answers that key and the filter without its label conditions.
func labelRollupQuery(aq aggQuery) (key string, rest oas.IncidentQueryFilter, ok bool) {
	one := func(k string) bool {
		if key == "" || key == k {
			key = k
			return true
		}
		return false
	}
	for _, g := range aq.groupBys {
		switch {
		case g.ContextualLabel != nil:
			if !one(*g.ContextualLabel) {
				return "", rest, false
			}
		case !slices.Contains(rollupFields, oas.IncidentFields(*g.IncidentField)):
			return "", rest, false
		}
	}
	rest = aq.filter
	if labels, set := rest.ContextualLabels.Get(); set {
		if len(labels) > 1 {
			return "", rest, false
		}
		for k := range labels {
			if !one(k) {
				return "", rest, false
			}
		}
		rest.ContextualLabels.Reset()
	}
	if sq, set := rest.SearchQuery.Get(); set && sq.ContextualLabel.Set && !sq.IncidentField.Set {
		if !one(sq.ContextualLabel.Value) {
			return "", rest, false
		}
		rest.SearchQuery.Reset()
	}
	if key == "" || !rollupFilter(rest) {
		return "", rest, false
	}
	return key, rest, true
}

// labelRollupGroups folds the groups of an aggregation that labelRollupQuery accepts (key, rest)
// from incident_label_rollup's rows of the key. When the query does not filter on the label, the
// team's incidents without it would form the "" group, which those rows do not hold: then, unless
// incident_rollup counts as many matching incidents as the label's rows (none lack it), it
// answers ok=false and the generic path answers.
func (h *IncidentHandler) labelRollupGroups(ctx context.Context, teamID int64, key string, aq aggQuery,
	rest oas.IncidentQueryFilter) (order []*group, ok bool, err error) {
	lw, err := labelRollupWhere(h.db.Engine, teamID, key, aq.filter, rest)
	if err != nil {
		return nil, false, err
	}
	where, restArgs, filtered, args := lw.restWhere, lw.restArgs, lw.filtered, lw.args
	conds := []string{lw.where}
	cols := make([]column, len(aq.groupBys))
	for i, g := range aq.groupBys {
		if g.IncidentField != nil {
			cols[i], _ = fieldColumn(oas.IncidentFields(*g.IncidentField))
		} else {
			cols[i] = column{expr: "i.value"}
		}
	}
	query := aggQuerySQL(cols, "i.", labelRollupFrom, strings.Join(conds, " AND "))
	if filtered {
		order, err = h.foldGroups(ctx, query, args.list, len(cols))
		return order, err == nil, err
	}
	// both counts from one snapshot
	tx, err := h.readTx(ctx)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	if order, err = foldGroupsOn(ctx, tx, query, args.list, len(cols)); err != nil {
		return nil, false, err
	}
	var all, labeled int64
	for _, g := range order {
		labeled += g.total
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(CAST(SUM(i.n) AS BIGINT), 0) FROM `+rollupFrom+` WHERE `+where,
		restArgs...).Scan(&all); err != nil {
		return nil, false, fmt.Errorf("aggregate incidents: %w", err)
	}
	return order, all == labeled, nil
}

// labelRollupConds are the conditions on incident_label_rollup's rows (alias i) of an aggregation
// that labelRollupQuery accepts.
type labelRollupConds struct {
	where     string   // the rows of the label's key that match the filter
	args      *sqlArgs // where's parameters
	restWhere string   // the filter without its label conditions, on incident_rollup's rows
	restArgs  []any
	filtered  bool // the filter has conditions on the label (only incidents that carry it match)
}

func labelRollupWhere(engine db.Engine, teamID int64, key string, filter, rest oas.IncidentQueryFilter) (labelRollupConds, error) {
	args := &sqlArgs{}
	_, where, err := filterSQL(engine, teamID, rest, "filter", args)
	if err != nil {
		return labelRollupConds{}, err
	}
	c := labelRollupConds{args: args, restWhere: where, restArgs: append([]any(nil), args.list...)}
	c.filtered = labelFiltered(filter)
	c.where = strings.Join(append([]string{where}, labelValueConds(engine, key, filter, args)...), " AND ")
	return c, nil
}

// labelFiltered reports whether the filter (of a query labelRollupQuery or labelDayQuery accepts)
// has conditions on its contextual label: only incidents that carry it match.
func labelFiltered(filter oas.IncidentQueryFilter) bool {
	labels, set := filter.ContextualLabels.Get()
	sq, searched := filter.SearchQuery.Get()
	return (set && len(labels) == 1) || (searched && sq.ContextualLabel.Set)
}

// labelValueConds are the conditions on the rows of a label rollup (alias i, key and value) of
// the label key and of the filter's conditions on its values, whose parameters it adds to args.
func labelValueConds(engine db.Engine, key string, filter oas.IncidentQueryFilter, args *sqlArgs) []string {
	conds := []string{"i.key = " + args.add(key)}
	if labels, set := filter.ContextualLabels.Get(); set && len(labels) == 1 {
		if vals := labels[key].ContextualLabelValues; len(vals) > 0 {
			conds = append(conds, "i.value IN ("+args.in(vals)+")")
		}
	}
	if sq, set := filter.SearchQuery.Get(); set && sq.ContextualLabel.Set {
		conds = append(conds, instr(engine)+"(lower(i.value), "+args.add(strings.ToLower(sq.Query))+") > 0")
	}
	return conds
}

// rolledCount is the number of the team's incidents that match the filter, from incident_rollup
// or incident_label_rollup; ok=false when neither can answer the filter.
func (h *IncidentHandler) rolledCount(ctx context.Context, teamID int64, filter oas.IncidentQueryFilter) (n int64, ok bool, err error) {
	var query string
	var args []any
	if dayRanged(filter) {
		n, err := h.dayRolledCount(ctx, teamID, filter)
		return n, err == nil, err
	}
	if rollupFilter(filter) {
		a := &sqlArgs{}
		_, where, err := filterSQL(h.db.Engine, teamID, filter, "filter", a)
		if err != nil {
			return 0, false, err
		}
		query, args = `SELECT COALESCE(CAST(SUM(i.n) AS BIGINT), 0) FROM `+rollupFrom+` WHERE `+where, a.list
	} else if key, rest, ok := labelRollupQuery(aggQuery{filter: filter}); ok {
		lw, err := labelRollupWhere(h.db.Engine, teamID, key, filter, rest)
		if err != nil {
			return 0, false, err
		}
		if !lw.filtered {
			return 0, false, nil
		}
		query, args = `SELECT COALESCE(CAST(SUM(i.n) AS BIGINT), 0) FROM `+labelRollupFrom+` WHERE `+lw.where, lw.args.list
	} else {
		return 0, false, nil
	}
	if err := h.db.Read().QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("count incidents: %w", err)
	}
	return n, true, nil
}

// genericOnly makes E18 take the generic GROUP BY over incidents wherever it would read
// incident_counts, the label rows or incident_rollup; the equivalence test sets it.
var genericOnly atomic.Bool

// foldGroups runs an aggregate query of aggQuerySQL's shape (n requested columns) and folds its
// rows into groups, in the order first seen.
func (h *IncidentHandler) foldGroups(ctx context.Context, query string, args []any, n int) ([]*group, error) {
	return foldGroupsOn(ctx, h.db.Read(), query, args, n)
}

// foldGroupsOn is foldGroups on q (a read transaction).
func foldGroupsOn(ctx context.Context, q db.Querier, query string, args []any, n int) ([]*group, error) {
	into := newGroupFolder()
	if err := into.fold(ctx, q, query, args, n); err != nil {
		return nil, err
	}
	return into.order, nil
}

// groupFolder folds the rows of several aggregate queries (over disjoint sets of incidents) into
// one set of groups, in the order first seen.
type groupFolder struct {
	groups map[string]*group
	order  []*group
}

func newGroupFolder() *groupFolder { return &groupFolder{groups: map[string]*group{}} }

// fold runs an aggregate query of aggQuerySQL's shape (n requested columns) and folds its rows.
func (into *groupFolder) fold(ctx context.Context, q db.Querier, query string, args []any, n int) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("aggregate incidents: %w", err)
	}
	defer rows.Close()
	groups := into.groups
	scan := make([]any, n+9)
	raw := make([]any, n)
	var severity, state, status, assignee, meta string
	var count, minCreated, lastUpdate int64
	var maxClosed *int64
	for i := range raw {
		scan[i] = &raw[i]
	}
	scan[n], scan[n+1], scan[n+2], scan[n+3], scan[n+4] = &severity, &state, &status, &assignee, &meta
	scan[n+5], scan[n+6], scan[n+7], scan[n+8] = &count, &minCreated, &maxClosed, &lastUpdate
	for rows.Next() {
		maxClosed = nil
		if err := rows.Scan(scan...); err != nil {
			return err
		}
		values := make([]groupValue, n)
		for i, v := range raw {
			values[i] = toGroupValue(v)
		}
		key := groupKey(values)
		g, ok := groups[key]
		if !ok {
			g = newGroup(values, minCreated, lastUpdate)
			groups[key] = g
			into.order = append(into.order, g)
		}
		g.add(severity, state, status, assignee, meta, count, minCreated, maxClosed, lastUpdate)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("aggregate incidents: %w", err)
	}
	return nil
}

// groupKey identifies a group by its values.
func groupKey(values []groupValue) string {
	var key strings.Builder
	for _, v := range values {
		fmt.Fprintf(&key, "%t|%d|%d:%s|", v.null, v.n, len(v.s), v.s)
	}
	return key.String()
}

func newGroup(values []groupValue, firstCreate, lastUpdate int64) *group {
	return &group{values: values, severity: map[string]int64{}, state: map[string]int64{}, status: map[string]int64{},
		assignee: map[string]int64{}, metaStrings: map[string]int64{}, firstCreate: firstCreate, lastUpdate: lastUpdate}
}

// add folds count incidents with these counted values and times into the group.
func (g *group) add(severity, state, status, assignee, meta string, count, minCreated int64, maxClosed *int64, lastUpdate int64) {
	g.total += count
	g.severity[severity] += count
	g.state[state] += count
	g.status[status] += count
	if assignee != "" {
		g.assignee[assignee] += count
	}
	g.metaStrings[meta] += count
	if minCreated < g.firstCreate {
		g.firstCreate = minCreated
	}
	if lastUpdate > g.lastUpdate {
		g.lastUpdate = lastUpdate
	}
	if maxClosed != nil && (g.lastClosed == nil || *maxClosed > *g.lastClosed) {
		v := *maxClosed
		g.lastClosed = &v
	}
}

// onlyFields reports whether every group-by is one of the incident fields (true for none).
func onlyFields(groupBys []groupBy, fields ...oas.IncidentFields) bool {
	for _, g := range groupBys {
		if g.IncidentField == nil || !slices.Contains(fields, oas.IncidentFields(*g.IncidentField)) {
			return false
		}
	}
	return true
}

// countedGroups answers an unfiltered aggregation grouped by severity (n group-bys, all by
// severity) or not grouped (n = 0) from incident_counts, with the times of each severity read by
// index seeks, in one read transaction so that counts and times agree.
func (h *IncidentHandler) countedGroups(ctx context.Context, teamID int64, n int) (order []*group, err error) {
	tx, err := h.readTx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	type counted struct {
		severity, state, status, assignee, meta string
		n                                       int64
	}
	var all []counted
	rows, err := tx.QueryContext(ctx, `SELECT severity, state, status, assigned_to, meta_labels, n FROM incident_counts
		WHERE team_id = $1 AND n > 0`, teamID)
	if err != nil {
		return nil, fmt.Errorf("aggregate incidents: %w", err)
	}
	for rows.Next() {
		var c counted
		if err := rows.Scan(&c.severity, &c.state, &c.status, &c.assignee, &c.meta, &c.n); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("aggregate incidents: %w", err)
	}
	groups := map[string]*group{}
	for _, c := range all {
		key := ""
		if n > 0 {
			key = c.severity
		}
		g, ok := groups[key]
		if ok && g.severity[c.severity] > 0 {
			g.add(c.severity, c.state, c.status, c.assignee, c.meta, c.n, g.firstCreate, nil, g.lastUpdate)
			continue
		}
		// the first row of this severity: read its times
		var first, last sql.NullInt64
		var closed *int64
		err := tx.QueryRowContext(ctx, `SELECT
			(SELECT MIN(created_at) FROM incidents WHERE team_id = $1 AND severity = $2),
			(SELECT MAX(closed_at) FROM incidents WHERE team_id = $1 AND severity = $2),
			(SELECT MAX(last_state_update_time) FROM incidents WHERE team_id = $1 AND severity = $2)`,
			teamID, c.severity).Scan(&first, &closed, &last)
		if err != nil {
			return nil, fmt.Errorf("aggregate incidents: %w", err)
		}
		if !first.Valid || !last.Valid {
			return nil, fmt.Errorf("aggregate incidents: counts of severity %s have no incidents", c.severity)
		}
		if !ok {
			values := make([]groupValue, n)
			for i := range values {
				values[i] = groupValue{s: c.severity}
			}
			g = newGroup(values, first.Int64, last.Int64)
			groups[key] = g
			order = append(order, g)
		}
		g.add(c.severity, c.state, c.status, c.assignee, c.meta, c.n, first.Int64, closed, last.Int64)
	}
	return order, nil
}

// readTx begins a read transaction on the read pool: one snapshot (repeatable read on PostgreSQL).
func (h *IncidentHandler) readTx(ctx context.Context) (*sql.Tx, error) {
	beginner, ok := h.db.Read().(interface {
		BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
	})
	if !ok {
		return nil, fmt.Errorf("aggregate incidents: read pool cannot begin transactions")
	}
	var opts *sql.TxOptions
	if h.db.Engine == db.Postgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	tx, err := beginner.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("aggregate incidents: %w", err)
	}
	return tx, nil
}

// foldEveryGroup makes E18 fold every group in Go even where it would page the groups in SQL
// first; the equivalence test sets it to compare both plans.
var foldEveryGroup atomic.Bool

// pagedInSQL reports whether a grouping has about as many groups as incidents (a group-by field
// with a value per incident: the id and the three times), where E18 pages the groups in SQL and
// aggregates only the page's groups, instead of folding every group in Go.
func pagedInSQL(cols []column) bool {
	for _, c := range cols {
		switch c.field {
		case oas.IncidentFieldsINCIDENTSFIELDSID, oas.IncidentFieldsINCIDENTSFIELDSCREATEDTIME,
			oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME, oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME:
			return true
		}
	}
	return false
}

// pagedGroups answers the groups from offset (at most size) in the order compareValues and desc
// give, and the number of groups: the page of groups and the count come from SQL, then the
// page's groups that have values are folded from an aggregate query restricted to their values
// over the incidents alone (seekWhere: where with every label filter as a seek of the incident's
// own label row, same parameters).
func (h *IncidentHandler) pagedGroups(ctx context.Context, teamID int64, filter oas.IncidentQueryFilter, from, where, seekWhere string, base []any, cols []column, desc []bool,
	offset, size int) (page []*group, total int, err error) {
	exprs := make([]string, len(cols))
	order := make([]string, len(cols))
	byID, labels := false, false
	for i, c := range cols {
		exprs[i] = c.expr
		byID = byID || c.field == oas.IncidentFieldsINCIDENTSFIELDSID
		labels = labels || c.field == ""
		o := c.sortExpr()
		if from == labelRowsFrom && c.field == oas.IncidentFieldsINCIDENTSFIELDSID {
			// the label rows name the incident's id incident_id
			exprs[i], o = "i.incident_id", "i.incident_id"
		}
		if c.kind == textCol && h.db.Engine == db.Postgres {
			o += ` COLLATE "C"` // byte order, as strings.Compare
		}
		switch {
		case c.field == oas.IncidentFieldsINCIDENTSFIELDSID && desc[i]:
			o += " DESC" // never null: the order of incidents_by_id_c, read backwards
		case c.field == oas.IncidentFieldsINCIDENTSFIELDSID:
		case c.field != oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME && desc[i]:
			// never null: no NULLS clause, which would keep PostgreSQL from reading the order
			// of the time's index (it does not weigh NOT NULL) and sort every incident instead
			o += " DESC"
		case c.field != oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME:
		case desc[i] && h.db.Engine == db.Postgres:
			o += " DESC NULLS LAST"
		case desc[i]:
			o += " DESC"
		case h.db.Engine == db.Postgres:
			o += " ASC NULLS FIRST"
		}
		order[i] = o
	}
	grouped := strings.Join(exprs, ", ")
	countQuery := `SELECT COUNT(*) FROM (SELECT 1 AS one FROM ` + from + ` WHERE ` + where + ` GROUP BY ` + grouped + `) AS g`
	if byID && !labels {
		// every incident is a group of its own (a label's expression would leave its key unused)
		countQuery = `SELECT COUNT(*) FROM ` + from + ` WHERE ` + where
		if where == "i.team_id = $1" {
			countQuery = `SELECT COALESCE(SUM(n), 0) FROM incident_counts WHERE team_id = $1`
		}
	}
	counted := false
	if byID && !labels && !genericOnly.Load() {
		// every incident is a group: the rollups count them (as the incidents would, for filters
		// they can answer)
		n, ok, err := h.rolledCount(ctx, teamID, filter)
		if err != nil {
			return nil, 0, err
		}
		total, counted = int(n), ok
	}
	if field, ok := timeTieFields[cols[0].field]; ok && len(cols) == 1 && !genericOnly.Load() {
		// the rollups' count of the matching incidents, less the repeats of shared times
		n, ok, err := h.rolledCount(ctx, teamID, filter)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			repeats, ok, err := h.timeRepeats(ctx, teamID, field, seekWhere, base)
			if err != nil {
				return nil, 0, err
			}
			total, counted = int(n-repeats), ok
		}
	}
	openOnly := false
	var ranged *closedRange
	if len(cols) == 1 && cols[0].field == oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME && !counted && !genericOnly.Load() {
		n, open, ok, err := h.closedGroupCount(ctx, teamID, filter)
		if err != nil {
			return nil, 0, err
		}
		total, counted, openOnly = int(n), ok, open
		if !counted {
			n, ok, err := h.closedLabelGroupCount(ctx, teamID, filter)
			if err != nil {
				return nil, 0, err
			}
			total, counted = int(n), ok
		}
		if !counted && from == "incidents i" {
			cr, ok, err := h.closedRangeGroupCount(ctx, teamID, filter)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				total, counted, ranged = int(cr.total), true, &cr
			}
		}
	}
	if !counted {
		if err := h.db.Read().QueryRowContext(ctx, countQuery, base...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count incident groups: %w", err)
		}
	}
	if offset >= total {
		return nil, total, nil
	}
	pageFrom := from
	if counted && byID && len(cols) == 1 && from == "incidents i" && h.db.Engine == db.SQLite {
		// Grouped by id under a time range, SQLite reads every incident of the range through its
		// index and sorts their ids; when the range holds many, walking the ids in order finds
		// the page's sooner (about (offset+size) × team / matching rows, the matches spread
		// evenly over the ids).
		var team int64
		if err := h.db.Read().QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM incident_counts WHERE team_id = $1`,
			teamID).Scan(&team); err != nil {
			return nil, 0, fmt.Errorf("count incidents: %w", err)
		}
		if int64(offset+size)*team < int64(total)*int64(total) {
			pageFrom = "incidents i INDEXED BY sqlite_autoindex_incidents_1"
		}
	}
	if openOnly {
		// Only open incidents match: their group, without a value, is the page. Walking the
		// closed times to it would pass every closed incident, and it is folded from the open
		// incidents' rows of incident_day_rollup (closedGroupCount's filters are rollup filters).
		g, err := h.openGroup(ctx, teamID, filter)
		if err != nil || g == nil {
			return nil, total, err
		}
		return []*group{g}, total, nil
	}
	if ranged != nil {
		// Under ranges alone, the closed incidents' groups are read from the index on closedAt
		// within the bounds of the matching closed times (instead of from the first or last
		// closedAt of the team), and the open incidents' group, if any, comes first ascending and
		// last descending.
		closedGroups := total
		if ranged.open {
			closedGroups--
		}
		var open []*group
		closedOffset, closedSize := offset, size
		if ranged.open && !desc[0] {
			if offset == 0 {
				open = []*group{{values: []groupValue{{null: true}}}}
				closedSize--
			} else {
				closedOffset--
			}
		}
		page = open
		if closedSize > 0 && closedOffset < closedGroups && ranged.lo < ranged.hi {
			closedFrom := from
			if h.db.Engine == db.SQLite {
				closedFrom = "incidents i INDEXED BY incidents_by_closed"
			}
			closedWhere := where + " AND i.closed_at >= " + strconv.FormatInt(ranged.lo, 10) + " AND i.closed_at < " + strconv.FormatInt(ranged.hi, 10)
			closed, err := h.pageValues(ctx, closedFrom, closedWhere, base, grouped, order, cols, false, from, closedOffset, closedSize)
			if err != nil {
				return nil, 0, err
			}
			page = append(page, closed...)
		}
		if ranged.open && desc[0] && offset+size > closedGroups {
			page = append(page, &group{values: []groupValue{{null: true}}})
		}
		if len(page) == 0 {
			return nil, total, nil
		}
		return h.foldPageGroups(ctx, from, where, seekWhere, base, cols, page, offset, total)
	}
	if len(cols) == 1 && cols[0].field == oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME && from == "incidents i" &&
		dayRanged(filter) && !genericOnly.Load() {
		// Under ranges (and rollup filters), the update times are read from their index within
		// the bounds of the matching incidents' updates (instead of from the team's first or
		// last update, past every incident before the range).
		lo, hi, ok, err := h.updateBounds(ctx, teamID, filter)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			boundFrom := from
			if h.db.Engine == db.SQLite {
				boundFrom = "incidents i INDEXED BY incidents_by_updated"
			}
			boundWhere := where + " AND i.last_state_update_time >= " + strconv.FormatInt(lo, 10) +
				" AND i.last_state_update_time < " + strconv.FormatInt(hi, 10)
			if page, err = h.pageValues(ctx, boundFrom, boundWhere, base, grouped, order, cols, false, from, offset, size); err != nil {
				return nil, 0, err
			}
			return h.foldPageGroups(ctx, from, where, seekWhere, base, cols, page, offset, total)
		}
	}
	pageWhere := where
	if index, ok := pagedIndexes[cols[0].field]; ok && len(cols) == 1 && !byID && from != "incidents i" {
		// Read from the label rows, the page's times are sorted from every matching row; when
		// the matches are dense enough, walking the incidents in the time's order, each checked
		// by seeks of its own label rows, reaches the page sooner: about (offset+size) × team /
		// matching incidents, at least as many as the groups.
		var team int64
		if err := h.db.Read().QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM incident_counts WHERE team_id = $1`,
			teamID).Scan(&team); err != nil {
			return nil, 0, fmt.Errorf("count incidents: %w", err)
		}
		if int64(offset+size)*team <= maxPageWalk*int64(total) && !noPageWalk.Load() {
			pageFrom, pageWhere = "incidents i", seekWhere
			if h.db.Engine == db.SQLite {
				pageFrom += " INDEXED BY " + index
			}
		}
	}
	if page, err = h.pageValues(ctx, pageFrom, pageWhere, base, grouped, order, cols, byID, from, offset, size); err != nil {
		return nil, 0, err
	}
	return h.foldPageGroups(ctx, from, where, seekWhere, base, cols, page, offset, total)
}

// pageValues reads the values of the page's groups (offset, size) in order.
func (h *IncidentHandler) pageValues(ctx context.Context, pageFrom, where string, base []any, grouped string, order []string,
	cols []column, byID bool, from string, offset, size int) (page []*group, err error) {
	args := &sqlArgs{list: append([]any(nil), base...)}
	groupBy := ` GROUP BY ` + grouped
	if byID && len(cols) == 1 && from == "incidents i" {
		// each incident is its own group: no GROUP BY, so that PostgreSQL walks
		// incidents_by_id_c (the ids in byte order) to the page instead of sorting every id
		groupBy = ""
	}
	rows, err := h.db.Read().QueryContext(ctx, `SELECT `+grouped+` FROM `+pageFrom+` WHERE `+where+groupBy+
		` ORDER BY `+strings.Join(order, ", ")+` LIMIT `+args.add(int64(size))+` OFFSET `+args.add(int64(offset)), args.list...)
	if err != nil {
		return nil, fmt.Errorf("page incident groups: %w", err)
	}
	raw := make([]any, len(cols))
	scan := make([]any, len(cols))
	for i := range raw {
		scan[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(scan...); err != nil {
			rows.Close()
			return nil, err
		}
		values := make([]groupValue, len(cols))
		for i, v := range raw {
			values[i] = toGroupValue(v)
		}
		page = append(page, &group{values: values})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("page incident groups: %w", err)
	}
	return page, nil
}

// foldPageGroups folds the page's groups (their values read) and answers them with total.
func (h *IncidentHandler) foldPageGroups(ctx context.Context, from, where, seekWhere string, base []any, cols []column,
	page []*group, offset, total int) ([]*group, int, error) {
	// Fold the page's groups, a chunk at a time so that a statement keeps few parameters; a
	// chunk's condition lists each column's values, so it may select other groups, which are
	// left out. Groups without a value (open incidents by closedAt) can be large: they are
	// folded apart, by the plan SQLite picks, and read their ids per group.
	folded := map[string]*group{}
	var exact, withNull []*group
	for _, g := range page {
		if slices.ContainsFunc(g.values, func(v groupValue) bool { return v.null }) {
			withNull = append(withNull, g)
		} else {
			exact = append(exact, g)
		}
	}
	for start := 0; start < len(exact); start += pagedFoldChunk {
		if err := h.foldPage(ctx, "incidents i", seekWhere, base, cols, exact[start:min(start+pagedFoldChunk, len(exact))], true, folded); err != nil {
			return nil, 0, err
		}
	}
	if len(withNull) > 0 {
		if err := h.foldPage(ctx, from, where, base, cols, withNull, false, folded); err != nil {
			return nil, 0, err
		}
	}
	for i, g := range page {
		f, ok := folded[groupKey(g.values)]
		if !ok {
			return nil, 0, fmt.Errorf("aggregate incidents: group %d of the page has no incidents", offset+i)
		}
		page[i] = f
	}
	return page, total, nil
}

// closedGroupCount is the number of groups by closedAt alone of the team's incidents that match
// filter, for a filter incident_rollup answers: when it matches every closed incident of the
// team, the team's distinct closedAt values (incident_closed_times) and the open incidents'
// group if any matches; when it matches none of them, at most the open incidents' group; when
// it is a search in the name alone, the matching names' rows of incident_value_closed_times;
// otherwise, for up to maxClosedTimesRead matching closed incidents, their distinct closedAt
// values read through incidents_by_rollup. openOnly says that only open incidents match (one
// group, without a value). The counts of open and closed incidents come from
// incident_day_rollup (closed_day), in the snapshot that reads incident_closed_times; ok=false
// when it cannot tell.
func (h *IncidentHandler) closedGroupCount(ctx context.Context, teamID int64, filter oas.IncidentQueryFilter) (n int64, openOnly, ok bool, err error) {
	if !rollupFilter(filter) {
		return 0, false, false, nil
	}
	args := &sqlArgs{}
	_, where, err := filterSQL(h.db.Engine, teamID, filter, "filter", args)
	if err != nil {
		return 0, false, false, err
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return 0, false, false, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	open := strconv.Itoa(openDay)
	var matchedOpen, matchedClosed, teamClosed int64
	err = tx.QueryRowContext(ctx, `SELECT
		CAST(COALESCE(SUM(CASE WHEN i.closed_day = `+open+` AND `+where+` THEN i.n ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN i.closed_day <> `+open+` AND `+where+` THEN i.n ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN i.closed_day <> `+open+` THEN i.n ELSE 0 END), 0) AS BIGINT)
		FROM `+dayRollupFrom+` WHERE i.team_id = $1`, args.list...).Scan(&matchedOpen, &matchedClosed, &teamClosed)
	if err != nil {
		return 0, false, false, fmt.Errorf("count incident groups: %w", err)
	}
	if matchedOpen > 0 {
		n = 1
	}
	switch {
	case matchedClosed == 0:
		return n, n == 1, true, nil
	case matchedClosed == teamClosed:
		var distinct int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT n FROM incident_closed_times WHERE team_id = $1), 0)`,
			teamID).Scan(&distinct); err != nil {
			return 0, false, false, fmt.Errorf("count incident groups: %w", err)
		}
		return n + distinct, false, true, nil
	case nameSearchOnly(filter):
		// the matching names' distinct times from incident_value_closed_times
		args := &sqlArgs{list: []any{teamID}}
		where := "i.team_id = $1 AND i.field = 'name' AND i.key = '' AND " +
			instr(h.db.Engine) + "(lower(i.value), " + args.add(strings.ToLower(filter.SearchQuery.Value.Query)) + ") > 0"
		distinct, _, err := valueClosedTimes(ctx, tx, where, args.list)
		if err != nil {
			return 0, false, false, err
		}
		return n + distinct, false, true, nil
	case matchedClosed > maxClosedTimesRead:
		return 0, false, false, nil
	}
	// Few enough: the closed times of the matching rollup rows that hold a closed incident.
	times, _, err := closedTimesOfRows(ctx, tx, h.db.Engine, teamID, false, where, args.list)
	if err != nil {
		return 0, false, false, err
	}
	return n + times, false, true, nil
}

// nameSearchOnly reports whether the filter's only condition is a search in the name.
func nameSearchOnly(f oas.IncidentQueryFilter) bool {
	sq, ok := f.SearchQuery.Get()
	return ok && sq.IncidentField.Set && sq.IncidentField.Value == oas.IncidentFieldsINCIDENTSFIELDSNAME && !sq.ContextualLabel.Set &&
		reflect.DeepEqual(oas.IncidentQueryFilter{SearchQuery: f.SearchQuery}, f)
}

// closedLabelGroupCount is closedGroupCount for a filter on one contextual label's values or a
// search in them (with conditions incident_rollup can answer): the closed times of the matching
// incident_label_rollup rows that hold a closed incident, each row's read by a seek of its key in
// incident_labels_by_rollup, when those rows count at most maxClosedTimesRead incidents.
func (h *IncidentHandler) closedLabelGroupCount(ctx context.Context, teamID int64, filter oas.IncidentQueryFilter) (n int64, ok bool, err error) {
	key, rest, ok := labelRollupQuery(aggQuery{filter: filter})
	if !ok {
		return 0, false, nil
	}
	lw, err := labelRollupWhere(h.db.Engine, teamID, key, filter, rest)
	if err != nil || !lw.filtered {
		return 0, false, err
	}
	tx, err := h.readTx(ctx)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	var all, withClosed int64
	if err := tx.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(i.n), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN i.last_closed IS NOT NULL THEN i.n ELSE 0 END), 0) AS BIGINT)
		FROM `+labelRollupFrom+` WHERE `+lw.where, lw.args.list...).Scan(&all, &withClosed); err != nil {
		return 0, false, fmt.Errorf("count incident groups: %w", err)
	}
	if lw.restWhere == "i.team_id = $1" {
		// only the label is filtered on: the matching values' distinct times and closed
		// incidents from incident_value_closed_times, in the same snapshot
		args := &sqlArgs{list: []any{teamID}}
		where := strings.Join(append([]string{"i.team_id = $1", "i.field = 'label'"}, labelValueConds(h.db.Engine, key, filter, args)...), " AND ")
		times, closed, err := valueClosedTimes(ctx, tx, where, args.list)
		if err != nil {
			return 0, false, err
		}
		if all > closed {
			times++ // the open incidents' group
		}
		return times, true, nil
	}
	if withClosed > maxClosedTimesRead {
		return 0, false, nil
	}
	times, closed, err := closedTimesOfRows(ctx, tx, h.db.Engine, teamID, true, lw.where, lw.args.list)
	if err != nil {
		return 0, false, err
	}
	if all > closed {
		times++ // the open incidents' group
	}
	return times, true, nil
}

// valueClosedTimes is the number of distinct closedAt values, and of closed incidents, among the
// team's incidents that have one of the values where selects (alias i, over the team, field,
// key and value columns, with args) of one label key or of the names: the values' rows of
// incident_value_closed_times, less, per time that incident_value_closed_ties lists with more
// than one of them, the repeats.
func valueClosedTimes(ctx context.Context, tx *sql.Tx, where string, args []any) (distinct, closed int64, err error) {
	var repeats int64
	err = tx.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(i.n), 0) AS BIGINT), CAST(COALESCE(SUM(i.closed), 0) AS BIGINT),
		(SELECT COUNT(*) - COUNT(DISTINCT i.closed_at) FROM incident_value_closed_ties i WHERE `+where+`)
		FROM incident_value_closed_times i WHERE `+where, args...).Scan(&distinct, &closed, &repeats)
	if err != nil {
		return 0, 0, fmt.Errorf("count incident groups: %w", err)
	}
	return distinct - repeats, closed, nil
}

// closedTimesOfRows counts the distinct closedAt values, and the closed incidents, of the rows of
// incident_rollup (labeled: incident_label_rollup) that where selects (alias i) and that hold a
// closed incident: each row's closed times are a seek of its key in incidents_by_rollup
// (incident_labels_by_rollup).
func closedTimesOfRows(ctx context.Context, tx *sql.Tx, engine db.Engine, teamID int64, labeled bool, where string, args []any) (distinct, closed int64, err error) {
	table, columns, seek, match := rollupFrom, rollupKeyColumns, "incidents", rollupKeyMatch
	if labeled {
		table, columns, seek, match = labelRollupFrom, "key, value, "+rollupKeyColumns, "incident_labels", labelRollupKeyMatch
	}
	if engine == db.SQLite {
		seek += map[bool]string{false: " INDEXED BY incidents_by_rollup", true: " INDEXED BY incident_labels_by_rollup"}[labeled]
	}
	var keys []rollupRow
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+where+` AND i.last_closed IS NOT NULL`, args...)
	if err != nil {
		return 0, 0, fmt.Errorf("count incident groups: %w", err)
	}
	for rows.Next() {
		r := rollupRow{labeled: labeled}
		k := &r.key
		dest := []any{&k.name, &k.application, &k.subsystem, &k.severity, &k.state, &k.status, &k.assignedTo, &k.meta, &k.muted}
		if labeled {
			dest = append([]any{&r.labelKey, &r.labelValue}, dest...)
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return 0, 0, err
		}
		keys = append(keys, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("count incident groups: %w", err)
	}
	times := map[int64]struct{}{}
	for _, r := range keys {
		rows, err := tx.QueryContext(ctx, `SELECT closed_at FROM `+seek+` WHERE team_id = $1 AND `+match+
			` AND closed_at IS NOT NULL`, r.args(teamID)...)
		if err != nil {
			return 0, 0, fmt.Errorf("count incident groups: %w", err)
		}
		for rows.Next() {
			var t int64
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return 0, 0, err
			}
			times[t] = struct{}{}
			closed++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, 0, fmt.Errorf("count incident groups: %w", err)
		}
	}
	return int64(len(times)), closed, nil
}

// openGroup folds the open incidents that match filter (a rollupFilter) into the group of
// closedAt without a value, from incident_day_rollup's open rows; nil when none match.
func (h *IncidentHandler) openGroup(ctx context.Context, teamID int64, filter oas.IncidentQueryFilter) (*group, error) {
	args := &sqlArgs{}
	_, where, err := filterSQL(h.db.Engine, teamID, filter, "filter", args)
	if err != nil {
		return nil, err
	}
	found, err := h.foldGroups(ctx, aggQuerySQL(nil, "i.", dayRollupFrom, where+" AND i.closed_day = "+strconv.Itoa(openDay)), args.list, 0)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, nil // closed since they were counted
	}
	found[0].values = []groupValue{{null: true}}
	return found[0], nil
}

// maxPageWalk is the number of incidents up to which a page of groups by a time is read by
// walking the time's index rather than sorting the matching label rows.
const maxPageWalk = 50000

// noPageWalk makes E18 always sort the label rows; the equivalence test sets it to compare both
// plans.
var noPageWalk atomic.Bool

// maxClosedTimesRead is the number of matching closed incidents up to which closedGroupCount
// reads their closedAt values to count the distinct ones (beyond, the generic count does).
// Reading 275,000 through the rollup rows' seeks took 0.18–0.28 s where the generic count took
// 0.6–2.0 s (closedAt under a label search at a million incidents, both engines).
const maxClosedTimesRead = 1000000

// timeTieFields are the group-by fields whose groups are counted with incident_time_ties, and
// their field there.
var timeTieFields = map[oas.IncidentFields]string{
	oas.IncidentFieldsINCIDENTSFIELDSCREATEDTIME:         "created",
	oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME: "updated",
}

// maxTimeTies is the number of shared times of a field above which the groups are counted from
// the incidents (each listed time is a seek per count).
const maxTimeTies = 256

// timeRepeats is, over the times of field that incident_time_ties lists, the number of the
// team's incidents matching seekWhere (over the incidents alone, with base) that have that time,
// less one: what counting the matching incidents counts beyond their distinct times. Each time is
// one seek of the field's index; ok=false when more than maxTimeTies are listed.
func (h *IncidentHandler) timeRepeats(ctx context.Context, teamID int64, field, seekWhere string, base []any) (repeats int64, ok bool, err error) {
	column := timeTieColumns[field]
	from := "incidents i"
	if h.db.Engine == db.SQLite {
		from = map[string]string{"created": "incidents i INDEXED BY incidents_by_created",
			"updated": "incidents i INDEXED BY incidents_by_updated"}[field]
	}
	rows, err := h.db.Read().QueryContext(ctx, `SELECT at FROM incident_time_ties WHERE team_id = $1 AND field = $2 LIMIT $3`,
		teamID, field, maxTimeTies+1)
	if err != nil {
		return 0, false, fmt.Errorf("count incident groups: %w", err)
	}
	var ties []int64
	for rows.Next() {
		var t int64
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return 0, false, err
		}
		ties = append(ties, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("count incident groups: %w", err)
	}
	if len(ties) > maxTimeTies {
		return 0, false, nil
	}
	for _, t := range ties {
		args := &sqlArgs{list: append([]any(nil), base...)}
		var n int64
		if err := h.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+seekWhere+` AND i.`+column+` = `+args.add(t),
			args.list...).Scan(&n); err != nil {
			return 0, false, fmt.Errorf("count incident groups: %w", err)
		}
		if n > 1 {
			repeats += n - 1
		}
	}
	return repeats, true, nil
}

// foldPage folds the groups of a page (few enough for one statement) into folded. With exact
// (groups that all have values), SQLite looks their values up in the index of a column with a
// value per incident and the groups read their ids here; otherwise their ids are left unread.
func (h *IncidentHandler) foldPage(ctx context.Context, from, where string, base []any, cols []column, groups []*group,
	exact bool, folded map[string]*group) error {
	args := &sqlArgs{list: append([]any(nil), base...)}
	conds := pageConds(where, cols, groups, args, h.db.Engine == db.SQLite && from != "incidents i")
	pageFrom := from
	if exact {
		pageFrom = h.pageFrom(from, cols)
	}
	found, err := h.foldGroups(ctx, aggQuerySQL(cols, "i.", pageFrom, strings.Join(conds, " AND ")), args.list, len(cols))
	if err != nil {
		return err
	}
	wanted := make(map[string]bool, len(groups))
	for _, g := range groups {
		wanted[groupKey(g.values)] = true
	}
	mine := map[string]*group{}
	for _, g := range found {
		if key := groupKey(g.values); wanted[key] {
			folded[key] = g
			mine[key] = g
		}
	}
	if !exact {
		return nil
	}
	for _, g := range mine {
		g.ids = []string{}
	}
	return h.pageIDs(ctx, pageFrom, conds, args.list, cols, mine)
}

// pageConds are where and, for each column, a condition that its value is one of the groups'
// (whose parameters it adds to args): they select every incident of the groups, and may select
// incidents of other groups too. With unindexed (SQLite driven from the label rows) the
// conditions cannot pick an index: SQLite would otherwise seek the page's values once per
// label row instead of looking up each label row's incident by its id.
func pageConds(where string, cols []column, groups []*group, args *sqlArgs, unindexed bool) []string {
	conds := []string{where}
	for i, c := range cols {
		expr := c.expr
		if unindexed {
			expr = "+" + expr
		}
		var in []string
		seen := map[groupValue]bool{}
		hasNull := false
		for _, g := range groups {
			v := g.values[i]
			switch {
			case v.null:
				hasNull = true
			case seen[v]:
			case c.kind == timeCol:
				seen[v] = true
				in = append(in, args.add(v.n))
			default:
				seen[v] = true
				in = append(in, args.add(v.s))
			}
		}
		var alts []string
		if hasNull {
			alts = append(alts, expr+" IS NULL")
		}
		if len(in) > 0 {
			alts = append(alts, expr+" IN ("+strings.Join(in, ", ")+")")
		}
		conds = append(conds, "("+strings.Join(alts, " OR ")+")")
	}
	return conds
}

// pageIDs reads up to maxListedIDs ids (the smallest) of each group of a page's chunk, which
// conds (over from, with args) select, in one query, into the groups.
func (h *IncidentHandler) pageIDs(ctx context.Context, from string, conds []string, args []any, cols []column, groups map[string]*group) error {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = c.expr + " AS g" + strconv.Itoa(i)
	}
	byID := "i.id"
	if h.db.Engine == db.Postgres {
		byID += ` COLLATE "C"`
	}
	partition := make([]string, len(cols))
	for i, c := range cols {
		partition[i] = c.expr
	}
	query := `SELECT * FROM (SELECT ` + strings.Join(exprs, ", ") + `, i.id AS id, ROW_NUMBER() OVER (PARTITION BY ` +
		strings.Join(partition, ", ") + ` ORDER BY ` + byID + `) AS n FROM ` + from + ` WHERE ` +
		strings.Join(conds, " AND ") + `) AS r WHERE n <= ` + strconv.Itoa(maxListedIDs)
	rows, err := h.db.Read().QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("list group incidents: %w", err)
	}
	defer rows.Close()
	raw := make([]any, len(cols)+2)
	scan := make([]any, len(raw))
	for i := range raw {
		scan[i] = &raw[i]
	}
	values := make([]groupValue, len(cols))
	for rows.Next() {
		if err := rows.Scan(scan...); err != nil {
			return err
		}
		for i := range cols {
			values[i] = toGroupValue(raw[i])
		}
		if g, ok := groups[groupKey(values)]; ok {
			g.ids = append(g.ids, toGroupValue(raw[len(cols)]).s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list group incidents: %w", err)
	}
	for _, g := range groups {
		sort.Strings(g.ids)
	}
	return nil
}

// pagedIndexes are the SQLite indexes that find the incidents of given values of a field with a
// value per incident (sqlite_autoindex_incidents_1 is the primary key, team_id and id).
var pagedIndexes = map[oas.IncidentFields]string{
	oas.IncidentFieldsINCIDENTSFIELDSID:                  "sqlite_autoindex_incidents_1",
	oas.IncidentFieldsINCIDENTSFIELDSCREATEDTIME:         "incidents_by_created",
	oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME:          "incidents_by_closed",
	oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME: "incidents_by_updated",
}

// pageFrom is from for the aggregate query of a page's groups. Without statistics SQLite takes
// the team's condition for a selective one and scans the covering incidents_by_severity rather
// than look up the page's values; on incidents alone, SQLite is told to look them up in the index
// of the first column with a value per incident.
func (h *IncidentHandler) pageFrom(from string, cols []column) string {
	if h.db.Engine != db.SQLite || from != "incidents i" {
		return from
	}
	for _, c := range cols {
		if index, ok := pagedIndexes[c.field]; ok {
			return "incidents i INDEXED BY " + index
		}
	}
	return from
}

// batchedIDsAbove is the number of groups of a page driven from the label rows above which their
// ids are read in one query rather than one query per group.
const batchedIDsAbove = 8

// pagedFoldChunk is how many groups of a page one aggregate query folds.
const pagedFoldChunk = 500
