package alertevents

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/alertdefs"
	"github.com/mgmtapi/mgmtapi/internal/alertschedules"
	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The labels that tie an alert to its alert definition (mgmtapi's exported alerting rules carry
// them). An alert without DefinitionLabel records no event.
const (
	DefinitionLabel = "alert_def_id"
	// VersionLabel names the definition's version: an annotation since issue 37 (an edit keeps
	// the alert's identity), a label on alerts of older rule files; either is read.
	VersionLabel  = "alert_def_version_id"
	NameLabel     = "alert_def_name"
	PriorityLabel = "alert_def_priority"
	// NoDataLabel is "true" on the alert of a definition's no-data rule: its firing makes the
	// definition's status NO_DATA.
	NoDataLabel = "alert_def_no_data"
)

// Stored statuses.
const (
	statusFiring   = "firing"
	statusResolved = "resolved"
)

// suppressedByKey is the payload's key for the scheduler rule that silenced a firing.
const suppressedByKey = "suppressedBy"

// The payload type of every event.
const payloadType = "alertmanager-alert"

// maxDefinitionID is the longest definition id an event may name (the public bound on alertId).
const maxDefinitionID = 36

// Alert is one alert of an Alertmanager notification, as ingestion has it when it opens or
// resolves the alert's incident.
type Alert struct {
	TeamID int64
	// Labels are all the alert's labels, the alert_def_* ones included.
	Labels      map[string]string
	Annotations map[string]string
	// GroupLabels are the notification's group labels.
	GroupLabels map[string]string
	Fingerprint string
	StartsAt    time.Time
	// EndsAt is when a resolved alert ended.
	EndsAt     time.Time
	Firing     bool
	IncidentID string
}

// Record writes, in tx, the event of a: a firing (the incident was just opened) or a resolution
// (the incident was just resolved by its source). It records nothing and answers false when a
// carries no alert_def_id label (or one longer than a definition id), or when the incident
// already has an event of that status (a notification sent again). The caller calls it in the
// transaction that writes the incident, so both commit together.
func Record(ctx context.Context, tx *db.Tx, a Alert) (bool, error) {
	defID := strings.TrimSpace(a.Labels[DefinitionLabel])
	if defID == "" || utf8.RuneCountInString(defID) > maxDefinitionID || a.IncidentID == "" {
		return false, nil
	}
	status, at := statusFiring, a.StartsAt
	if !a.Firing {
		status, at = statusResolved, a.EndsAt
		if at.IsZero() {
			at = tx.Now
		}
	}
	at = at.UTC().Truncate(time.Microsecond)
	labels := map[string]string{}
	for k, v := range a.Labels {
		if !strings.HasPrefix(k, "alert_def_") {
			labels[k] = v
		}
	}
	group := nonNil(a.GroupLabels)
	payload := map[string]any{
		"status":      status,
		"startsAt":    a.StartsAt.UTC().Format(time.RFC3339Nano),
		"fingerprint": a.Fingerprint,
		"annotations": nonNil(a.Annotations),
		"groupLabels": group,
	}
	if !a.Firing {
		payload["endsAt"] = at.Format(time.RFC3339Nano)
	} else {
		// Asked once, here: the answer goes on the feed's event (which rule silenced it) and on
		// the incident's notification event of this transaction, which the routing reads
		// instead of asking again (it sends nothing when a rule silences the alert).
		ruleID, silenced, err := alertschedules.Suppressing(ctx, tx, a.TeamID, defID, a.Labels, tx.Now)
		if err != nil {
			return false, err
		}
		if silenced {
			payload[suppressedByKey] = ruleID
		}
		if a.IncidentID != "" {
			tx.RecordSuppression(notifyexpr.EntityAlerts, a.IncidentID, ruleID)
		}
	}
	labelsDoc, err := json.Marshal(labels)
	if err != nil {
		return false, err
	}
	groupDoc, err := json.Marshal(group)
	if err != nil {
		return false, err
	}
	payloadDoc, err := json.Marshal(payload)
	if err != nil {
		return false, err
	}
	e := event{
		ID: tx.NewID(), DefinitionID: defID, VersionID: cut(versionOf(a), 256),
		Name: cut(a.Labels[NameLabel], 1024), Priority: cut(a.Labels[PriorityLabel], 64), Status: status,
		Fingerprint: cut(a.Fingerprint, 256), IncidentID: a.IncidentID, At: at.UnixMicro(),
	}
	var id string
	err = tx.QueryRowContext(ctx, `INSERT INTO alert_events (team_id, id, alert_def_id, alert_version_id, name,
		priority, status, fingerprint, incident_id, occurred_at, recorded_at, labels, group_labels, payload)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (team_id, incident_id, status) DO NOTHING RETURNING id`,
		a.TeamID, e.ID, e.DefinitionID, e.VersionID, e.Name, e.Priority, e.Status, e.Fingerprint, e.IncidentID,
		e.At, tx.Now.UnixMicro(), string(labelsDoc), string(groupDoc), string(payloadDoc)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("insert alert event: %w", err)
	}
	insert := func(kind, key, value string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO alert_event_fields (team_id, event_id, kind, key, value, occurred_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, a.TeamID, e.ID, kind, key, value, e.At)
		if err != nil {
			return fmt.Errorf("insert alert event field: %w", err)
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if err := insert(kindLabel, k, labels[k]); err != nil {
			return false, err
		}
	}
	meta := e.metadata()
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if err := insert(kindMeta, k, meta[k]); err != nil {
			return false, err
		}
	}
	if err := updateDefinition(ctx, tx, a.TeamID, defID, a.Firing, a.Labels[NoDataLabel] == "true", e.At); err != nil {
		return false, err
	}
	return true, nil
}

// updateDefinition keeps the definition's lastTriggeredTime and status (alertdefs.RecordFiring,
// RecordNoData, RecordResolved): the firing of its no-data alert (noData) makes it NO_DATA, any
// other firing ALERTING, and a resolution makes it OK once none of the definition's incidents
// with a firing lacks its resolution (until then ALERTING while a condition's alert fires, else
// NO_DATA).
func updateDefinition(ctx context.Context, tx *db.Tx, teamID int64, defID string, firing, noData bool, at int64) error {
	if firing && noData {
		return alertdefs.RecordNoData(ctx, tx, teamID, defID)
	}
	if firing {
		return alertdefs.RecordFiring(ctx, tx, teamID, defID, time.UnixMicro(at))
	}
	var open int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM alert_events f WHERE f.team_id = $1 AND f.alert_def_id = $2
		AND f.status = $3 AND NOT EXISTS (SELECT 1 FROM alert_events r
			WHERE r.team_id = f.team_id AND r.incident_id = f.incident_id AND r.status = $4)`,
		teamID, defID, statusFiring, statusResolved).Scan(&open); err != nil {
		return fmt.Errorf("open alerts of the definition: %w", err)
	}
	if open == 0 {
		return alertdefs.RecordResolved(ctx, tx, teamID, defID)
	}
	// Some still fire: ALERTING while one of them is a condition's, else NO_DATA (the no-data
	// alert's incident has the label NoDataLabel).
	var conditions int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM alert_events f WHERE f.team_id = $1 AND f.alert_def_id = $2
		AND f.status = $3 AND NOT EXISTS (SELECT 1 FROM alert_events r
			WHERE r.team_id = f.team_id AND r.incident_id = f.incident_id AND r.status = $4)
		AND NOT EXISTS (SELECT 1 FROM incident_labels l WHERE l.team_id = f.team_id AND l.incident_id = f.incident_id
			AND l.key = $5 AND l.value = 'true')`,
		teamID, defID, statusFiring, statusResolved, NoDataLabel).Scan(&conditions); err != nil {
		return fmt.Errorf("open condition alerts of the definition: %w", err)
	}
	if conditions > 0 {
		return alertdefs.RecordStatus(ctx, tx, teamID, defID, oas.AlertDefStatusALERTDEFSTATUSALERTING)
	}
	return alertdefs.RecordNoData(ctx, tx, teamID, defID)
}

// Kinds of alert_event_fields rows.
const (
	kindLabel = "label"
	kindMeta  = "meta"
)

// event is a stored event.
type event struct {
	ID, DefinitionID, VersionID, Name, Priority, Status, Fingerprint, IncidentID string
	At                                                                           int64
	Labels, GroupLabels                                                          map[string]string
	Payload                                                                      map[string]json.RawMessage
}

// metadata is the event's metadata as the feed answers it (empty values left out).
func (e event) metadata() map[string]string {
	m := map[string]string{
		"alertDefId":       e.DefinitionID,
		"alertVersionId":   e.VersionID,
		"alertDefName":     e.Name,
		"alertDefPriority": e.Priority,
		"status":           e.Status,
		"incidentId":       e.IncidentID,
		"permutationId":    e.Fingerprint,
	}
	maps.DeleteFunc(m, func(_, v string) bool { return v == "" })
	return m
}

const eventColumns = `e.id, e.alert_def_id, e.alert_version_id, e.name, e.priority, e.status, e.fingerprint,
	e.incident_id, e.occurred_at, e.labels, e.group_labels, e.payload`

func scanEvent(rows interface{ Scan(...any) error }) (event, error) {
	var e event
	var labels, group, payload string
	if err := rows.Scan(&e.ID, &e.DefinitionID, &e.VersionID, &e.Name, &e.Priority, &e.Status, &e.Fingerprint,
		&e.IncidentID, &e.At, &labels, &group, &payload); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(labels), &e.Labels); err != nil {
		return e, fmt.Errorf("alert event %s labels: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(group), &e.GroupLabels); err != nil {
		return e, fmt.Errorf("alert event %s group labels: %w", e.ID, err)
	}
	if err := json.Unmarshal([]byte(payload), &e.Payload); err != nil {
		return e, fmt.Errorf("alert event %s payload: %w", e.ID, err)
	}
	return e, nil
}

// selection says which of a team's events a read is about. Empty lists select all.
type selection struct {
	teamID int64
	during *timeRange
	// definitionsOrVersions are ids that match a definition's id or one of its versions' ids.
	definitionsOrVersions     []string
	types                     []string
	ids                       []string
	labels                    map[string]string
	labelFilters, metaFilters *filters
}

// where builds the selection's condition on alert_events e, with its arguments ($1 is the
// team). Regular-expression filters are resolved to the stored values they match, read in q.
func (s selection) where(ctx context.Context, q db.Querier) (string, []any, error) {
	w := &whereBuilder{args: []any{s.teamID}}
	conds := []string{"e.team_id = $1"}
	if s.during != nil {
		conds = append(conds, "e.occurred_at >= "+w.arg(s.during.from), "e.occurred_at <= "+w.arg(s.during.to))
	}
	if len(s.types) > 0 && !slices.Contains(s.types, eventType) {
		conds = append(conds, "1 = 0")
	}
	if len(s.definitionsOrVersions) > 0 {
		in := w.list(s.definitionsOrVersions)
		conds = append(conds, "(e.alert_def_id IN ("+in+") OR e.alert_version_id IN ("+in+"))")
	}
	if len(s.ids) > 0 {
		conds = append(conds, "e.id IN ("+w.list(s.ids)+")")
	}
	for _, k := range slices.Sorted(maps.Keys(s.labels)) {
		conds = append(conds, w.field(kindLabel, k, []string{s.labels[k]}))
	}
	for _, f := range []struct {
		kind string
		f    *filters
	}{{kindLabel, s.labelFilters}, {kindMeta, s.metaFilters}} {
		if f.f == nil {
			continue
		}
		c, err := w.filters(ctx, q, s.teamID, f.kind, f.f)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, c)
	}
	if len(w.args) > maxQueryArgs {
		return "", nil, apierror.Invalidf("filter: names more than %d values in all (regular expressions count the stored values they match); narrow it", maxQueryArgs)
	}
	return strings.Join(conds, " AND "), w.args, nil
}

type whereBuilder struct{ args []any }

func (w *whereBuilder) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

func (w *whereBuilder) list(vs []string) string {
	ps := make([]string, len(vs))
	for i, v := range vs {
		ps[i] = w.arg(v)
	}
	return strings.Join(ps, ", ")
}

// field is the condition that the event has a field of kind and key with one of values (any
// value when values is empty).
func (w *whereBuilder) field(kind, key string, values []string) string {
	c := "EXISTS (SELECT 1 FROM alert_event_fields x WHERE x.team_id = e.team_id AND x.event_id = e.id AND x.kind = " +
		w.arg(kind) + " AND x.key = " + w.arg(key)
	if len(values) > 0 {
		c += " AND x.value IN (" + w.list(values) + ")"
	}
	return c + ")"
}

func (w *whereBuilder) filters(ctx context.Context, q db.Querier, teamID int64, kind string, f *filters) (string, error) {
	if len(f.PathAndValues) == 0 {
		return "1 = 1", nil
	}
	var parts []string
	for _, e := range f.PathAndValues {
		if e.Filters != nil {
			c, err := w.filters(ctx, q, teamID, kind, e.Filters)
			if err != nil {
				return "", err
			}
			parts = append(parts, c)
			continue
		}
		values := e.MultipleValues.Values
		if e.MultipleValues.Matcher == "FILTER_MATCHER_REGEXP" && len(values) > 0 {
			matched, err := matchingValues(ctx, q, teamID, kind, *e.Path, values)
			if err != nil {
				return "", err
			}
			if len(matched) == 0 {
				parts = append(parts, "1 = 0")
				continue
			}
			values = matched
		}
		parts = append(parts, w.field(kind, *e.Path, values))
	}
	op := " AND "
	if f.Operator == "FILTER_OPERATOR_OR" {
		op = " OR "
	}
	return "(" + strings.Join(parts, op) + ")", nil
}

// matchingValues are the stored values of the team's field (kind, key) that one of patterns
// matches whole.
//
// Errors: Invalid when more than maxRegexpValues values match.
func matchingValues(ctx context.Context, q db.Querier, teamID int64, kind, key string, patterns []string) ([]string, error) {
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile(`^(?:` + p + `)$`)
		if err != nil {
			return nil, apierror.Invalidf("%q: is not a valid regular expression", p)
		}
		res[i] = re
	}
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT value FROM alert_event_fields WHERE team_id = $1 AND kind = $2 AND key = $3`,
		teamID, kind, key)
	if err != nil {
		return nil, fmt.Errorf("alert event field values: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(v) }) {
			out = append(out, v)
			if len(out) > maxRegexpValues {
				return nil, apierror.Invalidf("the regular expressions for %q match more than %d stored values; narrow them", key, maxRegexpValues)
			}
		}
	}
	return out, rows.Err()
}

// listEvents answers one page of the selected events in the order asked for, the cursor of the
// next page (nil on the last) and how many events the selection holds.
func listEvents(ctx context.Context, q db.Querier, s selection, asc bool, p page) ([]event, *cursor, int64, error) {
	where, args, err := s.where(ctx, q)
	if err != nil {
		return nil, nil, 0, err
	}
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM alert_events e WHERE `+where, args...).Scan(&total); err != nil {
		return nil, nil, 0, fmt.Errorf("count alert events: %w", err)
	}
	dir, cmp := "DESC", "<"
	if asc {
		dir, cmp = "ASC", ">"
	}
	w := &whereBuilder{args: args}
	if p.after != nil {
		t, id := w.arg(p.after.At), w.arg(p.after.ID)
		where += " AND (e.occurred_at " + cmp + " " + t + " OR (e.occurred_at = " + t + " AND e.id " + cmp + " " + id + "))"
	}
	query := `SELECT ` + eventColumns + ` FROM alert_events e WHERE ` + where +
		` ORDER BY e.occurred_at ` + dir + `, e.id ` + dir + ` LIMIT ` + w.arg(p.size+1)
	rows, err := q.QueryContext(ctx, query, w.args...)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("list alert events: %w", err)
	}
	defer rows.Close()
	var out []event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, nil, 0, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, err
	}
	var next *cursor
	if len(out) > p.size {
		out = out[:p.size]
		last := out[len(out)-1]
		next = &cursor{At: last.At, ID: last.ID, Asc: asc}
	}
	return out, next, total, nil
}

// countEvents counts the selected events up to countLimit.
func countEvents(ctx context.Context, q db.Querier, s selection) (int64, bool, error) {
	where, args, err := s.where(ctx, q)
	if err != nil {
		return 0, false, err
	}
	w := &whereBuilder{args: args}
	var n int64
	err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM alert_events e WHERE `+where+` LIMIT `+
		w.arg(countLimit+1)+`) c`, w.args...).Scan(&n)
	if err != nil {
		return 0, false, fmt.Errorf("count alert events: %w", err)
	}
	if n > countLimit {
		return countLimit, true, nil
	}
	return n, false, nil
}

// fieldCounts are, per kind and key, the number of selected events having each value, the most
// frequent first (at most maxStatValues per key).
func fieldCounts(ctx context.Context, q db.Querier, s selection) (map[string]map[string]map[string]int64, error) {
	where, args, err := s.where(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT f.kind, f.key, f.value, COUNT(*) FROM alert_event_fields f
		JOIN alert_events e ON e.team_id = f.team_id AND e.id = f.event_id
		WHERE f.team_id = $1 AND `+where+`
		GROUP BY f.kind, f.key, f.value ORDER BY f.kind, f.key, COUNT(*) DESC, f.value`, args...)
	if err != nil {
		return nil, fmt.Errorf("alert event statistics: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]map[string]int64{kindLabel: {}, kindMeta: {}}
	for rows.Next() {
		var kind, key, value string
		var n int64
		if err := rows.Scan(&kind, &key, &value, &n); err != nil {
			return nil, err
		}
		byKey := out[kind]
		if byKey == nil {
			continue
		}
		if byKey[key] == nil {
			byKey[key] = map[string]int64{}
		}
		if len(byKey[key]) < maxStatValues {
			byKey[key][value] = n
		}
	}
	return out, rows.Err()
}

// getEvent reads the team's event id; db.ErrNotFound when it has none.
func getEvent(ctx context.Context, q db.Querier, teamID int64, id string) (event, error) {
	e, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM alert_events e WHERE e.team_id = $1 AND e.id = $2`, teamID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, db.ErrNotFound
	}
	return e, err
}

// existingIDs answers which of ids name an event of the team.
func existingIDs(ctx context.Context, q db.Querier, teamID int64, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	w := &whereBuilder{args: []any{teamID}}
	rows, err := q.QueryContext(ctx, `SELECT id FROM alert_events WHERE team_id = $1 AND id IN (`+w.list(ids)+`)`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("find alert events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// definitionStats are one definition's counts and permutation samples.
type definitionStats struct {
	count, firing, resolved int64
	firingSamples           []map[string]string
	resolvedSamples         []map[string]string
}

// statsByDefinition computes the counts of the team's definitions ids (every definition with
// events, at most maxListItems, when ids is empty) and up to maxSamples distinct permutations
// per definition and status, newest (or, asc, oldest) first.
func statsByDefinition(ctx context.Context, q db.Querier, teamID int64, ids []string, asc bool) (map[string]*definitionStats, error) {
	w := &whereBuilder{args: []any{teamID}}
	cond := "team_id = $1"
	if len(ids) > 0 {
		cond += " AND alert_def_id IN (" + w.list(ids) + ")"
	}
	rows, err := q.QueryContext(ctx, `SELECT alert_def_id, COUNT(*),
		SUM(CASE WHEN status = 'firing' THEN 1 ELSE 0 END), SUM(CASE WHEN status = 'resolved' THEN 1 ELSE 0 END)
		FROM alert_events WHERE `+cond+` GROUP BY alert_def_id ORDER BY alert_def_id LIMIT `+strconv.Itoa(maxListItems), w.args...)
	if err != nil {
		return nil, fmt.Errorf("alert event counts: %w", err)
	}
	out := map[string]*definitionStats{}
	var defs []string
	for rows.Next() {
		var id string
		var st definitionStats
		if err := rows.Scan(&id, &st.count, &st.firing, &st.resolved); err != nil {
			rows.Close()
			return nil, err
		}
		out[id] = &st
		defs = append(defs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(defs) == 0 {
		return out, nil
	}
	dir := "DESC"
	if asc {
		dir = "ASC"
	}
	w = &whereBuilder{args: []any{teamID}}
	in := w.list(defs)
	// The newest (oldest) event of each permutation, then the first maxSamples of those per
	// definition and status.
	rows, err = q.QueryContext(ctx, `SELECT alert_def_id, status, labels FROM (
		SELECT alert_def_id, status, labels, occurred_at, id,
			ROW_NUMBER() OVER (PARTITION BY alert_def_id, status ORDER BY occurred_at `+dir+`, id `+dir+`) AS k
		FROM (
			SELECT alert_def_id, status, labels, occurred_at, id,
				ROW_NUMBER() OVER (PARTITION BY alert_def_id, status, fingerprint ORDER BY occurred_at `+dir+`, id `+dir+`) AS r
			FROM alert_events WHERE team_id = $1 AND alert_def_id IN (`+in+`)
		) p WHERE r = 1
	) s WHERE k <= `+strconv.Itoa(maxSamples)+` ORDER BY alert_def_id, status, k`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("alert event permutation samples: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, status, labels string
		if err := rows.Scan(&id, &status, &labels); err != nil {
			return nil, err
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(labels), &m); err != nil {
			return nil, fmt.Errorf("alert event labels: %w", err)
		}
		st := out[id]
		if st == nil {
			continue
		}
		if status == statusFiring {
			st.firingSamples = append(st.firingSamples, m)
		} else {
			st.resolvedSamples = append(st.resolvedSamples, m)
		}
	}
	return out, rows.Err()
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// cut shortens s to at most n characters (code points).
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// versionOf answers the definition version an alert was evaluated from: its annotation, else the
// label older rule files set.
func versionOf(a Alert) string {
	if v := a.Annotations[VersionLabel]; v != "" {
		return v
	}
	return a.Labels[VersionLabel]
}
