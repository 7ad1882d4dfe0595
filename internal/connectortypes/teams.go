package connectortypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// microsoftTeamsKind posts Adaptive Cards through the team's MS_TEAMS_WORKFLOW or MICROSOFT_TEAMS
// outgoing webhook, or the deprecated webhookUrl of connectors stored before the public fields.
var microsoftTeamsKind = Kind{
	Type: oas.ConnectorTypeMICROSOFTTEAMS, EntityTypes: allEntities, Sender: microsoftTeams{},
	Config: []Field{
		integrationID([]string{"MS_TEAMS_WORKFLOW", "MICROSOFT_TEAMS"}, "", "webhookUrl"),
		{Name: "teamId", Kind: oas.ConnectorFieldTypeSTRING, Description: "The Microsoft Teams team the cards are posted in."},
		{Name: "channelId", Kind: oas.ConnectorFieldTypeSTRING, Description: "The channel the cards are posted in, e.g. 19:…@thread.tacv2."},
		{Name: "webhookUrl", Kind: oas.ConnectorFieldTypeURL, Deprecated: true, Sensitive: true,
			Description: "A Teams webhook URL (it carries the webhook's secret, so it is answered masked) the cards are posted to when the connector names no integration." + deprecated},
	},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeMICROSOFTTEAMS)},
}

type microsoftTeams struct{ retryOverloaded }

// Compose: the card's title and text are the rendered title and description.
func (microsoftTeams) Compose(c Config, m Message, _ map[string]any) (Outgoing, error) {
	out := Outgoing{URL: integrationURL(c), Fields: map[string]any{"title": m.Fields["title"], "text": m.Fields["description"]}}
	if m.Fields["title"] == "" && m.Fields["description"] == "" {
		out.Fields["title"] = "(empty notification)"
	}
	return out, nil
}

// MarkTest: the title starts with TestPrefix, the text with TestNotice.
func (microsoftTeams) MarkTest(f map[string]any) {
	prefixTest(f, "title")
	noticeTest(f, "text", true)
}

// Body is a card of the delivery's fields (title, text, facts: an object of strings): TeamsCard.
func (microsoftTeams) Body(r Record) ([]byte, error) {
	title, body := text(r.Fields, "title"), text(r.Fields, "text")
	if title == "" && body == "" {
		return nil, errors.New("delivery fields.title or fields.text: one is required for a Microsoft Teams card")
	}
	var facts [][2]string
	if m, ok := r.Fields["facts"].(map[string]any); ok {
		for name, v := range m {
			facts = append(facts, [2]string{name, fmt.Sprint(v)})
		}
		sort.Slice(facts, func(i, j int) bool { return facts[i][0] < facts[j][0] })
	}
	return json.Marshal(TeamsCard(title, body, facts, ""))
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
