package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/mgmtapi/mgmtapi/client"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// A bare host name (a regional deployment) means https on that host; a URL is kept as given
// without its trailing slash, a path prefix included; anything else is refused with a message
// naming the value.
func TestBaseURL(t *testing.T) {
	accepted := []struct{ in, want string }{
		{"api.eu2.example.com", "https://api.eu2.example.com"},
		{" mgmt.example.com:8443 ", "https://mgmt.example.com:8443"},
		{"127.0.0.1:8080", "https://127.0.0.1:8080"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
		{"https://ops.example.com/mgmtapi/", "https://ops.example.com/mgmtapi"},
	}
	for _, c := range accepted {
		got, err := client.BaseURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	refused := []string{"", " ", "ftp://example.com", "http://", "example.com/path", "a b",
		"https://example.com/?x=1", "https://example.com/?", "https://user:pw@example.com", "https://example.com/#top"}
	for _, in := range refused {
		got, err := client.BaseURL(in)
		if err == nil {
			t.Errorf("BaseURL(%q) = %q; want an error", in, got)
			continue
		}
		if !strings.Contains(err.Error(), "base URL \""+in+"\"") {
			t.Errorf("BaseURL(%q): %v; want the message to name the value", in, err)
		}
	}
	if _, err := client.New("ftp://example.com", "k"); err == nil || !strings.Contains(err.Error(), "host name") {
		t.Errorf("New with a bad base: %v; want an error saying what is accepted", err)
	}
	if _, err := client.New("api.eu1.example.com", " "); err == nil || !strings.Contains(err.Error(), "api key") {
		t.Errorf("New with an empty key: %v; want an error naming the api key", err)
	}
}

// Against a real server: the key reaches it as a Bearer value, a base URL with a path prefix
// (a proxy) keeps its prefix, and create, list and get round-trip a set.
func TestClientAgainstServer(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		// The server behind a proxy that serves it under /mgmtapi.
		proxied := httptest.NewServer(http.StripPrefix("/mgmtapi",
			env.Handler(t, env.DB, auth.NewAuthenticator(env.DB, env.Clock.Now))))
		t.Cleanup(proxied.Close)

		for _, base := range []string{env.URL, proxied.URL + "/mgmtapi/"} {
			c, err := client.New(base, env.RootKey)
			if err != nil {
				t.Fatalf("New(%q): %v", base, err)
			}
			created, err := c.CreateRecordingRuleSet(ctx, &client.RecordingRuleSetInput{
				Name: "set at " + base,
				Groups: []client.RecordingRuleGroupInput{{Name: "g", Rules: []client.RecordingRuleInput{
					{Record: "job:up:sum", Expr: "sum by (job) (up)"},
				}}},
			})
			if err != nil {
				t.Fatalf("create through %s: %v", base, err)
			}
			got, err := c.GetRecordingRuleSet(ctx, client.GetRecordingRuleSetParams{ID: created.ID})
			if err != nil {
				t.Fatalf("get through %s: %v", base, err)
			}
			if got.ID != created.ID || got.Name != "set at "+base || got.Groups[0].Rules[0].Expr != "sum by (job) (up)" {
				t.Errorf("get through %s = %+v; want the set as created (id %s)", base, got, created.ID)
			}
		}
		list, err := mustNew(t, env.URL, "Bearer "+env.RootKey).ListRecordingRuleSets(ctx)
		if err != nil {
			t.Fatalf("list with a key already written as Bearer: %v", err)
		}
		if len(list.Sets) != 2 {
			t.Errorf("list: %d sets; want the 2 created", len(list.Sets))
		}
	})
}

// A 4xx answer is an *ErrorStatusCode with the status and the server's code and message; an
// operator operation without an operator key fails before any request is made.
func TestErrorAnswersAreDecoded(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		_, err := mustNew(t, env.URL, env.RootKey).CreateRecordingRuleSet(ctx, &client.RecordingRuleSetInput{
			Name: "bad",
			Groups: []client.RecordingRuleGroupInput{{Name: "g", Rules: []client.RecordingRuleInput{
				{Record: "r", Expr: "sum by (job (up)"},
			}}},
		})
		var refused *client.ErrorStatusCode
		if !errors.As(err, &refused) {
			t.Fatalf("invalid PromQL: %v (%T); want *client.ErrorStatusCode", err, err)
		}
		if refused.StatusCode != 400 || refused.Response.Code != 400 ||
			!strings.Contains(refused.Response.Message, "groups[0]") || !strings.Contains(refused.Response.Message, "expr") {
			t.Errorf("invalid PromQL: %d %+v; want 400 with a message naming groups[0] and expr", refused.StatusCode, refused.Response)
		}

		_, err = mustNew(t, env.URL, "mgmt_not_a_key_of_this_server_0123456789").ListRecordingRuleSets(ctx)
		if !errors.As(err, &refused) || refused.StatusCode != 401 || refused.Response.Code != 401 || refused.Response.Message == "" {
			t.Errorf("unknown key: %v; want a 401 ErrorStatusCode with a message", err)
		}

		_, err = mustNew(t, env.URL, env.RootKey).GetRecordingRuleSet(ctx, client.GetRecordingRuleSetParams{ID: "no-such-set"})
		if !errors.As(err, &refused) || refused.StatusCode != 404 || refused.Response.Code != 404 {
			t.Errorf("unknown set: %v; want a 404 ErrorStatusCode", err)
		}

		_, err = mustNew(t, env.URL, env.RootKey).AdminListTeams(ctx)
		if !errors.Is(err, ogenerrors.ErrSecurityRequirementIsNotSatisfied) {
			t.Errorf("operator operation without an operator key: %v; want ErrSecurityRequirementIsNotSatisfied", err)
		}
		operator, err := client.NewClient(env.URL, client.Keys{Operator: apitest.OperatorKey})
		if err != nil {
			t.Fatal(err)
		}
		teams, err := operator.AdminListTeams(ctx)
		if err != nil || len(teams.Teams) == 0 {
			t.Errorf("operator operation with Keys.Operator: %+v, %v; want the teams", teams, err)
		}
	})
}

func mustNew(t *testing.T, base, key string) *client.Client {
	t.Helper()
	c, err := client.New(base, key)
	if err != nil {
		t.Fatalf("New(%q): %v", base, err)
	}
	return c
}
