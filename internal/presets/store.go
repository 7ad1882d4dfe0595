package presets

import (
	"context"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// LockTeam serialises, until the transaction ends, every writer of the team's presets, so that a
// parent checked to exist (or a preset checked to have no children or users) stays so until
// commit, across replicas (db.Tx.Serialize). Writers that check a preset exists (routers) take it
// too.
func LockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.presets:%d", teamID))
}

// insertPreset stores p (its id already set) with the transaction's time.
func insertPreset(ctx context.Context, tx *db.Tx, teamID int64, p oas.Preset) error {
	doc, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO notification_presets (team_id, id, connector_type, entity_type, parent_id, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		teamID, p.ID.Or(""), string(p.ConnectorType.Or("")), string(p.EntityType.Or("")), p.ParentId.Or(""),
		string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert preset: %w", err)
	}
	return nil
}

// updatePreset rewrites p and its change time.
func updatePreset(ctx context.Context, tx *db.Tx, teamID int64, p oas.Preset) error {
	doc, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`UPDATE notification_presets SET connector_type = $3, entity_type = $4, parent_id = $5, document = $6, updated_at = $7
		 WHERE team_id = $1 AND id = $2`,
		teamID, p.ID.Or(""), string(p.ConnectorType.Or("")), string(p.EntityType.Or("")), p.ParentId.Or(""),
		string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update preset: %w", err)
	}
	return nil
}

const selectPreset = `SELECT document, created_at, updated_at FROM notification_presets`

type scanner interface{ Scan(dest ...any) error }

func scanPreset(row scanner) (oas.Preset, error) {
	var p oas.Preset
	var doc string
	var created, updated int64
	if err := row.Scan(&doc, &created, &updated); err != nil {
		return p, db.Translate(err)
	}
	if err := p.UnmarshalJSON([]byte(doc)); err != nil {
		return p, fmt.Errorf("preset document: %w", err)
	}
	p.CreateTime = oas.NewOptDateTime(time.UnixMicro(created).UTC())
	p.UpdateTime = oas.NewOptDateTime(time.UnixMicro(updated).UTC())
	return p, nil
}

// getPreset returns the team's custom preset; db.ErrNotFound when there is none.
func getPreset(ctx context.Context, q db.Querier, teamID int64, id string) (oas.Preset, error) {
	return scanPreset(q.QueryRowContext(ctx, selectPreset+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// queryPresets returns the presets that where (an SQL condition over args) selects, oldest first.
func queryPresets(ctx context.Context, q db.Querier, where string, args ...any) ([]oas.Preset, error) {
	out := []oas.Preset{}
	err := eachPreset(ctx, q, where, func(p *oas.Preset) error {
		out = append(out, *p)
		return nil
	}, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachPreset calls yield with each preset that where (an SQL condition over args) selects, oldest
// first, reading one row at a time; it stops at yield's first error and returns it.
func eachPreset(ctx context.Context, q db.Querier, where string, yield func(*oas.Preset) error, args ...any) error {
	rows, err := q.QueryContext(ctx, selectPreset+` WHERE `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return fmt.Errorf("list presets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanPreset(rows)
		if err != nil {
			return err
		}
		if err := yield(&p); err != nil {
			return err
		}
	}
	return rows.Err()
}

// childOf returns the id of one of the team's presets whose parent is id, or "" when none is.
func childOf(ctx context.Context, tx *db.Tx, teamID int64, id string) (string, error) {
	var child string
	err := tx.QueryRowContext(ctx,
		`SELECT id FROM notification_presets WHERE team_id = $1 AND parent_id = $2 ORDER BY id LIMIT 1`, teamID, id).Scan(&child)
	if err != nil {
		if db.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("find child presets: %w", err)
	}
	return child, nil
}

func deletePreset(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM notification_presets WHERE team_id = $1 AND id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete preset: %w", err)
	}
	return nil
}

// setPresetDefault makes the custom preset id the team's default of the pair.
func setPresetDefault(ctx context.Context, tx *db.Tx, teamID int64, c oas.ConnectorType, e oas.NotificationEntityType, id string) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO notification_preset_defaults (team_id, connector_type, entity_type, preset_id, updated_at)
		 VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (team_id, connector_type, entity_type) DO UPDATE SET preset_id = excluded.preset_id, updated_at = excluded.updated_at`,
		teamID, string(c), string(e), id, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("set default preset: %w", db.Translate(err))
	}
	return nil
}

// clearPresetDefault gives the pair back its system default.
func clearPresetDefault(ctx context.Context, tx *db.Tx, teamID int64, c oas.ConnectorType, e oas.NotificationEntityType) error {
	if _, err := tx.ExecContext(ctx,
		`DELETE FROM notification_preset_defaults WHERE team_id = $1 AND connector_type = $2 AND entity_type = $3`,
		teamID, string(c), string(e)); err != nil {
		return fmt.Errorf("clear default preset: %w", err)
	}
	return nil
}

// forgetPresetDefaults deletes the defaults that name the custom preset id, except that of the
// pair keep (when the preset still belongs to it); call it when the preset is deleted (keep is
// the zero pair) or replaced.
func forgetPresetDefaults(ctx context.Context, tx *db.Tx, teamID int64, id string, keepC oas.ConnectorType, keepE oas.NotificationEntityType) error {
	if _, err := tx.ExecContext(ctx,
		`DELETE FROM notification_preset_defaults
		 WHERE team_id = $1 AND preset_id = $2 AND NOT (connector_type = $3 AND entity_type = $4)`,
		teamID, id, string(keepC), string(keepE)); err != nil {
		return fmt.Errorf("forget default preset: %w", err)
	}
	return nil
}

// presetDefault answers the id of the custom preset the team made the pair's default, or ""
// when it made none.
func presetDefault(ctx context.Context, q db.Querier, teamID int64, c oas.ConnectorType, e oas.NotificationEntityType) (string, error) {
	var id string
	err := q.QueryRowContext(ctx,
		`SELECT preset_id FROM notification_preset_defaults WHERE team_id = $1 AND connector_type = $2 AND entity_type = $3`,
		teamID, string(c), string(e)).Scan(&id)
	if db.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find default preset: %w", err)
	}
	return id, nil
}

// listPresetsOfEntityType returns the team's custom presets of the entity type, oldest first.
func listPresetsOfEntityType(ctx context.Context, q db.Querier, teamID int64, e oas.NotificationEntityType) ([]oas.Preset, error) {
	return queryPresets(ctx, q, `team_id = $1 AND entity_type = $2`, teamID, string(e))
}

// eachPresetDefault calls yield with each pair whose default is a custom preset of the team, and
// that preset's id, by pair; it stops at yield's first error and returns it.
func eachPresetDefault(ctx context.Context, q db.Querier, teamID int64, yield func(oas.ConnectorType, oas.NotificationEntityType, string) error) error {
	rows, err := q.QueryContext(ctx,
		`SELECT connector_type, entity_type, preset_id FROM notification_preset_defaults
		 WHERE team_id = $1 ORDER BY connector_type, entity_type`, teamID)
	if err != nil {
		return fmt.Errorf("list default presets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c, e, id string
		if err := rows.Scan(&c, &e, &id); err != nil {
			return fmt.Errorf("list default presets: %w", err)
		}
		if err := yield(oas.ConnectorType(c), oas.NotificationEntityType(e), id); err != nil {
			return err
		}
	}
	return rows.Err()
}
