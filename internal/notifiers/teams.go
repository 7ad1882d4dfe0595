package notifiers

import (
	"context"
	"net/http"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// teamsWorkflow is MS_TEAMS_WORKFLOW: a POST to a Teams workflow's URL ("When a Teams webhook
// request is received") of a message envelope carrying one Adaptive Card: the title, the text and
// the fields as a fact set, and a link when there is one.
type teamsWorkflow struct{}

func (teamsWorkflow) Check(Target) error { return nil }

func (teamsWorkflow) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	return postJSON(ctx, t.URL, connectortypes.TeamsCard(cut(m.Title, 500), cut(m.Text, 10000), m.facts(), m.Link))
}

func (teamsWorkflow) Retry(status int) bool { return retryServer(status) }

// teamsConnector is MICROSOFT_TEAMS, the Office 365 connector webhooks that Teams workflows
// replace: a POST of a MessageCard (summary, title, text, theme colour, the fields as facts).
type teamsConnector struct{}

func (teamsConnector) Check(Target) error { return nil }

func (teamsConnector) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	facts := []any{}
	for _, f := range m.facts() {
		facts = append(facts, map[string]any{"name": f[0], "value": f[1]})
	}
	card := map[string]any{
		"@type":      "MessageCard",
		"@context":   "https://schema.org/extensions",
		"summary":    cut(m.Title, 250),
		"title":      cut(m.Title, 250),
		"text":       cut(m.Text, 10000),
		"themeColor": strings.TrimPrefix(color(m), "#"),
		"sections":   []any{map[string]any{"facts": facts}},
	}
	if m.Link != "" {
		card["potentialAction"] = []any{map[string]any{"@type": "OpenUri", "name": "Open",
			"targets": []any{map[string]any{"os": "default", "uri": m.Link}}}}
	}
	return postJSON(ctx, t.URL, card)
}

func (teamsConnector) Retry(status int) bool { return retryServer(status) }
