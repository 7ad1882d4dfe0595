package routers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ReminderCause is the cause of a reminder's event: a "triggered" event of an incident of an
// alert definition that still fires a retriggering period after it was last notified (issue 37;
// Alertmanager's repeat_interval is the analogy). Routing sends it only to the connectors and
// webhooks that have a retriggering period and were last sent a trigger of the alert at least that
// period before (definitionEvent, toWebhooks).
const ReminderCause = "reminder"

// firstReminderLook is when an incident of a definition is first looked at after it opened: the
// shortest retriggering period there is (a minute). The row it is written with knows nothing
// of the definition's periods; the look finds them.
const firstReminderLook = time.Minute

// reminderRecheck is how long an open incident whose definition has no retriggering period waits
// before it is looked at again: an edit may give it one.
const reminderRecheck = 10 * time.Minute

// reminderBatch bounds the reminders one look takes.
const reminderBatch = 64

// ScheduleReminders writes, in tx, that the team's incident id (just triggered by an alert of an
// alert definition) is to be looked at for reminders (RecordDueEvents) a minute from now; an
// incident that already has its row keeps it with the new time.
//
// Errors: only the database's.
func ScheduleReminders(ctx context.Context, tx *db.Tx, teamID int64, incidentID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO alert_reminders (team_id, incident_id, due_at) VALUES ($1, $2, $3)
		ON CONFLICT (team_id, incident_id) DO UPDATE SET due_at = $3`,
		teamID, incidentID, tx.Now.Add(firstReminderLook).UnixMicro())
	if err != nil {
		return fmt.Errorf("schedule the alert's reminders: %w", db.Translate(err))
	}
	return nil
}

// RecordDueEvents records the reminders that have come due (it implements delivery.DueEvents:
// the delivery worker calls it before each routing pass). For each incident whose row in
// alert_reminders is due, in one transaction: an incident that is gone, or whose state or
// status is no longer TRIGGERED (acknowledged, resolved, closed), or whose alert names no definition of the team loses its
// row; a definition without any retriggering period is looked at again in reminderRecheck;
// otherwise, when one of the incident's reminder times (reminderAt: its creation plus a
// multiple of a period) lies between the row's due time and now, a reminder event
// (incidents.EmitReminder, cause ReminderCause) is recorded and the row moves to the next
// reminder time after now; when none has come yet, the row moves to the first. A worker that
// was stopped through several reminder times records one reminder, not one per missed time. Replicas over one PostgreSQL database skip the rows another
// is looking at. recorded counts the reminder events.
//
// Errors: only the database's.
func (r Router) RecordDueEvents(ctx context.Context, database *db.DB) (recorded int, err error) {
	if r.Definitions.OfAlert == nil {
		return 0, nil
	}
	var due int
	err = database.Read().QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM alert_reminders WHERE due_at <= $1 LIMIT 1) due`,
		database.Now().UnixMicro()).Scan(&due)
	if err != nil || due == 0 {
		return 0, err
	}
	err = database.InTx(db.WithLazyCommit(db.WithoutAudit(ctx)), func(tx *db.Tx) error {
		recorded = 0
		q := `SELECT team_id, incident_id, due_at FROM alert_reminders WHERE due_at <= $1 ORDER BY due_at LIMIT $2`
		if tx.Engine == db.Postgres {
			q += ` FOR UPDATE SKIP LOCKED`
		}
		rows, err := tx.QueryContext(ctx, q, tx.Now.UnixMicro(), reminderBatch)
		if err != nil {
			return fmt.Errorf("due reminders: %w", err)
		}
		type dueRow struct {
			team     int64
			incident string
			dueAt    int64
		}
		var list []dueRow
		for rows.Next() {
			var d dueRow
			if err := rows.Scan(&d.team, &d.incident, &d.dueAt); err != nil {
				rows.Close()
				return err
			}
			list = append(list, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, d := range list {
			next, remind, err := r.lookAtReminder(ctx, tx, d.team, d.incident, time.UnixMicro(d.dueAt))
			if err != nil {
				return err
			}
			if remind {
				incidents.EmitReminder(ctx, tx, d.team, d.incident, ReminderCause)
				recorded++
			}
			if next.IsZero() {
				_, err = tx.ExecContext(ctx, `DELETE FROM alert_reminders WHERE team_id = $1 AND incident_id = $2`, d.team, d.incident)
			} else {
				_, err = tx.ExecContext(ctx, `UPDATE alert_reminders SET due_at = $3 WHERE team_id = $1 AND incident_id = $2`,
					d.team, d.incident, next.UnixMicro())
			}
			if err != nil {
				return fmt.Errorf("reschedule the alert's reminders: %w", err)
			}
		}
		return nil
	})
	return recorded, err
}

// lookAtReminder judges one due row: whether a reminder is due at dueAt, and when to look next
// (zero: never, the row goes).
func (r Router) lookAtReminder(ctx context.Context, tx *db.Tx, teamID int64, incidentID string, dueAt time.Time) (next time.Time, remind bool, err error) {
	var state, status, contextual string
	var created int64
	err = tx.QueryRowContext(ctx, `SELECT state, status, created_at, contextual_labels FROM incidents WHERE team_id = $1 AND id = $2`,
		teamID, incidentID).Scan(&state, &status, &created, &contextual)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (state != string(oas.IncidentStateINCIDENTSTATETRIGGERED) ||
		status != string(oas.IncidentStatusINCIDENTSTATUSTRIGGERED))) {
		return time.Time{}, false, nil // gone, acknowledged, resolved or closed
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("incident of a reminder: %w", err)
	}
	var labels map[string]string
	if err := json.Unmarshal([]byte(contextual), &labels); err != nil {
		return time.Time{}, false, nil // not an alert's labels: not a definition's
	}
	def, found, err := r.Definitions.OfAlert(ctx, tx, teamID, labels)
	if err != nil || !found {
		return time.Time{}, false, err
	}
	periods := retriggeringPeriods(def)
	if len(periods) == 0 {
		return tx.Now.Add(reminderRecheck), false, nil
	}
	opened := time.UnixMicro(created)
	// The first reminder time at or after the row's due time: when it has come (the row was
	// due at it, or was due before it and looked at late), a reminder; else the row waits for it.
	if at := reminderAt(opened, periods, dueAt.Add(-time.Microsecond)); at.After(tx.Now) {
		return at, false, nil
	}
	return reminderAt(opened, periods, tx.Now), true, nil
}

// retriggeringPeriods are the distinct retriggering periods of a definition's notifications:
// incidentsSettings.minutes (its routers', and the default of the others), its destinations'
// retriggeringPeriodMinutes and its webhooks' minutes, those above 0.
func retriggeringPeriods(def oas.AlertDef) []time.Duration {
	props := def.AlertDefProperties.Value
	group := props.NotificationGroup.Value
	minutes := []int64{props.IncidentsSettings.Value.Minutes.Or(0)}
	for _, d := range group.Destinations {
		minutes = append(minutes, d.RetriggeringPeriodMinutes.Or(0))
	}
	for _, w := range group.Webhooks {
		minutes = append(minutes, w.Minutes.Or(0))
	}
	seen := map[int64]bool{}
	var out []time.Duration
	for _, m := range minutes {
		if m > 0 && !seen[m] {
			seen[m] = true
			out = append(out, time.Duration(min(m, maxRetriggerMinutes))*time.Minute)
		}
	}
	return out
}

// reminderAt is the first reminder time of an incident opened at opened that is after after:
// the earliest opened + k × period (k ≥ 1) over periods.
func reminderAt(opened time.Time, periods []time.Duration, after time.Time) time.Time {
	var first time.Time
	for _, p := range periods {
		k := int64(1)
		if after.After(opened) {
			k = int64(after.Sub(opened)/p) + 1
		}
		if t := opened.Add(time.Duration(k) * p); first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}

// reminderSlack is how much earlier than a whole period a connector's last trigger may have been
// enqueued and still count as a period ago, at a reminder: the trigger's delivery is written when
// the worker routes it, a little after the event the reminder times count from. A quarter of the
// period, at most 30 seconds.
func reminderSlack(minutes int64) time.Duration {
	return min(time.Duration(min(minutes, maxRetriggerMinutes))*time.Minute/4, 30*time.Second)
}
