package slos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// insertSlo stores s, whose id, times and revision are already set.
func insertSlo(ctx context.Context, tx *db.Tx, teamID int64, s oas.Slo) error {
	doc, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO slos (team_id, id, revision, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $5)`,
		teamID, s.ID.Or(""), int64(s.Revision.Value.Revision.Or(1)), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert slo: %w", err)
	}
	return nil
}

// updateSlo overwrites the team's SLO s.ID with s; db.ErrNotFound when there is none.
func updateSlo(ctx context.Context, tx *db.Tx, teamID int64, s oas.Slo) error {
	doc, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE slos SET revision = $3, document = $4, updated_at = $5 WHERE team_id = $1 AND id = $2`,
		teamID, s.ID.Or(""), int64(s.Revision.Value.Revision.Or(1)), string(doc), tx.Now.UnixMicro())
	return db.OneRow(res, err, "update slo")
}

// deleteSlo removes the team's SLO; db.ErrNotFound when there is none.
func deleteSlo(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM slos WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete slo")
}

type scanner interface{ Scan(dest ...any) error }

func scanSlo(row scanner) (oas.Slo, error) {
	var s oas.Slo
	var id, doc string
	if err := row.Scan(&id, &doc); err != nil {
		return s, db.Translate(err)
	}
	if err := s.UnmarshalJSON([]byte(doc)); err != nil {
		return s, fmt.Errorf("slo %s document: %w", id, err)
	}
	return s, nil
}

// getSlo returns the team's SLO; db.ErrNotFound when there is none.
func getSlo(ctx context.Context, q db.Querier, teamID int64, id string) (oas.Slo, error) {
	return scanSlo(q.QueryRowContext(ctx, `SELECT id, document FROM slos WHERE team_id = $1 AND id = $2`, teamID, id))
}

// getSloForUpdate is getSlo that, on PostgreSQL, also locks the row until the transaction ends, so
// that concurrent replaces count revisions one after the other (SQLite's single writer already
// does).
func getSloForUpdate(ctx context.Context, tx *db.Tx, teamID int64, id string) (oas.Slo, error) {
	query := `SELECT id, document FROM slos WHERE team_id = $1 AND id = $2`
	if tx.Engine == db.Postgres {
		query += ` FOR UPDATE`
	}
	return scanSlo(tx.QueryRowContext(ctx, query, teamID, id))
}

// eachSlo calls yield with each of the team's SLOs by create time, then id, reading one row at a
// time; it stops at yield's first error and returns it.
func eachSlo(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.Slo) error) error {
	rows, err := q.QueryContext(ctx,
		`SELECT id, document FROM slos WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list slos: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSlo(rows)
		if err != nil {
			return err
		}
		if err := yield(&s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// hasSlos tells whether the team has at least one SLO.
func hasSlos(ctx context.Context, q db.Querier, teamID int64) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM slos WHERE team_id = $1 LIMIT 1`, teamID).Scan(&one)
	if db.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for slos: %w", err)
	}
	return true, nil
}

// sloMap returns the team's SLOs among ids, by id.
func sloMap(ctx context.Context, q db.Querier, teamID int64, ids []string) (map[string]oas.Slo, error) {
	out := make(map[string]oas.Slo, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, teamID)
	marks := make([]string, 0, len(ids))
	for _, id := range ids {
		args = append(args, id)
		marks = append(marks, "$"+strconv.Itoa(len(args)))
	}
	rows, err := q.QueryContext(ctx,
		`SELECT id, document FROM slos WHERE team_id = $1 AND id IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("batch get slos: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSlo(rows)
		if err != nil {
			return nil, err
		}
		out[s.ID.Or("")] = s
	}
	return out, rows.Err()
}

// LockTeam serialises, until the transaction ends, the deletes of the team's SLOs and every
// writer that checks one exists (alert definitions on an SLO), so an SLO checked to exist stays
// so until commit (db.Tx.Serialize).
func LockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.slos:%d", teamID))
}

// Exists reports whether the team has SLO id (in either case of its hex digits), read in q.
func Exists(ctx context.Context, q db.Querier, teamID int64, id string) (bool, error) {
	_, err := getSlo(ctx, q, teamID, strings.ToLower(id))
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
