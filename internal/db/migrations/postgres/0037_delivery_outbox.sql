-- The delivery outbox (internal/delivery). A row is one notification to one connector, written in
-- the transaction of the incident or case event that caused it, holding everything needed to send
-- it: the destination (url; routing_key for PagerDuty; method and headers, a JSON object, for a
-- generic HTTPS connector) and the rendered fields (payload, JSON). url, routing_key and headers
-- are secrets: they are never logged nor answered. The deliveries of one
-- event share request_id (the public requestNotificationId). state is pending until the worker
-- records the outcome: sent (status_code) or failed (error). A pending row is due when
-- next_attempt_at has passed and no worker holds it (lease_until passed); a worker claiming it
-- sets lease_owner and lease_until, so a crashed worker's rows are claimed again once the lease
-- ends. Times are microseconds since the epoch.
CREATE TABLE deliveries (
    team_id         BIGINT NOT NULL REFERENCES teams (id),
    id              TEXT    NOT NULL,
    request_id      TEXT    NOT NULL,
    router_id       TEXT    NOT NULL,
    router_name     TEXT    NOT NULL,
    connector_id    TEXT    NOT NULL,
    connector_name  TEXT    NOT NULL,
    connector_type  TEXT    NOT NULL,
    url             TEXT    NOT NULL,
    routing_key     TEXT    NOT NULL,
    method          TEXT    NOT NULL,
    headers         TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    entity_type     TEXT    NOT NULL,
    entity_id       TEXT    NOT NULL,
    case_id         TEXT    NOT NULL,
    event_kind      TEXT    NOT NULL,
    idempotency_key TEXT    NOT NULL,
    dedup_key       TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    attempts        BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    lease_owner     TEXT    NOT NULL,
    lease_until     BIGINT NOT NULL,
    status_code     BIGINT NOT NULL,
    error           TEXT    NOT NULL,
    finished_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, idempotency_key)
);
-- The worker's claim reads the due rows in order, only among the pending ones.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state = 'pending';
-- The list operation reads a case's deliveries.
CREATE INDEX deliveries_by_case ON deliveries (team_id, case_id, created_at) WHERE case_id <> '';
-- The claim's check that no earlier pending record of the same connector and dedup key waits.
CREATE INDEX deliveries_by_dedup ON deliveries (team_id, connector_id, dedup_key) WHERE state = 'pending' AND dedup_key <> '';
