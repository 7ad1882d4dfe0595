package incidents

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// This file serves the events feed: the events of all the team's incidents, their count, the
// values present among their incidents, and the incident of one event (get, acknowledge,
// resolve).

// maxEventPageSize is the events feed's largest page (the public operation refuses more).
const maxEventPageSize = 1000

// eventFilter is the events feed's filter query object. Query objects are read by their
// operation (see queryobject), so it has no generated type; its parts that do are checked by
// their generated validators.
type eventFilter struct {
	Name             *string                              `json:"name"`
	Severity         []oas.IncidentSeverity               `json:"severity"`
	Status           []oas.IncidentStatus                 `json:"status"`
	ContextualLabels map[string]oas.ContextualLabelValues `json:"contextualLabels"`
	DisplayLabels    map[string]oas.DisplayLabelValues    `json:"displayLabels"`
	IsMuted          *bool                                `json:"isMuted"`
	Labels           *eventLabelsFilter                   `json:"labels"`
	Timestamp        *oas.IncidentTimeRange               `json:"timestamp"`
}

type eventLabelsFilter struct {
	MetaLabels []oas.MetaLabel `json:"metaLabels"`
	Operator   *string         `json:"operator"`
}

// eventOrderBy is the events feed's order_by query object.
type eventOrderBy struct {
	Field     *string `json:"field"`
	Direction *string `json:"direction"`
}

var (
	eventFilterSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"name":             {Kind: queryobject.String},
		"severity":         filterSchema.Fields["severity"],
		"status":           filterSchema.Fields["status"],
		"contextualLabels": filterSchema.Fields["contextualLabels"],
		"displayLabels":    filterSchema.Fields["displayLabels"],
		"isMuted":          {Kind: queryobject.Boolean},
		"labels": {Kind: queryobject.Object, Required: []string{"metaLabels"}, Fields: map[string]*queryobject.Schema{
			"metaLabels": {Kind: queryobject.Array, Elem: metaLabelSchema},
			"operator":   filterSchema.Fields["metaLabelsOp"],
		}},
		"timestamp": timeRange,
	}}
	eventOrderBySchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"field":     {Kind: queryobject.String, Enum: []string{eventOrderByTimestamp}},
		"direction": {Kind: queryobject.String, Enum: enumStrings(oas.OrderByDirection("").AllValues())},
	}}
)

const eventOrderByTimestamp = "INCIDENT_EVENT_ORDER_BY_FIELD_TYPE_TIMESTAMP_OR_UNSPECIFIED"

// decodeQueryObject reads the query object name into v (nil doc: left as it is).
//
// Errors: Invalid naming the path of a value of the wrong type or shape.
func decodeQueryObject(doc []byte, name string, v any) error {
	if doc == nil {
		return nil
	}
	if err := json.Unmarshal(doc, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return apierror.Invalidf("%s.%s: must be %s", name, typeErr.Field, jsonTypeName(typeErr.Type.Kind().String()))
		}
		return apierror.Invalidf("%s: does not have the expected shape: %s", name, queryobject.LastMessagePart(err.Error()))
	}
	return nil
}

func jsonTypeName(kind string) string {
	switch {
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case kind == "slice":
		return "an array"
	case kind == "map" || kind == "struct" || kind == "ptr":
		return "an object"
	case strings.HasPrefix(kind, "int") || strings.HasPrefix(kind, "uint"):
		return "an integer"
	}
	return "a " + kind
}

// eventQuery is the events feed's filter turned into SQL over incidents i, with the event
// time range kept apart (it applies to the events, alias e).
type eventQuery struct {
	from, where string
	args        *sqlArgs
	start, end  *int64 // Unix microseconds of filter.timestamp, when given
	hash        string // of the filter, for page tokens
	// metaLabelsOp is filter.labels.operator (OR when absent), which filter values echo.
	metaLabelsOp oas.IncidentFilterValuesMetaLabelsOp
	// selectsIncidents is false when the filter has nothing but a time range: every incident of
	// the team qualifies, and the events are read without the incidents.
	selectsIncidents bool
}

// readEventFilter reads the filter query object of the events operations.
//
// Errors: Invalid naming the full path of the first value that breaks a rule.
func (h *IncidentHandler) readEventFilter(ctx context.Context, teamID int64) (eventQuery, error) {
	var q eventQuery
	doc, err := queryobject.Decode(queryobject.Values(ctx), "filter", eventFilterSchema)
	if err != nil {
		return q, err
	}
	var f eventFilter
	if err := decodeQueryObject(doc, "filter", &f); err != nil {
		return q, err
	}
	q.metaLabelsOp = oas.IncidentFilterValuesMetaLabelsOpFILTEROPERATORORORUNSPECIFIED
	incidentFilter := oas.IncidentQueryFilter{Severity: f.Severity, Status: f.Status}
	if f.Name != nil {
		if n := utf8.RuneCountInString(*f.Name); n < 1 || n > 500 {
			return q, apierror.Invalidf("filter.name: must have 1 to 500 characters (got %d)", n)
		}
		incidentFilter.SearchQuery = oas.NewOptIncidentSearchQuery(oas.IncidentSearchQuery{
			Query: *f.Name, IncidentField: oas.NewOptIncidentFields(oas.IncidentFieldsINCIDENTSFIELDSNAME)})
	}
	if f.ContextualLabels != nil {
		incidentFilter.ContextualLabels = oas.NewOptIncidentQueryFilterContextualLabels(f.ContextualLabels)
	}
	if f.DisplayLabels != nil {
		incidentFilter.DisplayLabels = oas.NewOptIncidentQueryFilterDisplayLabels(f.DisplayLabels)
	}
	if f.IsMuted != nil {
		incidentFilter.IsMuted = oas.NewOptBool(*f.IsMuted)
	}
	if f.Labels != nil {
		if n := len(f.Labels.MetaLabels); n > 1000 {
			return q, apierror.Invalidf("filter.labels.metaLabels: must have at most 1000 items (got %d)", n)
		}
		for i, l := range f.Labels.MetaLabels {
			if err := l.Validate(); err != nil {
				return q, queryobject.Describe(fmt.Sprintf("filter.labels.metaLabels[%d]", i), err)
			}
		}
		incidentFilter.MetaLabels = f.Labels.MetaLabels
		if f.Labels.Operator != nil {
			op := oas.IncidentQueryFilterMetaLabelsOp(*f.Labels.Operator)
			if err := op.Validate(); err != nil {
				return q, apierror.Invalidf("filter.labels.operator: must be one of %s", strings.Join(enumStrings(op.AllValues()), ", "))
			}
			incidentFilter.MetaLabelsOp = oas.NewOptIncidentQueryFilterMetaLabelsOp(op)
			q.metaLabelsOp = oas.IncidentFilterValuesMetaLabelsOp(op)
		}
	}
	// The remaining fields have the names and rules of the incident filter's.
	if err := incidentFilter.Validate(); err != nil {
		return q, queryobject.Describe("filter", err)
	}
	if f.Timestamp != nil {
		start, end := micros(f.Timestamp.StartTime), micros(f.Timestamp.EndTime)
		q.start, q.end = &start, &end
	}
	q.selectsIncidents = f.Name != nil || f.Severity != nil || f.Status != nil || f.ContextualLabels != nil ||
		f.DisplayLabels != nil || f.IsMuted != nil || f.Labels != nil
	q.args = &sqlArgs{}
	q.from, q.where, err = filterSQL(h.db.Engine, teamID, incidentFilter, "filter", q.args)
	if err != nil {
		return q, err
	}
	canonical, _ := json.Marshal(f)
	q.hash = hashQuery(canonical)
	return q, nil
}

// eventsSQL is the FROM and WHERE of the events the query selects (alias e), adding the time
// range's parameters to q.args. Without incident conditions the events are read alone, in the
// order of the index incident_events_by_time, so that a page stops early.
func (q eventQuery) eventsSQL() (from, where string) {
	if q.selectsIncidents {
		from, where = q.from+" CROSS JOIN incident_events e", q.where+" AND e.team_id = i.team_id AND e.incident_id = i.id"
	} else {
		// filterSQL's first parameter is the team.
		from, where = "incident_events e", "e.team_id = $1"
	}
	if q.start != nil {
		where += " AND e.created_at >= " + q.args.add(*q.start) + " AND e.created_at < " + q.args.add(*q.end)
	}
	return from, where
}

// ListIncidentEventsFeed returns one page of the events of the team's incidents that match the
// filter (filter.timestamp selects the events by the time they were written), newest first
// unless order_by asks for ascending, each with its incident's current severity, state, status
// and contextual labels.
//
// Errors: Invalid for a query object that breaks its rules, a page size above 1000 or a page
// token of another query.
func (h *IncidentHandler) ListIncidentEventsFeed(ctx context.Context) (*oas.IncidentEventsFeedResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	q, err := h.readEventFilter(ctx, caller.TeamID)
	if err != nil {
		return nil, err
	}
	values := queryobject.Values(ctx)
	doc, err := queryobject.Decode(values, "order_by", eventOrderBySchema)
	if err != nil {
		return nil, err
	}
	var order eventOrderBy
	if err := decodeQueryObject(doc, "order_by", &order); err != nil {
		return nil, err
	}
	if order.Field != nil && *order.Field != eventOrderByTimestamp {
		return nil, apierror.Invalidf("order_by.field: must be %s", eventOrderByTimestamp)
	}
	dir := " DESC"
	if order.Direction != nil {
		d := oas.OrderByDirection(*order.Direction)
		if err := d.Validate(); err != nil {
			return nil, apierror.Invalidf("order_by.direction: must be one of %s", strings.Join(enumStrings(d.AllValues()), ", "))
		}
		if d == oas.OrderByDirectionORDERBYDIRECTIONASC {
			dir = " ASC"
		}
	}
	doc, err = queryobject.Decode(values, "pagination", paginationSchema)
	if err != nil {
		return nil, err
	}
	page := oas.IncidentPageRequest{PageSize: defaultPageSize}
	if doc != nil {
		if err := queryobject.Unmarshal("pagination", doc, &page); err != nil {
			return nil, err
		}
	}
	if page.PageSize > maxEventPageSize {
		return nil, apierror.Invalidf("pagination.pageSize: must be at most %d (got %d)", maxEventPageSize, page.PageSize)
	}
	qh := hashQuery([]byte(q.hash), []byte(dir))
	offset := 0
	if tok, ok := page.PageToken.Get(); ok {
		if offset, err = readPageToken("pagination.pageToken", tok, qh); err != nil {
			return nil, err
		}
	}
	from, where := q.eventsSQL()
	read := h.db.Read()
	var total int64
	if err := read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, q.args.list...).Scan(&total); err != nil {
		return nil, fmt.Errorf("count incident events: %w", err)
	}
	rows, err := read.QueryContext(ctx, `SELECT e.incident_id, e.document, e.created_at FROM `+from+` WHERE `+where+
		` ORDER BY e.created_at`+dir+`, e.incident_id`+dir+`, e.seq`+dir+
		` LIMIT `+q.args.add(page.PageSize)+` OFFSET `+q.args.add(int64(offset)), q.args.list...)
	if err != nil {
		return nil, fmt.Errorf("list incident events: %w", err)
	}
	type listed struct {
		incidentID string
		event      oas.IncidentEvent
		at         int64
	}
	var found []listed
	var ids []string
	seen := map[string]bool{}
	for rows.Next() {
		var l listed
		var doc string
		if err := rows.Scan(&l.incidentID, &doc, &l.at); err != nil {
			rows.Close()
			return nil, err
		}
		if err := l.event.UnmarshalJSON([]byte(doc)); err != nil {
			rows.Close()
			return nil, fmt.Errorf("incident %s event: %w", l.incidentID, err)
		}
		found = append(found, l)
		if !seen[l.incidentID] {
			seen[l.incidentID] = true
			ids = append(ids, l.incidentID)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	incidents, err := loadRows(ctx, read, h.db.Engine, caller.TeamID, ids, false)
	if err != nil {
		return nil, err
	}
	res := &oas.IncidentEventsFeedResponse{Items: []oas.IncidentEventExtended{}, Pagination: oas.IncidentPageResponse{TotalSize: total}}
	for _, l := range found {
		meta, err := incidents[l.incidentID].eventMetadata()
		if err != nil {
			return nil, err
		}
		res.Items = append(res.Items, oas.IncidentEventExtended{
			PlatformEventKey:              l.event.ID,
			PlatformEventTimestamp:        fromMicros(l.at),
			IncidentEvent:                 l.event,
			IncidentEventExtendedMetadata: oas.NewOptIncidentEventExtendedIncidentEventExtendedMetadata(meta),
		})
	}
	if next := int64(offset) + page.PageSize; next < total {
		res.Pagination.NextPageToken = oas.NewOptString(pageToken(int(next), qh))
	}
	return res, nil
}

// eventMetadata describes the incident an event of the feed belongs to, as it is now.
func (r row) eventMetadata() (oas.IncidentEventExtendedIncidentEventExtendedMetadata, error) {
	meta := oas.IncidentEventExtendedIncidentEventExtendedMetadata{
		IncidentSeverity: oas.NewOptIncidentSeverity(oas.IncidentSeverity(r.severity)),
		IncidentState:    oas.NewOptIncidentState(oas.IncidentState(r.state)),
		IncidentStatus:   oas.NewOptIncidentStatus(oas.IncidentStatus(r.status)),
		IsMuted:          oas.NewOptBool(r.isMuted),
	}
	if r.name != "" {
		meta.AlertName = oas.NewOptString(r.name)
	}
	labels := oas.IncidentEventExtendedIncidentEventExtendedMetadataIncidentPermutation{}
	if err := json.Unmarshal([]byte(r.contextual), (*map[string]string)(&labels)); err != nil {
		return meta, fmt.Errorf("incident %s contextual labels: %w", r.id, err)
	}
	meta.IncidentPermutation = oas.NewOptIncidentEventExtendedIncidentEventExtendedMetadataIncidentPermutation(labels)
	return meta, nil
}

// CountIncidentEvents counts the events the feed lists for the same filter. Every event is
// counted, so reachedLimit is false.
//
// Errors: Invalid for a filter that breaks its rules.
func (h *IncidentHandler) CountIncidentEvents(ctx context.Context) (*oas.IncidentEventsCountResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	q, err := h.readEventFilter(ctx, caller.TeamID)
	if err != nil {
		return nil, err
	}
	from, where := q.eventsSQL()
	var total int64
	if err := h.db.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, q.args.list...).Scan(&total); err != nil {
		return nil, fmt.Errorf("count incident events: %w", err)
	}
	return &oas.IncidentEventsCountResponse{Count: strconv.FormatInt(total, 10), ReachedLimit: false}, nil
}

// incidentOfEvent returns the id of the team's incident that has the event (its id matched in
// either case).
//
// Errors: NotFound when no incident of the team has the event.
func incidentOfEvent(ctx context.Context, q db.Querier, teamID int64, eventID string) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT incident_id FROM incident_events WHERE team_id = $1 AND id = $2`,
		teamID, strings.ToLower(eventID)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", apierror.NotFoundf("event_id: no incident has the event %q", eventID)
	}
	if err != nil {
		return "", fmt.Errorf("find incident of event: %w", err)
	}
	return id, nil
}

// GetIncidentByEventID returns the incident that has the event, with all its events.
//
// Errors: NotFound when no incident of the team has the event.
func (h *IncidentHandler) GetIncidentByEventID(ctx context.Context, params oas.GetIncidentByEventIDParams) (*oas.IncidentResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id, err := incidentOfEvent(ctx, h.db.Read(), caller.TeamID, params.EventID)
	if err != nil {
		return nil, err
	}
	return h.GetIncident(ctx, oas.GetIncidentParams{ID: oas.IncidentID(id)})
}

// AcknowledgeIncidentByEventID acknowledges the incident that has the event, as
// AcknowledgeIncidents does.
//
// Errors: NotFound when no incident of the team has the event; Conflict when it is resolved.
func (h *IncidentHandler) AcknowledgeIncidentByEventID(ctx context.Context, params oas.AcknowledgeIncidentByEventIDParams) (*oas.IncidentResponse, error) {
	return h.oneByEvent(ctx, params.EventID, h.acknowledge)
}

// ResolveIncidentByEventID resolves the incident that has the event, as ResolveIncidents does.
//
// Errors: NotFound when no incident of the team has the event.
func (h *IncidentHandler) ResolveIncidentByEventID(ctx context.Context, params oas.ResolveIncidentByEventIDParams) (*oas.IncidentResponse, error) {
	return h.oneByEvent(ctx, params.EventID, h.resolve)
}

// oneByEvent runs a lifecycle operation on the incident that has the event (an incident is
// never deleted, so the id found stays valid for the operation's own transaction).
func (h *IncidentHandler) oneByEvent(ctx context.Context, eventID string,
	op func(ctx context.Context, ids []oas.IncidentID, field string) (*oas.IncidentsResponse, error)) (*oas.IncidentResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	id, err := incidentOfEvent(ctx, h.db.Read(), caller.TeamID, eventID)
	if err != nil {
		return nil, err
	}
	res, err := op(ctx, []oas.IncidentID{oas.IncidentID(id)}, "event_id")
	if err != nil {
		return nil, err
	}
	return &oas.IncidentResponse{Incident: res.Incidents[0]}, nil
}
