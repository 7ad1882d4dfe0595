package outgoingwebhooks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// lockTeam serialises the writers of the team's webhooks until the transaction ends (db.Tx.Serialize),
// so that the count bound and the next external id hold until commit.
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.outgoingwebhooks:%d", teamID))
}

// stored is one stored webhook: its data as clients wrote it (settings in clear) and the columns.
type stored struct {
	ID         string
	ExternalID int64
	Data       oas.OutgoingWebhookInputData
	Created    time.Time
	Updated    time.Time
}

const selectWebhook = `SELECT id, external_id, document, created_at, updated_at FROM outgoing_webhooks`

type scanner interface{ Scan(dest ...any) error }

func scanWebhook(row scanner) (stored, error) {
	var s stored
	var doc string
	var created, updated int64
	if err := row.Scan(&s.ID, &s.ExternalID, &doc, &created, &updated); err != nil {
		return s, db.Translate(err)
	}
	if err := s.Data.UnmarshalJSON([]byte(doc)); err != nil {
		return s, fmt.Errorf("outgoing webhook document: %w", err)
	}
	s.Created = time.UnixMicro(created).UTC()
	s.Updated = time.UnixMicro(updated).UTC()
	return s, nil
}

// getWebhook returns the team's webhook named by ref: its id, or its external id when ref is a
// decimal number no webhook has as id. db.ErrNotFound when there is none.
func getWebhook(ctx context.Context, q db.Querier, teamID int64, ref string) (stored, error) {
	s, err := scanWebhook(q.QueryRowContext(ctx, selectWebhook+` WHERE team_id = $1 AND id = $2`, teamID, ref))
	if !errors.Is(err, db.ErrNotFound) {
		return s, err
	}
	n, perr := strconv.ParseInt(ref, 10, 64)
	if perr != nil || n < 0 || strconv.FormatInt(n, 10) != ref {
		return s, err
	}
	return scanWebhook(q.QueryRowContext(ctx, selectWebhook+` WHERE team_id = $1 AND external_id = $2`, teamID, n))
}

// eachWebhook calls yield with each of the team's webhooks, oldest first, of typ only when typ
// is not empty; it stops at yield's first error and returns it.
func eachWebhook(ctx context.Context, q db.Querier, teamID int64, typ string, yield func(stored) error) error {
	query, args := selectWebhook+` WHERE team_id = $1 ORDER BY created_at, id`, []any{teamID}
	if typ != "" {
		query, args = selectWebhook+` WHERE team_id = $1 AND webhook_type = $2 ORDER BY created_at, id`, []any{teamID, typ}
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("list outgoing webhooks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanWebhook(rows)
		if err != nil {
			return err
		}
		if err := yield(s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// countByType returns the number of the team's webhooks of each type.
func countByType(ctx context.Context, q db.Querier, teamID int64) (map[string]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT webhook_type, COUNT(*) FROM outgoing_webhooks WHERE team_id = $1 GROUP BY webhook_type`, teamID)
	if err != nil {
		return nil, fmt.Errorf("count outgoing webhooks: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var t string
		var n int64
		if err := rows.Scan(&t, &n); err != nil {
			return nil, fmt.Errorf("count outgoing webhooks: %w", err)
		}
		out[t] = n
	}
	return out, rows.Err()
}

// nextExternalID returns how many webhooks the team holds and the external id of its next one
// (one more than the largest it ever had, so an id is not given twice while the largest stays).
func nextExternalID(ctx context.Context, tx *db.Tx, teamID int64) (count int, next int64, err error) {
	var largest int64
	err = tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(external_id), 0) FROM outgoing_webhooks WHERE team_id = $1`, teamID).
		Scan(&count, &largest)
	if err != nil {
		return 0, 0, fmt.Errorf("count outgoing webhooks: %w", err)
	}
	return count, largest + 1, nil
}

func insertWebhook(ctx context.Context, tx *db.Tx, teamID int64, s stored) error {
	doc, err := s.Data.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO outgoing_webhooks (team_id, id, external_id, webhook_type, name, document, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		teamID, s.ID, s.ExternalID, string(s.Data.Type.Or("")), s.Data.Name.Or(""), string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert outgoing webhook: %w", err)
	}
	return nil
}

func updateWebhook(ctx context.Context, tx *db.Tx, teamID int64, s stored) error {
	doc, err := s.Data.MarshalJSON()
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE outgoing_webhooks SET webhook_type = $3, name = $4, document = $5, updated_at = $6 WHERE team_id = $1 AND id = $2`,
		teamID, s.ID, string(s.Data.Type.Or("")), s.Data.Name.Or(""), string(doc), tx.Now.UnixMicro())
	return db.OneRow(res, err, "update outgoing webhook")
}

func deleteWebhook(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM outgoing_webhooks WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete outgoing webhook")
}
