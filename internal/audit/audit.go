// Package audit is the operator's view of the audit log and its retention. The records are
// written by internal/db, in the transaction of the change they describe, from the entry the API
// layer puts on each mutation request (see db.AuditEntry and internal/api/audit.go); this package
// lists a team's records (GET /admin/v1/teams/{team_id}/audit) and prunes the old ones.
package audit

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	// defaultPageSize is the page size when the request names none.
	defaultPageSize = 100
	// pageTokenPrefix marks the page tokens of this list (inside their base64).
	pageTokenPrefix = "audit.v1."
)

// RecordHandler implements the audit operations of oas.Handler.
type RecordHandler struct {
	db *db.DB
}

// NewHandler returns the audit operations over database.
func NewHandler(database *db.DB) *RecordHandler { return &RecordHandler{db: database} }

// AdminListAuditRecords lists a team's audit records newest first (by time, then by record id),
// between from (inclusive) and to (exclusive), of one operation and one key when asked, a page at
// a time. A page token holds the position of the previous page's last record, so records written
// while a client pages never shift the pages.
//
// Errors: Invalid when to is not after from, or the page token is not one of this list; NotFound
// when there is no such team.
func (h *RecordHandler) AdminListAuditRecords(ctx context.Context, params oas.AdminListAuditRecordsParams) (*oas.AuditRecordList, error) {
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if t, ok := params.From.Get(); ok {
		from = t.UnixMicro()
	}
	if t, ok := params.To.Get(); ok {
		to = t.UnixMicro()
	}
	if to <= from {
		return nil, apierror.Invalidf("to: must be after from (%s), not %s",
			params.From.Value.Format(time.RFC3339Nano), params.To.Value.Format(time.RFC3339Nano))
	}
	afterAt, afterID := int64(math.MaxInt64), int64(math.MaxInt64)
	if token, ok := params.PageToken.Get(); ok {
		var valid bool
		if afterAt, afterID, valid = parsePageToken(token); !valid {
			return nil, apierror.Invalidf("pageToken: not a page token of this list; pass nextPageToken unchanged")
		}
	}
	size := int(params.PageSize.Or(defaultPageSize))
	q := h.db.Read()
	var exists bool
	if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM teams WHERE id = $1)`, params.TeamID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look up team: %w", err)
	}
	if !exists {
		return nil, apierror.NotFoundf("team_id: no team %d", params.TeamID)
	}
	rows, err := q.QueryContext(ctx,
		`SELECT id, at, key_id, key_name, operation, resource_ids, request_id, client, status
		   FROM audit_records
		  WHERE team_id = $1 AND at >= $2 AND at < $3
		    AND ($4 = '' OR operation = $4) AND ($5 = '' OR key_id = $5)
		    AND (at < $6 OR (at = $6 AND id < $7))
		  ORDER BY at DESC, id DESC
		  LIMIT $8`,
		params.TeamID, from, to, params.Operation.Or(""), params.KeyId.Or(""), afterAt, afterID, size+1)
	if err != nil {
		return nil, fmt.Errorf("list audit records: %w", err)
	}
	defer rows.Close()
	out := &oas.AuditRecordList{Records: []oas.AuditRecord{}}
	var lastAt, lastID int64
	for rows.Next() {
		if len(out.Records) == size {
			out.NextPageToken = oas.NewOptString(pageToken(lastAt, lastID))
			break
		}
		var (
			r         oas.AuditRecord
			id, at    int64
			resources string
		)
		if err := rows.Scan(&id, &at, &r.KeyId, &r.KeyName, &r.Operation, &resources, &r.RequestId,
			&r.ClientAddress, &r.Status); err != nil {
			return nil, fmt.Errorf("list audit records: %w", err)
		}
		if err := json.Unmarshal([]byte(resources), &r.ResourceIds); err != nil {
			return nil, fmt.Errorf("audit record %d: resource ids: %w", id, err)
		}
		if r.ResourceIds == nil {
			r.ResourceIds = []string{}
		}
		r.ID = strconv.FormatInt(id, 10)
		r.Time = time.UnixMicro(at).UTC()
		r.TeamId = params.TeamID
		out.Records = append(out.Records, r)
		lastAt, lastID = at, id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit records: %w", err)
	}
	return out, nil
}

func pageToken(at, id int64) string {
	return base64.RawURLEncoding.EncodeToString(
		[]byte(pageTokenPrefix + strconv.FormatInt(at, 10) + "." + strconv.FormatInt(id, 10)))
}

func parsePageToken(token string) (at, id int64, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, 0, false
	}
	rest, ok := strings.CutPrefix(string(b), pageTokenPrefix)
	if !ok {
		return 0, 0, false
	}
	atText, idText, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, 0, false
	}
	at, err1 := strconv.ParseInt(atText, 10, 64)
	id, err2 := strconv.ParseInt(idText, 10, 64)
	return at, id, err1 == nil && err2 == nil
}

// pruneBatch is how many records one pruning transaction deletes: small, so that on SQLite the
// single writer is never held long by pruning and the requests' writes interleave with it.
const pruneBatch = 500

// Prune deletes the records older than before (of every team), team by team and oldest first
// within a team, pruneBatch records per transaction, until none is left or ctx ends; it returns
// how many it deleted. Replicas may prune at the same time: a record is deleted once.
//
// It walks the teams through the (team_id, at, id) index that the list reads, one indexed
// MIN per team that has records, so that records need no second index on (at, id): every
// audited write would pay for it (migration 0031 dropped it).
func Prune(ctx context.Context, database *db.DB, before time.Time) (int, error) {
	return prune(ctx, database, before, pruneBatch)
}

func prune(ctx context.Context, database *db.DB, before time.Time, batch int) (int, error) {
	total := 0
	team := int64(math.MinInt64)
	for ctx.Err() == nil {
		var next sql.NullInt64
		if err := database.Read().QueryRowContext(ctx,
			`SELECT MIN(team_id) FROM audit_records WHERE team_id > $1`, team).Scan(&next); err != nil {
			return total, fmt.Errorf("prune audit records: %w", err)
		}
		if !next.Valid {
			return total, nil
		}
		team = next.Int64
		n, err := pruneTeam(ctx, database, team, before, batch)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, ctx.Err()
}

// pruneTeam deletes one team's records older than before, oldest first, batch per transaction.
func pruneTeam(ctx context.Context, database *db.DB, team int64, before time.Time, batch int) (int, error) {
	total := 0
	for ctx.Err() == nil {
		var n int64
		err := database.InTx(ctx, func(tx *db.Tx) error {
			res, err := tx.ExecContext(ctx,
				`DELETE FROM audit_records WHERE id IN (
				   SELECT id FROM audit_records WHERE team_id = $1 AND at < $2 ORDER BY at, id LIMIT $3)`,
				team, before.UnixMicro(), batch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune audit records: %w", err)
		}
		total += int(n)
		if n < int64(batch) {
			return total, nil
		}
	}
	return total, ctx.Err()
}

// PruneInterval is how often KeepPruned prunes.
const PruneInterval = time.Hour

// KeepPruned prunes the records older than retention at once and then every PruneInterval, until
// ctx ends; a failed round is logged and the next one tries again. A retention of 0 keeps every
// record (it returns at once).
func KeepPruned(ctx context.Context, database *db.DB, retention time.Duration, logger *slog.Logger) {
	if retention <= 0 {
		return
	}
	ticker := time.NewTicker(PruneInterval)
	defer ticker.Stop()
	for {
		n, err := Prune(ctx, database, database.Now().Add(-retention))
		if err != nil && ctx.Err() == nil {
			logger.Warn("audit record pruning failed", "error", err.Error())
		} else if n > 0 {
			logger.Info("audit records pruned", "count", n, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
