package samlconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/db"
)

// configuration is a team's stored SAML configuration. Metadata is empty when no identity
// provider is set; then the identity provider's fields are empty too.
type configuration struct {
	Active      bool
	Metadata    string
	MetadataURL string
	IDP         identityProvider
	GroupNames  []string
}

// load returns the team's configuration; the zero configuration (nothing set, inactive) when it
// has none.
func load(ctx context.Context, q db.Querier, teamID int64) (configuration, error) {
	var c configuration
	var groups string
	var notAfter int64
	err := q.QueryRowContext(ctx,
		`SELECT active, metadata, metadata_url, idp_entity_id, idp_name, sso_url, cert_not_after, group_names
		   FROM saml_configurations WHERE team_id = $1`, teamID).
		Scan(&c.Active, &c.Metadata, &c.MetadataURL, &c.IDP.EntityID, &c.IDP.Name, &c.IDP.SSOURL, &notAfter, &groups)
	if db.IsNotFound(err) {
		return configuration{GroupNames: []string{}}, nil
	}
	if err != nil {
		return c, fmt.Errorf("read saml configuration: %w", err)
	}
	if notAfter != 0 {
		c.IDP.CertNotAfter = time.UnixMicro(notAfter).UTC()
	}
	if err := json.Unmarshal([]byte(groups), &c.GroupNames); err != nil {
		return c, fmt.Errorf("team %d saml group names: %w", teamID, err)
	}
	if c.GroupNames == nil {
		c.GroupNames = []string{}
	}
	return c, nil
}

// store writes the team's configuration in tx, replacing any.
func store(ctx context.Context, tx *db.Tx, teamID int64, c configuration) error {
	groups, err := json.Marshal(c.GroupNames)
	if err != nil {
		return err
	}
	var notAfter int64
	if !c.IDP.CertNotAfter.IsZero() {
		notAfter = c.IDP.CertNotAfter.UnixMicro()
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO saml_configurations (team_id, active, metadata, metadata_url, idp_entity_id, idp_name, sso_url,
		                                  cert_not_after, group_names, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		 ON CONFLICT (team_id) DO UPDATE SET active = excluded.active, metadata = excluded.metadata,
		        metadata_url = excluded.metadata_url, idp_entity_id = excluded.idp_entity_id,
		        idp_name = excluded.idp_name, sso_url = excluded.sso_url, cert_not_after = excluded.cert_not_after,
		        group_names = excluded.group_names, updated_at = excluded.updated_at`,
		teamID, c.Active, c.Metadata, c.MetadataURL, c.IDP.EntityID, c.IDP.Name, c.IDP.SSOURL, notAfter,
		string(groups), tx.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("store saml configuration: %w", err)
	}
	return nil
}
