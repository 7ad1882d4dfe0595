package enrichments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// The query objects of SearchEnrichmentDataSetContents.
const (
	clausesParameter = "search_clauses"
	filtersParameter = "filters"
)

// Bounds of a search, as the document states them.
const (
	maxClauses      = 1000
	maxFilterItems  = 100
	maxFilterValues = 100
	maxFilterDepth  = 8
	maxFilterText   = 1024
)

var clausesSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object,
	Fields: map[string]*queryobject.Schema{"id": {Kind: queryobject.Integer}, "name": {Kind: queryobject.String}}}}

// filtersSchema is EnrichmentRowFilters, whose items may nest filters of the same shape.
var filtersSchema = func() *queryobject.Schema {
	filters := &queryobject.Schema{Kind: queryobject.Object, Required: []string{"pathAndValues"}, Fields: map[string]*queryobject.Schema{
		"operator": {Kind: queryobject.String, Enum: []string{"FILTER_OPERATOR_AND_OR_UNSPECIFIED", "FILTER_OPERATOR_OR"}},
	}}
	item := &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"path": {Kind: queryobject.String},
		"multipleValues": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"matcher": {Kind: queryobject.String, Enum: []string{"FILTER_MATCHER_TEXT_OR_UNSPECIFIED", "FILTER_MATCHER_REGEXP"}},
			"values":  {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}},
		}},
		"filters": filters,
	}}
	filters.Fields["pathAndValues"] = &queryobject.Schema{Kind: queryobject.Array, Elem: item}
	return filters
}()

type clause struct {
	ID   *int64  `json:"id"`
	Name *string `json:"name"`
}

type filtersQuery struct {
	Operator      string        `json:"operator"`
	PathAndValues []filterQuery `json:"pathAndValues"`
}

type filterQuery struct {
	Path           string `json:"path"`
	MultipleValues *struct {
		Matcher string   `json:"matcher"`
		Values  []string `json:"values"`
	} `json:"multipleValues"`
	Filters *filtersQuery `json:"filters"`
}

// rowFilter is a checked filtersQuery: conditions joined by AND, or by OR when any.
type rowFilter struct {
	any   bool
	items []rowCondition
}

// rowCondition is one condition: a column's cell equals one of values or matches one of
// patterns, or nested holds.
type rowCondition struct {
	column   string
	values   []string
	patterns []*regexp.Regexp
	nested   *rowFilter
}

// checkFilters turns f, found at path, into a rowFilter.
//
// Errors: Invalid naming the field: too many items or values, an item with neither or both of
// multipleValues and filters, no values, a pattern that does not compile, nesting past
// maxFilterDepth.
func checkFilters(path string, f filtersQuery, depth int) (*rowFilter, error) {
	if depth > maxFilterDepth {
		return nil, apierror.Invalidf("%s: filters nest more than %d levels deep", path, maxFilterDepth)
	}
	if len(f.PathAndValues) > maxFilterItems {
		return nil, apierror.Invalidf("%s.pathAndValues: at most %d conditions, got %d", path, maxFilterItems, len(f.PathAndValues))
	}
	out := &rowFilter{any: f.Operator == "FILTER_OPERATOR_OR"}
	for i, item := range f.PathAndValues {
		at := fmt.Sprintf("%s.pathAndValues[%d]", path, i)
		switch {
		case item.MultipleValues != nil && item.Filters != nil:
			return nil, apierror.Invalidf("%s: exactly one of multipleValues and filters, got both", at)
		case item.Filters != nil:
			nested, err := checkFilters(at+".filters", *item.Filters, depth+1)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, rowCondition{nested: nested})
		case item.MultipleValues != nil:
			mv := item.MultipleValues
			if item.Path == "" {
				return nil, apierror.Invalidf("%s.path: required, the column whose cells are compared", at)
			}
			if len(mv.Values) == 0 || len(mv.Values) > maxFilterValues {
				return nil, apierror.Invalidf("%s.multipleValues.values: 1 to %d values, got %d", at, maxFilterValues, len(mv.Values))
			}
			if utf8.RuneCountInString(item.Path) > maxFilterText {
				return nil, apierror.Invalidf("%s.path: at most %d characters", at, maxFilterText)
			}
			for j, v := range mv.Values {
				if utf8.RuneCountInString(v) > maxFilterText {
					return nil, apierror.Invalidf("%s.multipleValues.values[%d]: at most %d characters", at, j, maxFilterText)
				}
			}
			c := rowCondition{column: item.Path}
			if mv.Matcher == "FILTER_MATCHER_REGEXP" {
				for j, v := range mv.Values {
					re, err := regexp.Compile(v)
					if err != nil {
						return nil, apierror.Invalidf("%s.multipleValues.values[%d]: not a regular expression (%v)", at, j, err)
					}
					c.patterns = append(c.patterns, re)
				}
			} else {
				c.values = mv.Values
			}
			out.items = append(out.items, c)
		default:
			return nil, apierror.Invalidf("%s: one of multipleValues and filters is required", at)
		}
	}
	return out, nil
}

// columns returns the columns f names, each once.
func (f *rowFilter) columns(into []string) []string {
	for _, c := range f.items {
		if c.nested != nil {
			into = c.nested.columns(into)
		} else if !slices.Contains(into, c.column) {
			into = append(into, c.column)
		}
	}
	return into
}

// matches reports whether the row cells of a table with header holds under f; a column the
// header lacks matches nothing.
func (f *rowFilter) matches(header, cells []string) bool {
	if f == nil || len(f.items) == 0 {
		return true
	}
	for _, c := range f.items {
		if c.holds(header, cells) == f.any {
			return f.any
		}
	}
	return !f.any
}

func (c rowCondition) holds(header, cells []string) bool {
	if c.nested != nil {
		return c.nested.matches(header, cells)
	}
	i := slices.Index(header, c.column)
	if i < 0 || i >= len(cells) {
		return false
	}
	if slices.Contains(c.values, cells[i]) {
		return true
	}
	return slices.ContainsFunc(c.patterns, func(re *regexp.Regexp) bool { return re.MatchString(cells[i]) })
}

// readSearch reads the search's query objects.
//
// Errors: Invalid naming the parameter.
func readSearch(ctx context.Context) ([]clause, *rowFilter, error) {
	values := queryobject.Values(ctx)
	var clauses []clause
	if doc, err := queryobject.Decode(values, clausesParameter, clausesSchema); err != nil {
		return nil, nil, err
	} else if doc != nil {
		if err := json.Unmarshal(doc, &clauses); err != nil {
			return nil, nil, apierror.Invalidf("%s: must be clauses of an integer id or a name", clausesParameter)
		}
	}
	if len(clauses) > maxClauses {
		return nil, nil, apierror.Invalidf("%s: at most %d clauses, got %d", clausesParameter, maxClauses, len(clauses))
	}
	for i, c := range clauses {
		at := fmt.Sprintf("%s[%d]", clausesParameter, i)
		switch {
		case (c.ID == nil) == (c.Name == nil):
			return nil, nil, apierror.Invalidf("%s: exactly one of id and name names a data set", at)
		case c.ID != nil && (*c.ID < 0 || *c.ID > 2147483647):
			return nil, nil, apierror.Invalidf("%s.id: must be between 0 and 2147483647", at)
		case c.Name != nil && !namePattern.MatchString(*c.Name):
			return nil, nil, apierror.Invalidf("%s.name: 1 to 255 letters, digits and underscores", at)
		}
	}
	doc, err := queryobject.Decode(values, filtersParameter, filtersSchema)
	if err != nil || doc == nil {
		return clauses, nil, err
	}
	var f filtersQuery
	if err := json.Unmarshal(doc, &f); err != nil {
		return nil, nil, apierror.Invalidf("%s: must be an object with operator and pathAndValues", filtersParameter)
	}
	filter, err := checkFilters(filtersParameter, f, 1)
	return clauses, filter, err
}

// namePattern is a data set's name: the public `^\w+$`, 1 to 255 characters.
var namePattern = regexp.MustCompile(`^\w{1,255}$`)

// SearchEnrichmentDataSetContents answers the chosen data sets (search_clauses; all when none)
// with their rows that match filters, as CSV text, at most page_size rows from page_token on;
// nextPageToken reads on. With page_size, a data set without rows on the page is left out;
// without it, every chosen data set is answered, with its header at least.
//
// Errors: Invalid for a malformed clause, filter or page token, or a filter column no chosen
// data set has; NotFound for a clause naming a data set the team lacks.
func (h *EnrichmentHandler) SearchEnrichmentDataSetContents(ctx context.Context, params oas.SearchEnrichmentDataSetContentsParams) (*oas.EnrichmentDataSetContents, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	clauses, filter, err := readSearch(ctx)
	if err != nil {
		return nil, err
	}
	var skip int64
	if tok, ok := params.PageToken.Get(); ok && tok != "" {
		if skip, err = strconv.ParseInt(tok, 10, 64); err != nil || skip < 0 {
			return nil, apierror.Invalidf("page_token: not a token this operation gave; give back nextPageToken as it came")
		}
	}
	pageSize, paged := params.PageSize.Get()
	q := h.db.Read()
	sets, err := chosenDataSets(ctx, q, teamID, clauses)
	if err != nil {
		return nil, err
	}
	if filter != nil {
		for _, c := range filter.columns(nil) {
			if !slices.ContainsFunc(sets, func(d dataSet) bool { return slices.Contains(d.Header, c) }) {
				return nil, apierror.Invalidf("%s: no chosen data set has a column %q", filtersParameter, c)
			}
		}
	}
	out := &oas.EnrichmentDataSetContents{CustomEnrichmentsData: []oas.EnrichmentDataSetContent{}}
	var matched, taken int64
	more := false
	for _, d := range sets {
		if more {
			break
		}
		// The rows are read by one statement, a snapshot; an update committed between reading
		// the definition and the rows shows as a new version, and the data set is read again.
		var rows [][]string
		var found, took int64
		var stop bool
		for attempt := 0; ; attempt++ {
			rows, found, took, stop = nil, matched, taken, false
			err := eachRow(ctx, q, teamID, d.ID, func(cells []string) (bool, error) {
				if !filter.matches(d.Header, cells) {
					return true, nil
				}
				found++
				if found <= skip {
					return true, nil
				}
				if paged && took == pageSize {
					stop = true
					return false, nil
				}
				took++
				rows = append(rows, cells)
				return true, nil
			})
			if err != nil {
				return nil, err
			}
			now, err := getDataSet(ctx, q, teamID, d.ID)
			if errors.Is(err, db.ErrNotFound) {
				break // deleted meanwhile: answered as it was before
			}
			if err != nil {
				return nil, err
			}
			if now.Version == d.Version || attempt == 2 {
				break
			}
			d = now
		}
		matched, taken, more = found, took, stop
		if paged && len(rows) == 0 {
			continue
		}
		out.CustomEnrichmentsData = append(out.CustomEnrichmentsData, oas.EnrichmentDataSetContent{
			Definition: oas.NewOptEnrichmentDataSet(d.answer()), Textual: oas.NewOptString(renderCSV(d.Header, rows)),
		})
	}
	if more {
		out.NextPageToken = oas.NewOptString(strconv.FormatInt(skip+taken, 10))
	}
	return out, nil
}

// chosenDataSets returns the data sets the clauses name, each once, in the order of their ids;
// every data set of the team when there is no clause.
//
// Errors: NotFound naming the first clause that names no data set of the team.
func chosenDataSets(ctx context.Context, q db.Querier, teamID int64, clauses []clause) ([]dataSet, error) {
	all, err := listDataSets(ctx, q, teamID)
	if err != nil || len(clauses) == 0 {
		return all, err
	}
	var out []dataSet
	for i, c := range clauses {
		j := slices.IndexFunc(all, func(d dataSet) bool {
			return (c.ID != nil && d.ID == *c.ID) || (c.Name != nil && d.Name == *c.Name)
		})
		if j < 0 {
			if c.ID != nil {
				return nil, dataSetNotFound(fmt.Sprintf("%s[%d].id", clausesParameter, i), *c.ID)
			}
			return nil, apierror.NotFoundf("%s[%d].name: no custom enrichment data set called %q in this team", clausesParameter, i, *c.Name)
		}
		if !slices.ContainsFunc(out, func(d dataSet) bool { return d.ID == all[j].ID }) {
			out = append(out, all[j])
		}
	}
	slices.SortFunc(out, func(a, b dataSet) int { return int(a.ID - b.ID) })
	return out, nil
}
