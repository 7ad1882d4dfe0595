package notifiers

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
)

// ibmEventNotifications is IBM_EVENT_NOTIFICATIONS: a CloudEvents 1.0 notification POSTed to
// an Event Notifications instance's notifications endpoint,
// https://{regionId}.event-notifications.cloud.ibm.com/event-notifications/v1/instances/{eventNotificationsInstanceId}/notifications
// (the private endpoint's host starts with "private." under ENDPOINT_TYPE_PRIVATE), or to the
// webhook's url when it names one. The event's source and ibmensourceid are sourceId. The public
// settings carry no IAM credential, so mgmtapi sends no Authorization header: the instance must
// accept the source's notifications through a proxy or gateway at url that adds it.
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
		"data":              map[string]any{"title": m.Title, "text": m.Text, "status": m.Status, "link": m.Link, "fields": nonNil(m.Fields)},
		"ibmendefaultshort": cut(m.Title, 250),
		"ibmendefaultlong":  cut(m.Text, 5000),
	}
	if !m.Time.IsZero() {
		ev["time"] = m.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return postJSON(ctx, u, ev)
}

func (ibmEventNotifications) Retry(status int) bool { return retryServer(status) }

// eventID is a CloudEvents id for m: its key and status, unique per transition.
func eventID(m Message) string {
	id := m.Key
	if id == "" {
		id = "mgmtapi"
	}
	return id + ":" + m.Status + ":" + itoa(int(m.Time.UnixMilli()%1e9))
}
