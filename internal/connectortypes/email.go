package connectortypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// emailKind sends email through the server's SMTP server (the delivery worker's, --smtp-url).
var emailKind = Kind{
	Type: oas.ConnectorTypeEMAIL, EntityTypes: allEntities, Sender: email{},
	Record: RecordShape{NoURL: true},
	Config: []Field{
		{Name: "emailAddresses", Kind: oas.ConnectorFieldTypeARRAYOFSTRINGS, Required: true, Rule: CheckRecipients,
			Description: "The addresses the messages are sent to, a JSON array of 1 to 100 strings in a string (\"[\\\"ops@example.com\\\"]\"; Ops <ops@example.com> also works); a template renders such an array. Messages go through the server's SMTP server (--smtp-url)."},
	},
	Aliases: map[string]string{"recipients": "emailAddresses"},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeEMAIL,
		Field{Name: "customSubject", Kind: oas.ConnectorFieldTypeSTRING, Description: "The message's subject; the title when not set."},
		Field{Name: "customContent", Kind: oas.ConnectorFieldTypeSTRING, Description: "The message's content, sent as the plain-text body as written (no HTML part is built); the description when not set."},
	)},
}

type email struct{}

// Compose: the addresses (emailAddresses, or the connector's template for the entity type when it
// has one, rendered to a JSON array of addresses) as to, the customSubject (the title when not
// set) as the subject and the customContent (the description when not set) as the text.
func (email) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	addresses, err := c.rawValue("emailAddresses", entity)
	if err != nil {
		return Outgoing{}, err
	}
	to, err := Recipients(addresses)
	if err != nil {
		return Outgoing{}, fmt.Errorf("connector field emailAddresses: %w", err)
	}
	subject, text := m.Fields["customSubject"], m.Fields["customContent"]
	if strings.TrimSpace(subject) == "" {
		subject = m.Fields["title"]
	}
	if strings.TrimSpace(text) == "" {
		text = m.Fields["description"]
	}
	return Outgoing{Fields: map[string]any{"to": to, "subject": subject, "text": text}}, nil
}

// MarkTest: the subject starts with TestPrefix, the text with TestNotice.
func (email) MarkTest(f map[string]any) {
	prefixTest(f, "subject")
	noticeTest(f, "text", true)
}

// CheckRecipients is the rule of an EMAIL connector's emailAddresses, stored or rendered from a
// template: a JSON array of strings that ParseRecipients accepts (the rule the delivery checks
// again when it is enqueued).
func CheckRecipients(v string) error {
	_, err := Recipients(v)
	return err
}

// Recipients reads an EMAIL connector's emailAddresses value (see CheckRecipients) into its bare
// addresses, each once. The error says which form is wanted, with an example.
func Recipients(v string) ([]string, error) {
	var list []string
	if err := json.Unmarshal([]byte(v), &list); err != nil || list == nil {
		return nil, fmt.Errorf(`must be a JSON array of addresses written as a string, e.g. "[\"ops@example.com\"]"`)
	}
	return ParseRecipients(list)
}

// MaxRecipients is the most addresses one EMAIL delivery is sent to.
const MaxRecipients = 100

// ParseRecipients checks an EMAIL connector's recipients: 1 to MaxRecipients addresses, each one
// net/mail reads ("ops@example.com" or "Ops <ops@example.com>"), none holding a line break. It
// returns the bare addresses (the display names dropped), each once, in their first order. The
// error names the rule and the address (recipients are not secrets).
func ParseRecipients(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, errors.New("must hold at least one address")
	}
	if len(list) > MaxRecipients {
		return nil, fmt.Errorf("must hold at most %d addresses, not %d", MaxRecipients, len(list))
	}
	out := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, s := range list {
		if strings.ContainsAny(s, "\r\n") {
			return nil, fmt.Errorf("must hold email addresses: [%d] holds a line break", i)
		}
		a, err := mail.ParseAddress(s)
		if err != nil {
			return nil, fmt.Errorf("must hold email addresses: [%d] %q is not one (%v)", i, CutBytes(s, 256), err)
		}
		if !seen[strings.ToLower(a.Address)] {
			seen[strings.ToLower(a.Address)] = true
			out = append(out, a.Address)
		}
	}
	return out, nil
}
