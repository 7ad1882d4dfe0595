package incidents

import (
	"context"
	"errors"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// This file is what alert ingestion (internal/ingest) calls, inside its own transaction.

// Alert is one Alertmanager alert as an incident sees it.
type Alert struct {
	TeamID      int64
	CaseID      string
	Fingerprint string
	StartsAt    time.Time
	// Name is the alertname label; Description the description (or summary) annotation.
	Name, Description string
	Severity          oas.IncidentSeverity
	// Labels become contextualLabels (and indexed rows); Annotations become displayLabels.
	Labels, Annotations map[string]string
	// MetaLabels are the notification's group labels, sorted by key.
	MetaLabels                     []oas.MetaLabel
	ApplicationName, SubsystemName string
	// SystemName is the originator of the events written (the Alertmanager receiver).
	SystemName string
}

var errNotBuilt = errors.New("incidents: not built yet")

// Trigger records a firing alert. When no incident of the team has the alert's fingerprint and
// start time, it inserts one (state and status TRIGGERED) with its OPEN and UPSERT_STATE
// events and answers created=true. Otherwise it changes nothing and answers the existing id.
func Trigger(ctx context.Context, tx *db.Tx, a Alert) (id string, created bool, err error) {
	return "", false, errNotBuilt
}

// ResolveFromSource records that the alert (fingerprint, start time) was resolved at endsAt:
// state and status RESOLVED, closedAt endsAt, and an UPSERT_STATE event with stateType
// RESOLVED from an operational originator. found=false when no such incident exists;
// changed=false when it was already resolved by its source.
func ResolveFromSource(ctx context.Context, tx *db.Tx, teamID int64, fingerprint string, startsAt, endsAt time.Time, systemName string) (id string, found, changed bool, err error) {
	return "", false, false, errNotBuilt
}

// OpenInCase counts the case's incidents whose state is still TRIGGERED.
func OpenInCase(ctx context.Context, tx *db.Tx, teamID int64, caseID string) (int, error) {
	return 0, errNotBuilt
}
