package enrichments

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// lockTeam serialises the writers of the team's enrichments and data sets until the transaction
// ends (db.Tx.Serialize): the limits, the references between the two and the id counters hold
// until commit.
func lockTeam(ctx context.Context, tx *db.Tx, teamID int64) error {
	return tx.Serialize(ctx, fmt.Sprintf("mgmtapi.enrichments:%d", teamID))
}

// The kinds of the team's numbers (db.NextTeamNumber) that enrichments and data sets are given.
const (
	enrichmentIDs = "enrichment"
	dataSetIDs    = "dataSet"
)

// nextID returns the next id of kind in the team: one more than the last one given.
func nextID(ctx context.Context, tx *db.Tx, teamID int64, kind string) (int64, error) {
	id, err := db.NextTeamNumber(ctx, tx, teamID, kind)
	if err != nil {
		return 0, err
	}
	tx.AuditResource(strconv.FormatInt(id, 10))
	return id, nil
}

// reserveID records that id of kind is given in the team (a configuration document may name
// ids), so that nextID never gives it again.
func reserveID(ctx context.Context, tx *db.Tx, teamID int64, kind string, id int64) error {
	if err := db.ReserveTeamNumber(ctx, tx, teamID, kind, id); err != nil {
		return err
	}
	tx.AuditResource(strconv.FormatInt(id, 10))
	return nil
}

// dataSet is one stored data set without its rows.
type dataSet struct {
	ID          int64
	Name        string
	Description string
	FileName    string
	FileSize    int64
	Version     int64
	Header      []string
	RowCount    int64
}

// answer is the data set as the operations answer it.
func (d dataSet) answer() oas.EnrichmentDataSet {
	return oas.EnrichmentDataSet{
		ID: oas.NewOptInt64(d.ID), Name: oas.NewOptString(d.Name), Description: oas.NewOptString(d.Description),
		Version: oas.NewOptInt64(d.Version), FileName: oas.NewOptString(d.FileName),
		FileSize: oas.NewOptInt64(d.FileSize), IsQueryOnly: oas.NewOptBool(false),
	}
}

const selectDataSet = `SELECT id, name, description, file_name, file_size, version, header, row_count FROM enrichment_data_sets`

type scanner interface{ Scan(dest ...any) error }

func scanDataSet(row scanner) (dataSet, error) {
	var d dataSet
	var header string
	if err := row.Scan(&d.ID, &d.Name, &d.Description, &d.FileName, &d.FileSize, &d.Version, &header, &d.RowCount); err != nil {
		return d, db.Translate(err)
	}
	if err := json.Unmarshal([]byte(header), &d.Header); err != nil {
		return d, fmt.Errorf("data set %d header: %w", d.ID, err)
	}
	return d, nil
}

// getDataSet returns the team's data set id; db.ErrNotFound when there is none.
func getDataSet(ctx context.Context, q db.Querier, teamID, id int64) (dataSet, error) {
	return scanDataSet(q.QueryRowContext(ctx, selectDataSet+` WHERE team_id = $1 AND id = $2`, teamID, id))
}

// getDataSetByName returns the team's data set called name; db.ErrNotFound when there is none.
func getDataSetByName(ctx context.Context, q db.Querier, teamID int64, name string) (dataSet, error) {
	return scanDataSet(q.QueryRowContext(ctx, selectDataSet+` WHERE team_id = $1 AND name = $2`, teamID, name))
}

// listDataSets returns the team's data sets in the order of their ids.
func listDataSets(ctx context.Context, q db.Querier, teamID int64) ([]dataSet, error) {
	rows, err := q.QueryContext(ctx, selectDataSet+` WHERE team_id = $1 ORDER BY id`, teamID)
	if err != nil {
		return nil, fmt.Errorf("list data sets: %w", err)
	}
	defer rows.Close()
	var out []dataSet
	for rows.Next() {
		d, err := scanDataSet(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// putDataSet inserts d, or replaces the stored data set of its id when exists, with the rows of
// t in place of the old ones.
func putDataSet(ctx context.Context, tx *db.Tx, teamID int64, d dataSet, t table, exists bool) error {
	header, err := json.Marshal(t.header)
	if err != nil {
		return err
	}
	now := tx.Now.UnixMicro()
	if exists {
		tx.AuditResource(strconv.FormatInt(d.ID, 10))
		res, err := tx.ExecContext(ctx,
			`UPDATE enrichment_data_sets SET name = $3, description = $4, file_name = $5, file_size = $6, version = $7,
			 header = $8, row_count = $9, updated_at = $10 WHERE team_id = $1 AND id = $2`,
			teamID, d.ID, d.Name, d.Description, d.FileName, d.FileSize, d.Version, string(header), len(t.rows), now)
		if err := db.OneRow(res, err, "update data set"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM enrichment_data_rows WHERE team_id = $1 AND data_set_id = $2`, teamID, d.ID); err != nil {
			return fmt.Errorf("delete data set rows: %w", err)
		}
	} else {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO enrichment_data_sets (team_id, id, name, description, file_name, file_size, version, header, row_count, created_at, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
			teamID, d.ID, d.Name, d.Description, d.FileName, d.FileSize, d.Version, string(header), len(t.rows), now)
		if err != nil {
			return fmt.Errorf("insert data set: %w", db.Translate(err))
		}
	}
	return insertRows(ctx, tx, teamID, d.ID, t.rows)
}

// rowsPerInsert is how many rows one INSERT statement carries (4 parameters each, well below
// both engines' bounds on parameters).
const rowsPerInsert = 500

func insertRows(ctx context.Context, tx *db.Tx, teamID, dataSetID int64, rows [][]string) error {
	for start := 0; start < len(rows); start += rowsPerInsert {
		end := min(start+rowsPerInsert, len(rows))
		var q strings.Builder
		q.WriteString(`INSERT INTO enrichment_data_rows (team_id, data_set_id, row_index, cells) VALUES `)
		args := make([]any, 0, 4*(end-start))
		for i := start; i < end; i++ {
			cells, err := json.Marshal(rows[i])
			if err != nil {
				return err
			}
			if i > start {
				q.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&q, "($%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4)
			args = append(args, teamID, dataSetID, int64(i+1), string(cells))
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("insert data set rows: %w", err)
		}
	}
	return nil
}

// eachRow calls yield with each row of the team's data set, in file order; it stops at yield's first error, or when yield answers false.
func eachRow(ctx context.Context, q db.Querier, teamID, dataSetID int64, yield func(cells []string) (bool, error)) error {
	rows, err := q.QueryContext(ctx,
		`SELECT cells FROM enrichment_data_rows WHERE team_id = $1 AND data_set_id = $2 ORDER BY row_index`, teamID, dataSetID)
	if err != nil {
		return fmt.Errorf("read data set rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			return fmt.Errorf("read data set rows: %w", err)
		}
		var cells []string
		if err := json.Unmarshal([]byte(text), &cells); err != nil {
			return fmt.Errorf("data set %d row: %w", dataSetID, err)
		}
		more, err := yield(cells)
		if err != nil || !more {
			return err
		}
	}
	return rows.Err()
}

// readTable returns the whole stored table of the data set d.
func readTable(ctx context.Context, q db.Querier, teamID int64, d dataSet) (table, error) {
	t := table{header: d.Header, rows: make([][]string, 0, d.RowCount)}
	err := eachRow(ctx, q, teamID, d.ID, func(cells []string) (bool, error) {
		t.rows = append(t.rows, cells)
		return true, nil
	})
	return t, err
}

func deleteDataSet(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	tx.AuditResource(strconv.FormatInt(id, 10))
	if _, err := tx.ExecContext(ctx, `DELETE FROM enrichment_data_rows WHERE team_id = $1 AND data_set_id = $2`, teamID, id); err != nil {
		return fmt.Errorf("delete data set rows: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM enrichment_data_sets WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete data set")
}

// listEnrichments returns the team's enrichments in the order of their ids.
func listEnrichments(ctx context.Context, q db.Querier, teamID int64) ([]oas.Enrichment, error) {
	return queryEnrichments(ctx, q, `SELECT document FROM enrichments WHERE team_id = $1 ORDER BY id`, teamID)
}

func queryEnrichments(ctx context.Context, q db.Querier, query string, args ...any) ([]oas.Enrichment, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list enrichments: %w", err)
	}
	defer rows.Close()
	out := []oas.Enrichment{}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("list enrichments: %w", err)
		}
		var e oas.Enrichment
		if err := e.UnmarshalJSON([]byte(doc)); err != nil {
			return nil, fmt.Errorf("enrichment document: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func insertEnrichment(ctx context.Context, tx *db.Tx, teamID int64, e oas.Enrichment) error {
	doc, err := e.MarshalJSON()
	if err != nil {
		return err
	}
	kind, dataSetID := kindOf(e.EnrichmentType)
	_, err = tx.ExecContext(ctx,
		`INSERT INTO enrichments (team_id, id, kind, data_set_id, field_name, document, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		teamID, e.ID, kind, dataSetID, e.FieldName, string(doc), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert enrichment: %w", db.Translate(err))
	}
	return nil
}

func deleteEnrichment(ctx context.Context, tx *db.Tx, teamID, id int64) error {
	tx.AuditResource(strconv.FormatInt(id, 10))
	res, err := tx.ExecContext(ctx, `DELETE FROM enrichments WHERE team_id = $1 AND id = $2`, teamID, id)
	return db.OneRow(res, err, "delete enrichment")
}

// enrichmentsOf returns the team's enrichments of the data set dataSetID, in the order of their ids.
func enrichmentsOf(ctx context.Context, q db.Querier, teamID, dataSetID int64) ([]oas.Enrichment, error) {
	return queryEnrichments(ctx, q, `SELECT document FROM enrichments WHERE team_id = $1 AND data_set_id = $2 ORDER BY id`, teamID, dataSetID)
}

// countEnrichments returns how many enrichments the team holds.
func countEnrichments(ctx context.Context, q db.Querier, teamID int64) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM enrichments WHERE team_id = $1`, teamID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count enrichments: %w", err)
	}
	return n, nil
}
