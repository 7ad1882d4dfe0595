// Package datausage serves a team's billable usage: the v1 query (daily or hourly UTC buckets,
// label filters, grouping, a per-bucket cap) and capabilities operations, and the operator import
// of the hourly usage records that every answer is computed from.
package datausage

import (
	"context"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// UsageHandler implements the data usage operations of oas.Handler.
type UsageHandler struct {
	db *db.DB
}

// NewHandler returns the data usage operations.
func NewHandler(database *db.DB) *UsageHandler { return &UsageHandler{db: database} }

// QueryDataUsage sums the team's usage records into the buckets of the requested range.
//
// Errors: Invalid (see resolveRange and checkQuery).
func (h *UsageHandler) QueryDataUsage(ctx context.Context, req *oas.UsageQuery) (*oas.UsageQueryResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	r, err := resolveRange(req, h.db.Now())
	if err != nil {
		return nil, err
	}
	q, err := checkQuery(req)
	if err != nil {
		return nil, err
	}
	recs, err := listRecords(ctx, h.db.Read(), caller.TeamID, r.start, r.end)
	if err != nil {
		return nil, err
	}
	return aggregate(r, q, recs), nil
}

// GetDataUsageCapabilities returns the query's limits, the measurement kinds and the label keys
// and values found in the team's records.
func (h *UsageHandler) GetDataUsageCapabilities(ctx context.Context) (*oas.UsageCapabilities, error) {
	caller := auth.PrincipalFrom(ctx)
	labels, err := labelValues(ctx, h.db.Read(), caller.TeamID)
	if err != nil {
		return nil, err
	}
	return capabilities(labels), nil
}

// AdminImportUsage stores the records for the team, each replacing the one stored for the same
// hour, kind and label set, all in one transaction.
//
// Errors: NotFound when there is no such team; Invalid (see checkRecord).
func (h *UsageHandler) AdminImportUsage(ctx context.Context, req *oas.UsageImport, params oas.AdminImportUsageParams) (*oas.UsageImportResult, error) {
	recs := make([]record, 0, len(req.Records))
	for i, r := range req.Records {
		rec, err := checkRecord(fmt.Sprintf("records[%d]", i), r)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM teams WHERE id = $1`, params.TeamID).Scan(&one)
		if db.IsNotFound(err) {
			return apierror.NotFoundf("team_id: no team %d", params.TeamID)
		}
		if err != nil {
			return fmt.Errorf("read team: %w", err)
		}
		for _, r := range recs {
			if err := upsertRecord(ctx, tx, params.TeamID, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.UsageImportResult{Stored: int64(len(recs))}, nil
}
