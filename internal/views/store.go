package views

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// nextID takes the team's next view id, starting at 1. The upsert locks the team's counter row
// until the transaction ends (PostgreSQL; SQLite serialises writers anyway), so concurrent creates
// get distinct ids and a rolled-back create gives its id back.
func nextID(ctx context.Context, tx *db.Tx, teamID int64) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx,
		`INSERT INTO view_ids (team_id, last_id) VALUES ($1, 1)
		 ON CONFLICT (team_id) DO UPDATE SET last_id = view_ids.last_id + 1
		 RETURNING last_id`, teamID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("next view id: %w", err)
	}
	return id, nil
}

// lockFolder touches the team's folder so that a concurrent folder delete waits for this
// transaction (and then sees its view); db.ErrNotFound when the team has no such folder.
func lockFolder(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE view_folders SET updated_at = updated_at WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "lock view folder")
}

func encodeDoc(doc oas.ViewRequest) (string, any, error) {
	var folder any
	if f, ok := doc.FolderId.Get(); ok {
		folder = string(f)
	}
	doc.FolderId.Reset()
	b, err := doc.MarshalJSON()
	if err != nil {
		return "", nil, fmt.Errorf("encode view: %w", err)
	}
	return string(b), folder, nil
}

// insertView stores v's document under id.
func insertView(ctx context.Context, tx *db.Tx, teamID, id int64, doc oas.ViewRequest) error {
	text, folder, err := encodeDoc(doc)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO views (team_id, id, folder_id, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $5)`, teamID, id, folder, text, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert view: %w", db.Translate(err))
	}
	return nil
}

// replaceView rewrites the team's view; db.ErrNotFound when there is none.
func replaceView(ctx context.Context, tx *db.Tx, teamID, id int64, doc oas.ViewRequest) error {
	text, folder, err := encodeDoc(doc)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE views SET folder_id = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
		teamID, id, folder, text, tx.Now.UnixMicro())
	return db.OneRow(res, err, "replace view")
}

const selectView = `SELECT id, folder_id, document FROM views`

type scanner interface{ Scan(dest ...any) error }

func scanView(row scanner) (view, error) {
	var v view
	var folder sql.NullString
	var doc string
	if err := row.Scan(&v.id, &folder, &doc); err != nil {
		return v, db.Translate(err)
	}
	v.folderID = folder.String
	if err := v.doc.UnmarshalJSON([]byte(doc)); err != nil {
		return v, fmt.Errorf("view %d document: %w", v.id, err)
	}
	return v, nil
}

// getView returns the team's view; db.ErrNotFound when there is none.
func getView(ctx context.Context, q db.Querier, teamID, id int64) (view, error) {
	return scanView(q.QueryRowContext(ctx, selectView+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachView calls yield with each of the team's views by id, reading one row at a time; it stops
// at yield's first error and returns it.
func eachView(ctx context.Context, q db.Querier, teamID int64, yield func(view) error) error {
	rows, err := q.QueryContext(ctx, selectView+` WHERE team_id = $1 ORDER BY id`, teamID)
	if err != nil {
		return fmt.Errorf("list views: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanView(rows)
		if err != nil {
			return err
		}
		if err := yield(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

// countViews answers how many views the team holds.
func countViews(ctx context.Context, q db.Querier, teamID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM views WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count views: %w", err)
	}
	return n, nil
}

// deleteView deletes the team's view; db.ErrNotFound when there is none.
func deleteView(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM views WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete view")
}

// insertFolder stores a new folder.
func insertFolder(ctx context.Context, tx *db.Tx, teamID int64, f oas.ViewFolder) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO view_folders (team_id, id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`,
		teamID, f.ID, f.Name, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert view folder: %w", db.Translate(err))
	}
	return nil
}

// renameFolder renames the team's folder; db.ErrNotFound when there is none.
func renameFolder(ctx context.Context, tx *db.Tx, teamID int64, f oas.ViewFolder) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE view_folders SET name = $3, updated_at = $4 WHERE team_id = $1 AND id = $2`,
		teamID, f.ID, f.Name, tx.Now.UnixMicro())
	return db.OneRow(res, err, "rename view folder")
}

const selectFolder = `SELECT id, name FROM view_folders`

func scanFolder(row scanner) (oas.ViewFolder, error) {
	var f oas.ViewFolder
	err := row.Scan(&f.ID, &f.Name)
	return f, db.Translate(err)
}

// getFolder returns the team's folder; db.ErrNotFound when there is none.
func getFolder(ctx context.Context, q db.Querier, teamID int64, id string) (oas.ViewFolder, error) {
	return scanFolder(q.QueryRowContext(ctx, selectFolder+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// eachFolder calls yield with each of the team's folders by name, then id, reading one row at a
// time; it stops at yield's first error and returns it.
func eachFolder(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.ViewFolder) error) error {
	rows, err := q.QueryContext(ctx, selectFolder+` WHERE team_id = $1 ORDER BY name, id`, teamID)
	if err != nil {
		return fmt.Errorf("list view folders: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanFolder(rows)
		if err != nil {
			return err
		}
		if err := yield(&f); err != nil {
			return err
		}
	}
	return rows.Err()
}

// deleteFolder deletes the team's folder when it holds no views, and answers how many views it
// holds otherwise (then nothing is deleted). The folder row is locked first (see lockFolder), so a
// concurrent view create into it either commits before the count sees it or finds the folder gone.
// db.ErrNotFound when the team has no such folder.
func deleteFolder(ctx context.Context, tx *db.Tx, teamID int64, id string) (int, error) {
	if err := lockFolder(ctx, tx, teamID, id); err != nil {
		return 0, err
	}
	var n int
	if err := tx.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM views WHERE team_id = $1 AND folder_id = $2`, teamID, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("count folder views: %w", err)
	}
	if n > 0 {
		return n, nil
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM view_folders WHERE team_id = $1 AND id = $2`, teamID, id)
	return 0, db.OneRow(res, err, "delete view folder")
}

// reserveID makes the team's counter of view ids at least id, so that nextID never hands out an
// id a view was given (an applied configuration document keeps its ids).
func reserveID(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO view_ids (team_id, last_id) VALUES ($1, $2)
		 ON CONFLICT (team_id) DO UPDATE SET last_id = CASE WHEN view_ids.last_id < $2 THEN $2 ELSE view_ids.last_id END`,
		teamID, id)
	if err != nil {
		return fmt.Errorf("reserve view id: %w", err)
	}
	return nil
}
