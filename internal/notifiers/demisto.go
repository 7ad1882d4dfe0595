package notifiers

import (
	"context"
	"net/http"
)

// demisto is DEMISTO (Cortex XSOAR): a POST to the webhook's url of its payload template
// rendered, or without one of the log-shaped document XSOAR's Coralogix integration reads
// (logDocument).
type demisto struct{}

func (demisto) Check(t Target) error {
	if err := checkTemplate(t.Settings["payload"]); err != nil {
		return fieldErr("demisto.payload", "%s", err)
	}
	return nil
}

func (demisto) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	if t.Settings["payload"] != "" {
		return bodyRequest(ctx, http.MethodPost, t.URL, render(t.Settings["payload"], m))
	}
	return postJSON(ctx, t.URL, logDocument(m, "Security incident"))
}

func (demisto) Retry(status int) bool { return retryServer(status) }

// sendLog is SEND_LOG: a POST to the webhook's url of its payload template rendered, or without
// one of a log-shaped document (logDocument): the notification as one log entry. mgmtapi has no
// log ingestion of its own, so a send-log webhook without a url is stored but cannot be
// delivered (the failure says so).
type sendLog struct{}

func (sendLog) Check(t Target) error {
	if err := checkTemplate(t.Settings["payload"]); err != nil {
		return fieldErr("sendLog.payload", "%s", err)
	}
	return nil
}

func (sendLog) Request(ctx context.Context, t Target, m Message) (*http.Request, error) {
	if t.URL == "" {
		return nil, fieldErr("url", "this send-log webhook names no url: mgmtapi has no log ingestion of its own to send it to")
	}
	if t.Settings["payload"] != "" {
		return bodyRequest(ctx, http.MethodPost, t.URL, render(t.Settings["payload"], m))
	}
	return postJSON(ctx, t.URL, logDocument(m, "Alert notification"))
}

func (sendLog) Retry(status int) bool { return retryServer(status) }

// logSeverity are the numeric log severities (1 debug … 6 critical) of message severities.
var logSeverity = map[string]int{"info": 3, "warning": 4, "error": 5, "critical": 6}

// logDocument is m as a log-ingestion document: application, subsystem and computer names
// (from the fields APPLICATION_NAME, SUBSYSTEM_NAME, COMPUTER_NAME, else mgmtapi), and one entry
// with the severity, the time in milliseconds and the notification as its text object.
func logDocument(m Message, kind string) map[string]any {
	name := func(k, def string) string {
		if v := m.Fields[k]; v != "" {
			return v
		}
		return def
	}
	text := map[string]any{"integration_text": kind, "alert_name": m.Title, "alert_description": m.Text,
		"alert_id": m.Key, "alert_url": m.Link, "alert_severity": m.severity(), "alert_status": m.Status}
	for k, v := range m.Fields {
		if _, taken := text[k]; !taken {
			text[k] = v
		}
	}
	entry := map[string]any{"severity": logSeverity[m.severity()], "text": text}
	if !m.Time.IsZero() {
		entry["timestamp"] = m.Time.UnixMilli()
	}
	return map[string]any{
		"applicationName": name("APPLICATION_NAME", "mgmtapi"),
		"subsystemName":   name("SUBSYSTEM_NAME", "alerts"),
		"computerName":    name("COMPUTER_NAME", "mgmtapi"),
		"logEntries":      []any{entry},
	}
}
