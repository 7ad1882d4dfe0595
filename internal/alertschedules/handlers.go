// Package alertschedules serves alert scheduler rules (the public "suppression rules"): windows,
// one-time or recurring in a time zone, during which (or, for SCHEDULE_OPERATION_ACTIVATE,
// outside which) the alerts a rule's filter picks do not notify. Recurrence is computed by an
// RRULE library (schedule.go); Suppressing answers the routing whether a rule silences an alert
// at an instant; ToAlertmanager gives a rule's Alertmanager equivalent where there is an exact one.
package alertschedules

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// SchedulerRuleHandler implements the alert scheduler rule operations of oas.Handler.
type SchedulerRuleHandler struct {
	db *db.DB
}

// NewHandler returns the alert scheduler rule operations.
func NewHandler(database *db.DB) *SchedulerRuleHandler { return &SchedulerRuleHandler{db: database} }

func notFoundAs(err error, field, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%s: no alert scheduler rule %q", field, id)
	}
	return err
}

// create stores the checked rules under new ids, all in one transaction (see createIn).
func (h *SchedulerRuleHandler) create(ctx context.Context, rules []oas.AlertSchedulerRule) ([]oas.AlertSchedulerRule, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	var out []oas.AlertSchedulerRule
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		var err error
		out, err = createIn(ctx, tx, teamID, rules)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// createIn stores the checked rules in tx as the team's, each under its uniqueIdentifier (a new
// one when it has none) with a new version id, and answers them as a create does.
//
// Errors: LimitExceeded when the team would pass MaxRules; db.ErrConflict for a uniqueIdentifier
// the team has already.
func createIn(ctx context.Context, tx *db.Tx, teamID int64, rules []oas.AlertSchedulerRule) ([]oas.AlertSchedulerRule, error) {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return nil, err
	}
	n, err := countRules(ctx, tx, teamID)
	if err != nil {
		return nil, err
	}
	if n+len(rules) > MaxRules {
		return nil, apierror.LimitExceededf("alertSchedulerRule: the team holds %d scheduler rules; %d more would pass the most it may, %d", n, len(rules), MaxRules)
	}
	out := make([]oas.AlertSchedulerRule, len(rules))
	for i, r := range rules {
		if r.UniqueIdentifier.Or("") == "" {
			r.UniqueIdentifier = oas.NewOptString(tx.NewID())
		}
		r.ID = oas.NewOptString(tx.NewID())
		if err := insertRule(ctx, tx, teamID, r); err != nil {
			return nil, err
		}
		stamp := oas.NewOptString(tx.Now.UTC().Format(time.RFC3339Nano))
		r.CreatedAt, r.UpdatedAt = stamp, stamp
		out[i] = withSubmittedStart(r)
	}
	return out, nil
}

// replace stores each checked rule over the stored one of its uniqueIdentifier, all in one
// transaction (see replaceIn).
func (h *SchedulerRuleHandler) replace(ctx context.Context, rules []oas.AlertSchedulerRule, ids, fields []string) ([]oas.AlertSchedulerRule, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	var out []oas.AlertSchedulerRule
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		var err error
		out, err = replaceIn(ctx, tx, teamID, rules, ids, fields)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replaceIn stores in tx each checked rule over the team's rule ids[i], with a new version id
// and the stored rule's createdAt, and answers them as a replace does; fields names each rule's
// uniqueIdentifier in errors.
//
// Errors: NotFound naming fields[i] when the team has no rule ids[i].
func replaceIn(ctx context.Context, tx *db.Tx, teamID int64, rules []oas.AlertSchedulerRule, ids, fields []string) ([]oas.AlertSchedulerRule, error) {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return nil, err
	}
	out := make([]oas.AlertSchedulerRule, len(rules))
	for i, r := range rules {
		old, err := getRule(ctx, tx, teamID, ids[i])
		if err != nil {
			return nil, notFoundAs(err, fields[i], ids[i])
		}
		r.UniqueIdentifier = oas.NewOptString(ids[i])
		r.ID = oas.NewOptString(tx.NewID())
		if err := updateRule(ctx, tx, teamID, r); err != nil {
			return nil, err
		}
		r.CreatedAt = old.CreatedAt
		r.UpdatedAt = oas.NewOptString(tx.Now.UTC().Format(time.RFC3339Nano))
		out[i] = withSubmittedStart(r)
	}
	return out, nil
}

// removeIn deletes the team's rule id in tx; field names the id in errors.
//
// Errors: NotFound naming field when the team has no such rule.
func removeIn(ctx context.Context, tx *db.Tx, teamID int64, field, id string) error {
	if err := lockTeam(ctx, tx, teamID); err != nil {
		return err
	}
	return notFoundAs(deleteRule(ctx, tx, teamID, id), field, id)
}

// CreateAlertSchedulerRule stores a new rule.
//
// Errors: Invalid (see check); LimitExceeded when the team holds MaxRules.
func (h *SchedulerRuleHandler) CreateAlertSchedulerRule(ctx context.Context, req *oas.AlertSchedulerRuleEnvelope) (*oas.AlertSchedulerRuleEnvelope, error) {
	r, _, err := check("alertSchedulerRule", req.AlertSchedulerRule)
	if err != nil {
		return nil, err
	}
	out, err := h.create(ctx, []oas.AlertSchedulerRule{r})
	if err != nil {
		return nil, err
	}
	return &oas.AlertSchedulerRuleEnvelope{AlertSchedulerRule: out[0]}, nil
}

// CreateAlertSchedulerRules stores every rule or none.
//
// Errors: Invalid naming the item (see check); LimitExceeded when the team would pass MaxRules.
func (h *SchedulerRuleHandler) CreateAlertSchedulerRules(ctx context.Context, req *oas.AlertSchedulerRuleCreateBatch) (*oas.AlertSchedulerRuleCreateBatchResult, error) {
	rules := make([]oas.AlertSchedulerRule, len(req.CreateAlertSchedulerRuleRequests))
	for i, e := range req.CreateAlertSchedulerRuleRequests {
		r, _, err := check(indexPath("createAlertSchedulerRuleRequests", i), e.AlertSchedulerRule)
		if err != nil {
			return nil, err
		}
		rules[i] = r
	}
	out := &oas.AlertSchedulerRuleCreateBatchResult{CreateSuppressionResponses: []oas.AlertSchedulerRuleEnvelope{}}
	if len(rules) == 0 {
		return out, nil
	}
	stored, err := h.create(ctx, rules)
	if err != nil {
		return nil, err
	}
	for _, r := range stored {
		out.CreateSuppressionResponses = append(out.CreateSuppressionResponses, oas.AlertSchedulerRuleEnvelope{AlertSchedulerRule: r})
	}
	return out, nil
}

// uniqueID returns the rule's uniqueIdentifier, which names the rule a replace replaces.
func uniqueID(path string, r oas.AlertSchedulerRule) (string, error) {
	id := r.UniqueIdentifier.Or("")
	if id == "" {
		return "", apierror.Invalidf("%s.uniqueIdentifier: required; it names the rule to replace", path)
	}
	return id, nil
}

// UpdateAlertSchedulerRule replaces a rule, giving it a new version id.
//
// Errors: Invalid (see check; uniqueIdentifier missing); NotFound when the team has no such rule.
func (h *SchedulerRuleHandler) UpdateAlertSchedulerRule(ctx context.Context, req *oas.AlertSchedulerRuleEnvelope) (*oas.AlertSchedulerRuleEnvelope, error) {
	id, err := uniqueID("alertSchedulerRule", req.AlertSchedulerRule)
	if err != nil {
		return nil, err
	}
	r, _, err := check("alertSchedulerRule", req.AlertSchedulerRule)
	if err != nil {
		return nil, err
	}
	out, err := h.replace(ctx, []oas.AlertSchedulerRule{r}, []string{id}, []string{"alertSchedulerRule.uniqueIdentifier"})
	if err != nil {
		return nil, err
	}
	return &oas.AlertSchedulerRuleEnvelope{AlertSchedulerRule: out[0]}, nil
}

// UpdateAlertSchedulerRules replaces every named rule or none; rules not named are kept.
//
// Errors: Invalid naming the item (see check; a rule named twice); NotFound naming the item
// whose rule the team does not have.
func (h *SchedulerRuleHandler) UpdateAlertSchedulerRules(ctx context.Context, req *oas.AlertSchedulerRuleUpdateBatch) (*oas.AlertSchedulerRuleUpdateBatchResult, error) {
	n := len(req.UpdateAlertSchedulerRuleRequests)
	rules, ids, fields := make([]oas.AlertSchedulerRule, n), make([]string, n), make([]string, n)
	seen := map[string]int{}
	for i, e := range req.UpdateAlertSchedulerRuleRequests {
		path := indexPath("updateAlertSchedulerRuleRequests", i)
		id, err := uniqueID(path, e.AlertSchedulerRule)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[id]; dup {
			return nil, apierror.Invalidf("%s.uniqueIdentifier: rule %q is also item %d; name each rule once", path, id, j)
		}
		seen[id] = i
		r, _, err := check(path, e.AlertSchedulerRule)
		if err != nil {
			return nil, err
		}
		rules[i], ids[i], fields[i] = r, id, path+".uniqueIdentifier"
	}
	out := &oas.AlertSchedulerRuleUpdateBatchResult{UpdateSuppressionResponses: []oas.AlertSchedulerRuleEnvelope{}}
	if n == 0 {
		return out, nil
	}
	stored, err := h.replace(ctx, rules, ids, fields)
	if err != nil {
		return nil, err
	}
	for _, r := range stored {
		out.UpdateSuppressionResponses = append(out.UpdateSuppressionResponses, oas.AlertSchedulerRuleEnvelope{AlertSchedulerRule: r})
	}
	return out, nil
}

// GetAlertSchedulerRule answers one rule.
//
// Errors: NotFound when the team has no such rule.
func (h *SchedulerRuleHandler) GetAlertSchedulerRule(ctx context.Context, params oas.GetAlertSchedulerRuleParams) (*oas.AlertSchedulerRuleEnvelope, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	r, err := getRule(ctx, h.db.Read(), teamID, params.AlertSchedulerRuleID)
	if err != nil {
		return nil, notFoundAs(err, "alert_scheduler_rule_id", params.AlertSchedulerRuleID)
	}
	return &oas.AlertSchedulerRuleEnvelope{AlertSchedulerRule: r}, nil
}

// DeleteAlertSchedulerRule deletes one rule.
//
// Errors: NotFound when the team has no such rule.
func (h *SchedulerRuleHandler) DeleteAlertSchedulerRule(ctx context.Context, params oas.DeleteAlertSchedulerRuleParams) error {
	teamID := auth.PrincipalFrom(ctx).TeamID
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		return removeIn(ctx, tx, teamID, "alert_scheduler_rule_id", params.AlertSchedulerRuleID)
	})
}

// pageSize is the most rules a list page answers; maxTimeframes the most windows per rule.
const (
	pageSize      = 200
	maxTimeframes = 50
)

const (
	timeframeParameter = "active_timeframe"
	idsParameter       = "alert_scheduler_rules_ids"
)

var timeframeSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
	"startTime": {Kind: queryobject.String}, "endTime": {Kind: queryobject.String}, "timezone": {Kind: queryobject.String},
}}

var idsSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
	"alertSchedulerIds": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"alertSchedulerRuleIds": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}},
	}},
	"alertSchedulerVersionIds": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"alertSchedulerRuleVersionIds": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}},
	}},
}}

// listQuery is a list's filters, read from the query.
type listQuery struct {
	from, to   time.Time
	window     bool
	zone       string
	byID       map[string]bool
	byVersion  map[string]bool
	afterTime  int64
	afterID    string
	afterGiven bool
}

func readListQuery(ctx context.Context, params oas.ListAlertSchedulerRulesParams) (listQuery, error) {
	var q listQuery
	values := queryobject.Values(ctx)
	doc, err := queryobject.Decode(values, timeframeParameter, timeframeSchema)
	if err != nil {
		return q, err
	}
	if doc != nil {
		var tf oas.AlertSchedulerActiveTimeframe
		if err := queryobject.Unmarshal(timeframeParameter, doc, &tf); err != nil {
			return q, err
		}
		q.zone = tf.Timezone.Or("")
		loc, err := Zone(q.zone)
		if err != nil {
			return q, apierror.Invalidf("%s.timezone: %v", timeframeParameter, err)
		}
		s, e := tf.StartTime.Or(""), tf.EndTime.Or("")
		if s == "" || e == "" {
			return q, apierror.Invalidf("%s: startTime and endTime are both required", timeframeParameter)
		}
		if q.from, err = ParseTime(s, loc); err != nil {
			return q, apierror.Invalidf("%s.startTime: %v", timeframeParameter, err)
		}
		if q.to, err = ParseTime(e, loc); err != nil {
			return q, apierror.Invalidf("%s.endTime: %v", timeframeParameter, err)
		}
		if !q.to.After(q.from) {
			return q, apierror.Invalidf("%s.endTime: must be after startTime", timeframeParameter)
		}
		q.window = true
	}
	doc, err = queryobject.Decode(values, idsParameter, idsSchema)
	if err != nil {
		return q, err
	}
	if doc != nil {
		var f struct {
			AlertSchedulerIds *struct {
				AlertSchedulerRuleIds []string `json:"alertSchedulerRuleIds"`
			} `json:"alertSchedulerIds"`
			AlertSchedulerVersionIds *struct {
				AlertSchedulerRuleVersionIds []string `json:"alertSchedulerRuleVersionIds"`
			} `json:"alertSchedulerVersionIds"`
		}
		if err := json.Unmarshal(doc, &f); err != nil {
			return q, apierror.Invalidf("%s: must be {alertSchedulerIds: {alertSchedulerRuleIds: [ids]}} or {alertSchedulerVersionIds: {alertSchedulerRuleVersionIds: [ids]}}", idsParameter)
		}
		ids, byID := f.AlertSchedulerIds, f.AlertSchedulerIds != nil
		versions, byVersion := f.AlertSchedulerVersionIds, f.AlertSchedulerVersionIds != nil
		if byID && len(ids.AlertSchedulerRuleIds) > 500 || byVersion && len(versions.AlertSchedulerRuleVersionIds) > 500 {
			return q, apierror.Invalidf("%s: at most 500 ids", idsParameter)
		}
		switch {
		case byID && byVersion:
			return q, apierror.Invalidf("%s: at most one of alertSchedulerIds and alertSchedulerVersionIds, not both", idsParameter)
		case byID:
			q.byID = map[string]bool{}
			for _, id := range ids.AlertSchedulerRuleIds {
				q.byID[id] = true
			}
		case byVersion:
			q.byVersion = map[string]bool{}
			for _, id := range versions.AlertSchedulerRuleVersionIds {
				q.byVersion[id] = true
			}
		}
	}
	if tok, ok := params.NextPageToken.Get(); ok && tok != "" {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		ts, id, found := strings.Cut(string(raw), ":")
		n, perr := strconv.ParseInt(ts, 10, 64)
		if err != nil || !found || perr != nil || id == "" {
			return q, apierror.Invalidf("next_page_token: not a token this list answered")
		}
		q.afterTime, q.afterID, q.afterGiven = n, id, true
	}
	return q, nil
}

func pageToken(rec record) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d:%s", rec.created, rec.rule.UniqueIdentifier.Or("")))
}

// timeframes answers a rule's windows: those overlapping the asked window, else the current or
// next one.
func timeframes(s Schedule, q listQuery, now time.Time) []oas.AlertSchedulerActiveTimeframe {
	out := []oas.AlertSchedulerActiveTimeframe{}
	zone := s.Zone
	if zone == "" {
		zone = "UTC"
	}
	add := func(w Window) {
		if s.Always {
			start := now
			if q.window {
				start = q.from
			}
			out = append(out, oas.AlertSchedulerActiveTimeframe{
				StartTime: oas.NewOptString(start.UTC().Format(time.RFC3339)), Timezone: oas.NewOptString("UTC")})
			return
		}
		out = append(out, oas.AlertSchedulerActiveTimeframe{
			StartTime: oas.NewOptString(w.Start.In(s.Loc).Format(time.RFC3339Nano)),
			EndTime:   oas.NewOptString(w.End.In(s.Loc).Format(time.RFC3339Nano)),
			Timezone:  oas.NewOptString(zone),
		})
	}
	if q.window {
		s.Windows(q.from, q.to, func(w Window) bool {
			add(w)
			return len(out) < maxTimeframes
		})
		return out
	}
	if w, ok := s.Next(now); ok {
		add(w)
	}
	return out
}

// ListAlertSchedulerRules answers a page of the team's rules, oldest first, filtered.
//
// Errors: Invalid for a malformed filter or page token.
func (h *SchedulerRuleHandler) ListAlertSchedulerRules(ctx context.Context, params oas.ListAlertSchedulerRulesParams) (*oas.AlertSchedulerRulePage, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	q, err := readListQuery(ctx, params)
	if err != nil {
		return nil, err
	}
	now := h.db.Now()
	out := &oas.AlertSchedulerRulePage{AlertSchedulerRules: []oas.AlertSchedulerRuleWithActiveTimeframe{}}
	var last record
	more := false
	err = eachRule(ctx, h.db.Read(), teamID, false, func(rec record) error {
		r := rec.rule
		if q.afterGiven && (rec.created < q.afterTime || (rec.created == q.afterTime && r.UniqueIdentifier.Or("") <= q.afterID)) {
			return nil
		}
		if e, ok := params.Enabled.Get(); ok && r.Enabled.Or(false) != e {
			return nil
		}
		if q.byID != nil && !q.byID[r.UniqueIdentifier.Or("")] {
			return nil
		}
		if q.byVersion != nil && !q.byVersion[r.ID.Or("")] {
			return nil
		}
		s, err := Compile("schedule", r.Schedule.Or(oas.AlertSchedulerSchedule{}))
		if err != nil {
			return fmt.Errorf("stored alert scheduler rule %s: %w", r.UniqueIdentifier.Or(""), err)
		}
		tfs := timeframes(s, q, now)
		if q.window && len(tfs) == 0 {
			return nil
		}
		if len(out.AlertSchedulerRules) == pageSize {
			more = true
			return errStop
		}
		out.AlertSchedulerRules = append(out.AlertSchedulerRules, oas.AlertSchedulerRuleWithActiveTimeframe{
			AlertSchedulerRule: oas.NewOptAlertSchedulerRule(r), NextActiveTimeframes: tfs})
		last = rec
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	if more {
		out.NextPageToken = oas.NewOptString(pageToken(last))
	}
	return out, nil
}

var errStop = errors.New("stop")
