package cases

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	defaultPageSize = 50
	pageTokenPrefix = "cases.v1."
)

// query collects a WHERE clause and its arguments.
type query struct {
	where []string
	args  []any
}

// arg adds an argument and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) in(column string, values []string) {
	if len(values) == 0 {
		return
	}
	marks := make([]string, len(values))
	for i, v := range values {
		marks[i] = q.arg(v)
	}
	q.where = append(q.where, column+" IN ("+strings.Join(marks, ", ")+")")
}

// known keeps the values that are not the enum's UNSPECIFIED (which filters nothing).
func known[T ~string](values []T) []string {
	var out []string
	for _, v := range values {
		if !strings.HasSuffix(string(v), "_UNSPECIFIED") {
			out = append(out, string(v))
		}
	}
	return out
}

// likeEscape makes s a LIKE pattern that matches s anywhere.
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// ListCases returns one page of the team's cases that match every filter (values inside one
// filter are alternatives; UNSPECIFIED values are ignored), ordered by orderBy (creation time,
// newest first, by default; ties by number in the same direction). pageToken comes from the
// previous page's nextPageToken, which is absent on the last page; totalSize counts every match.
//
// An assignee option with neither alternative set is not set: it adds no alternative, and a
// list of only such options filters nothing (the public document lets the one-of be empty).
//
// Errors: Invalid for an assignee option that sets both assignee and unassigned, a dateRange whose to is before its from, or a pageToken this server did not issue.
func (h *CaseHandler) ListCases(ctx context.Context, req oas.OptCaseListInput) (*oas.CasePage, error) {
	caller := auth.PrincipalFrom(ctx)
	now := h.db.Now()
	q, err := filterCases(caller.TeamID, req.Value.Filters.Value)
	if err != nil {
		return nil, err
	}

	page := req.Value.Pagination.Value
	size := int64(defaultPageSize)
	if page.PageSize.Set {
		size = page.PageSize.Value
	}
	offset := int64(0)
	if page.PageToken.Set {
		var ok bool
		if offset, ok = parsePageToken(page.PageToken.Value); !ok {
			return nil, apierror.Invalidf("pagination.pageToken: not a page token of this list; pass nextPageToken unchanged")
		}
	}
	offset += page.Skip.Value

	where := strings.Join(q.where, " AND ")
	var total int64
	rq := h.db.Read()
	if err := rq.QueryRowContext(ctx, `SELECT count(*) FROM cases c WHERE `+where, q.args...).Scan(&total); err != nil {
		return nil, fmt.Errorf("count cases: %w", err)
	}
	order := orderBy(q, req.Value.OrderBy.Value, micros(now))
	cols := "c." + strings.ReplaceAll(strings.Join(strings.Fields(caseColumns), " "), ", ", ", c.")
	rows, err := rq.QueryContext(ctx, `SELECT `+cols+` FROM cases c WHERE `+where+` ORDER BY `+order+
		` LIMIT `+q.arg(size)+` OFFSET `+q.arg(offset), q.args...)
	if err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	var found []caseRow
	for rows.Next() {
		c, err := scanCase(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("list cases: %w", err)
		}
		found = append(found, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list cases: %w", err)
	}
	ids := make([]string, len(found))
	for i, c := range found {
		ids[i] = c.ID
	}
	breaches, err := loadBreaches(ctx, rq, caller.TeamID, ids)
	if err != nil {
		return nil, err
	}
	out := &oas.CasePage{Cases: make([]oas.Case, 0, len(found))}
	for _, c := range found {
		oc, err := caseFromRow(c, breaches[c.ID], now)
		if err != nil {
			return nil, err
		}
		out.Cases = append(out.Cases, oc)
	}
	out.Pagination.TotalSize = oas.NewOptInt64(total)
	if next := offset + int64(len(found)); len(found) > 0 && next < total {
		out.Pagination.NextPageToken = oas.NewOptString(pageToken(next))
	}
	return out, nil
}

// filterCases is the WHERE clause (on cases c) that keeps the team's cases matching every
// filter of f; the list and the filter values share it. Values inside one filter are
// alternatives; UNSPECIFIED values filter nothing.
//
// Errors: Invalid naming the field under filters for an assignee option or impacted-entity
// filter that does not set exactly one alternative, or a dateRange whose to is before its from.
func filterCases(teamID int64, f oas.CaseFilters) (*query, error) {
	q := &query{}
	q.where = append(q.where, "c.team_id = "+q.arg(teamID))
	q.in("c.status", known(f.Statuses))
	q.in("c.priority", known(f.Priorities))
	q.in("c.category", known(f.Categories))

	if len(f.Breached) > 0 {
		var alts []string
		var kpis []string
		for _, b := range known(f.Breached) {
			switch oas.KPIFilter(b) {
			case oas.KPIFilterKPIFILTERNOTBREACHED:
				alts = append(alts, `NOT EXISTS (SELECT 1 FROM case_kpi_breaches b
					WHERE b.team_id = c.team_id AND b.case_id = c.id)`)
			default:
				kpis = append(kpis, "KPI_TYPE_"+strings.TrimSuffix(strings.TrimPrefix(b, "KPI_FILTER_"), "_BREACHED"))
			}
		}
		if len(kpis) > 0 {
			marks := make([]string, len(kpis))
			for i, k := range kpis {
				marks[i] = q.arg(k)
			}
			alts = append(alts, `EXISTS (SELECT 1 FROM case_kpi_breaches b WHERE b.team_id = c.team_id
				AND b.case_id = c.id AND b.kpi_type IN (`+strings.Join(marks, ", ")+`))`)
		}
		if len(alts) > 0 {
			q.where = append(q.where, "("+strings.Join(alts, " OR ")+")")
		}
	}

	if len(f.Assignees) > 0 {
		var users []string
		unassigned := false
		for i, a := range f.Assignees {
			if a.Assignee.Set && a.Unassigned != nil {
				return nil, apierror.Invalidf("filters.assignees[%d]: must set only one of assignee, unassigned, both are set", i)
			}
			if a.Assignee.Set {
				users = append(users, a.Assignee.Value)
			} else if a.Unassigned != nil {
				unassigned = true
			}
		}
		var alts []string
		if unassigned {
			alts = append(alts, "c.assignee = ''")
		}
		if len(users) > 0 {
			marks := make([]string, len(users))
			for i, u := range users {
				marks[i] = q.arg(u)
			}
			alts = append(alts, "c.assignee IN ("+strings.Join(marks, ", ")+")")
		}
		if len(alts) > 0 {
			q.where = append(q.where, "("+strings.Join(alts, " OR ")+")")
		}
	}

	for kind, groups := range map[string][]oas.FilterGroup{"label": f.Labels, "grouping": f.Groupings} {
		for _, g := range groups {
			cond := `EXISTS (SELECT 1 FROM case_labels l WHERE l.team_id = c.team_id AND l.case_id = c.id
				AND l.kind = ` + q.arg(kind) + ` AND l.key = ` + q.arg(g.Key)
			if len(g.Values) > 0 {
				marks := make([]string, len(g.Values))
				for i, v := range g.Values {
					marks[i] = q.arg(v)
				}
				cond += " AND l.value IN (" + strings.Join(marks, ", ") + ")"
			}
			q.where = append(q.where, cond+")")
		}
	}

	if f.TextSearch.Set {
		pattern := q.arg(likeEscape(strings.ToLower(f.TextSearch.Value)))
		q.where = append(q.where, `(c.title_folded LIKE `+pattern+` ESCAPE '\' OR
			('case-' || CAST(c.number AS TEXT)) LIKE `+pattern+` ESCAPE '\')`)
	}
	if f.DateRange.Set {
		r := f.DateRange.Value
		if r.To.Before(r.From) {
			return nil, apierror.Invalidf("filters.dateRange: to must not be before from")
		}
		if r.Mode.Value == oas.CaseDateRangeModeDATERANGEMODEACTIVEWINDOW {
			// Open at some instant of [from, to): created before to, not ended before from.
			q.where = append(q.where, "c.created_at < "+q.arg(micros(r.To)),
				"COALESCE(c.resolved_at, c.closed_at, "+q.arg(int64(1)<<62)+") >= "+q.arg(micros(r.From)))
		} else {
			q.where = append(q.where, "c.created_at >= "+q.arg(micros(r.From)), "c.created_at < "+q.arg(micros(r.To)))
		}
	}

	if af := f.AlertFilters.Value; len(af.AlertIds) > 0 || len(af.AlertVersions) > 0 {
		// The indicators column is the JSON of caseIndicators.alertIndicators, as encoding/json
		// writes it: "alertId":"<id>" and each version (fingerprint) as an element of
		// "alertVersions".
		var alts []string
		for _, id := range af.AlertIds {
			alts = append(alts, "c.indicators LIKE "+q.arg(likeEscape(`"alertId":"`+string(id)+`"`))+` ESCAPE '\'`)
		}
		for _, v := range af.AlertVersions {
			quoted, _ := json.Marshal(v)
			alts = append(alts, "c.alerts LIKE "+q.arg(likeEscape(`"fingerprint":`+string(quoted)))+` ESCAPE '\'`)
		}
		q.where = append(q.where, "("+strings.Join(alts, " OR ")+")")
	}

	if flat := f.CaseLabelsFilter.Value.FlatLabels; len(flat) > 0 {
		var alts []string
		for _, kv := range flat {
			alts = append(alts, `EXISTS (SELECT 1 FROM case_labels l WHERE l.team_id = c.team_id
				AND l.case_id = c.id AND l.kind = 'label' AND l.key = `+q.arg(kv.Key)+` AND l.value = `+q.arg(kv.Value)+`)`)
		}
		q.where = append(q.where, "("+strings.Join(alts, " OR ")+")")
	}

	// mgmtapi sends no case to a connector: noConnector keeps every case, a connector type none.
	if len(f.ConnectorTypeFilters) > 0 {
		matchesAll, specified := false, false
		for _, ct := range f.ConnectorTypeFilters {
			switch {
			case ct.NoConnector != nil:
				matchesAll, specified = true, true
			case ct.ConnectorType.Set && ct.ConnectorType.Value != oas.ConnectorTypeFilterConnectorTypeCONNECTORTYPEUNSPECIFIED:
				specified = true
			}
		}
		if specified && !matchesAll {
			q.where = append(q.where, "1 = 0")
		}
	}

	// Cases hold no impacted entity: any entity filter keeps no case.
	for i, e := range f.ImpactedEntities {
		if e.ApmService.Set == e.ApmDatabase.Set {
			return nil, apierror.Invalidf("filters.impactedEntities[%d]: must set exactly one of apmService, apmDatabase", i)
		}
	}
	if len(f.ImpactedEntities) > 0 {
		q.where = append(q.where, "1 = 0")
	}

	if types := known(f.IndicatorTypes); len(types) > 0 {
		withAlerts := false
		for _, t := range types {
			switch oas.CaseFiltersIndicatorTypesItem(t) {
			case oas.CaseFiltersIndicatorTypesItemINDICATORTYPEALERT,
				oas.CaseFiltersIndicatorTypesItemINDICATORTYPEPROMETHEUSALERTMANAGER:
				withAlerts = true
			}
		}
		if withAlerts {
			q.where = append(q.where, "c.indicators <> '[]'")
		} else {
			q.where = append(q.where, "1 = 0")
		}
	}
	return q, nil
}

func orderBy(q *query, o oas.CaseOrderBy, now int64) string {
	dir := " DESC"
	if o.Direction.Value == oas.CaseOrderByDirectionCASEORDERBYDIRECTIONASCENDING {
		dir = " ASC"
	}
	var key string
	switch o.Field.Value {
	case oas.CaseOrderByFieldCASEORDERBYFIELDPRIORITY:
		key = "c.priority"
	case oas.CaseOrderByFieldCASEORDERBYFIELDSTATUS:
		key = `CASE c.status WHEN 'CASE_STATUS_PENDING_ACTIVATION' THEN 0 WHEN 'CASE_STATUS_ACTIVE' THEN 1
			WHEN 'CASE_STATUS_ACKNOWLEDGED' THEN 2 WHEN 'CASE_STATUS_RESOLVED' THEN 3 ELSE 4 END`
	case oas.CaseOrderByFieldCASEORDERBYFIELDUPDATEDAT:
		key = "c.updated_at"
	case oas.CaseOrderByFieldCASEORDERBYFIELDCATEGORY:
		key = "c.category"
	case oas.CaseOrderByFieldCASEORDERBYFIELDDURATION:
		key = "(COALESCE(c.resolved_at, c.closed_at, " + q.arg(now) + ") - c.created_at)"
	default:
		key = "c.created_at"
	}
	return key + dir + ", c.number" + dir
}

func pageToken(offset int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + strconv.FormatInt(offset, 10)))
}

func parsePageToken(token string) (int64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, false
	}
	digits, ok := strings.CutPrefix(string(b), pageTokenPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != digits {
		return 0, false
	}
	return n, true
}
