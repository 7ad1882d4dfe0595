package notifiers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// opsgenie is OPSGENIE: an alert of Opsgenie's Alerts API POSTed to the webhook's url (the
// integration's URL, which carries its key as the apiKey query parameter; the key, when there, is
// also sent as the API's GenieKey authorization): message (the title), alias (the message's key,
// so a resolution closes the alert it opened), description, priority (P1 critical … P5 info),
// details (the fields), source. A resolution of an alias is a POST of its close action to
// …/{alias}/close?identifierType=alias when the url is the Alerts API's (…/v2/alerts), and an
// alert otherwise.
type opsgenie struct{}

func (opsgenie) Check(Target) error { return nil }

var opsgeniePriority = map[string]string{"critical": "P1", "error": "P2", "warning": "P3", "info": "P5"}

func (opsgenie) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fieldErr("url", "not a URL")
	}
	key := u.Query().Get("apiKey")
	var req *http.Request
	if m.Status == Resolved && m.Key != "" && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v2/alerts") {
		c := *u
		alias := cut(m.Key, 512)
		c.Path = strings.TrimSuffix(u.Path, "/") + "/" + alias + "/close"
		c.RawPath = strings.TrimSuffix(u.EscapedPath(), "/") + "/" + url.PathEscape(alias) + "/close"
		q := c.Query()
		q.Set("identifierType", "alias")
		c.RawQuery = q.Encode()
		req, err = postJSON(ctx, c.String(), map[string]any{"source": "mgmtapi", "note": cut(m.Text, 25000)})
	} else {
		details := map[string]string{}
		for k, v := range m.Fields {
			details[k] = v
		}
		if m.Link != "" {
			details["link"] = m.Link
		}
		details["status"] = m.Status
		alert := map[string]any{"message": cut(m.Title, 130), "description": cut(m.Text, 15000),
			"priority": opsgeniePriority[m.severity()], "details": details, "source": "mgmtapi"}
		if m.Key != "" {
			alert["alias"] = cut(m.Key, 512)
		}
		req, err = postJSON(ctx, t.URL, alert)
	}
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "GenieKey "+key)
	}
	return req, nil
}

func (opsgenie) Retry(status int) bool { return retryServer(status) }
