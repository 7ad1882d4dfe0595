package cases

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// caseRow is one row of the cases table.
type caseRow struct {
	TeamID           int64
	ID               string
	Number           int64
	Title            string
	Status           oas.CaseStatus
	SystemPriority   oas.CasePriority
	PriorityOverride oas.CasePriority // "" when none
	Category         oas.CaseCategory
	Assignee         string
	GroupKey         string
	Receiver         string
	Labels           string
	Groupings        string
	Alerts           string
	Indicators       string
	Resolution       string // JSON of oas.ResolutionDetails, "" when none
	CreatedAt        int64
	UpdatedAt        int64
	LastUpdateAt     int64
	AcknowledgedAt   sql.NullInt64
	ResolvedAt       sql.NullInt64
	ClosedAt         sql.NullInt64
	SyncRequestedAt  sql.NullInt64
}

const caseColumns = `team_id, id, number, title, status, system_priority, priority_override, category,
	assignee, group_key, receiver, labels, groupings, alerts, indicators, resolution, created_at,
	updated_at, last_update_at, acknowledged_at, resolved_at, closed_at, sync_requested_at`

type scanner interface{ Scan(dest ...any) error }

func scanCase(s scanner) (caseRow, error) {
	var c caseRow
	var status, system, override, category string
	err := s.Scan(&c.TeamID, &c.ID, &c.Number, &c.Title, &status, &system, &override, &category,
		&c.Assignee, &c.GroupKey, &c.Receiver, &c.Labels, &c.Groupings, &c.Alerts, &c.Indicators,
		&c.Resolution, &c.CreatedAt, &c.UpdatedAt, &c.LastUpdateAt, &c.AcknowledgedAt, &c.ResolvedAt,
		&c.ClosedAt, &c.SyncRequestedAt)
	c.Status, c.SystemPriority = oas.CaseStatus(status), oas.CasePriority(system)
	c.PriorityOverride, c.Category = oas.CasePriority(override), oas.CaseCategory(category)
	return c, err
}

// Priority is the priority the case shows: the override when one is set, else the system one.
func (c *caseRow) Priority() oas.CasePriority {
	if c.PriorityOverride != "" {
		return c.PriorityOverride
	}
	return c.SystemPriority
}

func (c *caseRow) ReadableID() string { return readableID(c.Number) }

func readableID(n int64) string { return "CASE-" + strconv.FormatInt(n, 10) }

// isLowerUUID reports whether s is a UUID in lower-case hex (8-4-4-4-12 digits). Every case
// operation asks it, inside the write transaction for the writes: a regular expression cost 4%
// of an E1 comment's CPU.
func isLowerUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// caseKey turns a case_id path value into the column and value that find it. ok is false for a
// value that can name no case (another prefix, a number that is not canonical).
func caseKey(ident string) (column string, value any, ok bool) {
	if isLowerUUID(ident) {
		return "id", ident, true
	}
	digits, found := strings.CutPrefix(ident, "CASE-")
	if !found {
		return "", nil, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != digits {
		return "", nil, false
	}
	return "number", n, true
}

func caseNotFound(ident string) error {
	return apierror.NotFoundf("case_id: no case %q", ident)
}

// findCase reads the team's case named by ident (id or readable id). With lock, on PostgreSQL,
// the row stays locked until the transaction ends.
//
// Errors: NotFound when the team has no such case.
func findCase(ctx context.Context, q db.Querier, engine db.Engine, teamID int64, ident string, lock bool) (caseRow, error) {
	column, value, ok := caseKey(ident)
	if !ok {
		return caseRow{}, caseNotFound(ident)
	}
	query := `SELECT ` + caseColumns + ` FROM cases WHERE team_id = $1 AND ` + column + ` = $2`
	if lock && engine == db.Postgres {
		query += ` FOR UPDATE`
	}
	c, err := scanCase(q.QueryRowContext(ctx, query, teamID, value))
	if db.IsNotFound(err) {
		return caseRow{}, caseNotFound(ident)
	}
	if err != nil {
		return caseRow{}, fmt.Errorf("read case: %w", err)
	}
	return c, nil
}

// lockCase is findCase inside a transaction, locking the row.
func lockCase(ctx context.Context, tx *db.Tx, teamID int64, ident string) (caseRow, error) {
	return findCase(ctx, tx, tx.Engine, teamID, ident, true)
}

// saveCase writes every column that a change can touch.
func saveCase(ctx context.Context, tx *db.Tx, c *caseRow) error {
	_, err := tx.ExecContext(ctx, `UPDATE cases SET title = $3, title_folded = $4, status = $5,
		system_priority = $6, priority_override = $7, priority = $8, assignee = $9, alerts = $10,
		indicators = $11, resolution = $12, updated_at = $13, last_update_at = $14,
		acknowledged_at = $15, resolved_at = $16, closed_at = $17, sync_requested_at = $18
		WHERE team_id = $1 AND id = $2`,
		c.TeamID, c.ID, c.Title, strings.ToLower(c.Title), string(c.Status), string(c.SystemPriority),
		string(c.PriorityOverride), string(c.Priority()), c.Assignee, c.Alerts, c.Indicators,
		c.Resolution, c.UpdatedAt, c.LastUpdateAt, c.AcknowledgedAt, c.ResolvedAt, c.ClosedAt,
		c.SyncRequestedAt)
	if err != nil {
		return fmt.Errorf("save case: %w", err)
	}
	return nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(t time.Time) sql.NullInt64 { return sql.NullInt64{Int64: t.UnixMicro(), Valid: true} }

// storedResolution reads the resolution column as every version of mgmtapi wrote it: resolvedBy
// was once the full event actor ({"apiKey": {"id", "name"}}, {"alertManager": {...}}) and is now
// the resolver kind alone ({"apiKey": {}}, {"prometheusAlertManager": {}}).
type storedResolution struct {
	Reason      *string                    `json:"reason"`
	ResolveTime *time.Time                 `json:"resolveTime"`
	ResolvedBy  map[string]json.RawMessage `json:"resolvedBy"`
}

// resolution decodes the stored resolution details; ok is false when the case has none.
func (c *caseRow) resolution() (oas.ResolutionDetails, bool) {
	var r oas.ResolutionDetails
	if c.Resolution == "" {
		return r, false
	}
	var stored storedResolution
	if err := json.Unmarshal([]byte(c.Resolution), &stored); err != nil {
		return oas.ResolutionDetails{}, false
	}
	if stored.Reason != nil && *stored.Reason != "" {
		r.Reason = oas.NewOptString(*stored.Reason)
	}
	if stored.ResolveTime != nil {
		r.ResolveTime = oas.NewOptDateTime(stored.ResolveTime.UTC())
	}
	if stored.ResolvedBy != nil {
		var kind oas.CaseResolver
		for key := range stored.ResolvedBy {
			setResolverKind(&kind, key)
		}
		r.ResolvedBy = oas.NewOptCaseResolver(kind)
	}
	return r, true
}

// setResolverKind marks the resolver kind named by an event actor's key (or a resolver's own
// key); an unknown key marks nothing.
func setResolverKind(r *oas.CaseResolver, key string) {
	empty := &oas.EmptyObject{}
	switch key {
	case "system":
		r.System = empty
	case "user", "platformUser":
		r.PlatformUser = empty
	case "serviceNow":
		r.ServiceNow = empty
	case "apiKey":
		r.ApiKey = empty
	case "slack":
		r.Slack = empty
	case "alertManager", "prometheusAlertManager":
		r.PrometheusAlertManager = empty
	case "pagerDuty":
		r.PagerDuty = empty
	case "microsoftTeams":
		r.MicrosoftTeams = empty
	}
}

// resolverOf is the resolver kind of an event actor, as resolutionDetails.resolvedBy shows it.
func resolverOf(actor oas.EventActor) oas.CaseResolver {
	var r oas.CaseResolver
	switch {
	case actor.ApiKey.Set:
		setResolverKind(&r, "apiKey")
	case actor.PrometheusAlertManager.Set:
		setResolverKind(&r, "prometheusAlertManager")
	case actor.User.Set:
		setResolverKind(&r, "user")
	case actor.Slack.Set:
		setResolverKind(&r, "slack")
	case actor.MicrosoftTeams.Set:
		setResolverKind(&r, "microsoftTeams")
	case actor.PagerDuty.Set:
		setResolverKind(&r, "pagerDuty")
	case actor.ServiceNow.Set:
		setResolverKind(&r, "serviceNow")
	default:
		setResolverKind(&r, "system")
	}
	return r
}

func (c *caseRow) setResolution(r oas.ResolutionDetails) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	c.Resolution = string(b)
	return nil
}

// buildCase turns a row into the API's Case; now measures the duration of an open case.
func buildCase(ctx context.Context, q db.Querier, c caseRow, now time.Time) (oas.Case, error) {
	breaches, err := loadBreaches(ctx, q, c.TeamID, []string{c.ID})
	if err != nil {
		return oas.Case{}, err
	}
	return caseFromRow(c, breaches[c.ID], now)
}

func caseFromRow(c caseRow, breaches []oas.BreachedKPI, now time.Time) (oas.Case, error) {
	out := oas.Case{
		ID:               c.ID,
		ReadableId:       c.ReadableID(),
		Title:            c.Title,
		Status:           c.Status,
		Priority:         c.Priority(),
		PriorityDetails:  priorityDetails(c.SystemPriority, c.PriorityOverride),
		Category:         c.Category,
		CreateTime:       fromMicros(c.CreatedAt),
		UpdateTime:       fromMicros(c.UpdatedAt),
		Labels:           []oas.KeyValue{},
		Groupings:        []oas.KeyValue{},
		ImpactedEntities: []oas.EmptyObject{},
		CaseIndicators:   oas.CaseIndicators{AlertIndicators: []oas.AlertIndicator{}},
		KpiBreaches:      oas.KPIBreaches{BreachedKpis: breaches},
	}
	if out.KpiBreaches.BreachedKpis == nil {
		out.KpiBreaches.BreachedKpis = []oas.BreachedKPI{}
	}
	if c.AcknowledgedAt.Valid && c.Status != oas.CaseStatusCASESTATUSACTIVE {
		out.AcknowledgeTime = oas.NewOptDateTime(fromMicros(c.AcknowledgedAt.Int64))
	}
	end := micros(now)
	switch {
	case c.ResolvedAt.Valid:
		end = c.ResolvedAt.Int64
	case c.ClosedAt.Valid:
		end = c.ClosedAt.Int64
	}
	out.Duration = oas.NewOptString(strconv.FormatInt(max(0, end-c.CreatedAt)/1e6, 10))
	if c.Assignee != "" {
		out.Assignee = oas.NewOptCaseUser(oas.CaseUser{UserId: oas.LowerUUID(c.Assignee)})
	}
	if err := json.Unmarshal([]byte(c.Labels), &out.Labels); err != nil {
		return oas.Case{}, fmt.Errorf("case %s labels: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(c.Groupings), &out.Groupings); err != nil {
		return oas.Case{}, fmt.Errorf("case %s groupings: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(c.Indicators), &out.CaseIndicators.AlertIndicators); err != nil {
		return oas.Case{}, fmt.Errorf("case %s indicators: %w", c.ID, err)
	}
	if r, ok := c.resolution(); ok {
		out.ResolutionDetails = oas.NewOptResolutionDetails(r)
	}
	return out, nil
}

func priorityDetails(system, override oas.CasePriority) oas.PriorityDetails {
	d := oas.PriorityDetails{System: oas.NewOptCasePriority(system)}
	if override != "" {
		d.Override = oas.NewOptCasePriority(override)
	}
	return d
}

// loadBreaches returns the KPI breaches of the given cases of a team, oldest first, by case id.
func loadBreaches(ctx context.Context, q db.Querier, teamID int64, caseIDs []string) (map[string][]oas.BreachedKPI, error) {
	out := map[string][]oas.BreachedKPI{}
	if len(caseIDs) == 0 {
		return out, nil
	}
	args := []any{teamID}
	marks := make([]string, len(caseIDs))
	for i, id := range caseIDs {
		args = append(args, id)
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	rows, err := q.QueryContext(ctx, `SELECT case_id, id, created_at, kpi_type, case_priority,
		breached_at, status FROM case_kpi_breaches WHERE team_id = $1 AND case_id IN (`+
		strings.Join(marks, ", ")+`) ORDER BY breached_at, kpi_type, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read breaches: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var caseID, kpiType, priority, status string
		var b oas.BreachedKPI
		var created, breached int64
		if err := rows.Scan(&caseID, &b.ID, &created, &kpiType, &priority, &breached, &status); err != nil {
			return nil, fmt.Errorf("read breaches: %w", err)
		}
		b.CreatedAt, b.BreachedAt = fromMicros(created), fromMicros(breached)
		b.KpiType, b.CasePriority = oas.KPIType(kpiType), kpiPriority(oas.CasePriority(priority))
		b.BreachStatus = oas.BreachedKPIBreachStatus(status)
		out[caseID] = append(out[caseID], b)
	}
	return out, rows.Err()
}

// ------------------------------------------------------------------------------ events

// eventKind names the one variant that data holds.
func eventKind(d *oas.CaseEventData) string {
	switch {
	case d.Comment.Set:
		return "comment"
	case d.Created.Set:
		return "created"
	case d.Assigned.Set:
		return "assigned"
	case d.Unassigned.Set:
		return "unassigned"
	case d.StatusChanged.Set:
		return "statusChanged"
	case d.PriorityDetailsChanged.Set:
		return "priorityDetailsChanged"
	case d.TitleChangedEvent.Set:
		return "titleChangedEvent"
	case d.ResolutionReasonChangedEvent.Set:
		return "resolutionReasonChangedEvent"
	case d.KpiBreached.Set:
		return "kpiBreached"
	case d.ChangeAssigneeFailed.Set:
		return "changeAssigneeFailed"
	case d.NotificationSent.Set:
		return "notificationSent"
	case d.NotificationFailed.Set:
		return "notificationFailed"
	}
	return "unknown"
}

// notifiedKind is what the notification center is told a case event is: "opened" for created,
// "commented" for a comment, "changed" for the other changes; "" for the events that record
// notifications themselves (routing them would notify about notifying) and for KPI breaches and
// failed assignee syncs, which record a state rather than change one.
func notifiedKind(eventKind string) string {
	switch eventKind {
	case "created":
		return "opened"
	case "comment":
		return "commented"
	case "notificationSent", "notificationFailed", "kpiBreached", "changeAssigneeFailed", "unknown":
		return ""
	}
	return "changed"
}

// appendEvent adds an event at the end of the case's history, in the caller's transaction. The
// caller holds the case row's lock, which taking the sequence number keeps until commit.
func appendEvent(ctx context.Context, tx *db.Tx, teamID int64, caseID string, actor oas.EventActor, data oas.CaseEventData, eventTime time.Time) (oas.CaseEvent, error) {
	d, err := draftEvent(actor, &data)
	if err != nil {
		return oas.CaseEvent{}, err
	}
	var seq int64
	err = tx.QueryRowContext(ctx, `UPDATE cases SET last_event_seq = last_event_seq + 1
		WHERE team_id = $1 AND id = $2 RETURNING last_event_seq`, teamID, caseID).Scan(&seq)
	if err != nil {
		return oas.CaseEvent{}, fmt.Errorf("number case event: %w", db.Translate(err))
	}
	return d.insert(ctx, tx, teamID, caseID, seq, eventTime)
}

// eventDraft is an event encoded for storage, ready to be appended to a case's history.
type eventDraft struct {
	actor oas.EventActor
	// data is the event's data, a large value: a pointer, so that the draft copies it once, into
	// the event insert returns.
	data      *oas.CaseEventData
	kind      string
	actorJSON string
	dataJSON  string
	// atEnd inserts the event last in the transaction (db.Tx.ExecAtEnd): on PostgreSQL in the
	// round trip that ends it. Only for a transaction that reads no event after appending it.
	atEnd bool
	// left, when set, is the case as the transaction leaves it, without breaches: the event's
	// snapshot is made from it instead of reading the case again. Only for a transaction that
	// changes nothing of the case after the row was read.
	left *caseRow
}

// draftEvent encodes an event, outside any transaction. The draft keeps data, which its caller
// does not change after.
func draftEvent(actor oas.EventActor, data *oas.CaseEventData) (eventDraft, error) {
	actorJSON, err := actor.MarshalJSON()
	if err != nil {
		return eventDraft{}, err
	}
	dataJSON, err := data.MarshalJSON()
	if err != nil {
		return eventDraft{}, err
	}
	return eventDraft{actor: actor, data: data, kind: eventKind(data),
		actorJSON: string(actorJSON), dataJSON: string(dataJSON)}, nil
}

// insert stores an encoded event as number seq of the case's history. seq comes from the case's
// last_event_seq, which every append increments while it holds the case row: appending reads no
// event, whatever the length of the history.
func (d eventDraft) insert(ctx context.Context, tx *db.Tx, teamID int64, caseID string, seq int64, eventTime time.Time) (oas.CaseEvent, error) {
	id := tx.NewID()
	const insert = `INSERT INTO case_events
		(team_id, id, case_id, seq, kind, actor, data, event_time, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`
	args := []any{teamID, id, caseID, seq, d.kind, d.actorJSON, d.dataJSON, micros(eventTime), micros(tx.Now)}
	if d.atEnd {
		tx.ExecAtEnd("append case event", insert, args...)
	} else if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
		return oas.CaseEvent{}, fmt.Errorf("append case event: %w", err)
	}
	if kind := notifiedKind(d.kind); kind != "" {
		left := d.left // the snapshot keeps this alone of d, a large value
		tx.Emit(ctx, db.Event{TeamID: teamID, EntityType: "CASES", EntityID: caseID, Kind: kind, Cause: d.kind,
			Snapshot: func(ctx context.Context, tx *db.Tx) ([]byte, string, error) {
				var c oas.Case
				var err error
				if left != nil {
					c, err = caseFromRow(*left, nil, tx.Now)
				} else {
					c, err = Load(ctx, tx, teamID, caseID)
				}
				if err != nil {
					return nil, "", err
				}
				doc, err := c.MarshalJSON()
				return doc, caseID, err
			}})
	}
	return oas.CaseEvent{
		EventId: id, Actor: d.actor, EventData: *d.data, EventTime: eventTime.UTC(),
		CreateTime: tx.Now, UpdateTime: oas.NewOptDateTime(tx.Now),
	}, nil
}

const eventColumns = `id, case_id, kind, actor, data, event_time, created_at, updated_at`

type eventRow struct {
	ID, CaseID, Kind string
	Event            oas.CaseEvent
}

func scanEvent(s scanner) (eventRow, error) {
	var r eventRow
	var actor, data string
	var eventTime, created int64
	var updated sql.NullInt64
	if err := s.Scan(&r.ID, &r.CaseID, &r.Kind, &actor, &data, &eventTime, &created, &updated); err != nil {
		return r, err
	}
	r.Event = oas.CaseEvent{EventId: r.ID, EventTime: fromMicros(eventTime), CreateTime: fromMicros(created)}
	if updated.Valid {
		r.Event.UpdateTime = oas.NewOptDateTime(fromMicros(updated.Int64))
	}
	if err := r.Event.Actor.UnmarshalJSON([]byte(actor)); err != nil {
		return r, fmt.Errorf("event %s actor: %w", r.ID, err)
	}
	if err := r.Event.EventData.UnmarshalJSON([]byte(data)); err != nil {
		return r, fmt.Errorf("event %s data: %w", r.ID, err)
	}
	return r, nil
}

func eventNotFound(id string) error {
	return apierror.NotFoundf("event_id: no case event %q", id)
}

// findEvent reads one event of the team by id (any letter case).
//
// Errors: NotFound when the team has no such event.
func findEvent(ctx context.Context, q db.Querier, teamID int64, id string) (eventRow, error) {
	r, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM case_events
		WHERE team_id = $1 AND id = $2`, teamID, strings.ToLower(id)))
	if db.IsNotFound(err) {
		return r, eventNotFound(id)
	}
	if err != nil {
		return r, fmt.Errorf("read case event: %w", err)
	}
	return r, nil
}

func listEvents(ctx context.Context, q db.Querier, teamID int64, caseID string) ([]oas.CaseEvent, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM case_events
		WHERE team_id = $1 AND case_id = $2 ORDER BY seq`, teamID, caseID)
	if err != nil {
		return nil, fmt.Errorf("list case events: %w", err)
	}
	defer rows.Close()
	out := []oas.CaseEvent{}
	for rows.Next() {
		r, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r.Event)
	}
	return out, rows.Err()
}

// ------------------------------------------------------------------------------ actors

// actorText is an actor field as the API shows it: at most 256 characters, absent when empty.
func actorText(s string) oas.OptActorText {
	if s == "" {
		return oas.OptActorText{}
	}
	return oas.NewOptActorText(oas.ActorText(cut(s, 256)))
}

// apiKeyActor is the actor of a change made with an API key: {apiKey: {id, name}}, a field the
// key lacks omitted.
func apiKeyActor(keyID, keyName string) oas.EventActor {
	return oas.EventActor{ApiKey: oas.NewOptApiKeyActor(oas.ApiKeyActor{
		ID: actorText(keyID), Name: actorText(keyName),
	})}
}

// userActor is the actor of a member's change made with their personal key: {user: {id}}.
func userActor(userID string) oas.EventActor {
	return oas.EventActor{User: oas.NewOptUserActor(oas.UserActor{ID: oas.NewOptAnyCaseUUID(oas.AnyCaseUUID(userID))})}
}

// alertManagerActor is the actor of alert ingestion: {prometheusAlertManager: {receiverName}},
// the name omitted when the receiver has none.
func alertManagerActor(receiver string) oas.EventActor {
	return oas.EventActor{PrometheusAlertManager: oas.NewOptPrometheusAlertManagerActor(
		oas.PrometheusAlertManagerActor{ReceiverName: actorText(receiver)})}
}

func systemActor() oas.EventActor { return oas.EventActor{System: &oas.EmptyObject{}} }

// Load returns the team's case id as the API answers it, read in tx (so it sees the transaction's
// own changes), for the notification center's entity.
//
// Errors: db.ErrNotFound when the team has no such case; a database error.
//
// One query reads the case and its breaches (one row per breach, or one without): an event's
// snapshot is taken inside the transaction, where on PostgreSQL every round trip lengthens the
// batch that holds the case's row lock.
func Load(ctx context.Context, tx *db.Tx, teamID int64, id string) (oas.Case, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+joinedCaseColumns+`, b.id, b.created_at, b.kpi_type,
		b.case_priority, b.breached_at, b.status
		FROM cases c LEFT JOIN case_kpi_breaches b ON b.team_id = c.team_id AND b.case_id = c.id
		WHERE c.team_id = $1 AND c.id = $2 ORDER BY b.breached_at, b.kpi_type, b.id`, teamID, id)
	if err != nil {
		return oas.Case{}, fmt.Errorf("read case: %w", err)
	}
	defer rows.Close()
	var c caseRow
	var breaches []oas.BreachedKPI
	found := false
	for rows.Next() {
		var breachID, kpiType, priority, status sql.NullString
		var created, breached sql.NullInt64
		row, err := scanCase(scanWith{rows, []any{&breachID, &created, &kpiType, &priority, &breached, &status}})
		if err != nil {
			return oas.Case{}, fmt.Errorf("read case: %w", err)
		}
		c, found = row, true
		if breachID.Valid {
			breaches = append(breaches, oas.BreachedKPI{ID: breachID.String,
				CreatedAt: fromMicros(created.Int64), BreachedAt: fromMicros(breached.Int64),
				KpiType: oas.KPIType(kpiType.String), CasePriority: kpiPriority(oas.CasePriority(priority.String)),
				BreachStatus: oas.BreachedKPIBreachStatus(status.String)})
		}
	}
	if err := rows.Err(); err != nil {
		return oas.Case{}, fmt.Errorf("read case: %w", err)
	}
	if !found {
		return oas.Case{}, db.Translate(sql.ErrNoRows)
	}
	return caseFromRow(c, breaches, tx.Now)
}

// joinedCaseColumns is caseColumns qualified by the alias c.
var joinedCaseColumns = func() string {
	cols := strings.Split(caseColumns, ",")
	for i, col := range cols {
		cols[i] = "c." + strings.TrimSpace(col)
	}
	return strings.Join(cols, ", ")
}()

// scanWith scans a row whose columns after the case's go into extra: Load's breach, what
// touchWithEvent's UPDATE returns besides the case.
type scanWith struct {
	row   scanner
	extra []any
}

func (w scanWith) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra...)...) }
