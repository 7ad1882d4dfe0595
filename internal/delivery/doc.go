// Package delivery is the notification outbox and the worker that empties it.
//
// # Routing, in the worker
//
// A write transaction that triggers, acknowledges or resolves an incident, or opens, changes or
// comments on a case, records the event with a snapshot of its entity (db.Tx.Emit,
// notification_events) and does nothing more about it. The worker's routing stage (events.go)
// leases the recorded events, oldest first and one per entity at a time, and hands each to
// Options.Router (internal/routers: the team's routers and alert definitions, the scheduler
// rules' suppression, the presets' templates) outside any write transaction, so that no
// condition or template, however slow, runs while the database's writer waits; then, in one
// short transaction, it writes the deliveries the router chose and deletes the event. A worker
// that dies while routing loses the event to the others when its lease ends; an event whose
// routing failed maxRouteAttempts times is dropped and logged. Run routes beside sending; Drain
// and RouteEvents route first.
//
// # The outbox
//
// Enqueue writes one delivery record in the caller's transaction (the routing stage's): an
// event's deliveries commit together or not at all. A record holds everything needed to send it (team, connector id, name and type, destination URL,
// PagerDuty routing key, the rendered fields, the event it belongs to, an idempotency key and a
// PagerDuty dedup key), so that the worker reads no other area's tables.
//
// # The worker
//
// Worker claims due records, sends each as its connector type's public format (see bodies.go:
// a generic HTTPS webhook gets a JSON POST of the rendered fields, Slack an incoming-webhook
// message, PagerDuty an Events API v2 event, Microsoft Teams an Adaptive Card in the webhook
// envelope, ServiceNow a Table API incident insert with basic credentials, incident.io an HTTP
// alert source event with its bearer token; an email connector one message through the
// operator's SMTP server, email.go) and
// records the outcome. The records of outgoing webhooks (connector type Webhook: an alert
// definition's notificationGroup.webhooks[], webhook.go) keep the webhook's type, URL and
// settings snapshot and the rendered message; the worker hands them to Options.Webhooks, the
// webhook types' own delivery (internal/notifiers, which imports this package), and records its
// answer as any other: same lease, backoff, idempotency key and outcome. A claim is a lease: the record is the claiming worker's
// until the lease ends, so two workers (two replicas on PostgreSQL, `FOR UPDATE SKIP LOCKED`)
// never send one record at the same time, and a record whose worker died is claimed again when
// its lease ends. Every request carries the record's idempotency key (`Idempotency-Key` header)
// and PagerDuty events their dedup key, so a send repeated after a crash is recognisable as the
// same notification.
//
// Outcomes: 2xx → sent; 5xx, 429 and network errors are retried with exponential backoff and
// jitter (a 429's or 503's Retry-After, in seconds or as an HTTP date, is honoured) until the
// record's total retry time (Options.MaxRetryTime, from its creation) would be passed → failed;
// any other status fails at once. An email's SMTP 4xx replies and network errors are retried
// the same way, a 5xx reply fails at once. A record of a case appends notificationSent or
// notificationFailed to the case's history, in the transaction that records the outcome.
//
// A slow or dead receiver delays only its own connector's records: each connector has at most
// Options.PerConnector sends in flight, and the claim skips the connectors at their bound.
//
// # Outbound HTTP policy
//
// The worker's client refuses, when it connects (net.Dialer.Control, so that DNS answers and
// redirects are checked too), loopback, link-local, private, unspecified and multicast
// addresses, unless Policy allows private addresses or the address is in one of its CIDRs.
// Responses are read up to Options.ResponseLimit and the rest discarded. Logs and recorded
// errors name the connector id and the destination's host, never its URL or routing key.
//
// No handler calls the worker and it calls no handler; the list operation (handlers.go) reads
// the records.
package delivery
