package connectortypes

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// incidentIOKind sends alert events to an incident.io HTTP alert source (a preview type).
var incidentIOKind = Kind{
	Type: oas.ConnectorTypeINCIDENTIO, Preview: true, EntityTypes: alertEntities, Sender: incidentIO{},
	Record: RecordShape{Headers: true, Authorization: true, DedupKey: true},
	Config: []Field{
		{Name: "apiKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true,
			Description: "An incident.io API key (a preview type). Stored and checked; sending uses the alert source's token, not this key."},
		{Name: "alertEventsUrl", Kind: oas.ConnectorFieldTypeURL, Required: true,
			Description: "The alert source's HTTP endpoint, e.g. https://api.incident.io/v2/alert_events/http/<source id>: " +
				"mgmtapi posts each notification there as an alert event (title, description, status firing or resolved, deduplication_key, metadata)."},
		{Name: "alertSourceToken", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true,
			Description: "The alert source's token, sent as a bearer token."},
	},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeINCIDENTIO)},
}

type incidentIO struct{ retryOverloaded }

// Compose: an alert event to the alert source's URL with its token; the entity's labels are its
// metadata.
func (incidentIO) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	u, err := c.Value("alertEventsUrl", entity)
	if err != nil {
		return Outgoing{}, err
	}
	return Outgoing{URL: u, Headers: map[string]string{"Authorization": "Bearer " + c.Fields["alertSourceToken"]},
		Fields: map[string]any{"title": orEmpty(m.Fields["title"]), "description": m.Fields["description"], "metadata": labelsOf(entity)}}, nil
}

// MarkTest: the title starts with TestPrefix, the description with TestNotice.
func (incidentIO) MarkTest(f map[string]any) {
	prefixTest(f, "title")
	noticeTest(f, "description", true)
}

// Body is an event of an incident.io HTTP alert source: title (required), description, status
// (resolved for a resolution, else firing: a firing event under the same deduplication_key
// updates the alert it opened), the delivery's dedup key as deduplication_key, and metadata (the
// rendered object, with the entity's type and id and the event's kind added).
func (incidentIO) Body(r Record) ([]byte, error) {
	title := strings.TrimSpace(text(r.Fields, "title"))
	if title == "" {
		return nil, errors.New("delivery fields.title: required for an incident.io alert event")
	}
	status := "firing"
	if r.Event == eventResolved {
		status = "resolved"
	}
	meta := map[string]any{}
	if m, ok := r.Fields["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["entity_type"], meta["entity_id"], meta["event"] = r.EntityType, r.EntityID, r.Event
	ev := map[string]any{"title": title, "status": status, "deduplication_key": r.DedupKey, "metadata": meta}
	if d := text(r.Fields, "description"); d != "" {
		ev["description"] = d
	}
	return json.Marshal(ev)
}
