package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/net/http/httpguts"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ConnectorType is the kind of receiver a record is sent to; the names are the public
// notification-center connector types.
type ConnectorType string

// The connector types the worker sends: the HTTP ones, and Email (email.go). EVENTBRIDGE
// connectors are sent as outgoing webhook records (Webhook); PAGERDUTY_INCIDENTS as PagerDuty
// events; IBM Event Notifications connectors are not delivered, and Enqueue refuses any other type.
const (
	GenericHTTPS   ConnectorType = "GENERIC_HTTPS"
	Slack          ConnectorType = "SLACK"
	PagerDuty      ConnectorType = "PAGERDUTY"
	MicrosoftTeams ConnectorType = "MICROSOFT_TEAMS"
	// ServiceNow records create an incident with the Table API (serviceNowIncident).
	ServiceNow ConnectorType = "SERVICE_NOW"
	// IncidentIO records are events of an incident.io HTTP alert source (incidentIOEvent).
	IncidentIO ConnectorType = "INCIDENT_IO"
)

// PublicName is the type's name in the case-notification documents (CONNECTOR_TYPE_SLACK, ...).
func (t ConnectorType) PublicName() string {
	switch t {
	case PagerDuty:
		return "CONNECTOR_TYPE_PAGER_DUTY"
	case "", IncidentIO, Webhook:
		// incident.io is a preview type the public enumeration does not name yet, and it has no
		// value for outgoing webhooks' records (an EVENTBRIDGE connector's among them): a value
		// of our own would break clients that decode the enumeration.
		return "CONNECTOR_TYPE_UNSPECIFIED"
	}
	return "CONNECTOR_TYPE_" + string(t)
}

// EventKind is what happened to the entity a record notifies about.
type EventKind string

// The event kinds. For PagerDuty, triggered, opened, changed and commented are a trigger (a
// trigger with the dedup key of an open alert adds to it), acknowledged an acknowledge and
// resolved a resolve.
const (
	Triggered    EventKind = "triggered"
	Acknowledged EventKind = "acknowledged"
	Resolved     EventKind = "resolved"
	Opened       EventKind = "opened"
	Changed      EventKind = "changed"
	Commented    EventKind = "commented"
)

func (k EventKind) known() bool {
	switch k {
	case Triggered, Acknowledged, Resolved, Opened, Changed, Commented:
		return true
	}
	return false
}

// Delivery is one notification to one connector, as Enqueue stores it.
type Delivery struct {
	TeamID int64
	// RequestID is the notification request (a UUID): the deliveries one event caused through
	// its routes share it. It is the public requestNotificationId.
	RequestID string
	// RouterID and RouterName name the router that chose the connector; RouterName defaults to
	// RouterID.
	RouterID, RouterName string
	// ConnectorID, ConnectorName (defaults to ConnectorID) and ConnectorType name the receiver.
	ConnectorID, ConnectorName string
	ConnectorType              ConnectorType
	// URL is the destination: the webhook URL, or PagerDuty's events endpoint (connectortypes.DefaultPagerDutyURL
	// when empty); empty for Email, whose recipients are fields.to. A secret.
	URL string
	// RoutingKey is PagerDuty's integration key. A secret.
	RoutingKey string
	// Method is a generic HTTPS connector's method, POST (the default, and the only one of the
	// other types) or PUT.
	Method string
	// Headers are a generic HTTPS connector's additional headers (authorization belongs here), or
	// a ServiceNow or incident.io record's Authorization (required for those: basic credentials,
	// the alert source's bearer token). A secret. They cannot replace Content-Type, User-Agent
	// nor Idempotency-Key; the other types have none.
	Headers map[string]string
	// Fields are the rendered fields. A generic HTTPS webhook gets them all as its JSON body;
	// ServiceNow reads short_description (required), description, impact and urgency; incident.io
	// title (required), description and metadata (an object);
	// Slack reads text (required) and blocks; PagerDuty summary (required on a trigger), source,
	// severity (critical, error, warning or info; error when absent), component, group, class
	// and custom_details; Microsoft Teams title, text (one of the two required) and facts (an
	// object of strings); Email to (the recipients, see connectortypes.ParseRecipients), subject and text.
	Fields map[string]any
	// EntityType and EntityID name what the event is about (case, incident, ...), EventKind what
	// happened to it.
	EntityType, EntityID string
	EventKind            EventKind
	// CaseID, when not empty, is the case whose history records the outcome
	// (notificationSent, notificationFailed) and under which the list operation shows it.
	CaseID string
	// IdempotencyKey is sent as the Idempotency-Key header; unique per team. Empty: derived from
	// the team, request and connector, so the same notification always has the same key.
	IdempotencyKey string
	// DedupKey is PagerDuty's dedup_key (incident.io's deduplication_key, ServiceNow's
	// correlation_id), the same for the trigger, acknowledge and resolve of one entity. Empty:
	// derived from the team and the entity.
	DedupKey string
	// WebhookType, WebhookSettings and Message are an outgoing webhook's (ConnectorType Webhook,
	// see WebhookRecord): its public type, the snapshot of its settings (a secret) and the
	// rendered notification (a JSON object), sent through Options.Webhooks. Its URL may be empty;
	// its Fields, Method, Headers and RoutingKey are not used.
	WebhookType     string
	WebhookSettings map[string]string
	Message         json.RawMessage
	// Test marks a test notification (Sender.SendNow only; Enqueue refuses it): it is sent
	// marked as one (markTest, TestHeader).
	Test bool
}

// IncompleteError is Enqueue's refusal of a delivery that cannot be sent as it is (see Enqueue);
// its message names the field and the rule, never a secret.
type IncompleteError struct{ err error }

func (e IncompleteError) Error() string { return e.err.Error() }
func (e IncompleteError) Unwrap() error { return e.err }

// centerID is the public form of router and connector ids.
var centerID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// maxFieldsBytes bounds a record's rendered fields.
const maxFieldsBytes = 256 << 10

// Enqueue writes d to the outbox in tx, due at once. A record whose idempotency key the team
// already has is the same notification and is not written again (nil). It returns an error
// naming the field and rule when d is incomplete: a missing team, request id (a UUID), router
// id, connector id, URL (absolute http or https; none for Email) or PagerDuty routing key, email
// recipients that connectortypes.ParseRecipients refuses, an unknown connector
// type or event kind, fields that do not encode as JSON or are larger than 256 KiB, or a
// PagerDuty trigger, Slack message or Teams card without the field it needs.
//
// Those refusals are IncompleteErrors; any other error is the database's.
func Enqueue(ctx context.Context, tx *db.Tx, d Delivery) error {
	if d.Test {
		return IncompleteError{fmt.Errorf("delivery test: a test notification is sent now (Sender.SendNow), never queued")}
	}
	if err := complete(&d); err != nil {
		return IncompleteError{err}
	}
	payload, err := json.Marshal(d.Fields)
	if err != nil {
		return IncompleteError{fmt.Errorf("delivery fields: %w", err)}
	}
	if d.ConnectorType == Webhook {
		payload = d.Message
	}
	headers, err := json.Marshal(d.Headers)
	if err != nil {
		return IncompleteError{fmt.Errorf("delivery headers: %w", err)}
	}
	settings := ""
	if d.WebhookSettings != nil {
		b, err := json.Marshal(d.WebhookSettings)
		if err != nil {
			return IncompleteError{fmt.Errorf("delivery webhookSettings: %w", err)}
		}
		settings = string(b)
	}
	if len(payload) > maxFieldsBytes {
		return IncompleteError{fmt.Errorf("delivery fields: %d bytes encoded; the most is %d", len(payload), maxFieldsBytes)}
	}
	now := tx.Now.UnixMicro()
	_, err = tx.ExecContext(ctx, `INSERT INTO deliveries (team_id, id, request_id, router_id, router_name,
		connector_id, connector_name, connector_type, url, routing_key, method, headers, payload, entity_type,
		entity_id, case_id, event_kind, idempotency_key, dedup_key, state, attempts, created_at, next_attempt_at,
		lease_owner, lease_until, status_code, error, finished_at, webhook_type, webhook_settings)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, 'pending', 0,
		$20, $20, '', 0, 0, '', 0, $21, $22)
		ON CONFLICT (team_id, idempotency_key) DO NOTHING`,
		d.TeamID, tx.NewID(), d.RequestID, d.RouterID, d.RouterName, d.ConnectorID, d.ConnectorName,
		string(d.ConnectorType), d.URL, d.RoutingKey, d.Method, string(headers), string(payload), d.EntityType,
		d.EntityID, d.CaseID, string(d.EventKind), d.IdempotencyKey, d.DedupKey, now, d.WebhookType, settings)
	if err != nil {
		return fmt.Errorf("enqueue delivery: %w", db.Translate(err))
	}
	return nil
}

// complete checks d and fills its defaults.
func complete(d *Delivery) error {
	id, err := uuid.Parse(d.RequestID)
	switch {
	case d.TeamID <= 0:
		return fmt.Errorf("delivery teamId: required")
	case err != nil || len(d.RequestID) != 36:
		return fmt.Errorf("delivery requestId: must be a UUID, not %q", d.RequestID)
	case !centerID.MatchString(d.RouterID):
		return fmt.Errorf("delivery routerId: must be 1 to 128 letters, digits, _ and -, starting with a letter or digit, not %q", d.RouterID)
	case !centerID.MatchString(d.ConnectorID):
		return fmt.Errorf("delivery connectorId: must be 1 to 128 letters, digits, _ and -, starting with a letter or digit, not %q", d.ConnectorID)
	case d.EntityType == "" || d.EntityID == "":
		return fmt.Errorf("delivery entityType and entityId: required")
	case !d.EventKind.known():
		return fmt.Errorf("delivery eventKind: %q is not one of triggered, acknowledged, resolved, opened, changed, commented", d.EventKind)
	}
	d.RequestID = id.String()
	if d.RouterName == "" {
		d.RouterName = d.RouterID
	}
	if d.ConnectorName == "" {
		d.ConnectorName = d.ConnectorID
	}
	d.RouterName, d.ConnectorName = connectortypes.CutBytes(d.RouterName, 256), connectortypes.CutBytes(d.ConnectorName, 256)
	if d.Method == "" {
		d.Method = http.MethodPost
	}
	if d.ConnectorType == Webhook {
		return completeWebhook(d)
	}
	if _, ok := httpSender(d.ConnectorType); !ok && d.ConnectorType != Email {
		return fmt.Errorf("delivery connectorType: %q is not delivered by mgmtapi (GENERIC_HTTPS, SLACK, PAGERDUTY, MICROSOFT_TEAMS, EMAIL, SERVICE_NOW, INCIDENT_IO are)", d.ConnectorType)
	}
	// What the record holds besides its fields is its type's rule (connectortypes' RecordShape).
	stored := connectortypes.StoredDelivery{TeamID: d.TeamID, URL: d.URL, Method: d.Method, Headers: d.Headers,
		RoutingKey: d.RoutingKey, DedupKey: d.DedupKey, EntityType: d.EntityType, EntityID: d.EntityID}
	if err := connectortypes.CheckRecord(oas.ConnectorType(d.ConnectorType), &stored); err != nil {
		return err
	}
	d.URL, d.DedupKey = stored.URL, stored.DedupKey
	for name := range d.Headers {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf("delivery headers: %q is not a valid header name", name)
		}
		if reservedHeader(name) {
			return fmt.Errorf("delivery headers: %s is set by mgmtapi and cannot be replaced", http.CanonicalHeaderKey(name))
		}
	}
	if d.ConnectorType == Email {
		// sent through the SMTP server: its message is built here
		d.IdempotencyKey = idempotencyKey(d)
		_, err := emailOf(recordOf(d))
		return err
	}
	d.IdempotencyKey = idempotencyKey(d)
	// the request builders check the fields they need: the same check at enqueue and at send
	if _, err := buildBody(recordOf(d)); err != nil {
		return err
	}
	return nil
}

// checkURL checks that u is an absolute http or https URL; the error names the rule only (the URL
// is a secret).
func checkURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
		return fmt.Errorf("delivery url: must be an absolute http or https URL")
	}
	return nil
}

// idempotencyKey is d's key: its own, else derived from the team, request and connector, so the
// same notification always has the same key.
func idempotencyKey(d *Delivery) string {
	if d.IdempotencyKey != "" {
		return d.IdempotencyKey
	}
	sum := sha256.Sum256([]byte(strconv.FormatInt(d.TeamID, 10) + "\x00" + d.RequestID + "\x00" + d.ConnectorID))
	return hex.EncodeToString(sum[:16])
}

// record is a stored delivery as the worker and the list read it.
type record struct {
	TeamID                               int64
	ID, RequestID, RouterID, RouterName  string
	ConnectorID, ConnectorName           string
	ConnectorType                        ConnectorType
	URL, RoutingKey, Method              string
	Headers                              map[string]string
	Payload                              []byte
	EntityType, EntityID, CaseID         string
	EventKind                            EventKind
	IdempotencyKey, DedupKey             string
	State                                string
	Attempts                             int
	CreatedAt, NextAttemptAt, LeaseUntil int64
	LeaseOwner                           string
	StatusCode                           int
	Error                                string
	FinishedAt                           int64
	WebhookType                          string
	WebhookSettings                      map[string]string
	Test                                 bool // never stored: only SendNow sends tests
}

// recordOf is d as the worker would read it back.
func recordOf(d *Delivery) record {
	payload, _ := json.Marshal(d.Fields)
	if d.ConnectorType == Webhook {
		payload = d.Message
	}
	return record{WebhookType: d.WebhookType, WebhookSettings: d.WebhookSettings, TeamID: d.TeamID, RequestID: d.RequestID, RouterID: d.RouterID, RouterName: d.RouterName,
		ConnectorID: d.ConnectorID, ConnectorName: d.ConnectorName, ConnectorType: d.ConnectorType,
		URL: d.URL, RoutingKey: d.RoutingKey, Method: d.Method, Headers: d.Headers, Payload: payload, EntityType: d.EntityType, EntityID: d.EntityID,
		CaseID: d.CaseID, EventKind: d.EventKind, IdempotencyKey: d.IdempotencyKey, DedupKey: d.DedupKey, Test: d.Test}
}

// The states of a record.
const (
	statePending = "pending"
	stateSent    = "sent"
	stateFailed  = "failed"
)

const recordColumns = `team_id, id, request_id, router_id, router_name, connector_id, connector_name,
	connector_type, url, routing_key, method, headers, payload, entity_type, entity_id, case_id, event_kind, idempotency_key,
	dedup_key, state, attempts, created_at, next_attempt_at, lease_owner, lease_until, status_code, error,
	finished_at, webhook_type, webhook_settings`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(s scanner) (record, error) {
	var r record
	var payload, headers, ctype, kind, settings string
	err := s.Scan(&r.TeamID, &r.ID, &r.RequestID, &r.RouterID, &r.RouterName, &r.ConnectorID, &r.ConnectorName,
		&ctype, &r.URL, &r.RoutingKey, &r.Method, &headers, &payload, &r.EntityType, &r.EntityID, &r.CaseID, &kind,
		&r.IdempotencyKey, &r.DedupKey, &r.State, &r.Attempts, &r.CreatedAt, &r.NextAttemptAt, &r.LeaseOwner,
		&r.LeaseUntil, &r.StatusCode, &r.Error, &r.FinishedAt, &r.WebhookType, &settings)
	r.Payload = []byte(payload)
	if err == nil && headers != "" && headers != "null" {
		if jerr := json.Unmarshal([]byte(headers), &r.Headers); jerr != nil {
			return r, fmt.Errorf("delivery %s headers: %w", r.ID, jerr)
		}
	}
	if err == nil && settings != "" && settings != "null" {
		if jerr := json.Unmarshal([]byte(settings), &r.WebhookSettings); jerr != nil {
			return r, fmt.Errorf("delivery %s webhook settings: %w", r.ID, jerr)
		}
	}
	r.ConnectorType = ConnectorType(ctype)
	r.EventKind = EventKind(kind)
	return r, err
}

// reservedHeader reports whether mgmtapi sets the header itself on every request.
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type", "User-Agent", "Idempotency-Key", "Content-Length", "Host", "Transfer-Encoding":
		return true
	}
	return false
}

// host is the destination's host, the only part of it logs and errors name; "email" for an email
// (the SMTP server is the operator's, named in the outcome's error).
func (r *record) host() string {
	if r.ConnectorType == Email {
		return "email"
	}
	if r.ConnectorType == Webhook && r.URL == "" {
		return r.WebhookType
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Host
}

// cutMessage keeps an error message within the public bound (4096 characters), whole runes.
func cutMessage(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= 4096 {
		return s
	}
	cut := 4093
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// TriggerSent reports whether the team's connector was enqueued a triggered notification of the
// entity (whatever became of it), read in q. Routing asks it before an alert's resolution or
// acknowledgement: a connector that never saw the alert start is not told it ended.
func TriggerSent(ctx context.Context, q db.Querier, teamID int64, connectorID, entityType, entityID string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE team_id = $1 AND entity_type = $2
		AND entity_id = $3 AND connector_id = $4 AND event_kind = 'triggered' LIMIT 1) sent`,
		teamID, entityType, entityID, connectorID).Scan(&n)
	return n > 0, err
}
