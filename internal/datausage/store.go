package datausage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// upsertRecord stores r, replacing the team's record for the same hour, kind and label set.
func upsertRecord(ctx context.Context, tx *db.Tx, teamID int64, r record) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO usage_records (team_id, hour, kind, labels_key, unit, value, quota_micros, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		 ON CONFLICT (team_id, hour, kind, labels_key) DO UPDATE
		 SET unit = excluded.unit, value = excluded.value, quota_micros = excluded.quota_micros,
		     updated_at = excluded.updated_at`,
		teamID, r.hour.UnixMicro(), r.kind, r.labelsKey(), r.unit, r.value, r.quotaMicros, tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("store usage record: %w", err)
	}
	return nil
}

// listRecords returns the team's records whose hour is in [start, end).
func listRecords(ctx context.Context, q db.Querier, teamID int64, start, end time.Time) ([]record, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT hour, kind, labels_key, unit, value, quota_micros FROM usage_records
		 WHERE team_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour`,
		teamID, start.UnixMicro(), end.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("list usage records: %w", err)
	}
	defer rows.Close()
	var out []record
	for rows.Next() {
		var r record
		var hour int64
		var labels string
		if err := rows.Scan(&hour, &r.kind, &labels, &r.unit, &r.value, &r.quotaMicros); err != nil {
			return nil, fmt.Errorf("list usage records: %w", err)
		}
		r.hour = time.UnixMicro(hour).UTC()
		if r.labels, err = parseLabelsKey(labels); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// labelValues returns every label key of the team's records with its distinct values.
func labelValues(ctx context.Context, q db.Querier, teamID int64) (map[string]map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT labels_key FROM usage_records WHERE team_id = $1`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list usage labels: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, fmt.Errorf("list usage labels: %w", err)
		}
		labels, err := parseLabelsKey(key)
		if err != nil {
			return nil, err
		}
		for k, v := range labels {
			if out[k] == nil {
				out[k] = map[string]bool{}
			}
			out[k][v] = true
		}
	}
	return out, rows.Err()
}

func parseLabelsKey(s string) (map[string]string, error) {
	var pairs [][2]string
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		return nil, fmt.Errorf("usage labels: %w", err)
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p[0]] = p[1]
	}
	return m, nil
}

// The record labels other areas select records on (the E2M cardinalities, the policy forecast).
const (
	PillarLabel      = "pillar"
	ApplicationLabel = "applicationName"
	SubsystemLabel   = "subsystemName"
	SeverityLabel    = "severity"
	ServiceLabel     = "serviceName"
	ActionLabel      = "action"
)

// Record is one stored hourly usage record, as other areas read it.
type Record struct {
	Hour   time.Time         // start of the UTC hour
	Kind   string            // the measurement kind, e.g. MEASUREMENT_KIND_PROCESSED_DATA_SIZE
	Labels map[string]string // never nil
	Value  int64             // in the kind's unit (bytes for PROCESSED_DATA_SIZE)
}

// Records returns the team's usage records whose hour is in [start, end), oldest first. It only
// reads; errors are the database's.
func Records(ctx context.Context, q db.Querier, teamID int64, start, end time.Time) ([]Record, error) {
	recs, err := listRecords(ctx, q, teamID, start, end)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = Record{Hour: r.hour, Kind: r.kind, Labels: r.labels, Value: r.value}
	}
	return out, nil
}
