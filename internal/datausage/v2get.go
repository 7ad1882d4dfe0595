package datausage

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// The record labels the v2 reads take their dimensions from, besides pillar and priority.
const (
	applicationLabel = ApplicationLabel
	subsystemLabel   = SubsystemLabel
	severityLabel    = SeverityLabel
	statusLabel      = "status"
	policyLabel      = "policyName"
	tierLabel        = "tier"
)

// Bounds of the v2 reads.
const (
	maxV2Buckets          = 100000
	maxV2ScopeValues      = 100
	maxV2DimensionFilters = 16
	maxV2LabelKey         = 256
	maxV2LabelValue       = 1024
	maxV2RangeDays        = 1827
)

var (
	stringList      = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}}
	timeRangeSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"fromDate": {Kind: queryobject.DateTime},
		"toDate":   {Kind: queryobject.DateTime},
	}}
	scopeSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"application": stringList,
		"subsystem":   stringList,
	}}
	aggregateLabels = map[string]string{
		"AGGREGATE_BY_APPLICATION": applicationLabel,
		"AGGREGATE_BY_SUBSYSTEM":   subsystemLabel,
		"AGGREGATE_BY_PILLAR":      pillarLabel,
		"AGGREGATE_BY_PRIORITY":    priorityLabel,
		"AGGREGATE_BY_POLICY_NAME": policyLabel,
		"AGGREGATE_BY_SEVERITY":    severityLabel,
	}
	aggregateSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String, Enum: []string{
		"AGGREGATE_BY_APPLICATION", "AGGREGATE_BY_SUBSYSTEM", "AGGREGATE_BY_PILLAR",
		"AGGREGATE_BY_PRIORITY", "AGGREGATE_BY_POLICY_NAME", "AGGREGATE_BY_SEVERITY",
	}}}
	dimensionFiltersSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"genericDimension": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"key":   {Kind: queryobject.String},
			"value": {Kind: queryobject.String},
		}},
		"pillar":   {Kind: queryobject.String, Enum: enumOf(oas.UsageV2Pillar("").AllValues())},
		"priority": {Kind: queryobject.String, Enum: enumOf(oas.UsageV2Priority("").AllValues())},
		"severity": {Kind: queryobject.String, Enum: enumOf(oas.UsageV2Severity("").AllValues())},
		"tier":     {Kind: queryobject.String, Enum: enumOf(oas.UsageV2Tier("").AllValues())},
	}}}
)

func enumOf[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// window is a v2 read's range and bucket length.
type window struct {
	start, end time.Time
	step       time.Duration
}

func (w window) buckets() int { return int((w.end.Sub(w.start) + w.step - 1) / w.step) }

// readWindow reads date_range and resolution: the range widened to whole UTC hours (absent: the
// last 24 hours ending with the current hour), the resolution whole seconds from minStep to the
// range's length (absent: the whole range).
//
// Errors: Invalid for a malformed or missing end, an empty or reversed range, one over 1827
// days, a malformed or out-of-bounds resolution, or more than 100000 buckets.
func readWindow(values url.Values, resolution oas.OptString, minStep time.Duration, now time.Time) (window, error) {
	var w window
	doc, err := queryobject.Decode(values, "date_range", timeRangeSchema)
	if err != nil {
		return w, err
	}
	if doc == nil {
		w.end = now.UTC().Truncate(time.Hour).Add(time.Hour)
		w.start = w.end.Add(-24 * time.Hour)
	} else {
		var dr struct {
			FromDate, ToDate *string
		}
		if err := json.Unmarshal(doc, &dr); err != nil {
			return w, apierror.Invalidf("date_range: must be an object with fromDate and toDate date-times")
		}
		from, err := dateTime("date_range.fromDate", dr.FromDate)
		if err != nil {
			return w, err
		}
		to, err := dateTime("date_range.toDate", dr.ToDate)
		if err != nil {
			return w, err
		}
		if !to.After(from) {
			return w, apierror.Invalidf("date_range.toDate: must be after date_range.fromDate")
		}
		w.start = from.UTC().Truncate(time.Hour)
		w.end = to.UTC().Truncate(time.Hour)
		if w.end.Before(to) {
			w.end = w.end.Add(time.Hour)
		}
		if w.end.Sub(w.start) > maxV2RangeDays*24*time.Hour {
			return w, apierror.Invalidf("date_range: must cover at most %d days", maxV2RangeDays)
		}
	}
	w.step = w.end.Sub(w.start)
	if res, ok := resolution.Get(); ok {
		secs, ok := strings.CutSuffix(res, "s")
		n, err := strconv.ParseInt(secs, 10, 64)
		if !ok || err != nil || n < 0 || secs == "" || secs[0] == '+' {
			return w, apierror.Invalidf("resolution: must be whole seconds with an s suffix, e.g. 3600s")
		}
		if n > int64(w.end.Sub(w.start)/time.Second) {
			return w, apierror.Invalidf("resolution: must be at most the range's length (%ds)", int64(w.end.Sub(w.start)/time.Second))
		}
		if step := time.Duration(n) * time.Second; step < minStep {
			return w, apierror.Invalidf("resolution: must be at least %ds", int64(minStep/time.Second))
		}
		w.step = time.Duration(n) * time.Second
	}
	if n := w.buckets(); n > maxV2Buckets {
		return w, apierror.Invalidf("resolution: makes %d buckets, at most %d", n, maxV2Buckets)
	}
	return w, nil
}

func dateTime(path string, s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, apierror.Invalidf("%s: is required with date_range", path)
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}, apierror.Invalidf("%s: must be an RFC 3339 date-time", path)
	}
	return t, nil
}

// scope is a filters object: the allowed application and subsystem names (nil allows all).
type scope struct{ apps, subsystems map[string]bool }

func readScope(values url.Values) (scope, error) {
	var s scope
	doc, err := queryobject.Decode(values, "filters", scopeSchema)
	if err != nil || doc == nil {
		return s, err
	}
	var f struct{ Application, Subsystem []string }
	if err := json.Unmarshal(doc, &f); err != nil {
		return s, apierror.Invalidf("filters: must be an object with application and subsystem string arrays")
	}
	set := func(path string, vs []string) (map[string]bool, error) {
		if len(vs) > maxV2ScopeValues {
			return nil, apierror.Invalidf("%s: must have at most %d items (got %d)", path, maxV2ScopeValues, len(vs))
		}
		if len(vs) == 0 {
			return nil, nil
		}
		m := map[string]bool{}
		for i, v := range vs {
			if utf8.RuneCountInString(v) > maxV2LabelValue {
				return nil, apierror.Invalidf("%s[%d]: must be at most %d characters", path, i, maxV2LabelValue)
			}
			m[v] = true
		}
		return m, nil
	}
	if s.apps, err = set("filters.application", f.Application); err != nil {
		return s, err
	}
	s.subsystems, err = set("filters.subsystem", f.Subsystem)
	return s, err
}

func (s scope) keeps(labels map[string]string) bool {
	return (s.apps == nil || s.apps[labels[applicationLabel]]) &&
		(s.subsystems == nil || s.subsystems[labels[subsystemLabel]])
}

func (h *UsageHandler) windowRecords(ctx context.Context, w window) ([]record, error) {
	return listRecords(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID, w.start, w.end)
}

// eventsOf tells whether r counts events of the given pillar.
func eventsOf(r record, pillar string) bool {
	return r.kind == string(oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDEVENTS) && r.labels[pillarLabel] == pillar
}

// GetSpansCountV2 answers the span counts of each bucket by status and priority.
//
// Errors: Invalid (see readWindow, readScope).
func (h *UsageHandler) GetSpansCountV2(ctx context.Context, params oas.GetSpansCountV2Params) (*oas.UsageV2SpansCountHeaders, error) {
	values := queryobject.Values(ctx)
	w, err := readWindow(values, params.Resolution, time.Second, h.db.Now())
	if err != nil {
		return nil, err
	}
	sc, err := readScope(values)
	if err != nil {
		return nil, err
	}
	recs, err := h.windowRecords(ctx, w)
	if err != nil {
		return nil, err
	}
	// Per bucket: success, error, low success, low error, medium success, medium error.
	sums := make([][6]big.Int, w.buckets())
	for _, r := range recs {
		if !eventsOf(r, "PILLAR_SPANS") || !sc.keeps(r.labels) {
			continue
		}
		var base int
		switch r.labels[statusLabel] {
		case "success":
			base = 0
		case "error":
			base = 1
		default:
			continue
		}
		b := &sums[int(r.hour.Sub(w.start)/w.step)]
		x := big.NewInt(r.value)
		b[base].Add(&b[base], x)
		switch r.labels[priorityLabel] {
		case "PRIORITY_LOW":
			b[2+base].Add(&b[2+base], x)
		case "PRIORITY_MEDIUM":
			b[4+base].Add(&b[4+base], x)
		}
	}
	out := oas.UsageV2SpansCount{SpansCount: make([]oas.UsageV2SpansCountEntry, len(sums))}
	for i := range sums {
		b := &sums[i]
		out.SpansCount[i] = oas.UsageV2SpansCountEntry{
			Timestamp:              w.start.Add(time.Duration(i) * w.step),
			SuccessSpanCount:       b[0].String(),
			ErrorSpanCount:         b[1].String(),
			LowSuccessSpanCount:    b[2].String(),
			LowErrorSpanCount:      b[3].String(),
			MediumSuccessSpanCount: b[4].String(),
			MediumErrorSpanCount:   b[5].String(),
		}
	}
	return &oas.UsageV2SpansCountHeaders{Deprecation: deprecated, Link: successor, Response: out}, nil
}

// enumLabel answers a label's value when it is one of the enumeration, otherwise unspecified.
func enumLabel[T ~string](labels map[string]string, key string, all []T, unspecified T) T {
	v := T(labels[key])
	for _, a := range all {
		if a == v {
			return v
		}
	}
	return unspecified
}

// GetLogsCountV2 answers the log counts of each bucket by priority, severity and, when asked,
// application and subsystem.
//
// Errors: Invalid (see readWindow, readScope).
func (h *UsageHandler) GetLogsCountV2(ctx context.Context, params oas.GetLogsCountV2Params) (*oas.UsageV2LogsCountHeaders, error) {
	values := queryobject.Values(ctx)
	w, err := readWindow(values, params.Resolution, time.Second, h.db.Now())
	if err != nil {
		return nil, err
	}
	sc, err := readScope(values)
	if err != nil {
		return nil, err
	}
	recs, err := h.windowRecords(ctx, w)
	if err != nil {
		return nil, err
	}
	byApp, bySub := params.ApplicationAggregation.Or(false), params.SubsystemAggregation.Or(false)
	type key struct {
		bucket             int
		priority, severity string
		app, sub           string
	}
	sums := map[key]*big.Int{}
	for _, r := range recs {
		if !eventsOf(r, "PILLAR_LOGS") || !sc.keeps(r.labels) {
			continue
		}
		k := key{
			bucket:   int(r.hour.Sub(w.start) / w.step),
			priority: string(enumLabel(r.labels, priorityLabel, oas.UsageV2Priority("").AllValues(), oas.UsageV2PriorityPRIORITYUNSPECIFIED)),
			severity: string(enumLabel(r.labels, severityLabel, oas.UsageV2Severity("").AllValues(), oas.UsageV2SeveritySEVERITYUNSPECIFIED)),
		}
		if byApp {
			k.app = r.labels[applicationLabel]
		}
		if bySub {
			k.sub = r.labels[subsystemLabel]
		}
		if sums[k] == nil {
			sums[k] = new(big.Int)
		}
		sums[k].Add(sums[k], big.NewInt(r.value))
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.bucket != b.bucket {
			return a.bucket < b.bucket
		}
		if a.app != b.app {
			return a.app < b.app
		}
		if a.sub != b.sub {
			return a.sub < b.sub
		}
		if a.priority != b.priority {
			return a.priority < b.priority
		}
		return a.severity < b.severity
	})
	out := oas.UsageV2LogsCount{LogsCount: make([]oas.UsageV2LogsCountEntry, len(keys))}
	for i, k := range keys {
		e := oas.UsageV2LogsCountEntry{
			Timestamp: w.start.Add(time.Duration(k.bucket) * w.step),
			LogsCount: sums[k].String(),
			Priority:  oas.UsageV2Priority(k.priority),
			Severity:  oas.UsageV2Severity(k.severity),
		}
		if byApp {
			e.ApplicationName = oas.NewOptString(k.app)
		}
		if bySub {
			e.SubsystemName = oas.NewOptString(k.sub)
		}
		out.LogsCount[i] = e
	}
	return &oas.UsageV2LogsCountHeaders{Deprecation: deprecated, Link: successor, Response: out}, nil
}

// dimFilter is one dimension filter: the label it reads and the value it wants (empty label:
// keeps every record).
type dimFilter struct{ label, value string }

func readDimensionFilters(values url.Values) ([]dimFilter, error) {
	doc, err := queryobject.Decode(values, "dimension_filters", dimensionFiltersSchema)
	if err != nil || doc == nil {
		return nil, err
	}
	var raw []struct {
		GenericDimension *struct{ Key, Value *string }
		Pillar           *string
		Priority         *string
		Severity         *string
		Tier             *string
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, apierror.Invalidf("dimension_filters: must be an array of dimension objects")
	}
	if len(raw) > maxV2DimensionFilters {
		return nil, apierror.Invalidf("dimension_filters: must have at most %d items (got %d)", maxV2DimensionFilters, len(raw))
	}
	out := make([]dimFilter, len(raw))
	for i, d := range raw {
		path := fmt.Sprintf("dimension_filters[%d]", i)
		var set []dimFilter
		if g := d.GenericDimension; g != nil {
			k, v := "", ""
			if g.Key != nil {
				k = *g.Key
			}
			if g.Value != nil {
				v = *g.Value
			}
			if n := utf8.RuneCountInString(k); n < 1 || n > maxV2LabelKey {
				return nil, apierror.Invalidf("%s.genericDimension.key: must be 1 to %d characters", path, maxV2LabelKey)
			}
			if utf8.RuneCountInString(v) > maxV2LabelValue {
				return nil, apierror.Invalidf("%s.genericDimension.value: must be at most %d characters", path, maxV2LabelValue)
			}
			set = append(set, dimFilter{k, v})
		}
		for _, f := range []struct {
			label string
			v     *string
		}{{pillarLabel, d.Pillar}, {priorityLabel, d.Priority}, {severityLabel, d.Severity}, {tierLabel, d.Tier}} {
			if f.v != nil {
				set = append(set, dimFilter{f.label, *f.v})
			}
		}
		if len(set) > 1 {
			return nil, apierror.Invalidf("%s: must set at most one of genericDimension, pillar, priority, severity, tier", path)
		}
		if len(set) == 1 {
			out[i] = set[0]
		}
	}
	return out, nil
}

// GetDataUsageV2 answers the quota units and gigabytes of each bucket and group of dimensions.
//
// Errors: Invalid (see readWindow; aggregate and dimension_filters name the item and rule).
func (h *UsageHandler) GetDataUsageV2(ctx context.Context, params oas.GetDataUsageV2Params) (*oas.UsageV2DataUsageHeaders, error) {
	values := queryobject.Values(ctx)
	w, err := readWindow(values, params.Resolution, time.Hour, h.db.Now())
	if err != nil {
		return nil, err
	}
	doc, err := queryobject.Decode(values, "aggregate", aggregateSchema)
	if err != nil {
		return nil, err
	}
	var aggs []string
	if doc != nil {
		if err := json.Unmarshal(doc, &aggs); err != nil {
			return nil, apierror.Invalidf("aggregate: must be an array of AGGREGATE_BY_ values")
		}
	}
	if len(aggs) > len(aggregateLabels) {
		return nil, apierror.Invalidf("aggregate: must have at most %d items (got %d)", len(aggregateLabels), len(aggs))
	}
	var dims []string // the labels grouped by, in the order asked, each once
	for i, a := range aggs {
		l, ok := aggregateLabels[a]
		if !ok {
			return nil, apierror.Invalidf("aggregate[%d]: must be one of %s", i, strings.Join(aggregateSchema.Elem.Enum, ", "))
		}
		if !contains(dims, l) {
			dims = append(dims, l)
		}
	}
	filters, err := readDimensionFilters(values)
	if err != nil {
		return nil, err
	}
	recs, err := h.windowRecords(ctx, w)
	if err != nil {
		return nil, err
	}
	type group struct {
		bucket int
		values string // the group's dimension values, joined
		dims   []oas.UsageV2Dimension
		micros big.Int
		bytes  big.Int
	}
	groups := map[string]*group{}
record:
	for _, r := range recs {
		for _, f := range filters {
			if f.label != "" && (r.labels[f.label] != f.value || !hasLabel(r.labels, f.label)) {
				continue record
			}
		}
		bucket := int(r.hour.Sub(w.start) / w.step)
		vals := make([]string, len(dims))
		ds := make([]oas.UsageV2Dimension, len(dims))
		for i, l := range dims {
			ds[i], vals[i] = dimensionOf(r.labels, l)
		}
		joined := strings.Join(vals, "\x00")
		id := strconv.Itoa(bucket) + "\x00" + joined
		g := groups[id]
		if g == nil {
			g = &group{bucket: bucket, values: joined, dims: ds}
			groups[id] = g
		}
		g.micros.Add(&g.micros, big.NewInt(r.quotaMicros))
		if r.kind == string(oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDDATASIZE) {
			g.bytes.Add(&g.bytes, big.NewInt(r.value))
		}
	}
	list := make([]*group, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].bucket != list[j].bucket {
			return list[i].bucket < list[j].bucket
		}
		return list[i].values < list[j].values
	})
	out := oas.UsageV2DataUsage{Entries: make([]oas.UsageV2DataUsageEntry, len(list))}
	for i, g := range list {
		out.Entries[i] = oas.UsageV2DataUsageEntry{
			Timestamp:  w.start.Add(time.Duration(g.bucket) * w.step),
			Dimensions: g.dims,
			Units:      num(&g.micros, 1e6).Value,
			SizeGb:     num(&g.bytes, 1e9).Value,
		}
	}
	return &oas.UsageV2DataUsageHeaders{Deprecation: deprecated, Link: successor, Response: out}, nil
}

func hasLabel(labels map[string]string, key string) bool {
	_, ok := labels[key]
	return ok
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// dimensionOf answers the dimension a record has for a grouping label, and its value: pillar,
// priority and severity as their enumerations (unspecified when missing or unknown), the others
// as a generic dimension keyed by the label.
func dimensionOf(labels map[string]string, label string) (oas.UsageV2Dimension, string) {
	switch label {
	case pillarLabel:
		v := enumLabel(labels, label, oas.UsageV2Pillar("").AllValues(), oas.UsageV2PillarPILLARUNSPECIFIED)
		return oas.UsageV2Dimension{Pillar: oas.NewOptUsageV2Pillar(v)}, string(v)
	case priorityLabel:
		v := enumLabel(labels, label, oas.UsageV2Priority("").AllValues(), oas.UsageV2PriorityPRIORITYUNSPECIFIED)
		return oas.UsageV2Dimension{Priority: oas.NewOptUsageV2Priority(v)}, string(v)
	case severityLabel:
		v := enumLabel(labels, label, oas.UsageV2Severity("").AllValues(), oas.UsageV2SeveritySEVERITYUNSPECIFIED)
		return oas.UsageV2Dimension{Severity: oas.NewOptUsageV2Severity(v)}, string(v)
	}
	v := labels[label]
	return oas.UsageV2Dimension{GenericDimension: oas.NewOptUsageV2GenericDimension(oas.UsageV2GenericDimension{
		Key: oas.NewOptString(label), Value: oas.NewOptString(v),
	})}, v
}
