package connectortypes_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// TestEveryTypeHasOneKind: each connector type of the enumeration (UNSPECIFIED aside) is in the
// table once, in the enumeration's order, and every field is named once.
func TestEveryTypeHasOneKind(t *testing.T) {
	var want []oas.ConnectorType
	for _, v := range oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED.AllValues() {
		if v != oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED {
			want = append(want, v)
		}
	}
	kinds := connectortypes.Kinds()
	if len(kinds) != len(want) {
		t.Fatalf("%d kinds, %d types in the enumeration", len(kinds), len(want))
	}
	for i, k := range kinds {
		if k.Type != want[i] {
			t.Errorf("kind %d is %s, want %s", i, k.Type, want[i])
		}
		seen := map[string]bool{}
		for _, f := range k.Config {
			if seen[f.Name] {
				t.Errorf("%s: field %s twice", k.Type, f.Name)
			}
			seen[f.Name] = true
			if f.AllowOverrides == (f.Sensitive || f.Deprecated) {
				t.Errorf("%s.%s: overrides allowed %v for a field sensitive %v, deprecated %v", k.Type, f.Name, f.AllowOverrides, f.Sensitive, f.Deprecated)
			}
		}
		if len(k.Payloads) == 0 || k.Payloads[0].Name != strings.ToLower(string(k.Type))+"_default" {
			t.Errorf("%s: first payload type %v, want %s_default", k.Type, k.Payloads, strings.ToLower(string(k.Type)))
		}
	}
}

// TestComposedDeliveriesHaveBodies: for every type mgmtapi sends as HTTP requests, what Compose
// makes of a triggered alert is a delivery its wire format's Body accepts, for a trigger and a
// resolution, and the body is a JSON object.
func TestComposedDeliveriesHaveBodies(t *testing.T) {
	fields := map[oas.ConnectorType]map[string]string{
		oas.ConnectorTypeSLACK:                 {"webhookUrl": "https://hooks.example/s", "channel": "ops"},
		oas.ConnectorTypeGENERICHTTPS:          {"url": "https://hooks.example/g", "method": "post"},
		oas.ConnectorTypePAGERDUTY:             {"integrationKey": "rk"},
		oas.ConnectorTypeSERVICENOW:            {"instanceUrl": "https://sn.example", "username": "u", "password": "p"},
		oas.ConnectorTypePAGERDUTYINCIDENTS:    {"service": "P1"},
		oas.ConnectorTypeMICROSOFTTEAMS:        {"webhookUrl": "https://teams.example/w"},
		oas.ConnectorTypeINCIDENTIO:            {"apiKey": "k", "alertEventsUrl": "https://io.example/e", "alertSourceToken": "t"},
		oas.ConnectorTypeEMAIL:                 {"emailAddresses": `["ops@example.com"]`},
		oas.ConnectorTypeEVENTBRIDGE:           {"integrationId": "7"},
		oas.ConnectorTypeIBMEVENTNOTIFICATIONS: {},
	}
	entity := map[string]any{
		"_context": map[string]any{"entityType": "ALERTS"},
		"priority": "P1",
		"alert":    map[string]any{"status": "Triggered", "labels": map[string]any{"service": "checkout"}},
		"alertDef": map[string]any{"name": "High error rate"},
	}
	message := connectortypes.Message{Fields: map[string]string{"title": "High error rate", "description": "5% of requests fail"}}
	integration := &connectortypes.Integration{ID: "7", Type: "AWS_EVENT_BRIDGE", Settings: map[string]string{}}
	for _, k := range connectortypes.Kinds() {
		out, err := k.Compose(context.Background(), fields[k.Type], nil, integration, message, entity)
		if !k.Delivered() {
			if err != connectortypes.ErrNotDelivered {
				t.Errorf("%s: not delivered, but Compose says %v", k.Type, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", k.Type, err)
			continue
		}
		format, ok := connectortypes.Lookup(out.Format)
		if out.Webhook != nil || k.Type == oas.ConnectorTypeEMAIL {
			continue // sent by the webhook's type, or by SMTP
		}
		sender, isHTTP := format.Sender.(connectortypes.HTTPSender)
		if !ok || !isHTTP {
			t.Errorf("%s: composed for format %q, which builds no HTTP bodies", k.Type, out.Format)
			continue
		}
		for _, event := range []string{"triggered", "resolved"} {
			body, err := sender.Body(connectortypes.Record{Fields: out.Fields, RoutingKey: out.RoutingKey, DedupKey: "d", Event: event})
			var obj map[string]any
			if err != nil || json.Unmarshal(body, &obj) != nil {
				t.Errorf("%s %s: body %s, %v", k.Type, event, body, err)
			}
		}
		if !sender.Retry(503) || sender.Retry(400) {
			t.Errorf("%s: retries 503 %v, 400 %v", k.Type, sender.Retry(503), sender.Retry(400))
		}
	}
}
