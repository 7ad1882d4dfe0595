package notifiers

import (
	"context"
	"errors"
	"net/http"
	"regexp"
)

// eventBridge is AWS_EVENT_BRIDGE. Its settings are checked (eventBusArn an EventBridge event
// bus ARN, detailType and source required, roleName an IAM role name when given), and stored;
// mgmtapi does not deliver to EventBridge yet (PutEvents with the AWS SDK is left for later), and
// a test says so.
type eventBridge struct{}

var (
	eventBusARN = regexp.MustCompile(`^arn:aws[a-z-]*:events:[a-z0-9-]+:[0-9]{12}:event-bus/[A-Za-z0-9._/-]{1,256}$`)
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
	return nil, errors.New("mgmtapi does not deliver AWS_EVENT_BRIDGE webhooks yet (EventBridge PutEvents is not implemented); the webhook is stored and checked")
}

func (eventBridge) Retry(int) bool { return false }
