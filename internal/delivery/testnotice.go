package delivery

import (
	"maps"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// A test notification (Delivery.Test: the notification-center testing operations send them) says
// so everywhere a person or a program may look, so that an on-call channel never takes it for an
// outage: its title or subject starts with TestPrefix, its text carries TestNotice (each type's
// MarkTest, internal/connectortypes), and its HTTP request or email carries the header
// TestHeader: true. Notifications of events never do.
const (
	TestHeader = "X-Mgmtapi-Test"
	TestPrefix = connectortypes.TestPrefix
	TestNotice = connectortypes.TestNotice
)

// markTest rewrites d's fields as a test's, as its format's type says (a copy: the fields are
// never changed in place).
func markTest(d *Delivery) {
	kind, _ := connectortypes.Lookup(oas.ConnectorType(d.ConnectorType))
	d.Fields = kind.MarkTest(d.Fields)
}

// testHeaders are h with TestHeader set (a new map).
func testHeaders(h map[string]string) map[string]string {
	out := maps.Clone(h)
	if out == nil {
		out = map[string]string{}
	}
	out[TestHeader] = "true"
	return out
}
