package dashboards

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// serializeFolders upserts the team's dashboard_folder_writes row, which locks it until the
// transaction ends (PostgreSQL; SQLite serialises writers anyway), so that one team's folder
// writes run one after another, and answers how many folders the team holds.
func serializeFolders(ctx context.Context, tx *db.Tx, teamID int64) (int, error) {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_folder_writes (team_id, total) VALUES ($1, 1)
		 ON CONFLICT (team_id) DO UPDATE SET total = dashboard_folder_writes.total + 1`, teamID); err != nil {
		return 0, fmt.Errorf("lock dashboard folder writes: %w", db.Translate(err))
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM dashboard_folders WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count dashboard folders: %w", err)
	}
	return n, nil
}

// lockFolder touches the team's folder (id in lowercase), so that a concurrent delete of it waits
// for this transaction and then sees what it wrote; db.ErrNotFound when there is none.
func lockFolder(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `UPDATE dashboard_folders SET id = id WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "find dashboard folder")
}

func insertFolder(ctx context.Context, tx *db.Tx, teamID int64, f folder) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_folders (team_id, id, name, parent_id, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $5)`, teamID, f.id, f.name, nullable(f.parentID), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert dashboard folder: %w", db.Translate(err))
	}
	return nil
}

// updateFolder rewrites the team's folder; db.ErrNotFound when there is none.
func updateFolder(ctx context.Context, tx *db.Tx, teamID int64, f folder) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE dashboard_folders SET name = $3, parent_id = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
		teamID, f.id, f.name, nullable(f.parentID), tx.Now.UnixMicro())
	return db.OneRow(res, err, "replace dashboard folder")
}

const selectFolder = `SELECT id, name, parent_id FROM dashboard_folders`

type rowScanner interface{ Scan(dest ...any) error }

func scanFolder(row rowScanner) (folder, error) {
	var f folder
	var parent *string
	if err := row.Scan(&f.id, &f.name, &parent); err != nil {
		return f, db.Translate(err)
	}
	if parent != nil {
		f.parentID = *parent
	}
	return f, nil
}

// getFolder returns the team's folder (id in lowercase); db.ErrNotFound when there is none.
func getFolder(ctx context.Context, q db.Querier, teamID int64, id string) (folder, error) {
	return scanFolder(q.QueryRowContext(ctx, selectFolder+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachFolder calls yield with each of the team's folders by name, then id, reading one row at a
// time; it stops at yield's first error and returns it.
func eachFolder(ctx context.Context, q db.Querier, teamID int64, yield func(folder) error) error {
	rows, err := q.QueryContext(ctx, selectFolder+` WHERE team_id = $1 ORDER BY name, id`, teamID)
	if err != nil {
		return fmt.Errorf("list dashboard folders: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanFolder(rows)
		if err != nil {
			return fmt.Errorf("list dashboard folders: %w", err)
		}
		if err := yield(f); err != nil {
			return err
		}
	}
	return rows.Err()
}

// folderContents answers how many of the team's dashboards and folders are directly in folder id.
func folderContents(ctx context.Context, tx *db.Tx, teamID int64, id string) (dashboards, folders int, err error) {
	if err := tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM dashboards WHERE team_id = $1 AND lower(folder_id) = $2`, teamID, id).Scan(&dashboards); err != nil {
		return 0, 0, fmt.Errorf("count folder dashboards: %w", err)
	}
	if err := tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM dashboard_folders WHERE team_id = $1 AND parent_id = $2`, teamID, id).Scan(&folders); err != nil {
		return 0, 0, fmt.Errorf("count folder folders: %w", err)
	}
	return dashboards, folders, nil
}

// removeFolder deletes the team's folder and, when requestID is not empty, remembers it;
// db.ErrNotFound when there is none.
func removeFolder(ctx context.Context, tx *db.Tx, teamID int64, id, requestID string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM dashboard_folders WHERE team_id = $1 AND id = $2`, teamID, id)
	if err := db.OneRow(res, err, "delete dashboard folder"); err != nil {
		return err
	}
	if requestID == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_folder_deletions (team_id, folder_id, request_id, deleted_at)
		 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, teamID, id, requestID, tx.Now.UnixMicro()); err != nil {
		return fmt.Errorf("remember dashboard folder delete: %w", db.Translate(err))
	}
	return nil
}

// folderDeletedBy says whether requestID deleted the team's folder id.
func folderDeletedBy(ctx context.Context, tx *db.Tx, teamID int64, id, requestID string) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM dashboard_folder_deletions WHERE team_id = $1 AND folder_id = $2 AND request_id = $3`,
		teamID, id, requestID).Scan(&n); err != nil {
		return false, fmt.Errorf("find dashboard folder delete: %w", err)
	}
	return n > 0, nil
}
