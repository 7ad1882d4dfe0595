// Package cases serves cases: their lifecycle, their history of events (comments among them),
// the synchronisation requests of their external threads, their KPI breaches, the team's case
// settings (settings.go) and the operator's KPI thresholds. Alert ingestion opens cases and feeds them alerts through ingest.go.
//
// A case is opened ACTIVE by ingestion (PENDING_ACTIVATION is never used by mgmtapi). Every
// change writes its event in the same transaction, with the caller as actor (apiKey {id, name}
// for an API key, prometheusAlertManager {receiverName} for ingestion, system {} for KPI breaches).
//
// # States and transitions
//
//	operation       | ACTIVE                | ACKNOWLEDGED          | RESOLVED                    | CLOSED
//	----------------+-----------------------+-----------------------+-----------------------------+-----------------
//	acknowledge     | → ACKNOWLEDGED (1)    | no-op                 | 409                         | 409
//	unacknowledge   | no-op                 | → ACTIVE              | 409                         | 409
//	resolve         | → RESOLVED (2)        | → RESOLVED (2)        | no-op (3)                   | 409
//	close           | → CLOSED (4)          | → CLOSED (4)          | → CLOSED (4)                | no-op
//	assign/unassign | allowed               | allowed               | allowed                     | 409
//	update          | allowed               | allowed               | allowed                     | 409
//	comment         | allowed               | allowed               | allowed                     | allowed
//	alerts resolved | → RESOLVED (5)        | → RESOLVED (5)        | unchanged                   | unchanged
//
//	(1) sets acknowledgeTime; time-to-acknowledge breaches become MITIGATED.
//	(2) sets resolutionDetails {reason, resolveTime, resolvedBy: the caller's kind}; time-to-resolve
//	    and time-to-update breaches become MITIGATED; a reason also writes
//	    resolutionReasonChangedEvent.
//	(3) a reason different from the current one still writes resolutionReasonChangedEvent.
//	(4) time-to-resolve and time-to-update breaches become MITIGATED.
//	(5) ingestion (ResolveByAlerts), actor prometheusAlertManager.
//
// The bulk operations (bulk.go) apply the same rules to many cases in one transaction, all or
// nothing; the priority override (single and bulk) follows the update's override rule.
//
// A move writes statusChanged {oldStatus, newStatus}. A no-op answers 200 with the case as it is
// and writes nothing. 409 messages say why, e.g. "case CASE-3 is resolved; only an active case
// can be acknowledged". Every human change (comment and its edit or deletion, update, assign,
// unassign, acknowledge, unacknowledge, resolve, close) sets updateTime and restarts the
// time-to-update clock, and marks time-to-update breaches MITIGATED.
//
// # KPIs
//
// Per team, a limit in seconds per KPI and priority: the active case settings configuration's
// KPI entry where it has one (settings.go; a disabled entry turns the KPI off for that
// priority), else the team's default, the operator API's thresholds or DefaultKPIThresholds.
// EvaluateKPIs, run on a ticker, records a breach when an open case's clock passes the limit of
// its current priority: time to acknowledge from creation until
// the first acknowledgement, time to resolve from creation, time to update from the last human
// change (the creation at first).
package cases
