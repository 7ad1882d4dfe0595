-- How many policies each team holds of each data type, kept by every policy write in the same
-- transaction (internal/policies/store.go), so that the limit check and the next position read
-- one row instead of counting the team's policies. Writing the row is also what serialises the
-- writers of one team and data type: on PostgreSQL the row lock holds until commit, across
-- replicas.
CREATE TABLE policy_type_counts (
    team_id     BIGINT  NOT NULL REFERENCES teams (id),
    source_type TEXT    NOT NULL,
    total       BIGINT  NOT NULL,
    PRIMARY KEY (team_id, source_type)
);

INSERT INTO policy_type_counts (team_id, source_type, total)
    SELECT team_id, source_type, COUNT(*) FROM policies GROUP BY team_id, source_type;

-- The number of rules of each parsing rule group (over its subgroups), written with the group
-- (internal/parsingrules/store.go), so that the team's usage is a sum instead of decoding every
-- group's document.
ALTER TABLE parsing_rule_groups ADD COLUMN rule_count BIGINT NOT NULL DEFAULT 0;

UPDATE parsing_rule_groups SET rule_count = (
    SELECT COALESCE(SUM(CASE WHEN jsonb_typeof(s -> 'rules') = 'array' THEN jsonb_array_length(s -> 'rules') ELSE 0 END), 0)
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(document::jsonb -> 'ruleSubgroups') = 'array'
                                   THEN document::jsonb -> 'ruleSubgroups' ELSE '[]'::jsonb END) AS s);

-- The sequence number of each case's last event, taken (incremented) by every append to the
-- case's history (internal/cases/store.go), so that appending an event reads no event.
ALTER TABLE cases ADD COLUMN last_event_seq BIGINT NOT NULL DEFAULT 0;

UPDATE cases SET last_event_seq = (
    SELECT COALESCE(MAX(seq), 0) FROM case_events
    WHERE case_events.team_id = cases.team_id AND case_events.case_id = cases.id);
