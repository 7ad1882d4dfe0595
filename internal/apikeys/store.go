package apikeys

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// NewKey describes a key to store. Its fields are already checked.
type NewKey struct {
	TeamID       int64
	Name         string
	Hashed       bool
	Owner        Owner
	Permissions  []string
	Presets      []string
	AccessPolicy string
	// Value is the secret to use; a fresh random one when empty.
	Value string
}

// Owner is who a key belongs to; at most one field is set, none meaning the team itself.
type Owner struct {
	UserID         string `json:"userId,omitempty"`
	TeamID         *int64 `json:"teamId,omitempty"`
	OrganisationID string `json:"organisationId,omitempty"`
}

// Insert stores a new key in tx and returns its id and secret value. The value exists only in
// the answer: the database keeps its hash.
func Insert(ctx context.Context, tx *db.Tx, k NewKey) (id, value string, err error) {
	id = tx.NewID()
	value = k.Value
	if value == "" {
		value = auth.NewKeyValue()
	}
	owner, _ := json.Marshal(k.Owner)
	perms, _ := json.Marshal(nonNil(k.Permissions))
	presets, _ := json.Marshal(nonNil(k.Presets))
	_, err = tx.ExecContext(ctx,
		`INSERT INTO api_keys (id, team_id, name, value_hash, hashed, active, owner, permissions,
		                       presets, access_policy, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
		id, k.TeamID, k.Name, auth.HashKey(value), k.Hashed, true, string(owner), string(perms),
		string(presets), k.AccessPolicy, tx.Now.UnixMicro())
	if err != nil {
		return "", "", fmt.Errorf("insert api key: %w", err)
	}
	return id, value, nil
}

// storedKey is a row of api_keys without the hash.
type storedKey struct {
	ID           string
	Name         string
	Hashed       bool
	Active       bool
	Owner        Owner
	Permissions  []string
	Presets      []string
	AccessPolicy string
}

const keyColumns = `id, name, hashed, active, owner, permissions, presets, access_policy`

func scanKey(row interface{ Scan(...any) error }) (storedKey, error) {
	var k storedKey
	var owner, perms, presets string
	if err := row.Scan(&k.ID, &k.Name, &k.Hashed, &k.Active, &owner, &perms, &presets, &k.AccessPolicy); err != nil {
		return k, err
	}
	if err := json.Unmarshal([]byte(owner), &k.Owner); err != nil {
		return k, fmt.Errorf("key %s owner: %w", k.ID, err)
	}
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return k, fmt.Errorf("key %s permissions: %w", k.ID, err)
	}
	if err := json.Unmarshal([]byte(presets), &k.Presets); err != nil {
		return k, fmt.Errorf("key %s presets: %w", k.ID, err)
	}
	return k, nil
}

func listKeys(ctx context.Context, q db.Querier, teamID int64) ([]storedKey, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT `+keyColumns+` FROM api_keys WHERE team_id = $1 ORDER BY created_at, id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var out []storedKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// getKey returns the team's key; db.ErrNotFound when the team has no key of that id.
func getKey(ctx context.Context, q db.Querier, teamID int64, id string) (storedKey, error) {
	k, err := scanKey(q.QueryRowContext(ctx,
		`SELECT `+keyColumns+` FROM api_keys WHERE team_id = $1 AND id = $2`, teamID, id))
	return k, db.Translate(err)
}

func updateKey(ctx context.Context, tx *db.Tx, teamID int64, k storedKey) error {
	perms, _ := json.Marshal(nonNil(k.Permissions))
	presets, _ := json.Marshal(nonNil(k.Presets))
	_, err := tx.ExecContext(ctx,
		`UPDATE api_keys SET name = $3, active = $4, permissions = $5, presets = $6,
		        access_policy = $7, updated_at = $8
		  WHERE team_id = $1 AND id = $2`,
		teamID, k.ID, k.Name, k.Active, string(perms), string(presets), k.AccessPolicy, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("update api key: %w", err)
	}
	return nil
}

// deleteKey removes the team's key; db.ErrNotFound when there is none.
func deleteKey(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM api_keys WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete api key")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
