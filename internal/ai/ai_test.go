package ai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/ai"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	base        = "/mgmt/openapi/latest/ai/"
	apps        = base + "applications/v3"
	pricingPath = base + "model-pricing/v3"
	evals       = base + "evaluations/v3"
	customs     = base + "custom-evaluations/v3"
	countsPath  = base + "evaluation-counts/v3/per-type"
	missingID   = "00000000-0000-4000-8000-0000000000aa"
)

type app struct {
	ID                   string `json:"id"`
	Application          string `json:"application"`
	Subsystem            string `json:"subsystem"`
	CompanyID            string `json:"companyId"`
	GuardrailsIntegrated bool   `json:"guardrailsIntegrated"`
	CreatedAt            string `json:"createdAt"`
	UpdatedAt            string `json:"updatedAt"`
}

// register registers an application of the team through the operator API.
func register(t *testing.T, env *apitest.Env, teamID int64, body string) app {
	t.Helper()
	res := env.Do(t, http.MethodPost, fmt.Sprintf("/admin/v1/teams/%d/ai-applications", teamID), "Bearer "+apitest.OperatorKey, "application/json", body)
	return apitest.Decode[struct{ AiApplication app }](t, res).AiApplication
}

func listApps(t *testing.T, env *apitest.Env, key, query string) []app {
	t.Helper()
	return apitest.Decode[struct{ AiApplications []app }](t, env.JSON(t, http.MethodGet, apps+query, key, "")).AiApplications
}

func names(list []app) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.Application+"/"+a.Subsystem)
	}
	return out
}

// Applications are registered by the operator (again: same id, new flag), listed in name order
// and in pages, read, and deleted; another team sees none of them.
func TestApplications(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		otherID, otherKey := env.MustTeam(t, "other")
		bot := register(t, env, teamID, `{"application":"support-bot","subsystem":"production"}`)
		if bot.CompanyID != fmt.Sprint(teamID) || bot.GuardrailsIntegrated || bot.ID == "" || bot.CreatedAt == "" {
			t.Fatalf("registered: %+v", bot)
		}
		again := register(t, env, teamID, `{"application":"support-bot","subsystem":"production","guardrailsIntegrated":true}`)
		if again.ID != bot.ID || !again.GuardrailsIntegrated || again.CreatedAt != bot.CreatedAt {
			t.Fatalf("registered again: %+v, first %+v", again, bot)
		}
		register(t, env, teamID, `{"application":"advisor"}`)
		register(t, env, otherID, `{"application":"zeta","subsystem":"x"}`)

		if got := names(listApps(t, env, key, "")); !slices.Equal(got, []string{"advisor/", "support-bot/production"}) {
			t.Fatalf("list: %v", got)
		}
		if got := names(listApps(t, env, key, "?page_size=1&page_offset=1")); !slices.Equal(got, []string{"support-bot/production"}) {
			t.Fatalf("second page of one: %v", got)
		}
		if got := listApps(t, env, key, "?page_size=1&page_offset=5"); len(got) != 0 {
			t.Fatalf("a page past the end: %v", got)
		}
		if got := names(listApps(t, env, otherKey, "")); !slices.Equal(got, []string{"zeta/x"}) {
			t.Fatalf("the other team's list: %v", got)
		}
		got := apitest.Decode[struct{ AiApplication app }](t, env.JSON(t, http.MethodGet, apps+"/"+strings.ToUpper(bot.ID), key, "")).AiApplication
		if got != again {
			t.Fatalf("get %+v, want %+v", got, again)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, apps+"/"+bot.ID, otherKey, ""), 404, bot.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, apps+"/"+bot.ID, otherKey, ""), 404, bot.ID)

		// Bad registrations change nothing.
		res := env.Do(t, http.MethodPost, fmt.Sprintf("/admin/v1/teams/%d/ai-applications", teamID), "Bearer "+apitest.OperatorKey, "application/json", `{"application":"  "}`)
		apitest.ExpectError(t, res, 400, "application")
		res = env.Do(t, http.MethodPost, "/admin/v1/teams/999999/ai-applications", "Bearer "+apitest.OperatorKey, "application/json", `{"application":"a"}`)
		apitest.ExpectError(t, res, 404, "team")
		res = env.Do(t, http.MethodPost, fmt.Sprintf("/admin/v1/teams/%d/ai-applications", teamID), "Bearer "+key, "application/json", `{"application":"a"}`)
		if res.Status != 401 && res.Status != 403 {
			t.Fatalf("a team key registered an application: %d %s", res.Status, res.Body)
		}
		if n := len(listApps(t, env, key, "")); n != 2 {
			t.Fatalf("%d applications after refused registrations", n)
		}

		deleted := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, apps+"/"+bot.ID, key, ""))
		if deleted.ID != bot.ID {
			t.Fatalf("deleted %q", deleted.ID)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, apps+"/"+bot.ID, key, ""), 404, bot.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, apps+"/"+bot.ID, key, ""), 404, bot.ID)
	})
}

type pricingAnswer struct {
	Pricing *struct {
		ID        string                        `json:"id"`
		CompanyID string                        `json:"companyId"`
		Prices    map[string]map[string]float64 `json:"prices"`
	} `json:"pricing"`
}

// The model pricing is set (replacing every price, keeping its id), read, refused when a price
// is out of bounds (naming it, changing nothing), and deleted.
func TestModelPricing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		if p := apitest.Decode[pricingAnswer](t, env.JSON(t, http.MethodGet, pricingPath, key, "")); p.Pricing != nil {
			t.Fatalf("pricing before any set: %+v", p.Pricing)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, pricingPath, key, ""), 404, "pricing")
		set := apitest.Decode[pricingAnswer](t, env.JSON(t, http.MethodPut, pricingPath, key,
			`{"prices":{"gpt-4o":{"inputPricePerMillionTokens":2.5,"outputPricePerMillionTokens":10},"small":{"cacheReadPricePerMillionTokens":0}}}`))
		if set.Pricing == nil || set.Pricing.ID == "" || set.Pricing.CompanyID != fmt.Sprint(teamID) ||
			set.Pricing.Prices["gpt-4o"]["outputPricePerMillionTokens"] != 10 || len(set.Pricing.Prices) != 2 {
			t.Fatalf("set: %s", apitest.JSONOf(t, set))
		}
		replaced := apitest.Decode[pricingAnswer](t, env.JSON(t, http.MethodPut, pricingPath, key, `{"prices":{"claude":{"inputPricePerMillionTokens":3}}}`))
		if replaced.Pricing.ID != set.Pricing.ID || len(replaced.Pricing.Prices) != 1 || replaced.Pricing.Prices["claude"]["inputPricePerMillionTokens"] != 3 {
			t.Fatalf("replaced: %s", apitest.JSONOf(t, replaced))
		}
		for _, c := range []struct{ body, fragment string }{
			{`{"prices":{"gpt":{"inputPricePerMillionTokens":-1}}}`, `prices["gpt"].inputPricePerMillionTokens`},
			{`{"prices":{"gpt":{"outputPricePerMillionTokens":2000000}}}`, `prices["gpt"].outputPricePerMillionTokens`},
			{`{"prices":{"gpt":{}}}`, `prices["gpt"]: at least one price`},
			{`{"prices":{" ":{"inputPricePerMillionTokens":1}}}`, `model name`},
			{`{}`, `prices`},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPut, pricingPath, key, c.body), 400, c.fragment)
		}
		got := apitest.Decode[pricingAnswer](t, env.JSON(t, http.MethodGet, pricingPath, key, ""))
		if apitest.JSONOf(t, got) != apitest.JSONOf(t, replaced) {
			t.Fatalf("after refused sets: %s, want %s", apitest.JSONOf(t, got), apitest.JSONOf(t, replaced))
		}
		if p := apitest.Decode[pricingAnswer](t, env.JSON(t, http.MethodGet, pricingPath, otherKey, "")); p.Pricing != nil {
			t.Fatalf("another team reads the pricing: %+v", p.Pricing)
		}
		deleted := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, pricingPath, key, ""))
		if deleted.ID != set.Pricing.ID {
			t.Fatalf("deleted %q", deleted.ID)
		}
		if p := apitest.Decode[pricingAnswer](t, env.JSON(t, http.MethodGet, pricingPath, key, "")); p.Pricing != nil {
			t.Fatalf("pricing after delete: %+v", p.Pricing)
		}
	})
}

type evaluationAnswer struct {
	ID          string                     `json:"id"`
	Application string                     `json:"application"`
	Subsystem   string                     `json:"subsystem"`
	CompanyID   string                     `json:"companyId"`
	Config      map[string]json.RawMessage `json:"config"`
	Target      string                     `json:"target"`
	Threshold   *float64                   `json:"threshold"`
	IsEnabled   bool                       `json:"isEnabled"`
	CreatedBy   string                     `json:"createdBy"`
}

func createEvaluation(t *testing.T, env *apitest.Env, key, body string) evaluationAnswer {
	t.Helper()
	return apitest.Decode[struct{ AiEvaluation evaluationAnswer }](t, env.JSON(t, http.MethodPost, evals, key, body)).AiEvaluation
}

// AI evaluations: created with one type's settings, read, listed by application, subsystem and
// type, changed by presence or by mask, refused with the field named (nothing changed), deleted.
func TestEvaluations(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		pii := createEvaluation(t, env, key, `{"application":"bot","subsystem":"prod","target":"RESPONSE","threshold":0.8,"isEnabled":true,"config":{"pii":{"categories":["EMAIL_ADDRESS","CREDIT_CARD"]}}}`)
		if pii.ID == "" || pii.CompanyID != fmt.Sprint(teamID) || pii.Target != "RESPONSE" || !pii.IsEnabled || pii.Threshold == nil || *pii.Threshold != 0.8 {
			t.Fatalf("created: %+v", pii)
		}
		if _, ok := pii.Config["pii"]; !ok || len(pii.Config) != 1 {
			t.Fatalf("config: %v", pii.Config)
		}
		tox := createEvaluation(t, env, key, `{"application":"bot","target":"PROMPT","config":{"toxicity":{}}}`)
		if tox.IsEnabled || string(tox.Config["toxicity"]) != "{}" {
			t.Fatalf("toxicity: %+v %s", tox, tox.Config["toxicity"])
		}
		createEvaluation(t, env, key, `{"application":"other-bot","target":"CONVERSATION","config":{"sqlLoad":{"joinLimit":"3","allowRecursiveCte":false}}}`)

		list := func(k, query string) []string {
			t.Helper()
			var ids []string
			for _, e := range apitest.Decode[struct{ AiEvaluations []evaluationAnswer }](t, env.JSON(t, http.MethodGet, evals+query, k, "")).AiEvaluations {
				ids = append(ids, e.ID)
			}
			return ids
		}
		if got := list(key, "?application=bot"); !slices.Equal(got, []string{pii.ID, tox.ID}) {
			t.Fatalf("bot's: %v", got)
		}
		if got := list(key, "?application=bot&evaluation_type=TOXICITY"); !slices.Equal(got, []string{tox.ID}) {
			t.Fatalf("bot's toxicity: %v", got)
		}
		if got := list(key, "?subsystem=prod"); !slices.Equal(got, []string{pii.ID}) {
			t.Fatalf("prod's: %v", got)
		}
		if got := list(key, "?page_size=2&page_offset=1"); len(got) != 1 {
			t.Fatalf("second page of two: %v", got)
		}
		if got := list(otherKey, ""); len(got) != 0 {
			t.Fatalf("another team lists %v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, evals+"/"+pii.ID, otherKey, ""), 404, pii.ID)

		for _, c := range []struct{ body, fragment string }{
			{`{"application":"bot","target":"PROMPT","config":{"toxicity":{},"sexism":{}}}`, "config: must set exactly one"},
			{`{"application":"bot","target":"PROMPT","config":{}}`, "config: must set exactly one"},
			{`{"application":"bot","target":"PROMPT"}`, "config: required"},
			{`{"application":"bot","config":{"toxicity":{}}}`, "target: required"},
			{`{"target":"PROMPT","config":{"toxicity":{}}}`, "application: required"},
			{`{"application":"bot","target":"PROMPT","config":{"competition":{"competitors":[]}}}`, "config.competition.competitors"},
			{`{"application":"bot","target":"PROMPT","config":{"pii":{"categories":["US_SSN","US_SSN"]}}}`, "config.pii.categories[1]"},
			{`{"application":"bot","target":"PROMPT","config":{"allowedTopics":{"topics":["a","a"]}}}`, "config.allowedTopics.topics[1]"},
			{`{"application":"bot","target":"PROMPT","threshold":1.5,"config":{"toxicity":{}}}`, "threshold"},
			{`{"application":"bot","target":"PROMPT","config":{"customEvaluation":{"policyType":"style","instructions":"judge {response}"}}}`, "config.customEvaluation.policyType"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, evals, key, c.body), 400, c.fragment)
		}
		if got := list(key, ""); len(got) != 3 {
			t.Fatalf("%d evaluations after refused creates", len(got))
		}

		// Without a mask, what the body holds changes; with one, exactly the named fields.
		patch := func(id, body string) evaluationAnswer {
			t.Helper()
			return apitest.Decode[struct{ AiEvaluation evaluationAnswer }](t, env.JSON(t, http.MethodPatch, evals+"/"+id, key, body)).AiEvaluation
		}
		changed := patch(pii.ID, `{"threshold":0.5}`)
		if *changed.Threshold != 0.5 || !changed.IsEnabled || changed.Subsystem != "prod" || changed.CreatedBy != pii.CreatedBy {
			t.Fatalf("patched threshold: %+v", changed)
		}
		changed = patch(pii.ID, `{"threshold":0.9,"isEnabled":false,"updateMask":"is_enabled,subsystem"}`)
		if *changed.Threshold != 0.5 || changed.IsEnabled || changed.Subsystem != "" {
			t.Fatalf("patched by mask: %+v", changed)
		}
		changed = patch(pii.ID, `{"config":{"restrictedTopics":{"topics":["medical advice"]}}}`)
		if _, ok := changed.Config["restrictedTopics"]; !ok || len(changed.Config) != 1 {
			t.Fatalf("new config: %v", changed.Config)
		}
		if got := list(key, "?evaluation_type=RESTRICTED_TOPICS"); !slices.Equal(got, []string{pii.ID}) {
			t.Fatalf("after the type changed: %v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, evals+"/"+pii.ID, key, `{"updateMask":"config"}`), 400, "updateMask: names config")
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, evals+"/"+pii.ID, key, `{"updateMask":"colour"}`), 400, `updateMask: "colour"`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, evals+"/"+pii.ID, key, `{"config":{"toxicity":{},"sexism":{}}}`), 400, "config")
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, evals+"/"+pii.ID, otherKey, `{"threshold":0.1}`), 404, pii.ID)
		if got := apitest.Decode[struct{ AiEvaluation evaluationAnswer }](t, env.JSON(t, http.MethodGet, evals+"/"+pii.ID, key, "")).AiEvaluation; *got.Threshold != 0.5 {
			t.Fatalf("after refused changes: %+v", got)
		}

		if d := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, evals+"/"+tox.ID, key, "")); d.ID != tox.ID {
			t.Fatalf("deleted %q", d.ID)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, evals+"/"+tox.ID, key, ""), 404, tox.ID)
	})
}

type customAnswer struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Description    string   `json:"description"`
	ApplicationIds []string `json:"applicationIds"`
	Config         struct {
		PolicyType   string `json:"policyType"`
		Instructions string `json:"instructions"`
		Examples     []struct {
			Conversation, Score string
		} `json:"examples"`
		Safe, Violates string
	} `json:"config"`
}

const customBody = `{"name":"No competitors","policyType":"quality","instructions":"Does {response} name a competitor?",` +
	`"safe":"talks about us","violates":"names a competitor","examples":[{"conversation":"A: ours","score":"0"},{"conversation":"A: theirs","score":"1"}]`

// Custom evaluations: created (linked at once to existing applications only), refused with the
// field named, changed, linked and unlinked (the last link too), listed per application, counted
// per type in agreement with the application list's filter; deleting an application unlinks it.
func TestCustomEvaluations(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		otherID, otherKey := env.MustTeam(t, "other")
		bot := register(t, env, teamID, `{"application":"bot","subsystem":"prod"}`)
		advisor := register(t, env, teamID, `{"application":"advisor"}`)
		foreign := register(t, env, otherID, `{"application":"bot","subsystem":"prod"}`)

		create := func(k, body string) customAnswer {
			t.Helper()
			return apitest.Decode[struct{ Item customAnswer }](t, env.JSON(t, http.MethodPost, customs, k, body)).Item
		}
		c := create(key, customBody+`,"applicationIds":["`+strings.ToUpper(bot.ID)+`","`+bot.ID+`"]}`)
		if c.ID == "" || !slices.Equal(c.ApplicationIds, []string{bot.ID}) || c.Config.PolicyType != "quality" || len(c.Config.Examples) != 2 {
			t.Fatalf("created: %+v", c)
		}
		for _, bad := range []struct{ body, fragment string }{
			{customBody + `,"applicationIds":["` + foreign.ID + `"]}`, "applicationIds[0]"},
			{customBody + `,"applicationIds":["` + missingID + `"]}`, "applicationIds[0]"},
			{strings.Replace(customBody, `"quality"`, `"style"`, 1) + `}`, "policyType"},
			{strings.Replace(customBody, `"Does {response} name a competitor?"`, `""`, 1) + `}`, "instructions"},
			{strings.Replace(customBody, `"Does {response} name a competitor?"`, `"   "`, 1) + `}`, "instructions"},
			{strings.Replace(customBody, `"Does {response} name a competitor?"`, `"Is it rude?"`, 1) + `}`, "instructions: must name"},
			{strings.Replace(customBody, `"score":"1"`, `"score":"7"`, 1) + `}`, "examples[1].score"},
			{strings.Replace(customBody, `"A: ours"`, `""`, 1) + `}`, "examples[0].conversation"},
			{strings.Replace(customBody, `"name":"No competitors",`, ``, 1) + `}`, "name"},
			{`{"name":"x","instructions":"{prompt}"}`, "policyType: required"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, customs, key, bad.body), 400, bad.fragment)
		}
		listed := apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs, key, "")).Items
		if len(listed) != 1 || listed[0].ID != c.ID {
			t.Fatalf("list after refused creates: %+v", listed)
		}
		if others := apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs, otherKey, "")).Items; len(others) != 0 {
			t.Fatalf("another team lists %+v", others)
		}

		// Changing fields keeps the links.
		patched := apitest.Decode[struct{ Item customAnswer }](t, env.JSON(t, http.MethodPatch, customs+"/"+c.ID, key,
			`{"description":"d","policyType":"security","updateMask":"description,policy_type,safe"}`)).Item
		if patched.Description != "d" || patched.Config.PolicyType != "security" || patched.Config.Safe != "" || patched.Config.Violates != "names a competitor" ||
			!slices.Equal(patched.ApplicationIds, []string{bot.ID}) {
			t.Fatalf("patched: %+v", patched)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, customs+"/"+c.ID, key, `{"policyType":"style"}`), 400, "policyType")
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, customs+"/"+c.ID, key, `{"updateMask":"instructions"}`), 400, "instructions cannot be cleared")
		apitest.ExpectError(t, env.JSON(t, http.MethodPatch, customs+"/"+c.ID, otherKey, `{"name":"x"}`), 404, c.ID)

		// Links: to an application the team lacks is a 400; twice is once; the last may go.
		linkPath := func(appID string) string { return customs + "/" + c.ID + "/applications/" + appID }
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, linkPath(missingID), key, ""), 400, "application_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, linkPath(foreign.ID), key, ""), 400, "application_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, customs+"/"+missingID+"/applications/"+bot.ID, key, ""), 404, missingID)
		for range 2 {
			l := apitest.Decode[struct{ ID, ApplicationID string }](t, env.JSON(t, http.MethodPost, linkPath(advisor.ID), key, ""))
			if l.ID != c.ID || l.ApplicationID != advisor.ID {
				t.Fatalf("link: %+v", l)
			}
		}
		byApp := func(appID string) []string {
			t.Helper()
			var ids []string
			for _, x := range apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs+"/by-application/"+appID, key, "")).Items {
				ids = append(ids, x.ID)
			}
			return ids
		}
		if got := byApp(advisor.ID); !slices.Equal(got, []string{c.ID}) {
			t.Fatalf("advisor's: %v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, customs+"/by-application/"+foreign.ID, key, ""), 404, foreign.ID)

		// The counts agree with the application list filtered on each type.
		createEvaluation(t, env, key, `{"application":"bot","target":"PROMPT","config":{"toxicity":{}}}`)
		createEvaluation(t, env, key, `{"application":"advisor","subsystem":"elsewhere","target":"PROMPT","config":{"pii":{"categories":["US_SSN"]}}}`)
		expectCounts(t, env, key, map[string]int64{"CUSTOM_EVALUATION": 2, "TOXICITY": 1, "PII": 0})

		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, linkPath(bot.ID), key, ""))
		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, linkPath(advisor.ID), key, ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, linkPath(advisor.ID), key, ""), 404, "not linked")
		left := apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs, key, "")).Items
		if len(left) != 1 || len(left[0].ApplicationIds) != 0 || !strings.Contains(apitest.JSONOf(t, left[0]), `"applicationIds":[]`) {
			t.Fatalf("after the last unlink: %+v", left)
		}
		expectCounts(t, env, key, map[string]int64{"CUSTOM_EVALUATION": 0, "TOXICITY": 1})

		// Deleting an application unlinks it; the custom evaluation stays.
		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodPost, linkPath(advisor.ID), key, ""))
		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, apps+"/"+advisor.ID, key, ""))
		left = apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs, key, "")).Items
		if len(left) != 1 || len(left[0].ApplicationIds) != 0 {
			t.Fatalf("after the application was deleted: %+v", left)
		}
		if n := apitest.MustQueryString(t, env.DB, `SELECT CAST(COUNT(*) AS TEXT) FROM ai_custom_evaluation_links`); n != "0" {
			t.Fatalf("%s links remain", n)
		}

		if d := apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, customs+"/"+c.ID, key, "")); d.ID != c.ID {
			t.Fatalf("deleted %q", d.ID)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, customs+"/"+c.ID, key, ""), 404, c.ID)
	})
}

// expectCounts checks the counts per type: every type is there, those of want have its value,
// and each equals the length of the application list filtered on that type.
func expectCounts(t *testing.T, env *apitest.Env, key string, want map[string]int64) {
	t.Helper()
	counts := apitest.Decode[struct{ Counts map[string]int64 }](t, env.JSON(t, http.MethodGet, countsPath, key, "")).Counts
	if len(counts) != len(ai.EvaluationTypes()) {
		t.Fatalf("counts of %d types: %v", len(counts), counts)
	}
	for typ, n := range want {
		if counts[typ] != n {
			t.Fatalf("%s: %d, want %d (%v)", typ, counts[typ], n, counts)
		}
	}
	for _, typ := range ai.EvaluationTypes() {
		if n := len(listApps(t, env, key, "?evaluation_types="+typ)); int64(n) != counts[typ] {
			t.Fatalf("%s: count %d, the filtered list holds %d", typ, counts[typ], n)
		}
	}
}

// The four areas join the configuration document: an apply registers applications, sets the
// pricing, stores evaluations and custom evaluations linked to the document's applications; the
// export gives them back and applying it again changes nothing; prune removes them.
func TestConfiguration(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		const appID, evalID, customID, pricingID = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002",
			"00000000-0000-4000-8000-000000000003", "00000000-0000-4000-8000-000000000004"
		doc := `aiApplications:
- {id: ` + appID + `, application: bot, subsystem: prod, guardrailsIntegrated: true}
aiModelPricing: {id: ` + pricingID + `, prices: {gpt-4o: {inputPricePerMillionTokens: 2.5}}}
aiEvaluations:
- {id: ` + evalID + `, application: bot, target: RESPONSE, threshold: 0.7, config: {competition: {competitors: [CompetitorX]}}}
aiCustomEvaluations:
- {id: ` + customID + `, name: No PII, policyType: security, instructions: "Does {response} leak PII?", applicationIds: [` + appID + `]}
`
		apply := func(query, body string) apitest.Response {
			return env.Do(t, http.MethodPost, "/config/v1/apply"+query, "Bearer "+key, "application/yaml", body)
		}
		if res := apply("", doc); res.Status != 200 {
			t.Fatalf("apply: %d %s", res.Status, res.Body)
		}
		got := apitest.Decode[struct{ AiApplication app }](t, env.JSON(t, http.MethodGet, apps+"/"+appID, key, "")).AiApplication
		if got.Application != "bot" || !got.GuardrailsIntegrated {
			t.Fatalf("application: %+v", got)
		}
		if ids := apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs+"/by-application/"+appID, key, "")).Items; len(ids) != 1 || ids[0].ID != customID {
			t.Fatalf("linked: %+v", ids)
		}
		expectCounts(t, env, key, map[string]int64{"COMPETITION": 1, "CUSTOM_EVALUATION": 1})
		export := env.Do(t, http.MethodGet, "/config/v1/export", "Bearer "+key, "", "")
		for _, want := range []string{"aiApplications:", "aiModelPricing:", "aiEvaluations:", "aiCustomEvaluations:", customID, "CompetitorX"} {
			if export.Status != 200 || !strings.Contains(string(export.Body), want) {
				t.Fatalf("export lacks %q: %d %s", want, export.Status, export.Body)
			}
		}
		if res := apply("", string(export.Body)); res.Status != 200 || strings.Contains(string(res.Body), `"action":"create"`) || strings.Contains(string(res.Body), `"action":"update"`) {
			t.Fatalf("re-apply of the export: %d %s", res.Status, res.Body)
		}
		// A link to an application the document and the team lack is refused; nothing changes.
		bad := strings.Replace(doc, "applicationIds: ["+appID+"]", "applicationIds: ["+missingID+"]", 1)
		apitest.ExpectError(t, apply("", bad), 400, "applicationIds[0]")
		apitest.ExpectError(t, apply("", strings.Replace(doc, "policyType: security", "policyType: style", 1)), 400, "policyType")
		if ids := apitest.Decode[struct{ Items []customAnswer }](t, env.JSON(t, http.MethodGet, customs, key, "")).Items; len(ids) != 1 || !slices.Equal(ids[0].ApplicationIds, []string{appID}) {
			t.Fatalf("after refused applies: %+v", ids)
		}
		// Prune with empty lists removes them all (the pricing, a single object, stays).
		if res := apply("?prune=true", "aiApplications: []\naiEvaluations: []\naiCustomEvaluations: []\n"); res.Status != 200 {
			t.Fatalf("prune: %d %s", res.Status, res.Body)
		}
		if n := len(listApps(t, env, key, "")); n != 0 {
			t.Fatalf("%d applications after prune", n)
		}
		if n := apitest.MustQueryString(t, env.DB, `SELECT CAST(COUNT(*) AS TEXT) FROM ai_custom_evaluation_links`); n != "0" {
			t.Fatalf("%s links after prune", n)
		}
	})
}

// Every write joins the audit log with the ids it named or made: the operator's registration
// under the team it names, a custom evaluation's link under both ids, a refused write not at all.
func TestAuditRecords(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		bot := register(t, env, teamID, `{"application":"bot"}`)
		c := apitest.Decode[struct{ Item customAnswer }](t, env.JSON(t, http.MethodPost, customs, key, customBody+`}`)).Item
		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodPost, customs+"/"+c.ID+"/applications/"+bot.ID, key, ""))
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, pricingPath, key, `{"prices":{"m":{}}}`), 400, `prices["m"]`)
		res := env.Do(t, http.MethodGet, fmt.Sprintf("/admin/v1/teams/%d/audit", teamID), "Bearer "+apitest.OperatorKey, "", "")
		records := apitest.Decode[struct {
			Records []struct {
				Operation   string
				KeyID       string
				ResourceIds []string
			}
		}](t, res).Records
		byOperation := map[string][]string{}
		for _, r := range records {
			byOperation[r.Operation] = r.ResourceIds
		}
		for op, want := range map[string][]string{
			"AdminRegisterAiApplication": {bot.ID}, "CreateAiCustomEvaluation": {c.ID}, "LinkAiCustomEvaluation": {c.ID, bot.ID},
		} {
			got, ok := byOperation[op]
			if !ok {
				t.Fatalf("no audit record of %s: %s", op, res.Body)
			}
			for _, id := range want {
				if !slices.Contains(got, id) {
					t.Fatalf("%s's record names %v, not %s", op, got, id)
				}
			}
		}
		if _, ok := byOperation["SetAiModelPricing"]; ok {
			t.Fatalf("a refused write was recorded: %s", res.Body)
		}
	})
}

// A team at its bound of custom evaluations gets a 429 for one more, and nothing is stored.
func TestCustomEvaluationBound(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		var rows []string
		for i := range ai.MaxCustomEvaluations {
			rows = append(rows, fmt.Sprintf("(%d, '00000000-0000-4000-8000-%012d', 'n', '{\"name\":\"n\"}', 1, 1)", teamID, i))
		}
		apitest.MustExec(t, env.DB, `INSERT INTO ai_custom_evaluations (team_id, id, name, document, created_at, updated_at) VALUES `+strings.Join(rows, ", "))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, customs, key, customBody+`}`), 429, "1000 AI custom evaluations")
		if n := apitest.MustQueryString(t, env.DB, `SELECT CAST(COUNT(*) AS TEXT) FROM ai_custom_evaluations`); n != "1000" {
			t.Fatalf("%s custom evaluations", n)
		}
	})
}
