// Package incidents serves incidents: one per alert (fingerprint and start time), with their
// events, their lifecycle operations (acknowledge, resolve, close, assign, unassign), lists,
// batch reads and aggregations (E18, E19). Alert ingestion creates and resolves them through
// Trigger and ResolveFromSource.
//
// # States and transitions
//
// An incident has a state (TRIGGERED or RESOLVED: is the alert still going on) and a status
// (TRIGGERED, ACKNOWLEDGED or RESOLVED: what people did about it). Every change appends its event
// in the same transaction; an operation that changes nothing appends nothing.
//
//	source fires (Trigger)      new incident: state TRIGGERED, status TRIGGERED; events OPEN (with
//	                            upsertState TRIGGERED as its body) and UPSERT_STATE TRIGGERED
//	                            (operational). A redelivery changes nothing.
//	source resolves             state RESOLVED, status RESOLVED, closedAt = the alert's end (kept
//	(ResolveFromSource)         when already closed); UPSERT_STATE RESOLVED (operational). A
//	                            redelivery changes nothing.
//	acknowledge                 status TRIGGERED → ACKNOWLEDGED, event ACKNOWLEDGE;
//	                            ACKNOWLEDGED → no change; status RESOLVED → 409.
//	resolve                     status → RESOLVED, event UPSERT_STATE RESOLVED (administrative);
//	                            already RESOLVED → no change. The state and closedAt are kept.
//	close                       state and status → RESOLVED, closedAt = now, event CLOSE;
//	                            already closed (closedAt set, by close or by the source) → no change.
//	assign                      any state: assignee set (replaced), event ASSIGN.
//	unassign                    any state: assignee removed, event UNASSIGN; none → no change.
//
// Every event carries exactly one event body (upsertState, acknowledge, close, assignment,
// unassign) and one originator (operationalEvent or administrativeEvent).
//
// Batches are all or nothing: every id is checked first (an unknown id is a 404 naming it, a
// forbidden transition a 409 naming the incident), then every incident changes. Administrative
// events name the caller as "apikey:<key id>".
//
// # The events feed
//
// The feed lists the stored events of the team's incidents (events.go); an event's id is its
// platformEventKey and what the by-event operations take, which run the lifecycle operations
// above on the event's incident. Filter values (filtervalues.go) count incidents.
//
// # Aggregations (E18)
//
// Groups are formed by the group-by fields in order; groups by SEVERITY, STATE and STATUS sort in
// the enumeration's order, other fields by value, with no value (an open incident's closedAt)
// first when ascending. Incidents without a grouped contextual label form the "" group.
// INCIDENTS_FIELDS_DURATION and INCIDENTS_FIELDS_UNSPECIFIED cannot be grouped by (400), since a
// duration of an open incident changes every second. A filter on a contextual label with no
// values matches incidents that carry the label at all.
//
// Fast paths answer exactly what the generic GROUP BY over incidents answers. Without a filter,
// grouped by severity or not grouped, the counts come from incident_counts (one row per
// severity, state, status, assignee and meta labels, kept by every write of this package in the
// same transaction) and each severity's first creation, last close and last state update from
// MIN/MAX index seeks, all in one read transaction.
//
// Grouped by nothing but severity, name, state, status, application and subsystem, under filters
// on those, the assignee, the meta labels, isMuted and a search in one of those fields, the
// aggregation reads incident_rollup (rollup.go): per combination of those fields, the number of
// incidents, their first creation, last close and last state update; thousands of rows instead of
// every incident. incident_label_rollup holds the same per contextual label key and value, read
// when the query involves exactly one label key (grouped by, filtered on, searched in) besides
// those: without a filter on the label, only when no matching incident lacks the label (the ""
// group has no rows of its own there). Every write of this package keeps both in the same
// transaction; a row's times stay exact: times only grow in place, and a row that an incident
// holding one of its extremes leaves recomputes them from its own incidents. Every other query
// takes the generic path: a GROUP BY over the matching incidents, folded and sorted in Go.
//
// Groupings with a value per incident (by the id, createdAt, closedAt or the last state update)
// have about as many groups as incidents, so folding them all in Go to answer one page is what
// cost most (33 s at a million incidents). E18 then pages in SQL: it counts the groups (the
// matching incidents when grouped by id), reads the page's group values in the same order as the
// Go sort (NULL first when ascending, byte order), and aggregates only the incidents of the page's
// values; the equivalence test compares this plan with folding every group, page by page.
//
// listIncidentsId is up to 1000 ids of the group, sorted: a query per group on the generic path
// over incidents, one query per page (the smallest ids of each group) when the groups are paged
// in SQL or the query is driven from the label rows, which a query per group would walk again
// for every group. Every fast path reads the ids as the generic path does. The query per group
// walks an index that starts with the group's values where there is one (on SQLite: the name's
// incidents_by_rollup, the severity's incidents_by_severity, a label's rows), else the incidents
// in id order; which 1000 ids a larger group lists depends on that walk. Where incident_rollup or
// incident_label_rollup answers the query (and incident_day_rollup under a time range), a group's
// ids are instead seeks of its rollup rows' whole keys (incidents_by_rollup, and
// incident_labels_by_rollup: label rows carry every column of the rollup key); the generic path
// keeps the walk above.
//
// Grouped by closedAt, the groups are counted with incident_closed_times (the team's distinct
// closedAt values, kept before commit by every write that sets one) when the filter matches
// every closed incident of the team, with the day rollup when it matches none, with
// incident_value_closed_times and its ties (distinct times and closed incidents per contextual
// label value and per name) when it filters on one label's values alone or searches the name
// alone, and otherwise by reading the matching closed incidents' times by rollup key, up to
// maxClosedTimesRead of them.
package incidents
