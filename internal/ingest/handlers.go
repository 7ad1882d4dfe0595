// Package ingest receives Prometheus Alertmanager webhook notifications (POST
// /ingest/alertmanager/v1) and turns them into incidents and cases.
//
// Each alert, identified by its fingerprint and start time, is one incident; an alert of an alert
// definition is identified by the definition's identity instead (identity.go), so that an edit of
// a firing definition keeps its incident and case (issue 37). The alerts of one
// Alertmanager group (groupKey) go to the group's open case; when the group has none and a
// notification brings an alert not seen before, a new case is opened. A resolved alert resolves
// its incident, and a case whose incidents are all resolved is resolved with it. Every event that
// ingestion writes has the actor prometheusAlertManager {receiverName}.
//
// An alert of an alert definition (its alert_def_id label) also records its firing and its
// resolution in the alert event feed (internal/alertevents), in the same transaction.
//
// A notification is applied in one transaction, and applying it again changes nothing: alerts
// already recorded as they are count as unchanged.
package ingest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/alertevents"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/routers"
)

// AlertHandler serves the ingestion operation.
type AlertHandler struct {
	db *db.DB
}

// NewHandler returns the ingestion operation over database.
func NewHandler(database *db.DB) *AlertHandler {
	return &AlertHandler{db: database}
}

// attempts bounds the retries of a notification whose group's case a concurrent notification
// opened first.
const attempts = 5

// IngestAlertmanager applies one Alertmanager notification to the caller's team.
//
// Errors: Invalid when an alert is not usable (named by its index); the rest of the payload is
// checked by the document's bounds.
func (h *AlertHandler) IngestAlertmanager(ctx context.Context, req *oas.AlertmanagerNotification) (*oas.IngestResult, error) {
	caller := auth.PrincipalFrom(ctx)
	n := notificationOf(caller.TeamID, req)
	var result *oas.IngestResult
	var err error
	for range attempts {
		err = h.db.InTx(ctx, func(tx *db.Tx) error {
			result, err = n.apply(ctx, tx)
			return err
		})
		if !db.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return result, nil
}

// notification is a webhook payload in the terms of cases and incidents.
type notification struct {
	teamID   int64
	group    cases.AlertGroup
	receiver string
	meta     []oas.MetaLabel
	alerts   []alert
	// groupLabels are the notification's group labels, as the alert event feed keeps them.
	groupLabels map[string]string
}

// alert is one alert of a notification.
type alert struct {
	incident incidents.Alert
	firing   bool
	endsAt   time.Time
	priority oas.CasePriority
	// identity is the alert definition identity of an alert of a definition (definitionIdentity),
	// "" for others; raw and rawStartsAt are the fingerprint and start time Alertmanager sent,
	// which settleIdentity may replace in incident.
	identity    string
	raw         string
	rawStartsAt time.Time
	// version is the definition's version the alert was evaluated from.
	version string
}

func notificationOf(teamID int64, req *oas.AlertmanagerNotification) notification {
	n := notification{
		teamID:   teamID,
		receiver: req.Receiver,
		group: cases.AlertGroup{
			TeamID:    teamID,
			GroupKey:  req.GroupKey,
			Receiver:  req.Receiver,
			Title:     titleOf(req),
			Labels:    keyValues(req.CommonLabels.Or(nil)),
			Groupings: keyValues(req.GroupLabels.Or(nil)),
		},
		meta:        metaLabels(req.GroupLabels.Or(nil)),
		groupLabels: req.GroupLabels.Or(nil),
	}
	for _, a := range req.Alerts {
		labels := map[string]string(a.Labels)
		annotations := map[string]string(a.Annotations.Or(nil))
		severity := SeverityOf(labels["severity"])
		version := annotations[versionKey]
		if version == "" {
			version = labels[versionKey]
		}
		n.alerts = append(n.alerts, alert{
			firing:      a.Status == oas.AlertmanagerAlertStatusFiring,
			endsAt:      a.EndsAt.Or(time.Time{}),
			priority:    PriorityOf(severity),
			identity:    definitionIdentity(labels),
			raw:         a.Fingerprint,
			rawStartsAt: a.StartsAt.UTC().Truncate(time.Microsecond),
			version:     cut(version, 256),
			incident: incidents.Alert{
				TeamID:          teamID,
				Fingerprint:     a.Fingerprint,
				StartsAt:        a.StartsAt.UTC().Truncate(time.Microsecond),
				Name:            cut(labels["alertname"], 500),
				Description:     cut(firstOf(annotations, "description", "summary"), 2000),
				Severity:        severity,
				Labels:          nonNil(labels),
				Annotations:     nonNil(annotations),
				MetaLabels:      n.meta,
				ApplicationName: cut(labels["applicationName"], 256),
				SubsystemName:   cut(labels["subsystemName"], 256),
				SystemName:      cut(req.Receiver, 256),
			},
		})
	}
	return n
}

// apply writes the notification in tx. It is called again from scratch when tx is retried.
func (n notification) apply(ctx context.Context, tx *db.Tx) (*oas.IngestResult, error) {
	result := &oas.IngestResult{}

	// An alert definition's alerts are known by the definition's identity (issue 37); a
	// resolution that a newer alert of its identity superseded changes nothing.
	var alerts []alert
	for _, a := range n.alerts {
		apply, err := n.settleIdentity(ctx, tx, &a)
		if err != nil {
			return nil, err
		}
		if !apply {
			result.Unchanged++
			continue
		}
		alerts = append(alerts, a)
	}

	// Which alerts are new, and which case holds each known one.
	caseOf := make([]string, len(alerts))
	reopen := make([]bool, len(alerts))
	var anyNewFiring bool
	for i, a := range alerts {
		caseID, found, err := incidents.CaseOfAlert(ctx, tx, n.teamID, a.incident.Fingerprint, a.incident.StartsAt)
		if err != nil {
			return nil, err
		}
		caseOf[i] = caseID
		if !found && a.firing {
			anyNewFiring = true
		}
		if found && a.firing {
			// Firing again with the start time of an incident its source resolved: Alertmanager
			// says it fires, so it is reopened, in the group's open case (issue 37).
			if reopen[i], err = incidents.ResolvedBySource(ctx, tx, n.teamID, a.incident.Fingerprint, a.incident.StartsAt); err != nil {
				return nil, err
			}
			anyNewFiring = anyNewFiring || reopen[i]
		}
	}

	// New firing alerts open (or join) the group's case.
	var groupCase cases.CaseRef
	if anyNewFiring {
		ref, _, err := cases.OpenForGroup(ctx, tx, n.group)
		if err != nil {
			return nil, err
		}
		groupCase = ref
		result.CaseId = oas.NewOptString(ref.ID)
		result.ReadableId = oas.NewOptString(ref.ReadableID)
	}

	touched := map[string][]cases.IndicatorAlert{}
	var touchedOrder []string
	touch := func(caseID string, a alert) {
		if _, ok := touched[caseID]; !ok {
			touchedOrder = append(touchedOrder, caseID)
		}
		touched[caseID] = append(touched[caseID], indicatorOf(a))
	}

	for i, a := range alerts {
		caseID := caseOf[i]
		if reopen[i] {
			id, _, reopened, err := incidents.ReopenFromSource(ctx, tx, n.teamID, a.incident.Fingerprint, a.incident.StartsAt,
				groupCase.ID, a.incident.SystemName)
			if err != nil {
				return nil, err
			}
			caseID = groupCase.ID
			result.IncidentsOpened++
			if err := n.recordEvent(ctx, tx, a, id, reopened); err != nil {
				return nil, err
			}
			if reopened && a.identity != "" {
				if err := routers.ScheduleReminders(ctx, tx, n.teamID, id); err != nil {
					return nil, err
				}
			}
		} else if caseID == "" {
			if groupCase.ID == "" {
				// A resolved alert never seen firing, in a group without an open case: there
				// is nothing to resolve.
				result.Unchanged++
				continue
			}
			inc := a.incident
			inc.CaseID = groupCase.ID
			id, created, err := incidents.Trigger(ctx, tx, inc)
			if err != nil {
				return nil, err
			}
			caseID = groupCase.ID
			if a.firing {
				result.IncidentsOpened++
				if err := n.recordEvent(ctx, tx, a, id, created); err != nil {
					return nil, err
				}
				if created && a.identity != "" {
					// a definition's alert is reminded of while it fires (issue 37)
					if err := routers.ScheduleReminders(ctx, tx, n.teamID, id); err != nil {
						return nil, err
					}
				}
			}
		} else if a.firing {
			result.Unchanged++
		}
		if !a.firing {
			endsAt := a.endsAt
			if endsAt.IsZero() || endsAt.Before(a.incident.StartsAt) {
				endsAt = tx.Now
			}
			id, _, changed, err := incidents.ResolveFromSource(ctx, tx, n.teamID, a.incident.Fingerprint,
				a.incident.StartsAt, endsAt.UTC().Truncate(time.Microsecond), a.incident.SystemName)
			if err != nil {
				return nil, err
			}
			ended := a
			ended.endsAt = endsAt
			if err := n.recordEvent(ctx, tx, ended, id, changed); err != nil {
				return nil, err
			}
			if changed {
				result.IncidentsResolved++
			} else {
				result.Unchanged++
			}
		}
		touch(caseID, a)
	}

	// Cases in a fixed order, so that concurrent notifications lock them in the same order.
	slices.Sort(touchedOrder)
	for _, caseID := range touchedOrder {
		if err := cases.RecordAlerts(ctx, tx, n.teamID, caseID, n.receiver, touched[caseID]); err != nil {
			return nil, err
		}
		open, err := incidents.OpenInCase(ctx, tx, n.teamID, caseID)
		if err != nil {
			return nil, err
		}
		if open == 0 {
			if err := cases.ResolveByAlerts(ctx, tx, n.teamID, caseID, n.receiver); err != nil {
				return nil, err
			}
		}
	}
	return result, nil
}

// recordEvent records in the alert event feed the firing (a firing alert that opened its
// incident) or resolution (a resolved alert that resolved it) of a, when changed says the
// incident was just opened or resolved; an alert already recorded as it is records nothing, and
// alertevents.Record leaves out alerts of no alert definition. The feed keeps the fingerprint
// Alertmanager sent (the incident's may be the definition identity).
func (n notification) recordEvent(ctx context.Context, tx *db.Tx, a alert, incidentID string, changed bool) error {
	if !changed {
		return nil
	}
	_, err := alertevents.Record(ctx, tx, alertevents.Alert{
		TeamID: n.teamID, Labels: a.incident.Labels, Annotations: a.incident.Annotations, GroupLabels: n.groupLabels,
		Fingerprint: a.raw, StartsAt: a.incident.StartsAt, EndsAt: a.endsAt, Firing: a.firing,
		IncidentID: incidentID,
	})
	return err
}

func indicatorOf(a alert) cases.IndicatorAlert {
	ia := cases.IndicatorAlert{
		AlertName:   a.incident.Name,
		Fingerprint: a.incident.Fingerprint,
		Labels:      a.incident.Labels,
		Priority:    a.priority,
		Firing:      a.firing,
		StartsAt:    a.incident.StartsAt,
		Version:     a.version,
	}
	if !a.firing {
		ia.EndsAt = a.endsAt
	}
	return ia
}

// SeverityOf maps an alert's `severity` label (case-insensitive) to an incident severity:
//
//	critical, fatal, page, p1   → INCIDENT_SEVERITY_CRITICAL
//	error, high, major, p2      → INCIDENT_SEVERITY_ERROR
//	warning, warn, medium, p3   → INCIDENT_SEVERITY_WARNING
//	low, minor, p4              → INCIDENT_SEVERITY_LOW
//	info, informational, notice, p5 → INCIDENT_SEVERITY_INFO
//	anything else, or no label  → INCIDENT_SEVERITY_UNSPECIFIED
func SeverityOf(label string) oas.IncidentSeverity {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "critical", "fatal", "page", "p1":
		return oas.IncidentSeverityINCIDENTSEVERITYCRITICAL
	case "error", "high", "major", "p2":
		return oas.IncidentSeverityINCIDENTSEVERITYERROR
	case "warning", "warn", "medium", "p3":
		return oas.IncidentSeverityINCIDENTSEVERITYWARNING
	case "low", "minor", "p4":
		return oas.IncidentSeverityINCIDENTSEVERITYLOW
	case "info", "informational", "notice", "p5":
		return oas.IncidentSeverityINCIDENTSEVERITYINFO
	}
	return oas.IncidentSeverityINCIDENTSEVERITYUNSPECIFIED
}

// PriorityOf maps an incident severity to the priority it gives a case: critical P1, error P2,
// warning P3, low P4, info and unspecified P5. A case's system priority is the highest among its
// alerts.
func PriorityOf(s oas.IncidentSeverity) oas.CasePriority {
	switch s {
	case oas.IncidentSeverityINCIDENTSEVERITYCRITICAL:
		return oas.CasePriorityCASEPRIORITYP1
	case oas.IncidentSeverityINCIDENTSEVERITYERROR:
		return oas.CasePriorityCASEPRIORITYP2
	case oas.IncidentSeverityINCIDENTSEVERITYWARNING:
		return oas.CasePriorityCASEPRIORITYP3
	case oas.IncidentSeverityINCIDENTSEVERITYLOW:
		return oas.CasePriorityCASEPRIORITYP4
	}
	return oas.CasePriorityCASEPRIORITYP5
}

// titleOf names a new case: the common `summary` annotation, else the group labels
// (`alertname=HighLatency, service=api`), else the receiver.
func titleOf(req *oas.AlertmanagerNotification) string {
	if s := strings.TrimSpace(req.CommonAnnotations.Or(nil)["summary"]); s != "" {
		return s
	}
	var parts []string
	for _, kv := range keyValues(req.GroupLabels.Or(nil)) {
		parts = append(parts, kv.Key+"="+kv.Value)
	}
	if len(parts) > 0 {
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("Alerts of receiver %s", req.Receiver)
}

// keyValues lists a label map sorted by key, leaving out empty values.
func keyValues(m map[string]string) []oas.KeyValue {
	out := []oas.KeyValue{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != "" {
			out = append(out, oas.KeyValue{Key: k, Value: m[k]})
		}
	}
	return out
}

// metaLabels are the group labels as incident meta labels (key and value 1–255 characters).
func metaLabels(m map[string]string) []oas.MetaLabel {
	out := []oas.MetaLabel{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" || m[k] == "" {
			continue
		}
		out = append(out, oas.MetaLabel{Key: oas.NewOptString(cut(k, 255)), Value: oas.NewOptString(cut(m[k], 255))})
	}
	return out
}

func firstOf(m map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(m[k]); v != "" {
			return v
		}
	}
	return ""
}

// cut shortens s to at most n characters (code points).
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
