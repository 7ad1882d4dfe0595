package connectortypes

import (
	"maps"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// pagerDutyIncidentsKind opens PagerDuty incidents through the team's PAGERDUTY outgoing webhook:
// it sends Events API v2 events (PAGERDUTY's wire format) with the webhook's serviceKey.
var pagerDutyIncidentsKind = Kind{
	Type: oas.ConnectorTypePAGERDUTYINCIDENTS, EntityTypes: alertEntities, Sender: pagerDutyIncidents{},
	Config: []Field{
		integrationID([]string{"PAGERDUTY"}, " mgmtapi sends PagerDuty Events API v2 events (trigger, acknowledge, resolve under one dedup key) "+
			"with the webhook's serviceKey as the routing key, to the webhook's URL (else PagerDuty's enqueue endpoint); "+
			"the service is then the one that key belongs to. Connectors stored with only the deprecated apiToken send nothing.", "apiToken"),
		{Name: "service", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
			Description: "The id of the PagerDuty service incidents are opened on, e.g. PXXXXXX (stored and answered; the Events API chooses the service by the integration's key)."},
		{Name: "apiToken", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Sensitive: true, Deprecated: true,
			Description: "A PagerDuty REST API token." + deprecated},
		{Name: "fromEmail", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Deprecated: true,
			Description: "The email of the PagerDuty user the incidents are opened as." + deprecated},
	},
	Aliases: map[string]string{"serviceId": "service"},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypePAGERDUTYINCIDENTS,
		Field{Name: "urgency", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"high", "low"},
			Description: "The incident's urgency: high sends the event as critical, low as warning (the service's urgency rules map severities back); the alert's priority when not set."},
	)},
}

type pagerDutyIncidents struct{}

// Compose: a PAGERDUTY event to the integration's URL (else PagerDuty's endpoint) with its
// serviceKey, the urgency mapped to the event's severity (high critical, low warning).
func (pagerDutyIncidents) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	out := Outgoing{Format: oas.ConnectorTypePAGERDUTY, URL: DefaultPagerDutyURL}
	if c.Integration != nil {
		out.RoutingKey = c.Integration.Settings["serviceKey"]
		if c.Integration.URL != "" {
			out.URL = c.Integration.URL
		}
	}
	r := maps.Clone(m.Fields) // the severity is added to the caller's fields' copy
	switch strings.ToLower(strings.TrimSpace(r["urgency"])) {
	case "high":
		r["severity"] = "critical"
	case "low":
		r["severity"] = "warning"
	}
	var err error
	out.Fields, err = pagerDutyFields(r, entity)
	return out, err
}
