package delivery

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ListHandler implements the deliveries list of oas.Handler: it reads the outbox, and sends
// nothing.
type ListHandler struct {
	db *db.DB
}

// NewListHandler returns the deliveries list operation.
func NewListHandler(database *db.DB) *ListHandler { return &ListHandler{db: database} }

// maxEntriesPerCase and maxAttemptsPerEntry are the public bounds of the answer.
const (
	maxEntriesPerCase   = 1000
	maxAttemptsPerEntry = 100
)

// ListNotificationDeliveries answers, for each case of caseIds (once each, by id or by readable
// id CASE-<n>, keyed as requested), the caller's team's delivery records of that case: one entry
// per notification request and router, newest 1000, oldest first (those of one request by router
// id), each with one attempt per connector (sorted by connector id), its outcome and, while it is
// pending, its sends so far, last error and next send (attemptOf). Cases the team does not have
// answer an empty list. The generated decoder enforces the bounds (1 to 1000 ids of 1 to 64
// characters); the only errors are the database's.
func (h *ListHandler) ListNotificationDeliveries(ctx context.Context, req *oas.NotificationDeliveriesInput) (*oas.NotificationDeliveriesList, error) {
	caller := auth.PrincipalFrom(ctx)
	var ids []string
	for _, id := range req.CaseIds {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	out := oas.NotificationDeliveriesList{DeliveriesByCase: oas.NotificationDeliveriesListDeliveriesByCase{}}
	caseOf := map[string]string{} // requested → the case id the records carry
	args := []any{caller.TeamID}
	var marks []string
	for _, id := range ids {
		out.DeliveriesByCase[id] = oas.CaseNotificationDeliveries{NotificationDeliveries: []oas.NotificationDelivery{}}
		caseID := id
		if strings.HasPrefix(id, "CASE-") {
			found, ok, err := cases.IDOf(ctx, h.db.Read(), caller.TeamID, id)
			if err != nil {
				return nil, fmt.Errorf("list deliveries: %w", err)
			}
			if !ok {
				continue
			}
			caseID = found
		}
		caseOf[id] = caseID
		if !slices.Contains(args[1:], any(caseID)) {
			args = append(args, caseID)
			marks = append(marks, fmt.Sprintf("$%d", len(args)))
		}
	}
	if len(marks) == 0 {
		return &out, nil
	}
	byCase := map[string][]oas.NotificationDelivery{}
	rows, err := h.db.Read().QueryContext(ctx, `SELECT `+recordColumns+` FROM deliveries
		WHERE team_id = $1 AND case_id IN (`+strings.Join(marks, ", ")+`)
		ORDER BY case_id, created_at DESC, request_id DESC, router_id DESC, connector_id, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	type entryKey struct{ request, router string }
	var (
		caseID  string
		entries []oas.NotificationDelivery
		keys    []entryKey
	)
	flush := func() {
		if caseID == "" {
			return
		}
		slices.Reverse(entries) // newest first while reading, oldest first in the answer
		byCase[caseID] = entries
	}
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("list deliveries: %w", err)
		}
		if r.CaseID != caseID {
			flush()
			caseID, entries, keys = r.CaseID, nil, nil
		}
		k := entryKey{r.RequestID, r.RouterID}
		if len(keys) == 0 || keys[len(keys)-1] != k {
			if len(entries) == maxEntriesPerCase {
				continue
			}
			keys = append(keys, k)
			entries = append(entries, oas.NotificationDelivery{
				RequestNotificationId: oas.NewOptString(r.RequestID),
				Timestamp:             time.UnixMicro(r.CreatedAt).UTC(),
				Attempted: oas.NewOptRoutedDelivery(oas.RoutedDelivery{
					Router:   oas.DeliveryRouter{RouterId: oas.NotificationCenterID(r.RouterID), RouterName: r.RouterName},
					Attempts: []oas.DeliveryAttempt{},
				}),
			})
		}
		e := &entries[len(entries)-1].Attempted.Value
		if len(e.Attempts) < maxAttemptsPerEntry {
			e.Attempts = append(e.Attempts, attemptOf(r))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	flush()
	for id, caseID := range caseOf {
		if entries, ok := byCase[caseID]; ok {
			out.DeliveriesByCase[id] = oas.CaseNotificationDeliveries{NotificationDeliveries: entries}
		}
	}
	return &out, nil
}

// attemptOf is a record as the list answers it: its connector, its sends so far and its outcome;
// while it is pending, also when it is sent next and, after a failed send, why that one failed.
func attemptOf(r record) oas.DeliveryAttempt {
	a := oas.DeliveryAttempt{Connector: oas.DeliveryAttemptConnector{
		ConnectorId:   oas.NotificationCenterID(r.ConnectorID),
		ConnectorName: r.ConnectorName,
		ConnectorType: oas.DeliveryAttemptConnectorConnectorType(r.ConnectorType.PublicName()),
	}, Attempts: oas.NewOptInt32(int32(min(r.Attempts, math.MaxInt32)))}
	if r.State == statePending {
		a.NextAttemptTime = oas.NewOptDateTime(time.UnixMicro(max(r.NextAttemptAt, r.LeaseUntil)).UTC())
		if r.Error != "" {
			a.LastError = oas.NewOptString(cutMessage(r.Error))
		}
	}
	switch r.State {
	case stateSent:
		a.Outcome.Success = oas.NewOptDeliveryAttemptOutcomeSuccess(oas.DeliveryAttemptOutcomeSuccess{})
	case stateFailed:
		a.Outcome.Failure = oas.NewOptDeliveryAttemptOutcomeFailure(oas.DeliveryAttemptOutcomeFailure{
			ErrorMessage: cutMessage(r.Error)})
	}
	return a
}
