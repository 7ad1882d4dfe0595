package connectortypes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// genericHTTPSKind sends a JSON document to any URL.
var genericHTTPSKind = Kind{
	Type: oas.ConnectorTypeGENERICHTTPS, EntityTypes: allEntities, Sender: genericHTTPS{},
	Record: RecordShape{Methods: []string{http.MethodPost, http.MethodPut}, Headers: true},
	Config: []Field{
		{Name: "url", Kind: oas.ConnectorFieldTypeURL, Required: true,
			Description: "The http or https URL the notification is sent to."},
		{Name: "method", Kind: oas.ConnectorFieldTypeSTRING, AllowedValues: []string{"POST", "PUT"}, Default: "POST",
			Description: "The HTTP method of the request, in any case (sent in upper case)."},
		{Name: "additionalHeaders", Kind: oas.ConnectorFieldTypeKEYVALUEPAIRS,
			Description: "Headers added to every request, as a JSON object of strings."},
		{Name: "additionalBodyFields", Kind: oas.ConnectorFieldTypeJSONOBJECT,
			Description: "Members added to every request's JSON body, as a JSON object."},
	},
	Payloads: []Payload{
		defaultPayload(oas.ConnectorTypeGENERICHTTPS,
			Field{Name: "headers", Kind: oas.ConnectorFieldTypeKEYVALUEPAIRS, Description: "Headers of the request, a JSON object of strings."},
			Field{Name: "body", Kind: oas.ConnectorFieldTypeJSONOBJECT, Description: "The request's whole JSON body; when not set, the body is the object of the rendered fields."},
		),
	},
}

type genericHTTPS struct{ retryOverloaded }

// Compose: the URL and the method in upper case, whatever the case sent (each the connector's
// template for the entity type when it has one); the body is the rendered `body` object when the
// preset has one, else the object of the rendered fields with the default document's members
// (defaultDocument); the connector's additionalBodyFields are added to it, the preset's `headers`
// to the connector's additionalHeaders (each the connector's template when it has one).
func (genericHTTPS) Compose(c Config, m Message, entity map[string]any) (Outgoing, error) {
	r := m.Fields
	var out Outgoing
	var err error
	if out.URL, err = c.Value("url", entity); err != nil {
		return Outgoing{}, err
	}
	method, err := c.Value("method", entity)
	if err != nil {
		return Outgoing{}, err
	}
	out.Method = strings.ToUpper(method)
	body := map[string]any{}
	if strings.TrimSpace(r["body"]) != "" {
		if body, err = jsonObject("body", r["body"]); err != nil {
			return Outgoing{}, err
		}
	} else {
		for name, v := range r {
			if name != "headers" {
				body[name] = v
			}
		}
		for name, v := range defaultDocument(entity) {
			if _, set := body[name]; !set {
				body[name] = v
			}
		}
	}
	extra, err := c.rawValue("additionalBodyFields", entity)
	if err != nil {
		return Outgoing{}, err
	}
	if extra != "" {
		obj, err := jsonObject("additionalBodyFields", extra)
		if err != nil {
			return Outgoing{}, err
		}
		for k, v := range obj {
			if _, set := body[k]; !set {
				body[k] = v
			}
		}
	}
	out.Fields = body
	headers, err := c.rawValue("additionalHeaders", entity)
	if err != nil {
		return Outgoing{}, err
	}
	out.Headers = map[string]string{}
	for _, src := range []struct{ name, doc string }{{"additionalHeaders", headers}, {"headers", r["headers"]}} {
		if strings.TrimSpace(src.doc) == "" {
			continue
		}
		var h map[string]string
		if err := json.Unmarshal([]byte(src.doc), &h); err != nil {
			return Outgoing{}, fmt.Errorf("field %s: must be a JSON object of strings", src.name)
		}
		for k, v := range h {
			out.Headers[k] = v
		}
	}
	return out, nil
}

// defaultDocument is what a generic webhook's body carries, beside the preset's rendered fields,
// when no preset renders a whole body: the members receivers of Alertmanager's and Grafana's
// webhooks expect (status, labels, annotations, severity, priority, start and end, the incident's
// and case's ids, a link to the incident or case when the server knows its URL), read from the
// entity. An alert's endsAt is its last change once resolved, and
// empty while it fires.
func defaultDocument(entity map[string]any) map[string]any {
	if a, ok := entity["alert"].(map[string]any); ok {
		def, _ := entity["alertDef"].(map[string]any)
		ends := ""
		if a["status"] == notifyexpr.AlertResolved {
			ends, _ = a["timestamp"].(string)
		}
		return map[string]any{
			"status": a["status"], "alertName": def["name"], "severity": a["severity"], "priority": def["priority"],
			"labels": a["labels"], "annotations": a["annotations"], "startsAt": a["createdAt"], "endsAt": ends,
			"incidentId": a["id"], "caseId": a["caseId"], "link": a["link"],
		}
	}
	if c, ok := entity["case"].(map[string]any); ok {
		meta, _ := entity["caseMetadata"].(map[string]any)
		return map[string]any{
			"status": c["status"], "priority": c["priority"], "labels": c["labels"], "startsAt": c["createTime"],
			"caseId": c["id"], "readableId": c["readableId"], "event": meta["event"], "link": c["link"],
		}
	}
	return nil
}

// MarkTest: a string title gains TestPrefix, and the body gains "test": true (a body of its own
// that already has "test" keeps it).
func (genericHTTPS) MarkTest(f map[string]any) {
	if _, ok := f["title"].(string); ok {
		prefixTest(f, "title")
	}
	if _, ok := f["test"]; !ok {
		f["test"] = true
	}
}

// Body is the delivery's fields, as a JSON object.
func (genericHTTPS) Body(r Record) ([]byte, error) {
	if r.Fields == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(r.Fields)
}
