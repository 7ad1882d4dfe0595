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
