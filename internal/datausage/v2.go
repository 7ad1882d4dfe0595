package datausage

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The deprecated v2 operations answer `Deprecation: true`; the reading ones also name the v1
// query that replaces them.
const (
	deprecated = "true"
	successor  = `</mgmt/openapi/5/dataplan/data-usage/v1/query>; rel="successor-version"`
)

// The labels that place a record in the v2 pillar and priority breakdowns, and the one that
// names an evaluator.
const (
	pillarLabel    = "pillar"
	priorityLabel  = "priority"
	evaluatorLabel = "evaluator"
)

// Breakdown slots of the v2 daily answers, in the order of breakdown.
const (
	slotHighLogs = iota
	slotMediumLogs
	slotLowLogs
	slotHighTracing
	slotMediumTracing
	slotLowTracing
	slotHighMetrics
	slotBlockedMetrics
	slotBlocked
	slotLowSessionRecording
	slotCPUProfiles
	slotCount
)

// slotOf places a record by its pillar and priority labels; false when it is in no breakdown.
func slotOf(labels map[string]string) (int, bool) {
	pillar, priority := labels[pillarLabel], labels[priorityLabel]
	switch pillar {
	case "PILLAR_PROFILES":
		return slotCPUProfiles, true
	case "PILLAR_BINARY":
		return slotLowSessionRecording, true
	}
	if priority == "PRIORITY_BLOCKED" {
		if pillar == "PILLAR_METRICS" {
			return slotBlockedMetrics, true
		}
		return slotBlocked, true
	}
	slots := map[[2]string]int{
		{"PILLAR_LOGS", "PRIORITY_HIGH"}:    slotHighLogs,
		{"PILLAR_LOGS", "PRIORITY_MEDIUM"}:  slotMediumLogs,
		{"PILLAR_LOGS", "PRIORITY_LOW"}:     slotLowLogs,
		{"PILLAR_SPANS", "PRIORITY_HIGH"}:   slotHighTracing,
		{"PILLAR_SPANS", "PRIORITY_MEDIUM"}: slotMediumTracing,
		{"PILLAR_SPANS", "PRIORITY_LOW"}:    slotLowTracing,
		{"PILLAR_METRICS", "PRIORITY_HIGH"}: slotHighMetrics,
	}
	s, ok := slots[[2]string{pillar, priority}]
	return s, ok
}

// v2Days resolves a v2 daily request into whole UTC days; now decides the relative ranges.
//
// Errors: Invalid when both forms are set, a date range misses an end, ends before it starts
// or covers more than 1827 days.
func v2Days(req *oas.UsageV2DailyRequest, now time.Time) (span, error) {
	now = now.UTC()
	day := 24 * time.Hour
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	tomorrow := today.Add(day)
	rel := req.Range.Or(oas.UsageV2DailyRequestRangeRANGEUNSPECIFIED)
	if dr, ok := req.DateRange.Get(); ok {
		if rel != oas.UsageV2DailyRequestRangeRANGEUNSPECIFIED {
			return span{}, apierror.Invalidf("dateRange, range: must set only one of them")
		}
		from, ok := dr.FromDate.Get()
		if !ok {
			return span{}, apierror.Invalidf("dateRange.fromDate: is required with dateRange")
		}
		to, ok := dr.ToDate.Get()
		if !ok {
			return span{}, apierror.Invalidf("dateRange.toDate: is required with dateRange")
		}
		from, to = from.UTC(), to.UTC()
		start := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
		last := time.Date(to.Year(), to.Month(), to.Day(), 0, 0, 0, 0, time.UTC)
		if to.Before(from) {
			return span{}, apierror.Invalidf("dateRange.toDate: must not be before dateRange.fromDate")
		}
		return checked(span{start, last.Add(day), day}, "dateRange")
	}
	switch rel {
	case oas.UsageV2DailyRequestRangeRANGECURRENTMONTH:
		return span{time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC), tomorrow, day}, nil
	case oas.UsageV2DailyRequestRangeRANGELASTWEEK:
		return span{tomorrow.AddDate(0, 0, -7), tomorrow, day}, nil
	case oas.UsageV2DailyRequestRangeRANGELAST90DAYS:
		return span{tomorrow.AddDate(0, 0, -90), tomorrow, day}, nil
	case oas.UsageV2DailyRequestRangeRANGELASTYEAR:
		return span{tomorrow.AddDate(0, 0, -365), tomorrow, day}, nil
	}
	return span{tomorrow.AddDate(0, 0, -30), tomorrow, day}, nil
}

// daySums is one day's sums: the total, the breakdown slots, and per evaluator.
type daySums struct {
	total      big.Int
	evaluation big.Int
	slots      [slotCount]big.Int
	evaluators map[string]*big.Int
}

// sumDays adds each record that pick selects, by the value pick returns, into its day.
func sumDays(s span, recs []record, pick func(r record) (int64, bool)) []*daySums {
	n := int(s.end.Sub(s.start) / s.step)
	days := make([]*daySums, n)
	for i := range days {
		days[i] = &daySums{evaluators: map[string]*big.Int{}}
	}
	for _, r := range recs {
		i := int(r.hour.Sub(s.start) / s.step)
		v, ok := pick(r)
		if i < 0 || i >= n || !ok {
			continue
		}
		d, x := days[i], big.NewInt(v)
		d.total.Add(&d.total, x)
		if r.kind == string(oas.UsageMeasurementKindMEASUREMENTKINDEVALUATIONS) {
			d.evaluation.Add(&d.evaluation, x)
			name := r.labels[evaluatorLabel]
			if d.evaluators[name] == nil {
				d.evaluators[name] = new(big.Int)
			}
			d.evaluators[name].Add(d.evaluators[name], x)
		}
		if slot, ok := slotOf(r.labels); ok {
			d.slots[slot].Add(&d.slots[slot], x)
		}
	}
	return days
}

// num divides by scale and answers it as a v2 number.
func num(x *big.Int, scale float64) oas.UsageV2Number {
	f, _ := new(big.Float).SetInt(x).Float64()
	return oas.UsageV2Number{Value: f / scale}
}

func (h *UsageHandler) v2Records(ctx context.Context, req *oas.UsageV2DailyRequest) (span, []record, error) {
	s, err := v2Days(req, h.db.Now())
	if err != nil {
		return span{}, nil, err
	}
	recs, err := listRecords(ctx, h.db.Read(), auth.PrincipalFrom(ctx).TeamID, s.start, s.end)
	return s, recs, err
}

// GetDailyUsageUnitsV2 answers the quota units of each day of the range.
//
// Errors: Invalid (see v2Days).
func (h *UsageHandler) GetDailyUsageUnitsV2(ctx context.Context, req *oas.UsageV2DailyRequest) (*oas.UsageV2DailyUnitsHeaders, error) {
	s, recs, err := h.v2Records(ctx, req)
	if err != nil {
		return nil, err
	}
	days := sumDays(s, recs, func(r record) (int64, bool) { return r.quotaMicros, true })
	out := oas.UsageV2DailyUnits{Units: make([]oas.UsageV2DayUnits, len(days))}
	for i, d := range days {
		u := func(slot int) oas.UsageV2Number { return num(&d.slots[slot], 1e6) }
		out.Units[i] = oas.UsageV2DayUnits{
			StatsDate:                s.start.Add(time.Duration(i) * s.step),
			TotalUnits:               num(&d.total, 1e6),
			EvaluationUnits:          num(&d.evaluation, 1e6),
			HighLogsUnits:            u(slotHighLogs),
			MediumLogsUnits:          u(slotMediumLogs),
			LowLogsUnits:             u(slotLowLogs),
			HighTracingUnits:         u(slotHighTracing),
			MediumTracingUnits:       u(slotMediumTracing),
			LowTracingUnits:          u(slotLowTracing),
			HighMetricsUnits:         u(slotHighMetrics),
			BlockedMetricsUnits:      u(slotBlockedMetrics),
			BlockedUnits:             u(slotBlocked),
			LowSessionRecordingUnits: u(slotLowSessionRecording),
			CpuProfilesUnits:         u(slotCPUProfiles),
		}
	}
	return &oas.UsageV2DailyUnitsHeaders{Deprecation: deprecated, Link: successor, Response: out}, nil
}

// GetDailyUsageProcessedGbsV2 answers the processed gigabytes (10^9 bytes) of each day.
//
// Errors: Invalid (see v2Days).
func (h *UsageHandler) GetDailyUsageProcessedGbsV2(ctx context.Context, req *oas.UsageV2DailyRequest) (*oas.UsageV2DailyGbsHeaders, error) {
	s, recs, err := h.v2Records(ctx, req)
	if err != nil {
		return nil, err
	}
	days := sumDays(s, recs, func(r record) (int64, bool) {
		return r.value, r.kind == string(oas.UsageMeasurementKindMEASUREMENTKINDPROCESSEDDATASIZE)
	})
	out := oas.UsageV2DailyGbs{Gbs: make([]oas.UsageV2DayGbs, len(days))}
	for i, d := range days {
		g := func(slot int) oas.UsageV2Number { return num(&d.slots[slot], 1e9) }
		out.Gbs[i] = oas.UsageV2DayGbs{
			StatsDate:              s.start.Add(time.Duration(i) * s.step),
			TotalGbs:               num(&d.total, 1e9),
			HighLogsGbs:            g(slotHighLogs),
			MediumLogsGbs:          g(slotMediumLogs),
			LowLogsGbs:             g(slotLowLogs),
			HighTracingGbs:         g(slotHighTracing),
			MediumTracingGbs:       g(slotMediumTracing),
			LowTracingGbs:          g(slotLowTracing),
			HighMetricsGbs:         g(slotHighMetrics),
			BlockedMetricsGbs:      g(slotBlockedMetrics),
			BlockedGbs:             g(slotBlocked),
			LowSessionRecordingGbs: g(slotLowSessionRecording),
			CpuProfilesGbs:         g(slotCPUProfiles),
		}
	}
	return &oas.UsageV2DailyGbsHeaders{Deprecation: deprecated, Link: successor, Response: out}, nil
}

// GetDailyUsageEvaluationTokensV2 answers the evaluation tokens of each day, per evaluator.
//
// Errors: Invalid (see v2Days).
func (h *UsageHandler) GetDailyUsageEvaluationTokensV2(ctx context.Context, req *oas.UsageV2DailyRequest) (*oas.UsageV2DailyTokensHeaders, error) {
	s, recs, err := h.v2Records(ctx, req)
	if err != nil {
		return nil, err
	}
	days := sumDays(s, recs, func(r record) (int64, bool) {
		return r.value, r.kind == string(oas.UsageMeasurementKindMEASUREMENTKINDEVALUATIONS)
	})
	out := oas.UsageV2DailyTokens{Tokens: make([]oas.UsageV2DayTokens, len(days))}
	for i, d := range days {
		names := make([]string, 0, len(d.evaluators))
		for n := range d.evaluators {
			names = append(names, n)
		}
		sort.Strings(names)
		evals := make([]oas.UsageV2Evaluation, len(names))
		for j, n := range names {
			evals[j] = oas.UsageV2Evaluation{EvaluatorName: n, EvaluationTokens: num(d.evaluators[n], 1)}
		}
		out.Tokens[i] = oas.UsageV2DayTokens{
			StatsDate:   s.start.Add(time.Duration(i) * s.step),
			TotalTokens: num(&d.total, 1),
			Evaluations: evals,
		}
	}
	return &oas.UsageV2DailyTokensHeaders{Deprecation: deprecated, Link: successor, Response: out}, nil
}

// GetDataUsageExportStatusV2 answers the team's export setting; false until one is stored.
func (h *UsageHandler) GetDataUsageExportStatusV2(ctx context.Context) (*oas.UsageV2ExportStatusHeaders, error) {
	var enabled bool
	err := h.db.Read().QueryRowContext(ctx, `SELECT enabled FROM usage_export WHERE team_id = $1`,
		auth.PrincipalFrom(ctx).TeamID).Scan(&enabled)
	if err != nil && !db.IsNotFound(err) {
		return nil, fmt.Errorf("read usage export: %w", err)
	}
	return &oas.UsageV2ExportStatusHeaders{Deprecation: deprecated, Response: oas.UsageV2ExportStatus{Enabled: oas.NewOptBool(enabled)}}, nil
}

// UpdateDataUsageExportStatusV2 stores the team's export setting (absent means false).
func (h *UsageHandler) UpdateDataUsageExportStatusV2(ctx context.Context, req *oas.UsageV2ExportStatus) (*oas.UsageV2ExportStatusHeaders, error) {
	enabled := req.Enabled.Or(false)
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO usage_export (team_id, enabled, updated_at) VALUES ($1, $2, $3)
			 ON CONFLICT (team_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
			auth.PrincipalFrom(ctx).TeamID, enabled, tx.Now.UnixMicro())
		if err != nil {
			return fmt.Errorf("store usage export: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.UsageV2ExportStatusHeaders{Deprecation: deprecated, Response: oas.UsageV2ExportStatus{Enabled: oas.NewOptBool(enabled)}}, nil
}
