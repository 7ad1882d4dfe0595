-- Each team's log parsing rule groups. The group (with its subgroups and rules, ids assigned) is
-- the JSON document; sort_order is the group's order, which the list sorts by. Timestamps are Unix
-- microseconds.
CREATE TABLE parsing_rule_groups (
    team_id    BIGINT NOT NULL REFERENCES teams (id),
    id         TEXT   NOT NULL,
    sort_order BIGINT NOT NULL,
    document   TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, id)
);

CREATE INDEX parsing_rule_groups_by_order ON parsing_rule_groups (team_id, sort_order, created_at, id);
