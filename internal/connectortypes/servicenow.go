package connectortypes

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// serviceNowKind opens ServiceNow incidents with the Table API.
var serviceNowKind = Kind{
	Type: oas.ConnectorTypeSERVICENOW, EntityTypes: alertEntities, Sender: serviceNow{},
	Record: RecordShape{Headers: true, Authorization: true, DedupKey: true},
	Config: []Field{
		{Name: "instanceUrl", Kind: oas.ConnectorFieldTypeURL, Required: true,
			Description: "The ServiceNow instance's URL (https). mgmtapi creates one incident per alert triggered or case opened, " +
				"with the Table API (POST {instanceUrl}/api/now/table/incident), the title as short_description, and the " +
				"notification's key as correlation_id; a resolution finds that incident by its correlation_id and PATCHes it resolved (state 6)."},
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

// Sends: an alert triggered or a case opened (an incident created), and their resolution (the
// incident resolved); acknowledgements and changes are not sent.
func (serviceNow) Sends(event string) bool {
	return event == "triggered" || event == "opened" || event == eventResolved
}

// Prepare: a resolution finds the incident its trigger created, by the correlation_id the trigger
// gave it (GET …/incident?sysparm_query=correlation_id=<key>, its first answer), and becomes a
// PATCH of that incident. No incident of that correlation id is a failure, not retried.
func (serviceNow) Prepare(ctx context.Context, client *http.Client, r Record, req *http.Request) (bool, error) {
	if r.Event != eventResolved {
		return false, nil
	}
	find := *req.URL
	find.RawQuery = url.Values{"sysparm_query": {"correlation_id=" + r.DedupKey}, "sysparm_fields": {"sys_id"}, "sysparm_limit": {"1"}}.Encode()
	get, err := http.NewRequestWithContext(ctx, http.MethodGet, find.String(), nil)
	if err != nil {
		return false, errors.New("the connector's instanceUrl is not a valid URL")
	}
	get.Header = req.Header.Clone()
	get.Header.Del("Content-Type")
	res, err := client.Do(get)
	if err != nil {
		return true, fmt.Errorf("%s: finding the incident to resolve: %v", req.URL.Hostname(), errors.Unwrap(err))
	}
	defer res.Body.Close()
	var found struct {
		Result []struct {
			SysID string `json:"sys_id"`
		} `json:"result"`
	}
	if res.StatusCode != http.StatusOK {
		return res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500,
			fmt.Errorf("%s answered %d to the search for the incident to resolve", req.URL.Hostname(), res.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&found); err != nil || len(found.Result) == 0 || found.Result[0].SysID == "" {
		return false, fmt.Errorf("%s holds no incident of correlation_id %s to resolve", req.URL.Hostname(), r.DedupKey)
	}
	req.Method = http.MethodPatch
	req.URL = req.URL.JoinPath(url.PathEscape(found.Result[0].SysID))
	return false, nil
}

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
//
// A resolution's body resolves the incident: state 6 (Resolved), close_code "Resolved by caller"
// and close_notes that say so (the PATCH Prepare made of it).
func (serviceNow) Body(r Record) ([]byte, error) {
	if r.Event == eventResolved {
		notes := "Resolved by mgmtapi"
		if t := strings.TrimSpace(text(r.Fields, "short_description")); t != "" {
			notes += ": " + CutBytes(t, 160)
		}
		return json.Marshal(map[string]any{"state": "6", "close_code": "Resolved by caller", "close_notes": notes})
	}
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
