package alertschedules

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func rule(s oas.AlertSchedulerSchedule, f *oas.AlertSchedulerFilter) oas.AlertSchedulerRule {
	r := oas.AlertSchedulerRule{Name: oas.NewOptString("r"), UniqueIdentifier: oas.NewOptString("u1"), Enabled: oas.NewOptBool(true), Schedule: oas.NewOptAlertSchedulerSchedule(s)}
	if f != nil {
		r.Filter = oas.NewOptAlertSchedulerFilter(*f)
	}
	return r
}

func labelFilter(kv ...string) *oas.AlertSchedulerFilter {
	var ls []oas.AlertSchedulerMetaLabel
	for i := 0; i < len(kv); i += 2 {
		l := oas.AlertSchedulerMetaLabel{Key: oas.NewOptString(kv[i])}
		if kv[i+1] != "" {
			l.Value = oas.NewOptString(kv[i+1])
		}
		ls = append(ls, l)
	}
	return &oas.AlertSchedulerFilter{AlertMetaLabels: oas.NewOptAlertSchedulerFilterAlertMetaLabels(oas.AlertSchedulerFilterAlertMetaLabels{Value: ls})}
}

var amNow = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

func TestOneTimeMuteIsASilence(t *testing.T) {
	a, err := ToAlertmanager(rule(oneTime(tfEnd("2026-06-01T22:00:00", "2026-06-02T02:00:00", "UTC+2")), labelFilter("team", "db", "env", "prod", "env", "staging", "region", "")), amNow)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Silence
	if s == nil || a.TimeInterval != nil || !s.StartsAt.Equal(utc("2026-06-01T20:00:00Z")) || !s.EndsAt.Equal(utc("2026-06-02T00:00:00Z")) {
		t.Fatalf("silence %+v", a)
	}
	var got []string
	for _, m := range s.Matchers {
		got = append(got, m.String())
	}
	if strings.Join(got, " ") != `team="db" env=~"prod|staging" region=~".+"` {
		t.Fatalf("matchers %v", got)
	}
	ids := &oas.AlertSchedulerFilter{AlertUniqueIds: oas.NewOptAlertSchedulerFilterAlertUniqueIds(oas.AlertSchedulerFilterAlertUniqueIds{Value: []string{"a.b"}})}
	a, err = ToAlertmanager(rule(oneTime(tfEnd("2026-06-01T22:00:00", "2026-06-02T02:00:00", "UTC")), ids), amNow)
	if err != nil || len(a.Silence.Matchers) != 1 || a.Silence.Matchers[0].String() != `alert_def_id="a.b"` {
		t.Fatalf("id silence %+v %v", a, err)
	}
}

func TestRecurringIsATimeInterval(t *testing.T) {
	hour := oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYHOUR
	cases := []struct {
		name string
		s    oas.AlertSchedulerSchedule
		want []TimeRange
	}{
		{"daily in UTC+2", recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T02:30", 1, hour, "UTC+2"))}),
			[]TimeRange{{Times: []ClockRange{{"02:30", "03:30"}}, Location: "Etc/GMT-2"}}},
		{"weekly across midnight", recurring(oas.AlertSchedulerDynamic{Weekly: oas.NewOptAlertSchedulerDynamicWeekly(oas.AlertSchedulerDynamicWeekly{DaysOfWeek: []int32{7}}),
			Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-03T22:00", 4, hour, "UTC"))}),
			[]TimeRange{{Times: []ClockRange{{"22:00", "24:00"}}, Weekdays: []string{"saturday"}, Location: "UTC"},
				{Times: []ClockRange{{"00:00", "02:00"}}, Weekdays: []string{"sunday"}, Location: "UTC"}}},
		{"monthly in New York away from the change hours", recurring(oas.AlertSchedulerDynamic{Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{DaysOfMonth: []int32{1, 31}}),
			Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T09:00", 8, hour, "America/New_York"))}),
			[]TimeRange{{Times: []ClockRange{{"09:00", "17:00"}}, DaysOfMonth: []string{"1", "31"}, Location: "America/New_York"}}},
	}
	for _, c := range cases {
		a, err := ToAlertmanager(rule(c.s, labelFilter("team", "db")), amNow)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		y, err := a.YAML()
		if !reflect.DeepEqual(a.TimeInterval.TimeIntervals, c.want) || a.TimeInterval.Name != "mgmtapi-scheduler-rule-u1" ||
			!reflect.DeepEqual(a.Route, &Route{Matchers: []string{`team="db"`}, MuteTimeIntervals: []string{"mgmtapi-scheduler-rule-u1"}}) {
			t.Errorf("%s: %+v %+v, want %+v", c.name, a.TimeInterval, a.Route, c.want)
		}
		if err != nil || !strings.Contains(y, "mute_time_intervals:") || !strings.Contains(y, "location: "+c.want[0].Location) {
			t.Errorf("%s: YAML %v\n%s", c.name, err, y)
		}
		checkConfig(t, a)
	}
	act := recurring(oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-01T09:00", 8, hour, "Europe/Berlin"))})
	act.ScheduleOperation = oas.NewOptAlertSchedulerOperation(oas.AlertSchedulerOperationSCHEDULEOPERATIONACTIVATE)
	a, err := ToAlertmanager(rule(act, nil), amNow)
	if err != nil || len(a.Route.ActiveTimeIntervals) != 1 || len(a.Route.MuteTimeIntervals) != 0 {
		t.Fatalf("ACTIVATE: %+v %v", a.Route, err)
	}
	checkConfig(t, a)
	always, err := ToAlertmanager(rule(oas.AlertSchedulerSchedule{Recurring: oas.NewOptAlertSchedulerRecurring(oas.AlertSchedulerRecurring{AlwaysActive: &oas.EmptyObject{}})}, nil), amNow)
	if err != nil || len(always.TimeInterval.TimeIntervals) != 1 {
		t.Fatalf("always: %+v %v", always, err)
	}
	checkConfig(t, always)
}

func TestWhatDoesNotMap(t *testing.T) {
	hour := oas.AlertSchedulerDurationFrequencyDURATIONFREQUENCYHOUR
	daily := func(tf oas.AlertSchedulerTimeframe) oas.AlertSchedulerDynamic {
		return oas.AlertSchedulerDynamic{Daily: &oas.EmptyObject{}, Timeframe: oas.NewOptAlertSchedulerTimeframe(tf)}
	}
	every2 := daily(tfFor("2026-01-01T02:00", 1, hour, "UTC"))
	every2.RepeatEvery = oas.NewOptInt32(2)
	until := daily(tfFor("2026-01-01T02:00", 1, hour, "UTC"))
	until.TerminationDate = oas.NewOptString("2027-01-01")
	activateOnce := oneTime(tfEnd("2026-06-01T22:00", "2026-06-02T02:00", "UTC"))
	activateOnce.ScheduleOperation = oas.NewOptAlertSchedulerOperation(oas.AlertSchedulerOperationSCHEDULEOPERATIONACTIVATE)
	alwaysActivate := oas.AlertSchedulerSchedule{ScheduleOperation: oas.NewOptAlertSchedulerOperation(oas.AlertSchedulerOperationSCHEDULEOPERATIONACTIVATE),
		Recurring: oas.NewOptAlertSchedulerRecurring(oas.AlertSchedulerRecurring{AlwaysActive: &oas.EmptyObject{}})}
	monthlyNight := oas.AlertSchedulerDynamic{Monthly: oas.NewOptAlertSchedulerDynamicMonthly(oas.AlertSchedulerDynamicMonthly{DaysOfMonth: []int32{31}}),
		Timeframe: oas.NewOptAlertSchedulerTimeframe(tfFor("2026-01-31T23:00", 2, hour, "UTC"))}
	disabled := rule(oneTime(tfEnd("2026-06-01T22:00", "2026-06-02T02:00", "UTC")), nil)
	disabled.Enabled = oas.NewOptBool(false)
	cases := []struct {
		name string
		r    oas.AlertSchedulerRule
		want string
	}{
		{"disabled", disabled, "disabled"},
		{"what expression", rule(oneTime(tfEnd("2026-06-01T22:00", "2026-06-02T02:00", "UTC")), &oas.AlertSchedulerFilter{WhatExpression: oas.NewOptString("source logs")}), "whatExpression"},
		{"one-time ACTIVATE", rule(activateOnce, nil), "one-time ACTIVATE"},
		{"always ACTIVATE", rule(alwaysActivate, nil), "silences nothing"},
		{"every 2 days", rule(recurring(every2), nil), "repeatEvery 2"},
		{"termination", rule(recurring(until), nil), "terminationDate"},
		{"future start", rule(recurring(daily(tfFor("2027-01-01T02:00", 1, hour, "UTC"))), nil), "future"},
		{"seconds", rule(recurring(daily(tfEnd("2026-01-01T02:00:30", "2026-01-01T03:00:30", "UTC"))), nil), "whole minutes"},
		{"a day long", rule(recurring(daily(tfFor("2026-01-01T02:00", 24, hour, "UTC"))), nil), "a day or more"},
		{"half-hour offset", rule(recurring(daily(tfFor("2026-01-01T02:00", 1, hour, "UTC+05:30"))), nil), "Etc/GMT"},
		{"Berlin 02:30 covers the change", rule(recurring(daily(tfFor("2026-01-01T02:30", 1, hour, "Europe/Berlin"))), nil), "changes offset"},
		{"Berlin 01:30–02:30 touches the change", rule(recurring(daily(tfFor("2026-01-01T01:30", 1, hour, "Europe/Berlin"))), nil), "changes offset"},
		{"monthly across midnight", rule(recurring(monthlyNight), nil), "monthly window across midnight"},
	}
	for _, c := range cases {
		_, err := ToAlertmanager(c.r, amNow)
		if !errors.Is(err, ErrNoExactMapping) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrNoExactMapping with %q", c.name, err, c.want)
		}
	}
	// Berlin windows that end at the change's start, or start at its end, map.
	for _, tf := range []oas.AlertSchedulerTimeframe{tfFor("2026-01-01T01:00", 1, hour, "Europe/Berlin"), tfFor("2026-01-01T03:00", 1, hour, "Europe/Berlin")} {
		if _, err := ToAlertmanager(rule(recurring(daily(tf)), nil), amNow); err != nil {
			t.Errorf("%s: %v", tf.StartTime.Or(""), err)
		}
	}
}

// checkConfig runs amtool check-config on a configuration holding the rule's interval and route,
// when amtool is installed (Debian's prometheus-alertmanager; CI has it).
func checkConfig(t *testing.T, a Alertmanager) {
	t.Helper()
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Log("amtool not installed: the configuration is not checked by Alertmanager")
		return
	}
	type route struct {
		Route    `yaml:",inline"`
		Receiver string `yaml:"receiver"`
	}
	cfg := map[string]any{
		"route":          map[string]any{"receiver": "none", "routes": []route{{*a.Route, "none"}}},
		"receivers":      []map[string]string{{"name": "none"}},
		"time_intervals": []TimeInterval{*a.TimeInterval},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(amtool, "check-config", path).CombinedOutput(); err != nil {
		t.Errorf("amtool check-config: %v\n%s\nconfiguration:\n%s", err, out, b)
	}
}
