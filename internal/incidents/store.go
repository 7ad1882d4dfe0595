package incidents

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// row is an incident as stored, without its events.
type row struct {
	id, name, description     string
	severity, state, status   string
	isMuted                   bool
	assignedTo, assignedBy    string
	contextual, display, meta string
	createdAt                 int64
	closedAt                  sql.NullInt64
	lastStateUpdateTime       int64
	lastStateUpdateKey        string
	sourceResolvedAt          sql.NullInt64
	application, subsystem    string
}

const rowColumns = `id, name, description, severity, state, status, is_muted, assigned_to, assigned_by,
	contextual_labels, display_labels, meta_labels, created_at, closed_at, last_state_update_time,
	last_state_update_key, source_resolved_at, application_name, subsystem_name`

func scanRow(s interface{ Scan(...any) error }) (row, error) {
	var r row
	err := s.Scan(&r.id, &r.name, &r.description, &r.severity, &r.state, &r.status, &r.isMuted,
		&r.assignedTo, &r.assignedBy, &r.contextual, &r.display, &r.meta, &r.createdAt, &r.closedAt,
		&r.lastStateUpdateTime, &r.lastStateUpdateKey, &r.sourceResolvedAt, &r.application, &r.subsystem)
	return r, err
}

func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// durationText is whole seconds and "s", from created to closed (or now), never negative.
func durationText(createdAt int64, closedAt sql.NullInt64, now time.Time) string {
	end := micros(now)
	if closedAt.Valid {
		end = closedAt.Int64
	}
	d := (end - createdAt) / 1e6
	if d < 0 {
		d = 0
	}
	return strconv.FormatInt(d, 10) + "s"
}

// incident turns a stored row and its events into the wire form.
func (r row) incident(events []oas.IncidentEvent, now time.Time) (oas.Incident, error) {
	inc := oas.Incident{
		ID:                  r.id,
		Name:                oas.NewOptString(r.name),
		State:               oas.IncidentState(r.state),
		Status:              oas.IncidentStatus(r.status),
		Severity:            oas.IncidentSeverity(r.severity),
		IsMuted:             oas.NewOptBool(r.isMuted),
		Assignments:         []oas.IncidentAssignment{},
		ContextualLabels:    oas.IncidentContextualLabels{},
		DisplayLabels:       oas.IncidentDisplayLabels{},
		MetaLabels:          []oas.MetaLabel{},
		Events:              events,
		CreatedAt:           fromMicros(r.createdAt),
		LastStateUpdateTime: fromMicros(r.lastStateUpdateTime),
		LastStateUpdateKey:  r.lastStateUpdateKey,
		Duration:            durationText(r.createdAt, r.closedAt, now),
	}
	if r.description != "" {
		// An alert without a description (or summary) annotation has none: it is not
		// answered, rather than as "" (which the public document does not allow).
		inc.Description = oas.NewOptString(r.description)
	}
	if inc.Events == nil {
		inc.Events = []oas.IncidentEvent{}
	}
	if r.closedAt.Valid {
		inc.ClosedAt = oas.NewOptDateTime(fromMicros(r.closedAt.Int64))
	}
	if r.assignedTo != "" {
		inc.Assignments = append(inc.Assignments, oas.IncidentAssignment{
			AssignedTo: oas.IncidentUser{UserId: r.assignedTo},
			AssignedBy: oas.IncidentUser{UserId: r.assignedBy},
		})
	}
	if err := json.Unmarshal([]byte(r.contextual), (*map[string]string)(&inc.ContextualLabels)); err != nil {
		return inc, fmt.Errorf("incident %s contextual labels: %w", r.id, err)
	}
	if err := json.Unmarshal([]byte(r.display), (*map[string]string)(&inc.DisplayLabels)); err != nil {
		return inc, fmt.Errorf("incident %s display labels: %w", r.id, err)
	}
	labels, err := parseMetaLabels(r.meta)
	if err != nil {
		return inc, fmt.Errorf("incident %s meta labels: %w", r.id, err)
	}
	for _, l := range labels {
		inc.MetaLabels = append(inc.MetaLabels, oas.MetaLabel{Key: oas.NewOptString(l.Key), Value: oas.NewOptString(l.Value)})
	}
	return inc, nil
}

// metaLabel is the stored form of a meta label. The stored column is the canonical JSON array of
// these (sorted by key, then value), so that one label's encoding is a substring of the column.
type metaLabel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func canonicalMetaLabels(in []oas.MetaLabel) string {
	labels := make([]metaLabel, 0, len(in))
	for _, l := range in {
		labels = append(labels, metaLabel{Key: l.Key.Or(""), Value: l.Value.Or("")})
	}
	sort.Slice(labels, func(i, j int) bool {
		if labels[i].Key != labels[j].Key {
			return labels[i].Key < labels[j].Key
		}
		return labels[i].Value < labels[j].Value
	})
	b, _ := json.Marshal(labels) // strings only: cannot fail
	return string(b)
}

func parseMetaLabels(s string) ([]metaLabel, error) {
	var labels []metaLabel
	if err := json.Unmarshal([]byte(s), &labels); err != nil {
		return nil, err
	}
	return labels, nil
}

// jsonString encodes s as encoding/json does inside the stored meta-label column.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chunks splits ids so that one statement never carries too many parameters.
func chunks(ids []string, size int) [][]string {
	var out [][]string
	for len(ids) > size {
		out = append(out, ids[:size])
		ids = ids[size:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}

func placeholders(from, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("$" + strconv.Itoa(from+i))
	}
	return b.String()
}

// loadRows returns the team's incidents among ids, by id. With lock on PostgreSQL the rows are
// locked for the rest of the transaction.
func loadRows(ctx context.Context, q db.Querier, engine db.Engine, teamID int64, ids []string, lock bool) (map[string]row, error) {
	out := make(map[string]row, len(ids))
	for _, part := range chunks(ids, 500) {
		args := []any{teamID}
		for _, id := range part {
			args = append(args, id)
		}
		query := `SELECT ` + rowColumns + ` FROM incidents WHERE team_id = $1 AND id IN (` + placeholders(2, len(part)) + `)`
		if lock && engine == db.Postgres {
			query += ` FOR UPDATE`
		}
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, fmt.Errorf("load incidents: %w", err)
		}
		for rows.Next() {
			r, err := scanRow(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[r.id] = r
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadEvents returns the events of the team's incidents among ids, oldest first, by incident.
func loadEvents(ctx context.Context, q db.Querier, teamID int64, ids []string) (map[string][]oas.IncidentEvent, error) {
	out := make(map[string][]oas.IncidentEvent, len(ids))
	for _, part := range chunks(ids, 500) {
		args := []any{teamID}
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := q.QueryContext(ctx, `SELECT incident_id, document FROM incident_events
			WHERE team_id = $1 AND incident_id IN (`+placeholders(2, len(part))+`) ORDER BY incident_id, seq`, args...)
		if err != nil {
			return nil, fmt.Errorf("load incident events: %w", err)
		}
		for rows.Next() {
			var id, doc string
			if err := rows.Scan(&id, &doc); err != nil {
				rows.Close()
				return nil, err
			}
			var ev oas.IncidentEvent
			if err := ev.UnmarshalJSON([]byte(doc)); err != nil {
				rows.Close()
				return nil, fmt.Errorf("incident %s event: %w", id, err)
			}
			out[id] = append(out[id], ev)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadIncidents returns the team's incidents among ids in the order of ids (missing ones are
// left out), each with its events.
func loadIncidents(ctx context.Context, q db.Querier, engine db.Engine, teamID int64, ids []string, now time.Time) ([]oas.Incident, error) {
	rows, err := loadRows(ctx, q, engine, teamID, ids, false)
	if err != nil {
		return nil, err
	}
	events, err := loadEvents(ctx, q, teamID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]oas.Incident, 0, len(rows))
	for _, id := range ids {
		r, ok := rows[id]
		if !ok {
			continue
		}
		inc, err := r.incident(events[id], now)
		if err != nil {
			return nil, err
		}
		out = append(out, inc)
	}
	return out, nil
}

// appendEvent stores ev (its id is filled in) as the incident's next event.
func appendEvent(ctx context.Context, tx *db.Tx, teamID int64, incidentID string, ev oas.IncidentEvent) error {
	ev.ID = tx.NewID()
	doc, err := ev.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO incident_events (team_id, id, incident_id, seq, document, created_at)
		VALUES ($1, $2, $3, (SELECT COALESCE(MAX(seq), 0) + 1 FROM incident_events WHERE team_id = $1 AND incident_id = $3), $4, $5)`,
		teamID, ev.ID, incidentID, string(doc), micros(tx.Now))
	if err != nil {
		return fmt.Errorf("insert incident event: %w", err)
	}
	return nil
}

func operational(kind oas.IncidentEventIncidentEventType, systemName string) oas.IncidentEvent {
	return oas.IncidentEvent{
		IncidentEventType: kind,
		OriginatorType:    oas.IncidentEventOriginatorTypeORIGINATORTYPEOPERATIONAL,
		OperationalEvent:  oas.NewOptIncidentEventOperationalEvent(oas.IncidentEventOperationalEvent{SystemName: oas.NewOptString(systemName)}),
	}
}

func administrative(kind oas.IncidentEventIncidentEventType, userID string) oas.IncidentEvent {
	return oas.IncidentEvent{
		IncidentEventType:   kind,
		OriginatorType:      oas.IncidentEventOriginatorTypeORIGINATORTYPEADMINISTRATIVE,
		AdministrativeEvent: oas.NewOptIncidentEventAdministrativeEvent(oas.IncidentEventAdministrativeEvent{UserId: oas.NewOptString(userID)}),
	}
}

func upsertState(stateType oas.IncidentEventUpsertStateStateType, eventKey string) oas.OptIncidentEventUpsertState {
	us := oas.IncidentEventUpsertState{StateType: stateType, IsMuted: oas.NewOptBool(false)}
	if eventKey != "" {
		us.Payload.PlatformEventKey = oas.NewOptString(eventKey)
	}
	return oas.NewOptIncidentEventUpsertState(us)
}

// Load returns the team's incident id as the API answers it and the id of its case ("" when it
// has none), read in tx (so it sees the transaction's own changes), for the notification center's
// entity.
//
// Errors: db.ErrNotFound when the team has no such incident; a database error.
func Load(ctx context.Context, tx *db.Tx, teamID int64, id string) (inc oas.Incident, caseID string, err error) {
	found, err := loadIncidents(ctx, tx, tx.Engine, teamID, []string{id}, tx.Now)
	if err != nil {
		return oas.Incident{}, "", err
	}
	if len(found) == 0 {
		return oas.Incident{}, "", db.ErrNotFound
	}
	err = tx.QueryRowContext(ctx, `SELECT case_id FROM incidents WHERE team_id = $1 AND id = $2`, teamID, id).Scan(&caseID)
	if err != nil {
		return oas.Incident{}, "", fmt.Errorf("read incident's case: %w", err)
	}
	return found[0], caseID, nil
}
