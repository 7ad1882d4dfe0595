package cases

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	maxCommentText  = 10000
	maxAttachments  = 100
	syncCoalescence = 60 * time.Second
)

// checkComment validates a comment body and returns its text trimmed of leading and trailing
// white space, as it is stored.
//
// Errors: Invalid naming `text` or `attachments[i]`.
func checkComment(req *oas.CommentRequest) (string, error) {
	text := strings.TrimSpace(req.Text)
	if text == "" {
		return "", apierror.Invalidf("text: must contain a non-whitespace character")
	}
	if n := utf8.RuneCountInString(text); n > maxCommentText {
		return "", apierror.Invalidf("text: must hold at most %d characters once trimmed, has %d", maxCommentText, n)
	}
	if n := len(req.Attachments); n > maxAttachments {
		return "", apierror.Invalidf("attachments: must hold at most %d items, has %d", maxAttachments, n)
	}
	for i, a := range req.Attachments {
		set := 0
		for _, ok := range []bool{a.Log.Set, a.CustomWidget.Set, a.File.Set} {
			if ok {
				set++
			}
		}
		if set != 1 {
			return "", apierror.Invalidf("attachments[%d]: must set exactly one of log, customWidget, file", i)
		}
	}
	return text, nil
}

func commentData(text string, attachments []oas.CommentAttachment) oas.CaseEventData {
	if attachments == nil {
		attachments = []oas.CommentAttachment{}
	}
	return oas.CaseEventData{Comment: oas.NewOptCommentEventData(oas.CommentEventData{
		UnsafeText: oas.NewOptString(text), Attachments: attachments,
	})}
}

func statusChanged(from, to oas.CaseStatus) oas.CaseEventData {
	return oas.CaseEventData{StatusChanged: oas.NewOptCaseEventDataStatusChanged(oas.CaseEventDataStatusChanged{
		OldStatus: oas.NewOptCaseStatus(from), NewStatus: oas.NewOptCaseStatus(to),
	})}
}

func reasonChanged(from, to string) oas.CaseEventData {
	d := oas.CaseEventDataResolutionReasonChangedEvent{To: oas.NewOptString(to)}
	if from != "" {
		d.From = oas.NewOptString(from)
	}
	return oas.CaseEventData{ResolutionReasonChangedEvent: oas.NewOptCaseEventDataResolutionReasonChangedEvent(d)}
}

// statusWord is a status as messages name it ("active", "resolved").
func statusWord(s oas.CaseStatus) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(string(s), "CASE_STATUS_"), "_", " "))
}

func conflictf(c *caseRow, rule string) error {
	return apierror.Conflictf("case %s is %s; %s", c.ReadableID(), statusWord(c.Status), rule)
}

// transition is what a status operation does to a case in a given status.
type transition int

const (
	move   transition = iota // change the status
	noop                     // answer the case unchanged, write nothing
	refuse                   // 409
)

// Each operation's row of the state machine; the package comment shows the same table.
var (
	acknowledgeRule = map[oas.CaseStatus]transition{
		oas.CaseStatusCASESTATUSACTIVE: move, oas.CaseStatusCASESTATUSACKNOWLEDGED: noop,
		oas.CaseStatusCASESTATUSRESOLVED: refuse, oas.CaseStatusCASESTATUSCLOSED: refuse,
	}
	unacknowledgeRule = map[oas.CaseStatus]transition{
		oas.CaseStatusCASESTATUSACTIVE: noop, oas.CaseStatusCASESTATUSACKNOWLEDGED: move,
		oas.CaseStatusCASESTATUSRESOLVED: refuse, oas.CaseStatusCASESTATUSCLOSED: refuse,
	}
	resolveRule = map[oas.CaseStatus]transition{
		oas.CaseStatusCASESTATUSACTIVE: move, oas.CaseStatusCASESTATUSACKNOWLEDGED: move,
		oas.CaseStatusCASESTATUSRESOLVED: noop, oas.CaseStatusCASESTATUSCLOSED: refuse,
	}
	closeRule = map[oas.CaseStatus]transition{
		oas.CaseStatusCASESTATUSACTIVE: move, oas.CaseStatusCASESTATUSACKNOWLEDGED: move,
		oas.CaseStatusCASESTATUSRESOLVED: move, oas.CaseStatusCASESTATUSCLOSED: noop,
	}
)

// ruleFor looks up a status in an operation's row; a status the table does not know (never
// written by mgmtapi) is refused.
func ruleFor(row map[oas.CaseStatus]transition, s oas.CaseStatus) transition {
	if t, ok := row[s]; ok {
		return t
	}
	return refuse
}

// resolveRow moves a case to RESOLVED, keeping a reason it already had.
func resolveRow(c *caseRow, actor oas.EventActor, now time.Time) error {
	r, _ := c.resolution()
	r.ResolveTime = oas.NewOptDateTime(now)
	r.ResolvedBy = oas.NewOptCaseResolver(resolverOf(actor))
	if err := c.setResolution(r); err != nil {
		return err
	}
	c.Status = oas.CaseStatusCASESTATUSRESOLVED
	c.ResolvedAt = nullMicros(now)
	return nil
}
