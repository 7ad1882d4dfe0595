package samlconfig_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	idpPath    = "/mgmt/openapi/latest/aaa/team-saml/v1/idp_parameters"
	activePath = "/mgmt/openapi/latest/aaa/team-saml/v1/active"
	configPath = "/mgmt/openapi/latest/aaa/team-saml/v1/configuration"
	spPath     = "/mgmt/openapi/5/aaa/team-saml/v1/sp_parameters"
)

// certificate makes a self-signed certificate valid from notBefore to notAfter, base64 DER as
// metadata carries it.
func certificate(t *testing.T, notBefore, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "idp.example.com"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}

// metadata is an identity provider's SAML metadata with the given signing certificate.
func metadata(cert string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com/saml/metadata">
  <IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <KeyDescriptor use="signing">
      <KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>` + cert + `</X509Certificate></X509Data></KeyInfo>
    </KeyDescriptor>
    <NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>
    <SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/saml/sso"/>
  </IDPSSODescriptor>
  <Organization>
    <OrganizationName xml:lang="en">example</OrganizationName>
    <OrganizationDisplayName xml:lang="en">Example IdP</OrganizationDisplayName>
    <OrganizationURL xml:lang="en">https://example.com</OrganizationURL>
  </Organization>
</EntityDescriptor>`
}

func validMetadata(t *testing.T) string {
	return metadata(certificate(t, time.Now().Add(-time.Hour), time.Now().Add(365*24*time.Hour)))
}

// body is a set-IdP-parameters body with params as the JSON object given.
func body(params map[string]any) string {
	b, _ := json.Marshal(map[string]any{"params": params})
	return string(b)
}

type configuration struct {
	TeamID        int64 `json:"teamId"`
	IdpParameters struct {
		Active          bool     `json:"active"`
		GroupNames      []string `json:"groupNames"`
		MetadataContent string   `json:"metadataContent"`
		MetadataURL     string   `json:"metadataUrl"`
		TeamEntityID    int64    `json:"teamEntityId"`
	} `json:"idpParameters"`
	SpParameters spParameters `json:"spParameters"`
	IdpDetails   *struct {
		Name string `json:"name"`
	} `json:"idpDetails"`
}

type spParameters struct {
	AssertionConsumerServiceURL string `json:"assertionConsumerServiceUrl"`
	Binding                     string `json:"binding"`
	MetadataURL                 string `json:"metadataUrl"`
	NameIDFormat                string `json:"nameIdFormat"`
	SigningCertPem              string `json:"signingCertPem"`
}

func read(t *testing.T, env *apitest.Env, key string) configuration {
	t.Helper()
	res := env.JSON(t, http.MethodGet, configPath, key, "")
	if res.Status != http.StatusOK {
		t.Fatalf("configuration: %d %s", res.Status, res.Body)
	}
	return apitest.Decode[configuration](t, res)
}

func expectOK(t *testing.T, res apitest.Response) {
	t.Helper()
	if res.Status != http.StatusOK || string(res.Body) != "{}" {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}

// TestServiceProviderParameters: derived from the external URL and the team.
func TestServiceProviderParameters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "sp")
		base := apitest.ExternalURL + "/saml/v1/teams/" + strconv.FormatInt(teamID, 10)
		res := env.JSON(t, http.MethodGet, spPath+"?team_id="+strconv.FormatInt(teamID, 10), key, "")
		sp := apitest.Decode[struct{ Params spParameters }](t, res).Params
		if sp.MetadataURL != base+"/metadata" || sp.AssertionConsumerServiceURL != base+"/acs" ||
			sp.Binding != "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" ||
			sp.NameIDFormat != "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" || sp.SigningCertPem != "" {
			t.Fatalf("SP parameters: %s", res.Body)
		}
		if c := read(t, env, key); c.SpParameters != sp || c.TeamID != teamID || c.IdpParameters.TeamEntityID != teamID ||
			c.IdpParameters.Active || c.IdpDetails != nil {
			t.Fatalf("a new team's configuration: %+v", c)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, spPath+"?team_id=1", key, ""), http.StatusNotFound, "team_id: no team 1")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, configPath+"?team_id=1", key, ""), http.StatusNotFound, "team_id")
	})
}

// TestMetadataAndActivation: valid metadata is stored and answered with the identity provider's
// name; activation needs it; SAML is activated and deactivated.
func TestMetadataAndActivation(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, activePath, env.RootKey, `{"isActive":true}`),
			http.StatusBadRequest, "isActive: SAML cannot be activated without the identity provider's parameters")
		xml := validMetadata(t)
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataContent": xml, "groupNames": []string{"admins"}})))
		c := read(t, env, env.RootKey)
		if c.IdpParameters.MetadataContent != xml || c.IdpParameters.Active || len(c.IdpParameters.GroupNames) != 1 ||
			c.IdpDetails == nil || c.IdpDetails.Name != "Example IdP" {
			t.Fatalf("stored: %+v", c)
		}
		expectOK(t, env.JSON(t, http.MethodPost, activePath, env.RootKey, `{"isActive":true,"teamId":1}`))
		if !read(t, env, env.RootKey).IdpParameters.Active {
			t.Fatal("not active after the activation")
		}
		// New parameters keep the active state; without metadata they clear it.
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataContent": xml})))
		if !read(t, env, env.RootKey).IdpParameters.Active {
			t.Fatal("new parameters deactivated SAML")
		}
		expectOK(t, env.JSON(t, http.MethodPost, activePath, env.RootKey, `{"isActive":false}`))
		if read(t, env, env.RootKey).IdpParameters.Active {
			t.Fatal("still active after the deactivation")
		}
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataContent": xml, "active": true})))
		if !read(t, env, env.RootKey).IdpParameters.Active {
			t.Fatal("params with active: true did not activate")
		}
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"groupNames": []string{}})))
		if c := read(t, env, env.RootKey); c.IdpParameters.Active || c.IdpParameters.MetadataContent != "" || c.IdpDetails != nil {
			t.Fatalf("params without metadata: %+v", c)
		}
		// Another team sees none of it.
		_, other := env.MustTeam(t, "other")
		if c := read(t, env, other); c.IdpParameters.MetadataContent != "" || c.IdpParameters.Active {
			t.Fatalf("the other team reads %+v", c)
		}
	})
}

// TestBadMetadataChangesNothing: every refusal names the field and the rule, and the stored
// configuration stays as it was.
func TestBadMetadataChangesNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		good := validMetadata(t)
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataContent": good})))
		expired := metadata(certificate(t, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)))
		future := metadata(certificate(t, time.Now().Add(24*time.Hour), time.Now().Add(48*time.Hour)))
		for _, c := range []struct {
			body      string
			status    int
			fragments []string
		}{
			{body(map[string]any{"metadataContent": expired}), 400, []string{"params.metadataContent: no signing certificate is valid now", "expired on"}},
			{body(map[string]any{"metadataContent": future}), 400, []string{"params.metadataContent", "valid only from"}},
			{body(map[string]any{"metadataContent": "not xml"}), 400, []string{"params.metadataContent: not SAML 2.0 metadata"}},
			{body(map[string]any{"metadataContent": strings.Replace(good, `entityID="https://idp.example.com/saml/metadata"`, "", 1)}), 400, []string{"no entityID"}},
			{body(map[string]any{"metadataContent": strings.Replace(strings.Replace(good, "<IDPSSODescriptor", "<SPSSODescriptor", 1), "</IDPSSODescriptor", "</SPSSODescriptor", 1)}), 400, []string{"no IDPSSODescriptor"}},
			{body(map[string]any{"metadataContent": strings.Replace(good, `Location="https://idp.example.com/saml/sso"`, `Location="/sso"`, 1)}), 400, []string{"params.metadataContent: not SAML 2.0 metadata", "url scheme"}},
			{body(map[string]any{"metadataContent": strings.Replace(good, `<KeyDescriptor use="signing">`, `<KeyDescriptor use="encryption">`, 1)}), 400, []string{"no signing certificate"}},
			{body(map[string]any{"metadataContent": strings.Replace(good, "<X509Certificate>", "<X509Certificate>AAAA", 1)}), 400, []string{"not an X.509 certificate"}},
			{body(map[string]any{"metadataContent": good, "metadataUrl": "https://idp.example.com/metadata"}), 400, []string{"params: set metadataUrl or metadataContent, not both"}},
			{body(map[string]any{"metadataUrl": "ftp://idp.example.com/metadata"}), 400, []string{"params.metadataUrl: must be an absolute http or https URL"}},
			{body(map[string]any{"active": true}), 400, []string{"params.active"}},
			{body(map[string]any{"groupNames": []string{" "}}), 400, []string{"params.groupNames[0]"}},
			{`{"teamId":999,"params":{}}`, 404, []string{"teamId: no team 999"}},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, c.body), c.status, c.fragments...)
			if got := read(t, env, env.RootKey).IdpParameters.MetadataContent; got != good {
				t.Fatalf("%.120s changed the stored metadata", c.body)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, activePath, env.RootKey, `{"isActive":true,"teamId":999}`), http.StatusNotFound, "teamId")
	})
}

// TestActivationChecksTheCertificateAgain: metadata valid when set is refused at activation once
// its certificate has expired.
func TestActivationChecksTheCertificateAgain(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		xml := metadata(certificate(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)))
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataContent": xml})))
		env.Clock.Advance(2 * time.Hour)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, activePath, env.RootKey, `{"isActive":true}`),
			http.StatusBadRequest, "isActive: the stored identity provider metadata: no signing certificate is valid now", "expired on")
		if read(t, env, env.RootKey).IdpParameters.Active {
			t.Fatal("activated with an expired certificate")
		}
	})
}

// TestMetadataURL: the metadata is fetched from its URL, checked and stored with it; a URL that
// answers an error or no metadata is refused; the outbound policy applies.
func TestMetadataURL(t *testing.T) {
	good := validMetadata(t)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metadata":
			w.Header().Set("Content-Type", "application/samlmetadata+xml")
			_, _ = w.Write([]byte(good))
		case "/html":
			_, _ = w.Write([]byte("<html><body>login</body></html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer idp.Close()
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		expectOK(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataUrl": idp.URL + "/metadata"})))
		c := read(t, env, env.RootKey)
		if c.IdpParameters.MetadataURL != idp.URL+"/metadata" || c.IdpParameters.MetadataContent != "" || c.IdpDetails == nil || c.IdpDetails.Name != "Example IdP" {
			t.Fatalf("stored: %+v", c)
		}
		expectOK(t, env.JSON(t, http.MethodPost, activePath, env.RootKey, `{"isActive":true}`))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataUrl": idp.URL + "/gone"})),
			http.StatusBadRequest, "params.metadataUrl: the metadata could not be fetched", "404")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataUrl": idp.URL + "/html"})),
			http.StatusBadRequest, "params.metadataUrl: not SAML 2.0 metadata")
		if c := read(t, env, env.RootKey); c.IdpParameters.MetadataURL != idp.URL+"/metadata" || !c.IdpParameters.Active {
			t.Fatalf("a refused URL changed the configuration: %+v", c)
		}
	})
	apitest.EnginesWith(t, apitest.Options{PublicDeliveriesOnly: true}, func(t *testing.T, env *apitest.Env) {
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, idpPath, env.RootKey, body(map[string]any{"metadataUrl": idp.URL + "/metadata"})),
			http.StatusBadRequest, "params.metadataUrl: the metadata could not be fetched")
	})
}
