package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// newRequest builds the HTTP request that sends r: a POST (or a generic connector's PUT; the
// method is sent in upper case whatever the case stored) of its connector type's body to its URL, with a generic connector's additional headers and the
// Idempotency-Key header (every type: receivers that ignore it lose nothing).
func newRequest(ctx context.Context, r record) (*http.Request, error) {
	body, err := buildBody(r)
	if err != nil {
		return nil, err
	}
	method := strings.ToUpper(r.Method) // clients write post as often as POST
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(body))
	if err != nil {
		// url.Error quotes the URL, a secret
		return nil, errors.New("the connector's URL is not a valid URL")
	}
	for name, value := range r.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mgmtapi-notifications/1")
	req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	return req, nil
}

// buildBody is the JSON body of r in its connector type's public format.
func buildBody(r record) ([]byte, error) {
	var fields map[string]any
	if len(r.Payload) > 0 {
		if err := json.Unmarshal(r.Payload, &fields); err != nil {
			return nil, fmt.Errorf("delivery fields: %w", err)
		}
	}
	if fields == nil {
		fields = map[string]any{}
	}
	switch r.ConnectorType {
	case GenericHTTPS:
		return json.Marshal(fields)
	case Slack:
		if text(fields, "text") == "" {
			return nil, errors.New("delivery fields.text: required for a Slack message (its notification text)")
		}
		return json.Marshal(slackMessage(fields))
	case PagerDuty:
		ev, err := pagerDutyEvent(r, fields)
		if err != nil {
			return nil, err
		}
		return json.Marshal(ev)
	case MicrosoftTeams:
		card, err := teamsMessage(fields)
		if err != nil {
			return nil, err
		}
		return json.Marshal(card)
	case ServiceNow:
		inc, err := serviceNowIncident(r, fields)
		if err != nil {
			return nil, err
		}
		return json.Marshal(inc)
	case IncidentIO:
		ev, err := incidentIOEvent(r, fields)
		if err != nil {
			return nil, err
		}
		return json.Marshal(ev)
	}
	return nil, fmt.Errorf("delivery connectorType: %q is not delivered by mgmtapi", r.ConnectorType)
}

// text reads a string field; other values are not text.
func text(fields map[string]any, key string) string {
	s, _ := fields[key].(string)
	return s
}

// slackMessage is an incoming-webhook message: text, the notification's fallback and what
// clients without blocks show, the channel when the connector names one, and blocks when
// rendered (Block Kit, passed on as written).
func slackMessage(fields map[string]any) map[string]any {
	msg := map[string]any{"text": text(fields, "text")}
	if ch := text(fields, "channel"); ch != "" { // the connector's channel (or fallbackChannel)
		msg["channel"] = ch
	}
	if blocks, ok := fields["blocks"]; ok && blocks != nil {
		msg["blocks"] = blocks
	}
	return msg
}

// pagerDutySeverities are the Events API v2 severities.
var pagerDutySeverities = map[string]bool{"critical": true, "error": true, "warning": true, "info": true}

// pagerDutyEvent is an Events API v2 event: a trigger carries the payload, an acknowledge or a
// resolve only the routing and dedup keys.
func pagerDutyEvent(r record, fields map[string]any) (map[string]any, error) {
	ev := map[string]any{"routing_key": r.RoutingKey, "dedup_key": r.DedupKey}
	switch r.EventKind {
	case Acknowledged:
		ev["event_action"] = "acknowledge"
		return ev, nil
	case Resolved:
		ev["event_action"] = "resolve"
		return ev, nil
	}
	ev["event_action"] = "trigger"
	summary := text(fields, "summary")
	if summary == "" {
		return nil, errors.New("delivery fields.summary: required for a PagerDuty trigger")
	}
	if len(summary) > 1024 { // the Events API's bound
		summary = cutRunes(summary, 1024)
	}
	source := text(fields, "source")
	if source == "" {
		source = "mgmtapi"
	}
	severity := text(fields, "severity")
	if severity == "" {
		severity = "error"
	}
	if !pagerDutySeverities[severity] {
		return nil, fmt.Errorf("delivery fields.severity: must be critical, error, warning or info, not %q", severity)
	}
	payload := map[string]any{"summary": summary, "source": source, "severity": severity}
	for _, k := range []string{"component", "group", "class", "timestamp"} {
		if v := text(fields, k); v != "" {
			payload[k] = v
		}
	}
	if details, ok := fields["custom_details"]; ok && details != nil {
		payload["custom_details"] = details
	}
	ev["payload"] = payload
	return ev, nil
}

// teamsMessage is a Microsoft Teams webhook message of a MICROSOFT_TEAMS connector's fields
// (title, text, facts: an object of strings): TeamsCard.
func teamsMessage(fields map[string]any) (map[string]any, error) {
	title, body := text(fields, "title"), text(fields, "text")
	if title == "" && body == "" {
		return nil, errors.New("delivery fields.title or fields.text: one is required for a Microsoft Teams card")
	}
	var facts [][2]string
	if m, ok := fields["facts"].(map[string]any); ok {
		for name, v := range m {
			facts = append(facts, [2]string{name, fmt.Sprint(v)})
		}
		sort.Slice(facts, func(i, j int) bool { return facts[i][0] < facts[j][0] })
	}
	return TeamsCard(title, body, facts, ""), nil
}

// TeamsCard is the message envelope that Teams incoming webhooks and Workflows accept, carrying
// one Adaptive Card: the title (bold, when not empty), the text (when not empty), the facts as a
// fact set (in the order given, when any) and an "Open" action to link (when not empty). Both
// MICROSOFT_TEAMS connectors and MS_TEAMS_WORKFLOW outgoing webhooks (internal/notifiers) send
// it.
func TeamsCard(title, text string, facts [][2]string, link string) map[string]any {
	var blocks []any
	if title != "" {
		blocks = append(blocks, map[string]any{"type": "TextBlock", "text": title, "weight": "Bolder", "size": "Medium", "wrap": true})
	}
	if text != "" {
		blocks = append(blocks, map[string]any{"type": "TextBlock", "text": text, "wrap": true})
	}
	if len(facts) > 0 {
		list := make([]any, 0, len(facts))
		for _, f := range facts {
			list = append(list, map[string]any{"title": f[0], "value": f[1]})
		}
		blocks = append(blocks, map[string]any{"type": "FactSet", "facts": list})
	}
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body":    blocks,
	}
	if link != "" {
		card["actions"] = []any{map[string]any{"type": "Action.OpenUrl", "title": "Open", "url": link}}
	}
	return map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content":     card,
		}},
	}
}

// serviceNowIncident is the body of a Table API insert into the incident table: its
// short_description (required, cut to 160 bytes, the column's size), description,
// impact and urgency (1, 2 or 3, when rendered), and the record's dedup key as correlation_id
// (correlation_display "mgmtapi"), which an instance's rules may use to find the incident again.
func serviceNowIncident(r record, fields map[string]any) (map[string]any, error) {
	short := strings.TrimSpace(text(fields, "short_description"))
	if short == "" {
		return nil, errors.New("delivery fields.short_description: required for a ServiceNow incident")
	}
	inc := map[string]any{"short_description": cutRunes(short, 160), "correlation_id": r.DedupKey, "correlation_display": "mgmtapi"}
	if d := text(fields, "description"); d != "" {
		inc["description"] = d
	}
	for _, k := range []string{"impact", "urgency"} {
		switch v := strings.TrimSpace(text(fields, k)); v {
		case "":
		case "1", "2", "3":
			inc[k] = v
		default:
			return nil, fmt.Errorf("delivery fields.%s: must be 1, 2 or 3, not %q", k, v)
		}
	}
	return inc, nil
}

// incidentIOEvent is an event of an incident.io HTTP alert source: title (required), description,
// status (resolved for a resolution, else firing: a firing event under the same
// deduplication_key updates the alert it opened), the record's dedup key as deduplication_key, and
// metadata (the rendered object, with the entity's type and id and the event's kind added).
func incidentIOEvent(r record, fields map[string]any) (map[string]any, error) {
	title := strings.TrimSpace(text(fields, "title"))
	if title == "" {
		return nil, errors.New("delivery fields.title: required for an incident.io alert event")
	}
	status := "firing"
	if r.EventKind == Resolved {
		status = "resolved"
	}
	meta := map[string]any{}
	if m, ok := fields["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["entity_type"], meta["entity_id"], meta["event"] = r.EntityType, r.EntityID, string(r.EventKind)
	ev := map[string]any{"title": title, "status": status, "deduplication_key": r.DedupKey, "metadata": meta}
	if d := text(fields, "description"); d != "" {
		ev["description"] = d
	}
	return ev, nil
}

// cutRunes keeps at most n bytes of s, whole runes.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date; ok is false when absent
// or unreadable.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var secs int64
	if _, err := fmt.Sscanf(v, "%d", &secs); err == nil && fmt.Sprint(secs) == v {
		if secs < 0 {
			return 0, false
		}
		secs = min(secs, 1<<20) // longer than any retry time; no overflow
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}
