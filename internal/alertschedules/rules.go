package alertschedules

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxRules is the most scheduler rules a team holds.
const MaxRules = 2000

// invalid turns a schedule's *fieldError into the API's 400.
func invalid(err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return apierror.Invalidf("%s: %s", fe.path, fe.reason)
	}
	return err
}

// check returns the rule as it is stored: the fields set by the service cleared, the operation
// filled in, the schedule compiled to check it. path names the rule in errors
// ("alertSchedulerRule", "createAlertSchedulerRuleRequests[2].alertSchedulerRule"; "" for a
// configuration document's rule, whose fields are named from the rule itself).
//
// Errors: Invalid naming the field and the rule broken.
func check(path string, r oas.AlertSchedulerRule) (oas.AlertSchedulerRule, Schedule, error) {
	r.ID, r.UniqueIdentifier = oas.OptString{}, oas.OptString{}
	r.CreatedAt, r.UpdatedAt = oas.OptString{}, oas.OptString{}
	name := r.Name.Or("")
	if strings.TrimSpace(name) == "" {
		return r, Schedule{}, apierror.Invalidf("%s: required, 1–255 characters not all blank", fieldPath(path, "name"))
	}
	if n := utf8.RuneCountInString(name); n > 255 {
		return r, Schedule{}, apierror.Invalidf("%s: at most 255 characters, not %d", fieldPath(path, "name"), n)
	}
	for i, l := range r.MetaLabels {
		if l.Key.Or("") == "" {
			return r, Schedule{}, apierror.Invalidf("%s: required", fieldPath(path, fmt.Sprintf("metaLabels[%d].key", i)))
		}
	}
	if f, ok := r.Filter.Get(); ok {
		fp := fieldPath(path, "filter")
		// An empty list ({} or {"value": []}) picks no alert out: it is the filter left out, and
		// matches every alert (clients send alertUniqueIds: {} for "all alerts").
		ml, hasLabels := f.AlertMetaLabels.Get()
		ids, hasIDs := f.AlertUniqueIds.Get()
		switch {
		case hasLabels && hasIDs: // the public document makes them alternatives, even empty
			return r, Schedule{}, apierror.Invalidf("%s: at most one of alertMetaLabels and alertUniqueIds, not both", fp)
		case hasLabels:
			for i, l := range ml.Value {
				if l.Key.Or("") == "" {
					return r, Schedule{}, apierror.Invalidf("%s.alertMetaLabels.value[%d].key: required", fp, i)
				}
			}
		case hasIDs:
			for i, id := range ids.Value {
				if id == "" {
					return r, Schedule{}, apierror.Invalidf("%s.alertUniqueIds.value[%d]: must not be empty", fp, i)
				}
			}
		}
	}
	sch, ok := r.Schedule.Get()
	if !ok {
		return r, Schedule{}, apierror.Invalidf("%s: required; a rule has no default window", fieldPath(path, "schedule"))
	}
	if sch.ScheduleOperation.Or(oas.AlertSchedulerOperationSCHEDULEOPERATIONUNSPECIFIED) == oas.AlertSchedulerOperationSCHEDULEOPERATIONUNSPECIFIED {
		sch.ScheduleOperation = oas.NewOptAlertSchedulerOperation(oas.AlertSchedulerOperationSCHEDULEOPERATIONMUTE)
	}
	if o, ok := sch.OneTime.Get(); ok {
		if tf, ok := o.Timeframe.Get(); ok {
			o.Timeframe = oas.NewOptAlertSchedulerTimeframe(normalTimeframe(tf))
		}
		sch.OneTime.SetTo(o)
	}
	if rec, ok := sch.Recurring.Get(); ok {
		if d, ok := rec.Schedule.Get(); ok {
			if tf, ok := d.Timeframe.Get(); ok {
				d.Timeframe = oas.NewOptAlertSchedulerTimeframe(normalTimeframe(tf))
			}
			rec.Schedule.SetTo(d)
		}
		sch.Recurring.SetTo(rec)
	}
	r.Schedule = oas.NewOptAlertSchedulerSchedule(sch)
	if !r.Enabled.Set {
		r.Enabled = oas.NewOptBool(false)
	}
	compiled, err := Compile(fieldPath(path, "schedule"), sch)
	if err != nil {
		return r, Schedule{}, invalid(err)
	}
	return r, compiled, nil
}

// fieldPath names the field name of the rule at path in errors.
func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// normalTimeframe is a timeframe as stored: submittedStartTime is the service's to answer, and an
// empty endTime is not set (proto3), so that a duration beside it is the one alternative.
func normalTimeframe(tf oas.AlertSchedulerTimeframe) oas.AlertSchedulerTimeframe {
	tf.SubmittedStartTime = oas.OptString{}
	if tf.EndTime.Or("") == "" {
		tf.EndTime = oas.OptString{}
	}
	return tf
}

// withSubmittedStart answers a create or replace: each timeframe's submittedStartTime is its
// startTime as sent (mgmtapi keeps the start as sent, so they are the same).
func withSubmittedStart(r oas.AlertSchedulerRule) oas.AlertSchedulerRule {
	sch, ok := r.Schedule.Get()
	if !ok {
		return r
	}
	if o, ok := sch.OneTime.Get(); ok {
		if tf, ok := o.Timeframe.Get(); ok {
			tf.SubmittedStartTime = tf.StartTime
			o.Timeframe.SetTo(tf)
			sch.OneTime.SetTo(o)
		}
	}
	if rec, ok := sch.Recurring.Get(); ok {
		if d, ok := rec.Schedule.Get(); ok {
			if tf, ok := d.Timeframe.Get(); ok {
				tf.SubmittedStartTime = tf.StartTime
				d.Timeframe.SetTo(tf)
				rec.Schedule.SetTo(d)
				sch.Recurring.SetTo(rec)
			}
		}
	}
	r.Schedule.SetTo(sch)
	return r
}

// Matches reports whether the rule's filter picks the alert: every alert when the filter names
// neither alert ids nor labels (an empty alertUniqueIds or alertMetaLabels names none); by id
// when it lists alertUniqueIds; by labels when it lists
// alertMetaLabels — each label name listed must be among the alert's labels with one of the
// values listed for it (a listed label without a value takes any value). A filter with a
// whatExpression never matches: mgmtapi cannot evaluate DataPrime, and silencing more than the
// rule asked for would hide pages.
func Matches(r oas.AlertSchedulerRule, alertDefID string, labels map[string]string) bool {
	f, ok := r.Filter.Get()
	if !ok {
		return true
	}
	if f.WhatExpression.Or("") != "" {
		return false
	}
	if ids, ok := f.AlertUniqueIds.Get(); ok && len(ids.Value) > 0 {
		for _, id := range ids.Value {
			if id == alertDefID {
				return true
			}
		}
		return false
	}
	if ml, ok := f.AlertMetaLabels.Get(); ok && len(ml.Value) > 0 {
		wanted := map[string][]oas.OptString{}
		var order []string
		for _, l := range ml.Value {
			k := l.Key.Or("")
			if _, seen := wanted[k]; !seen {
				order = append(order, k)
			}
			wanted[k] = append(wanted[k], l.Value)
		}
		for _, k := range order {
			v, present := labels[k]
			if !present {
				return false
			}
			ok := false
			for _, want := range wanted[k] {
				if w, set := want.Get(); !set || w == "" || w == v {
					ok = true
					break
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
	return true
}

// indexPath names item i of a batch's list in errors.
func indexPath(list string, i int) string {
	return fmt.Sprintf("%s[%d].alertSchedulerRule", list, i)
}
