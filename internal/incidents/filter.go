package incidents

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// sqlArgs collects the parameters of one statement and hands out their placeholders.
type sqlArgs struct{ list []any }

func (a *sqlArgs) add(v any) string {
	a.list = append(a.list, v)
	return "$" + strconv.Itoa(len(a.list))
}

func (a *sqlArgs) in(values []string) string {
	ph := make([]string, len(values))
	for i, v := range values {
		ph[i] = a.add(v)
	}
	return strings.Join(ph, ", ")
}

func enumStrings[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

// instr is the engine's "position of a substring" function.
func instr(engine db.Engine) string {
	if engine == db.Postgres {
		return "strpos"
	}
	return "instr"
}

// searchColumns are the incident fields a search query may look into.
var searchColumns = map[oas.IncidentFields]string{
	oas.IncidentFieldsINCIDENTSFIELDSID:              "i.id",
	oas.IncidentFieldsINCIDENTSFIELDSSEVERITY:        "i.severity",
	oas.IncidentFieldsINCIDENTSFIELDSNAME:            "i.name",
	oas.IncidentFieldsINCIDENTSFIELDSSTATE:           "i.state",
	oas.IncidentFieldsINCIDENTSFIELDSSTATUS:          "i.status",
	oas.IncidentFieldsINCIDENTSFIELDSAPPLICATIONNAME: "i.application_name",
	oas.IncidentFieldsINCIDENTSFIELDSSUBSYSTEMNAME:   "i.subsystem_name",
}

// filterSQL returns the FROM clause and the conditions (joined by AND, starting with the team)
// that select the incidents (table alias i) matching f, whose parameters it adds to args. prefix
// is the filter's path in messages ("filter").
//
// A contextual-label filter with values drives the query from the label index (CROSS JOIN keeps
// SQLite from scanning every incident of the team and probing each against the label set); so
// does, failing one, a display-label filter with values (incident_display_labels).
//
// Errors: Invalid for a search query that names no field or label, or both, or a field that
// cannot be searched.
func filterSQL(engine db.Engine, teamID int64, f oas.IncidentQueryFilter, prefix string, args *sqlArgs) (from, where string, err error) {
	return filterSQLFrom(engine, teamID, f, prefix, args, driveFromLabels)
}

// filterMode says how filterSQLFrom writes the conditions on contextual labels.
type filterMode int

const (
	// driveFromLabels: a label filter with values drives the query from the label's rows.
	driveFromLabels filterMode = iota
	// seekLabels: every label condition is a seek of the incident's own label row.
	seekLabels
	// onLabelRows: the query reads incident_labels (alias i) instead of the incidents, one row per
	// incident carrying the filter's one label key; for filters that labelRowsFilter accepts.
	onLabelRows
)

// labelRowsFilter reports whether the incidents matching f can be read as the rows of
// incident_labels of one key (which carry every column of incident_rollup's key and the three
// times): f involves exactly one contextual label key (filtered on or searched in) and otherwise
// only what incident_rollup can filter on.
func labelRowsFilter(f oas.IncidentQueryFilter) bool {
	_, _, ok := labelRollupQuery(aggQuery{filter: f})
	return ok && (f.ContextualLabels.Set || (f.SearchQuery.Set && f.SearchQuery.Value.ContextualLabel.Set))
}

// labelValuesFilter reports whether f, which labelRowsFilter accepts, names the label's values:
// its rows are then an index range, where a search in the values reads every row of the key.
func labelValuesFilter(f oas.IncidentQueryFilter) bool {
	for _, l := range f.ContextualLabels.Value {
		if len(l.ContextualLabelValues) > 0 {
			return true
		}
	}
	return false
}

// filterSQLFrom is filterSQL; without drive, a contextual-label filter with values is a condition
// on each incident's own label row (EXISTS) and from is always the incidents, for queries that
// read few incidents found by another index. Both forms take the same parameters in the same
// order.
func filterSQLFrom(engine db.Engine, teamID int64, f oas.IncidentQueryFilter, prefix string, args *sqlArgs, mode filterMode) (from, where string, err error) {
	drive := mode == driveFromLabels
	team := args.add(teamID)
	from = "incidents i"
	if mode == onLabelRows {
		from = labelRowsFrom
	}
	conds := []string{"i.team_id = " + team}
	inList := func(col string, values []string) {
		if len(values) > 0 {
			conds = append(conds, col+" IN ("+args.in(values)+")")
		}
	}
	inList("i.application_name", f.ApplicationName)
	inList("i.subsystem_name", f.SubsystemName)
	inList("i.assigned_to", f.Assignee)
	inList("i.severity", enumStrings(f.Severity))
	inList("i.state", enumStrings(f.State))
	inList("i.status", enumStrings(f.Status))
	if labels, ok := f.ContextualLabels.Get(); ok {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals := labels[k].ContextualLabelValues
			if mode == onLabelRows {
				conds = append(conds, "i.key = "+args.add(k))
				if len(vals) > 0 {
					conds = append(conds, "i.value IN ("+args.in(vals)+")")
				}
				continue
			}
			if drive && from == "incidents i" && len(vals) > 0 {
				from = "incident_labels lf CROSS JOIN incidents i"
				conds = append(conds, "lf.team_id = "+team, "lf.key = "+args.add(k), "lf.value IN ("+args.in(vals)+")",
					"i.id = lf.incident_id")
				continue
			}
			// the incident's own label row, one seek (incident_labels_by_incident): a list of every
			// incident with the key would be built whole first, however few rows the query reads
			c := "EXISTS (SELECT 1 FROM incident_labels l WHERE l.team_id = i.team_id AND l.incident_id = i.id AND l.key = " + args.add(k)
			if len(vals) > 0 {
				c += " AND l.value IN (" + args.in(vals) + ")"
			}
			conds = append(conds, c+")")
		}
	}
	if labels, ok := f.DisplayLabels.Get(); ok {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals := labels[k].DisplayLabelValues
			if drive && from == "incidents i" && len(vals) > 0 {
				// the incidents that carry the label, from its rows (incident_display_labels_by_key)
				from = "incident_display_labels df CROSS JOIN incidents i"
				conds = append(conds, "df.team_id = "+team, "df.key = "+args.add(k), "df.value IN ("+args.in(vals)+")",
					"i.id = df.incident_id")
				continue
			}
			// the incident's own row, one seek (the primary key)
			c := "EXISTS (SELECT 1 FROM incident_display_labels d WHERE d.team_id = i.team_id AND d.incident_id = i.id AND d.key = " + args.add(k)
			if len(vals) > 0 {
				c += " AND d.value IN (" + args.in(vals) + ")"
			}
			conds = append(conds, c+")")
		}
	}
	if len(f.MetaLabels) > 0 {
		// The column is canonical JSON, so a label's encoding is a substring of it exactly when
		// the incident has the label; a key alone matches any value, a value alone any key.
		var parts []string
		for _, l := range f.MetaLabels {
			var needle string
			switch {
			case l.Key.Set && l.Value.Set:
				needle = `{"key":` + jsonString(l.Key.Value) + `,"value":` + jsonString(l.Value.Value) + `}`
			case l.Key.Set:
				needle = `{"key":` + jsonString(l.Key.Value) + `,"value":`
			case l.Value.Set:
				needle = `,"value":` + jsonString(l.Value.Value) + `}`
			default:
				needle = `{"key":`
			}
			parts = append(parts, instr(engine)+"(i.meta_labels, "+args.add(needle)+") > 0")
		}
		op := " OR "
		if f.MetaLabelsOp.Or(oas.IncidentQueryFilterMetaLabelsOpFILTEROPERATORORORUNSPECIFIED) == oas.IncidentQueryFilterMetaLabelsOpFILTEROPERATORAND {
			op = " AND "
		}
		conds = append(conds, "("+strings.Join(parts, op)+")")
	}
	if muted, ok := f.IsMuted.Get(); ok {
		conds = append(conds, "i.is_muted = "+args.add(muted))
	}
	if r, ok := f.CreatedAtRange.Get(); ok {
		conds = append(conds, "i.created_at >= "+args.add(micros(r.StartTime)), "i.created_at < "+args.add(micros(r.EndTime)))
	}
	open := func(start, end *time.Time) {
		if end != nil {
			conds = append(conds, "i.created_at < "+args.add(micros(*end)))
		}
		if start != nil {
			conds = append(conds, "(i.closed_at IS NULL OR i.closed_at >= "+args.add(micros(*start))+")")
		}
	}
	if r, ok := f.IncidentDurationRange.Get(); ok {
		open(&r.StartTime, &r.EndTime)
	}
	var start, end *time.Time
	// The deprecated startTime/endTime pair means what incidentDurationRange means.
	//lint:ignore SA1019 still served for older clients
	if t, ok := f.StartTime.Get(); ok {
		start = &t
	}
	//lint:ignore SA1019 still served for older clients
	if t, ok := f.EndTime.Get(); ok {
		end = &t
	}
	open(start, end)
	if sq, ok := f.SearchQuery.Get(); ok {
		path := prefix + ".searchQuery"
		needle := args.add(strings.ToLower(sq.Query))
		switch {
		case sq.IncidentField.Set == sq.ContextualLabel.Set:
			return "", "", apierror.Invalidf("%s: must set exactly one of incidentField, contextualLabel", path)
		case sq.IncidentField.Set:
			col, ok := searchColumns[sq.IncidentField.Value]
			if !ok {
				return "", "", apierror.Invalidf("%s.incidentField: %s cannot be searched; searchable fields are ID, SEVERITY, NAME, STATE, STATUS, APPLICATION_NAME, SUBSYSTEM_NAME", path, sq.IncidentField.Value)
			}
			conds = append(conds, instr(engine)+"(lower("+col+"), "+needle+") > 0")
		case mode == onLabelRows:
			conds = append(conds, "i.key = "+args.add(sq.ContextualLabel.Value), instr(engine)+"(lower(i.value), "+needle+") > 0")
		default:
			conds = append(conds, "EXISTS (SELECT 1 FROM incident_labels l WHERE l.team_id = i.team_id AND l.incident_id = i.id"+
				" AND l.key = "+args.add(sq.ContextualLabel.Value)+" AND "+instr(engine)+"(lower(l.value), "+needle+") > 0)")
		}
	}
	if len(args.list) > maxFilterValues {
		return "", "", apierror.Invalidf("%s: has %d values in all; at most %d are allowed", prefix, len(args.list), maxFilterValues)
	}
	return from, strings.Join(conds, " AND "), nil
}

// maxFilterValues keeps a statement under SQLite's limit of 32766 parameters.
const maxFilterValues = 30000

// Schemas of E18's query objects, for queryobject.Decode.
var (
	stringArray = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}}
	timeRange   = &queryobject.Schema{Kind: queryobject.Object, Required: []string{"startTime", "endTime"}, Fields: map[string]*queryobject.Schema{
		"startTime": {Kind: queryobject.DateTime},
		"endTime":   {Kind: queryobject.DateTime},
	}}
	metaLabelSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"key":   {Kind: queryobject.String},
		"value": {Kind: queryobject.String},
	}}
	fieldsEnum = &queryobject.Schema{Kind: queryobject.String, Enum: enumStrings(oas.IncidentFields("").AllValues())}

	filterSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"applicationName": stringArray,
		"subsystemName":   stringArray,
		"assignee":        stringArray,
		"severity":        enumArray(enumStrings(oas.IncidentSeverity("").AllValues())),
		"state":           enumArray(enumStrings(oas.IncidentState("").AllValues())),
		"status":          enumArray(enumStrings(oas.IncidentStatus("").AllValues())),
		"contextualLabels": {Kind: queryobject.Map, Elem: &queryobject.Schema{Kind: queryobject.Object,
			Required: []string{"contextualLabelValues"},
			Fields:   map[string]*queryobject.Schema{"contextualLabelValues": stringArray}}},
		"displayLabels": {Kind: queryobject.Map, Elem: &queryobject.Schema{Kind: queryobject.Object,
			Required: []string{"displayLabelValues"},
			Fields:   map[string]*queryobject.Schema{"displayLabelValues": stringArray}}},
		"metaLabels":            {Kind: queryobject.Array, Elem: metaLabelSchema},
		"metaLabelsOp":          {Kind: queryobject.String, Enum: enumStrings(oas.IncidentQueryFilterMetaLabelsOp("").AllValues())},
		"isMuted":               {Kind: queryobject.Boolean},
		"createdAtRange":        timeRange,
		"incidentDurationRange": timeRange,
		"startTime":             {Kind: queryobject.DateTime},
		"endTime":               {Kind: queryobject.DateTime},
		"searchQuery": {Kind: queryobject.Object, Required: []string{"query"}, Fields: map[string]*queryobject.Schema{
			"query":           {Kind: queryobject.String},
			"incidentField":   fieldsEnum,
			"contextualLabel": {Kind: queryobject.String},
		}},
	}}
	groupBysSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"incidentField":    fieldsEnum,
		"contextualLabel":  {Kind: queryobject.String},
		"orderByDirection": {Kind: queryobject.String, Enum: enumStrings(oas.OrderByDirection("").AllValues())},
	}}}
	paginationSchema = &queryobject.Schema{Kind: queryobject.Object, Required: []string{"pageSize"}, Fields: map[string]*queryobject.Schema{
		"pageSize":  {Kind: queryobject.Integer},
		"pageToken": {Kind: queryobject.String},
	}}
)

func enumArray(values []string) *queryobject.Schema {
	return &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String, Enum: values}}
}
