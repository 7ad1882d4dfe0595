-- Each team's custom enrichment data sets (issue 35): CSV tables uploaded through the custom
-- enrichments service. id is the set's number within its team (the public ids are integers);
-- header is the JSON array of column names; the rows are in enrichment_data_rows, one per CSV
-- record after the header, numbered from 1 in file order (row_index), cells as a JSON array of strings.
-- An update replaces the rows and adds one to version in one transaction.
CREATE TABLE enrichment_data_sets (
    team_id     BIGINT NOT NULL REFERENCES teams (id),
    id          BIGINT NOT NULL,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL,
    version     BIGINT NOT NULL,
    file_name   TEXT    NOT NULL,
    file_size   BIGINT NOT NULL,
    header      TEXT    NOT NULL,
    row_count   BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, name)
);

CREATE TABLE enrichment_data_rows (
    team_id     BIGINT NOT NULL,
    data_set_id BIGINT NOT NULL,
    row_index   BIGINT NOT NULL,
    cells       TEXT    NOT NULL,
    PRIMARY KEY (team_id, data_set_id, row_index),
    FOREIGN KEY (team_id, data_set_id) REFERENCES enrichment_data_sets (team_id, id) ON DELETE CASCADE
);
