package incidents

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// This file is what alert ingestion (internal/ingest) calls, inside its own transaction.

// Alert is one Alertmanager alert as an incident sees it.
type Alert struct {
	TeamID      int64
	CaseID      string
	Fingerprint string
	StartsAt    time.Time
	// Name is the alertname label; Description the description (or summary) annotation.
	Name, Description string
	Severity          oas.IncidentSeverity
	// Labels become contextualLabels (and indexed rows); Annotations become displayLabels.
	Labels, Annotations map[string]string
	// MetaLabels are the notification's group labels, sorted by key.
	MetaLabels                     []oas.MetaLabel
	ApplicationName, SubsystemName string
	// SystemName is the originator of the events written (the Alertmanager receiver).
	SystemName string
}

// maxNameLength is the longest incident name (the public bound); a longer alert name is cut.
const maxNameLength = 500

// Trigger records a firing alert. When no incident of the team has the alert's fingerprint and
// start time, it inserts one (state and status TRIGGERED) with its OPEN and UPSERT_STATE
// events and answers created=true. Otherwise it changes nothing and answers the existing id.
func Trigger(ctx context.Context, tx *db.Tx, a Alert) (id string, created bool, err error) {
	name := a.Name
	if name == "" {
		name = a.Fingerprint
	}
	if runes := []rune(name); len(runes) > maxNameLength {
		name = string(runes[:maxNameLength])
	}
	labels := a.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := a.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	contextual, err := json.Marshal(labels)
	if err != nil {
		return "", false, err
	}
	display, err := json.Marshal(annotations)
	if err != nil {
		return "", false, err
	}
	severity := a.Severity
	if severity == "" {
		severity = oas.IncidentSeverityINCIDENTSEVERITYUNSPECIFIED
	}
	now := micros(tx.Now)
	id = tx.NewID()
	err = tx.QueryRowContext(ctx, `INSERT INTO incidents (team_id, id, case_id, fingerprint, starts_at, name,
		description, severity, state, status, is_muted, application_name, subsystem_name, contextual_labels,
		display_labels, meta_labels, created_at, last_state_update_time, last_state_update_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, $18)
		ON CONFLICT (team_id, fingerprint, starts_at) DO NOTHING RETURNING id`,
		a.TeamID, id, a.CaseID, a.Fingerprint, micros(a.StartsAt), name, a.Description, string(severity),
		string(oas.IncidentStateINCIDENTSTATETRIGGERED), string(oas.IncidentStatusINCIDENTSTATUSTRIGGERED), false,
		a.ApplicationName, a.SubsystemName, string(contextual), string(display), canonicalMetaLabels(a.MetaLabels),
		now, "alertmanager:"+a.Fingerprint+":firing").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `SELECT id FROM incidents WHERE team_id = $1 AND fingerprint = $2 AND starts_at = $3`,
			a.TeamID, a.Fingerprint, micros(a.StartsAt)).Scan(&id)
		if err != nil {
			return "", false, fmt.Errorf("find incident: %w", err)
		}
		return id, false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("insert incident: %w", err)
	}
	for _, field := range []string{"created", "updated"} {
		if err := noteTimeTie(ctx, tx, a.TeamID, field, now); err != nil {
			return "", false, err
		}
	}
	key := countKey{severity: string(severity), state: string(oas.IncidentStateINCIDENTSTATETRIGGERED),
		status: string(oas.IncidentStatusINCIDENTSTATUSTRIGGERED), meta: canonicalMetaLabels(a.MetaLabels)}
	addCount(ctx, tx, a.TeamID, key, 1)
	err = addRollup(ctx, tx, a.TeamID, rollupEntry{key: rollupKey{name: name, application: a.ApplicationName, subsystem: a.SubsystemName,
		severity: key.severity, state: key.state, status: key.status, meta: key.meta}, contextual: string(contextual), created: now, update: now})
	if err != nil {
		return "", false, err
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_labels (team_id, key, value, incident_id, severity, state,
			status, assigned_to, meta_labels, created_at, closed_at, last_state_update_time, name, application_name,
			subsystem_name, is_muted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, $10, $11, $12, $13, $14)`,
			a.TeamID, k, labels[k], id, key.severity, key.state, key.status, key.assignedTo, key.meta, now,
			name, a.ApplicationName, a.SubsystemName, false); err != nil {
			return "", false, fmt.Errorf("insert incident label: %w", err)
		}
	}
	keys = keys[:0]
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_display_labels (team_id, incident_id, key, value)
			VALUES ($1, $2, $3, $4)`, a.TeamID, id, k, annotations[k]); err != nil {
			return "", false, fmt.Errorf("insert incident display label: %w", err)
		}
	}
	// The OPEN event carries the state the incident opens in: each event holds exactly one of
	// the event kinds' bodies, and OPEN has none of its own.
	open := operational(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEOPEN, a.SystemName)
	open.UpsertState = upsertState(oas.IncidentEventUpsertStateStateTypeUPSERTINCIDENTSTATETYPETRIGGERED, a.Fingerprint)
	if err := appendEvent(ctx, tx, a.TeamID, id, open); err != nil {
		return "", false, err
	}
	trig := operational(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEUPSERTSTATE, a.SystemName)
	trig.UpsertState = upsertState(oas.IncidentEventUpsertStateStateTypeUPSERTINCIDENTSTATETYPETRIGGERED, a.Fingerprint)
	if err := appendEvent(ctx, tx, a.TeamID, id, trig); err != nil {
		return "", false, err
	}
	emit(ctx, tx, a.TeamID, id, "triggered")
	return id, true, nil
}

// ResolveFromSource records that the alert (fingerprint, start time) was resolved at endsAt:
// state and status RESOLVED, closedAt endsAt, and an UPSERT_STATE event with stateType
// RESOLVED from an operational originator. found=false when no such incident exists;
// changed=false when it was already resolved by its source. An incident that a user closed
// earlier keeps its closedAt.
func ResolveFromSource(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string, startsAt, endsAt time.Time, systemName string) (id string, found, changed bool, err error) {
	a, found, err := lockSourceAlert(ctx, tx, teamID, fingerprint, startsAt)
	if !found || err != nil {
		return "", false, false, err
	}
	id = a.id
	if a.resolved {
		return id, true, false, nil
	}
	now := micros(tx.Now)
	_, err = tx.ExecContext(ctx, `UPDATE incidents SET state = $3, status = $4, closed_at = COALESCE(closed_at, $5),
		last_state_update_time = $6, last_state_update_key = $7, source_resolved_at = $6
		WHERE team_id = $1 AND id = $2`,
		teamID, id, string(oas.IncidentStateINCIDENTSTATERESOLVED), string(oas.IncidentStatusINCIDENTSTATUSRESOLVED),
		micros(endsAt), now, "alertmanager:"+fingerprint+":resolved")
	if err != nil {
		return "", false, false, fmt.Errorf("resolve incident: %w", err)
	}
	closed := a.rollup.closed
	if !closed.Valid {
		closed = sql.NullInt64{Int64: micros(endsAt), Valid: true}
	}
	if err := a.recordMove(ctx, tx, teamID, string(oas.IncidentStateINCIDENTSTATERESOLVED), string(oas.IncidentStatusINCIDENTSTATUSRESOLVED),
		closed, oas.IncidentEventUpsertStateStateTypeUPSERTINCIDENTSTATETYPERESOLVED, fingerprint, systemName); err != nil {
		return "", false, false, err
	}
	old := a.rollup.key
	if old.state != string(oas.IncidentStateINCIDENTSTATERESOLVED) && old.status != string(oas.IncidentStatusINCIDENTSTATUSRESOLVED) {
		emit(ctx, tx, teamID, id, "resolved")
	}
	return id, true, true, nil
}

// sourceAlert is the incident of a source's alert as ResolveFromSource and ReopenFromSource read
// it before they change it: its id, whether its source resolved it, and its counting and rollup
// keys (rollup.key holds the count key too: countKey).
type sourceAlert struct {
	id       string
	resolved bool
	rollup   rollupEntry
}

// lockSourceAlert reads the team's incident of the alert (fingerprint, start time), locking its
// row on PostgreSQL; found=false when there is none.
func lockSourceAlert(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string, startsAt time.Time) (a sourceAlert, found bool, err error) {
	query := `SELECT id, source_resolved_at, severity, state, status, assigned_to, meta_labels, name, application_name,
		subsystem_name, is_muted, contextual_labels, created_at, closed_at, last_state_update_time FROM incidents
		WHERE team_id = $1 AND fingerprint = $2 AND starts_at = $3`
	if tx.Engine == db.Postgres {
		query += ` FOR UPDATE`
	}
	var resolved sql.NullInt64
	r := &a.rollup
	err = tx.QueryRowContext(ctx, query, teamID, fingerprint, micros(startsAt)).Scan(&a.id, &resolved,
		&r.key.severity, &r.key.state, &r.key.status, &r.key.assignedTo, &r.key.meta, &r.key.name, &r.key.application,
		&r.key.subsystem, &r.key.muted, &r.contextual, &r.created, &r.closed, &r.update)
	if errors.Is(err, sql.ErrNoRows) {
		return sourceAlert{}, false, nil
	}
	if err != nil {
		return sourceAlert{}, false, fmt.Errorf("find incident: %w", err)
	}
	a.resolved = resolved.Valid
	return a, true, nil
}

// recordMove keeps what is derived from the incident in step after its row was updated to state
// and status, closed at closed (null: open), at the transaction's time: the time tie, the counts,
// the closed times, the rollups and the label index; and appends its UPSERT_STATE event of
// stateType from an operational originator (systemName).
func (a sourceAlert) recordMove(ctx context.Context, tx *db.Tx, teamID int64, state, status string, closed sql.NullInt64,
	stateType oas.IncidentEventUpsertStateStateType, fingerprint, systemName string) error {
	now := micros(tx.Now)
	if err := noteTimeTie(ctx, tx, teamID, "updated", now); err != nil {
		return err
	}
	before := a.rollup
	after := before
	after.key.state, after.key.status, after.update, after.closed = state, status, now, closed
	moveCount(ctx, tx, teamID, before.key.countKey(), after.key.countKey())
	moveClosedTime(ctx, tx, teamID, before, after)
	if err := moveRollup(ctx, tx, teamID, before, after); err != nil {
		return err
	}
	if err := syncLabels(ctx, tx, teamID, a.id); err != nil {
		return err
	}
	ev := operational(oas.IncidentEventIncidentEventTypeINCIDENTEVENTTYPEUPSERTSTATE, systemName)
	ev.UpsertState = upsertState(stateType, fingerprint)
	return appendEvent(ctx, tx, teamID, a.id, ev)
}

// OpenInCase counts the case's incidents whose state is still TRIGGERED.
func OpenInCase(ctx context.Context, tx *db.Tx, teamID int64, caseID string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM incidents WHERE team_id = $1 AND case_id = $2 AND state = $3`,
		teamID, caseID, string(oas.IncidentStateINCIDENTSTATETRIGGERED)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count open incidents: %w", err)
	}
	return n, nil
}

// CaseOfAlert returns the case of the team's incident for the alert (fingerprint, start time);
// found=false when the alert has no incident yet.
func CaseOfAlert(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string, startsAt time.Time) (caseID string, found bool, err error) {
	err = tx.QueryRowContext(ctx,
		`SELECT case_id FROM incidents WHERE team_id = $1 AND fingerprint = $2 AND starts_at = $3`,
		teamID, fingerprint, micros(startsAt)).Scan(&caseID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("find incident of alert: %w", err)
	}
	return caseID, true, nil
}

// timeTieColumns are the incident columns whose shared times incident_time_ties lists, by field.
var timeTieColumns = map[string]string{"created": "created_at", "updated": "last_state_update_time"}

// noteTimeTie lists a time just written to an incident's field ("created" or "updated") in
// incident_time_ties when another incident of the team has it too. On PostgreSQL the
// transactions that write the same time take turns (an advisory lock), so that the later one sees
// the earlier one's incident.
func noteTimeTie(ctx context.Context, tx *db.Tx, teamID int64, field string, at int64) error {
	column := timeTieColumns[field]
	if err := tx.Serialize(ctx, "incident-time:"+field+":"+strconv.FormatInt(teamID, 10)+":"+strconv.FormatInt(at, 10)); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 AS one FROM incidents WHERE team_id = $1 AND `+column+` = $2
		LIMIT 2) AS t`, teamID, at).Scan(&n); err != nil {
		return fmt.Errorf("find incidents of one time: %w", err)
	}
	if n < 2 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO incident_time_ties (team_id, field, at) VALUES ($1, $2, $3)
		ON CONFLICT (team_id, field, at) DO NOTHING`, teamID, field, at); err != nil {
		return fmt.Errorf("note incidents of one time: %w", err)
	}
	return nil
}

// OpenStartOf answers the start time of the team's incident with the fingerprint that its source
// has not resolved (the latest, should there be several); found=false when there is none.
// Ingestion asks it for an alert definition's identity (issue 37), whose alert may come with
// another start time after the definition was edited while it fired.
func OpenStartOf(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string) (startsAt time.Time, found bool, err error) {
	var start int64
	err = tx.QueryRowContext(ctx, `SELECT starts_at FROM incidents WHERE team_id = $1 AND fingerprint = $2
		AND source_resolved_at IS NULL ORDER BY starts_at DESC LIMIT 1`, teamID, fingerprint).Scan(&start)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find open incident: %w", err)
	}
	return time.UnixMicro(start).UTC(), true, nil
}

// EmitReminder records, in tx, that the team's incident id is still firing and that its trigger
// is to be routed again (issue 37: a reminder once per retriggering period): a "triggered"
// notification event whose cause is cause, with the incident as tx leaves it. It changes nothing
// of the incident. The caller has checked that the incident is still TRIGGERED.
func EmitReminder(ctx context.Context, tx *db.Tx, teamID int64, id, cause string) {
	tx.Emit(ctx, db.Event{TeamID: teamID, EntityType: "ALERTS", EntityID: id, Kind: "triggered", Cause: cause,
		Snapshot: snapshot(teamID, id)})
}

// ReopenFromSource records that the alert (fingerprint, start time), whose incident its source
// resolved, fires again with the same start time (Alertmanager timed it out, or resolved it, and
// then received it again from Prometheus, which kept its start): state and status TRIGGERED,
// closedAt and the source's resolution cleared, case caseID (the group's open case), an
// UPSERT_STATE event with stateType TRIGGERED from an operational originator, and a "triggered"
// notification event, as for a new firing. found=false when no incident has the alert;
// reopened=false when its source has not resolved it (a firing again of a firing alert changes
// nothing).
func ReopenFromSource(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string, startsAt time.Time, caseID, systemName string) (id string, found, reopened bool, err error) {
	a, found, err := lockSourceAlert(ctx, tx, teamID, fingerprint, startsAt)
	if !found || err != nil {
		return "", false, false, err
	}
	id = a.id
	if !a.resolved {
		return id, true, false, nil
	}
	now := micros(tx.Now)
	triggered := string(oas.IncidentStateINCIDENTSTATETRIGGERED)
	_, err = tx.ExecContext(ctx, `UPDATE incidents SET state = $3, status = $4, closed_at = NULL, source_resolved_at = NULL,
		last_state_update_time = $5, last_state_update_key = $6, case_id = $7
		WHERE team_id = $1 AND id = $2`,
		teamID, id, triggered, string(oas.IncidentStatusINCIDENTSTATUSTRIGGERED), now, "alertmanager:"+fingerprint+":firing", caseID)
	if err != nil {
		return "", false, false, fmt.Errorf("reopen incident: %w", err)
	}
	if err := a.recordMove(ctx, tx, teamID, triggered, string(oas.IncidentStatusINCIDENTSTATUSTRIGGERED),
		sql.NullInt64{}, oas.IncidentEventUpsertStateStateTypeUPSERTINCIDENTSTATETYPETRIGGERED, fingerprint, systemName); err != nil {
		return "", false, false, err
	}
	emit(ctx, tx, teamID, id, "triggered")
	return id, true, true, nil
}

// ResolvedBySource reports whether the team's incident of the alert (fingerprint, start time)
// exists and was resolved by its source.
func ResolvedBySource(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string, startsAt time.Time) (bool, error) {
	var resolved sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT source_resolved_at FROM incidents WHERE team_id = $1 AND fingerprint = $2 AND starts_at = $3`,
		teamID, fingerprint, micros(startsAt)).Scan(&resolved)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find incident of alert: %w", err)
	}
	return resolved.Valid, nil
}
