package datausage

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The query's limits, as the capabilities operation reports them.
const (
	maxFilters       = 16
	maxFilterValues  = 1024
	maxGroupByLabels = 16
	// maxEntries is the most entries a bucket holds (the per-bucket limit's upper bound).
	maxEntries = 100000
	// maxBuckets is the most buckets one answer holds (five years of days).
	maxBuckets = 1827
	// maxKnownValues is the most values listed per label key; a key with more is high-cardinality.
	maxKnownValues = 4096
	// maxLabelKeys is the most label keys the capabilities list.
	maxLabelKeys = 256
	// maxQuotaWhole bounds the whole part of imported quota units, so millionths fit an int64.
	maxQuotaWhole = math.MaxInt64 / 1_000_000
)

// units are the measurement kinds served, each with the unit its values are counted in, in the
// order answers list them.
var units = []struct {
	kind oas.UsageMeasurementKind
	unit oas.UsageMeasurementUnit
}{
	{oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDDATASIZE, oas.UsageMeasurementUnitMEASUREMENTUNITBYTES},
	{oas.UsageMeasurementKindMEASUREMENTKINDEVALUATIONS, oas.UsageMeasurementUnitMEASUREMENTUNITTOKENS},
	{oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDEVENTS, oas.UsageMeasurementUnitMEASUREMENTUNITEVENTS},
}

func unitOf(kind oas.UsageMeasurementKind) (oas.UsageMeasurementUnit, int, bool) {
	for i, u := range units {
		if u.kind == kind {
			return u.unit, i, true
		}
	}
	return "", 0, false
}

// record is one hour of one measurement kind for one label set.
type record struct {
	hour        time.Time
	labels      map[string]string
	kind        string
	unit        string
	value       int64
	quotaMicros int64
}

// labelsKey is the label set in canonical form: [[key, value], …] sorted by key.
func (r record) labelsKey() string {
	keys := make([]string, 0, len(r.labels))
	for k := range r.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k, r.labels[k]}
	}
	b, _ := json.Marshal(pairs)
	return string(b)
}

// checkRecord validates an imported record.
//
// Errors: Invalid naming where and the field: an hour that is not the start of an hour, a
// repeated label key, a kind that is not served, a unit that is not the kind's, a value or quota
// units too large.
func checkRecord(where string, in oas.UsageRecord) (record, error) {
	h := in.Hour.UTC()
	if h.Minute() != 0 || h.Second() != 0 || h.Nanosecond() != 0 {
		return record{}, apierror.Invalidf("%s.hour: must be the start of an hour (minutes, seconds and fractions zero), got %s", where, h.Format(time.RFC3339Nano))
	}
	labels := make(map[string]string, len(in.Labels))
	for j, l := range in.Labels {
		if _, dup := labels[string(l.Key)]; dup {
			return record{}, apierror.Invalidf("%s.labels[%d].key: repeats label key %q", where, j, l.Key)
		}
		labels[string(l.Key)] = string(l.Value)
	}
	unit, _, ok := unitOf(in.Kind)
	if !ok {
		return record{}, apierror.Invalidf("%s.kind: must be one of %s", where, kindNames())
	}
	if in.Unit != unit {
		return record{}, apierror.Invalidf("%s.unit: must be %s for %s", where, unit, in.Kind)
	}
	value, err := strconv.ParseInt(in.Value, 10, 64)
	if err != nil {
		return record{}, apierror.Invalidf("%s.value: must be a whole number from 0 to %d", where, int64(math.MaxInt64))
	}
	quota, err := parseMicros(in.QuotaUnits.Or("0"))
	if err != nil {
		return record{}, apierror.Invalidf("%s.quotaUnits: must be a decimal number below %d with at most 6 fraction digits", where, int64(maxQuotaWhole))
	}
	return record{hour: h, labels: labels, kind: string(in.Kind), unit: string(unit), value: value, quotaMicros: quota}, nil
}

func kindNames() string {
	names := make([]string, len(units))
	for i, u := range units {
		names[i] = string(u.kind)
	}
	return strings.Join(names, ", ")
}

// parseMicros reads "12" or "12.5" (the pattern is checked by the schema) as millionths.
func parseMicros(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w >= maxQuotaWhole {
		return 0, fmt.Errorf("quota units %q out of range", s)
	}
	f := int64(0)
	if frac != "" {
		frac += strings.Repeat("0", 6-len(frac))
		if f, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return 0, err
		}
	}
	return w*1e6 + f, nil
}

// formatMicros writes millionths as a decimal without trailing zeros ("1.5", "0").
func formatMicros(m *big.Int) string {
	q, r := new(big.Int).QuoRem(m, big.NewInt(1e6), new(big.Int))
	if r.Sign() == 0 {
		return q.String()
	}
	return q.String() + "." + strings.TrimRight(fmt.Sprintf("%06d", r.Int64()), "0")
}

// span is a query's range and its bucket width.
type span struct {
	start, end time.Time
	step       time.Duration
}

// resolveRange turns the query's daily or hourly range into UTC buckets; now decides the
// relative ranges.
//
// Errors: Invalid when both daily and hourly are set, when a range sets both its absolute and
// relative form, for a date that does not exist, an end before the start, or more than 1827
// buckets.
func resolveRange(q *oas.UsageQuery, now time.Time) (span, error) {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	if q.Daily.Set && q.Hourly.Set {
		return span{}, apierror.Invalidf("daily, hourly: must set only one of them")
	}
	if h, ok := q.Hourly.Get(); ok {
		rel := h.RelativeRange.Or(oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGEUNSPECIFIED)
		if tr, ok := h.TimeRange.Get(); ok {
			if rel != oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGEUNSPECIFIED {
				return span{}, apierror.Invalidf("hourly.timeRange, hourly.relativeRange: must set only one of them")
			}
			start := tr.Start.UTC().Truncate(time.Hour)
			end := tr.End.UTC()
			if e := end.Truncate(time.Hour); !e.Equal(end) {
				end = e.Add(time.Hour)
			}
			if !end.After(tr.Start) {
				return span{}, apierror.Invalidf("hourly.timeRange.end: must be after hourly.timeRange.start")
			}
			return checked(span{start, end, time.Hour}, "hourly.timeRange")
		}
		hours := map[oas.UsageHourlyQueryRelativeRange]int{
			oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGEUNSPECIFIED: 24,
			oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGELAST12HOURS: 12,
			oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGELAST24HOURS: 24,
			oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGELAST48HOURS: 48,
			oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGELAST7DAYS:   7 * 24,
			oas.UsageHourlyQueryRelativeRangeHOURLYRELATIVERANGELAST14DAYS:  14 * 24,
		}[rel]
		end := now.Truncate(time.Hour).Add(time.Hour)
		return span{end.Add(-time.Duration(hours) * time.Hour), end, time.Hour}, nil
	}
	d := q.Daily.Or(oas.UsageDailyQuery{})
	rel := d.RelativeRange.Or(oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGEUNSPECIFIED)
	if dr, ok := d.DateRange.Get(); ok {
		if rel != oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGEUNSPECIFIED {
			return span{}, apierror.Invalidf("daily.dateRange, daily.relativeRange: must set only one of them")
		}
		start, err := date("daily.dateRange.start", dr.Start)
		if err != nil {
			return span{}, err
		}
		end, err := date("daily.dateRange.end", dr.End)
		if err != nil {
			return span{}, err
		}
		if end.Before(start) {
			return span{}, apierror.Invalidf("daily.dateRange.end: must not be before daily.dateRange.start")
		}
		return checked(span{start, end.Add(day), day}, "daily.dateRange")
	}
	tomorrow := today.Add(day)
	firstOfMonth := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	switch rel {
	case oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGECURRENTMONTH:
		return span{firstOfMonth, tomorrow, day}, nil
	case oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGEPREVIOUSMONTH:
		return span{firstOfMonth.AddDate(0, -1, 0), firstOfMonth, day}, nil
	case oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGECURRENTYEAR:
		return span{time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC), tomorrow, day}, nil
	}
	days := map[oas.UsageDailyQueryRelativeRange]int{
		oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGELAST7DAYS:   7,
		oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGELAST14DAYS:  14,
		oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGELAST90DAYS:  90,
		oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGELAST180DAYS: 180,
		oas.UsageDailyQueryRelativeRangeDAILYRELATIVERANGELAST365DAYS: 365,
	}[rel]
	if days == 0 {
		days = 30
	}
	return span{tomorrow.AddDate(0, 0, -days), tomorrow, day}, nil
}

func checked(s span, where string) (span, error) {
	if n := int(s.end.Sub(s.start) / s.step); n > maxBuckets {
		return span{}, apierror.Invalidf("%s: covers %d buckets, at most %d are allowed", where, n, maxBuckets)
	}
	return s, nil
}

func date(where string, d oas.UsageDate) (time.Time, error) {
	t := time.Date(int(d.Year), time.Month(d.Month), int(d.Day), 0, 0, 0, 0, time.UTC)
	if t.Year() != int(d.Year) || int32(t.Month()) != d.Month || int32(t.Day()) != d.Day {
		return time.Time{}, apierror.Invalidf("%s: %04d-%02d-%02d is not a calendar date", where, d.Year, d.Month, d.Day)
	}
	return t, nil
}

// query is the checked selection and grouping of a usage query.
type query struct {
	filters  []oas.UsageLabelFilter
	groupBy  []string
	kinds    map[string]bool // empty: every kind
	perBound int
}

// checkQuery validates filters, group-by keys and the per-bucket limit.
//
// Errors: Invalid for a filter operator left unspecified or a repeated group-by key.
func checkQuery(q *oas.UsageQuery) (query, error) {
	out := query{filters: q.Filters, kinds: map[string]bool{}, perBound: maxEntries}
	for i, f := range q.Filters {
		if f.Operator == oas.UsageLabelFilterOperatorFILTEROPERATORUNSPECIFIED {
			return query{}, apierror.Invalidf("filters[%d].operator: must be FILTER_OPERATOR_IN or FILTER_OPERATOR_NOT_IN", i)
		}
	}
	for i, k := range q.GroupBy.Or(oas.UsageQueryGroupBy{}).Keys {
		if slices.Contains(out.groupBy, string(k)) {
			return query{}, apierror.Invalidf("groupBy.keys[%d]: repeats key %q", i, k)
		}
		out.groupBy = append(out.groupBy, string(k))
	}
	for _, k := range q.MeasurementKindFilter {
		if k != oas.UsageMeasurementKindMEASUREMENTKINDUNSPECIFIED {
			out.kinds[string(k)] = true
		}
	}
	if l, ok := q.Limit.Get(); ok {
		out.perBound = int(l.PerBucket.Or(maxEntries))
	}
	return out, nil
}

func (q query) keeps(r record) bool {
	if len(q.kinds) > 0 && !q.kinds[r.kind] {
		return false
	}
	for _, f := range q.filters {
		v, has := r.labels[string(f.Key)]
		in := has && slices.Contains(f.Values, oas.UsageLabelValue(v))
		if in != (f.Operator == oas.UsageLabelFilterOperatorFILTEROPERATORIN) {
			return false
		}
	}
	return true
}

type sums struct{ value, quota big.Int }

type group struct {
	values []string
	kinds  [3]*sums // indexed like units
}

// aggregate sums the records into the span's buckets, grouped by the query's keys.
func aggregate(s span, q query, recs []record) *oas.UsageQueryResponse {
	n := int(s.end.Sub(s.start) / s.step)
	groups := make([]map[string]*group, n)
	for _, r := range recs {
		if !q.keeps(r) {
			continue
		}
		i := int(r.hour.Sub(s.start) / s.step)
		if i < 0 || i >= n {
			continue
		}
		values := make([]string, len(q.groupBy))
		for j, k := range q.groupBy {
			values[j] = r.labels[k]
		}
		b, _ := json.Marshal(values)
		if groups[i] == nil {
			groups[i] = map[string]*group{}
		}
		g := groups[i][string(b)]
		if g == nil {
			g = &group{values: values}
			groups[i][string(b)] = g
		}
		_, ki, _ := unitOf(oas.UsageMeasurementKind(r.kind))
		if g.kinds[ki] == nil {
			g.kinds[ki] = &sums{}
		}
		g.kinds[ki].value.Add(&g.kinds[ki].value, big.NewInt(r.value))
		g.kinds[ki].quota.Add(&g.kinds[ki].quota, big.NewInt(r.quotaMicros))
	}
	out := &oas.UsageQueryResponse{
		QueryRange: oas.UsageTimeRange{Start: s.start, End: writable(s.end)},
		Buckets:    make([]oas.UsageBucket, n),
	}
	for i := range n {
		start := s.start.Add(time.Duration(i) * s.step)
		gs := make([]*group, 0, len(groups[i]))
		for _, g := range groups[i] {
			gs = append(gs, g)
		}
		sort.Slice(gs, func(a, b int) bool { return slices.Compare(gs[a].values, gs[b].values) < 0 })
		if len(gs) > q.perBound {
			gs = gs[:q.perBound]
		}
		entries := make([]oas.UsageEntry, 0, len(gs))
		for _, g := range gs {
			e := oas.UsageEntry{Labels: make([]oas.UsageLabel, len(q.groupBy)), Measurements: []oas.UsageMeasurement{}}
			for j, k := range q.groupBy {
				e.Labels[j] = oas.UsageLabel{Key: oas.UsageLabelKey(k), Value: oas.UsageLabelValue(g.values[j])}
			}
			for ki, sm := range g.kinds {
				if sm == nil {
					continue
				}
				e.Measurements = append(e.Measurements, oas.UsageMeasurement{
					Kind:               units[ki].kind,
					MeasuredUnit:       units[ki].unit,
					MeasuredValue:      sm.value.String(),
					PlatformQuotaUnits: oas.UsageQuotaUnits{Value: formatMicros(&sm.quota)},
				})
			}
			entries = append(entries, e)
		}
		out.Buckets[i] = oas.UsageBucket{Range: oas.UsageTimeRange{Start: start, End: writable(start.Add(s.step))}, Entries: entries}
	}
	return out
}

// lastWritable is the latest time RFC 3339 can write (a four-digit year), to microseconds.
var lastWritable = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)

// writable keeps a range end that falls in year 10000 (the end of 9999-12-31) writable.
func writable(t time.Time) time.Time {
	if t.After(lastWritable) {
		return lastWritable
	}
	return t
}

// capabilities reports the limits, the kinds and the team's label keys and values.
func capabilities(labels map[string]map[string]bool) *oas.UsageCapabilities {
	out := &oas.UsageCapabilities{
		MaxFilters:                maxFilters,
		MaxFilterValues:           maxFilterValues,
		MaxGroupByLabels:          maxGroupByLabels,
		MaxUsageEntriesPerMessage: maxEntries,
		SupportedLabels:           []oas.UsageCapabilityLabel{},
	}
	for _, u := range units {
		out.SupportedMeasurements = append(out.SupportedMeasurements, oas.UsageCapabilityMeasurement{Kind: u.kind, Unit: u.unit})
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > maxLabelKeys {
		keys = keys[:maxLabelKeys]
	}
	for _, k := range keys {
		l := oas.UsageCapabilityLabel{Key: k, KnownValues: []oas.UsageCapabilityLabelKnownValuesItem{}}
		if len(labels[k]) > maxKnownValues {
			l.HighCardinality = true
		} else {
			vals := make([]string, 0, len(labels[k]))
			for v := range labels[k] {
				vals = append(vals, v)
			}
			sort.Strings(vals)
			for _, v := range vals {
				l.KnownValues = append(l.KnownValues, oas.UsageCapabilityLabelKnownValuesItem{Value: v})
			}
		}
		out.SupportedLabels = append(out.SupportedLabels, l)
	}
	return out
}
