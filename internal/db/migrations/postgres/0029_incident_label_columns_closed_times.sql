-- E18 lists up to 1000 ids per group; grouped by (or filtered on) one contextual label, the ids of
-- a group came from walking the label's rows and looking each incident up for the filter and the
-- other group-bys. The label rows now also carry the incident's name, application, subsystem and
-- isMuted (written with the row, never changed: those fields are set once), so that with the
-- columns they already carry they hold every column of incident_rollup's key, and
-- incident_labels_by_rollup lists a group's ids from the label rows alone.
ALTER TABLE incident_labels ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE incident_labels ADD COLUMN application_name TEXT NOT NULL DEFAULT '';
ALTER TABLE incident_labels ADD COLUMN subsystem_name TEXT NOT NULL DEFAULT '';
ALTER TABLE incident_labels ADD COLUMN is_muted BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE incident_labels l SET name = i.name, application_name = i.application_name, subsystem_name = i.subsystem_name,
    is_muted = i.is_muted FROM incidents i WHERE i.team_id = l.team_id AND i.id = l.incident_id;
CREATE INDEX incident_labels_by_rollup ON incident_labels (team_id, key, value, name, application_name, subsystem_name,
    severity, state, status, assigned_to, meta_labels, is_muted, closed_at, incident_id);

-- E18 grouped by closedAt counts its groups: the distinct closedAt values of the matching
-- incidents. A bulk close gives many incidents one closedAt, so the count of the matching
-- incidents less the shared times (as for createdAt) does not serve; this is the number of
-- distinct closedAt values among all the team's incidents, kept by every write that sets or
-- changes a closedAt, which answers every filter that matches all the team's closed incidents.
CREATE TABLE incident_closed_times (
    team_id BIGINT NOT NULL PRIMARY KEY REFERENCES teams (id),
    n       BIGINT NOT NULL
);
INSERT INTO incident_closed_times (team_id, n)
SELECT team_id, COUNT(DISTINCT closed_at) FROM incidents WHERE closed_at IS NOT NULL GROUP BY team_id;
