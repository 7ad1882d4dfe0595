package alertevents

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// Bounds of the feed's requests (the public documents give none for most of them).
const (
	defaultPageSize = 100
	maxPageSize     = 1000
	maxPageToken    = 4096
	maxOrderBys     = 20
	maxFilterDepth  = 4
	maxFilterItems  = 50
	// maxFilterEntries bounds the entries of a filter tree, all levels together.
	maxFilterEntries = 200
	// maxQueryArgs bounds the values one read hands the database (SQLite takes 32766).
	maxQueryArgs    = 20000
	maxFilterValues = 100
	maxValueLength  = 1024
	maxPathLength   = 256
	maxListItems    = 1000
	maxTypes        = 100
	maxLabelMatches = 50
	// maxRegexpValues bounds the stored values a regular-expression filter may select.
	maxRegexpValues = 10000
	// countLimit is where counting stops (reachedLimit).
	countLimit = 100000
	// maxStatValues is the most values answered per key in the statistics.
	maxStatValues = 1000
	// maxSamples is the most permutations sampled per definition and status.
	maxSamples = 10
	// eventType is the type of every event mgmtapi records.
	eventType = "alert"
)

var (
	str      = &queryobject.Schema{Kind: queryobject.String}
	strList  = &queryobject.Schema{Kind: queryobject.Array, Elem: str}
	dateTime = &queryobject.Schema{Kind: queryobject.DateTime}

	timeRangeSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"from": dateTime, "to": dateTime,
	}}
	pageSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"pageSize": {Kind: queryobject.Integer}, "pageToken": str,
	}}
	feedOrderSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"fieldName": {Kind: queryobject.String, Enum: []string{"ORDER_BY_FIELDS_UNSPECIFIED", "ORDER_BY_FIELDS_TIMESTAMP"}},
		"direction": {Kind: queryobject.String, Enum: []string{"ORDER_BY_DIRECTION_UNSPECIFIED", "ORDER_BY_DIRECTION_ASC", "ORDER_BY_DIRECTION_DESC"}},
	}}}
	alertEventOrderSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"fieldName": {Kind: queryobject.String, Enum: []string{"ORDER_BY_ALERT_EVENT_FIELDS_UNSPECIFIED", "ORDER_BY_ALERT_EVENT_FIELDS_TIMESTAMP"}},
		"direction": {Kind: queryobject.String, Enum: []string{"ORDER_BY_ALERT_EVENT_DIRECTION_UNSPECIFIED", "ORDER_BY_ALERT_EVENT_DIRECTION_ASC", "ORDER_BY_ALERT_EVENT_DIRECTION_DESC"}},
	}}}
	labelsSchema = &queryobject.Schema{Kind: queryobject.Map, Elem: str}

	filtersSchema = &queryobject.Schema{Kind: queryobject.Object}
	filterSchema  = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"timestamp":                    timeRangeSchema,
		"platformEventTypes":           strList,
		"platformEventKeys":            strList,
		"platformEventLabelsFilters":   filtersSchema,
		"platformEventMetadataFilters": filtersSchema,
	}}
	batchFilterSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"timestamp": timeRangeSchema,
	}}
)

func init() {
	// Filters nest: an entry may hold filters of its own.
	filtersSchema.Fields = map[string]*queryobject.Schema{
		"operator": {Kind: queryobject.String, Enum: []string{"FILTER_OPERATOR_AND_OR_UNSPECIFIED", "FILTER_OPERATOR_OR"}},
		"pathAndValues": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"path": str,
			"multipleValues": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
				"matcher": {Kind: queryobject.String, Enum: []string{"FILTER_MATCHER_TEXT_OR_UNSPECIFIED", "FILTER_MATCHER_REGEXP"}},
				"values":  strList,
			}},
			"filters": filtersSchema,
		}}},
	}
}

// decodeInto reads the query object name into v (nil doc: absent, v untouched).
func decodeInto(values url.Values, name string, schema *queryobject.Schema, v any) (bool, error) {
	doc, err := queryobject.Decode(values, name, schema)
	if err != nil || doc == nil {
		return false, err
	}
	if err := json.Unmarshal(doc, v); err != nil {
		return false, apierror.Invalidf("%s: does not have the expected shape: %s", name, queryobject.LastMessagePart(err.Error()))
	}
	return true, nil
}

// timeRange is a from–to range in microseconds, both ends included.
type timeRange struct{ from, to int64 }

type timeRangeDoc struct {
	From *string `json:"from"`
	To   *string `json:"to"`
}

func (d *timeRangeDoc) read(path string) (timeRange, error) {
	if d == nil {
		return timeRange{}, apierror.Invalidf("%s: is required", path)
	}
	parse := func(field string, s *string) (int64, error) {
		if s == nil {
			return 0, apierror.Invalidf("%s.%s: is required", path, field)
		}
		t, err := time.Parse(time.RFC3339Nano, *s)
		if err != nil {
			return 0, apierror.Invalidf("%s.%s: must be an RFC 3339 date-time (got %q)", path, field, *s)
		}
		return t.UTC().UnixMicro(), nil
	}
	from, err := parse("from", d.From)
	if err != nil {
		return timeRange{}, err
	}
	to, err := parse("to", d.To)
	if err != nil {
		return timeRange{}, err
	}
	if to < from {
		return timeRange{}, apierror.Invalidf("%s.to: must not be before %s.from", path, path)
	}
	return timeRange{from, to}, nil
}

// readTimeRange reads the required query object name (a time range).
func readTimeRange(values url.Values, name string) (timeRange, error) {
	var d *timeRangeDoc
	if _, err := decodeInto(values, name, timeRangeSchema, &d); err != nil {
		return timeRange{}, err
	}
	return d.read(name)
}

// page is a page request: its size and where it starts (after, when the token is set).
type page struct {
	size  int
	after *cursor
}

// cursor is the position of the last event of a page, in the order of the request.
type cursor struct {
	At  int64  `json:"t"`
	ID  string `json:"i"`
	Asc bool   `json:"a,omitempty"`
}

func (c cursor) token() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readPage reads the query object pagination; asc is the request's order, which its token
// must have been made for.
func readPage(values url.Values, asc bool) (page, error) {
	var d struct {
		PageSize  *int64  `json:"pageSize"`
		PageToken *string `json:"pageToken"`
	}
	p := page{size: defaultPageSize}
	if _, err := decodeInto(values, "pagination", pageSchema, &d); err != nil {
		return p, err
	}
	if d.PageSize != nil {
		switch {
		case *d.PageSize < 0:
			return p, apierror.Invalidf("pagination.pageSize: must be at least 0 (got %d)", *d.PageSize)
		case *d.PageSize > maxPageSize:
			return p, apierror.Invalidf("pagination.pageSize: must be at most %d (got %d)", maxPageSize, *d.PageSize)
		case *d.PageSize > 0:
			p.size = int(*d.PageSize)
		}
	}
	if d.PageToken != nil && *d.PageToken != "" {
		tok := *d.PageToken
		if len(tok) > maxPageToken {
			return p, apierror.Invalidf("pagination.pageToken: must be at most %d characters", maxPageToken)
		}
		var c cursor
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" {
			return p, apierror.Invalidf("pagination.pageToken: is not a token this feed answered")
		}
		if c.Asc != asc {
			return p, apierror.Invalidf("pagination.pageToken: was made for the other order; send the order_bys of the first page")
		}
		p.after = &c
	}
	return p, nil
}

// readOrder reads order_bys (the feed's or the alert-event service's enumerations, by schema)
// and answers whether the order is oldest first. The first entry decides; none means newest
// first.
func readOrder(values url.Values, schema *queryobject.Schema, ascValue string) (bool, error) {
	var list []struct {
		FieldName string `json:"fieldName"`
		Direction string `json:"direction"`
	}
	if _, err := decodeInto(values, "order_bys", schema, &list); err != nil {
		return false, err
	}
	if len(list) > maxOrderBys {
		return false, apierror.Invalidf("order_bys: must have at most %d items (got %d)", maxOrderBys, len(list))
	}
	if len(list) == 0 {
		return false, nil
	}
	return list[0].Direction == ascValue, nil
}

func readFeedOrder(values url.Values) (bool, error) {
	return readOrder(values, feedOrderSchema, "ORDER_BY_DIRECTION_ASC")
}

func readAlertEventOrder(values url.Values) (bool, error) {
	return readOrder(values, alertEventOrderSchema, "ORDER_BY_ALERT_EVENT_DIRECTION_ASC")
}

// filters is a tree of conditions on an event's labels or metadata.
type filters struct {
	Operator      string        `json:"operator"`
	PathAndValues []filterEntry `json:"pathAndValues"`
}

type filterEntry struct {
	Path           *string `json:"path"`
	MultipleValues *struct {
		Matcher string   `json:"matcher"`
		Values  []string `json:"values"`
	} `json:"multipleValues"`
	Filters *filters `json:"filters"`
}

// check applies the bounds of a filter tree and compiles its regular expressions.
func (f *filters) check(path string, depth int) error {
	if f == nil {
		return nil
	}
	if depth == 1 {
		if n := f.entries(); n > maxFilterEntries {
			return apierror.Invalidf("%s: must have at most %d entries at all levels together (got %d)", path, maxFilterEntries, n)
		}
	}
	if depth > maxFilterDepth {
		return apierror.Invalidf("%s: filters may nest at most %d levels", path, maxFilterDepth)
	}
	if len(f.PathAndValues) > maxFilterItems {
		return apierror.Invalidf("%s.pathAndValues: must have at most %d items (got %d)", path, maxFilterItems, len(f.PathAndValues))
	}
	for i, e := range f.PathAndValues {
		at := fmt.Sprintf("%s.pathAndValues[%d]", path, i)
		if e.Path == nil {
			return apierror.Invalidf("%s.path: is required", at)
		}
		if utf8.RuneCountInString(*e.Path) > maxPathLength {
			return apierror.Invalidf("%s.path: must be at most %d characters", at, maxPathLength)
		}
		switch {
		case e.MultipleValues != nil && e.Filters != nil:
			return apierror.Invalidf("%s: exactly one of multipleValues and filters must be set (got both)", at)
		case e.MultipleValues == nil && e.Filters == nil:
			return apierror.Invalidf("%s: exactly one of multipleValues and filters must be set (got neither)", at)
		case e.Filters != nil:
			if err := e.Filters.check(at+".filters", depth+1); err != nil {
				return err
			}
		default:
			mv := e.MultipleValues
			if len(mv.Values) > maxFilterValues {
				return apierror.Invalidf("%s.multipleValues.values: must have at most %d items (got %d)", at, maxFilterValues, len(mv.Values))
			}
			for j, v := range mv.Values {
				if utf8.RuneCountInString(v) > maxValueLength {
					return apierror.Invalidf("%s.multipleValues.values[%d]: must be at most %d characters", at, j, maxValueLength)
				}
				if mv.Matcher == "FILTER_MATCHER_REGEXP" {
					if _, err := regexp.Compile(`^(?:` + v + `)$`); err != nil {
						return apierror.Invalidf("%s.multipleValues.values[%d]: is not a valid regular expression: %s", at, j, queryobject.LastMessagePart(err.Error()))
					}
				}
			}
		}
	}
	return nil
}

// entries counts the entries of the tree.
func (f *filters) entries() int {
	n := len(f.PathAndValues)
	for _, e := range f.PathAndValues {
		if e.Filters != nil {
			n += e.Filters.entries()
		}
	}
	return n
}

// feedFilter is the filter query object of the list, count and statistics.
type feedFilter struct {
	Timestamp                    *timeRangeDoc `json:"timestamp"`
	PlatformEventTypes           []string      `json:"platformEventTypes"`
	PlatformEventKeys            []string      `json:"platformEventKeys"`
	PlatformEventLabelsFilters   *filters      `json:"platformEventLabelsFilters"`
	PlatformEventMetadataFilters *filters      `json:"platformEventMetadataFilters"`
}

// readFeedFilter reads the required query object filter into a selection of the team's events.
func readFeedFilter(values url.Values, teamID int64) (selection, error) {
	var f feedFilter
	s := selection{teamID: teamID}
	found, err := decodeInto(values, "filter", filterSchema, &f)
	if err != nil {
		return s, err
	}
	if !found {
		return s, apierror.Invalidf("filter: is required (with filter.timestamp.from and filter.timestamp.to)")
	}
	r, err := f.Timestamp.read("filter.timestamp")
	if err != nil {
		return s, err
	}
	s.during = &r
	if err := boundedList("filter.platformEventTypes", f.PlatformEventTypes, maxTypes, maxPathLength); err != nil {
		return s, err
	}
	if err := boundedList("filter.platformEventKeys", f.PlatformEventKeys, maxListItems, maxPathLength); err != nil {
		return s, err
	}
	if len(f.PlatformEventTypes) > 0 {
		s.types = f.PlatformEventTypes
	}
	s.ids = f.PlatformEventKeys
	if err := f.PlatformEventLabelsFilters.check("filter.platformEventLabelsFilters", 1); err != nil {
		return s, err
	}
	if err := f.PlatformEventMetadataFilters.check("filter.platformEventMetadataFilters", 1); err != nil {
		return s, err
	}
	s.labelFilters, s.metaFilters = f.PlatformEventLabelsFilters, f.PlatformEventMetadataFilters
	return s, nil
}

// readLabelMatches reads platform_event_labels: label name to the value it must have.
func readLabelMatches(values url.Values) (map[string]string, error) {
	var m map[string]string
	if _, err := decodeInto(values, "platform_event_labels", labelsSchema, &m); err != nil {
		return nil, err
	}
	if len(m) > maxLabelMatches {
		return nil, apierror.Invalidf("platform_event_labels: must have at most %d labels (got %d)", maxLabelMatches, len(m))
	}
	for k, v := range m {
		if utf8.RuneCountInString(k) > maxPathLength {
			return nil, apierror.Invalidf("platform_event_labels: a label name must be at most %d characters", maxPathLength)
		}
		if utf8.RuneCountInString(v) > maxValueLength {
			return nil, apierror.Invalidf("platform_event_labels[%s]: must be at most %d characters", k, maxValueLength)
		}
	}
	return m, nil
}

func boundedList(path string, list []string, maxItems, maxLength int) error {
	if len(list) > maxItems {
		return apierror.Invalidf("%s: must have at most %d items (got %d)", path, maxItems, len(list))
	}
	for i, v := range list {
		if utf8.RuneCountInString(v) > maxLength {
			return apierror.Invalidf("%s[%d]: must be at most %d characters", path, i, maxLength)
		}
	}
	return nil
}
