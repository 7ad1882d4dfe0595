package teams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apikeys"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// IssuedKey is a key IssueKey created; Value is its secret, shown once.
type IssuedKey struct {
	TeamID             int64
	TeamName           string
	KeyID, Name, Value string
}

// ErrNoTeam is IssueKey's answer when no team has the id or name it was given; the error's text
// lists the teams there are.
var ErrNoTeam = errors.New("no such team")

// maxTeamsNamed bounds the teams an ErrNoTeam message lists.
const maxTeamsNamed = 20

// IssueKey creates, in one transaction, a new API key holding every permission for the team
// named by team: its integer id, else its name. It is how a team whose keys are all lost (the
// first start's key was not kept) gets one back: `mgmtapi keys create` runs it on the database
// directly, or asks the running server to. The transaction writes an audit record of the team
// (key "mgmtapi keys create", operation CreateKeyOnTheCommandLine), so the team's audit log shows
// the key's origin. The key's name is keyName, "recovery key" when empty.
//
// Errors: ErrNoTeam (wrapped, naming the teams there are).
func IssueKey(ctx context.Context, database *db.DB, team, keyName string) (IssuedKey, error) {
	if keyName == "" {
		keyName = "recovery key"
	}
	var out IssuedKey
	ctx = db.WithAudit(ctx, &db.AuditEntry{KeyID: "command-line", KeyName: "mgmtapi keys create",
		Operation: "CreateKeyOnTheCommandLine", Client: "local", Status: 200})
	err := database.InTx(ctx, func(tx *db.Tx) error {
		// An integer is the team's id, else (a team may be named "7") its name.
		id, err := strconv.ParseInt(team, 10, 64)
		if err != nil {
			id = 0
		}
		row := tx.QueryRowContext(ctx, `SELECT id, name FROM teams WHERE id = $1 OR name = $2 ORDER BY id <> $1 LIMIT 1`, id, team)
		if err := row.Scan(&out.TeamID, &out.TeamName); db.IsNotFound(err) {
			return noTeamNamed(ctx, tx, team)
		} else if err != nil {
			return fmt.Errorf("find team %q: %w", team, err)
		}
		tx.AuditTeam(out.TeamID)
		keyID, value, err := apikeys.Insert(ctx, tx, apikeys.NewKey{
			TeamID: out.TeamID, Name: keyName, Hashed: true, Presets: []string{auth.FullAccess},
		})
		if err != nil {
			return err
		}
		out.KeyID, out.Name, out.Value = keyID, keyName, value
		return nil
	})
	return out, err
}

// noTeamNamed is ErrNoTeam with the teams there are.
func noTeamNamed(ctx context.Context, q db.Querier, team string) error {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM teams ORDER BY id LIMIT $1`, maxTeamsNamed+1)
	if err != nil {
		return fmt.Errorf("list teams: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		names = append(names, fmt.Sprintf("%q (id %d)", name, id))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch {
	case len(names) == 0:
		return fmt.Errorf("%w: the database has no team %q; it has no team at all", ErrNoTeam, team)
	case len(names) > maxTeamsNamed:
		names = append(names[:maxTeamsNamed], "…")
	}
	return fmt.Errorf("%w: the database has no team whose id or name is %q; its teams are %s", ErrNoTeam, team, strings.Join(names, ", "))
}
