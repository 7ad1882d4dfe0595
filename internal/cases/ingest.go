package cases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// This file is what alert ingestion (internal/ingest) calls, inside its own transaction. The
// actor of every event written here is prometheusAlertManager {receiverName}.

// AlertGroup is an Alertmanager group (groupKey) as a case sees it.
type AlertGroup struct {
	TeamID   int64
	GroupKey string
	Receiver string
	// Title is used when a case is opened (trimmed, cut to 512 characters; when empty the title
	// is "Alertmanager group <groupKey>").
	Title string
	// Labels (the notification's common labels) and Groupings (its group labels), sorted by key.
	Labels, Groupings []oas.KeyValue
}

// CaseRef names a case.
type CaseRef struct {
	ID, ReadableID string
}

const maxTitle = 512

// OpenForGroup returns the group's open case (status ACTIVE or ACKNOWLEDGED), locked for the
// rest of the transaction, or opens a new one: the next CASE-<n> of the team, status ACTIVE,
// category AVAILABILITY, system priority CASE_PRIORITY_P5 until RecordAlerts says otherwise,
// with its `created` event. When a concurrent transaction opened the group's case first, the
// error satisfies db.IsConflict and the caller retries in a new transaction.
func OpenForGroup(ctx context.Context, tx *db.Tx, g AlertGroup) (ref CaseRef, opened bool, err error) {
	query := `SELECT id, number FROM cases WHERE team_id = $1 AND group_key = $2 AND group_key <> ''
		AND status IN ('CASE_STATUS_ACTIVE', 'CASE_STATUS_ACKNOWLEDGED')`
	if tx.Engine == db.Postgres {
		query += ` FOR UPDATE`
	}
	var number int64
	err = tx.QueryRowContext(ctx, query, g.TeamID, g.GroupKey).Scan(&ref.ID, &number)
	if err == nil {
		ref.ReadableID = readableID(number)
		return ref, false, nil
	}
	if !db.IsNotFound(err) {
		return CaseRef{}, false, fmt.Errorf("find the group's case: %w", err)
	}

	err = tx.QueryRowContext(ctx, `UPDATE teams SET last_case_number = last_case_number + 1
		WHERE id = $1 RETURNING last_case_number`, g.TeamID).Scan(&number)
	if err != nil {
		return CaseRef{}, false, fmt.Errorf("number the case: %w", db.Translate(err))
	}
	title := cut(strings.TrimSpace(g.Title), maxTitle)
	if title == "" {
		title = cut("Alertmanager group "+g.GroupKey, maxTitle)
	}
	labels, groupings := orEmpty(g.Labels), orEmpty(g.Groupings)
	labelsJSON, err := json.Marshal(labels)
	if err != nil {
		return CaseRef{}, false, err
	}
	groupingsJSON, err := json.Marshal(groupings)
	if err != nil {
		return CaseRef{}, false, err
	}
	ref = CaseRef{ID: tx.NewID(), ReadableID: readableID(number)}
	now := micros(tx.Now)
	_, err = tx.ExecContext(ctx, `INSERT INTO cases (team_id, id, number, title, title_folded, status,
		system_priority, priority_override, priority, category, assignee, group_key, receiver, labels,
		groupings, alerts, indicators, resolution, created_at, updated_at, last_update_at)
		VALUES ($1, $2, $3, $4, $5, 'CASE_STATUS_ACTIVE', 'CASE_PRIORITY_P5', '', 'CASE_PRIORITY_P5',
			'CASE_CATEGORY_AVAILABILITY', '', $6, $7, $8, $9, '[]', '[]', '', $10, $10, $10)`,
		g.TeamID, ref.ID, number, title, strings.ToLower(title), g.GroupKey, g.Receiver,
		string(labelsJSON), string(groupingsJSON), now)
	if err != nil {
		// A conflict here is the cases_open_group index: another transaction opened the case.
		return CaseRef{}, false, fmt.Errorf("open case: %w", db.Translate(err))
	}
	for kind, pairs := range map[string][]oas.KeyValue{"label": labels, "grouping": groupings} {
		for _, kv := range pairs {
			_, err := tx.ExecContext(ctx, `INSERT INTO case_labels (team_id, case_id, kind, key, value)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT (team_id, case_id, kind, key) DO NOTHING`,
				g.TeamID, ref.ID, kind, kv.Key, kv.Value)
			if err != nil {
				return CaseRef{}, false, fmt.Errorf("store case labels: %w", err)
			}
		}
	}
	_, err = appendEvent(ctx, tx, g.TeamID, ref.ID, alertManagerActor(g.Receiver), oas.CaseEventData{
		Created: oas.NewOptCaseEventDataCreated(oas.CaseEventDataCreated{
			Priority: oas.NewOptCasePriority(oas.CasePriorityCASEPRIORITYP5),
		}),
	}, tx.Now)
	if err != nil {
		return CaseRef{}, false, err
	}
	return ref, true, nil
}

func orEmpty(kvs []oas.KeyValue) []oas.KeyValue {
	if kvs == nil {
		return []oas.KeyValue{}
	}
	return kvs
}

// cut returns s cut to at most n code points.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// IndicatorAlert is one alert of a case, as its alert indicators show it.
type IndicatorAlert struct {
	AlertName   string
	Fingerprint string
	Labels      map[string]string
	Priority    oas.CasePriority // from the alert's severity
	Firing      bool
	StartsAt    time.Time
	EndsAt      time.Time // zero while firing
	// Version is the alert definition's version the alert was evaluated from (the annotation
	// alert_def_version_id, or the label of that name on alerts of older rule files); "" for
	// alerts of no definition.
	Version string
}

// storedAlert is an alert as the cases.alerts column keeps it (times in Unix microseconds).
type storedAlert struct {
	Name        string            `json:"name"`
	Fingerprint string            `json:"fingerprint"`
	Labels      map[string]string `json:"labels"`
	Priority    oas.CasePriority  `json:"priority"`
	Firing      bool              `json:"firing"`
	StartsAt    int64             `json:"startsAt"`
	EndsAt      int64             `json:"endsAt"`
	Version     string            `json:"version,omitempty"`
}

// version answers the definition version the alert was evaluated from: its recorded version, or
// the label of alerts recorded before the version became an annotation.
func (a *storedAlert) version() string {
	if a.Version != "" {
		return a.Version
	}
	return a.Labels[alertDefVersionLabel]
}

// key identifies an alert inside a case: its fingerprint, or its name and labels without one.
func (a *storedAlert) key() string {
	if a.Fingerprint != "" {
		return a.Fingerprint
	}
	return a.Name + "\x00" + labelSetKey(a.Labels)
}

func (a *storedAlert) same(b *storedAlert) bool {
	return a.Name == b.Name && a.Fingerprint == b.Fingerprint && a.Priority == b.Priority &&
		a.Firing == b.Firing && a.StartsAt == b.StartsAt && a.EndsAt == b.EndsAt && a.Version == b.Version &&
		labelSetKey(a.Labels) == labelSetKey(b.Labels)
}

func labelSetKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strconv.Quote(k))
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labels[k]))
		b.WriteByte(',')
	}
	return b.String()
}

// RecordAlerts merges alerts into the case's caseIndicators.alertIndicators (one indicator per
// alert name, one permutation per label set) and raises the case's system priority to the
// highest priority among its alerts, writing priorityDetailsChanged when the priority it shows
// changes. Alerts already recorded as they are change nothing. A case whose first alerts come
// at the instant it was opened (the opening transaction) is created with their priority: its
// `created` event carries it and no priorityDetailsChanged is written.
//
// An alert is known by its fingerprint; a later notification about it replaces what was
// recorded. An indicator is TRIGGERED while any of its alerts fires, else RESOLVED at the latest
// end of its alerts; an alert of a definition records the definition's version it was evaluated
// from (an edit while it fires is written on the case by the edit: RecordDefinitionEdited).
// Errors: db.ErrNotFound when the team has no case caseID.
func RecordAlerts(ctx context.Context, tx *db.Tx, teamID int64, caseID, receiver string, alerts []IndicatorAlert) error {
	c, err := lockCaseByID(ctx, tx, teamID, caseID)
	if err != nil {
		return err
	}
	var stored []storedAlert
	if err := json.Unmarshal([]byte(c.Alerts), &stored); err != nil {
		return fmt.Errorf("case %s alerts: %w", caseID, err)
	}
	index := map[string]int{}
	for i := range stored {
		index[stored[i].key()] = i
	}
	changed := false
	for _, in := range alerts {
		a := storedAlert{
			Name: in.AlertName, Fingerprint: in.Fingerprint, Labels: in.Labels, Priority: in.Priority,
			Firing: in.Firing, StartsAt: micros(in.StartsAt), Version: in.Version,
		}
		if a.Labels == nil {
			a.Labels = map[string]string{}
		}
		if !in.Firing && !in.EndsAt.IsZero() {
			a.EndsAt = micros(in.EndsAt)
		}
		if i, ok := index[a.key()]; ok {
			if stored[i].same(&a) {
				continue
			}
			stored[i] = a
		} else {
			index[a.key()] = len(stored)
			stored = append(stored, a)
		}
		changed = true
	}
	if !changed {
		return nil
	}
	alertsJSON, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	indicatorsJSON, err := json.Marshal(buildIndicators(teamID, stored, tx.Now))
	if err != nil {
		return err
	}
	c.Alerts, c.Indicators = string(alertsJSON), string(indicatorsJSON)
	c.UpdatedAt = micros(tx.Now)

	before := c
	if p := highestPriority(stored); p != "" && rank(p) < rank(c.SystemPriority) {
		c.SystemPriority = p
	}
	if err := saveCase(ctx, tx, &c); err != nil {
		return err
	}
	if before.Priority() != c.Priority() {
		folded, err := foldIntoCreated(ctx, tx, &c)
		if err != nil || folded {
			return err
		}
		_, err = appendEvent(ctx, tx, teamID, caseID, alertManagerActor(receiver), priorityChanged(&before, &c), tx.Now)
		return err
	}
	return nil
}

// foldIntoCreated sets the priority of the case's created event when the case was opened at
// tx.Now and has no other event; it reports whether it did.
func foldIntoCreated(ctx context.Context, tx *db.Tx, c *caseRow) (bool, error) {
	if c.CreatedAt != micros(tx.Now) {
		return false, nil
	}
	var events int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM case_events WHERE team_id = $1 AND case_id = $2`,
		c.TeamID, c.ID).Scan(&events)
	if err != nil || events != 1 {
		return false, err
	}
	data := oas.CaseEventData{Created: oas.NewOptCaseEventDataCreated(oas.CaseEventDataCreated{
		Priority: oas.NewOptCasePriority(c.Priority()),
	})}
	b, err := data.MarshalJSON()
	if err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE case_events SET data = $3
		WHERE team_id = $1 AND case_id = $2 AND kind = 'created'`, c.TeamID, c.ID, string(b))
	if err != nil {
		return false, fmt.Errorf("set the created priority: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func priorityChanged(before, after *caseRow) oas.CaseEventData {
	return oas.CaseEventData{PriorityDetailsChanged: oas.NewOptCaseEventDataPriorityDetailsChanged(
		oas.CaseEventDataPriorityDetailsChanged{
			From: oas.NewOptPriorityDetails(priorityDetails(before.SystemPriority, before.PriorityOverride)),
			To:   oas.NewOptPriorityDetails(priorityDetails(after.SystemPriority, after.PriorityOverride)),
		})}
}

// rank orders priorities: P1 is 1, P5 is 5, anything else comes after P5.
func rank(p oas.CasePriority) int {
	if n, ok := strings.CutPrefix(string(p), "CASE_PRIORITY_P"); ok && len(n) == 1 && n[0] >= '1' && n[0] <= '5' {
		return int(n[0] - '0')
	}
	return 6
}

func highestPriority(alerts []storedAlert) oas.CasePriority {
	var best oas.CasePriority
	for _, a := range alerts {
		if rank(a.Priority) <= 5 && (best == "" || rank(a.Priority) < rank(best)) {
			best = a.Priority
		}
	}
	return best
}

// alertID is the indicator id of an alert name in a team: a name-based (version 5) UUID.
func alertID(teamID int64, name string) string {
	return uuid.NewSHA1(alertNamespace, []byte(strconv.FormatInt(teamID, 10)+"\x00"+name)).String()
}

var alertNamespace = uuid.MustParse("5b0f2c1e-7d4a-4c59-9b0e-3f6a1d2e8c47")

// Labels an alert of an exported alert definition carries (internal/promrules): the definition's
// id and, on alerts of rule files written before issue 37, the version the alert was evaluated
// from (now an annotation of that name: IndicatorAlert.Version).
const (
	alertDefIDLabel      = "alert_def_id"
	alertDefVersionLabel = "alert_def_version_id"
)

// buildIndicators answers one indicator per alerting rule of the case's alerts. An alert of an
// alert definition (the label alert_def_id) belongs to its definition's indicator: the
// indicator's alertId is the definition's id and its versions are the definition's versions
// (alert_def_version_id, an annotation or, on older alerts, a label). Any other alert belongs to its name's indicator, whose id is made from
// the name and whose versions are the alerts' fingerprints.
func buildIndicators(teamID int64, alerts []storedAlert, now time.Time) []oas.AlertIndicator {
	type indicatorKey struct{ definition, name string }
	keyOf := func(a storedAlert) indicatorKey {
		if id := a.Labels[alertDefIDLabel]; id != "" {
			return indicatorKey{definition: id}
		}
		return indicatorKey{name: a.Name}
	}
	byKey := map[indicatorKey][]storedAlert{}
	var keys []indicatorKey
	for _, a := range alerts {
		k := keyOf(a)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], a)
	}
	out := make([]oas.AlertIndicator, 0, len(keys))
	for _, key := range keys {
		group := byKey[key]
		sort.SliceStable(group, func(i, j int) bool { return group[i].StartsAt < group[j].StartsAt })
		ind := oas.AlertIndicator{
			AlertId:       alertID(teamID, key.name),
			AlertName:     oas.NewOptString(group[len(group)-1].Name),
			AlertVersions: []string{},
			Priority:      oas.IndicatorPriorityINDICATORPRIORITYP5,
			GroupingType:  oas.AlertIndicatorGroupingTypeGROUPINGTYPENONE,
			State:         oas.IndicatorStateINDICATORSTATERESOLVED,
			TriggerTime:   fromMicros(group[0].StartsAt),
			Permutations:  []oas.AlertPermutation{},
		}
		if key.definition != "" {
			ind.AlertId = key.definition
		}
		if p := highestPriority(group); p != "" {
			ind.Priority = oas.IndicatorPriority("INDICATOR_PRIORITY_P" + strconv.Itoa(rank(p)))
		}
		seenVersion, seenLabels := map[string]bool{}, map[string]bool{}
		var lastEnd int64
		for _, a := range group {
			version := a.Fingerprint
			if key.definition != "" {
				version = a.version()
			}
			if version != "" && !seenVersion[version] {
				seenVersion[version] = true
				ind.AlertVersions = append(ind.AlertVersions, version)
			}
			if version != "" {
				ind.LatestAlertVersion = version
			}
			if k := labelSetKey(a.Labels); !seenLabels[k] {
				seenLabels[k] = true
				ind.Permutations = append(ind.Permutations, oas.AlertPermutation{
					Permutation: oas.NewOptAlertPermutationPermutation(oas.AlertPermutationPermutation(a.Labels)),
				})
			}
			if a.Firing {
				ind.State = oas.IndicatorStateINDICATORSTATETRIGGERED
			}
			lastEnd = max(lastEnd, a.EndsAt)
		}
		if ind.State == oas.IndicatorStateINDICATORSTATERESOLVED {
			if lastEnd == 0 {
				lastEnd = micros(now)
			}
			ind.ResolveTime = oas.NewOptDateTime(fromMicros(lastEnd))
		}
		out = append(out, ind)
	}
	return out
}

// ResolveByAlerts moves an ACTIVE or ACKNOWLEDGED case to RESOLVED because all its alerts
// resolved (statusChanged, actor prometheusAlertManager; resolutionDetails.resolvedBy is {prometheusAlertManager: {}}). Its
// time-to-resolve and time-to-update breaches become MITIGATED. A case in any other status is
// left alone. Errors: db.ErrNotFound when the team has no case caseID.
func ResolveByAlerts(ctx context.Context, tx *db.Tx, teamID int64, caseID, receiver string) error {
	c, err := lockCaseByID(ctx, tx, teamID, caseID)
	if err != nil {
		return err
	}
	if c.Status != oas.CaseStatusCASESTATUSACTIVE && c.Status != oas.CaseStatusCASESTATUSACKNOWLEDGED {
		return nil
	}
	actor := alertManagerActor(receiver)
	old := c.Status
	if err := resolveRow(&c, actor, tx.Now); err != nil {
		return err
	}
	c.UpdatedAt = micros(tx.Now)
	if err := saveCase(ctx, tx, &c); err != nil {
		return err
	}
	if err := mitigate(ctx, tx, teamID, caseID, oas.KPITypeKPITYPETIMETORESOLVE, oas.KPITypeKPITYPETIMETOUPDATE); err != nil {
		return err
	}
	_, err = appendEvent(ctx, tx, teamID, caseID, actor, statusChanged(old, c.Status), tx.Now)
	return err
}

// lockCaseByID locks a case named by its id; a missing case is db.ErrNotFound.
func lockCaseByID(ctx context.Context, tx *db.Tx, teamID int64, caseID string) (caseRow, error) {
	query := `SELECT ` + caseColumns + ` FROM cases WHERE team_id = $1 AND id = $2`
	if tx.Engine == db.Postgres {
		query += ` FOR UPDATE`
	}
	c, err := scanCase(tx.QueryRowContext(ctx, query, teamID, caseID))
	if err != nil {
		return caseRow{}, fmt.Errorf("case %s: %w", caseID, db.Translate(err))
	}
	return c, nil
}

// RecordDefinitionEdited writes on each open case (ACTIVE or ACKNOWLEDGED) of caseIDs a comment
// event by the system saying that alert definition defID, whose alert fires in it, was edited:
// text names the definition, the version before and after and the new condition. Issue 37: an
// edit keeps the firing alert's incident and case, and the case records it; Alertmanager does
// not notify an annotation's change, so the edit itself writes it. Errors: the database's.
func RecordDefinitionEdited(ctx context.Context, tx *db.Tx, teamID int64, caseIDs []string, text string) error {
	for _, id := range caseIDs {
		c, err := lockCaseByID(ctx, tx, teamID, id)
		if errors.Is(err, db.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if c.Status != oas.CaseStatusCASESTATUSACTIVE && c.Status != oas.CaseStatusCASESTATUSACKNOWLEDGED {
			continue
		}
		_, err = appendEvent(ctx, tx, teamID, id, systemActor(), oas.CaseEventData{Comment: oas.NewOptCommentEventData(oas.CommentEventData{
			UnsafeText: oas.NewOptString(cut(text, 2048)), Attachments: []oas.CommentAttachment{},
		})}, tx.Now)
		if err != nil {
			return err
		}
	}
	return nil
}
