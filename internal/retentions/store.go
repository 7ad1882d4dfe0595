package retentions

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// list returns the platform's tags, in order, with the team's names.
func list(ctx context.Context, q db.Querier, teamID int64) ([]oas.RetentionTag, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM retention_tag_names WHERE team_id = $1`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list retention tag names: %w", err)
	}
	defer rows.Close()
	names := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("scan retention tag name: %w", err)
		}
		names[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list retention tag names: %w", err)
	}
	out := make([]oas.RetentionTag, 0, len(defaults))
	for _, t := range defaults {
		if name, ok := names[t.ID]; ok {
			t.Name = name
		}
		out = append(out, t)
	}
	return out, nil
}

// setName stores the team's name for tag id.
func setName(ctx context.Context, tx *db.Tx, teamID int64, id, name string) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO retention_tag_names (team_id, id, name, updated_at) VALUES ($1, $2, $3, $4)
		 ON CONFLICT (team_id, id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at`,
		teamID, id, name, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("rename retention tag: %w", err)
	}
	return nil
}

// activate records that the team activated retention tags; a team that already did keeps its
// first activation time.
func activate(ctx context.Context, tx *db.Tx, teamID int64) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO retention_tags_activation (team_id, activated_at) VALUES ($1, $2) ON CONFLICT (team_id) DO NOTHING`,
		teamID, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("activate retention tags: %w", err)
	}
	return nil
}

// activated tells whether the team activated retention tags.
func activated(ctx context.Context, q db.Querier, teamID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM retention_tags_activation WHERE team_id = $1`, teamID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read retention tags activation: %w", err)
	}
	return n > 0, nil
}

// eachName calls yield with each tag the team renamed and its name, by tag id.
func eachName(ctx context.Context, q db.Querier, teamID int64, yield func(id, name string) error) error {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM retention_tag_names WHERE team_id = $1 ORDER BY id`, teamID)
	if err != nil {
		return fmt.Errorf("list retention tag names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return fmt.Errorf("scan retention tag name: %w", err)
		}
		if err := yield(id, name); err != nil {
			return err
		}
	}
	return rows.Err()
}

// clearName forgets the team's name for tag id: the tag has the platform's name again.
func clearName(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM retention_tag_names WHERE team_id = $1 AND id = $2`, teamID, id); err != nil {
		return fmt.Errorf("forget retention tag name: %w", err)
	}
	return nil
}
