package recordingrules

import (
	"context"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// insertSet stores a new set of the team: its name and its document (the set encoded).
func insertSet(ctx context.Context, tx *db.Tx, teamID int64, id, name string, doc []byte) error {
	_, err := tx.ExecContext(ctx, insertSetStatement, teamID, id, name, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert recording rule set: %w", err)
	}
	return nil
}

// queueInsertSet is insertSet run at the end of the transaction (Tx.ExecAtEnd), for a create that
// reads nothing after it: on PostgreSQL the insert rides in the round trip that writes the audit
// record and ends the transaction, so a create costs one round trip in the group committer's
// writer instead of two. Its failure fails the transaction as "insert recording rule set: …".
func queueInsertSet(tx *db.Tx, teamID int64, id, name string, doc []byte) {
	tx.ExecAtEnd("insert recording rule set", insertSetStatement, teamID, id, name, string(doc), tx.Now.UnixMicro())
}

const insertSetStatement = `INSERT INTO recording_rule_sets (team_id, id, name, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $5)`

// replaceSet overwrites the name and document (the set encoded) of the team's set; db.ErrNotFound
// when there is none.
func replaceSet(ctx context.Context, tx *db.Tx, teamID int64, id, name string, doc []byte) error {
	res, err := tx.ExecContext(ctx,
		`UPDATE recording_rule_sets SET name = $3, document = $4, updated_at = $5
		  WHERE team_id = $1 AND id = $2`,
		teamID, id, name, string(doc), tx.Now.UnixMicro())
	return db.OneRow(res, err, "update recording rule set")
}

// deleteSet removes the team's set; db.ErrNotFound when there is none.
func deleteSet(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx,
		`DELETE FROM recording_rule_sets WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete recording rule set")
}

// getSet returns the team's set; db.ErrNotFound when there is none.
func getSet(ctx context.Context, database *db.DB, teamID int64, id string) (oas.RecordingRuleSet, error) {
	var set oas.RecordingRuleSet
	err := readDocument(ctx, database, teamID, id, func(doc []byte) error {
		if err := set.UnmarshalJSON(doc); err != nil {
			return fmt.Errorf("recording rule set %s: %w", id, err)
		}
		return nil
	})
	return set, err
}

// readDocument calls use with the stored document of the team's set and returns use's error;
// db.ErrNotFound, without calling use, when there is none. doc is valid only during the call.
// This is the read of the GET by id hot path (see db.LookupText).
func readDocument(ctx context.Context, database *db.DB, teamID int64, id string, use func(doc []byte) error) error {
	err := database.LookupText(ctx,
		`SELECT document FROM recording_rule_sets WHERE team_id = $1 AND id = $2`, use, teamID, id)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return fmt.Errorf("read recording rule set: %w", err)
	}
	return err
}

// eachSet calls yield with each of the team's sets, oldest first, reading one row at a time; it
// stops at yield's first error and returns it.
func eachSet(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.RecordingRuleSet) error) error {
	rows, err := q.QueryContext(ctx,
		`SELECT id, document FROM recording_rule_sets WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return fmt.Errorf("list recording rule sets: %w", err)
	}
	defer rows.Close()
	var id, doc string
	for rows.Next() {
		if err := rows.Scan(&id, &doc); err != nil {
			return err
		}
		var set oas.RecordingRuleSet
		if err := set.UnmarshalJSON([]byte(doc)); err != nil {
			return fmt.Errorf("recording rule set %s: %w", id, err)
		}
		if err := yield(&set); err != nil {
			return err
		}
	}
	return rows.Err()
}

// EachSet calls yield with each of the team's sets, oldest first, as stored, reading one row at a
// time; it stops at yield's first error and returns it. It is the area's read for code outside it
// (the Prometheus rule file of package promrules); q may be a transaction or the read pool.
func EachSet(ctx context.Context, q db.Querier, teamID int64, yield func(*oas.RecordingRuleSet) error) error {
	return eachSet(ctx, q, teamID, yield)
}
