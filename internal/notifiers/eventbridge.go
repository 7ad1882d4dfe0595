package notifiers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// eventBridge is AWS_EVENT_BRIDGE: one event put on the event bus eventBusArn with EventBridge's
// PutEvents (the AWS SDK for Go v2, signed with SigV4), in the bus's region, with the settings'
// source and detailType; its detail is the message as a JSON object (title, text, status,
// severity, key, link, time, fields), with the detail setting rendered in it as "detail" (or
// merged into it when it is a JSON object once its placeholders are replaced).
//
// The request is signed with the operator's AWS credentials, read from the standard variables
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or, when the webhook names a
// roleName, with the credentials of that role in the bus's account, assumed with the operator's
// (see roleCredentials). It is sent to EventBridge's endpoint of the region, or to
// AWS_ENDPOINT_URL_EVENTBRIDGE (else AWS_ENDPOINT_URL) when set, through the delivery client (the
// outbound address policy applies).
type eventBridge struct{}

var (
	// eventBusARN's groups: the partition, the region, the account.
	eventBusARN = regexp.MustCompile(`^arn:(aws[a-z-]*):events:([a-z0-9-]+):([0-9]{12}):event-bus/[A-Za-z0-9._/-]{1,256}$`)
	iamRoleName = regexp.MustCompile(`^[A-Za-z0-9+=,.@_-]{1,64}$`)
)

func (eventBridge) Check(t Target) error {
	switch {
	case t.Settings["eventBusArn"] == "":
		return fieldErr("awsEventBridge.eventBusArn", "required: the ARN of the event bus, arn:aws:events:<region>:<account>:event-bus/<name>")
	case !eventBusARN.MatchString(t.Settings["eventBusArn"]):
		return fieldErr("awsEventBridge.eventBusArn", "must be an event bus ARN, arn:aws:events:<region>:<account>:event-bus/<name>")
	case t.Settings["detailType"] == "":
		return fieldErr("awsEventBridge.detailType", "required: the detail-type of the events")
	case t.Settings["source"] == "":
		return fieldErr("awsEventBridge.source", "required: the source of the events")
	case t.Settings["roleName"] != "" && !iamRoleName.MatchString(t.Settings["roleName"]):
		return fieldErr("awsEventBridge.roleName", "must be an IAM role name (letters, digits and +=,.@_-, at most 64)")
	}
	return nil
}

func (eventBridge) Request(context.Context, Target, Message) (*http.Request, error) {
	return nil, errors.New("EventBridge events are sent by PutEvents (Deliver)")
}

func (eventBridge) Retry(status int) bool { return retryServer(status) }

// Deliver puts one event for m on t's bus through client, within ctx.
func (eventBridge) Deliver(ctx context.Context, client *http.Client, t Target, m Message) Outcome {
	arn := t.Settings["eventBusArn"]
	match := eventBusARN.FindStringSubmatch(arn)
	if match == nil {
		return Outcome{Err: errors.New("awsEventBridge.eventBusArn: not an event bus ARN")}
	}
	partition, region, account := match[1], match[2], match[3]
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if key == "" || secret == "" {
		return Outcome{Err: errors.New("EventBridge: mgmtapi has no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set)")}
	}
	var creds aws.CredentialsProvider = credentials.NewStaticCredentialsProvider(key, secret, os.Getenv("AWS_SESSION_TOKEN"))
	if role := t.Settings["roleName"]; role != "" {
		creds = roleCredentials(client, creds, region, fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, role))
		if _, err := creds.Retrieve(ctx); err != nil {
			return awsFailure(fmt.Sprintf("EventBridge: assuming the role %s, STS", role), err)
		}
	}
	opts := eventbridge.Options{
		Region:           region,
		Credentials:      creds,
		HTTPClient:       client,
		RetryMaxAttempts: 1,
	}
	if ep := firstEnv("AWS_ENDPOINT_URL_EVENTBRIDGE", "AWS_ENDPOINT_URL"); ep != "" {
		opts.BaseEndpoint = aws.String(ep)
	}
	detail, err := json.Marshal(eventDetail(t.Settings["detail"], m))
	if err != nil {
		return Outcome{Err: err}
	}
	out, err := eventbridge.New(opts).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{
		EventBusName: aws.String(arn),
		Source:       aws.String(t.Settings["source"]),
		DetailType:   aws.String(t.Settings["detailType"]),
		Detail:       aws.String(string(detail)),
		Time:         timePtr(m),
	}}})
	if err != nil {
		return awsFailure(fmt.Sprintf("EventBridge (%s)", region), err)
	}
	if out.FailedEntryCount > 0 && len(out.Entries) > 0 {
		e := out.Entries[0]
		return Outcome{Status: http.StatusOK, Retry: aws.ToString(e.ErrorCode) == "ThrottlingException" || aws.ToString(e.ErrorCode) == "InternalFailure",
			Err: fmt.Errorf("EventBridge refused the event: %s %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))}
	}
	return Outcome{Status: http.StatusOK}
}

// assumedRoles caches the credentials of the roles assumed (roleCredentials), by role ARN,
// region, STS endpoint and operator key: one AssumeRole per role until its credentials near
// their end, not one per event.
var assumedRoles sync.Map // string → *aws.CredentialsCache

// roleCredentials returns the credentials of the IAM role roleARN, assumed through STS's
// AssumeRole (session name "mgmtapi") with the operator's credentials, in region, at
// AWS_ENDPOINT_URL_STS (else AWS_ENDPOINT_URL) when set, through client; cached and renewed
// shortly before they expire. The role must trust the operator's principal.
func roleCredentials(client *http.Client, operator aws.CredentialsProvider, region, roleARN string) aws.CredentialsProvider {
	endpoint := firstEnv("AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL")
	key := strings.Join([]string{roleARN, region, endpoint, os.Getenv("AWS_ACCESS_KEY_ID")}, "|")
	if cached, ok := assumedRoles.Load(key); ok {
		return cached.(*aws.CredentialsCache)
	}
	opts := sts.Options{Region: region, Credentials: operator, HTTPClient: client, RetryMaxAttempts: 1}
	if endpoint != "" {
		opts.BaseEndpoint = aws.String(endpoint)
	}
	provider := stscreds.NewAssumeRoleProvider(sts.New(opts), roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = "mgmtapi"
	})
	cached, _ := assumedRoles.LoadOrStore(key, aws.NewCredentialsCache(provider))
	return cached.(*aws.CredentialsCache)
}

// awsFailure is the failed delivery of a request to an AWS service (what names it) that ended in
// err: with the service's HTTP status when it answered, retried when it failed on its side or
// could not be reached.
func awsFailure(what string, err error) Outcome {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		status := re.HTTPStatusCode()
		return Outcome{Status: status, Retry: retryServer(status),
			Err: fmt.Errorf("%s answered %d: %s", what, status, oneLine(re.Err.Error()))}
	}
	return Outcome{Retry: true, Err: fmt.Errorf("%s: %s", what, oneLine(err.Error()))}
}

// eventDetail is the event's detail: the message, with the detail setting rendered in it.
func eventDetail(setting string, m Message) map[string]any {
	d := map[string]any{"title": m.Title, "text": m.Text, "status": m.Status, "severity": m.severity(),
		"key": m.Key, "link": m.Link, "fields": nonNil(m.Fields)}
	if !m.Time.IsZero() {
		d["time"] = m.Time.UTC()
	}
	if setting == "" {
		return d
	}
	var obj map[string]any
	if err := json.Unmarshal(render(setting, m), &obj); err == nil {
		for k, v := range obj {
			d[k] = v
		}
		return d
	}
	d["detail"] = string(render(setting, m))
	return d
}

func timePtr(m Message) *time.Time {
	if m.Time.IsZero() {
		return nil
	}
	t := m.Time
	return &t
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// oneLine is s on one line, cut to 300 characters.
func oneLine(s string) string {
	return cut(strings.Join(strings.Fields(s), " "), 300)
}
