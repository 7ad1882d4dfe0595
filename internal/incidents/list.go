package incidents

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	defaultPageSize = 100
	maxGroupBys     = 100
	maxListedIDs    = 1000
)

// colKind says how a field's values compare.
type colKind int

const (
	textCol colKind = iota
	timeCol         // Unix microseconds, possibly NULL (closedAt)
	enumCol         // compares by position in its enumeration
)

// column is an incident field as SQL over the table alias i.
type column struct {
	expr       string
	kind       colKind
	order      []string // enumCol: the values in enumeration order
	field      oas.IncidentFields
	label      string // a contextual label's column: its key
	labelParam string // and the key's placeholder, which expr uses
}

// fieldColumn maps an incident field to its column; ok=false for DURATION and UNSPECIFIED.
func fieldColumn(f oas.IncidentFields) (column, bool) {
	switch f {
	case oas.IncidentFieldsINCIDENTSFIELDSID:
		return column{expr: "i.id", field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSSEVERITY:
		return column{expr: "i.severity", kind: enumCol, order: enumStrings(oas.IncidentSeverity("").AllValues()), field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSNAME:
		return column{expr: "i.name", field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSCREATEDTIME:
		return column{expr: "i.created_at", kind: timeCol, field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSCLOSEDTIME:
		return column{expr: "i.closed_at", kind: timeCol, field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSSTATE:
		return column{expr: "i.state", kind: enumCol, order: enumStrings(oas.IncidentState("").AllValues()), field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSSTATUS:
		return column{expr: "i.status", kind: enumCol, order: enumStrings(oas.IncidentStatus("").AllValues()), field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSLASTSTATEUPDATETIME:
		return column{expr: "i.last_state_update_time", kind: timeCol, field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSAPPLICATIONNAME:
		return column{expr: "i.application_name", field: f}, true
	case oas.IncidentFieldsINCIDENTSFIELDSSUBSYSTEMNAME:
		return column{expr: "i.subsystem_name", field: f}, true
	}
	return column{}, false
}

// labelColumn is the value of the incident's contextual label key, "" when it has none.
func labelColumn(key string, args *sqlArgs) column {
	ph := args.add(key)
	return column{expr: "COALESCE((SELECT l.value FROM incident_labels l WHERE l.team_id = i.team_id AND l.incident_id = i.id AND l.key = " +
		ph + "), '')", label: key, labelParam: ph}
}

// sortExpr is what ORDER BY uses for c: enumerations by their position.
func (c column) sortExpr() string {
	if c.kind != enumCol {
		return c.expr
	}
	var b strings.Builder
	b.WriteString("CASE " + c.expr)
	for i, v := range c.order {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", v, i)
	}
	b.WriteString(" ELSE 1000 END")
	return b.String()
}

// pageToken is opaque to clients: the offset of the next page and a hash of the query it
// belongs to, so that a token is refused by any other query.
func pageToken(offset int, queryHash string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset) + ":" + queryHash))
}

// maxPageOffset bounds the offsets a token can carry (answers count at most 1000000000 items), so
// that offset arithmetic cannot overflow.
const maxPageOffset = 1_000_000_000

// readPageToken returns the offset a token points at.
//
// Errors: Invalid when the token is malformed or belongs to another query.
func readPageToken(path, token, queryHash string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		off, hash, ok := strings.Cut(string(raw), ":")
		n, convErr := strconv.Atoi(off)
		if ok && convErr == nil && n >= 0 && n <= maxPageOffset && hash == queryHash {
			return n, nil
		}
	}
	return 0, apierror.Invalidf("%s: is not a page token of this query (use the nextPageToken of an answer to the same query)", path)
}

func hashQuery(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// ListIncidents returns one page of the team's incidents that match the filter, in the order of
// orderBys (newest first when none; the id breaks ties), with their events.
//
// Errors: Invalid for an order-by that sets neither or both of incidentField and
// contextualLabel, or a page token of another query.
func (h *IncidentHandler) ListIncidents(ctx context.Context, req oas.OptIncidentListInput) (*oas.IncidentPage, error) {
	caller := auth.PrincipalFrom(ctx)
	body := req.Or(oas.IncidentListInput{})
	filter := body.Filter.Or(oas.IncidentQueryFilter{})
	args := &sqlArgs{}
	from, where, err := filterSQL(h.db.Engine, caller.TeamID, filter, "filter", args)
	if err != nil {
		return nil, err
	}
	// The count carries only the filter's arguments; the order-bys append theirs after them.
	filterArgs := len(args.list)
	now := h.db.Now()
	var order []string
	for i, ob := range body.OrderBys {
		path := fmt.Sprintf("orderBys[%d]", i)
		if ob.IncidentField.Set == ob.ContextualLabel.Set {
			return nil, apierror.Invalidf("%s: must set exactly one of incidentField, contextualLabel", path)
		}
		var expr string
		if ob.ContextualLabel.Set {
			expr = labelColumn(ob.ContextualLabel.Value, args).expr
		} else if ob.IncidentField.Value == oas.IncidentFieldsINCIDENTSFIELDSDURATION {
			expr = "(COALESCE(i.closed_at, " + args.add(micros(now)) + ") - i.created_at)"
		} else if c, ok := fieldColumn(ob.IncidentField.Value); ok {
			expr = c.sortExpr()
		} else {
			return nil, apierror.Invalidf("%s.incidentField: %s cannot be ordered by", path, ob.IncidentField.Value)
		}
		dir := " ASC"
		if ob.Direction == oas.OrderByDirectionORDERBYDIRECTIONDESC {
			dir = " DESC"
		}
		order = append(order, expr+dir)
	}
	if len(order) == 0 {
		order = []string{"i.created_at DESC", "i.id DESC"}
	} else {
		order = append(order, "i.id ASC")
	}
	page := body.Pagination.Or(oas.IncidentPageRequest{PageSize: defaultPageSize})
	filterDoc, _ := filter.MarshalJSON()
	var orderDoc []byte
	for _, ob := range body.OrderBys {
		b, _ := ob.MarshalJSON()
		orderDoc = append(orderDoc, b...)
	}
	qh := hashQuery(filterDoc, orderDoc)
	offset := 0
	if tok, ok := page.PageToken.Get(); ok {
		if offset, err = readPageToken("pagination.pageToken", tok, qh); err != nil {
			return nil, err
		}
	}
	q := h.db.Read()
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args.list[:filterArgs]...).Scan(&total); err != nil {
		return nil, fmt.Errorf("count incidents: %w", err)
	}
	query := `SELECT i.id FROM ` + from + ` WHERE ` + where + ` ORDER BY ` + strings.Join(order, ", ") +
		` LIMIT ` + args.add(page.PageSize) + ` OFFSET ` + args.add(int64(offset))
	rows, err := q.QueryContext(ctx, query, args.list...)
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	incidents, err := loadIncidents(ctx, q, h.db.Engine, caller.TeamID, ids, now)
	if err != nil {
		return nil, err
	}
	res := &oas.IncidentPage{Incidents: incidents, Pagination: oas.IncidentPageResponse{TotalSize: total}}
	if next := int64(offset) + page.PageSize; next < total {
		res.Pagination.NextPageToken = oas.NewOptString(pageToken(int(next), qh))
	}
	return res, nil
}
