package notifiers

import (
	"context"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
)

// jira is JIRA: a new issue through the Jira REST API (POST {site}/rest/api/2/issue, where site
// is the scheme and host of the webhook's url, the address of any page of the site), with basic
// authentication by the email and apiToken settings: project by projectKey, issue type Task,
// summary the title, description the text with the fields and the link.
type jira struct{}

func (jira) Check(t Target) error {
	switch {
	case t.Settings["email"] == "":
		return fieldErr("jira.email", "required: the address of the Jira account the apiToken belongs to")
	case t.Settings["apiToken"] == "":
		return fieldErr("jira.apiToken", "required: an API token of the Jira account")
	case t.Settings["projectKey"] == "":
		return fieldErr("jira.projectKey", "required: the key of the project the issues are created in")
	}
	if _, err := mail.ParseAddress(t.Settings["email"]); err != nil {
		return fieldErr("jira.email", "must be an email address")
	}
	return nil
}

func (jira) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fieldErr("url", "not a URL")
	}
	site := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/rest/api/2/issue"}
	var b strings.Builder
	b.WriteString(m.Text)
	for _, f := range m.facts() {
		b.WriteString("\n* " + f[0] + ": " + f[1])
	}
	if m.Link != "" {
		b.WriteString("\n\n" + m.Link)
	}
	issue := map[string]any{"fields": map[string]any{
		"project":     map[string]any{"key": t.Settings["projectKey"]},
		"issuetype":   map[string]any{"name": "Task"},
		"summary":     cut(strings.ReplaceAll(m.Title, "\n", " "), 255),
		"description": cut(b.String(), 30000),
	}}
	req, err := postJSON(ctx, site.String(), issue)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(t.Settings["email"], t.Settings["apiToken"])
	req.Header.Set("Accept", "application/json")
	return req, nil
}

func (jira) Retry(status int) bool { return retryServer(status) }
