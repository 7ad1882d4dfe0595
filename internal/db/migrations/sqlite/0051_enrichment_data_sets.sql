-- Each team's custom enrichment data sets (issue 35): CSV tables uploaded through the custom
-- enrichments service. id is the set's number within its team (the public ids are integers);
-- header is the JSON array of column names; the rows are in enrichment_data_rows, one per CSV
-- record after the header, numbered from 1 in file order (row_index), cells as a JSON array of strings.
-- An update replaces the rows and adds one to version in one transaction.
CREATE TABLE enrichment_data_sets (
    team_id     INTEGER NOT NULL REFERENCES teams (id),
    id          INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    file_name   TEXT    NOT NULL,
    file_size   INTEGER NOT NULL,
    header      TEXT    NOT NULL,
    row_count   INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (team_id, id),
    UNIQUE (team_id, name)
);

CREATE TABLE enrichment_data_rows (
    team_id     INTEGER NOT NULL,
    data_set_id INTEGER NOT NULL,
    row_index   INTEGER NOT NULL,
    cells       TEXT    NOT NULL,
    PRIMARY KEY (team_id, data_set_id, row_index),
    FOREIGN KEY (team_id, data_set_id) REFERENCES enrichment_data_sets (team_id, id) ON DELETE CASCADE
);
