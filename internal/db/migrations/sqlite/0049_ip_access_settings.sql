-- Each team's IP access settings (issue 34): the address ranges its keys are accepted from and the
-- support-access choice. One row per team; no row means the defaults (no range, support access
-- disabled). entries is the list of ranges as set, a JSON array of {name, ipRange, enabled}.
CREATE TABLE ip_access_settings (
    team_id        INTEGER NOT NULL PRIMARY KEY REFERENCES teams (id),
    support_access TEXT    NOT NULL,
    entries        TEXT    NOT NULL,
    updated_at     INTEGER NOT NULL
);
