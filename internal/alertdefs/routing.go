package alertdefs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefinitionLabel is the label that names, on an alert, the definition it was evaluated from:
// the Prometheus rules mgmtapi exports (internal/promrules) set it on every alert.
const DefinitionLabel = "alert_def_id"

// TeamHasAny reports whether the team has an alert definition (the notification routing asks
// once per transaction before it reads any incident's).
//
// Errors: only the database's.
func TeamHasAny(ctx context.Context, q db.Querier, teamID int64) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM alert_defs WHERE team_id = $1 LIMIT 1`, teamID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("alert definitions of the team: %w", db.Translate(err))
	}
	return true, nil
}

// OfAlert answers the current version of the definition an alert's labels name (DefinitionLabel),
// and false when they name none, or one the team no longer has.
//
// Errors: only the database's.
func OfAlert(ctx context.Context, q db.Querier, teamID int64, labels map[string]string) (oas.AlertDef, bool, error) {
	id := labels[DefinitionLabel]
	if id == "" {
		return oas.AlertDef{}, false, nil
	}
	d, err := Load(ctx, q, teamID, id)
	if db.IsNotFound(err) {
		return oas.AlertDef{}, false, nil
	}
	if err != nil {
		return oas.AlertDef{}, false, err
	}
	return d, true, nil
}

// RecordFiring marks the team's definition id as alerting (ALERT_DEF_STATUS_ALERTING) and sets
// its lastTriggeredTime to at when that is later; a definition the team no longer has is left
// alone. The event feed calls it in the transaction that records the firing.
//
// Errors: only the database's.
func RecordFiring(ctx context.Context, tx *db.Tx, teamID int64, id string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE alert_defs SET status = $3,
		last_triggered_at = CASE WHEN last_triggered_at IS NULL OR last_triggered_at < $4 THEN $4 ELSE last_triggered_at END
		WHERE team_id = $1 AND id = $2`, teamID, id, string(oas.AlertDefStatusALERTDEFSTATUSALERTING), at.UnixMicro())
	if err != nil {
		return fmt.Errorf("definition status: %w", db.Translate(err))
	}
	return nil
}

// RecordResolved marks the team's definition id as OK (ALERT_DEF_STATUS_OK): none of its alerts
// fires any more. A definition the team no longer has is left alone.
//
// Errors: only the database's.
func RecordResolved(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	_, err := tx.ExecContext(ctx, `UPDATE alert_defs SET status = $3 WHERE team_id = $1 AND id = $2`,
		teamID, id, string(oas.AlertDefStatusALERTDEFSTATUSOK))
	if err != nil {
		return fmt.Errorf("definition status: %w", db.Translate(err))
	}
	return nil
}

// RecordNoData marks the team's definition id as having no data (ALERT_DEF_STATUS_NO_DATA): its
// no-data alert fires (issue 37). Its lastTriggeredTime is left as it is. A definition the team
// no longer has is left alone.
//
// Errors: only the database's.
func RecordNoData(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return RecordStatus(ctx, tx, teamID, id, oas.AlertDefStatusALERTDEFSTATUSNODATA)
}

// RecordStatus sets the status of the team's definition id, and nothing else. A definition the
// team no longer has is left alone.
//
// Errors: only the database's.
func RecordStatus(ctx context.Context, tx *db.Tx, teamID int64, id string, status oas.AlertDefStatus) error {
	_, err := tx.ExecContext(ctx, `UPDATE alert_defs SET status = $3 WHERE team_id = $1 AND id = $2`,
		teamID, id, string(status))
	if err != nil {
		return fmt.Errorf("definition status: %w", db.Translate(err))
	}
	return nil
}
