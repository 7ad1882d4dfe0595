package notifiers

import (
	"context"
	"net/http"
)

// slack is SLACK: a POST of an incoming-webhook message to the webhook's URL: text (the title,
// which is also the notification's fallback) and one attachment coloured by status and severity
// with the text and the fields. Settings: none that change the request (digests and attachments
// are stored as sent).
type slack struct{}

func (slack) Check(Target) error { return nil }

func (slack) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	fields := []map[string]any{}
	for _, f := range m.facts() {
		fields = append(fields, map[string]any{"title": f[0], "value": f[1], "short": len(f[1]) < 40})
	}
	att := map[string]any{"color": color(m), "title": cut(m.Title, 250), "text": cut(m.Text, 3000),
		"fields": fields, "fallback": cut(m.Title, 250)}
	if m.Link != "" {
		att["title_link"] = m.Link
	}
	if !m.Time.IsZero() {
		att["ts"] = m.Time.Unix()
	}
	return postJSON(ctx, t.URL, map[string]any{"text": cut(m.Title, 3000), "attachments": []any{att}})
}

func (slack) Retry(status int) bool { return retryServer(status) }

// color is a hex colour for m: green when resolved, grey for a test, else by severity.
func color(m Message) string {
	switch {
	case m.Status == Resolved:
		return "#2EB67D"
	case m.Status == Test:
		return "#9E9E9E"
	}
	switch m.severity() {
	case "critical":
		return "#D00000"
	case "error":
		return "#E8590C"
	case "warning":
		return "#F2C744"
	}
	return "#439FE0"
}
