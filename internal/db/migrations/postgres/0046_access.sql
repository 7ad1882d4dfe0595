-- Organisation and access (issue 34, part A): a team's daily quota, its members, groups (with a
-- role, an optional scope and members) and scopes. Member and group numbers are given out per
-- team from team_numbers (db.NextTeamNumber), which other areas' numbered resources share. A group's role_id names a system role (1-7) or a custom role of the team;
-- 0 is no role. scope_id '' is no scope.
ALTER TABLE teams ADD COLUMN daily_quota DOUBLE PRECISION NOT NULL DEFAULT 0.01;

-- The last number given to each team's resources of a kind ('member', 'group', 'enrichment',
-- 'dataSet', …), so that a number is never given twice in a team, even after its holder is gone.
CREATE TABLE team_numbers (
    team_id BIGINT NOT NULL REFERENCES teams (id),
    kind    TEXT   NOT NULL,
    last_id BIGINT NOT NULL,
    PRIMARY KEY (team_id, kind)
);

CREATE TABLE team_members (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    account_id  BIGINT NOT NULL,
    user_id     TEXT   NOT NULL,
    username    TEXT   NOT NULL,
    username_folded TEXT NOT NULL,
    first_name  TEXT   NOT NULL,
    last_name   TEXT   NOT NULL,
    status      TEXT   NOT NULL,
    expires_at  BIGINT NOT NULL,
    document    TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (team_id, account_id),
    UNIQUE (team_id, user_id),
    UNIQUE (team_id, username_folded)
);

CREATE TABLE team_scopes (
    team_id      BIGINT NOT NULL REFERENCES teams (id),
    id           TEXT   NOT NULL,
    display_name TEXT   NOT NULL,
    document     TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, display_name)
);

CREATE TABLE team_groups (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    id          BIGINT NOT NULL,
    name        TEXT   NOT NULL,
    description TEXT   NOT NULL,
    external_id TEXT   NOT NULL,
    group_type  TEXT   NOT NULL,
    origin      TEXT   NOT NULL,
    role_id     BIGINT NOT NULL,
    scope_id    TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, name)
);

CREATE TABLE team_group_members (
    team_id    BIGINT NOT NULL REFERENCES teams (id),
    group_id   BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    PRIMARY KEY (team_id, group_id, account_id),
    FOREIGN KEY (team_id, group_id) REFERENCES team_groups (team_id, id) ON DELETE CASCADE,
    FOREIGN KEY (team_id, account_id) REFERENCES team_members (team_id, account_id) ON DELETE CASCADE
);
CREATE INDEX team_group_members_by_member ON team_group_members (team_id, account_id);
