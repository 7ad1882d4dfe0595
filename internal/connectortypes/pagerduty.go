package connectortypes

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// DefaultPagerDutyURL is PagerDuty's Events API v2 endpoint.
const DefaultPagerDutyURL = "https://events.pagerduty.com/v2/enqueue"

// pagerDutyKind sends PagerDuty Events API v2 events (trigger, acknowledge, resolve under one
// dedup key) with the connector's integration key.
var pagerDutyKind = Kind{
	Type: oas.ConnectorTypePAGERDUTY, EntityTypes: alertEntities, Sender: pagerDuty{},
	Record: RecordShape{DefaultURL: DefaultPagerDutyURL, RoutingKey: true, DedupKey: true},
	Config: []Field{
		{Name: "integrationKey", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true,
			Description: "The routing key of the PagerDuty Events API v2 integration."},
		{Name: "eventsUrl", Kind: oas.ConnectorFieldTypeURL, Default: DefaultPagerDutyURL,
			Description: "The Events API v2 endpoint the events are sent to (an mgmtapi setting, for a proxy or a test receiver)."},
	},
	Payloads: []Payload{
		defaultPayload(oas.ConnectorTypePAGERDUTY,
			Field{Name: "summary", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Description: "The event's summary (at most 1024 characters are sent); the title when not set."},
			Field{Name: "severity", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"critical", "error", "warning", "info"},
				Description: "The event's severity; rendered from the alert's priority when not set."},
			Field{Name: "timestamp", Kind: oas.ConnectorFieldTypeSTRING, Description: "When the event happened, an ISO 8601 time."},
			Field{Name: "source", Kind: oas.ConnectorFieldTypeSTRING, Description: "The affected system."},
			Field{Name: "component", Kind: oas.ConnectorFieldTypeSTRING, Description: "The affected component."},
			Field{Name: "group", Kind: oas.ConnectorFieldTypeSTRING, Description: "A logical grouping of components."},
			Field{Name: "class", Kind: oas.ConnectorFieldTypeSTRING, Description: "The class or type of the event."},
			Field{Name: "customDetails", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "Extra details, a JSON object (the event's custom_details)."},
		),
	},
}

type pagerDuty struct{ retryOverloaded }

// Compose: the integration key and the events URL (each the connector's template for the entity
// type when it has one) and the event's fields (pagerDutyFields).
func (pagerDuty) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	var out Outgoing
	var err error
	if out.RoutingKey, err = c.Value("integrationKey", entity); err != nil {
		return Outgoing{}, err
	}
	if out.URL, err = c.Value("eventsUrl", entity); err != nil {
		return Outgoing{}, err
	}
	if out.URL == "" {
		out.URL = DefaultPagerDutyURL
	}
	out.Fields, err = pagerDutyFields(m.Fields, entity)
	return out, err
}

// pagerDutyFields: the summary (the title when not set), the severity (from the alert's priority
// when not set) and the event's other fields.
func pagerDutyFields(r map[string]string, entity map[string]any) (map[string]any, error) {
	f := map[string]any{}
	summary := strings.TrimSpace(r["summary"])
	if summary == "" {
		summary = strings.TrimSpace(r["title"])
	}
	if summary == "" {
		summary = "(no summary)"
	}
	f["summary"] = summary
	// Templates of the severity are often written over several lines ({% if … %} critical {% elif
	// … %}); the severity is the word they render, in lower case.
	severity := strings.ToLower(strings.TrimSpace(r["severity"]))
	if severity == "" {
		severity = severityOf(entity)
	}
	f["severity"] = severity
	for _, name := range []string{"source", "component", "group", "class", "timestamp"} {
		if v := strings.TrimSpace(r[name]); v != "" {
			f[name] = v
		}
	}
	if f["source"] == nil {
		f["source"] = "mgmtapi"
	}
	if r["customDetails"] != "" {
		obj, err := jsonObject("customDetails", r["customDetails"])
		if err != nil {
			return nil, err
		}
		f["custom_details"] = obj
	} else if d := strings.TrimSpace(r["description"]); d != "" {
		f["custom_details"] = map[string]any{"description": d}
	}
	return f, nil
}

// severityOf maps the entity's priority (P1…P5) to PagerDuty's severities.
func severityOf(entity map[string]any) string {
	p, _ := entity["priority"].(string)
	switch p {
	case "P1":
		return "critical"
	case "P2":
		return "error"
	case "P3":
		return "warning"
	}
	return "info"
}

// MarkTest: the summary starts with TestPrefix; custom_details (an object, made when absent)
// gains "test": TestNotice.
func (pagerDuty) MarkTest(f map[string]any) {
	prefixTest(f, "summary")
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
}

// pagerDutySeverities are the Events API v2 severities.
var pagerDutySeverities = map[string]bool{"critical": true, "error": true, "warning": true, "info": true}

// Body is an Events API v2 event: a trigger carries the payload, an acknowledge or a resolve only
// the routing and dedup keys. Triggered, opened, changed and commented are triggers (a trigger with
// the dedup key of an open alert adds to it).
func (pagerDuty) Body(r Record) ([]byte, error) {
	ev := map[string]any{"routing_key": r.RoutingKey, "dedup_key": r.DedupKey}
	switch r.Event {
	case eventAcknowledged:
		ev["event_action"] = "acknowledge"
		return json.Marshal(ev)
	case eventResolved:
		ev["event_action"] = "resolve"
		return json.Marshal(ev)
	}
	ev["event_action"] = "trigger"
	summary := text(r.Fields, "summary")
	if summary == "" {
		return nil, errors.New("delivery fields.summary: required for a PagerDuty trigger")
	}
	summary = CutBytes(summary, 1024) // the Events API's bound
	source := text(r.Fields, "source")
	if source == "" {
		source = "mgmtapi"
	}
	severity := text(r.Fields, "severity")
	if severity == "" {
		severity = "error"
	}
	if !pagerDutySeverities[severity] {
		return nil, fmt.Errorf("delivery fields.severity: must be critical, error, warning or info, not %q", severity)
	}
	payload := map[string]any{"summary": summary, "source": source, "severity": severity}
	for _, k := range []string{"component", "group", "class", "timestamp"} {
		if v := text(r.Fields, k); v != "" {
			payload[k] = v
		}
	}
	if details, ok := r.Fields["custom_details"]; ok && details != nil {
		payload["custom_details"] = details
	}
	ev["payload"] = payload
	return json.Marshal(ev)
}
