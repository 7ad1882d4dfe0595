package archive

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// The kinds of archive storage a team has, at most one of each.
const (
	logsKind    = "logs"
	metricsKind = "metrics"
)

// document is a stored setting's JSON form (oas.LogsArchiveTarget, oas.MetricsArchiveConfig).
type document interface {
	MarshalJSON() ([]byte, error)
	UnmarshalJSON([]byte) error
}

// lockTeam serialises the writers of the team's archive settings until the transaction ends.
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.archive:%d", teamID))
}

// getSetting reads the team's setting of kind into doc; db.ErrNotFound when there is none.
func getSetting(ctx context.Context, q db.Querier, teamID int64, kind string, doc document) error {
	var text string
	err := q.QueryRowContext(ctx, `SELECT document FROM archive_targets WHERE team_id = $1 AND kind = $2`, teamID, kind).Scan(&text)
	if err != nil {
		return db.Translate(err)
	}
	if err := doc.UnmarshalJSON([]byte(text)); err != nil {
		return fmt.Errorf("%s archive document: %w", kind, err)
	}
	return nil
}

// putSetting stores doc as the team's setting of kind, over the one it had.
func putSetting(ctx context.Context, tx *db.Tx, teamID int64, kind string, active bool, doc document) error {
	text, err := doc.MarshalJSON()
	if err != nil {
		return err
	}
	activeInt := 0
	if active {
		activeInt = 1
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO archive_targets (team_id, kind, active, document, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
		 ON CONFLICT (team_id, kind) DO UPDATE SET active = $3, document = $4, updated_at = $5`,
		teamID, kind, activeInt, string(text), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("store %s archive: %w", kind, db.Translate(err))
	}
	return nil
}

// deleteSetting removes the team's setting of kind; no error when it has none.
func deleteSetting(ctx context.Context, tx *db.Tx, teamID int64, kind string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM archive_targets WHERE team_id = $1 AND kind = $2`, teamID, kind); err != nil {
		return fmt.Errorf("delete %s archive: %w", kind, err)
	}
	return nil
}
