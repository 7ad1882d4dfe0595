package samlconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// ConfigurationHandler implements the SAML configuration operations of oas.Handler.
type ConfigurationHandler struct {
	db          *db.DB
	fetcher     *delivery.Sender
	externalURL string
}

// NewHandler returns the SAML configuration operations. Metadata URLs are fetched through
// fetcher's client (the outbound address policy of notifications, its attempt timeout);
// externalURL is the base URL clients use, under which the service provider's URLs are.
func NewHandler(database *db.DB, fetcher *delivery.Sender, externalURL string) *ConfigurationHandler {
	return &ConfigurationHandler{db: database, fetcher: fetcher, externalURL: externalURL}
}

// SetSamlIdpParameters stores the team's identity provider: the metadata as given, or as fetched
// from its URL, once checked (checkMetadata); params without metadata clear it and deactivate
// SAML. active true activates; false or left out keeps the active state.
//
// Errors: NotFound when teamId names another team; Invalid when both metadata fields are set,
// for a bad URL, a failed fetch, metadata that fails the check, or active without metadata.
func (h *ConfigurationHandler) SetSamlIdpParameters(ctx context.Context, req *oas.SamlIdpParametersInput) error {
	teamID := auth.PrincipalFrom(ctx).TeamID
	if err := checkTeam("teamId", req.TeamId, teamID); err != nil {
		return err
	}
	params := req.Params.Value
	content, hasContent := params.MetadataContent.Get()
	rawURL, hasURL := params.MetadataUrl.Get()
	if hasContent && hasURL {
		return apierror.Invalidf("params: set metadataUrl or metadataContent, not both")
	}
	next := configuration{GroupNames: params.GroupNames}
	if next.GroupNames == nil {
		next.GroupNames = []string{}
	}
	for i, g := range next.GroupNames {
		if strings.TrimSpace(g) == "" || strings.ContainsFunc(g, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return apierror.Invalidf("params.groupNames[%d]: must hold a non-whitespace character and no control character", i)
		}
	}
	now := h.db.Now()
	switch {
	case hasContent:
		idp, err := checkMetadata("params.metadataContent", []byte(content), now)
		if err != nil {
			return err
		}
		next.Metadata, next.IDP = content, idp
	case hasURL:
		u, err := checkMetadataURL("params.metadataUrl", rawURL)
		if err != nil {
			return err
		}
		data, err := h.fetch(ctx, u.String())
		if err != nil {
			return apierror.Invalidf("params.metadataUrl: the metadata could not be fetched: %s", err)
		}
		idp, err := checkMetadata("params.metadataUrl", data, now)
		if err != nil {
			return err
		}
		next.Metadata, next.MetadataURL, next.IDP = string(data), u.String(), idp
	}
	activate := params.Active.Or(false)
	if activate && next.Metadata == "" {
		return apierror.Invalidf("params.active: SAML cannot be activated without the identity provider's metadata (metadataUrl or metadataContent)")
	}
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(strconv.FormatInt(teamID, 10))
		stored, err := load(ctx, tx, teamID)
		if err != nil {
			return err
		}
		next.Active = next.Metadata != "" && (activate || stored.Active)
		return store(ctx, tx, teamID, next)
	})
}

// fetch reads the metadata at rawURL through the fetcher's client: a 2xx answer of at most
// maxMetadataBytes.
func (h *ConfigurationHandler) fetch(ctx context.Context, rawURL string) ([]byte, error) {
	if h.fetcher == nil {
		return nil, errors.New("this server fetches no URL")
	}
	ctx, cancel := context.WithTimeout(ctx, h.fetcher.Timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/samlmetadata+xml, application/xml, text/xml")
	res, err := h.fetcher.HTTPClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s did not answer within %s", req.URL.Host, h.fetcher.Timeout())
		}
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return nil, fmt.Errorf("%s: %s", req.URL.Host, oneLine(err.Error()))
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, fmt.Errorf("%s answered %d %s", req.URL.Host, res.StatusCode, http.StatusText(res.StatusCode))
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, maxMetadataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %s", req.URL.Host, oneLine(err.Error()))
	}
	if len(data) > maxMetadataBytes {
		return nil, fmt.Errorf("%s answered more than %d bytes", req.URL.Host, maxMetadataBytes)
	}
	return data, nil
}

// SetSamlActive activates or deactivates SAML for the team. Activation checks the stored
// metadata again, so that an identity provider whose certificate has expired since is refused.
//
// Errors: NotFound when teamId names another team; Invalid when activating without stored
// metadata or with metadata that no longer passes the check.
func (h *ConfigurationHandler) SetSamlActive(ctx context.Context, req *oas.SamlActiveInput) error {
	teamID := auth.PrincipalFrom(ctx).TeamID
	if err := checkTeam("teamId", req.TeamId, teamID); err != nil {
		return err
	}
	activate := req.IsActive.Or(false)
	now := h.db.Now()
	return h.db.InTx(ctx, func(tx *db.Tx) error {
		tx.AuditResource(strconv.FormatInt(teamID, 10))
		c, err := load(ctx, tx, teamID)
		if err != nil {
			return err
		}
		if activate {
			if c.Metadata == "" {
				return apierror.Invalidf("isActive: SAML cannot be activated without the identity provider's parameters; set them first (POST …/aaa/team-saml/v1/idp_parameters)")
			}
			idp, err := checkMetadata("isActive: the stored identity provider metadata", []byte(c.Metadata), now)
			if err != nil {
				return err
			}
			c.IDP = idp
		}
		c.Active = activate
		return store(ctx, tx, teamID, c)
	})
}

// GetSamlConfiguration answers the team's identity provider parameters, the service provider
// parameters and the identity provider's details (when one is set).
//
// Errors: NotFound when team_id names another team.
func (h *ConfigurationHandler) GetSamlConfiguration(ctx context.Context, params oas.GetSamlConfigurationParams) (*oas.SamlConfiguration, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	if err := checkTeam("team_id", params.TeamID, teamID); err != nil {
		return nil, err
	}
	c, err := load(ctx, h.db.Read(), teamID)
	if err != nil {
		return nil, err
	}
	idp := oas.SamlIdpParameters{
		Active:       oas.NewOptBool(c.Active),
		GroupNames:   c.GroupNames,
		TeamEntityId: oas.NewOptInt64(teamID),
	}
	switch {
	case c.MetadataURL != "":
		idp.MetadataUrl = oas.NewOptString(c.MetadataURL)
	case c.Metadata != "":
		idp.MetadataContent = oas.NewOptString(c.Metadata)
	}
	out := &oas.SamlConfiguration{
		TeamId:        oas.NewOptInt64(teamID),
		IdpParameters: oas.NewOptSamlIdpParameters(idp),
		SpParameters:  oas.NewOptSamlSpParameters(h.spParameters(teamID)),
	}
	if c.Metadata != "" {
		out.IdpDetails = oas.NewOptSamlIdpDetails(oas.SamlIdpDetails{Name: oas.NewOptString(c.IDP.Name)})
	}
	return out, nil
}

// GetSamlSpParameters answers the service provider parameters of the team.
//
// Errors: NotFound when team_id names another team.
func (h *ConfigurationHandler) GetSamlSpParameters(ctx context.Context, params oas.GetSamlSpParametersParams) (*oas.SamlSpParametersEnvelope, error) {
	teamID := auth.PrincipalFrom(ctx).TeamID
	if err := checkTeam("team_id", params.TeamID, teamID); err != nil {
		return nil, err
	}
	return &oas.SamlSpParametersEnvelope{Params: oas.NewOptSamlSpParameters(h.spParameters(teamID))}, nil
}

func (h *ConfigurationHandler) spParameters(teamID int64) oas.SamlSpParameters {
	sp := serviceProvider(h.externalURL, teamID)
	return oas.SamlSpParameters{
		AssertionConsumerServiceUrl: oas.NewOptString(sp.ACSURL),
		Binding:                     oas.NewOptString(spBinding),
		MetadataUrl:                 oas.NewOptString(sp.MetadataURL),
		NameIdFormat:                oas.NewOptString(spNameIDFormat),
	}
}

// checkTeam accepts a team id left out, 0 (what proto-based clients send for none) or equal to the
// caller's team.
//
// Errors: NotFound naming field otherwise, as for a team that does not exist.
func checkTeam(field string, id oas.OptInt64, teamID int64) error {
	if v, ok := id.Get(); ok && v != 0 && v != teamID {
		return apierror.NotFoundf("%s: no team %d", field, v)
	}
	return nil
}
