package outgoingwebhooks_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// eventBridgeReceiver is a loopback stand-in for EventBridge's PutEvents: it checks each
// request's SigV4 signature (service events, the region given, the key pair given) by signing
// the same request again, and answers as EventBridge does, or with failed when set.
type eventBridgeReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []map[string]any
	failed string
}

func newEventBridge(t *testing.T, region, key, secret string) *eventBridgeReceiver {
	e := &eventBridgeReceiver{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if msg := checkSignature(r, body, region, key, secret); msg != "" {
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"__type":"InvalidSignatureException","message":"`+msg+`"}`)
			return
		}
		var in map[string]any
		if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" || json.Unmarshal(body, &in) != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"ValidationException","message":"not a PutEvents request"}`)
			return
		}
		e.mu.Lock()
		e.got = append(e.got, in)
		failed := e.failed
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		if failed != "" {
			_, _ = io.WriteString(w, `{"FailedEntryCount":1,"Entries":[{"ErrorCode":"`+failed+`","ErrorMessage":"the bus refused it"}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"FailedEntryCount":0,"Entries":[{"EventId":"11710aed-b79e-4468-a20b-bb3c0c3b4860"}]}`)
	}))
	t.Cleanup(e.Close)
	return e
}

// checkSignature signs a copy of r (its signed headers, its body, its X-Amz-Date) with the
// expected credentials and scope, and returns what differs from r's Authorization ("" when it
// matches).
func checkSignature(r *http.Request, body []byte, region, key, secret string) string {
	auth := r.Header.Get("Authorization")
	i := strings.Index(auth, "SignedHeaders=")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || i < 0 {
		return "no SigV4 authorization"
	}
	signed := strings.Split(strings.SplitN(auth[i+len("SignedHeaders="):], ",", 2)[0], ";")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "no X-Amz-Date"
	}
	copyReq, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	copyReq.Host = r.Host
	copyReq.ContentLength = int64(len(body))
	for _, h := range signed {
		if h != "host" {
			copyReq.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	err = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: key, SecretAccessKey: secret},
		copyReq, hex.EncodeToString(sum[:]), "events", region, when)
	if err != nil {
		return err.Error()
	}
	if got := copyReq.Header.Get("Authorization"); got != auth {
		return "signature mismatch"
	}
	return ""
}

// TestEventBridgePutsOneSignedEvent: an AWS_EVENT_BRIDGE test puts one event on the bus through
// PutEvents, signed with SigV4 for the bus's region with the operator's credentials, sent to the
// endpoint AWS_ENDPOINT_URL_EVENTBRIDGE names: the bus ARN, source, detail type and a JSON detail
// saying it is a test. An entry the bus refuses is a failure naming its error code; without
// credentials nothing is sent and the failure says why.
func TestEventBridgePutsOneSignedEvent(t *testing.T) {
	const arn = "arn:aws:events:eu-west-1:123456789012:event-bus/alerts"
	bus := newEventBridge(t, "eu-west-1", "AKIDMGMTAPITEST", "s3cr3t-key")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDMGMTAPITEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-key")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", bus.URL)
	data := `{"name":"bus","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"` + arn + `","detail":"example_detail",` +
		`"detailType":"mgmtapi alert","source":"com.example.alerts","roleName":"mgmtapi"}}`
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		succeeded(t, testConfig(t, env, key, data))
		succeeded(t, testStored(t, env, key, create(t, env, key, data)))
		bus.mu.Lock()
		got := bus.got
		bus.got = nil
		bus.mu.Unlock()
		if len(got) != 2 {
			t.Fatalf("the bus got %d events, want 2", len(got))
		}
		entry := apitest.At(got[0], "Entries", 0)
		var detail map[string]any
		if err := json.Unmarshal([]byte(str(apitest.At(entry, "Detail"))), &detail); err != nil {
			t.Fatalf("detail %v: %v", apitest.At(entry, "Detail"), err)
		}
		if apitest.At(entry, "EventBusName") != arn || apitest.At(entry, "Source") != "com.example.alerts" || apitest.At(entry, "DetailType") != "mgmtapi alert" ||
			!strings.HasPrefix(str(detail["title"]), "[TEST]") || detail["status"] != "test" || detail["detail"] != "example_detail" {
			t.Errorf("entry %v", entry)
		}

		bus.mu.Lock()
		bus.failed = "AccessDeniedException"
		bus.mu.Unlock()
		a := testConfig(t, env, key, data)
		bus.mu.Lock()
		bus.failed, bus.got = "", nil
		bus.mu.Unlock()
		if a.Failure == nil || !strings.Contains(a.Failure.ErrorMessage, "AccessDeniedException") {
			t.Errorf("refused entry: %+v", a.Failure)
		}
	})
}

// TestEventBridgeWrongKeyIsAFailure: a signature the bus refuses is a failure with its 403.
func TestEventBridgeWrongKeyIsAFailure(t *testing.T) {
	bus := newEventBridge(t, "eu-west-1", "AKIDMGMTAPITEST", "s3cr3t-key")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDMGMTAPITEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-the-key")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", bus.URL)
	data := `{"name":"bus","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"arn:aws:events:eu-west-1:123456789012:event-bus/alerts",` +
		`"detailType":"mgmtapi alert","source":"com.example.alerts"}}`
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		if a := testConfig(t, env, key, data); a.Failure == nil || a.Failure.StatusCode != 403 || !strings.Contains(a.Failure.ErrorMessage, "signature") {
			t.Errorf("a wrong key: %+v", a.Failure)
		}
	})
}
