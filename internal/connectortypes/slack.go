package connectortypes

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// slackKind posts Slack messages through the team's SLACK outgoing webhook (an incoming-webhook
// URL), or the deprecated webhookUrl of connectors stored before the public fields.
var slackKind = Kind{
	Type: oas.ConnectorTypeSLACK, EntityTypes: allEntities, Sender: slack{},
	Config: []Field{
		integrationID([]string{"SLACK"}, "", "webhookUrl"),
		{Name: "channel", Kind: oas.ConnectorFieldTypeSTRING, Description: "The channel messages are posted to, e.g. alerts or #alerts."},
		{Name: "fallbackChannel", Kind: oas.ConnectorFieldTypeSTRING, Description: "The channel used when channel's template renders none."},
		{Name: "webhookUrl", Kind: oas.ConnectorFieldTypeURL, Deprecated: true, Sensitive: true,
			Description: "A Slack incoming-webhook URL (it carries the webhook's secret, so it is answered masked) messages are posted to when the connector names no integration." + deprecated},
		{Name: "username", Kind: oas.ConnectorFieldTypeSTRING, Deprecated: true, Description: "A sender name." + deprecated},
	},
	Payloads: []Payload{
		defaultPayload(oas.ConnectorTypeSLACK,
			Field{Name: "footer", Kind: oas.ConnectorFieldTypeSTRING, Description: "A small line under the message."},
		),
		{Name: "slack_raw", Fields: []Field{
			{Name: "payload", Kind: oas.ConnectorFieldTypeJSONOBJECT, Required: true,
				Description: "The whole Slack message (blocks, attachments, text) as a JSON object."},
		}},
	},
}

type slack struct{ retryOverloaded }

// Compose: the raw payload is the whole message, as rendered; the default payload is the title in
// bold over the description, with the footer under them. The channel is the connector's (its
// template for the entity type when it has one), else its fallbackChannel; a raw message's own
// channel wins.
func (slack) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	out := Outgoing{URL: integrationURL(c)}
	var err error
	if out.Fields, err = slackFields(m); err != nil {
		return Outgoing{}, err
	}
	ch, err := c.Value("channel", entity)
	if err != nil {
		return Outgoing{}, err
	}
	if ch == "" {
		if ch, err = c.Value("fallbackChannel", entity); err != nil {
			return Outgoing{}, err
		}
	}
	if _, set := out.Fields["channel"]; !set && ch != "" {
		out.Fields["channel"] = ch
	}
	return out, nil
}

// integrationURL is where a Slack or Teams connector posts: its integration's URL once read, else
// its deprecated webhookUrl.
func integrationURL(c Config) string {
	if c.Integration != nil {
		return c.Integration.URL
	}
	return c.Fields["webhookUrl"]
}

func slackFields(m Message) (map[string]any, error) {
	r := m.Fields
	if p := strings.ToLower(m.PayloadType); p == "slack_raw" || p == "raw" {
		obj, err := jsonObject("payload", r["payload"])
		if err != nil {
			return nil, err
		}
		if s, _ := obj["text"].(string); s == "" {
			obj["text"] = r["title"]
		}
		if s, _ := obj["text"].(string); s == "" {
			return nil, errors.New("preset field payload: a Slack message needs its text")
		}
		return obj, nil
	}
	var lines []string
	if t := strings.TrimSpace(r["title"]); t != "" {
		lines = append(lines, "*"+t+"*")
	}
	for _, name := range []string{"description", "footer"} {
		if t := strings.TrimSpace(r[name]); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) == 0 {
		lines = []string{"(empty notification)"}
	}
	return map[string]any{"text": strings.Join(lines, "\n")}, nil
}

// MarkTest: the text starts with TestPrefix and ends with TestNotice.
func (slack) MarkTest(f map[string]any) {
	prefixTest(f, "text")
	noticeTest(f, "text", false)
}

// Body is an incoming-webhook message: text, the notification's fallback and what clients
// without blocks show, the channel when the connector names one, and blocks when rendered (Block
// Kit, passed on as written).
func (slack) Body(r Record) ([]byte, error) {
	if text(r.Fields, "text") == "" {
		return nil, errors.New("delivery fields.text: required for a Slack message (its notification text)")
	}
	msg := map[string]any{"text": text(r.Fields, "text")}
	if ch := text(r.Fields, "channel"); ch != "" {
		msg["channel"] = ch
	}
	if blocks, ok := r.Fields["blocks"]; ok && blocks != nil {
		msg["blocks"] = blocks
	}
	return json.Marshal(msg)
}
