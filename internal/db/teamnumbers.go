package db

import (
	"context"
	"fmt"
)

// NextTeamNumber takes the team's next number of kind (a kind of numbered resource: "member",
// "group", "enrichment", "dataSet", …), starting at 1, from the table team_numbers. The upsert
// locks the team's counter row of that kind until the transaction ends, so concurrent creates get
// distinct numbers and a rolled-back create gives its number back.
func NextTeamNumber(ctx context.Context, tx *Tx, teamID int64, kind string) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx,
		`INSERT INTO team_numbers (team_id, kind, last_id) VALUES ($1, $2, 1)
		 ON CONFLICT (team_id, kind) DO UPDATE SET last_id = team_numbers.last_id + 1
		 RETURNING last_id`, teamID, kind).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("next %s number: %w", kind, err)
	}
	return n, nil
}

// ReserveTeamNumber makes the team's counter of kind at least n, so that NextTeamNumber never
// hands out a number that was given otherwise (a configuration document names its ids).
func ReserveTeamNumber(ctx context.Context, tx *Tx, teamID int64, kind string, n int64) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO team_numbers (team_id, kind, last_id) VALUES ($1, $2, $3)
		 ON CONFLICT (team_id, kind) DO UPDATE SET last_id = CASE WHEN team_numbers.last_id < $3 THEN $3 ELSE team_numbers.last_id END`,
		teamID, kind, n)
	if err != nil {
		return fmt.Errorf("reserve %s number: %w", kind, err)
	}
	return nil
}
