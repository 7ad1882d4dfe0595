package cases

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// settingsDoc is what a case settings configuration holds besides its id and times; it is
// stored as the JSON of oas.CaseSettingsCreateInput.
type settingsDoc struct {
	Name                    oas.OptCaseSettingsName
	GlobalIndicatorSettings oas.CaseIndicatorSettings
	CaseLifecycle           oas.OptCaseLifecycleSettings
}

func (d settingsDoc) encode() ([]byte, error) {
	in := oas.CaseSettingsCreateInput{Name: d.Name, GlobalIndicatorSettings: d.GlobalIndicatorSettings, CaseLifecycle: d.CaseLifecycle}
	b, err := in.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode case settings: %w", err)
	}
	return b, nil
}

func decodeSettings(b []byte) (settingsDoc, error) {
	var in oas.CaseSettingsCreateInput
	if err := in.UnmarshalJSON(b); err != nil {
		return settingsDoc{}, fmt.Errorf("decode case settings: %w", err)
	}
	return settingsDoc{Name: in.Name, GlobalIndicatorSettings: in.GlobalIndicatorSettings, CaseLifecycle: in.CaseLifecycle}, nil
}

// differs reports whether d and old would be stored differently.
func (d settingsDoc) differs(old settingsDoc) (bool, error) {
	a, err := d.encode()
	if err != nil {
		return false, err
	}
	b, err := old.encode()
	if err != nil {
		return false, err
	}
	return !bytes.Equal(a, b), nil
}

func (d settingsDoc) wire(id string, created, updated time.Time) oas.CaseSettings {
	return oas.CaseSettings{
		ID: oas.LowerUUID(id), Name: d.Name,
		CreateTime: oas.CaseSettingsTime(created.UTC()), UpdateTime: oas.CaseSettingsTime(updated.UTC()),
		GlobalIndicatorSettings: d.GlobalIndicatorSettings, CaseLifecycle: d.CaseLifecycle,
	}
}

// The KPI bounds are the operator API's (KPISeconds), so that both ways of setting a threshold
// accept the same values.
const (
	minKPISeconds = 60
	maxKPISeconds = 31536000
	// maxPeriodSeconds is the largest duration the public documents' duration type can hold
	// (10000 years).
	maxPeriodSeconds = 315576000000
)

var durationText = regexp.MustCompile(`^([0-9]{1,12})(\.[0-9]{1,9})?s$`)

// checkPeriod requires s to be a duration written as seconds followed by s (`3600s`, `1.5s`),
// at most maxPeriodSeconds. Periods are stored as sent.
//
// Errors: Invalid naming field.
func checkPeriod(field, s string) error {
	m := durationText.FindStringSubmatch(s)
	if m == nil {
		return apierror.Invalidf("%s: %q is not a duration; write whole or decimal seconds followed by s, such as 3600s", field, s)
	}
	secs, _ := strconv.ParseInt(m[1], 10, 64)
	if secs > maxPeriodSeconds || secs == maxPeriodSeconds && strings.Trim(m[2], ".0") != "" {
		return apierror.Invalidf("%s: %q is longer than %ds, the longest duration", field, s, int64(maxPeriodSeconds))
	}
	return nil
}

// kpiSeconds reads a KPI threshold: whole seconds followed by s, from minKPISeconds to
// maxKPISeconds.
//
// Errors: Invalid naming field.
func kpiSeconds(field, s string) (int64, error) {
	m := durationText.FindStringSubmatch(s)
	if m == nil || strings.Trim(m[2], ".0") != "" {
		return 0, apierror.Invalidf("%s: %q is not a KPI threshold; write whole seconds followed by s, from %ds to %ds",
			field, s, minKPISeconds, maxKPISeconds)
	}
	secs, _ := strconv.ParseInt(m[1], 10, 64)
	if secs < minKPISeconds || secs > maxKPISeconds {
		return 0, apierror.Invalidf("%s: %q is out of range; a KPI threshold is from %ds to %ds", field, s, minKPISeconds, maxKPISeconds)
	}
	return secs, nil
}

// checkSettings applies the rules the schema cannot say to d, and leaves out of it the periods
// sent empty (not set, so not stored and not answered).
//
// Errors: Invalid naming the field: a filter with both `all` and `values`; an UNSPECIFIED
// priority among the selected ones; a period that is not a duration; a KPI entry without type or
// priority, repeating another's type and priority, enabled without a threshold, or whose
// threshold is not whole seconds from 60s to 31536000s.
func checkSettings(d *settingsDoc) error {
	for i, f := range d.GlobalIndicatorSettings.FilteringConditions {
		at := fmt.Sprintf("globalIndicatorSettings.filteringConditions[%d]", i)
		if p, ok := f.Priorities.Get(); ok {
			if p.All != nil && p.Values.Set {
				return apierror.Invalidf("%s.priorities: set all or values, not both", at)
			}
			for j, v := range p.Values.Value.Items {
				if v == oas.IndicatorPriorityINDICATORPRIORITYUNSPECIFIED {
					return apierror.Invalidf("%s.priorities.values.items[%d]: must name a priority, INDICATOR_PRIORITY_P1 to P5", at, j)
				}
			}
		}
		if l, ok := f.EntityLabels.Get(); ok && l.All != nil && l.Values.Set {
			return apierror.Invalidf("%s.entityLabels: set all or values, not both", at)
		}
	}
	lc, ok := d.CaseLifecycle.Get()
	if !ok {
		return nil
	}
	periods := []struct {
		field string
		p     *oas.OptCaseSettingsPeriod
	}{
		{"caseLifecycle.suppressionPeriod", &lc.SuppressionPeriod},
		{"caseLifecycle.resolutionSnoozePeriod", &lc.ResolutionSnoozePeriod},
	}
	if lc.AutoResolve.Set {
		periods = append(periods, struct {
			field string
			p     *oas.OptCaseSettingsPeriod
		}{"caseLifecycle.autoResolve.inactivePeriod", &lc.AutoResolve.Value.InactivePeriod})
	}
	for _, p := range periods {
		if v, ok := p.p.Get(); ok {
			if v == "" {
				p.p.Reset()
				continue
			}
			if err := checkPeriod(p.field, string(v)); err != nil {
				return err
			}
		}
	}
	if a, ok := lc.AutoClose.Get(); ok {
		if err := checkPeriod("caseLifecycle.autoClose.postResolutionPeriod", a.PostResolutionPeriod); err != nil {
			return err
		}
	}
	if k, ok := lc.Kpi.Get(); ok {
		seen := map[[2]int]int{}
		for i := range k.Thresholds {
			e := &k.Thresholds[i]
			at := fmt.Sprintf("caseLifecycle.kpi.thresholds[%d]", i)
			kpi := kpiIndex(e.Type.Value)
			if kpi < 0 {
				return apierror.Invalidf("%s.type: required; one of KPI_TYPE_TIME_TO_ACKNOWLEDGE, KPI_TYPE_TIME_TO_RESOLVE, KPI_TYPE_TIME_TO_UPDATE", at)
			}
			p := rank(e.Priority.Value)
			if !e.Priority.Set || p > 5 {
				return apierror.Invalidf("%s.priority: required; one of CASE_PRIORITY_P1 to CASE_PRIORITY_P5", at)
			}
			if j, ok := seen[[2]int{kpi, p}]; ok {
				return apierror.Invalidf("%s: %s for %s is also thresholds[%d]; give each KPI type and priority once",
					at, e.Type.Value, e.Priority.Value, j)
			}
			seen[[2]int{kpi, p}] = i
			if e.Threshold.Value == "" {
				e.Threshold.Reset()
			}
			if !e.Threshold.Set {
				if e.Enabled.Value {
					return apierror.Invalidf("%s.threshold: required when the entry is enabled", at)
				}
				continue
			}
			if _, err := kpiSeconds(at+".threshold", string(e.Threshold.Value)); err != nil {
				return err
			}
		}
	}
	d.CaseLifecycle.SetTo(lc)
	return nil
}

// kpiOrder are the KPI types in the order kpiLimits keeps them.
var kpiOrder = [3]oas.KPIType{oas.KPITypeKPITYPETIMETOACKNOWLEDGE, oas.KPITypeKPITYPETIMETORESOLVE, oas.KPITypeKPITYPETIMETOUPDATE}

// kpiIndex is k's place in kpiOrder; -1 for UNSPECIFIED or anything else.
func kpiIndex(k oas.KPIType) int {
	for i, o := range kpiOrder {
		if o == k {
			return i
		}
	}
	return -1
}

// kpiLimits are the seconds allowed per KPI (kpiOrder) and priority (P1 to P5) before a breach;
// 0 turns the KPI off for that priority.
type kpiLimits [3][5]int64

// limitsOf are the operator-style thresholds t as kpiLimits.
func limitsOf(t *oas.CaseKPIThresholds) kpiLimits {
	var l kpiLimits
	for i, by := range []oas.KPIThresholdsByPriority{t.TimeToAcknowledge, t.TimeToResolve, t.TimeToUpdate} {
		l[i] = [5]int64{int64(by.P1), int64(by.P2), int64(by.P3), int64(by.P4), int64(by.P5)}
	}
	return l
}

// overlay makes each entry of a checked configuration's KPI list win over l: an enabled entry
// sets its threshold, a disabled one turns its KPI off for its priority. Entries that do not
// check (which a stored configuration never has) are skipped.
func (l *kpiLimits) overlay(entries []oas.CaseSettingsKPIThreshold) {
	for _, e := range entries {
		kpi, p := kpiIndex(e.Type.Value), rank(e.Priority.Value)
		if kpi < 0 || p > 5 {
			continue
		}
		if !e.Enabled.Value {
			l[kpi][p-1] = 0
			continue
		}
		if secs, err := kpiSeconds("threshold", string(e.Threshold.Value)); err == nil {
			l[kpi][p-1] = secs
		}
	}
}

// limit is the seconds allowed for kpi at priority p (P5's for a case without priority); ok is
// false when the KPI is off there.
func (l *kpiLimits) limit(kpi oas.KPIType, p oas.CasePriority) (secs int64, ok bool) {
	i := max(kpiIndex(kpi), 0)
	secs = l[i][min(rank(p), 5)-1]
	return secs, secs > 0
}

// thresholdEntries are t as a configuration's KPI list: one enabled entry per KPI type and
// priority, by type, then priority.
func thresholdEntries(t *oas.CaseKPIThresholds) oas.CaseSettingsKPIs {
	l := limitsOf(t)
	out := oas.CaseSettingsKPIs{Thresholds: make([]oas.CaseSettingsKPIThreshold, 0, 15)}
	for i, kpi := range kpiOrder {
		for p := range 5 {
			out.Thresholds = append(out.Thresholds, oas.CaseSettingsKPIThreshold{
				Type:      oas.NewOptKPIType(kpi),
				Priority:  oas.NewOptCasePriority(oas.CasePriority("CASE_PRIORITY_P" + strconv.Itoa(p+1))),
				Threshold: oas.NewOptCaseSettingsPeriod(oas.CaseSettingsPeriod(strconv.FormatInt(l[i][p], 10) + "s")),
				Enabled:   oas.NewOptBool(true),
			})
		}
	}
	return out
}
