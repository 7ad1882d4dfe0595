-- Each team's SAML identity provider (issue 34). One row per team once set. metadata is the
-- identity provider's SAML metadata document as given or as fetched from metadata_url (empty
-- when none is set); idp_entity_id, sso_url and cert_not_after are what the check read from it;
-- group_names is a JSON array of strings.
CREATE TABLE saml_configurations (
    team_id        BIGINT  NOT NULL PRIMARY KEY REFERENCES teams (id),
    active         BOOLEAN NOT NULL,
    metadata       TEXT    NOT NULL,
    metadata_url   TEXT    NOT NULL,
    idp_entity_id  TEXT    NOT NULL,
    idp_name       TEXT    NOT NULL,
    sso_url        TEXT    NOT NULL,
    cert_not_after BIGINT  NOT NULL,
    group_names    TEXT    NOT NULL,
    updated_at     BIGINT  NOT NULL
);
