// Package alertevents keeps and serves the alert event feed: every firing and every resolution
// of an alert that names one of the team's alert definitions (its alert_def_id label), recorded
// by ingestion (Record) in the transaction that opens or resolves the alert's incident, and read
// back listed, counted, summarised per label and metadata value, and per definition.
package alertevents

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// EventHandler implements the alert-event operations of oas.Handler.
type EventHandler struct {
	db *db.DB
}

// NewHandler returns the alert-event operations over database.
func NewHandler(database *db.DB) *EventHandler {
	return &EventHandler{db: database}
}

// ListAlertDefinitionEvents answers one page of the events of the definitions (or versions)
// alert_ids in timestamp_range, with the labels of platform_event_labels.
//
// Errors: Invalid for a missing or reversed range, a malformed order, page or label match.
func (h *EventHandler) ListAlertDefinitionEvents(ctx context.Context, params oas.ListAlertDefinitionEventsParams) (*oas.AlertFeedEventList, error) {
	values := queryobject.Values(ctx)
	s := selection{teamID: auth.PrincipalFrom(ctx).TeamID, definitionsOrVersions: params.AlertIds}
	r, err := readTimeRange(values, "timestamp_range")
	if err != nil {
		return nil, err
	}
	s.during = &r
	if s.labels, err = readLabelMatches(values); err != nil {
		return nil, err
	}
	return h.list(ctx, values, s)
}

// ListAlertFeedEvents answers one page of the events filter selects.
//
// Errors: Invalid for a missing filter or range, a malformed filter, order or page.
func (h *EventHandler) ListAlertFeedEvents(ctx context.Context) (*oas.AlertFeedEventList, error) {
	values := queryobject.Values(ctx)
	s, err := readFeedFilter(values, auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	return h.list(ctx, values, s)
}

func (h *EventHandler) list(ctx context.Context, values url.Values, s selection) (*oas.AlertFeedEventList, error) {
	asc, err := readFeedOrder(values)
	if err != nil {
		return nil, err
	}
	p, err := readPage(values, asc)
	if err != nil {
		return nil, err
	}
	events, next, total, err := listEvents(ctx, h.db.Read(), s, asc, p)
	if err != nil {
		return nil, err
	}
	out := &oas.AlertFeedEventList{Events: make([]oas.AlertFeedEvent, 0, len(events))}
	for _, e := range events {
		out.Events = append(out.Events, feedEvent(s.teamID, e))
	}
	out.Pagination = oas.NewOptAlertFeedPage(pageOf(next, total))
	return out, nil
}

// CountAlertFeedEvents counts the events filter selects, up to 100000.
//
// Errors: Invalid for a missing filter or range, or a malformed filter.
func (h *EventHandler) CountAlertFeedEvents(ctx context.Context) (*oas.AlertFeedEventCount, error) {
	s, err := readFeedFilter(queryobject.Values(ctx), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	n, reached, err := countEvents(ctx, h.db.Read(), s)
	if err != nil {
		return nil, err
	}
	return &oas.AlertFeedEventCount{Count: itoa(n), ReachedLimit: reached}, nil
}

// GetAlertFeedStatistics counts, per label and metadata key, the events filter selects by value.
//
// Errors: Invalid for a missing filter or range, or a malformed filter.
func (h *EventHandler) GetAlertFeedStatistics(ctx context.Context) (*oas.AlertFeedStatistics, error) {
	s, err := readFeedFilter(queryobject.Values(ctx), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	counts, err := fieldCounts(ctx, h.db.Read(), s)
	if err != nil {
		return nil, err
	}
	stats := func(byKey map[string]map[string]int64) map[string]oas.AlertFeedFieldStatistics {
		out := make(map[string]oas.AlertFeedFieldStatistics, len(byKey))
		for k, vs := range byKey {
			m := make(oas.AlertFeedFieldStatisticsFieldStatistics, len(vs))
			for v, n := range vs {
				m[v] = itoa(n)
			}
			out[k] = oas.AlertFeedFieldStatistics{FieldStatistics: oas.NewOptAlertFeedFieldStatisticsFieldStatistics(m)}
		}
		return out
	}
	return &oas.AlertFeedStatistics{
		PlatformEventLabelsFieldStatistics:   oas.NewOptAlertFeedStatisticsPlatformEventLabelsFieldStatistics(stats(counts[kindLabel])),
		PlatformEventMetadataFieldStatistics: oas.NewOptAlertFeedStatisticsPlatformEventMetadataFieldStatistics(stats(counts[kindMeta])),
	}, nil
}

// BatchGetAlertFeedEvents answers the events ids names (one page of them, in the order asked
// for) and the ids that name none of the team's.
//
// Errors: Invalid for a malformed filter, order or page.
func (h *EventHandler) BatchGetAlertFeedEvents(ctx context.Context, params oas.BatchGetAlertFeedEventsParams) (*oas.AlertFeedEventBatch, error) {
	values := queryobject.Values(ctx)
	teamID := auth.PrincipalFrom(ctx).TeamID
	var f struct {
		Timestamp *timeRangeDoc `json:"timestamp"`
	}
	if _, err := decodeInto(values, "filter", batchFilterSchema, &f); err != nil {
		return nil, err
	}
	s := selection{teamID: teamID, ids: unique(params.Ids)}
	if f.Timestamp != nil {
		r, err := f.Timestamp.read("filter.timestamp")
		if err != nil {
			return nil, err
		}
		s.during = &r
	}
	asc, err := readFeedOrder(values)
	if err != nil {
		return nil, err
	}
	p, err := readPage(values, asc)
	if err != nil {
		return nil, err
	}
	out := &oas.AlertFeedEventBatch{Events: oas.NewOptAlertFeedEventBatchEvents(oas.AlertFeedEventBatchEvents{}), NotFoundIds: []string{}}
	if len(s.ids) == 0 {
		out.Pagination = oas.NewOptAlertFeedPage(oas.AlertFeedPage{TotalSize: oas.NewOptInt64(0)})
		return out, nil
	}
	q := h.db.Read()
	found, err := existingIDs(ctx, q, teamID, s.ids)
	if err != nil {
		return nil, err
	}
	for _, id := range s.ids {
		if !found[id] {
			out.NotFoundIds = append(out.NotFoundIds, id)
		}
	}
	events, next, total, err := listEvents(ctx, q, s, asc, p)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		out.Events.Value[e.ID] = oas.AlertFeedEventOneOrMore{SingleEvent: oas.NewOptAlertFeedEvent(feedEvent(teamID, e))}
	}
	out.Pagination = oas.NewOptAlertFeedPage(pageOf(next, total))
	return out, nil
}

// GetAlertFeedEvent answers the team's event id.
//
// Errors: NotFound when the team has no such event; Invalid for a malformed order or page.
func (h *EventHandler) GetAlertFeedEvent(ctx context.Context, params oas.GetAlertFeedEventParams) (*oas.AlertFeedEventOne, error) {
	values := queryobject.Values(ctx)
	asc, err := readFeedOrder(values)
	if err != nil {
		return nil, err
	}
	if _, err := readPage(values, asc); err != nil {
		return nil, err
	}
	teamID := auth.PrincipalFrom(ctx).TeamID
	e, err := h.get(ctx, teamID, params.ID)
	if err != nil {
		return nil, err
	}
	return &oas.AlertFeedEventOne{
		Event:      oas.NewOptAlertFeedEventOneOrMore(oas.AlertFeedEventOneOrMore{SingleEvent: oas.NewOptAlertFeedEvent(feedEvent(teamID, e))}),
		Pagination: oas.NewOptAlertFeedPage(oas.AlertFeedPage{TotalSize: oas.NewOptInt64(1)}),
	}, nil
}

// GetAlertEvent answers the team's event id as one permutation.
//
// Errors: NotFound when the team has no such event; Invalid for a malformed order or page.
func (h *EventHandler) GetAlertEvent(ctx context.Context, params oas.GetAlertEventParams) (*oas.AlertEventDetail, error) {
	values := queryobject.Values(ctx)
	asc, err := readAlertEventOrder(values)
	if err != nil {
		return nil, err
	}
	if _, err := readPage(values, asc); err != nil {
		return nil, err
	}
	e, err := h.get(ctx, auth.PrincipalFrom(ctx).TeamID, params.ID)
	if err != nil {
		return nil, err
	}
	status := oas.AlertEventStatusALERTSTATUSTRIGGERED
	if e.Status == statusResolved {
		status = oas.AlertEventStatusALERTSTATUSRESOLVEDORUNSPECIFIED
	}
	occ := oas.AlertEventOccurrence{
		AlertId:           oas.NewOptString(e.DefinitionID),
		Status:            oas.NewOptAlertEventStatus(status),
		Timestamp:         oas.NewOptDateTime(time.UnixMicro(e.At).UTC()),
		GroupLabels:       oas.NewOptAlertEventOccurrenceGroupLabels(e.GroupLabels),
		PermutationLabels: oas.NewOptAlertEventOccurrencePermutationLabels(e.Labels),
		PayloadType:       oas.NewOptString(payloadType),
		Payload:           oas.NewOptAlertEventOccurrencePayload(rawPayload(e.Payload)),
	}
	if e.Fingerprint != "" {
		occ.PermutationId = oas.NewOptString(e.Fingerprint)
	}
	if e.IncidentID != "" {
		occ.IncidentCorrelationKey = oas.NewOptString(e.IncidentID)
	}
	var rule string
	if raw, ok := e.Payload[suppressedByKey]; ok && json.Unmarshal(raw, &rule) == nil && rule != "" {
		occ.ActivityAnalysis = oas.NewOptAlertEventActivityAnalysis(oas.AlertEventActivityAnalysis{
			Rules:  []string{rule},
			Status: oas.NewOptAlertEventActivityAnalysisStatus(oas.AlertEventActivityAnalysisStatusACTIVITYANALYSISSTATUSMUTE),
		})
	}
	return &oas.AlertEventDetail{ID: oas.NewOptString(e.ID), SinglePermutation: oas.NewOptAlertEventOccurrence(occ)}, nil
}

// GetAlertEventStats answers, per definition of ids (every definition with events when empty),
// its event counts and permutation samples.
//
// Errors: Invalid for a malformed order.
func (h *EventHandler) GetAlertEventStats(ctx context.Context, params oas.GetAlertEventStatsParams) (*oas.AlertEventStatsList, error) {
	asc, err := readAlertEventOrder(queryobject.Values(ctx))
	if err != nil {
		return nil, err
	}
	ids := unique(params.Ids)
	stats, err := statsByDefinition(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID, ids, asc)
	if err != nil {
		return nil, err
	}
	out := oas.AlertEventStatsListEventsStats{}
	for _, id := range ids {
		if stats[id] == nil {
			stats[id] = &definitionStats{}
		}
	}
	samples := func(list []map[string]string) []oas.AlertEventPermutation {
		out := make([]oas.AlertEventPermutation, 0, len(list))
		for _, m := range list {
			out = append(out, oas.AlertEventPermutation{PermutationLabels: oas.NewOptAlertEventPermutationPermutationLabels(m)})
		}
		return out
	}
	for id, st := range stats {
		out[id] = oas.AlertEventStatistics{
			Count:                        oas.NewOptInt64(st.count),
			TriggeredCount:               oas.NewOptInt64(st.firing),
			ResolvedCount:                oas.NewOptInt64(st.resolved),
			TriggeredPermutationsSamples: samples(st.firingSamples),
			ResolvedPermutationsSamples:  samples(st.resolvedSamples),
		}
	}
	return &oas.AlertEventStatsList{EventsStats: oas.NewOptAlertEventStatsListEventsStats(out)}, nil
}

func (h *EventHandler) get(ctx context.Context, teamID int64, id string) (event, error) {
	e, err := getEvent(ctx, h.db.Read(), teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return e, apierror.NotFoundf("no alert event %q", id)
	}
	return e, err
}

// feedEvent is e as the event feed answers it.
func feedEvent(teamID int64, e event) oas.AlertFeedEvent {
	return oas.AlertFeedEvent{
		CompanyId:                int32(teamID),
		PlatformEventKey:         e.ID,
		PlatformEventType:        eventType,
		PlatformEventDedupKey:    oas.NewOptString(e.IncidentID + ":" + e.Status),
		PlatformEventLabels:      e.Labels,
		PlatformEventMetadata:    oas.NewOptAlertFeedEventPlatformEventMetadata(e.metadata()),
		PlatformEventTimestamp:   time.UnixMicro(e.At).UTC(),
		PlatformEventPayloadType: payloadType,
		PlatformEventPayload:     oas.AlertFeedEventPlatformEventPayload(rawPayload(e.Payload)),
	}
}

func rawPayload(p map[string]json.RawMessage) map[string]jx.Raw {
	out := make(map[string]jx.Raw, len(p))
	for k, v := range p {
		out[k] = jx.Raw(v)
	}
	return out
}

func pageOf(next *cursor, total int64) oas.AlertFeedPage {
	p := oas.AlertFeedPage{TotalSize: oas.NewOptInt64(total)}
	if next != nil {
		p.NextPageToken = oas.NewOptString(next.token())
	}
	return p
}

// unique is ids without repeats, in first-seen order.
func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
