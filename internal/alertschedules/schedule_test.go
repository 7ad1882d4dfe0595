package alertschedules

import (
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func tfEnd(start, end, zone string) oas.AlertSchedulerTimeframe {
	return oas.AlertSchedulerTimeframe{StartTime: oas.NewOptString(start), EndTime: oas.NewOptString(end), Timezone: oas.NewOptString(zone)}
}

func tfFor(start string, n int32, unit oas.AlertSchedulerDurationFrequency, zone string) oas.AlertSchedulerTimeframe {
	return oas.AlertSchedulerTimeframe{StartTime: oas.NewOptString(start), Timezone: oas.NewOptString(zone),
		Duration: oas.NewOptAlertSchedulerDuration(oas.AlertSchedulerDuration{ForOver: oas.NewOptInt32(n), Frequency: oas.NewOptAlertSchedulerDurationFrequency(unit)})}
}

func recurring(d oas.AlertSchedulerDynamic) oas.AlertSchedulerSchedule {
	return oas.AlertSchedulerSchedule{Recurring: oas.NewOptAlertSchedulerRecurring(oas.AlertSchedulerRecurring{Schedule: oas.NewOptAlertSchedulerDynamic(d)})}
}

func oneTime(tf oas.AlertSchedulerTimeframe) oas.AlertSchedulerSchedule {
	return oas.AlertSchedulerSchedule{OneTime: oas.NewOptAlertSchedulerScheduleOneTime(oas.AlertSchedulerScheduleOneTime{Timeframe: oas.NewOptAlertSchedulerTimeframe(tf)})}
}

func compile(t *testing.T, s oas.AlertSchedulerSchedule) Schedule {
	t.Helper()
	c, err := Compile("schedule", s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func windows(s Schedule, from, to time.Time) []Window {
	var out []Window
	s.Windows(from, to, func(w Window) bool { out = append(out, w); return true })
	return out
}

// A daily 02:30 window of one hour in Europe/Berlin: the days around both DST changes of 2026
// (spring forward 29 March 02:00 CET → 03:00 CEST; fall back 25 October 03:00 CEST → 02:00 CET).
func TestDailyWindowAcrossBerlinDST(t *testing.T) {
	s := compile(t, recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{},
		Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-03-01T02:30:00", 1, oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYHOUR, "Europe/Berlin"))}))
	cases := []struct {
		day        string
		start, end string // UTC
	}{
		{"28 March, CET", "2026-03-28T01:30:00Z", "2026-03-28T02:30:00Z"},
		// 02:30 does not exist on 29 March: the window starts after the gap, 03:30 CEST, and
		// lasts its hour.
		{"29 March, spring forward", "2026-03-29T01:30:00Z", "2026-03-29T02:30:00Z"},
		{"30 March, CEST", "2026-03-30T00:30:00Z", "2026-03-30T01:30:00Z"},
		{"24 October, CEST", "2026-10-24T00:30:00Z", "2026-10-24T01:30:00Z"},
		// 02:30 happens twice on 25 October: the window starts at the later one (CET).
		{"25 October, fall back", "2026-10-25T01:30:00Z", "2026-10-25T02:30:00Z"},
		{"26 October, CET", "2026-10-26T01:30:00Z", "2026-10-26T02:30:00Z"},
	}
	for _, c := range cases {
		start, end := utc(c.start), utc(c.end)
		ws := windows(s, start.Add(-12*time.Hour), start.Add(12*time.Hour))
		if len(ws) != 1 || !ws[0].Start.Equal(start) || !ws[0].End.Equal(end) {
			t.Errorf("%s: windows %v, want [%s, %s)", c.day, ws, start, end)
			continue
		}
		for _, p := range []struct {
			at   time.Time
			want bool
		}{
			{start.Add(-time.Nanosecond), false},
			{start, true}, // start inclusive
			{end.Add(-time.Nanosecond), true},
			{end, false}, // end exclusive
		} {
			if got := s.ActiveAt(p.at); got != p.want {
				t.Errorf("%s: ActiveAt(%s) = %v, want %v", c.day, p.at, got, p.want)
			}
		}
	}
	if got := ws0(s, utc("2026-03-29T01:30:00Z")).Start.In(mustZone(t, "Europe/Berlin")).Format("15:04 MST"); got != "03:30 CEST" {
		t.Errorf("spring forward local start %s, want 03:30 CEST", got)
	}
}

func ws0(s Schedule, at time.Time) Window {
	w, _ := s.Next(at)
	return w
}

// A weekly Monday 09:00–17:00 window in America/New_York across the 2026 change to daylight
// time (8 March): 14:00Z before, 13:00Z after; and a Sunday 01:30–03:30 window on the change day,
// whose end (local) is in daylight time: the window keeps its two hours of elapsed time.
func TestWeeklyWindowAcrossNewYorkDST(t *testing.T) {
	s := compile(t, recurring(oas.AlertSchedulerDynamic{Weekly: oas.NewOptAlertSchedulerDynamicWeekly(oas.AlertSchedulerDynamicWeekly{DaysOfWeek: []int32{2}}),
		Timeframe: oas.NewOptAlertSchedulerTimeframe(tfEnd("2026-02-23T09:00:00", "2026-02-23T17:00:00", "America/New_York"))}))
	ws := windows(s, utc("2026-03-01T00:00:00Z"), utc("2026-03-17T00:00:00Z"))
	want := []string{"2026-03-02T14:00:00Z", "2026-03-09T13:00:00Z", "2026-03-16T13:00:00Z"}
	if len(ws) != len(want) {
		t.Fatalf("windows %v, want starts %v", ws, want)
	}
	for i, w := range ws {
		if !w.Start.Equal(utc(want[i])) || w.End.Sub(w.Start) != 8*time.Hour {
			t.Errorf("window %d: %v, want start %s, 8h", i, w, want[i])
		}
	}
	if !s.ActiveAt(utc("2026-03-09T13:00:00Z")) || s.ActiveAt(utc("2026-03-09T12:59:59Z")) || s.ActiveAt(utc("2026-03-09T21:00:00Z")) {
		t.Error("9 March (EDT): want active from 13:00Z to 21:00Z exclusive")
	}

	sun := compile(t, recurring(oas.AlertSchedulerDynamic{Weekly: oas.NewOptAlertSchedulerDynamicWeekly(oas.AlertSchedulerDynamicWeekly{DaysOfWeek: []int32{1}}),
		Timeframe: oas.NewOptAlertSchedulerTimeframe(tfEnd("2026-03-01T01:30:00", "2026-03-01T03:30:00", "America/New_York"))}))
	w, ok := sun.Next(utc("2026-03-08T00:00:00Z"))
	if !ok || !w.Start.Equal(utc("2026-03-08T06:30:00Z")) || !w.End.Equal(utc("2026-03-08T08:30:00Z")) {
		t.Errorf("8 March window %v, want [06:30Z, 08:30Z)", w)
	}
}

// Monthly windows on the 31st only happen in months that have one (RFC 5545); every 2 months
// from January skips February, April…; the 29th of February only in leap years.
func TestMonthlyMonthEnds(t *testing.T) {
	s := compile(t, recurring(oas.AlertSchedulerDynamic{Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{DaysOfMonth: []int32{31, 1}}),
		Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T23:00:00", 2, oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYHOUR, "UTC"))}))
	var got []string
	for _, w := range windows(s, utc("2026-01-01T00:00:00Z"), utc("2026-05-02T00:00:00Z")) {
		got = append(got, w.Start.Format("01-02"))
	}
	if strings.Join(got, " ") != "01-01 01-31 02-01 03-01 03-31 04-01 05-01" {
		t.Errorf("starts %v", got)
	}
	// The window of 31 January 23:00 runs over the month's end into 1 February 01:00.
	if !s.ActiveAt(utc("2026-02-01T00:30:00Z")) || s.ActiveAt(utc("2026-02-01T01:00:00Z")) {
		t.Error("31 January window must cover 1 February 00:30 and end at 01:00")
	}
	leap := compile(t, recurring(oas.AlertSchedulerDynamic{Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{DaysOfMonth: []int32{29}}),
		RepeatEvery: oas.NewOptInt32(12),
		Timeframe:   oas.NewOptAlertSchedulerTimeframe(tfFor("2026-02-01T00:00:00", 1, oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYDAY, "UTC"))}))
	var years []int
	for _, w := range windows(leap, utc("2026-01-01T00:00:00Z"), utc("2033-01-01T00:00:00Z")) {
		years = append(years, w.Start.Year())
	}
	if len(years) != 2 || years[0] != 2028 || years[1] != 2032 {
		t.Errorf("29 February windows in %v, want 2028 and 2032", years)
	}
}

func TestOneTimeBoundariesAndOperations(t *testing.T) {
	sch := oneTime(tfEnd("2026-06-01T22:00:00", "2026-06-02T02:00:00", "UTC+2"))
	s := compile(t, sch)
	start, end := utc("2026-06-01T20:00:00Z"), utc("2026-06-02T00:00:00Z")
	if !s.ActiveAt(start) || s.ActiveAt(start.Add(-time.Nanosecond)) || !s.ActiveAt(end.Add(-time.Nanosecond)) || s.ActiveAt(end) {
		t.Errorf("one-time window [%s, %s): start inclusive, end exclusive", start, end)
	}
	if !s.Silences(start) || s.Silences(end) {
		t.Error("MUTE (the default) silences inside the window only")
	}
	sch.ScheduleOperation = oas.NewOptAlertSchedulerOperation(oas.AlertSchedulerOperationSCHEDULEOPERATIONACTIVATE)
	a := compile(t, sch)
	if a.Silences(start) || !a.Silences(end) || !a.Silences(start.Add(-time.Hour)) {
		t.Error("ACTIVATE silences outside the window only")
	}
	if _, ok := s.Next(end); ok {
		t.Error("a past one-time window has no next window")
	}
	always := compile(t, oas.AlertSchedulerSchedule{Recurring: oas.NewOptAlertSchedulerRecurring(oas.AlertSchedulerRecurring{AlwaysActive: &oas.EmptyObject{}})})
	if !always.ActiveAt(utc("1999-01-01T00:00:00Z")) || !always.ActiveAt(utc("2999-01-01T00:00:00Z")) {
		t.Error("alwaysActive is active at every instant")
	}
}

func TestTerminationDateAndInterval(t *testing.T) {
	s := compile(t, recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, RepeatEvery: oas.NewOptInt32(3), TerminationDate: oas.NewOptString("2026-01-07"),
		Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T10:00", 30, oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYMINUTE, "Asia/Tokyo"))}))
	var got []string
	for _, w := range windows(s, utc("2025-12-01T00:00:00Z"), utc("2026-02-01T00:00:00Z")) {
		got = append(got, w.Start.In(s.Loc).Format("01-02 15:04"))
	}
	if strings.Join(got, ",") != "01-01 10:00,01-04 10:00,01-07 10:00" {
		t.Errorf("windows %v", got)
	}
}

func TestZones(t *testing.T) {
	for _, ok := range []string{"", "UTC", "UTC+2", "UTC-11", "UTC+05:30", "UTC+14", "Europe/Berlin", "America/New_York"} {
		if _, err := Zone(ok); err != nil {
			t.Errorf("Zone(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"Mars/Olympus", "Local", "UTC+15", "UTC+2:75", "../etc/passwd", "Europe/../Berlin"} {
		if _, err := Zone(bad); err == nil {
			t.Errorf("Zone(%q) accepted", bad)
		}
	}
	loc, _ := Zone("UTC-05:30")
	if _, off := time.Date(2026, 1, 1, 0, 0, 0, 0, loc).Zone(); off != -(5*3600 + 1800) {
		t.Errorf("UTC-05:30 offset %d", off)
	}
}

func TestCompileRefuses(t *testing.T) {
	day := oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYDAY
	cases := []struct {
		name string
		s    oas.AlertSchedulerSchedule
		want string
	}{
		{"no window", oas.AlertSchedulerSchedule{}, "schedule: exactly one of oneTime and recurring is required"},
		{"bad zone", oneTime(tfEnd("2026-01-01T00:00", "2026-01-02T00:00", "Nowhere/City")), "schedule.oneTime.timeframe.timezone: unknown time zone"},
		{"end before start", oneTime(tfEnd("2026-01-02T00:00", "2026-01-01T00:00", "UTC")), "schedule.oneTime.timeframe.endTime: must be after startTime"},
		{"end equals start", oneTime(tfEnd("2026-01-01T00:00", "2026-01-01T00:00", "UTC")), "endTime: must be after startTime"},
		{"bad time", oneTime(tfEnd("yesterday", "2026-01-01T00:00", "UTC")), "startTime: \"yesterday\" is not a time"},
		{"no length", oneTime(oas.AlertSchedulerTimeframe{StartTime: oas.NewOptString("2026-01-01T00:00")}), "exactly one of endTime and duration is required"},
		{"zero duration", oneTime(tfFor("2026-01-01T00:00", 0, day, "UTC")), "duration.forOver: must be at least 1, not 0"},
		{"huge duration", oneTime(tfFor("2026-01-01T00:00", 2000000000, day, "UTC")), "duration.forOver: 2000000000 is longer than 100 years"},
		{"unspecified unit", oneTime(tfFor("2026-01-01T00:00", 1, oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYUNSPECIFIED, "UTC")), "duration.frequency: required"},
		{"no frequency", recurring(oas.AlertSchedulerDynamic{Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T00:00", 1, day, "UTC"))}), "schedule.recurring.schedule: exactly one of daily, weekly and monthly is required"},
		{"two frequencies", recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{}), Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T00:00", 1, day, "UTC"))}), "not 2"},
		{"weekday 0", recurring(oas.AlertSchedulerDynamic{Weekly: oas.NewOptAlertSchedulerDynamicWeekly(oas.AlertSchedulerDynamicWeekly{DaysOfWeek: []int32{0}}), Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T00:00", 1, day, "UTC"))}), "weekly.daysOfWeek[0]: must be 1 (Sunday) to 7 (Saturday), not 0"},
		{"month day 32", recurring(oas.AlertSchedulerDynamic{Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{DaysOfMonth: []int32{1, 32}}), Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T00:00", 1, day, "UTC"))}), "monthly.daysOfMonth[1]: must be 1 to 31, not 32"},
		{"negative interval", recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, RepeatEvery: oas.NewOptInt32(-1), Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T00:00", 1, day, "UTC"))}), "repeatEvery: must be at least 1"},
		{"termination before start", recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, TerminationDate: oas.NewOptString("2025-12-31"), Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T00:00", 1, day, "UTC"))}), "terminationDate: must not be before"},
		{"year 1", oneTime(tfEnd("0001-01-01T00:00", "2026-01-01T00:00", "UTC")), "out of range"},
		{"empty recurring", oas.AlertSchedulerSchedule{Recurring: oas.NewOptAlertSchedulerRecurring(oas.AlertSchedulerRecurring{})}, "schedule.recurring: exactly one of alwaysActive and schedule is required"},
	}
	for _, c := range cases {
		_, err := Compile("schedule", c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestMatches(t *testing.T) {
	labels := func(kv ...string) []oas.AlertSchedulerMetaLabel {
		var out []oas.AlertSchedulerMetaLabel
		for i := 0; i < len(kv); i += 2 {
			l := oas.AlertSchedulerMetaLabel{Key: oas.NewOptString(kv[i])}
			if kv[i+1] != "*" {
				l.Value = oas.NewOptString(kv[i+1])
			}
			out = append(out, l)
		}
		return out
	}
	byLabels := func(kv ...string) oas.AlertSchedulerRule {
		return oas.AlertSchedulerRule{Filter: oas.NewOptAlertSchedulerFilter(oas.AlertSchedulerFilter{
			AlertMetaLabels: oas.NewOptAlertSchedulerFilterAlertMetaLabels(oas.AlertSchedulerFilterAlertMetaLabels{Value: labels(kv...)})})}
	}
	alert := map[string]string{"team": "db", "env": "prod"}
	cases := []struct {
		name string
		r    oas.AlertSchedulerRule
		want bool
	}{
		{"no filter", oas.AlertSchedulerRule{}, true},
		{"empty filter", oas.AlertSchedulerRule{Filter: oas.NewOptAlertSchedulerFilter(oas.AlertSchedulerFilter{})}, true},
		{"by id", oas.AlertSchedulerRule{Filter: oas.NewOptAlertSchedulerFilter(oas.AlertSchedulerFilter{AlertUniqueIds: oas.NewOptAlertSchedulerFilterAlertUniqueIds(oas.AlertSchedulerFilterAlertUniqueIds{Value: []string{"x", "a1"}})})}, true},
		{"other id", oas.AlertSchedulerRule{Filter: oas.NewOptAlertSchedulerFilter(oas.AlertSchedulerFilter{AlertUniqueIds: oas.NewOptAlertSchedulerFilterAlertUniqueIds(oas.AlertSchedulerFilterAlertUniqueIds{Value: []string{"x"}})})}, false},
		{"one label", byLabels("team", "db"), true},
		{"every label", byLabels("team", "db", "env", "prod"), true},
		{"one label differs", byLabels("team", "db", "env", "dev"), false},
		{"values of one name are alternatives", byLabels("env", "dev", "env", "prod"), true},
		{"label without value", byLabels("env", "*"), true},
		{"missing label", byLabels("region", "*"), false},
		{"what expression", oas.AlertSchedulerRule{Filter: oas.NewOptAlertSchedulerFilter(oas.AlertSchedulerFilter{WhatExpression: oas.NewOptString("source logs")})}, false},
	}
	for _, c := range cases {
		if got := Matches(c.r, "a1", alert); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Questions about distant instants start the recurrence at a later occurrence (rebase); the
// answers must be those of walking every occurrence from the start.
func TestRebasedAnswersEqualTheFullWalk(t *testing.T) {
	hour := oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYHOUR
	schedules := map[string]oas.AlertSchedulerSchedule{
		"every 3 days, Berlin 02:30": recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, RepeatEvery: oas.NewOptInt32(3),
			Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2019-01-01T02:30", 2, hour, "Europe/Berlin"))}),
		"every 2 weeks, Mon Wed Sun, New York": recurring(oas.AlertSchedulerDynamic{Weekly: oas.NewOptAlertSchedulerDynamicWeekly(oas.AlertSchedulerDynamicWeekly{DaysOfWeek: []int32{1, 2, 4}}), RepeatEvery: oas.NewOptInt32(2),
			Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2019-01-09T01:30", 30, hour, "America/New_York"))}),
		"every 5 months, 15th and 31st": recurring(oas.AlertSchedulerDynamic{Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{DaysOfMonth: []int32{31, 15}}), RepeatEvery: oas.NewOptInt32(5),
			Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2019-03-31T23:00", 3, hour, "Australia/Sydney"))}),
		"weekly, the start's day": recurring(oas.AlertSchedulerDynamic{Weekly: oas.NewOptAlertSchedulerDynamicWeekly(oas.AlertSchedulerDynamicWeekly{}),
			Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2019-01-10T12:00", 1, hour, "UTC"))}),
	}
	for name, sch := range schedules {
		s := compile(t, sch)
		var all []Window
		next := s.Recurrence.Iterator()
		for {
			st, ok := next()
			if !ok || st.Year() > 2031 {
				break
			}
			all = append(all, Window{st, st.Add(s.Length)})
		}
		at := utc("2019-01-01T00:00:00Z")
		for i := 0; i < 3000; i++ {
			at = at.Add(time.Duration(i%7+1)*37*time.Hour + time.Duration(i)*time.Minute)
			if at.Year() > 2030 {
				break
			}
			want := false
			var wantNext Window
			for _, w := range all {
				if w.Contains(at) {
					want = true
				}
				if wantNext.Start.IsZero() && w.End.After(at) {
					wantNext = w
				}
			}
			if got := s.ActiveAt(at); got != want {
				t.Fatalf("%s: ActiveAt(%s) = %v, the full walk says %v", name, at, got, want)
			}
			if got, _ := s.Next(at); !got.Start.Equal(wantNext.Start) {
				t.Fatalf("%s: Next(%s) = %v, the full walk says %v", name, at, got, wantNext)
			}
		}
	}
}

func TestActiveAtAndSilencesOfARule(t *testing.T) {
	r := oas.AlertSchedulerRule{Enabled: oas.NewOptBool(true), Schedule: oas.NewOptAlertSchedulerSchedule(oneTime(tfEnd("2026-06-01T22:00:00", "2026-06-02T02:00:00", "Europe/Berlin")))}
	start, end := utc("2026-06-01T20:00:00Z"), utc("2026-06-02T00:00:00Z")
	for _, c := range []struct {
		at   time.Time
		want bool
	}{{start.Add(-time.Second), false}, {start, true}, {end.Add(-time.Nanosecond), true}, {end, false}} {
		if got, err := ActiveAt(r, c.at); err != nil || got != c.want {
			t.Errorf("ActiveAt(%s) = %v, %v; want %v", c.at, got, err, c.want)
		}
		if got := Silences(r, "any", nil, c.at); got != c.want {
			t.Errorf("Silences(%s) = %v, want %v", c.at, got, c.want)
		}
	}
	r.Enabled = oas.NewOptBool(false)
	if Silences(r, "any", nil, start) {
		t.Error("a disabled rule silences")
	}
	if _, err := ActiveAt(oas.AlertSchedulerRule{}, start); err == nil {
		t.Error("ActiveAt of a rule without a schedule: no error")
	}
}
