package cases

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/access"
	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// CaseHandler serves the cases operations.
type CaseHandler struct {
	db *db.DB
}

// NewHandler returns the cases operations over database.
func NewHandler(database *db.DB) *CaseHandler {
	return &CaseHandler{db: database}
}

// callerActor is the actor of the caller's changes: the member who owns a personal key
// ({user: {id}}), otherwise the key ({apiKey: {id, name}}).
func callerActor(ctx context.Context) (*auth.Principal, oas.EventActor) {
	caller := auth.PrincipalFrom(ctx)
	if caller.UserID != "" {
		return caller, userActor(caller.UserID)
	}
	return caller, apiKeyActor(caller.KeyID, caller.KeyName)
}

// touch records a human change of the case made at tx.Now: updateTime and the time-to-update
// clock restart, and the case's open time-to-update breaches become MITIGATED.
func touch(ctx context.Context, tx *db.Tx, c *caseRow) error {
	c.UpdatedAt, c.LastUpdateAt = micros(tx.Now), micros(tx.Now)
	if err := saveCase(ctx, tx, c); err != nil {
		return err
	}
	return mitigate(ctx, tx, c.TeamID, c.ID, oas.KPITypeKPITYPETIMETOUPDATE)
}

// touchWithEvent is touch for a change that adds one event to the case and alters nothing else
// of it, in two halves around the transaction's start. Its opening (the transaction's first
// statement, see db.InTxOpening), without reading the case first, writes the two times of the
// team's case named by ident (id or readable id) and takes the number of the event (see
// eventDraft.insert). touched reads its row: that number and, on PostgreSQL, the case as the
// UPDATE left it. left is nil on SQLite and when the case has a KPI breach (its snapshot then
// reads the case; see eventDraft.left). On PostgreSQL the row stays locked until the transaction
// ends.
//
// Errors: NotFound when the team has no such case (from the opening, before any transaction,
// when ident cannot name one).
type touchWithEvent struct {
	engine db.Engine
	teamID int64
	ident  string
}

// opening is the UPDATE that touches the case, for db.InTxOpening.
func (t touchWithEvent) opening() (db.Opening, error) {
	column, value, ok := caseKey(t.ident)
	if !ok {
		return nil, caseNotFound(t.ident)
	}
	statements := touchStatements[column]
	statement := statements.postgres
	if t.engine == db.SQLite {
		statement = statements.sqlite
	}
	return func(now time.Time) (string, []any) {
		return statement, []any{t.teamID, value, micros(now), breachBreached, string(oas.KPITypeKPITYPETIMETOUPDATE)}
	}, nil
}

// touched reads the opening's row, and mitigates a time-to-update breach the case had.
func (t touchWithEvent) touched(ctx context.Context, tx *db.Tx, row db.Row) (caseID string, seq int64, left *caseRow, err error) {
	var breached, routable bool
	if tx.Engine == db.SQLite {
		err = row.Scan(&caseID, &seq, &breached, &routable)
	} else {
		var anyBreach bool
		c, scanErr := scanCase(scanWith{row, []any{&seq, &breached, &routable, &anyBreach}})
		caseID, err = c.ID, scanErr
		if !anyBreach {
			left = &c
		}
	}
	if err == nil {
		tx.KnowRoutable(t.teamID, "CASES", routable)
	}
	if db.IsNotFound(err) {
		return "", 0, nil, caseNotFound(t.ident)
	}
	if err != nil {
		return "", 0, nil, fmt.Errorf("touch case: %w", err)
	}
	if !breached {
		return caseID, seq, left, nil
	}
	return caseID, seq, nil, mitigate(ctx, tx, t.teamID, caseID, oas.KPITypeKPITYPETIMETOUPDATE)
}

// touchStatements are touchWithEvent's UPDATEs for each column caseKey names (the case's id or
// its readable number), built once. Each also says whether the case has a time-to-update breach
// to mitigate, so that the usual case (none) costs no second statement (on PostgreSQL no round
// trip under the row lock).
//   - Each asks whether something could route the event (db.RoutableCondition): the event of a
//     team nothing could route costs no snapshot, and no statement to record it (db.Tx.Emit).
//   - On SQLite a read in the transaction costs no round trip: the row is not read back, and a
//     snapshot that is taken reads the case itself.
//   - On PostgreSQL it returns the row, with whether the case has any breach, so that the
//     event's snapshot need not read it again (a round trip under the row lock).
var touchStatements = func() map[string]struct{ sqlite, postgres string } {
	const breachedToUpdate = `EXISTS (SELECT 1 FROM case_kpi_breaches b
		WHERE b.team_id = cases.team_id AND b.case_id = cases.id AND b.status = $4 AND b.kpi_type = $5)`
	statements := map[string]struct{ sqlite, postgres string }{}
	for _, column := range []string{"id", "number"} {
		touch := `UPDATE cases SET updated_at = $3, last_update_at = $3,
		last_event_seq = last_event_seq + 1 WHERE team_id = $1 AND ` + column + ` = $2 RETURNING `
		statements[column] = struct{ sqlite, postgres string }{
			sqlite: touch + `id, last_event_seq, ` + breachedToUpdate + `, ` + db.RoutableCondition("$1", "'CASES'"),
			postgres: touch + caseColumns + `, last_event_seq, ` + breachedToUpdate + `, ` + db.RoutableCondition("$1", "'CASES'") + `,
			EXISTS (SELECT 1 FROM case_kpi_breaches b WHERE b.team_id = cases.team_id AND b.case_id = cases.id)`,
		}
	}
	return statements
}()

// caseChange is one operation's rule applied to a locked case: it changes c and writes the
// events of the change, and reports whether it changed anything (false for a no-op). Its errors
// are those of the operation (Conflict for a status that refuses it).
type caseChange func(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error)

// change runs fn on the locked case in one transaction. When fn reports a change, the case is
// saved as a human change (touch) and fn has written the events. It answers the case as the
// transaction left it.
func (h *CaseHandler) change(ctx context.Context, ident string, fn caseChange) (*oas.CaseResponse, error) {
	caller, actor := callerActor(ctx)
	var out oas.Case
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		c, err := lockCase(ctx, tx, caller.TeamID, ident)
		if err != nil {
			return err
		}
		changed, err := fn(ctx, tx, &c, actor)
		if err != nil {
			return err
		}
		if changed {
			if err := touch(ctx, tx, &c); err != nil {
				return err
			}
		}
		out, err = buildCase(ctx, tx, c, tx.Now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &oas.CaseResponse{Case: out}, nil
}

// CreateCaseComment appends a comment event to the case (E1), allowed in every status. The text
// is stored trimmed; the actor is the calling key. It counts as an update of the case.
//
// Errors: Invalid for a text that is blank or longer than 10000 characters once trimmed, or an
// attachment that does not set exactly one kind; NotFound when the team has no such case.
func (h *CaseHandler) CreateCaseComment(ctx context.Context, req *oas.CommentRequest, params oas.CreateCaseCommentParams) (*oas.CaseEventResponse, error) {
	caller, actor := callerActor(ctx)
	ident := string(params.CaseID)
	text, invalid := checkComment(req)
	if invalid != nil {
		// A missing case answers NotFound before the body is judged, as in every change of a case.
		if _, err := findCase(ctx, h.db.Read(), h.db.Engine, caller.TeamID, ident, false); err != nil {
			return nil, err
		}
		return nil, invalid
	}
	// Everything but the writes is done before the transaction: on SQLite, transactions run one
	// at a time.
	out := &oas.CaseEventResponse{} // filled in place: the event is a large value
	out.Event.EventData = commentData(text, req.Attachments)
	draft, err := draftEvent(actor, &out.Event.EventData)
	if err != nil {
		return nil, err
	}
	// Nothing in the transaction reads the comment after it is appended: it is written last, on
	// PostgreSQL in the round trip that ends the transaction.
	draft.atEnd = true
	touch := touchWithEvent{engine: h.db.Engine, teamID: caller.TeamID, ident: ident}
	opening, err := touch.opening()
	if err != nil {
		return nil, err
	}
	err = h.db.InTxOpening(ctx, opening, func(tx *db.Tx, touched db.Row) error {
		caseID, seq, left, err := touch.touched(ctx, tx, touched)
		if err != nil {
			return err
		}
		draft.left = left
		out.Event, err = draft.insert(ctx, tx, caller.TeamID, caseID, seq, tx.Now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SyncCaseExternalThread records a request to copy the case's external chat thread into it
// (E2), in any status; it writes no event. syncRegistered is true when this call recorded a new
// request, and false when the case already had one recorded less than 60 seconds ago (calls
// are coalesced; the earlier request stands).
//
// Errors: NotFound when the team has no such case.
func (h *CaseHandler) SyncCaseExternalThread(ctx context.Context, params oas.SyncCaseExternalThreadParams) (*oas.SyncExternalThreadResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	registered := false
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		c, err := lockCase(ctx, tx, caller.TeamID, string(params.CaseID))
		if err != nil {
			return err
		}
		if c.SyncRequestedAt.Valid && micros(tx.Now)-c.SyncRequestedAt.Int64 < syncCoalescence.Microseconds() {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE cases SET sync_requested_at = $3 WHERE team_id = $1 AND id = $2`,
			c.TeamID, c.ID, micros(tx.Now))
		if err != nil {
			return fmt.Errorf("record sync request: %w", err)
		}
		registered = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &oas.SyncExternalThreadResponse{SyncRegistered: registered}, nil
}

// ListCaseEvents returns the case's events, oldest first.
//
// Errors: NotFound when the team has no such case.
func (h *CaseHandler) ListCaseEvents(ctx context.Context, params oas.ListCaseEventsParams) (*oas.CaseEventList, error) {
	caller := auth.PrincipalFrom(ctx)
	c, err := findCase(ctx, h.db.Read(), h.db.Engine, caller.TeamID, string(params.CaseID), false)
	if err != nil {
		return nil, err
	}
	events, err := listEvents(ctx, h.db.Read(), c.TeamID, c.ID)
	if err != nil {
		return nil, err
	}
	return &oas.CaseEventList{Events: events}, nil
}

// GetCaseEvent returns one event of one of the team's cases.
//
// Errors: NotFound when the team has no such event.
func (h *CaseHandler) GetCaseEvent(ctx context.Context, params oas.GetCaseEventParams) (*oas.CaseEventResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	r, err := findEvent(ctx, h.db.Read(), caller.TeamID, string(params.EventID))
	if err != nil {
		return nil, err
	}
	return &oas.CaseEventResponse{Event: r.Event}, nil
}

func notAComment(r eventRow, verb string) error {
	return apierror.Invalidf("event_id: event %s is a %s event, not a comment; only comments can be %s", r.ID, r.Kind, verb)
}

// UpdateCaseComment replaces the text and attachments of a comment event and sets its
// updateTime; the actor stays the comment's author. It counts as an update of the case.
//
// Errors: NotFound when the team has no such event; Invalid when the event is not a comment or
// the body breaks a rule of E1.
func (h *CaseHandler) UpdateCaseComment(ctx context.Context, req *oas.CommentRequest, params oas.UpdateCaseCommentParams) (*oas.CaseEventResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	var event oas.CaseEvent
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		r, err := findEvent(ctx, tx, caller.TeamID, string(params.EventID))
		if err != nil {
			return err
		}
		if r.Kind != "comment" {
			return notAComment(r, "edited")
		}
		c, err := lockCaseByID(ctx, tx, caller.TeamID, r.CaseID)
		if err != nil {
			return err
		}
		text, err := checkComment(req)
		if err != nil {
			return err
		}
		data := r.Event.EventData
		comment := data.Comment.Value
		comment.UnsafeText = oas.NewOptString(text)
		comment.Attachments = commentData(text, req.Attachments).Comment.Value.Attachments
		data.Comment = oas.NewOptCommentEventData(comment)
		dataJSON, err := data.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE case_events SET data = $3, updated_at = $4
			WHERE team_id = $1 AND id = $2`, caller.TeamID, r.ID, string(dataJSON), micros(tx.Now))
		if err != nil {
			return fmt.Errorf("edit comment: %w", err)
		}
		event = r.Event
		event.EventData = data
		event.UpdateTime = oas.NewOptDateTime(tx.Now)
		return touch(ctx, tx, &c)
	})
	if err != nil {
		return nil, err
	}
	return &oas.CaseEventResponse{Event: event}, nil
}

// DeleteCaseComment removes a comment event from its case's history. It counts as an update of
// the case.
//
// Errors: NotFound when the team has no such event; Invalid when the event is not a comment.
func (h *CaseHandler) DeleteCaseComment(ctx context.Context, params oas.DeleteCaseCommentParams) error {
	caller := auth.PrincipalFrom(ctx)
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		r, err := findEvent(ctx, tx, caller.TeamID, string(params.EventID))
		if err != nil {
			return err
		}
		if r.Kind != "comment" {
			return notAComment(r, "deleted")
		}
		c, err := lockCaseByID(ctx, tx, caller.TeamID, r.CaseID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM case_events WHERE team_id = $1 AND id = $2`,
			caller.TeamID, r.ID); err != nil {
			return fmt.Errorf("delete comment: %w", err)
		}
		return touch(ctx, tx, &c)
	})
}

// GetCase returns one case.
//
// Errors: NotFound when the team has no such case.
func (h *CaseHandler) GetCase(ctx context.Context, params oas.GetCaseParams) (*oas.CaseResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	c, err := findCase(ctx, h.db.Read(), h.db.Engine, caller.TeamID, string(params.CaseID), false)
	if err != nil {
		return nil, err
	}
	out, err := buildCase(ctx, h.db.Read(), c, h.db.Now())
	if err != nil {
		return nil, err
	}
	return &oas.CaseResponse{Case: out}, nil
}

// UpdateCase changes the title, the priority override (CASE_PRIORITY_UNSPECIFIED removes it) or
// the resolution reason, each with its event (titleChangedEvent, priorityDetailsChanged,
// resolutionReasonChangedEvent). A field equal to the current value changes nothing.
//
// Errors: Invalid for an empty body or a title that is blank once trimmed; NotFound when the
// team has no such case; Conflict when the case is closed.
func (h *CaseHandler) UpdateCase(ctx context.Context, req *oas.CaseUpdateInput, params oas.UpdateCaseParams) (*oas.CaseResponse, error) {
	if !req.Title.Set && !req.PriorityOverride.Set && !req.ResolutionReason.Set {
		return nil, apierror.Invalidf("body: nothing to change; give title, priorityOverride or resolutionReason")
	}
	title := strings.TrimSpace(req.Title.Value)
	if req.Title.Set {
		if title == "" {
			return nil, apierror.Invalidf("title: must contain a non-whitespace character")
		}
		if utf8.RuneCountInString(title) > maxTitle {
			return nil, apierror.Invalidf("title: must hold at most %d characters", maxTitle)
		}
	}
	reason := strings.TrimSpace(req.ResolutionReason.Value)
	if req.ResolutionReason.Set && reason == "" {
		return nil, apierror.Invalidf("resolutionReason: must contain a non-whitespace character")
	}
	return h.change(ctx, string(params.CaseID), func(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
		if c.Status == oas.CaseStatusCASESTATUSCLOSED {
			return false, conflictf(c, "a closed case cannot change")
		}
		changed := false
		if req.Title.Set && title != c.Title {
			d := oas.CaseEventData{TitleChangedEvent: oas.NewOptCaseEventDataTitleChangedEvent(
				oas.CaseEventDataTitleChangedEvent{From: oas.NewOptString(c.Title), To: oas.NewOptString(title)})}
			if _, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, d, tx.Now); err != nil {
				return false, err
			}
			c.Title, changed = title, true
		}
		if req.PriorityOverride.Set {
			override := req.PriorityOverride.Value
			if override == oas.CasePriorityCASEPRIORITYUNSPECIFIED {
				override = ""
			}
			moved, err := overridePriority(override)(ctx, tx, c, actor)
			if err != nil {
				return false, err
			}
			changed = changed || moved
		}
		if req.ResolutionReason.Set {
			r, _ := c.resolution()
			if old := r.Reason.Value; old != reason {
				r.Reason = oas.NewOptString(reason)
				if err := c.setResolution(r); err != nil {
					return false, err
				}
				if _, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, reasonChanged(old, reason), tx.Now); err != nil {
					return false, err
				}
				changed = true
			}
		}
		return changed, nil
	})
}

// AssignCase makes the user the case's assignee (assigned event). Assigning the current
// assignee changes nothing.
//
// Errors: NotFound when the team has no such case; Conflict when the case is closed; Invalid
// naming assignee.userId when the user is not an active member of the team (the public
// document's 400).
func (h *CaseHandler) AssignCase(ctx context.Context, req *oas.CaseAssignInput, params oas.AssignCaseParams) (*oas.CaseResponse, error) {
	return h.change(ctx, string(params.CaseID), assignTo(string(req.Assignee.UserId)))
}

// assignTo is the assign rule: the assignee must be an active member of the team (any user id
// while the team has no member, see access.CheckAssignee), a closed case refuses it, the current
// assignee is a no-op.
func assignTo(user string) caseChange {
	return func(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
		if err := access.CheckAssignee(ctx, tx, tx.Now, c.TeamID, "assignee.userId", user); err != nil {
			return false, err
		}
		if c.Status == oas.CaseStatusCASESTATUSCLOSED {
			return false, conflictf(c, "a closed case cannot be assigned")
		}
		if c.Assignee == user {
			return false, nil
		}
		d := oas.CaseEventDataAssigned{AssigneeUserId: oas.NewOptString(user)}
		if c.Assignee != "" {
			d.PreviousAssigneeUserId = oas.NewOptString(c.Assignee)
		}
		c.Assignee = user
		_, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor,
			oas.CaseEventData{Assigned: oas.NewOptCaseEventDataAssigned(d)}, tx.Now)
		return err == nil, err
	}
}

// UnassignCase removes the case's assignee (unassigned event). A case without one is answered
// unchanged.
//
// Errors: NotFound when the team has no such case; Conflict when the case is closed.
func (h *CaseHandler) UnassignCase(ctx context.Context, params oas.UnassignCaseParams) (*oas.CaseResponse, error) {
	return h.change(ctx, string(params.CaseID), unassign)
}

// unassign is the unassign rule: a closed case refuses it, a case without assignee is a no-op.
func unassign(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
	if c.Status == oas.CaseStatusCASESTATUSCLOSED {
		return false, conflictf(c, "a closed case cannot be unassigned")
	}
	if c.Assignee == "" {
		return false, nil
	}
	d := oas.CaseEventDataUnassigned{PreviousAssigneeUserId: oas.NewOptString(c.Assignee)}
	c.Assignee = ""
	_, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor,
		oas.CaseEventData{Unassigned: oas.NewOptCaseEventDataUnassigned(d)}, tx.Now)
	return err == nil, err
}

// AcknowledgeCase moves an ACTIVE case to ACKNOWLEDGED, sets acknowledgeTime and marks its
// time-to-acknowledge breaches MITIGATED; an ACKNOWLEDGED case is answered unchanged.
//
// Errors: NotFound when the team has no such case; Conflict when it is resolved or closed.
func (h *CaseHandler) AcknowledgeCase(ctx context.Context, params oas.AcknowledgeCaseParams) (*oas.CaseResponse, error) {
	return h.change(ctx, string(params.CaseID), acknowledge)
}

// acknowledge is the acknowledge rule of the state machine (package comment).
func acknowledge(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
	switch ruleFor(acknowledgeRule, c.Status) {
	case noop:
		return false, nil
	case refuse:
		return false, conflictf(c, "only an active case can be acknowledged")
	}
	old := c.Status
	c.Status, c.AcknowledgedAt = oas.CaseStatusCASESTATUSACKNOWLEDGED, nullMicros(tx.Now)
	if err := mitigate(ctx, tx, c.TeamID, c.ID, oas.KPITypeKPITYPETIMETOACKNOWLEDGE); err != nil {
		return false, err
	}
	_, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, statusChanged(old, c.Status), tx.Now)
	return err == nil, err
}

// UnacknowledgeCase returns an ACKNOWLEDGED case to ACTIVE; an ACTIVE case is answered
// unchanged. Time to acknowledge is measured to the first acknowledgement only.
//
// Errors: NotFound when the team has no such case; Conflict when it is resolved or closed.
func (h *CaseHandler) UnacknowledgeCase(ctx context.Context, params oas.UnacknowledgeCaseParams) (*oas.CaseResponse, error) {
	return h.change(ctx, string(params.CaseID), func(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
		switch ruleFor(unacknowledgeRule, c.Status) {
		case noop:
			return false, nil
		case refuse:
			return false, conflictf(c, "only an acknowledged case can be unacknowledged")
		}
		old := c.Status
		c.Status = oas.CaseStatusCASESTATUSACTIVE
		_, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, statusChanged(old, c.Status), tx.Now)
		return err == nil, err
	})
}

// ResolveCase moves an ACTIVE or ACKNOWLEDGED case to RESOLVED with resolutionDetails (reason,
// resolveTime, resolvedBy the caller) and marks its time-to-resolve and time-to-update breaches
// MITIGATED. A reason that differs from the case's current one also writes
// resolutionReasonChangedEvent, on a RESOLVED case too; otherwise a RESOLVED case is answered
// unchanged.
//
// Errors: Invalid for a blank reason; NotFound when the team has no such case; Conflict when
// the case is closed.
func (h *CaseHandler) ResolveCase(ctx context.Context, req oas.OptCaseResolveInput, params oas.ResolveCaseParams) (*oas.CaseResponse, error) {
	reason, hasReason, err := checkReason(req.Value.Reason)
	if err != nil {
		return nil, err
	}
	return h.change(ctx, string(params.CaseID), resolveWith(reason, hasReason))
}

// resolveWith is the resolve rule of the state machine (package comment), with a reason when
// hasReason.
func resolveWith(reason string, hasReason bool) caseChange {
	return func(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
		rule := ruleFor(resolveRule, c.Status)
		if rule == refuse {
			return false, conflictf(c, "a closed case cannot be resolved")
		}
		changed := false
		if rule == move {
			old := c.Status
			if err := resolveRow(c, actor, tx.Now); err != nil {
				return false, err
			}
			err := mitigate(ctx, tx, c.TeamID, c.ID, oas.KPITypeKPITYPETIMETORESOLVE, oas.KPITypeKPITYPETIMETOUPDATE)
			if err != nil {
				return false, err
			}
			if _, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, statusChanged(old, c.Status), tx.Now); err != nil {
				return false, err
			}
			changed = true
		}
		if hasReason {
			r, _ := c.resolution()
			if old := r.Reason.Value; old != reason {
				r.Reason = oas.NewOptString(reason)
				if err := c.setResolution(r); err != nil {
					return false, err
				}
				if _, err := appendEvent(ctx, tx, c.TeamID, c.ID, actor, reasonChanged(old, reason), tx.Now); err != nil {
					return false, err
				}
				changed = true
			}
		}
		return changed, nil
	}
}

// checkReason returns a resolve reason trimmed of white space, and whether one was given.
//
// Errors: Invalid naming `reason` when it is blank.
func checkReason(r oas.OptString) (string, bool, error) {
	reason := strings.TrimSpace(r.Value)
	if r.Set && reason == "" {
		return "", false, apierror.Invalidf("reason: must contain a non-whitespace character")
	}
	return reason, r.Set, nil
}

// CloseCase moves a case in any status to CLOSED for good and marks its time-to-resolve and
// time-to-update breaches MITIGATED; a CLOSED case is answered unchanged.
//
// Errors: NotFound when the team has no such case.
func (h *CaseHandler) CloseCase(ctx context.Context, params oas.CloseCaseParams) (*oas.CaseResponse, error) {
	return h.change(ctx, string(params.CaseID), closeCase)
}

// closeCase is the close rule of the state machine (package comment).
func closeCase(ctx context.Context, tx *db.Tx, c *caseRow, actor oas.EventActor) (bool, error) {
	if ruleFor(closeRule, c.Status) != move {
		return false, nil
	}
	old := c.Status
	c.Status, c.ClosedAt = oas.CaseStatusCASESTATUSCLOSED, nullMicros(tx.Now)
	err := mitigate(ctx, tx, c.TeamID, c.ID, oas.KPITypeKPITYPETIMETORESOLVE, oas.KPITypeKPITYPETIMETOUPDATE)
	if err != nil {
		return false, err
	}
	_, err = appendEvent(ctx, tx, c.TeamID, c.ID, actor, statusChanged(old, c.Status), tx.Now)
	return err == nil, err
}
