package notifiers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// generic is GENERIC: a request of the webhook's method (POST when UNKNOWN or not set; GET
// sends no body) to its URL with its headers (over the default Content-Type application/json), the body its payload template rendered, or without
// a template the message as JSON (defaultBody). Settings: method, payload; Target.Headers.
type generic struct{}

// reservedHeaders belong to the transport or mark tests; a webhook cannot set them. Content-Type
// and User-Agent may be given (the vendor's examples send Content-Type).
var reservedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", TestHeader}

func (generic) Check(t Target) error {
	switch t.Settings["method"] {
	case "", "UNKNOWN", "GET", "POST", "PUT":
	default:
		return fieldErr("genericWebhook.method", "must be one of GET, POST, PUT")
	}
	for name, value := range t.Headers {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") || !validHeaderName(name) {
			return fieldErr("genericWebhook.headers", "%q is not a header name", name)
		}
		for _, r := range reservedHeaders {
			if strings.EqualFold(name, r) {
				return fieldErr("genericWebhook.headers", "%s is set by the transport or by mgmtapi and cannot be given", r)
			}
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return fieldErr("genericWebhook.headers", "the value of %s holds a line break or NUL", name)
		}
	}
	if err := checkTemplate(t.Settings["payload"]); err != nil {
		return fieldErr("genericWebhook.payload", "%s", err)
	}
	return nil
}

func validHeaderName(name string) bool {
	for _, c := range name {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

func (generic) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	method := t.Settings["method"]
	if method == "" || method == "UNKNOWN" {
		method = http.MethodPost
	}
	var body []byte
	if method != http.MethodGet {
		body = templatedBody(t.Settings["payload"], m)
	}
	req, err := bodyRequest(ctx, method, t.URL, body)
	if err != nil {
		return nil, err
	}
	for name, value := range t.Headers {
		req.Header.Set(name, value)
	}
	return req, nil
}

func (generic) Retry(status int) bool { return retryServer(status) }

// templatedBody is tmpl rendered for m, or defaultBody when tmpl is empty.
func templatedBody(tmpl string, m Message) []byte {
	if strings.TrimSpace(tmpl) == "" {
		return defaultBody(m)
	}
	return render(tmpl, m)
}

// defaultBody is the message as one JSON object: title, text, status, severity, key, link,
// time, fields.
func defaultBody(m Message) []byte {
	v := map[string]any{"title": m.Title, "text": m.Text, "status": m.Status, "severity": m.severity(),
		"key": m.Key, "link": m.Link, "fields": nonNil(m.Fields)}
	if !m.Time.IsZero() {
		v["time"] = m.Time.UTC()
	}
	b, _ := json.Marshal(v)
	return b
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
