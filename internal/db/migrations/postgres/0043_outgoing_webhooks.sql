-- Each team's outgoing webhooks (issue 33 §3): the integrations that connectors and alert
-- definitions deliver through. The document is the webhook as clients wrote it (OutgoingWebhookInputData),
-- settings in clear (never logged); the columns beside it are what queries filter and order by.
-- external_id is the webhook's number within its team, by which alert definitions name it.
CREATE TABLE outgoing_webhooks (
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    id           TEXT   NOT NULL,
    external_id  BIGINT NOT NULL,
    webhook_type TEXT   NOT NULL,
    name         TEXT   NOT NULL,
    document     TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, external_id)
);

CREATE INDEX outgoing_webhooks_by_time ON outgoing_webhooks (team_id, created_at, id);
