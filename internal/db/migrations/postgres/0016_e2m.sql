-- Each team's events-to-metrics rules. A rule's document is the JSON of its checked, normalised
-- body (id, name, type, queries, metric fields and labels); the server-set parts (times, the
-- permutation limit) are columns. The unique index on (team_id, name) keeps names unique per team
-- even under concurrent writers; writes also serialise per team (see internal/e2m), so the API
-- checks a whole batch's end state before any row changes. The list reads by create time, then id.
CREATE TABLE e2m_rules (
    team_id            BIGINT NOT NULL REFERENCES teams (id),
    id                 TEXT   NOT NULL,
    name               TEXT   NOT NULL,
    permutations_limit BIGINT NOT NULL,
    document           TEXT   NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE UNIQUE INDEX e2m_rules_by_name ON e2m_rules (team_id, name);

CREATE INDEX e2m_rules_by_create_time ON e2m_rules (team_id, created_at, id);
