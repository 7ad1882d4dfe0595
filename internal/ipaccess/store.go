package ipaccess

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// load returns the team's settings, the defaults when it set none.
func load(ctx context.Context, q db.Querier, teamID int64) (Settings, error) {
	var s Settings
	var entries string
	err := q.QueryRowContext(ctx,
		`SELECT support_access, entries FROM ip_access_settings WHERE team_id = $1`, teamID).
		Scan(&s.SupportAccess, &entries)
	if db.IsNotFound(err) {
		return defaultSettings(), nil
	}
	if err != nil {
		return s, fmt.Errorf("read ip access settings: %w", err)
	}
	if err := json.Unmarshal([]byte(entries), &s.Entries); err != nil {
		return s, fmt.Errorf("team %d ip access entries: %w", teamID, err)
	}
	if s.Entries == nil {
		s.Entries = []Entry{}
	}
	return s, nil
}

// store writes the team's settings in tx, replacing any.
func store(ctx context.Context, tx *db.Tx, teamID int64, s Settings) error {
	entries, err := json.Marshal(s.Entries)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO ip_access_settings (team_id, support_access, entries, updated_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (team_id) DO UPDATE SET support_access = excluded.support_access,
		        entries = excluded.entries, updated_at = excluded.updated_at`,
		teamID, s.SupportAccess, string(entries), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("store ip access settings: %w", err)
	}
	return nil
}

// remove deletes the team's settings in tx, if any.
func remove(ctx context.Context, tx *db.Tx, teamID int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM ip_access_settings WHERE team_id = $1`, teamID); err != nil {
		return fmt.Errorf("delete ip access settings: %w", err)
	}
	return nil
}
