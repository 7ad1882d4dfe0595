package notifiers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// ibmEventNotifications is IBM_EVENT_NOTIFICATIONS: a CloudEvents 1.0 notification POSTed to
// an Event Notifications instance's notifications endpoint,
// https://{regionId}.event-notifications.cloud.ibm.com/event-notifications/v1/instances/{eventNotificationsInstanceId}/notifications
// (the private endpoint's host starts with "private." under ENDPOINT_TYPE_PRIVATE), or to the
// webhook's url when it names one. The event's source and ibmensourceid are sourceId. The public
// settings carry no IAM credential, so a webhook's notifications go without an Authorization
// header (the instance must accept them through a proxy or gateway at url that adds it); an
// IBM_EVENT_NOTIFICATIONS connector's carry its API key (the apiKey setting), exchanged at IAM
// (iamUrl) for the bearer token of each notification (Authorize), and may give the event's data
// (the data setting, a JSON object).
type ibmEventNotifications struct{}

var ibmRegion = regexp.MustCompile(`^[a-z]{2}-[a-z]+(-[0-9])?$`)

func (ibmEventNotifications) Check(t Target) error {
	switch {
	case t.Settings["eventNotificationsInstanceId"] == "":
		return fieldErr("ibmEventNotifications.eventNotificationsInstanceId", "required: the id (GUID) of the Event Notifications instance")
	case t.Settings["regionId"] == "":
		return fieldErr("ibmEventNotifications.regionId", "required: the IBM Cloud region of the instance, for example us-south")
	case !ibmRegion.MatchString(t.Settings["regionId"]):
		return fieldErr("ibmEventNotifications.regionId", "must be an IBM Cloud region such as us-south or eu-de")
	case t.Settings["sourceId"] == "":
		return fieldErr("ibmEventNotifications.sourceId", "required: the id of the API source registered in the instance")
	}
	switch t.Settings["endpointType"] {
	case "", "ENDPOINT_TYPE_DEFAULT_OR_PUBLIC", "ENDPOINT_TYPE_PRIVATE":
	default:
		return fieldErr("ibmEventNotifications.endpointType", "must be ENDPOINT_TYPE_DEFAULT_OR_PUBLIC or ENDPOINT_TYPE_PRIVATE")
	}
	return nil
}

func (ibmEventNotifications) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	u := t.URL
	if u == "" {
		host := t.Settings["regionId"] + ".event-notifications.cloud.ibm.com"
		if t.Settings["endpointType"] == "ENDPOINT_TYPE_PRIVATE" {
			host = "private." + host
		}
		u = (&url.URL{Scheme: "https", Host: host,
			Path: "/event-notifications/v1/instances/" + url.PathEscape(t.Settings["eventNotificationsInstanceId"]) + "/notifications"}).String()
	}
	ev := map[string]any{
		"specversion":       "1.0",
		"id":                eventID(m),
		"source":            t.Settings["sourceId"],
		"type":              "com.mgmtapi.alert:" + m.Status,
		"ibmensourceid":     t.Settings["sourceId"],
		"ibmenseverity":     m.severity(),
		"datacontenttype":   "application/json",
		"data":              ibmData(t, m),
		"ibmendefaultshort": cut(m.Title, 250),
		"ibmendefaultlong":  cut(m.Text, 5000),
	}
	if !m.Time.IsZero() {
		ev["time"] = m.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return postJSON(ctx, u, ev)
}

func (ibmEventNotifications) Retry(status int) bool { return retryServer(status) }

// ibmData is the event's data: the data setting (a JSON object a connector's preset rendered), else
// the message.
func ibmData(t Target, m Message) any {
	var data map[string]any
	if json.Unmarshal([]byte(t.Settings["data"]), &data) == nil && data != nil {
		return data
	}
	return map[string]any{"title": m.Title, "text": m.Text, "status": m.Status, "link": m.Link, "fields": nonNil(m.Fields)}
}

// Authorize sets the bearer token IAM gives for the apiKey setting, when there is one: a POST of
// the key (grant type apikey) to the iamUrl setting (IBM Cloud's endpoint when empty). A refusal
// of the key is final; IAM's 429 and 5xx, and network errors, are retried. The error never quotes
// the key nor the token.
func (ibmEventNotifications) Authorize(ctx context.Context, client *http.Client, t Target, req *http.Request) Outcome {
	key := t.Settings["apiKey"]
	if key == "" {
		return Outcome{}
	}
	iam := t.Settings["iamUrl"]
	if iam == "" {
		iam = connectortypes.DefaultIBMTokenURL
	}
	form := url.Values{"grant_type": {"urn:ibm:params:oauth:grant-type:apikey"}, "apikey": {key}}
	treq, err := http.NewRequestWithContext(ctx, http.MethodPost, iam, strings.NewReader(form.Encode()))
	if err != nil {
		return Outcome{Err: errors.New("iamUrl: not a URL a request can be sent to")}
	}
	treq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	treq.Header.Set("Accept", "application/json")
	res, err := client.Do(treq)
	if err != nil {
		return Outcome{Err: fmt.Errorf("IBM IAM at %s did not answer: %v", treq.URL.Hostname(), errors.Unwrap(err)), Retry: true}
	}
	defer res.Body.Close()
	var token struct {
		AccessToken string `json:"access_token"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&token) != nil || token.AccessToken == "" {
		return Outcome{Status: res.StatusCode, Retry: retryServer(res.StatusCode),
			Err: fmt.Errorf("IBM IAM at %s answered %d and no access token for the connector's apiKey", treq.URL.Hostname(), res.StatusCode)}
	}
	req.Header.Set("Authorization", "Bearer "+token.AccessToken)
	return Outcome{}
}

// eventID is a CloudEvents id for m: its key and status, unique per transition.
func eventID(m Message) string {
	id := m.Key
	if id == "" {
		id = "mgmtapi"
	}
	return id + ":" + m.Status + ":" + itoa(int(m.Time.UnixMilli()%1e9))
}
