package alertschedules

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ErrNoExactMapping is wrapped by ToAlertmanager's error when the rule has no exact Alertmanager
// equivalent; the message says which part of the rule does not map.
var ErrNoExactMapping = errors.New("no exact Alertmanager equivalent")

// AlertDefIDLabel is the label that carries an alert's definition id in the alerts mgmtapi
// exports to Prometheus; an alertUniqueIds filter becomes a matcher on it.
const AlertDefIDLabel = "alert_def_id"

// Matcher is one label matcher of an Alertmanager silence (API v2 field names).
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// String is the matcher in Alertmanager's route notation (name="value", name=~"re").
func (m Matcher) String() string {
	op := "="
	if m.IsRegex {
		op = "=~"
	}
	return fmt.Sprintf("%s%s%q", m.Name, op, m.Value)
}

// Silence is an Alertmanager silence (the body of POST /api/v2/silences).
type Silence struct {
	Matchers  []Matcher `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
}

// TimeRange is one entry of an Alertmanager time interval: the instants whose wall clock in
// Location falls in one of Times on one of the Weekdays / DaysOfMonth (empty lists match all).
type TimeRange struct {
	Times       []ClockRange `yaml:"times,omitempty" json:"times,omitempty"`
	Weekdays    []string     `yaml:"weekdays,omitempty" json:"weekdays,omitempty"`
	DaysOfMonth []string     `yaml:"days_of_month,omitempty" json:"days_of_month,omitempty"`
	Location    string       `yaml:"location,omitempty" json:"location,omitempty"`
}

// ClockRange is [StartTime, EndTime) of a day, "HH:MM" ("24:00" ends at midnight).
type ClockRange struct {
	StartTime string `yaml:"start_time" json:"start_time"`
	EndTime   string `yaml:"end_time" json:"end_time"`
}

// TimeInterval is a named entry of Alertmanager's top-level time_intervals.
type TimeInterval struct {
	Name          string      `yaml:"name" json:"name"`
	TimeIntervals []TimeRange `yaml:"time_intervals" json:"time_intervals"`
}

// Route is the route that applies the interval to the rule's alerts: muted during
// MuteTimeIntervals (SCHEDULE_OPERATION_MUTE), or only notified during ActiveTimeIntervals
// (SCHEDULE_OPERATION_ACTIVATE). It goes above the receiver's routes with `continue: true`
// semantics left to the operator.
type Route struct {
	Matchers            []string `yaml:"matchers" json:"matchers"`
	MuteTimeIntervals   []string `yaml:"mute_time_intervals,omitempty" json:"mute_time_intervals,omitempty"`
	ActiveTimeIntervals []string `yaml:"active_time_intervals,omitempty" json:"active_time_intervals,omitempty"`
}

// Alertmanager is a rule's exact Alertmanager equivalent: a Silence (one-time MUTE window), or
// a TimeInterval with the Route that uses it (recurring windows).
type Alertmanager struct {
	Silence      *Silence
	TimeInterval *TimeInterval
	Route        *Route
}

// YAML is the configuration fragment of a recurring rule: `time_intervals:` and `routes:` entries
// to merge into an Alertmanager configuration; empty for a silence.
func (a Alertmanager) YAML() (string, error) {
	if a.TimeInterval == nil {
		return "", nil
	}
	b, err := yaml.Marshal(struct {
		TimeIntervals []TimeInterval `yaml:"time_intervals"`
		Routes        []Route        `yaml:"routes"`
	}{[]TimeInterval{*a.TimeInterval}, []Route{*a.Route}})
	return string(b), err
}

func noMap(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNoExactMapping, fmt.Sprintf(format, args...))
}

// matchers turns the rule's filter into Alertmanager matchers: alert ids into a matcher on
// AlertDefIDLabel, each meta label name into one matcher (its listed values as alternatives; no
// value means any non-empty value). No filter gives no matcher (every alert).
func matchers(r oas.AlertSchedulerRule) ([]Matcher, error) {
	f, ok := r.Filter.Get()
	if !ok {
		return nil, nil
	}
	if f.WhatExpression.Or("") != "" {
		return nil, noMap("filter.whatExpression is a DataPrime expression, which Alertmanager cannot evaluate")
	}
	if ids, ok := f.AlertUniqueIds.Get(); ok && len(ids.Value) > 0 {
		return []Matcher{alternatives(AlertDefIDLabel, ids.Value)}, nil
	}
	ml, ok := f.AlertMetaLabels.Get()
	if !ok || len(ml.Value) == 0 {
		return nil, nil // an empty list names nothing: every alert
	}
	values := map[string][]string{}
	anyValue := map[string]bool{}
	var order []string
	for _, l := range ml.Value {
		k := l.Key.Or("")
		if _, seen := values[k]; !seen && !anyValue[k] {
			order = append(order, k)
		}
		if v := l.Value.Or(""); v == "" {
			anyValue[k] = true
		} else {
			values[k] = append(values[k], v)
		}
	}
	var out []Matcher
	for _, k := range order {
		if anyValue[k] {
			out = append(out, Matcher{Name: k, Value: ".+", IsRegex: true, IsEqual: true})
			continue
		}
		out = append(out, alternatives(k, values[k]))
	}
	return out, nil
}

// alternatives is name="v" for one value, name=~"v1|v2" (each quoted) for more.
func alternatives(name string, vs []string) Matcher {
	vs = slices.Compact(slices.Sorted(slices.Values(vs)))
	if len(vs) == 1 {
		return Matcher{Name: name, Value: vs[0], IsEqual: true}
	}
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = regexp.QuoteMeta(v)
	}
	return Matcher{Name: name, Value: strings.Join(q, "|"), IsRegex: true, IsEqual: true}
}

var amWeekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// ToAlertmanager returns the rule's exact Alertmanager equivalent as of now, or an error wrapping
// ErrNoExactMapping that names what does not map:
//   - a one-time MUTE window is a Silence from its start to its end with the filter's matchers;
//   - recurring windows (MUTE: mute_time_intervals; ACTIVATE: active_time_intervals) are a
//     TimeInterval and a Route, when every window is the same wall-clock span of whole minutes on
//     the days chosen, repeatEvery is 1, there is no terminationDate, the first window has
//     begun by now, a window shorter than a day crosses midnight only in a daily or weekly rule,
//     and the zone is UTC, a whole-hour UTC offset, or an IANA zone that changes offset at no
//     wall-clock time inside the window in the coming two years (Alertmanager reads wall clocks,
//     mgmtapi keeps a window's elapsed length across a DST change);
//   - alwaysActive MUTE is a TimeInterval with no constraint (every instant).
//
// Nothing maps for a disabled rule, a whatExpression filter, a one-time ACTIVATE window (a
// silence cannot cover all time but one window) or alwaysActive ACTIVATE (which silences
// nothing).
func ToAlertmanager(r oas.AlertSchedulerRule, now time.Time) (Alertmanager, error) {
	var out Alertmanager
	if !r.Enabled.Or(false) {
		return out, noMap("the rule is disabled")
	}
	ms, err := matchers(r)
	if err != nil {
		return out, err
	}
	sch := r.Schedule.Or(oas.AlertSchedulerSchedule{})
	s, err := Compile("schedule", sch)
	if err != nil {
		return out, fmt.Errorf("%w: %v", ErrNoExactMapping, err)
	}
	name := "mgmtapi-scheduler-rule-" + r.UniqueIdentifier.Or("unsaved")
	route := func() *Route {
		rt := &Route{Matchers: []string{}}
		for _, m := range ms {
			rt.Matchers = append(rt.Matchers, m.String())
		}
		if s.Mute {
			rt.MuteTimeIntervals = []string{name}
		} else {
			rt.ActiveTimeIntervals = []string{name}
		}
		return rt
	}
	switch {
	case s.Always:
		if !s.Mute {
			return out, noMap("an alwaysActive ACTIVATE rule silences nothing")
		}
		out.TimeInterval = &TimeInterval{Name: name, TimeIntervals: []TimeRange{{}}}
		out.Route = route()
		return out, nil
	case s.Recurrence == nil:
		if !s.Mute {
			return out, noMap("a one-time ACTIVATE window silences all time but the window; a silence covers one interval")
		}
		if ms == nil {
			ms = []Matcher{}
		}
		out.Silence = &Silence{Matchers: ms, StartsAt: s.First.Start.UTC(), EndsAt: s.First.End.UTC(),
			CreatedBy: "mgmtapi", Comment: fmt.Sprintf("scheduler rule %s: %s", r.UniqueIdentifier.Or(""), r.Name.Or(""))}
		return out, nil
	}
	dyn, _ := sch.Recurring.Or(oas.AlertSchedulerRecurring{}).Schedule.Get()
	if dyn.RepeatEvery.Or(0) > 1 {
		return out, noMap("repeatEvery %d: Alertmanager time intervals repeat every day, week or month", dyn.RepeatEvery.Or(0))
	}
	if dyn.TerminationDate.Or("") != "" {
		return out, noMap("terminationDate: Alertmanager time intervals do not end")
	}
	if s.First.Start.After(now) {
		return out, noMap("the first window starts in the future; Alertmanager time intervals hold from now on")
	}
	start := s.First.Start.In(s.Loc)
	if start.Second() != 0 || s.Length%time.Minute != 0 {
		return out, noMap("Alertmanager times are whole minutes")
	}
	if s.Length >= 24*time.Hour {
		return out, noMap("a window of a day or more")
	}
	location, err := amLocation(s)
	if err != nil {
		return out, err
	}
	startMin := start.Hour()*60 + start.Minute()
	endMin := startMin + int(s.Length/time.Minute)
	if err := steadyClock(s.Loc, startMin, endMin, now); err != nil {
		return out, err
	}
	clock := func(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	first := TimeRange{Location: location}
	var second *TimeRange // the part after midnight
	if endMin <= 24*60 {
		first.Times = []ClockRange{{clock(startMin), clock(endMin)}}
	} else {
		first.Times = []ClockRange{{clock(startMin), "24:00"}}
		second = &TimeRange{Location: location, Times: []ClockRange{{"00:00", clock(endMin - 24*60)}}}
	}
	switch {
	case dyn.Daily != nil:
	case dyn.Weekly.Set:
		days := dyn.Weekly.Value.DaysOfWeek
		if len(days) == 0 {
			days = []int32{int32(start.Weekday()) + 1}
		}
		for _, d := range days {
			first.Weekdays = append(first.Weekdays, amWeekdays[d-1])
			if second != nil {
				second.Weekdays = append(second.Weekdays, amWeekdays[d%7])
			}
		}
	case dyn.Monthly.Set:
		if second != nil {
			return out, noMap("a monthly window across midnight: the day after the 28th–31st is not one day of the month")
		}
		days := dyn.Monthly.Value.DaysOfMonth
		if len(days) == 0 {
			days = []int32{int32(start.Day())}
		}
		for _, d := range days {
			first.DaysOfMonth = append(first.DaysOfMonth, fmt.Sprint(d))
		}
	}
	out.TimeInterval = &TimeInterval{Name: name, TimeIntervals: []TimeRange{first}}
	if second != nil {
		out.TimeInterval.TimeIntervals = append(out.TimeInterval.TimeIntervals, *second)
	}
	out.Route = route()
	return out, nil
}

// amLocation names the zone as Alertmanager loads it: UTC, an IANA name, or Etc/GMT∓h for a
// whole-hour UTC offset (the Etc names invert the sign).
func amLocation(s Schedule) (string, error) {
	if s.Zone == "" || s.Zone == "UTC" || s.Zone == "Etc/UTC" || s.Zone == "Z" {
		return "UTC", nil
	}
	if m := fixedZone.FindStringSubmatch(s.Zone); m != nil {
		_, off := time.Date(2026, 1, 1, 0, 0, 0, 0, s.Loc).Zone()
		if off%3600 != 0 || off/3600 > 12 || off/3600 < -14 {
			return "", noMap("time zone %s has no Etc/GMT name Alertmanager can load", s.Zone)
		}
		h := off / 3600
		switch {
		case h == 0:
			return "UTC", nil
		case h > 0:
			return fmt.Sprintf("Etc/GMT-%d", h), nil
		default:
			return fmt.Sprintf("Etc/GMT+%d", -h), nil
		}
	}
	return s.Zone, nil
}

// steadyClock fails when loc changes offset, in the two years from now, at a wall-clock time
// inside [startMin, endMin) minutes of a day (endMin may pass midnight): there Alertmanager's
// wall-clock window and mgmtapi's elapsed one differ.
func steadyClock(loc *time.Location, startMin, endMin int, now time.Time) error {
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for i := 0; i < 2*366; i++ {
		a := day.AddDate(0, 0, i)
		b := a.Add(24 * time.Hour)
		_, offA := a.In(loc).Zone()
		_, offB := b.In(loc).Zone()
		if offA == offB {
			continue
		}
		for b.Sub(a) > time.Minute { // the change's instant, to the minute
			mid := a.Add(b.Sub(a) / 2)
			if _, off := mid.In(loc).Zone(); off == offA {
				a = mid
			} else {
				b = mid
			}
		}
		// The wall clocks between the old offset's and the new one's reading of the change
		// are skipped (spring) or repeated (autumn).
		lo, hi := b.In(time.FixedZone("", offA)), b.In(loc)
		if hi.Before(lo) || (hi.Hour()*60+hi.Minute() < lo.Hour()*60+lo.Minute()) {
			lo, hi = hi, lo
		}
		l, h := lo.Hour()*60+lo.Minute(), hi.Hour()*60+hi.Minute()
		for _, shift := range []int{0, 24 * 60} {
			if startMin < h+shift && endMin > l+shift {
				return noMap("the zone changes offset between %s and %s local, inside the window: Alertmanager reads wall clocks, mgmtapi keeps a window's elapsed length", lo.Format("15:04"), hi.Format("15:04"))
			}
		}
	}
	return nil
}
