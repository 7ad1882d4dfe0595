package integrations

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// instance is one registered instance of a team.
type instance struct {
	ID      string
	Service service
	Key     string // the definition's key
	Version string
	Params  []param
	Created time.Time
	Updated time.Time
}

// document is what the document column holds.
type document struct {
	Parameters []param `json:"parameters"`
}

const selectInstance = `SELECT id, service, definition_key, version, document, created_at, updated_at FROM integration_instances`

type scanner interface{ Scan(dest ...any) error }

func scanInstance(row scanner) (instance, error) {
	var in instance
	var svc, doc string
	var created, updated int64
	if err := row.Scan(&in.ID, &svc, &in.Key, &in.Version, &doc, &created, &updated); err != nil {
		return in, db.Translate(err)
	}
	var d document
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return in, fmt.Errorf("integration instance %s document: %w", in.ID, err)
	}
	in.Service, in.Params = service(svc), d.Parameters
	in.Created, in.Updated = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	return in, nil
}

// getInstance returns the team's instance id of service svc; db.ErrNotFound when there is none.
func getInstance(ctx context.Context, q db.Querier, teamID int64, svc service, id string) (instance, error) {
	return scanInstance(q.QueryRowContext(ctx, selectInstance+` WHERE team_id = $1 AND service = $2 AND id = $3`, teamID, string(svc), id))
}

// eachInstance calls yield with each of the team's instances of svc, of the definition key only
// when key is not empty, oldest first; it stops at yield's first error and returns it.
func eachInstance(ctx context.Context, q db.Querier, teamID int64, svc service, key string, yield func(instance) error) error {
	query, args := selectInstance+` WHERE team_id = $1 AND service = $2 ORDER BY created_at, id`, []any{teamID, string(svc)}
	if key != "" {
		query = selectInstance + ` WHERE team_id = $1 AND service = $2 AND definition_key = $3 ORDER BY created_at, id`
		args = append(args, key)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("list integration instances: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		in, err := scanInstance(rows)
		if err != nil {
			return err
		}
		if err := yield(in); err != nil {
			return err
		}
	}
	return rows.Err()
}

func encode(params []param) (string, error) {
	b, err := json.Marshal(document{Parameters: params})
	return string(b), err
}

func insertInstance(ctx context.Context, tx *db.Tx, teamID int64, in instance) error {
	doc, err := encode(in.Params)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO integration_instances (team_id, id, service, definition_key, version, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		teamID, in.ID, string(in.Service), in.Key, in.Version, doc, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert integration instance: %w", err)
	}
	return nil
}

func updateInstance(ctx context.Context, tx *db.Tx, teamID int64, in instance) error {
	doc, err := encode(in.Params)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE integration_instances SET version = $4, document = $5, updated_at = $6 WHERE team_id = $1 AND service = $2 AND id = $3`,
		teamID, string(in.Service), in.ID, in.Version, doc, tx.Now.UnixMicro())
	return db.OneRow(res, err, "update integration instance")
}

func deleteInstance(ctx context.Context, tx *db.Tx, teamID int64, svc service, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM integration_instances WHERE team_id = $1 AND service = $2 AND id = $3`, teamID, string(svc), id)
	return db.OneRow(res, err, "delete integration instance")
}
