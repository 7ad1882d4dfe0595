package notifytesting_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
)

// TestEventBridgeConnectorTest: the test of an EVENTBRIDGE connector puts one event, signed with
// SigV4, on the bus of the AWS_EVENT_BRIDGE webhook it names (through AWS_ENDPOINT_URL_EVENTBRIDGE,
// here a loopback receiver), its detail marked as a test; the same connector fails readably when
// the bus refuses the request.
func TestEventBridgeConnectorTest(t *testing.T) {
	var mu sync.Mutex
	var entries []map[string]any
	status := http.StatusOK
	bus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in struct{ Entries []map[string]any }
		mu.Lock()
		defer mu.Unlock()
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDMGMTAPITEST/") ||
			r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || json.Unmarshal(body, &in) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		entries = append(entries, in.Entries...)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"FailedEntryCount":0,"Entries":[{"EventId":"e1"}]}`)
	}))
	t.Cleanup(bus.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDMGMTAPITEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-key")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", bus.URL)
	const arn = "arn:aws:events:eu-west-1:123456789012:event-bus/alerts"
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		mu.Lock()
		entries, status = nil, http.StatusOK
		mu.Unlock()
		_, key := env.MustTeam(t, "acme")
		res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/integrations/webhooks/v1", key,
			`{"data":{"name":"bus","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"`+arn+`","detailType":"mgmtapi alert","source":"com.example.alerts"}}}`)
		hook := apitest.Decode[struct{ ID string }](t, res).ID
		if hook == "" {
			t.Fatalf("create webhook: %d %s", res.Status, res.Body)
		}
		eb := mustCreate(t, env, connectorsPath, key, "connector", `{"name":"EB","type":"EVENTBRIDGE","connectorConfig":{"fields":[`+
			`{"fieldName":"integrationId","value":"`+hook+`"}]}}`)
		succeeded(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+eb+`"}`))
		mu.Lock()
		got := append([]map[string]any(nil), entries...)
		status = http.StatusInternalServerError
		mu.Unlock()
		if len(got) != 1 || got[0]["EventBusName"] != arn || got[0]["Source"] != "com.example.alerts" {
			t.Fatalf("PutEvents entries %v", got)
		}
		var detail map[string]any
		if err := json.Unmarshal([]byte(str(got[0]["Detail"])), &detail); err != nil || detail["status"] != "test" ||
			!strings.HasPrefix(str(detail["title"]), delivery.TestPrefix) || !strings.Contains(str(detail["text"]), delivery.TestNotice) {
			t.Fatalf("detail %v (%v)", got[0]["Detail"], err)
		}
		failed(t, try(t, env, "TestingService_TestExistingConnector", connectorTest, key, `{"connectorId":"`+eb+`"}`), 500, "EventBridge")
	})
}
