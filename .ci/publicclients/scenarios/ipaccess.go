package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"time"

	"mgmtapi-ci/publicclients/apikeysadmin"
	"mgmtapi-ci/publicclients/ipaccess"
	"mgmtapi-ci/publicclients/samlconfiguration"
)

// The access services of issue 34: IP access (the server runs with --trusted-proxies
// 127.0.0.1/32, so X-Forwarded-For names the client), the SAML configuration and the bulk key
// administration.

// from is a request editor that makes the request come, through the trusted proxy, from addr.
func from(addr string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-Forwarded-For", addr)
		return nil
	}
}

// keyStatus sends one raw request with the key value and answers its status: 200 while the key
// works, 401 once it is deactivated or deleted.
func (s *S) keyStatus(step, value string) int {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.base+"/aaa/api-keys/v3/list/all", nil)
	if err != nil {
		s.failf(step, "%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+value)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.failf(step, "%v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

func init() {
	register("ip_access_service", func(s *S) {
		c, err := ipaccess.NewClientWithResponses(s.base, ipaccess.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		office, outside := from("203.0.113.10"), from("198.51.100.7")
		// Whatever happens, the team is open again afterwards: the other scenarios share it.
		defer func() {
			_, _ = c.IpAccessServiceDeleteCompanyIpAccessSettingsWithResponse(s.ctx, &ipaccess.IpAccessServiceDeleteCompanyIpAccessSettingsParams{}, office)
		}()
		r1, err := c.IpAccessServiceCreateCompanyIpAccessSettingsWithResponse(s.ctx, body[ipaccess.IpAccessServiceCreateCompanyIpAccessSettingsJSONRequestBody](s, "create",
			`{"ipAccess":[{"name":"office","ipRange":"203.0.113.0/24","enabled":true},{"name":"old office","ipRange":"192.0.2.0/24","enabled":false}]}`), office)
		created := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		if len(get(created, "settings.ipAccess").(map[string]any)) != 2 {
			s.failf("create", "two ranges were sent: %v", created)
		}
		r2, err := c.IpAccessServiceGetCompanyIpAccessSettingsWithResponse(s.ctx, &ipaccess.IpAccessServiceGetCompanyIpAccessSettingsParams{}, office)
		got := s.must("read from the office", r2, err, 200)
		s.typed("read from the office", r2.JSON200)
		s.equal("read from the office", got, "settings.ipAccess.0.ipRange", "203.0.113.0/24")
		s.equal("read from the office", got, "settings.ipAccess.1.enabled", "false")
		r3, err := c.IpAccessServiceGetCompanyIpAccessSettingsWithResponse(s.ctx, &ipaccess.IpAccessServiceGetCompanyIpAccessSettingsParams{}, outside)
		refused := s.must("read from another address", r3, err, 403)
		if msg := str(refused, "message"); !strings.Contains(msg, "198.51.100.7") {
			s.failf("read from another address", "the refusal does not name the address: %v", refused)
		}
		r4, err := c.IpAccessServiceReplaceCompanyIpAccessSettingsWithResponse(s.ctx, body[ipaccess.IpAccessServiceReplaceCompanyIpAccessSettingsJSONRequestBody](s, "replace with a lockout",
			`{"ipAccess":[{"name":"elsewhere","ipRange":"192.0.2.0/24","enabled":true}]}`), office)
		s.must("replace with a lockout", r4, err, 400)
		r5, err := c.IpAccessServiceDeleteCompanyIpAccessSettingsWithResponse(s.ctx, &ipaccess.IpAccessServiceDeleteCompanyIpAccessSettingsParams{}, office)
		s.must("delete", r5, err, 200)
		r6, err := c.IpAccessServiceGetCompanyIpAccessSettingsWithResponse(s.ctx, &ipaccess.IpAccessServiceGetCompanyIpAccessSettingsParams{}, outside)
		after := s.must("read from another address after the delete", r6, err, 200)
		if m, _ := get(after, "settings.ipAccess").(map[string]any); len(m) != 0 {
			s.failf("read after the delete", "ranges remain: %v", after)
		}
	})

	register("saml_configuration_service", func(s *S) {
		c, err := samlconfiguration.NewClientWithResponses(s.base, samlconfiguration.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		metadata := idpMetadata(s)
		params, _ := json.Marshal(map[string]any{"params": map[string]any{"metadataContent": metadata, "groupNames": []string{"admins"}}})
		r1, err := c.SamlConfigurationServiceSetIDPParametersWithResponse(s.ctx, body[samlconfiguration.SamlConfigurationServiceSetIDPParametersJSONRequestBody](s, "set IdP parameters", string(params)))
		s.must("set IdP parameters", r1, err, 200)
		r2, err := c.SamlConfigurationServiceGetSPParametersWithResponse(s.ctx, &samlconfiguration.SamlConfigurationServiceGetSPParametersParams{})
		sp := s.must("read SP parameters", r2, err, 200)
		s.typed("read SP parameters", r2.JSON200)
		if acs := str(sp, "params.assertionConsumerServiceUrl"); !strings.HasPrefix(acs, s.server+"/saml/v1/teams/") || !strings.HasSuffix(acs, "/acs") {
			s.failf("read SP parameters", "the ACS URL is not under the server's URL %s: %v", s.server, sp)
		}
		s.equal("read SP parameters", sp, "params.binding", "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST")
		r3, err := c.SamlConfigurationServiceSetActiveWithResponse(s.ctx, body[samlconfiguration.SamlConfigurationServiceSetActiveJSONRequestBody](s, "activate", `{"isActive":true}`))
		s.must("activate", r3, err, 200)
		r4, err := c.SamlConfigurationServiceGetConfigurationWithResponse(s.ctx, &samlconfiguration.SamlConfigurationServiceGetConfigurationParams{})
		conf := s.must("read configuration", r4, err, 200)
		s.typed("read configuration", r4.JSON200)
		s.equal("read configuration", conf, "idpParameters.active", "true")
		s.equal("read configuration", conf, "idpParameters.metadataContent", metadata)
		s.equal("read configuration", conf, "idpParameters.groupNames.0", "admins")
		s.equal("read configuration", conf, "idpDetails.name", "Scenario IdP")
		r5, err := c.SamlConfigurationServiceSetIDPParametersWithResponse(s.ctx, body[samlconfiguration.SamlConfigurationServiceSetIDPParametersJSONRequestBody](s, "set broken metadata",
			`{"params":{"metadataContent":"<EntityDescriptor/>"}}`))
		s.must("set broken metadata", r5, err, 400)
		r6, err := c.SamlConfigurationServiceSetActiveWithResponse(s.ctx, body[samlconfiguration.SamlConfigurationServiceSetActiveJSONRequestBody](s, "deactivate", `{"isActive":false}`))
		s.must("deactivate", r6, err, 200)
	})

	register("api_keys_admin_service", func(s *S) {
		c, err := apikeysadmin.NewClientWithResponses(s.base, apikeysadmin.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		var ids, values []string
		for i := range 2 {
			r, err := c.ApiKeysServiceCreateApiKeyWithResponse(s.ctx, body[apikeysadmin.ApiKeysServiceCreateApiKeyJSONRequestBody](s, "create",
				`{"name":"`+unique("bulk")+`","keyPermissions":{"permissions":["team-custom-api-keys:ReadConfig"]},"hashed":false}`))
			out := s.must("create", r, err, 200)
			ids, values = append(ids, str(out, "keyId")), append(values, str(out, "value"))
			if st := s.keyStatus("use new key", values[i]); st != 200 {
				s.failf("use new key", "status %d", st)
			}
		}
		deactivate, _ := json.Marshal(map[string]any{"updates": []map[string]any{{"keyId": ids[0], "active": false}, {"keyId": ids[1], "active": false}}})
		r1, err := c.ApiKeysAdminServiceUpdateApiKeysStatusWithResponse(s.ctx, body[apikeysadmin.ApiKeysAdminServiceUpdateApiKeysStatusJSONRequestBody](s, "deactivate", string(deactivate)))
		s.must("deactivate", r1, err, 200)
		for _, v := range values {
			if st := s.keyStatus("use deactivated key", v); st != 401 {
				s.failf("use deactivated key", "status %d, want 401", st)
			}
		}
		reactivate, _ := json.Marshal(map[string]any{"updates": []map[string]any{{"keyId": ids[0], "active": true}, {"keyId": ids[1], "active": true}}})
		r2, err := c.ApiKeysAdminServiceUpdateApiKeysStatusWithResponse(s.ctx, body[apikeysadmin.ApiKeysAdminServiceUpdateApiKeysStatusJSONRequestBody](s, "reactivate", string(reactivate)))
		s.must("reactivate", r2, err, 200)
		for _, v := range values {
			if st := s.keyStatus("use reactivated key", v); st != 200 {
				s.failf("use reactivated key", "status %d, want 200", st)
			}
		}
		unknown, _ := json.Marshal(map[string]any{"keyIds": []string{ids[0], "no-such-key"}})
		r3, err := c.ApiKeysAdminServiceDeleteApiKeysWithResponse(s.ctx, body[apikeysadmin.ApiKeysAdminServiceDeleteApiKeysJSONRequestBody](s, "delete with an unknown id", string(unknown)))
		s.must("delete with an unknown id", r3, err, 404)
		if st := s.keyStatus("use key after the refused delete", values[0]); st != 200 {
			s.failf("use key after the refused delete", "status %d, want 200", st)
		}
		both, _ := json.Marshal(map[string]any{"keyIds": ids})
		r4, err := c.ApiKeysAdminServiceDeleteApiKeysWithResponse(s.ctx, body[apikeysadmin.ApiKeysAdminServiceDeleteApiKeysJSONRequestBody](s, "delete", string(both)))
		s.must("delete", r4, err, 200)
		for _, v := range values {
			if st := s.keyStatus("use deleted key", v); st != 401 {
				s.failf("use deleted key", "status %d, want 401", st)
			}
		}
	})
}

// idpMetadata is SAML metadata of an identity provider with a fresh self-signed certificate.
func idpMetadata(s *S) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		s.failf("certificate", "%v", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp.example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		s.failf("certificate", "%v", err)
	}
	return `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com/metadata">` +
		`<IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
		`<KeyDescriptor use="signing"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>` +
		base64.StdEncoding.EncodeToString(der) + `</X509Certificate></X509Data></KeyInfo></KeyDescriptor>` +
		`<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>` +
		`</IDPSSODescriptor><Organization><OrganizationName xml:lang="en">scenario</OrganizationName>` +
		`<OrganizationDisplayName xml:lang="en">Scenario IdP</OrganizationDisplayName><OrganizationURL xml:lang="en">https://example.com</OrganizationURL></Organization>` +
		`</EntityDescriptor>`
}
