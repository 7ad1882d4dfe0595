package alertschedules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones must resolve on an image without /usr/share/zoneinfo

	"github.com/teambition/rrule-go"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Window is one interval of a schedule, [Start, End): the start is inside it, the end is not.
// An open window (an always active rule) has a zero End.
type Window struct {
	Start, End time.Time
}

// Open reports whether the window has no end.
func (w Window) Open() bool { return w.End.IsZero() }

// Contains reports whether at is inside the window: Start <= at < End.
func (w Window) Contains(at time.Time) bool {
	return !at.Before(w.Start) && (w.Open() || at.Before(w.End))
}

// Schedule is a rule's schedule made computable: its operation and its windows.
type Schedule struct {
	// Mute is true for SCHEDULE_OPERATION_MUTE (silence inside the windows), false for
	// SCHEDULE_OPERATION_ACTIVATE (silence outside them).
	Mute bool
	// Always is true for recurring.alwaysActive: one window with no start nor end.
	Always bool
	// Zone is the time zone's name as written in the rule ("" is UTC), Loc the zone itself.
	Zone string
	Loc  *time.Location
	// First is the first window; Length its length (every window's length).
	First  Window
	Length time.Duration
	// Recurrence gives each window's start (nil for a one-time window). Its starts are computed
	// by the RRULE library in Loc: a local start time that a spring-forward skips moves forward
	// by the gap, one that a fall-back repeats is taken at its later instant (time.Date).
	Recurrence *rrule.RRule
	// Rule is the RRULE text of Recurrence, for the record.
	Rule string
	// opt is Recurrence's options, for rebase.
	opt rrule.ROption
}

// maxLength bounds a window's length (and keeps time.Duration far from overflow).
const maxLength = 100 * 366 * 24 * time.Hour

// earliest and latest bound the times a rule may name: a recurrence is walked from its start, so
// the start cannot lie centuries back.
var (
	earliest = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// fixedZone is the UTC±h[h][:mm] notation of the public clients ("UTC+2", "UTC-05:30").
var fixedZone = regexp.MustCompile(`^(?:UTC|GMT)([+-])(\d{1,2})(?::?(\d{2}))?$`)

// Zone resolves a rule's time zone: "" and "UTC" are UTC, UTC±h[h][:mm] a fixed offset (at most
// 14 hours), anything else an IANA name (Europe/Berlin).
func Zone(name string) (*time.Location, error) {
	switch name {
	case "", "UTC", "Etc/UTC", "Z":
		return time.UTC, nil
	case "Local":
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name such as Europe/Berlin, or UTC±hh[:mm]", name)
	}
	if m := fixedZone.FindStringSubmatch(name); m != nil {
		h, _ := strconv.Atoi(m[2])
		mm := 0
		if m[3] != "" {
			mm, _ = strconv.Atoi(m[3])
		}
		if h > 14 || mm > 59 || (h == 14 && mm > 0) {
			return nil, fmt.Errorf("offset %q is out of range (at most 14 hours)", name)
		}
		off := h*3600 + mm*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(name, off), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || strings.Contains(name, "..") {
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name such as Europe/Berlin, or UTC±hh[:mm]", name)
	}
	return loc, nil
}

var localLayouts = []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999", "2006-01-02 15:04"}

// ParseTime reads a rule's time: local YYYY-MM-DDThh:mm[:ss[.fff]] in loc, or RFC 3339 with an
// offset (an instant, then seen in loc).
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	var t time.Time
	var err error
	if t, err = time.Parse(time.RFC3339Nano, s); err == nil {
		t = t.In(loc)
	} else {
		ok := false
		for _, layout := range localLayouts {
			if t, err = time.ParseInLocation(layout, s, loc); err == nil {
				ok = true
				break
			}
		}
		if !ok {
			return time.Time{}, fmt.Errorf("%q is not a time: write YYYY-MM-DDThh:mm[:ss[.fff]] (read in the timezone) or RFC 3339 with an offset", s)
		}
	}
	if t.Before(earliest) || t.After(latest) {
		return time.Time{}, fmt.Errorf("%q is out of range (years 1970–2999)", s)
	}
	return t, nil
}

// parseDate reads a terminationDate: a date (the whole day counts, in loc) or a time.
func parseDate(s string, loc *time.Location) (time.Time, error) {
	if d, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		if d.Before(earliest) || d.After(latest) {
			return time.Time{}, fmt.Errorf("%q is out of range (years 1970–2999)", s)
		}
		return time.Date(d.Year(), d.Month(), d.Day(), 23, 59, 59, 999999999, loc), nil
	}
	t, err := ParseTime(s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date: write YYYY-MM-DD, or a time as in the timeframe", s)
	}
	return t, nil
}

// fieldError is a rule's broken field: path and reason, turned into a 400 by rules.go.
type fieldError struct {
	path, reason string
}

func (e *fieldError) Error() string { return e.path + ": " + e.reason }

func errAt(path, format string, args ...any) error {
	return &fieldError{path: path, reason: fmt.Sprintf(format, args...)}
}

// timeframe reads a timeframe: its start, its length and its zone.
func timeframe(path string, tf oas.AlertSchedulerTimeframe) (start time.Time, length time.Duration, zone string, loc *time.Location, err error) {
	zone = tf.Timezone.Or("")
	if loc, err = Zone(zone); err != nil {
		return start, 0, "", nil, errAt(path+".timezone", "%v", err)
	}
	s, ok := tf.StartTime.Get()
	if !ok || s == "" {
		return start, 0, "", nil, errAt(path+".startTime", "required")
	}
	if start, err = ParseTime(s, loc); err != nil {
		return start, 0, "", nil, errAt(path+".startTime", "%v", err)
	}
	end, hasEnd := tf.EndTime.Get()
	hasEnd = hasEnd && end != ""
	d, hasDuration := tf.Duration.Get()
	switch {
	case hasEnd && hasDuration:
		return start, 0, "", nil, errAt(path, "exactly one of endTime and duration, not both")
	case !hasEnd && !hasDuration:
		return start, 0, "", nil, errAt(path, "exactly one of endTime and duration is required; a window has no default length")
	case hasEnd:
		e, err := ParseTime(end, loc)
		if err != nil {
			return start, 0, "", nil, errAt(path+".endTime", "%v", err)
		}
		if !e.After(start) {
			return start, 0, "", nil, errAt(path+".endTime", "must be after startTime (%s)", s)
		}
		length = e.Sub(start)
	default:
		n := d.ForOver.Or(0)
		if n < 1 {
			return start, 0, "", nil, errAt(path+".duration.forOver", "must be at least 1, not %d", n)
		}
		var unit time.Duration
		switch d.Frequency.Or(oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYUNSPECIFIED) {
		case oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYMINUTE:
			unit = time.Minute
		case oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYHOUR:
			unit = time.Hour
		case oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYDAY:
			unit = 24 * time.Hour
		default:
			return start, 0, "", nil, errAt(path+".duration.frequency", "required: DURATION_FREQUENCY_MINUTE, _HOUR or _DAY")
		}
		if int64(n) > int64(maxLength/unit) {
			return start, 0, "", nil, errAt(path+".duration.forOver", "%d is longer than 100 years", n)
		}
		length = time.Duration(n) * unit
	}
	if length > maxLength {
		return start, 0, "", nil, errAt(path, "the window is longer than 100 years")
	}
	return start, length, zone, loc, nil
}

// weekdays maps the public numbering (1 Sunday … 7 Saturday) to RRULE days.
var weekdays = []rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

// Compile makes a rule's schedule computable, checking it; path names the schedule in errors
// (e.g. "alertSchedulerRule.schedule"). Errors are *fieldError.
func Compile(path string, s oas.AlertSchedulerSchedule) (Schedule, error) {
	var out Schedule
	switch s.ScheduleOperation.Or(oas.AlertSchedulerOperationSCHEDULEOPERATIONUNSPECIFIED) {
	case oas.AlertSchedulerOperationSCHEDULEOPERATIONACTIVATE:
		out.Mute = false
	default:
		out.Mute = true
	}
	one, hasOne := s.OneTime.Get()
	rec, hasRec := s.Recurring.Get()
	switch {
	case hasOne && hasRec:
		return out, errAt(path, "exactly one of oneTime and recurring, not both")
	case !hasOne && !hasRec:
		return out, errAt(path, "exactly one of oneTime and recurring is required; a rule has no default window")
	case hasOne:
		tf, ok := one.Timeframe.Get()
		if !ok {
			return out, errAt(path+".oneTime.timeframe", "required")
		}
		start, length, zone, loc, err := timeframe(path+".oneTime.timeframe", tf)
		if err != nil {
			return out, err
		}
		out.Zone, out.Loc, out.Length = zone, loc, length
		out.First = Window{Start: start, End: start.Add(length)}
		return out, nil
	}
	path += ".recurring"
	always := rec.AlwaysActive != nil
	dyn, hasDyn := rec.Schedule.Get()
	switch {
	case always && hasDyn:
		return out, errAt(path, "exactly one of alwaysActive and schedule, not both")
	case always:
		out.Always, out.Loc = true, time.UTC
		return out, nil
	case !hasDyn:
		return out, errAt(path, "exactly one of alwaysActive and schedule is required; a recurring rule has no default")
	}
	path += ".schedule"
	tf, ok := dyn.Timeframe.Get()
	if !ok {
		return out, errAt(path+".timeframe", "required")
	}
	start, length, zone, loc, err := timeframe(path+".timeframe", tf)
	if err != nil {
		return out, err
	}
	start = start.Truncate(time.Second) // RRULE times are whole seconds
	out.Zone, out.Loc, out.Length = zone, loc, length
	out.First = Window{Start: start, End: start.Add(length)}
	interval := int(dyn.RepeatEvery.Or(0))
	if interval < 0 {
		return out, errAt(path+".repeatEvery", "must be at least 1 (0 or left out means 1), not %d", interval)
	}
	if interval == 0 {
		interval = 1
	}
	opt := rrule.ROption{Dtstart: start, Interval: interval, Wkst: rrule.MO}
	daily := dyn.Daily != nil
	weekly, isWeekly := dyn.Weekly.Get()
	monthly, isMonthly := dyn.Monthly.Get()
	n := 0
	for _, b := range []bool{daily, isWeekly, isMonthly} {
		if b {
			n++
		}
	}
	if n != 1 {
		if n == 0 {
			return out, errAt(path, "exactly one of daily, weekly and monthly is required; a recurrence has no default")
		}
		return out, errAt(path, "exactly one of daily, weekly and monthly, not %d", n)
	}
	seen := map[int32]bool{}
	switch {
	case daily:
		opt.Freq = rrule.DAILY
	case isWeekly:
		opt.Freq = rrule.WEEKLY
		for i, d := range weekly.DaysOfWeek {
			if d < 1 || d > 7 {
				return out, errAt(fmt.Sprintf("%s.weekly.daysOfWeek[%d]", path, i), "must be 1 (Sunday) to 7 (Saturday), not %d", d)
			}
			if seen[d] {
				return out, errAt(fmt.Sprintf("%s.weekly.daysOfWeek[%d]", path, i), "day %d is listed twice", d)
			}
			seen[d] = true
			opt.Byweekday = append(opt.Byweekday, weekdays[d-1])
		}
		if len(opt.Byweekday) == 0 { // explicit, so that a rebased start keeps the days
			opt.Byweekday = []rrule.Weekday{weekdays[start.Weekday()]}
		}
	case isMonthly:
		opt.Freq = rrule.MONTHLY
		for i, d := range monthly.DaysOfMonth {
			if d < 1 || d > 31 {
				return out, errAt(fmt.Sprintf("%s.monthly.daysOfMonth[%d]", path, i), "must be 1 to 31, not %d", d)
			}
			if seen[d] {
				return out, errAt(fmt.Sprintf("%s.monthly.daysOfMonth[%d]", path, i), "day %d is listed twice", d)
			}
			seen[d] = true
			opt.Bymonthday = append(opt.Bymonthday, int(d))
		}
		if len(opt.Bymonthday) == 0 {
			opt.Bymonthday = []int{start.Day()}
		}
	}
	if td, ok := dyn.TerminationDate.Get(); ok && td != "" {
		until, err := parseDate(td, loc)
		if err != nil {
			return out, errAt(path+".terminationDate", "%v", err)
		}
		if until.Before(start) {
			return out, errAt(path+".terminationDate", "must not be before the timeframe's startTime")
		}
		opt.Until = until
	}
	r, err := rrule.NewRRule(opt)
	if err != nil {
		return out, errAt(path, "%v", err)
	}
	out.Recurrence, out.Rule, out.opt = r, opt.RRuleString(), opt
	return out, nil
}

// rebase returns the recurrence started at a later occurrence of the same phase, at least one
// period before target, so that a question about a distant instant does not walk every
// occurrence since the start; nil when there is nothing to skip. A rebased start whose local
// time a DST change moved is not used (RRULE takes its clock from the start): one period earlier
// is tried.
func (s Schedule) rebase(target time.Time) *rrule.RRule {
	o := s.opt
	start := o.Dtstart
	if !target.After(start) {
		return nil
	}
	var periods int
	switch o.Freq {
	case rrule.DAILY:
		periods = int(target.Sub(start) / (24 * time.Hour))
	case rrule.WEEKLY:
		periods = int(target.Sub(start) / (7 * 24 * time.Hour))
	case rrule.MONTHLY:
		periods = (target.Year()-start.Year())*12 + int(target.Month()) - int(start.Month())
	}
	for k := periods/o.Interval - 1; k > 0 && k > periods/o.Interval-4; k-- {
		n := k * o.Interval
		var t time.Time
		switch o.Freq {
		case rrule.DAILY:
			t = start.AddDate(0, 0, n)
		case rrule.WEEKLY:
			t = start.AddDate(0, 0, 7*n)
		case rrule.MONTHLY:
			t = time.Date(start.Year(), start.Month()+time.Month(n), 1, start.Hour(), start.Minute(), start.Second(), 0, start.Location())
		}
		if t.Hour() != start.Hour() || t.Minute() != start.Minute() || t.Second() != start.Second() {
			continue
		}
		o.Dtstart = t
		if r, err := rrule.NewRRule(o); err == nil {
			return r
		}
		return nil
	}
	return nil
}

// maxWalk bounds the occurrences walked for one question, so that no rule costs without end.
const maxWalk = 200000

// Windows calls yield with each window that overlaps [from, to), in order, until yield returns
// false; an always active schedule yields one open window.
func (s Schedule) Windows(from, to time.Time, yield func(Window) bool) {
	if s.Always {
		yield(Window{})
		return
	}
	if s.Recurrence == nil {
		if s.First.End.After(from) && s.First.Start.Before(to) {
			yield(s.First)
		}
		return
	}
	r := s.Recurrence
	if rb := s.rebase(from.Add(-s.Length)); rb != nil {
		r = rb
	}
	next := r.Iterator()
	for i := 0; i < maxWalk; i++ {
		start, ok := next()
		if !ok || !start.Before(to) {
			return
		}
		w := Window{Start: start, End: start.Add(s.Length)}
		if !w.End.After(from) {
			continue
		}
		if !yield(w) {
			return
		}
	}
}

// ActiveAt reports whether at is inside one of the schedule's windows (start inclusive, end
// exclusive), whatever the operation.
func (s Schedule) ActiveAt(at time.Time) bool {
	found := false
	s.Windows(at, at.Add(time.Nanosecond), func(w Window) bool {
		found = w.Contains(at)
		return !found
	})
	return found
}

// Silences reports whether the schedule silences matching alerts at at: inside a window for MUTE,
// outside every window for ACTIVATE.
func (s Schedule) Silences(at time.Time) bool {
	return s.ActiveAt(at) == s.Mute
}

// Next returns the window that holds at, or else the first one after it; false when none is left.
func (s Schedule) Next(at time.Time) (Window, bool) {
	var out Window
	found := false
	s.Windows(at, latest, func(w Window) bool {
		out, found = w, true
		return false
	})
	return out, found
}

// ActiveAt reports whether the rule's schedule has a window that holds at (start inclusive, end
// exclusive), whatever its operation and whether it is enabled.
//
// Errors: the rule's schedule is not valid (as a create would refuse it).
func ActiveAt(rule oas.AlertSchedulerRule, at time.Time) (bool, error) {
	s, err := Compile("schedule", rule.Schedule.Or(oas.AlertSchedulerSchedule{}))
	if err != nil {
		return false, err
	}
	return s.ActiveAt(at), nil
}
