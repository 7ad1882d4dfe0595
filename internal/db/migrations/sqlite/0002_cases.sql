-- Cases, their events and KPI breaches. A team numbers its cases itself (teams.last_case_number),
-- inside the transaction that opens the case, so numbers have no gap and no duplicate.
ALTER TABLE teams ADD COLUMN last_case_number INTEGER NOT NULL DEFAULT 0;

CREATE TABLE case_kpi_thresholds (
    team_id    INTEGER NOT NULL PRIMARY KEY REFERENCES teams (id),
    document   TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE cases (
    team_id           INTEGER NOT NULL REFERENCES teams (id),
    id                TEXT    NOT NULL,
    number            INTEGER NOT NULL,
    title             TEXT    NOT NULL,
    -- title_folded is the title in lower case (Go's strings.ToLower), for textSearch: SQLite's
    -- LOWER folds ASCII only.
    title_folded      TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    system_priority   TEXT    NOT NULL,
    priority_override TEXT    NOT NULL DEFAULT '',
    priority          TEXT    NOT NULL,
    category          TEXT    NOT NULL,
    assignee          TEXT    NOT NULL DEFAULT '',
    group_key         TEXT    NOT NULL DEFAULT '',
    receiver          TEXT    NOT NULL DEFAULT '',
    labels            TEXT    NOT NULL,
    groupings         TEXT    NOT NULL,
    -- alerts holds every alert of the case with its own state (firing or not); indicators is the
    -- caseIndicators.alertIndicators document derived from it.
    alerts            TEXT    NOT NULL,
    indicators        TEXT    NOT NULL,
    resolution        TEXT    NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    acknowledged_at   INTEGER,
    resolved_at       INTEGER,
    closed_at         INTEGER,
    last_update_at    INTEGER NOT NULL,
    sync_requested_at INTEGER,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, number)
);
CREATE INDEX cases_by_created ON cases (team_id, created_at);
-- At most one open case per Alertmanager group: concurrent notifications of a new group cannot
-- both open one.
CREATE UNIQUE INDEX cases_open_group ON cases (team_id, group_key)
    WHERE group_key <> '' AND status IN ('CASE_STATUS_ACTIVE', 'CASE_STATUS_ACKNOWLEDGED');

-- The labels (kind 'label') and groupings (kind 'grouping') of each case, one row per pair, for
-- the list filters.
CREATE TABLE case_labels (
    team_id INTEGER NOT NULL REFERENCES teams (id),
    case_id TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    value   TEXT    NOT NULL,
    PRIMARY KEY (team_id, case_id, kind, key)
);
CREATE INDEX case_labels_by_pair ON case_labels (team_id, kind, key, value);

CREATE TABLE case_events (
    team_id    INTEGER NOT NULL REFERENCES teams (id),
    id         TEXT    NOT NULL,
    case_id    TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT    NOT NULL,
    actor      TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    event_time INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, case_id, seq)
);

CREATE TABLE case_kpi_breaches (
    team_id       INTEGER NOT NULL REFERENCES teams (id),
    id            TEXT    NOT NULL,
    case_id       TEXT    NOT NULL,
    kpi_type      TEXT    NOT NULL,
    since_at      INTEGER NOT NULL,
    case_priority TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    breached_at   INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, case_id, kpi_type, since_at)
);
