package dashboards

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// stored is a dashboard row.
type stored struct {
	id                   string
	name, slug           string
	doc                  oas.Dashboard
	accessPolicy         sql.NullString
	locked               bool
	createdAt, updatedAt time.Time
	// folderID is the document's folderId.value (NULL: the root).
	folderID sql.NullString
	// author, updater and locker are the API keys that created, last changed and locked the
	// dashboard; NULL where not recorded (written before mgmtapi recorded them; unlocked).
	author, updater, locker keyRef
	// isDefault and isPinned are filled by eachDashboard only, and so is folder: the name and
	// parent of the folder folderID names.
	isDefault, isPinned bool
	folder              folder
}

// keyRef names an API key: its id and its name at the time of the change.
type keyRef struct {
	id, name sql.NullString
}

// keyOf names the caller's key.
func keyOf(id, name string) keyRef {
	return keyRef{id: sql.NullString{String: id, Valid: id != ""}, name: sql.NullString{String: name, Valid: name != ""}}
}

// encodeDoc writes the dashboard as JSON with its keys in order.
func encodeDoc(d oas.Dashboard) (string, error) {
	m := make(map[string]json.RawMessage, len(d))
	for k, v := range d {
		m[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode dashboard: %w", err)
	}
	return string(b), nil
}

func decodeDoc(text string) (oas.Dashboard, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("decode dashboard: %w", err)
	}
	out := make(oas.Dashboard, len(m))
	for k, v := range m {
		out[k] = jx.Raw(v)
	}
	return out, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func policyArg(p oas.OptString) any {
	if v, ok := p.Get(); ok {
		return v
	}
	return nil
}

// insertDashboard stores a new dashboard.
func insertDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored, policy oas.OptString) error {
	text, err := encodeDoc(d.doc)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO dashboards (team_id, id, name, slug_name, document, access_policy, is_locked, created_at, updated_at,
		   folder_id, author_key_id, author_name, updater_key_id, updater_name, locker_key_id, locker_name)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13, $14, $15)`,
		teamID, d.id, d.name, nullable(d.slug), text, policyArg(policy), d.locked, tx.Now.UnixMicro(),
		d.folderID, d.author.id, d.author.name, d.updater.id, d.updater.name, d.locker.id, d.locker.name)
	if err != nil {
		return fmt.Errorf("insert dashboard: %w", db.Translate(err))
	}
	return nil
}

// replaceDashboard rewrites the team's dashboard; db.ErrNotFound when there is none.
func replaceDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored, policy oas.OptString) error {
	text, err := encodeDoc(d.doc)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE dashboards SET name = $3, slug_name = $4, document = $5, access_policy = $6, is_locked = $7, updated_at = $8,
		   folder_id = $9, updater_key_id = $10, updater_name = $11, locker_key_id = $12, locker_name = $13
		 WHERE team_id = $1 AND id = $2`,
		teamID, d.id, d.name, nullable(d.slug), text, policyArg(policy), d.locked, tx.Now.UnixMicro(),
		d.folderID, d.updater.id, d.updater.name, d.locker.id, d.locker.name)
	return db.OneRow(res, err, "replace dashboard")
}

// moveDashboard rewrites the team's dashboard document with its folder fields changed, as an
// update by updater; db.ErrNotFound when there is none.
func moveDashboard(ctx context.Context, tx *db.Tx, teamID int64, d stored) error {
	text, err := encodeDoc(d.doc)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE dashboards SET document = $3, folder_id = $4, updated_at = $5, updater_key_id = $6, updater_name = $7
		 WHERE team_id = $1 AND id = $2`,
		teamID, d.id, text, d.folderID, tx.Now.UnixMicro(), d.updater.id, d.updater.name)
	return db.OneRow(res, err, "move dashboard")
}

// slugOwner answers the id of the team's dashboard other than exceptID whose slug is slug, or
// "" when there is none. Writers call it after serializeSlugs.
func slugOwner(ctx context.Context, q db.Querier, teamID int64, slug, exceptID string) (string, error) {
	var id string
	err := q.QueryRowContext(ctx,
		`SELECT id FROM dashboards WHERE team_id = $1 AND slug_name = $2 AND id <> $3 ORDER BY created_at, id LIMIT 1`,
		teamID, slug, exceptID).Scan(&id)
	if db.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find dashboard slug: %w", err)
	}
	return id, nil
}

// serializeSlugs makes the team's dashboard writers that check slugs run one at a time until the
// transaction ends, so that a slug checked to be free stays free until commit.
func serializeSlugs(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.dashboards.slugs:%d", teamID))
}

// setDefault makes the dashboard the team's default.
func setDefault(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_defaults (team_id, dashboard_id, updated_at) VALUES ($1, $2, $3)
		 ON CONFLICT (team_id) DO UPDATE SET dashboard_id = excluded.dashboard_id, updated_at = excluded.updated_at`,
		teamID, id, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("set default dashboard: %w", db.Translate(err))
	}
	return nil
}

// clearDefault leaves the team without a default dashboard.
func clearDefault(ctx context.Context, tx *db.Tx, teamID int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_defaults WHERE team_id = $1`, teamID); err != nil {
		return fmt.Errorf("clear default dashboard: %w", err)
	}
	return nil
}

// setPinned pins (pinned true) or unpins the dashboard for the key; both are idempotent.
func setPinned(ctx context.Context, tx *db.Tx, teamID int64, keyID, id string, pinned bool) error {
	var err error
	if pinned {
		_, err = tx.ExecContext(ctx,
			`INSERT INTO dashboard_pins (team_id, key_id, dashboard_id, pinned_at) VALUES ($1, $2, $3, $4)
			 ON CONFLICT DO NOTHING`, teamID, keyID, id, tx.Now.UnixMicro())
	} else {
		_, err = tx.ExecContext(ctx,
			`DELETE FROM dashboard_pins WHERE team_id = $1 AND key_id = $2 AND dashboard_id = $3`, teamID, keyID, id)
	}
	if err != nil {
		return fmt.Errorf("pin dashboard: %w", db.Translate(err))
	}
	return nil
}

// lockDashboard answers whether the team has the dashboard, locking its row until the
// transaction ends (PostgreSQL), so that a delete cannot slip between the check and a write that
// refers to the dashboard; db.ErrNotFound when there is none.
func lockDashboard(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `UPDATE dashboards SET id = id WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "find dashboard")
}

const selectDashboard = `SELECT id, name, document, access_policy, is_locked, created_at, updated_at, folder_id,
	author_key_id, author_name, updater_key_id, updater_name, locker_key_id, locker_name FROM dashboards`

// getDashboard returns the team's dashboard; db.ErrNotFound when there is none.
func getDashboard(ctx context.Context, q db.Querier, teamID int64, id string) (stored, error) {
	return scanDashboard(q.QueryRowContext(ctx, selectDashboard+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// getDashboardBySlug returns the team's dashboard whose slug is slug (the oldest, should rows
// written before slugs were kept unique share one); db.ErrNotFound when there is none.
func getDashboardBySlug(ctx context.Context, q db.Querier, teamID int64, slug string) (stored, error) {
	return scanDashboard(q.QueryRowContext(ctx,
		selectDashboard+` WHERE team_id = $1 AND slug_name = $2 ORDER BY created_at, id LIMIT 1`, teamID, slug))
}

func scanDashboard(row *sql.Row) (stored, error) {
	var d stored
	var text string
	var created, updated int64
	err := row.Scan(&d.id, &d.name, &text, &d.accessPolicy, &d.locked, &created, &updated, &d.folderID,
		&d.author.id, &d.author.name, &d.updater.id, &d.updater.name, &d.locker.id, &d.locker.name)
	if err != nil {
		return d, db.Translate(err)
	}
	d.createdAt, d.updatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	d.doc, err = decodeDoc(text)
	return d, err
}

// eachDashboard calls yield with each of the team's dashboards (without documents) by name, then
// id, each with whether it is the team's default and whether the key keyID has pinned it, reading
// one row at a time; it stops at yield's first error and returns it.
func eachDashboard(ctx context.Context, q db.Querier, teamID int64, keyID string, yield func(*stored) error) error {
	rows, err := q.QueryContext(ctx,
		`SELECT d.id, d.name, d.slug_name, d.is_locked, d.created_at, d.updated_at, d.folder_id, d.author_key_id,
		        d.locker_key_id, df.dashboard_id IS NOT NULL, p.dashboard_id IS NOT NULL, f.name, f.parent_id
		 FROM dashboards d
		 LEFT JOIN dashboard_defaults df ON df.team_id = d.team_id AND df.dashboard_id = d.id
		 LEFT JOIN dashboard_pins p ON p.team_id = d.team_id AND p.key_id = $2 AND p.dashboard_id = d.id
		 LEFT JOIN dashboard_folders f ON f.team_id = d.team_id AND f.id = lower(d.folder_id)
		 WHERE d.team_id = $1 ORDER BY d.name, d.id`, teamID, keyID)
	if err != nil {
		return fmt.Errorf("list dashboards: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d stored
		var slug, folderName, folderParent sql.NullString
		var created, updated int64
		if err := rows.Scan(&d.id, &d.name, &slug, &d.locked, &created, &updated, &d.folderID, &d.author.id,
			&d.locker.id, &d.isDefault, &d.isPinned, &folderName, &folderParent); err != nil {
			return fmt.Errorf("list dashboards: %w", err)
		}
		d.slug = slug.String
		d.folder = folder{name: folderName.String, parentID: folderParent.String}
		d.createdAt, d.updatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		if err := yield(&d); err != nil {
			return err
		}
	}
	return rows.Err()
}

// countForCreate answers how many dashboards the team holds. It first upserts the team's
// dashboard_creates row, which locks it until the transaction ends (PostgreSQL; SQLite serialises
// writers anyway), so concurrent creates of one team count one after another.
func countForCreate(ctx context.Context, tx *db.Tx, teamID int64) (int, error) {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO dashboard_creates (team_id, total) VALUES ($1, 1)
		 ON CONFLICT (team_id) DO UPDATE SET total = dashboard_creates.total + 1`, teamID); err != nil {
		return 0, fmt.Errorf("lock dashboard creates: %w", db.Translate(err))
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM dashboards WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count dashboards: %w", err)
	}
	return n, nil
}

// deleteDashboard deletes the team's dashboard and, when requestID is not empty, remembers it.
// When the dashboard is already gone it answers nil if that request id deleted it before, and
// db.ErrNotFound otherwise.
func deleteDashboard(ctx context.Context, tx *db.Tx, teamID int64, id, requestID string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM dashboards WHERE team_id = $1 AND id = $2`, teamID, id)
	err = db.OneRow(res, err, "delete dashboard")
	if err == nil {
		err = forget(ctx, tx, teamID, id)
	}
	switch {
	case err == nil && requestID != "":
		_, err = tx.ExecContext(ctx,
			`INSERT INTO dashboard_deletions (team_id, dashboard_id, request_id, deleted_at)
			 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, teamID, id, requestID, tx.Now.UnixMicro())
		if err != nil {
			return fmt.Errorf("remember dashboard delete: %w", db.Translate(err))
		}
		return nil
	case err == db.ErrNotFound && requestID != "":
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT COUNT(*) FROM dashboard_deletions WHERE team_id = $1 AND dashboard_id = $2 AND request_id = $3`,
			teamID, id, requestID).Scan(&n); err != nil {
			return fmt.Errorf("find dashboard delete: %w", err)
		}
		if n > 0 {
			return nil
		}
	}
	return err
}

// forget deletes the team default and the pins that name the dashboard.
func forget(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_defaults WHERE team_id = $1 AND dashboard_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("forget default dashboard: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM dashboard_pins WHERE team_id = $1 AND dashboard_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("forget dashboard pins: %w", err)
	}
	return nil
}
