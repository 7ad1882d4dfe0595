package cases

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// RecordNotificationSent appends notificationSent {notificationRequestId, notifications} to the
// case's history in tx, actor system: the notification request requestID reached its receivers,
// one token per delivery. It changes nothing else of the case (a notification is not a human
// change: updateTime and the time-to-update clock stay). The delivery worker calls it in the
// transaction that records the outcome. A case the team does not have records nothing (nil).
func RecordNotificationSent(ctx context.Context, tx *db.Tx, teamID int64, caseID, requestID string, tokens []string) error {
	items := make([]oas.CaseEventDataNotificationSentNotificationsItem, 0, len(tokens))
	for _, t := range tokens {
		items = append(items, oas.CaseEventDataNotificationSentNotificationsItem{Token: oas.NewOptString(t)})
	}
	return recordNotification(ctx, tx, teamID, caseID, oas.CaseEventData{
		NotificationSent: oas.NewOptCaseEventDataNotificationSent(oas.CaseEventDataNotificationSent{
			NotificationRequestId: oas.NewOptString(requestID), Notifications: items,
		}),
	})
}

// RecordNotificationFailed appends notificationFailed {error} to the case's history in tx, actor
// system; otherwise as RecordNotificationSent.
func RecordNotificationFailed(ctx context.Context, tx *db.Tx, teamID int64, caseID, message string) error {
	return recordNotification(ctx, tx, teamID, caseID, oas.CaseEventData{
		NotificationFailed: oas.NewOptCaseEventDataNotificationFailed(oas.CaseEventDataNotificationFailed{
			Error: oas.NewOptString(message),
		}),
	})
}

func recordNotification(ctx context.Context, tx *db.Tx, teamID int64, caseID string, data oas.CaseEventData) error {
	if _, err := lockCaseByID(ctx, tx, teamID, caseID); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return nil
		}
		return err
	}
	_, err := appendEvent(ctx, tx, teamID, caseID, systemActor(), data, tx.Now)
	return err
}

// IDOf answers the id of the team's case that ident names, by id or by readable id (CASE-<n>),
// read in q; found is false when the team has no such case (or ident can name none).
//
// Errors: only the database's.
func IDOf(ctx context.Context, q db.Querier, teamID int64, ident string) (id string, found bool, err error) {
	column, value, ok := caseKey(ident)
	if !ok {
		return "", false, nil
	}
	err = q.QueryRowContext(ctx, `SELECT id FROM cases WHERE team_id = $1 AND `+column+` = $2`, teamID, value).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("find case %q: %w", ident, err)
	}
	return id, true, nil
}
