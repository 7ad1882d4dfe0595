package delivery

import (
	"maps"
	"strings"
)

// A test notification (Delivery.Test: the notification-center testing operations send them) says
// so everywhere a person or a program may look, so that an on-call channel never takes it for an
// outage: its title or subject starts with TestPrefix, its text carries TestNotice, and its HTTP
// request or email carries the header TestHeader: true. Notifications of events never do.
const (
	TestHeader = "X-Mgmtapi-Test"
	TestPrefix = "[TEST] "
	TestNotice = "This is a test notification sent to check the connector; it reports no real alert or case."
)

// markTest rewrites d's rendered fields (Delivery.Fields, per connector type) as a test's:
//   - GENERIC_HTTPS: a string title gains TestPrefix, and the body gains "test": true (a body
//     of its own that already has "test" keeps it);
//   - SLACK: text starts with TestPrefix and ends with TestNotice;
//   - PAGERDUTY: summary starts with TestPrefix; custom_details (an object, made when absent)
//     gains "test": TestNotice;
//   - MICROSOFT_TEAMS: title starts with TestPrefix, text with TestNotice;
//   - EMAIL: subject starts with TestPrefix, text with TestNotice;
//   - SERVICE_NOW: short_description starts with TestPrefix, description with TestNotice;
//   - INCIDENT_IO: title starts with TestPrefix, description with TestNotice.
//
// The fields are copied, never changed in place.
func markTest(d *Delivery) {
	f := maps.Clone(d.Fields)
	if f == nil {
		f = map[string]any{}
	}
	prefix := func(key string) {
		s, _ := f[key].(string)
		if !strings.HasPrefix(s, TestPrefix) {
			f[key] = TestPrefix + s
		}
	}
	withNotice := func(key string, first bool) {
		s, _ := f[key].(string)
		switch {
		case s == "":
			f[key] = TestNotice
		case first:
			f[key] = TestNotice + "\n\n" + s
		default:
			f[key] = s + "\n\n" + TestNotice
		}
	}
	switch d.ConnectorType {
	case GenericHTTPS:
		if _, ok := f["title"].(string); ok {
			prefix("title")
		}
		if _, ok := f["test"]; !ok {
			f["test"] = true
		}
	case Slack:
		prefix("text")
		withNotice("text", false)
	case PagerDuty:
		prefix("summary")
		details, ok := f["custom_details"].(map[string]any)
		if !ok {
			details = map[string]any{}
			if v, set := f["custom_details"]; set && v != nil {
				details["details"] = v
			}
		}
		details = maps.Clone(details)
		details["test"] = TestNotice
		f["custom_details"] = details
	case MicrosoftTeams:
		prefix("title")
		withNotice("text", true)
	case Email:
		prefix("subject")
		withNotice("text", true)
	case ServiceNow:
		prefix("short_description")
		withNotice("description", true)
	case IncidentIO:
		prefix("title")
		withNotice("description", true)
	}
	d.Fields = f
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
