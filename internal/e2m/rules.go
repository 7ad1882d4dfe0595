package e2m

import (
	"fmt"
	"math"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefaultPermutationsLimit is a rule's permutation limit when its create does not give one.
const DefaultPermutationsLimit = 30000

// MaxRules is the most rules a team may hold: the list answers at most this many.
const MaxRules = 10000

// MaxTeamPermutations is the most label permutations a team's rules may reserve together (the
// sum of their permutation limits): room for MaxRules rules at DefaultPermutationsLimit.
const MaxTeamPermutations = MaxRules * DefaultPermutationsLimit

// MaxLabels is the most metric labels a rule may have (the schema's bound).
const MaxLabels = 10

// checkCreate enforces, on a create body, what the OpenAPI document cannot express and answers
// the rule it describes, normalised (see checkRule). prefix is the path of the body in the
// request ("" for the single create, "requests[2].create.e2m." in a batch).
//
// Errors: Invalid naming the full path of the field and the rule.
func checkCreate(prefix string, p *oas.E2MCreateParams) (oas.E2M, error) {
	r := oas.E2M{
		Name:              p.Name,
		Description:       p.Description,
		DataSource:        p.DataSource,
		Type:              p.Type,
		PermutationsLimit: p.PermutationsLimit,
		LogsQuery:         p.LogsQuery,
		SpansQuery:        p.SpansQuery,
		MetricFields:      p.MetricFields,
		MetricLabels:      p.MetricLabels,
	}
	return r, checkRule(prefix, &r)
}

// checkReplace is checkCreate for a replace body: it also lowercases the id, and drops what the
// server sets (isInternal, createTime, updateTime, permutations).
func checkReplace(prefix string, e *oas.E2M) (oas.E2M, error) {
	r := *e
	r.ID = oas.E2MUUID(strings.ToLower(string(r.ID)))
	r.IsInternal.Reset()
	r.CreateTime.Reset()
	r.UpdateTime.Reset()
	r.Permutations.Reset()
	return r, checkRule(prefix, &r)
}

// checkRule checks a rule and normalises it in place: every aggregation gets its aggType, its
// targetMetricName and enabled (true when omitted), and metricFields and metricLabels become
// empty arrays when omitted.
//
// The rules: type is LOGS2METRICS with no spansQuery or SPANS2METRICS with no logsQuery; the query
// of the type, when not set, is the empty query of that type (every log or every span: the public
// document lets the query one-of be empty, and type tells which one is meant), stored and answered;
// every aggregation holds exactly one of none, histogram and samples, with a consistent aggType
// (required with none: MIN, MAX, COUNT, AVG or SUM), finite strictly increasing histogram buckets
// (none at all is accepted, as the newest public document allows) and a sampleType other than UNSPECIFIED; target metric names (given or derived, at most 255
// characters) are unique within the rule; target labels are unique within the rule.
func checkRule(prefix string, r *oas.E2M) error {
	switch r.Type {
	case oas.E2MTypeE2MTYPELOGS2METRICS:
		if r.SpansQuery.Set {
			return apierror.Invalidf("%sspansQuery: must be absent when type is %s (give logsQuery only)", prefix, r.Type)
		}
		if !r.LogsQuery.Set {
			r.LogsQuery = oas.NewOptE2MLogsQuery(oas.E2MLogsQuery{})
		}
	case oas.E2MTypeE2MTYPESPANS2METRICS:
		if r.LogsQuery.Set {
			return apierror.Invalidf("%slogsQuery: must be absent when type is %s (give spansQuery only)", prefix, r.Type)
		}
		if !r.SpansQuery.Set {
			r.SpansQuery = oas.NewOptE2MSpansQuery(oas.E2MSpansQuery{})
		}
	default:
		return apierror.Invalidf("%stype: must be %s or %s (got %s)", prefix,
			oas.E2MTypeE2MTYPELOGS2METRICS, oas.E2MTypeE2MTYPESPANS2METRICS, r.Type)
	}

	if r.MetricFields == nil {
		r.MetricFields = oas.E2MMetricFields{}
	}
	metricNames := map[string]string{} // target metric name → path of the aggregation that makes it
	for i := range r.MetricFields {
		f := &r.MetricFields[i]
		sent := len(f.Aggregations)
		for j := range f.Aggregations {
			path := fmt.Sprintf("%smetricFields[%d].aggregations[%d]", prefix, i, j)
			if err := checkAggregation(path, string(f.TargetBaseMetricName), &f.Aggregations[j]); err != nil {
				return err
			}
		}
		if err := completeAggregations(fmt.Sprintf("%smetricFields[%d]", prefix, i), f); err != nil {
			return err
		}
		for j := range f.Aggregations[:sent] {
			path := fmt.Sprintf("%smetricFields[%d].aggregations[%d]", prefix, i, j)
			name := string(f.Aggregations[j].TargetMetricName.Value)
			if isCompleteSetName(f.Aggregations[j]) {
				continue // unique within its field by type; sent back as answered (a GET then a PUT)
			}
			if first, ok := metricNames[name]; ok {
				return apierror.Invalidf("%s.targetMetricName: %q is already the target metric of %s; target metric names must be unique within the rule",
					path, name, first)
			}
			metricNames[name] = path
		}
	}

	if r.MetricLabels == nil {
		r.MetricLabels = oas.E2MMetricLabels{}
	}
	labels := map[string]int{}
	for k, l := range r.MetricLabels {
		if first, ok := labels[l.TargetLabel]; ok {
			return apierror.Invalidf("%smetricLabels[%d].targetLabel: %q is already the target of metricLabels[%d]; target labels must be unique within the rule",
				prefix, k, l.TargetLabel, first)
		}
		labels[l.TargetLabel] = k
	}
	return nil
}

// plainSuffix is the metric-name suffix of each aggregation type that a `none` aggregation may name.
var plainSuffix = map[oas.E2MAggType]string{
	oas.E2MAggTypeAGGTYPEMIN:   "min",
	oas.E2MAggTypeAGGTYPEMAX:   "max",
	oas.E2MAggTypeAGGTYPECOUNT: "count",
	oas.E2MAggTypeAGGTYPEAVG:   "avg",
	oas.E2MAggTypeAGGTYPESUM:   "sum",
}

// checkAggregation checks one aggregation at path and fills in its aggType, enabled and
// targetMetricName (derived from base when omitted). An aggregation without any of none,
// histogram and samples (the one-of not set, which the public document allows) takes the one
// its aggType implies: none for min, max, count, avg and sum, a histogram without buckets for
// AGG_TYPE_HISTOGRAM; it is stored and answered with it. Samples need their sample type, so
// AGG_TYPE_SAMPLES, or no aggType, without metadata is a 400.
func checkAggregation(path, base string, a *oas.E2MAggregation) error {
	kinds := 0
	for _, set := range []bool{a.None != nil, a.Histogram.Set, a.Samples.Set} {
		if set {
			kinds++
		}
	}
	if kinds == 0 {
		given, hasType := a.AggType.Get()
		if _, plain := plainSuffix[given]; hasType && plain {
			a.None, kinds = &oas.E2MNone{}, 1
		} else if hasType && given == oas.E2MAggTypeAGGTYPEHISTOGRAM {
			a.Histogram, kinds = oas.NewOptE2MHistogram(oas.E2MHistogram{Buckets: []float64{}}), 1
		} else {
			return apierror.Invalidf("%s: must hold one of none, histogram and samples, or an aggType that implies one (got aggType %s)",
				path, orMissing(given, hasType))
		}
	}
	if kinds != 1 {
		return apierror.Invalidf("%s: must hold exactly one of none, histogram and samples (got %d)", path, kinds)
	}
	given, hasType := a.AggType.Get()
	var agg oas.E2MAggType
	var suffix string
	switch {
	case a.None != nil:
		s, ok := plainSuffix[given]
		if !hasType || !ok {
			return apierror.Invalidf("%s.aggType: with none, must be one of AGG_TYPE_MIN, AGG_TYPE_MAX, AGG_TYPE_COUNT, AGG_TYPE_AVG, AGG_TYPE_SUM (got %s)",
				path, orMissing(given, hasType))
		}
		agg, suffix = given, s
	case a.Histogram.Set:
		agg, suffix = oas.E2MAggTypeAGGTYPEHISTOGRAM, "histogram"
		var last float64
		for k, b := range a.Histogram.Value.Buckets {
			if math.IsInf(b, 0) || math.IsNaN(b) {
				return apierror.Invalidf("%s.histogram.buckets[%d]: must be a finite number", path, k)
			}
			if k > 0 && b <= last {
				return apierror.Invalidf("%s.histogram.buckets[%d]: must be greater than the bucket before it (%g), got %g", path, k, last, b)
			}
			last = b
		}
	default:
		agg = oas.E2MAggTypeAGGTYPESAMPLES
		switch a.Samples.Value.SampleType {
		case oas.E2MSampleTypeSAMPLETYPEMIN:
			suffix = "samples_min"
		case oas.E2MSampleTypeSAMPLETYPEMAX:
			suffix = "samples_max"
		default:
			return apierror.Invalidf("%s.samples.sampleType: must be SAMPLE_TYPE_MIN or SAMPLE_TYPE_MAX (got %s)", path, a.Samples.Value.SampleType)
		}
	}
	if hasType && given != agg && given != oas.E2MAggTypeAGGTYPEUNSPECIFIED {
		return apierror.Invalidf("%s.aggType: must be %s (or omitted) for this aggregation (got %s)", path, agg, given)
	}
	a.AggType = oas.NewOptE2MAggType(agg)
	if !a.Enabled.Set {
		a.Enabled = oas.NewOptBool(true)
	}
	if !a.TargetMetricName.Set {
		name := base + "_" + suffix
		if len(name) > 255 {
			return apierror.Invalidf("%s.targetMetricName: the derived name (targetBaseMetricName + %q) would have %d characters, more than 255; give a shorter targetBaseMetricName or a targetMetricName",
				path, "_"+suffix, len(name))
		}
		a.TargetMetricName = oas.NewOptE2MMetricName(oas.E2MMetricName(name))
	}
	return nil
}

func orMissing(v oas.E2MAggType, set bool) string {
	if !set {
		return "nothing"
	}
	return string(v)
}

// completedAggregation is one aggregation of the whole set the real service answers for a metric
// field: its type, the target metric name it gets when the client did not send it, and whether it
// is then enabled.
type completedAggregation struct {
	aggType oas.E2MAggType
	name    string
	enabled bool
}

// completeSet is the set in the order it is appended: the vendor's public clients (its Terraform
// provider's acceptance tests) read back count, sum, avg, min and max enabled and a disabled
// histogram without buckets for each one their configuration leaves out, named cx_<type> and
// cx_bucket.
var completeSet = []completedAggregation{
	{oas.E2MAggTypeAGGTYPECOUNT, "cx_count", true},
	{oas.E2MAggTypeAGGTYPESUM, "cx_sum", true},
	{oas.E2MAggTypeAGGTYPEAVG, "cx_avg", true},
	{oas.E2MAggTypeAGGTYPEMIN, "cx_min", true},
	{oas.E2MAggTypeAGGTYPEMAX, "cx_max", true},
	{oas.E2MAggTypeAGGTYPEHISTOGRAM, "cx_bucket", false},
}

// completeAggregations completes the checked aggregations of the metric field at path to the
// whole set, as the real service answers it, when they hold each aggType at most once (the shape
// of that set; a field with two aggregations of one type, e.g. two samples or two sums, is kept as
// sent, which also keeps it within the 7 items the public document allows). Each of count, sum,
// avg, min, max and histogram the field lacks is appended (completeSet). Its name is not checked
// against the rest of the rule (the real service's metric is the base name and this name), but a
// sent aggregation of the field that already has it is a 400 naming it.
func completeAggregations(path string, f *oas.E2MMetricField) error {
	present := map[oas.E2MAggType]bool{}
	names := map[string]int{}
	for j, a := range f.Aggregations {
		if present[a.AggType.Value] {
			return nil
		}
		present[a.AggType.Value] = true
		names[string(a.TargetMetricName.Value)] = j
	}
	for _, c := range completeSet {
		if present[c.aggType] {
			continue
		}
		if j, taken := names[c.name]; taken {
			return apierror.Invalidf("%s.aggregations[%d].targetMetricName: %q is the name the server gives the %s aggregation it adds to complete the field; give another name or send that aggregation",
				path, j, c.name, c.aggType)
		}
		a := oas.E2MAggregation{
			Enabled:          oas.NewOptBool(c.enabled),
			TargetMetricName: oas.NewOptE2MMetricName(oas.E2MMetricName(c.name)),
			AggType:          oas.NewOptE2MAggType(c.aggType),
		}
		if c.aggType == oas.E2MAggTypeAGGTYPEHISTOGRAM {
			a.Histogram = oas.NewOptE2MHistogram(oas.E2MHistogram{Buckets: []float64{}})
		} else {
			a.None = &oas.E2MNone{}
		}
		f.Aggregations = append(f.Aggregations, a)
	}
	return nil
}

// isCompleteSetName reports whether a carries the name completeSet gives its type (cx_count for a
// count, …), which the answers of every completed field carry; it is unique within its field.
func isCompleteSetName(a oas.E2MAggregation) bool {
	for _, c := range completeSet {
		if c.aggType == a.AggType.Value && c.name == string(a.TargetMetricName.Value) {
			return true
		}
	}
	return false
}
