// Package samlconfig serves a team's SAML configuration (the public SAML configuration service):
// the identity provider's metadata, checked with a real SAML library (crewjam/saml) when it is
// set and again at activation, and the service provider parameters derived from the server's
// external URL. mgmtapi has no user interface, so nobody logs in through SAML: the configuration
// is stored, checked and answered, for the clients that manage it.
package samlconfig

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
)

// The service provider's fixed parameters: assertions arrive by HTTP-POST and name the user by
// email address.
const (
	spBinding      = saml.HTTPPostBinding
	spNameIDFormat = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
)

// maxMetadataBytes bounds a metadata document, given or fetched.
const maxMetadataBytes = 1 << 20

// identityProvider is what the check reads from an identity provider's metadata.
type identityProvider struct {
	EntityID string
	// Name is the organization's display name (or name), else the entity id.
	Name   string
	SSOURL string
	// CertNotAfter is when the last of its valid signing certificates expires.
	CertNotAfter time.Time
}

// checkMetadata parses data as SAML 2.0 metadata and checks that it describes an identity
// provider that can be used at now: an entityID, an IDPSSODescriptor with a SingleSignOnService
// at an absolute http(s) URL, and a signing certificate (use "signing" or unset) that parses and
// is valid at now.
//
// Errors: Invalid naming field and the rule broken.
func checkMetadata(field string, data []byte, now time.Time) (identityProvider, error) {
	if len(data) > maxMetadataBytes {
		return identityProvider{}, apierror.Invalidf("%s: the metadata is larger than %d bytes", field, maxMetadataBytes)
	}
	ed, err := samlsp.ParseMetadata(data)
	if err != nil {
		return identityProvider{}, apierror.Invalidf("%s: not SAML 2.0 metadata (%s)", field, oneLine(err.Error()))
	}
	var p identityProvider
	p.EntityID = strings.TrimSpace(ed.EntityID)
	if p.EntityID == "" {
		return p, apierror.Invalidf("%s: the EntityDescriptor has no entityID", field)
	}
	if len(ed.IDPSSODescriptors) == 0 {
		return p, apierror.Invalidf("%s: the metadata has no IDPSSODescriptor; it describes no identity provider", field)
	}
	idp := ed.IDPSSODescriptors[0]
	for _, sso := range idp.SingleSignOnServices {
		if u, err := url.Parse(strings.TrimSpace(sso.Location)); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
			p.SSOURL = u.String()
			break
		}
	}
	if p.SSOURL == "" {
		return p, apierror.Invalidf("%s: the IDPSSODescriptor has no SingleSignOnService with an absolute http or https Location", field)
	}
	p.CertNotAfter, err = signingCertificate(field, idp.KeyDescriptors, now)
	if err != nil {
		return p, err
	}
	p.Name = p.EntityID
	for _, org := range []*saml.Organization{ed.Organization, idp.Organization} {
		if org == nil {
			continue
		}
		for _, names := range [][]saml.LocalizedName{org.OrganizationDisplayNames, org.OrganizationNames} {
			if len(names) > 0 && strings.TrimSpace(names[0].Value) != "" {
				p.Name = strings.TrimSpace(names[0].Value)
				return p, nil
			}
		}
	}
	return p, nil
}

// signingCertificate returns when the last signing certificate of keys that is valid at now
// expires.
//
// Errors: Invalid naming field when there is no signing certificate, when one does not parse,
// or when none is valid at now (the message gives the dates).
func signingCertificate(field string, keys []saml.KeyDescriptor, now time.Time) (time.Time, error) {
	var notAfter time.Time
	var invalid []string
	found := 0
	for _, k := range keys {
		if k.Use != "" && k.Use != "signing" {
			continue
		}
		for _, c := range k.KeyInfo.X509Data.X509Certificates {
			found++
			der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(c.Data), ""))
			if err != nil {
				return time.Time{}, apierror.Invalidf("%s: signing certificate %d is not base64", field, found)
			}
			cert, err := x509.ParseCertificate(der)
			if err != nil {
				return time.Time{}, apierror.Invalidf("%s: signing certificate %d is not an X.509 certificate (%s)", field, found, oneLine(err.Error()))
			}
			switch {
			case now.After(cert.NotAfter):
				invalid = append(invalid, fmt.Sprintf("certificate %d expired on %s", found, cert.NotAfter.UTC().Format(time.RFC3339)))
			case now.Before(cert.NotBefore):
				invalid = append(invalid, fmt.Sprintf("certificate %d is valid only from %s", found, cert.NotBefore.UTC().Format(time.RFC3339)))
			case cert.NotAfter.After(notAfter):
				notAfter = cert.NotAfter
			}
		}
	}
	if found == 0 {
		return time.Time{}, apierror.Invalidf("%s: the IDPSSODescriptor has no signing certificate (KeyDescriptor with an X509Certificate)", field)
	}
	if notAfter.IsZero() {
		return time.Time{}, apierror.Invalidf("%s: no signing certificate is valid now: %s", field, strings.Join(invalid, "; "))
	}
	return notAfter, nil
}

// checkMetadataURL checks a metadata URL: absolute http or https, without user information.
//
// Errors: Invalid naming field.
func checkMetadataURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, apierror.Invalidf("%s: must be an absolute http or https URL, not %q", field, raw)
	}
	if u.User != nil {
		return nil, apierror.Invalidf("%s: must not carry a user or password", field)
	}
	return u, nil
}

// spParameters are the service provider's parameters for a team: its metadata URL (also its
// entity id) and assertion consumer service URL under externalURL.
type spParameters struct {
	MetadataURL, ACSURL string
}

func serviceProvider(externalURL string, teamID int64) spParameters {
	base := strings.TrimRight(externalURL, "/") + "/saml/v1/teams/" + strconv.FormatInt(teamID, 10)
	return spParameters{MetadataURL: base + "/metadata", ACSURL: base + "/acs"}
}

// oneLine keeps the first line of a library's message.
func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}
