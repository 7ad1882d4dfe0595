package notifiers

import (
	"context"
	"net/http"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// pagerDuty is PAGERDUTY: an Events API v2 event POSTed to the enqueue endpoint (the webhook's
// url, else connectortypes.DefaultPagerDutyURL): routing_key is the serviceKey setting, event_action trigger (a
// test too) or resolve, dedup_key the message's key, and for a trigger the payload (summary,
// source, severity, timestamp, custom_details) and the link.
type pagerDuty struct{}

func (pagerDuty) Check(t Target) error {
	if t.Settings["serviceKey"] == "" {
		return fieldErr("pagerDuty.serviceKey", "required: the integration key of a PagerDuty service's Events API v2 integration")
	}
	return nil
}

func (pagerDuty) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	u := t.URL
	if u == "" {
		u = connectortypes.DefaultPagerDutyURL
	}
	ev := map[string]any{"routing_key": t.Settings["serviceKey"], "event_action": "trigger"}
	if m.Key != "" {
		ev["dedup_key"] = cut(m.Key, 255)
	}
	if m.Status == Resolved {
		ev["event_action"] = "resolve"
		return postJSON(ctx, u, ev)
	}
	payload := map[string]any{"summary": cut(m.Title, 1024), "source": "mgmtapi", "severity": m.severity()}
	if !m.Time.IsZero() {
		payload["timestamp"] = m.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	details := map[string]any{}
	for k, v := range m.Fields {
		details[k] = v
	}
	if m.Text != "" {
		details["text"] = m.Text
	}
	payload["custom_details"] = details
	ev["payload"] = payload
	if m.Link != "" {
		ev["links"] = []any{map[string]any{"href": m.Link, "text": "Open"}}
	}
	return postJSON(ctx, u, ev)
}

func (pagerDuty) Retry(status int) bool { return retryServer(status) }
