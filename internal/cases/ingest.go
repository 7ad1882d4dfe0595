package cases

import (
	"context"
	"errors"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// This file is what alert ingestion (internal/ingest) calls, inside its own transaction. The
// actor of every event written here is alertManager {receiverName}.

// AlertGroup is an Alertmanager group (groupKey) as a case sees it.
type AlertGroup struct {
	TeamID   int64
	GroupKey string
	Receiver string
	// Title is used when a case is opened (trimmed to 512 characters).
	Title string
	// Labels (the notification's common labels) and Groupings (its group labels), sorted by key.
	Labels, Groupings []oas.KeyValue
}

// CaseRef names a case.
type CaseRef struct {
	ID, ReadableID string
}

// OpenForGroup returns the group's open case (status ACTIVE or ACKNOWLEDGED), locked for the
// rest of the transaction, or opens a new one: the next CASE-<n> of the team, status ACTIVE,
// system priority CASE_PRIORITY_P5 until SetAlerts says otherwise, with its `created` event.
// When a concurrent transaction opened the group's case first, the error satisfies
// db.IsConflict and the caller retries.
func OpenForGroup(ctx context.Context, tx *db.Tx, g AlertGroup) (ref CaseRef, opened bool, err error) {
	return CaseRef{}, false, errNotBuilt
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
}

// RecordAlerts merges alerts into the case's caseIndicators.alertIndicators (one indicator per
// alert name, one permutation per label set) and raises the case's system priority to the
// highest priority among its alerts, writing priorityDetailsChanged when the priority it shows
// changes. Alerts already recorded as they are change nothing.
func RecordAlerts(ctx context.Context, tx *db.Tx, teamID int64, caseID, receiver string, alerts []IndicatorAlert) error {
	return errNotBuilt
}

// ResolveByAlerts moves an ACTIVE or ACKNOWLEDGED case to RESOLVED because all its alerts
// resolved (statusChanged, actor alertManager). A case in any other status is left alone.
func ResolveByAlerts(ctx context.Context, tx *db.Tx, teamID int64, caseID, receiver string) error {
	return errNotBuilt
}

var errNotBuilt = errors.New("cases: not built yet")
