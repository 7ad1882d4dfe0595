package connectortypes

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// serviceNowKind opens ServiceNow incidents with the Table API.
var serviceNowKind = Kind{
	Type: oas.ConnectorTypeSERVICENOW, EntityTypes: alertEntities, Sender: serviceNow{},
	Config: []Field{
		{Name: "instanceUrl", Kind: oas.ConnectorFieldTypeURL, Required: true,
			Description: "The ServiceNow instance's URL (https). mgmtapi creates one incident per alert triggered or case opened, " +
				"with the Table API (POST {instanceUrl}/api/now/table/incident), the title as short_description, and the " +
				"notification's key as correlation_id; acknowledgements and resolutions are not sent (see the docs)."},
		{Name: "username", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Description: "The integration user (sent with the password as basic credentials)."},
		{Name: "password", Kind: oas.ConnectorFieldTypeNONEMPTYSTRING, Required: true, Sensitive: true, Description: "The integration user's password."},
		{Name: "assignmentGroup", Kind: oas.ConnectorFieldTypeSTRING, Deprecated: true, Description: "The group incidents are assigned to." + deprecated},
	},
	Payloads: []Payload{defaultPayload(oas.ConnectorTypeSERVICENOW,
		Field{Name: "impact", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"1", "2", "3"}, Description: "1 high, 2 medium, 3 low."},
		Field{Name: "urgency", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"1", "2", "3"}, Description: "1 high, 2 medium, 3 low."},
	)},
}

type serviceNow struct{ retryOverloaded }

// Sends: an alert triggered or a case opened. mgmtapi does not keep the incident's sys_id, so an
// acknowledgement, resolution or change is not sent (a second incident would be wrong); the
// incident carries the correlation_id by which an instance's own rules may close it.
func (serviceNow) Sends(event string) bool { return event == "triggered" || event == "opened" }

// Compose: an insert into the instance's incident table, with the user's basic credentials; the
// title is the short description.
func (serviceNow) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	instance, err := c.Value("instanceUrl", entity)
	if err != nil {
		return Outgoing{}, err
	}
	user, err := c.Value("username", entity)
	if err != nil {
		return Outgoing{}, err
	}
	out := Outgoing{URL: strings.TrimRight(instance, "/") + "/api/now/table/incident",
		Headers: map[string]string{"Accept": "application/json",
			"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+c.Fields["password"]))},
		Fields: map[string]any{"short_description": orEmpty(m.Fields["title"]), "description": m.Fields["description"]}}
	for _, k := range []string{"impact", "urgency"} {
		if v := strings.TrimSpace(m.Fields[k]); v != "" {
			out.Fields[k] = v
		}
	}
	return out, nil
}

// MarkTest: the short description starts with TestPrefix, the description with TestNotice.
func (serviceNow) MarkTest(f map[string]any) {
	prefixTest(f, "short_description")
	noticeTest(f, "description", true)
}

// Body is a Table API insert into the incident table: its short_description (required, cut to
// 160 bytes, the column's size), description, impact and urgency (1, 2 or 3, when rendered), and
// the delivery's dedup key as correlation_id (correlation_display "mgmtapi"), which an instance's
// rules may use to find the incident again.
func (serviceNow) Body(r Record) ([]byte, error) {
	short := strings.TrimSpace(text(r.Fields, "short_description"))
	if short == "" {
		return nil, errors.New("delivery fields.short_description: required for a ServiceNow incident")
	}
	inc := map[string]any{"short_description": CutBytes(short, 160), "correlation_id": r.DedupKey, "correlation_display": "mgmtapi"}
	if d := text(r.Fields, "description"); d != "" {
		inc["description"] = d
	}
	for _, k := range []string{"impact", "urgency"} {
		switch v := strings.TrimSpace(text(r.Fields, k)); v {
		case "":
		case "1", "2", "3":
			inc[k] = v
		default:
			return nil, fmt.Errorf("delivery fields.%s: must be 1, 2 or 3, not %q", k, v)
		}
	}
	return json.Marshal(inc)
}
