package alertdefs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
