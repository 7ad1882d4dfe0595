package enrichments

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// maxID is the largest id the public documents allow a data set or an enrichment.
const maxID = 2147483647

// takeID removes the optional "id" field from the JSON object doc and returns it (0 when
// absent) with the rest of the object.
//
// Errors: Invalid naming id when it is not an integer from 1 to maxID.
func takeID(doc []byte) (int64, []byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return 0, nil, teamconfig.Invalidf("body: %v", err)
	}
	var id int64
	if raw, ok := fields["id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil || id < 1 || id > maxID {
			return 0, nil, apierror.Invalidf("id: must be an integer from 1 to %d, got %s", maxID, raw)
		}
		delete(fields, "id")
	}
	rest, err := json.Marshal(fields)
	return id, rest, err
}

// resourceID is id as a resource id of a plan; "" for 0 (the team's next id).
func resourceID(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// parseResourceID reads a plan's resource id.
func parseResourceID(what, id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0, apierror.Invalidf("id: %q is not a %s id", id, what)
	}
	return n, nil
}

// DataSetConfiguration is the custom enrichment data sets' part of a team's configuration
// document (teamconfig.Area): each data set as {id, name, description, file: {name, textual}},
// its contents as CSV text as the search answers them, checked as CreateEnrichmentDataSet's body
// (checkFile) and stored by createDataSet and replaceDataSet, as the HTTP operations do (a
// replace adds one to the version). A data set keeps its id; one without gets the team's next.
// A data set that enrichments name is not deleted (409): the enrichments come after the data
// sets in the document, so prune removes them first.
type DataSetConfiguration struct{}

// Key implements teamconfig.Area.
func (DataSetConfiguration) Key() string { return "enrichmentDataSets" }

// Permissions implements teamconfig.Area: those of the data sets' read and write operations.
func (DataSetConfiguration) Permissions() (read, write string) {
	return "team-custom-enrichment:ReadConfig", "team-custom-enrichment:UpdateConfig"
}

// dataSetDocument is a data set in a configuration document, its fields in this order.
type dataSetDocument struct {
	ID          int64  `json:"id,omitempty"`
	Name        string `json:"name"`
	Description string `json:"description"`
	File        struct {
		Name    string `json:"name"`
		Textual string `json:"textual"`
	} `json:"file"`
}

func dataSetResource(d dataSet, t table) (teamconfig.Resource, error) {
	doc := dataSetDocument{ID: d.ID, Name: d.Name, Description: d.Description}
	doc.File.Name, doc.File.Textual = d.FileName, renderCSV(t.header, t.rows)
	encoded, err := json.Marshal(doc)
	return teamconfig.Resource{ID: resourceID(d.ID), Name: d.Name, Doc: encoded, Value: preparedDataSet{set: d, table: t}}, err
}

// preparedDataSet is a data set of a document, checked.
type preparedDataSet struct {
	set   dataSet
	table table
}

// Export implements teamconfig.Area.
func (DataSetConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	sets, err := listDataSets(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(sets))
	for _, d := range sets {
		t, err := readTable(ctx, q, teamID, d)
		if err != nil {
			return nil, err
		}
		r, err := dataSetResource(d, t)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Prepare implements teamconfig.Area: the body of CreateEnrichmentDataSet with the data set's
// id; the file's textual (or binary) CSV is parsed as the operation parses it.
func (DataSetConfiguration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	id, body, err := takeID(doc)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.CreateEnrichmentDataSetRequest
	if err := teamconfig.DecodeBody(oas.CreateEnrichmentDataSetOperation, body, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	up, err := checkFile(in.File, in.Name)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	d := dataSet{ID: id, Name: in.Name, Description: in.Description.Or(""), FileName: up.name, FileSize: up.size,
		Version: 1, Header: up.table.header, RowCount: int64(len(up.table.rows))}
	return dataSetResource(d, up.table)
}

// Put implements teamconfig.Area.
func (DataSetConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	p := r.Value.(preparedDataSet)
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	if exists {
		return replaceDataSet(ctx, tx, teamID, "id", &p.set, p.table)
	}
	return createDataSet(ctx, tx, teamID, &p.set, p.table)
}

// Delete implements teamconfig.Area.
func (DataSetConfiguration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	n, err := parseResourceID("data set", id)
	if err != nil {
		return err
	}
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	d, err := getDataSet(ctx, tx, teamID, n)
	if errors.Is(err, db.ErrNotFound) {
		return dataSetNotFound("id", n)
	}
	if err != nil {
		return err
	}
	return removeDataSet(ctx, tx, teamID, d)
}

// Configuration is the enrichments' part of a team's configuration document
// (teamconfig.Area): each enrichment as ListEnrichments answers it, checked as an element of
// AddEnrichments's body (checkInput) and stored with the same rules (the data set exists and has
// the selected columns, one enrichment per field and type, the team's limit), and the caller
// holds the permission of its kind. An enrichment keeps its id; one without gets the team's next.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "enrichments" }

// Permissions implements teamconfig.Area: those of the enrichment operations.
func (Configuration) Permissions() (read, write string) {
	return "geo-enrichment:ReadConfig", "geo-enrichment:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	all, err := listEnrichments(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamconfig.Resource, 0, len(all))
	for _, e := range all {
		doc, err := e.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, teamconfig.Resource{ID: resourceID(e.ID), Name: e.FieldName, Doc: doc, Value: e})
	}
	return out, nil
}

// Prepare implements teamconfig.Area: an element of AddEnrichments's body with the enrichment's
// id.
func (Configuration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	id, body, err := takeID(doc)
	if err != nil {
		return teamconfig.Resource{}, err
	}
	var in oas.AddEnrichmentsRequest
	if err := teamconfig.DecodeBodyOf(oas.AddEnrichmentsOperation, "requestEnrichments", []byte("["+string(body)+"]"), &in); err != nil {
		return teamconfig.Resource{}, err
	}
	e, err := checkInput("", in.RequestEnrichments[0])
	if err != nil {
		return teamconfig.Resource{}, err
	}
	e.ID = id
	encoded, err := e.MarshalJSON()
	if err == nil && id == 0 {
		encoded, err = teamconfig.WithoutFields(encoded, "id")
	}
	return teamconfig.Resource{ID: resourceID(id), Name: e.FieldName, Doc: encoded, Value: e}, err
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, exists bool) error {
	e := r.Value.(oas.Enrichment)
	if err := checkPermissions(auth.PrincipalFrom(ctx), "apply", []oas.Enrichment{e}); err != nil {
		return err
	}
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	current, err := listEnrichments(ctx, tx, teamID)
	if err != nil {
		return err
	}
	var others []oas.Enrichment
	for _, c := range current {
		if c.ID != e.ID {
			others = append(others, c)
		}
	}
	if exists {
		if err := deleteEnrichment(ctx, tx, teamID, e.ID); err != nil {
			return err
		}
	} else if e.ID != 0 {
		if err := reserveID(ctx, tx, teamID, enrichmentIDs, e.ID); err != nil {
			return err
		}
	}
	return storeWithID(ctx, tx, teamID, others, e)
}

// storeWithID stores e, which keeps its id (the team's next when 0), beside kept, with the rules
// of store.
//
// Errors: as store.
func storeWithID(ctx context.Context, tx *db.Tx, teamID int64, kept []oas.Enrichment, e oas.Enrichment) error {
	if n := len(kept) + 1; n > Limit {
		return apierror.LimitExceededf("enrichments: the team would hold %d enrichments, more than its limit of %d", n, Limit)
	}
	if err := checkReference(ctx, tx, teamID, "", e); err != nil {
		return err
	}
	for _, k := range kept {
		if identity(k) == identity(e) {
			return apierror.Conflictf("fieldName: enrichment %d already enriches %q this way", k.ID, e.FieldName)
		}
	}
	if e.ID == 0 {
		id, err := nextID(ctx, tx, teamID, enrichmentIDs)
		if err != nil {
			return err
		}
		e.ID = id
	}
	return insertEnrichment(ctx, tx, teamID, e)
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	n, err := parseResourceID("enrichment", id)
	if err != nil {
		return err
	}
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	current, err := listEnrichments(ctx, tx, teamID)
	if err != nil {
		return err
	}
	for _, e := range current {
		if e.ID == n {
			if err := checkPermissions(auth.PrincipalFrom(ctx), "remove", []oas.Enrichment{e}); err != nil {
				return err
			}
			return deleteEnrichment(ctx, tx, teamID, n)
		}
	}
	return apierror.NotFoundf("id: no enrichment %d in this team", n)
}
