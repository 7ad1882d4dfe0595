package apikeys

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

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
	// Kind is auth.KindAPI (when empty) or auth.KindSendData.
	Kind string
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
	kind := k.Kind
	if kind == "" {
		kind = auth.KindAPI
	}
	owner, _ := json.Marshal(k.Owner)
	perms, _ := json.Marshal(nonNil(k.Permissions))
	presets, _ := json.Marshal(nonNil(k.Presets))
	_, err = tx.ExecContext(ctx,
		`INSERT INTO api_keys (id, team_id, name, value_hash, hashed, active, owner, permissions,
		                       presets, access_policy, kind, created_at, updated_at, activated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $12)`,
		id, k.TeamID, k.Name, auth.HashKey(value), k.Hashed, true, string(owner), string(perms),
		string(presets), k.AccessPolicy, kind, tx.Now.UnixMicro())
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
	Kind         string
	CreatedAt    time.Time
	// ActivatedAt is when the key was created or last switched from inactive to active.
	ActivatedAt time.Time
}

const keyColumns = `id, name, hashed, active, owner, permissions, presets, access_policy, kind, created_at, activated_at`

func scanKey(row interface{ Scan(...any) error }) (storedKey, error) {
	var k storedKey
	var owner, perms, presets string
	var created, activated int64
	if err := row.Scan(&k.ID, &k.Name, &k.Hashed, &k.Active, &owner, &perms, &presets, &k.AccessPolicy,
		&k.Kind, &created, &activated); err != nil {
		return k, err
	}
	k.CreatedAt = time.UnixMicro(created).UTC()
	k.ActivatedAt = time.UnixMicro(activated).UTC()
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

// listKeys returns the team's keys of one kind (auth.KindAPI or auth.KindSendData), oldest first.
func listKeys(ctx context.Context, q db.Querier, teamID int64, kind string) ([]storedKey, error) {
	return queryKeys(ctx, q, `team_id = $1 AND kind = $2`, teamID, kind)
}

// queryKeys returns the keys that where (an SQL condition over args) selects, oldest first.
func queryKeys(ctx context.Context, q db.Querier, where string, args ...any) ([]storedKey, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT `+keyColumns+` FROM api_keys WHERE `+where+` ORDER BY created_at, id`, args...)
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

// listUserOwnedKeys returns the team's keys, of both kinds, whose owner is a user, by user id and
// then oldest first.
func listUserOwnedKeys(ctx context.Context, q db.Querier, teamID int64) ([]storedKey, error) {
	keys, err := queryKeys(ctx, q, `team_id = $1`, teamID)
	if err != nil {
		return nil, err
	}
	var out []storedKey
	for _, k := range keys {
		if k.Owner.UserID != "" {
			out = append(out, k)
		}
	}
	// Oldest first within a user, as queryKeys read them.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Owner.UserID < out[j].Owner.UserID })
	return out, nil
}

// updateKey writes k's changeable fields; ActivatedAt is written as given.
func updateKey(ctx context.Context, tx *db.Tx, teamID int64, k storedKey) error {
	perms, _ := json.Marshal(nonNil(k.Permissions))
	presets, _ := json.Marshal(nonNil(k.Presets))
	_, err := tx.ExecContext(ctx,
		`UPDATE api_keys SET name = $3, active = $4, permissions = $5, presets = $6,
		        access_policy = $7, updated_at = $8, activated_at = $9
		  WHERE team_id = $1 AND id = $2`,
		teamID, k.ID, k.Name, k.Active, string(perms), string(presets), k.AccessPolicy, tx.Now.UnixMicro(),
		k.ActivatedAt.UnixMicro())
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

// SendDataKey is a team's send-data key as other areas see it (an integration's API key
// parameter names one): its id and whether it is active. Its value is never available.
type SendDataKey struct {
	ID     string
	Active bool
}

// SendDataKeys returns the team's send-data keys, oldest first.
func SendDataKeys(ctx context.Context, q db.Querier, teamID int64) ([]SendDataKey, error) {
	keys, err := listKeys(ctx, q, teamID, auth.KindSendData)
	if err != nil {
		return nil, err
	}
	out := make([]SendDataKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, SendDataKey{ID: k.ID, Active: k.Active})
	}
	return out, nil
}

// FindSendDataKey returns the team's send-data key of that id or, when id is empty, of that
// value (compared by its hash). db.ErrNotFound when the team has no such send-data key.
func FindSendDataKey(ctx context.Context, q db.Querier, teamID int64, id, value string) (SendDataKey, error) {
	where, arg := `id = $3`, id
	if id == "" {
		where, arg = `value_hash = $3`, auth.HashKey(value)
	}
	keys, err := queryKeys(ctx, q, `team_id = $1 AND kind = $2 AND `+where, teamID, auth.KindSendData, arg)
	if err != nil {
		return SendDataKey{}, err
	}
	if len(keys) == 0 {
		return SendDataKey{}, db.ErrNotFound
	}
	return SendDataKey{ID: keys[0].ID, Active: keys[0].Active}, nil
}
