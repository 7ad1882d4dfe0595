package enrichments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// dataSetNotFound is the answer for a data set the team does not have.
func dataSetNotFound(field string, id int64) error {
	return apierror.NotFoundf("%s: no custom enrichment data set %d in this team", field, id)
}

// upload is a checked data set file: its table, its name and its size in bytes.
type upload struct {
	table table
	name  string
	size  int64
}

// checkFile reads f: exactly one of textual and binary, parsed by parseCSV. The file's name is
// its own, or the data set's name with ".csv" when it has none.
//
// Errors: Invalid naming the field (and the line, see parseCSV).
func checkFile(f oas.EnrichmentDataSetFile, setName string) (upload, error) {
	var data []byte
	field := "file.textual"
	switch {
	case f.Textual.Set && f.Binary != nil:
		return upload{}, apierror.Invalidf("file: exactly one of textual and binary holds the CSV, got both")
	case f.Textual.Set:
		data = []byte(f.Textual.Value)
	case f.Binary != nil:
		data, field = f.Binary, "file.binary"
	default:
		return upload{}, apierror.Invalidf("file: one of textual and binary is required; it holds the CSV")
	}
	t, err := parseCSV(field, data)
	if err != nil {
		return upload{}, err
	}
	return upload{table: t, name: f.Name.Or(setName + ".csv"), size: int64(len(data))}, nil
}

// checkHeaderKeepsColumns refuses a new header that lacks a column that one of users (the data
// set's enrichments) selects.
//
// Errors: Conflict naming the enrichment and the column.
func checkHeaderKeepsColumns(header []string, users []oas.Enrichment) error {
	for _, e := range users {
		for _, c := range e.SelectedColumns {
			if !slices.Contains(header, c) {
				return apierror.Conflictf("file: line 1: enrichment %d (field %q) selects column %q, which the new header lacks; keep the column or change the enrichment first",
					e.ID, e.FieldName, c)
			}
		}
	}
	return nil
}

// ListEnrichmentDataSets answers the team's data sets in the order of their ids.
func (h *EnrichmentHandler) ListEnrichmentDataSets(ctx context.Context) (*oas.EnrichmentDataSetList, error) {
	sets, err := listDataSets(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID)
	if err != nil {
		return nil, err
	}
	out := make([]oas.EnrichmentDataSet, len(sets))
	for i, d := range sets {
		out[i] = d.answer()
	}
	return &oas.EnrichmentDataSetList{CustomEnrichments: out}, nil
}

// GetEnrichmentDataSet answers the data set id without its contents.
//
// Errors: NotFound when the team has no such data set.
func (h *EnrichmentHandler) GetEnrichmentDataSet(ctx context.Context, params oas.GetEnrichmentDataSetParams) (*oas.EnrichmentDataSetEnvelope, error) {
	d, err := getDataSet(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID, params.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, dataSetNotFound("id", params.ID)
	}
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentDataSetEnvelope{CustomEnrichment: d.answer()}, nil
}

// CreateEnrichmentDataSet parses the file and stores the data set with its rows under the team's
// next id, at version 1.
//
// Errors: Invalid (checkFile); Conflict when the team has a data set of that name;
// LimitExceeded when it holds MaxDataSets.
func (h *EnrichmentHandler) CreateEnrichmentDataSet(ctx context.Context, req *oas.CreateEnrichmentDataSetRequest) (*oas.EnrichmentDataSetChanged, error) {
	caller := auth.PrincipalFrom(ctx)
	up, err := checkFile(req.File, req.Name)
	if err != nil {
		return nil, err
	}
	d := dataSet{Name: req.Name, Description: req.Description.Or(""), FileName: up.name, FileSize: up.size, Version: 1,
		Header: up.table.header, RowCount: int64(len(up.table.rows))}
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		return createDataSet(ctx, tx, caller.TeamID, &d, up.table)
	})
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentDataSetChanged{CustomEnrichment: oas.NewOptEnrichmentDataSet(d.answer()),
		Message: oas.NewOptString(fmt.Sprintf("custom enrichment data set %q created with %d rows", d.Name, d.RowCount))}, nil
}

// createDataSet stores d (its id given by the team's counter when 0) with the rows of t, under
// the team's lock.
//
// Errors: Conflict for a name or id the team has; LimitExceeded past MaxDataSets.
func createDataSet(ctx context.Context, tx *db.Tx, teamID int64, d *dataSet, t table) error {
	sets, err := listDataSets(ctx, tx, teamID)
	if err != nil {
		return err
	}
	if len(sets) >= MaxDataSets {
		return apierror.LimitExceededf("name: the team holds %d custom enrichment data sets, the most it may; delete one first", len(sets))
	}
	if i := slices.IndexFunc(sets, func(o dataSet) bool { return o.Name == d.Name }); i >= 0 {
		return apierror.Conflictf("name: the team has a custom enrichment data set called %q (id %d); names are unique", d.Name, sets[i].ID)
	}
	if d.ID == 0 {
		if d.ID, err = nextID(ctx, tx, teamID, dataSetIDs); err != nil {
			return err
		}
	} else if slices.ContainsFunc(sets, func(o dataSet) bool { return o.ID == d.ID }) {
		return apierror.Conflictf("id: the team has a custom enrichment data set %d", d.ID)
	} else if err := reserveID(ctx, tx, teamID, dataSetIDs, d.ID); err != nil {
		return err
	}
	return putDataSet(ctx, tx, teamID, *d, t, false)
}

// UpdateEnrichmentDataSet replaces the data set's name, description and contents in one
// transaction, adding one to its version.
//
// Errors: Invalid (checkFile); NotFound when the team has no such data set; Conflict for a name
// another data set has, or a header that lacks a column an enrichment selects.
func (h *EnrichmentHandler) UpdateEnrichmentDataSet(ctx context.Context, req *oas.UpdateEnrichmentDataSetRequest) (*oas.EnrichmentDataSetChanged, error) {
	caller := auth.PrincipalFrom(ctx)
	up, err := checkFile(req.File, req.Name)
	if err != nil {
		return nil, err
	}
	var d dataSet
	err = h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		d = dataSet{ID: req.CustomEnrichmentId, Name: req.Name, Description: req.Description.Or(""), FileName: up.name, FileSize: up.size,
			Header: up.table.header, RowCount: int64(len(up.table.rows))}
		return replaceDataSet(ctx, tx, caller.TeamID, "customEnrichmentId", &d, up.table)
	})
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentDataSetChanged{CustomEnrichment: oas.NewOptEnrichmentDataSet(d.answer()),
		Message: oas.NewOptString(fmt.Sprintf("custom enrichment data set %q updated to version %d with %d rows", d.Name, d.Version, d.RowCount))}, nil
}

// replaceDataSet replaces the stored data set d.ID with d and the rows of t, setting d.Version
// to the stored version plus one, under the team's lock.
//
// Errors: NotFound naming idField; Conflict (see UpdateEnrichmentDataSet).
func replaceDataSet(ctx context.Context, tx *db.Tx, teamID int64, idField string, d *dataSet, t table) error {
	old, err := getDataSet(ctx, tx, teamID, d.ID)
	if errors.Is(err, db.ErrNotFound) {
		return dataSetNotFound(idField, d.ID)
	}
	if err != nil {
		return err
	}
	if other, err := getDataSetByName(ctx, tx, teamID, d.Name); err == nil && other.ID != d.ID {
		return apierror.Conflictf("name: the team has another custom enrichment data set called %q (id %d); names are unique", d.Name, other.ID)
	} else if err != nil && !errors.Is(err, db.ErrNotFound) {
		return err
	}
	users, err := enrichmentsOf(ctx, tx, teamID, d.ID)
	if err != nil {
		return err
	}
	if err := checkHeaderKeepsColumns(t.header, users); err != nil {
		return err
	}
	d.Version = old.Version + 1
	return putDataSet(ctx, tx, teamID, *d, t, true)
}

// DeleteEnrichmentDataSet deletes the data set and its rows.
//
// Errors: NotFound when the team has no such data set; Conflict while enrichments name it.
func (h *EnrichmentHandler) DeleteEnrichmentDataSet(ctx context.Context, params oas.DeleteEnrichmentDataSetParams) (*oas.EnrichmentDataSetDeleted, error) {
	caller := auth.PrincipalFrom(ctx)
	var name string
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		if err := lockTeam(ctx, tx, caller.TeamID); err != nil {
			return err
		}
		d, err := getDataSet(ctx, tx, caller.TeamID, params.ID)
		if errors.Is(err, db.ErrNotFound) {
			return dataSetNotFound("id", params.ID)
		}
		if err != nil {
			return err
		}
		name = d.Name
		return removeDataSet(ctx, tx, caller.TeamID, d)
	})
	if err != nil {
		return nil, err
	}
	return &oas.EnrichmentDataSetDeleted{CustomEnrichmentId: oas.NewOptInt64(params.ID),
		Message: oas.NewOptString(fmt.Sprintf("custom enrichment data set %q deleted", name))}, nil
}

// removeDataSet deletes d unless enrichments name it.
//
// Errors: Conflict naming the enrichments.
func removeDataSet(ctx context.Context, tx *db.Tx, teamID int64, d dataSet) error {
	users, err := enrichmentsOf(ctx, tx, teamID, d.ID)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		names := make([]string, len(users))
		for i, e := range users {
			names[i] = fmt.Sprintf("%d (field %q)", e.ID, e.FieldName)
		}
		return apierror.Conflictf("id: custom enrichment data set %d (%q) is used by enrichments %s; remove them first",
			d.ID, d.Name, strings.Join(names, ", "))
	}
	return deleteDataSet(ctx, tx, teamID, d.ID)
}
