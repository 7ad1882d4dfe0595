-- The write /readyz makes after writes failed for lack of space (issue 27): one row, updated in a
-- transaction of its own, which succeeds only when the database can write again (see DB.Ready).
CREATE TABLE write_probe (
    id         INTEGER PRIMARY KEY,
    written_at TEXT NOT NULL
);
INSERT INTO write_probe (id, written_at) VALUES (1, '');
