package notifiers

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// emailGroup is EMAIL_GROUP: one plain-text message to the group's addresses (1 to
// connectortypes.MaxRecipients) through the operator's SMTP server: the subject is the title, the body
// the text, the fields one a line, and the link.
type emailGroup struct{}

func (emailGroup) Check(t Target) error {
	if len(t.Emails) == 0 {
		return fieldErr("emailGroup.emailAddresses", "at least one address is required")
	}
	for i, a := range t.Emails {
		if _, err := connectortypes.ParseRecipients([]string{a}); err != nil {
			return fieldErr("emailGroup.emailAddresses["+itoa(i)+"]", "%s", strings.TrimPrefix(err.Error(), "recipients: "))
		}
	}
	if _, err := connectortypes.ParseRecipients(t.Emails); err != nil {
		return fieldErr("emailGroup.emailAddresses", "%s", err)
	}
	return nil
}

func (emailGroup) Mail(t Target, m Message) (to []string, subject, text string) {
	var b strings.Builder
	b.WriteString(m.Text)
	if facts := m.facts(); len(facts) > 0 {
		b.WriteString("\n\n")
		for _, f := range facts {
			b.WriteString(f[0] + ": " + f[1] + "\n")
		}
	}
	if m.Link != "" {
		b.WriteString("\n" + m.Link + "\n")
	}
	return t.Emails, m.Title, b.String()
}

func (emailGroup) Request(context.Context, Target, Message) (*http.Request, error) {
	return nil, errors.New("email groups are sent through the SMTP server")
}

func (emailGroup) Retry(int) bool { return false }
