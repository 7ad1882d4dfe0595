package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// keptWithTeam are the tables whose rows of a team outlive it: its audit records, which tell who
// deleted it and what was done before.
var keptWithTeam = []string{"audit_records"}

// DeleteTeam removes the team and every row of every table with a team_id column that names it
// (but keptWithTeam's), in tx: all of it or, when tx rolls back, nothing. Tables are found in the
// database's own catalogue, so a table added later is covered without a change here. Rows that
// other rows of the team refer to are deleted after them: each pass deletes what it can, each
// table's delete in a savepoint of its own, until a pass deletes nothing more.
//
// Errors: ErrNotFound when there is no such team; a table whose rows cannot be deleted (a
// reference from outside the team) fails with the database's error.
func DeleteTeam(ctx context.Context, tx *Tx, teamID int64) error {
	tables, err := teamTables(ctx, tx)
	if err != nil {
		return err
	}
	for len(tables) > 0 {
		var left []string
		var lastErr error
		for i, table := range tables {
			savepoint := fmt.Sprintf("team_rows_%d", i)
			if _, err := tx.ExecContext(ctx, `SAVEPOINT `+savepoint); err != nil {
				return fmt.Errorf("delete team %d: %w", teamID, err)
			}
			// The table name comes from the database's catalogue, never from a request.
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(table)+` WHERE team_id = $1`, teamID); err != nil {
				if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT `+savepoint); rerr != nil {
					return fmt.Errorf("delete team %d: %w", teamID, rerr)
				}
				left, lastErr = append(left, table), fmt.Errorf("delete team %d rows of %s: %w", teamID, table, err)
			}
			if _, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT `+savepoint); err != nil {
				return fmt.Errorf("delete team %d: %w", teamID, err)
			}
		}
		if len(left) == len(tables) {
			return lastErr
		}
		tables = left
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM teams WHERE id = $1`, teamID)
	return OneRow(res, err, "delete team")
}

// teamTables lists the tables that have a team_id column, by name.
func teamTables(ctx context.Context, tx *Tx) ([]string, error) {
	query := `SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
	           WHERE m.type = 'table' AND c.name = 'team_id' ORDER BY m.name`
	if tx.Engine == Postgres {
		query = `SELECT c.table_name FROM information_schema.columns c
		           JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		          WHERE c.table_schema = current_schema() AND c.column_name = 'team_id' AND t.table_type = 'BASE TABLE'
		          ORDER BY c.table_name`
	}
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("list team tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if !slices.Contains(keptWithTeam, name) {
			out = append(out, name)
		}
	}
	return out, rows.Err()
}

func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
