package notifyexpr

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// The entity types of the public documents that mgmtapi produces events for.
const (
	EntityAlerts            = "ALERTS"
	EntityCases             = "CASES"
	EntityTestNotifications = "TEST_NOTIFICATIONS"
)

// The statuses alert.status takes (the product's words, as conditions compare them).
const (
	AlertTriggered    = "Triggered"
	AlertAcknowledged = "Acknowledged"
	AlertResolved     = "Resolved"
)

// AlertEntity is the variables of a notification about an incident (entity type ALERTS), the names
// conditions and templates use:
//
//	alertDef.name, .description, .priority (P1…P5), .type ("prometheus"), .entityLabels.<label>
//	alert.id, .status (Triggered | Acknowledged | Resolved), .severity, .timestamp (RFC 3339),
//	     .labels.<label>, .annotations.<name>, .groups[].keyValues.<label>, .groups[].priority,
//	     .highestPriority, .muted, .application, .subsystem, .duration
//	_context.entityType ("ALERTS"), .entitySubType, .teamId, .system ("mgmtapi")
//	correlationKey (the incident id), name, priority (shortcuts)
//
// The alert definition is the Alertmanager rule: its name is the alertname, its entity labels the
// alert's labels, its priority the severity mapped as a case's priority is (critical P1, error
// P2, warning P3, low P4, info and unspecified P5).
func AlertEntity(inc oas.Incident, teamID int64) map[string]any {
	priority := alertPriority(inc.Severity)
	labels := stringMap(inc.ContextualLabels)
	status := AlertTriggered
	switch {
	case inc.State == oas.IncidentStateINCIDENTSTATERESOLVED || inc.Status == oas.IncidentStatusINCIDENTSTATUSRESOLVED:
		status = AlertResolved
	case inc.Status == oas.IncidentStatusINCIDENTSTATUSACKNOWLEDGED:
		status = AlertAcknowledged
	}
	groupLabels := map[string]any{}
	for _, l := range inc.MetaLabels {
		groupLabels[l.Key.Or("")] = l.Value.Or("")
	}
	subType := "prometheusTriggered"
	if status == AlertResolved {
		subType = "prometheusResolved"
	}
	name := inc.Name.Or("")
	return map[string]any{
		"alertDef": map[string]any{
			"name":         name,
			"description":  inc.Description.Or(""),
			"priority":     priority,
			"type":         "prometheus",
			"entityLabels": labels,
		},
		"alert": map[string]any{
			"id":          inc.ID,
			"status":      status,
			"severity":    strings.TrimPrefix(string(inc.Severity), "INCIDENT_SEVERITY_"),
			"timestamp":   inc.LastStateUpdateTime.UTC().Format(time.RFC3339),
			"createdAt":   inc.CreatedAt.UTC().Format(time.RFC3339),
			"labels":      labels,
			"annotations": stringMap(inc.DisplayLabels),
			"groups": []any{map[string]any{
				"keyValues": groupLabels,
				"priority":  priority,
			}},
			"highestPriority": priority,
			"muted":           inc.IsMuted.Or(false),
			"application":     labels["application"],
			"subsystem":       labels["subsystem"],
			"duration":        inc.Duration,
		},
		"_context": map[string]any{
			"entityType":    EntityAlerts,
			"entitySubType": subType,
			"teamId":        strconv.FormatInt(teamID, 10),
			"system":        "mgmtapi",
		},
		"correlationKey": inc.ID,
		"name":           name,
		"priority":       priority,
	}
}

// CaseEntity is the variables of a notification about a case (entity type CASES); event names
// why it notifies now (the kind of case event: "created", "statusChanged", "comment",
// "assigned", …, or "" when none):
//
//	case.id, .readableId, .title, .status (Active | Acknowledged | Resolved | Closed |
//	     PendingActivation), .priority (P1…P5), .category, .assignee (user id, "" when none),
//	     .labels.<key>, .groupings.<key>, .createTime, .updateTime, .acknowledgeTime, .duration,
//	     .alertCount
//	caseMetadata.event
//	_context.entityType ("CASES"), .entitySubType, .teamId, .system ("mgmtapi")
//	correlationKey (the case id), name (the title), priority (shortcuts)
func CaseEntity(c oas.Case, teamID int64, event string) map[string]any {
	priority := strings.TrimPrefix(string(c.Priority), "CASE_PRIORITY_")
	if priority == "UNSPECIFIED" || priority == "" {
		priority = "P5"
	}
	assignee := ""
	if a, ok := c.Assignee.Get(); ok {
		assignee = string(a.UserId)
	}
	ack := ""
	if t, ok := c.AcknowledgeTime.Get(); ok {
		ack = t.UTC().Format(time.RFC3339)
	}
	return map[string]any{
		"case": map[string]any{
			"id":              c.ID,
			"readableId":      c.ReadableId,
			"title":           c.Title,
			"status":          caseStatus(c.Status),
			"priority":        priority,
			"category":        strings.TrimPrefix(string(c.Category), "CASE_CATEGORY_"),
			"assignee":        assignee,
			"labels":          keyValueMap(c.Labels),
			"groupings":       keyValueMap(c.Groupings),
			"createTime":      c.CreateTime.UTC().Format(time.RFC3339),
			"updateTime":      c.UpdateTime.UTC().Format(time.RFC3339),
			"acknowledgeTime": ack,
			"duration":        c.Duration.Or(""),
			"alertCount":      len(c.CaseIndicators.AlertIndicators),
		},
		"caseMetadata": map[string]any{"event": event},
		"_context": map[string]any{
			"entityType":    EntityCases,
			"entitySubType": caseSubType(event),
			"teamId":        strconv.FormatInt(teamID, 10),
			"system":        "mgmtapi",
		},
		"correlationKey": c.ID,
		"name":           c.Title,
		"priority":       priority,
	}
}

// SampleEntity is a made-up event of the entity type (ALERTS, CASES or TEST_NOTIFICATIONS; ""
// and ENTITY_TYPE_UNSPECIFIED mean ALERTS), used to try conditions and templates. A subtype
// naming "resolved" gives a resolved alert.
//
// Errors: an entity type mgmtapi produces no events of.
func SampleEntity(entityType, entitySubType string) (map[string]any, error) {
	switch entityType {
	case "", "ENTITY_TYPE_UNSPECIFIED", EntityAlerts, EntityTestNotifications:
		return sampleAlert(entitySubType), nil
	case EntityCases:
		e := CaseEntity(sampleCase(), 1, "created")
		if entitySubType != "" {
			e["_context"].(map[string]any)["entitySubType"] = entitySubType
		}
		return e, nil
	}
	return nil, fmt.Errorf("mgmtapi sends no notifications of entity type %s; use ALERTS or CASES", entityType)
}

var sampleTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sampleAlert(subType string) map[string]any {
	inc := oas.Incident{
		ID:          "0b9c3a7e-4d1f-4c2a-9e5b-6f7a8b9c0d1e",
		Name:        oas.NewOptString("HighErrorRate"),
		Description: oas.NewOptString("More than 5% of requests to checkout failed in the last 5 minutes"),
		State:       oas.IncidentStateINCIDENTSTATETRIGGERED,
		Status:      oas.IncidentStatusINCIDENTSTATUSTRIGGERED,
		Severity:    oas.IncidentSeverityINCIDENTSEVERITYCRITICAL,
		IsMuted:     oas.NewOptBool(false),
		ContextualLabels: oas.IncidentContextualLabels{
			"alertname": "HighErrorRate", "service": "checkout", "env": "production", "team": "payments",
			"severity": "critical",
		},
		DisplayLabels: oas.IncidentDisplayLabels{
			"summary":     "checkout error rate above 5%",
			"description": "More than 5% of requests to checkout failed in the last 5 minutes",
		},
		MetaLabels: []oas.MetaLabel{
			{Key: oas.NewOptString("alertname"), Value: oas.NewOptString("HighErrorRate")},
			{Key: oas.NewOptString("service"), Value: oas.NewOptString("checkout")},
		},
		CreatedAt:           sampleTime,
		LastStateUpdateTime: sampleTime,
		Duration:            "300s",
	}
	if strings.Contains(strings.ToLower(subType), "resolved") {
		inc.State = oas.IncidentStateINCIDENTSTATERESOLVED
		inc.Status = oas.IncidentStatusINCIDENTSTATUSRESOLVED
	}
	e := AlertEntity(inc, 1)
	if subType != "" {
		e["_context"].(map[string]any)["entitySubType"] = subType
	}
	return e
}

func sampleCase() oas.Case {
	return oas.Case{
		ID:         "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
		ReadableId: "CASE-42",
		Title:      "checkout error rate above 5%",
		Status:     oas.CaseStatusCASESTATUSACTIVE,
		Priority:   oas.CasePriorityCASEPRIORITYP1,
		Category:   oas.CaseCategoryCASECATEGORYAVAILABILITY,
		CreateTime: sampleTime,
		UpdateTime: sampleTime,
		Duration:   oas.NewOptString("300"),
		Labels:     []oas.KeyValue{{Key: "team", Value: "payments"}, {Key: "env", Value: "production"}},
		Groupings:  []oas.KeyValue{{Key: "alertname", Value: "HighErrorRate"}},
	}
}

// alertPriority is the priority an incident's severity gives (the mapping alert ingestion uses
// for a case's priority).
func alertPriority(s oas.IncidentSeverity) string {
	switch s {
	case oas.IncidentSeverityINCIDENTSEVERITYCRITICAL:
		return "P1"
	case oas.IncidentSeverityINCIDENTSEVERITYERROR:
		return "P2"
	case oas.IncidentSeverityINCIDENTSEVERITYWARNING:
		return "P3"
	case oas.IncidentSeverityINCIDENTSEVERITYLOW:
		return "P4"
	}
	return "P5"
}

func caseStatus(s oas.CaseStatus) string {
	switch s {
	case oas.CaseStatusCASESTATUSPENDINGACTIVATION:
		return "PendingActivation"
	case oas.CaseStatusCASESTATUSACTIVE:
		return "Active"
	case oas.CaseStatusCASESTATUSACKNOWLEDGED:
		return "Acknowledged"
	case oas.CaseStatusCASESTATUSRESOLVED:
		return "Resolved"
	case oas.CaseStatusCASESTATUSCLOSED:
		return "Closed"
	}
	return "Unspecified"
}

// caseSubType names the subtype of a case notification from its event: "statusChanged" →
// "caseStatusChanged".
func caseSubType(event string) string {
	if event == "" {
		return "case"
	}
	return "case" + strings.ToUpper(event[:1]) + event[1:]
}

func stringMap[M ~map[string]string](m M) map[string]any {
	out := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func keyValueMap(kvs []oas.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out
}
