package connectortypes

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// eventBridgeKind puts events on an event bus through the team's AWS_EVENT_BRIDGE outgoing
// webhook, which sends them (internal/notifiers).
var eventBridgeKind = Kind{
	Type: oas.ConnectorTypeEVENTBRIDGE, EntityTypes: alertEntities, Sender: eventBridge{},
	Config: []Field{
		integrationID([]string{"AWS_EVENT_BRIDGE"}, " mgmtapi puts one event per notification on the webhook's event bus "+
			"(PutEvents, signed with the server's AWS credentials), as the webhook's own notifications are. Connectors stored "+
			"with only the deprecated eventBusArn send nothing.", "eventBusArn"),
		{Name: "eventBusArn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true,
			Description: "The ARN of the event bus the events are put on." + deprecated},
		{Name: "roleArn", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true,
			Description: "The ARN of the role assumed to put events." + deprecated},
		{Name: "source", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true, Description: "The events' source." + deprecated},
		{Name: "detailType", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true, Description: "The events' detail-type." + deprecated},
	},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeEVENTBRIDGE,
		Field{Name: "detail", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "Members merged into the event's detail, a JSON object (the detail otherwise holds title, text, status, severity, key, time and fields)."},
	)},
}

type eventBridge struct{}

// Compose: the webhook message of the rendered title and description, the alert's severity,
// resolved when the entity's status is Resolved (else triggered), the entity's labels as fields;
// a rendered detail (a JSON object) becomes the webhook settings' detail, which the
// AWS_EVENT_BRIDGE delivery merges into the event's detail.
func (eventBridge) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	if c.Integration == nil {
		return Outgoing{}, errors.New("connector field integrationId: the EVENTBRIDGE connector names no resolved outgoing webhook (one stored with only eventBusArn sends nothing)")
	}
	status, severity := alertStatus(entity)
	w := &WebhookMessage{Type: c.Integration.Type, URL: c.Integration.URL, Settings: maps.Clone(c.Integration.Settings),
		Title: orEmpty(m.Fields["title"]), Text: m.Fields["description"], Status: status,
		Severity: severity, Fields: labelsOf(entity)}
	if d := strings.TrimSpace(m.Fields["detail"]); d != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(d), &obj); err != nil || obj == nil {
			return Outgoing{}, errors.New("preset field detail: its rendering must be a JSON object")
		}
		if w.Settings == nil {
			w.Settings = map[string]string{}
		}
		w.Settings["detail"] = d
	}
	return Outgoing{Webhook: w}, nil
}
