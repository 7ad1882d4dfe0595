package outgoingwebhooks_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	return newEventBridgeFor(t, region, aws.Credentials{AccessKeyID: key, SecretAccessKey: secret})
}

// newEventBridgeFor is newEventBridge for the credentials creds (a session token included).
func newEventBridgeFor(t *testing.T, region string, creds aws.Credentials) *eventBridgeReceiver {
	e := &eventBridgeReceiver{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if msg := checkSignature(r, body, "events", region, creds); msg != "" {
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
func checkSignature(r *http.Request, body []byte, service, region string, creds aws.Credentials) string {
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
	if creds.SessionToken != "" && r.Header.Get("X-Amz-Security-Token") != creds.SessionToken {
		return "wrong or missing session token"
	}
	err = v4.NewSigner().SignHTTP(context.Background(), creds, copyReq, hex.EncodeToString(sum[:]), service, region, when)
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
		`"detailType":"mgmtapi alert","source":"com.example.alerts"}}`
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

// stsReceiver is a loopback stand-in for STS's AssumeRole: it checks the request's SigV4
// signature (service sts, the region given, the operator's key pair) and answers the role's
// temporary credentials, as STS does, for the role ARN it expects; anything else is refused.
type stsReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	assumed int
}

func newSTS(t *testing.T, region, roleARN string, operator, role aws.Credentials) *stsReceiver {
	s := &stsReceiver{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, err := url.ParseQuery(string(body))
		refuse := func(status int, code, msg string) {
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>`+
				`<Code>%s</Code><Message>%s</Message></Error><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ErrorResponse>`, code, msg)
		}
		switch {
		case checkSignature(r, body, "sts", region, operator) != "":
			refuse(http.StatusForbidden, "SignatureDoesNotMatch", checkSignature(r, body, "sts", region, operator))
			return
		case err != nil || form.Get("Action") != "AssumeRole":
			refuse(http.StatusBadRequest, "InvalidAction", "not an AssumeRole request")
			return
		case form.Get("RoleArn") != roleARN:
			refuse(http.StatusForbidden, "AccessDenied", "not authorized to assume "+form.Get("RoleArn"))
			return
		}
		s.mu.Lock()
		s.assumed++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		_, _ = fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>`+
			`<AssumedRoleUser><Arn>%s/%s</Arn><AssumedRoleId>AROA3XFRBF535PLBIFPI4:%s</AssumedRoleId></AssumedRoleUser>`+
			`<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken>`+
			`<Expiration>%s</Expiration></Credentials></AssumeRoleResult>`+
			`<ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata></AssumeRoleResponse>`,
			roleARN, form.Get("RoleSessionName"), form.Get("RoleSessionName"), role.AccessKeyID, role.SecretAccessKey, role.SessionToken,
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	}))
	t.Cleanup(s.Close)
	return s
}

// TestEventBridgeAssumesTheRoleItNames: a webhook with a roleName puts its events with the
// credentials of that role in the bus's account (arn:aws:iam::<account>:role/<roleName>),
// assumed through STS's AssumeRole with the operator's credentials at AWS_ENDPOINT_URL_STS; the
// bus accepts only the role's. The role is assumed once for several events, not per event. A
// role STS refuses is a failure naming the role and STS's answer, and nothing is put.
func TestEventBridgeAssumesTheRoleItNames(t *testing.T) {
	const arn = "arn:aws:events:eu-central-1:210987654321:event-bus/alerts"
	operator := aws.Credentials{AccessKeyID: "AKIDMGMTAPIOPERATOR", SecretAccessKey: "operator-secret"}
	role := aws.Credentials{AccessKeyID: "ASIAMGMTAPIROLE", SecretAccessKey: "role-secret", SessionToken: "role-session-token"}
	sts := newSTS(t, "eu-central-1", "arn:aws:iam::210987654321:role/mgmtapi-events", operator, role)
	bus := newEventBridgeFor(t, "eu-central-1", role)
	t.Setenv("AWS_ACCESS_KEY_ID", operator.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", operator.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", bus.URL)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	hook := func(roleName string) string {
		return `{"name":"bus","type":"AWS_EVENT_BRIDGE","awsEventBridge":{"eventBusArn":"` + arn + `",` +
			`"detailType":"mgmtapi alert","source":"com.example.alerts","roleName":"` + roleName + `"}}`
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		sts.mu.Lock()
		assumedBefore := sts.assumed
		sts.mu.Unlock()
		succeeded(t, testConfig(t, env, key, hook("mgmtapi-events")))
		succeeded(t, testStored(t, env, key, create(t, env, key, hook("mgmtapi-events"))))
		bus.mu.Lock()
		got := len(bus.got)
		bus.got = nil
		bus.mu.Unlock()
		if got != 2 {
			t.Fatalf("the bus got %d events signed with the role's credentials, want 2", got)
		}
		sts.mu.Lock()
		assumed := sts.assumed - assumedBefore
		sts.mu.Unlock()
		if assumed > 1 {
			t.Errorf("the role was assumed %d times for two events; its credentials are kept until they near their end", assumed)
		}

		a := testConfig(t, env, key, hook("not-trusted"))
		if a.Failure == nil || !strings.Contains(a.Failure.ErrorMessage, "not-trusted") || !strings.Contains(a.Failure.ErrorMessage, "AccessDenied") {
			t.Errorf("a role STS refuses: %+v", a.Failure)
		}
		bus.mu.Lock()
		defer bus.mu.Unlock()
		if len(bus.got) != 0 {
			t.Errorf("the bus got %d events although the role was not assumed", len(bus.got))
		}
	})
}
