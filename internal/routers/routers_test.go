package routers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/routers"
)

const (
	base        = "/mgmt/openapi/latest/notifications/notification-center/v1/"
	routersPath = base + "routers"
	batchPath   = base + "routers/all/summaries"
	matcherPath = base + "routers/matcher/validate"
	connPath    = base + "connectors"
	presetPath  = "/mgmt/openapi/latest/notifications/notification-center/v1/presets:createCustom"
	presetsPath = base + "presets/custom"
	slackPreset = "preset_system_slack_alerts_basic"
)

type targetOut struct {
	ID          string `json:"id"`
	ConnectorID string `json:"connectorId"`
	PresetID    string `json:"presetId"`
}

type routerOut struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Description  *string           `json:"description"`
	EntityLabels map[string]string `json:"entityLabels"`
	Rules        []struct {
		Name      string      `json:"name"`
		Condition string      `json:"condition"`
		Targets   []targetOut `json:"targets"`
	} `json:"rules"`
	FallbackTargets []struct {
		EntityType string    `json:"entityType"`
		Target     targetOut `json:"target"`
	} `json:"fallbackTargets"`
	Disabled   *bool  `json:"disabled"`
	CreateTime string `json:"createTime"`
	UpdateTime string `json:"updateTime"`
}

func connector(t *testing.T, env *apitest.Env, key, typ, field, value string) string {
	t.Helper()
	body := `{"connector":{"name":"c","type":"` + typ + `","connectorConfig":{"fields":[{"fieldName":"` + field + `","value":"` + value + `"}]}}}`
	return apitest.Decode[struct{ Connector struct{ ID string } }](t, env.JSON(t, http.MethodPost, connPath, key, body)).Connector.ID
}

func preset(t *testing.T, env *apitest.Env, key, typ string) string {
	t.Helper()
	body := `{"preset":{"name":"p","connectorType":"` + typ + `","entityType":"ALERTS"}}`
	return apitest.Decode[struct{ Preset struct{ ID string } }](t, env.JSON(t, http.MethodPost, presetPath, key, body)).Preset.ID
}

func router(conn, presetID string) string {
	p := ""
	if presetID != "" {
		p = `,"presetId":"` + presetID + `"`
	}
	return `{"name":"Paging","description":"d","entityLabels":{"environment":"production","service":"*"},` +
		`"rules":[{"name":"P1","condition":"alertDef.priority == 'P1'","targets":[{"connectorId":"` + conn + `"` + p + `}]}],` +
		`"fallbackTargets":[{"entityType":"ALERTS","target":{"connectorId":"` + conn + `"}}]}`
}

func create(t *testing.T, env *apitest.Env, key, body string) routerOut {
	t.Helper()
	return apitest.Decode[struct{ Router routerOut }](t, env.JSON(t, http.MethodPost, routersPath, key, `{"router":`+body+`}`)).Router
}

func TestRouterLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		slack := connector(t, env, key, "SLACK", "integrationId", hookTo(t, env, key, "SLACK", "https://hooks.slack.com/services/x"))
		custom := preset(t, env, key, "SLACK")
		r := create(t, env, key, router(slack, custom))
		if r.ID == "" || r.Name != "Paging" || r.Description == nil || *r.Description != "d" || r.Disabled == nil || *r.Disabled ||
			r.EntityLabels["environment"] != "production" || len(r.Rules) != 1 || r.Rules[0].Condition != "alertDef.priority == 'P1'" ||
			len(r.Rules[0].Targets) != 1 || len(r.Rules[0].Targets[0].ID) != 36 || r.Rules[0].Targets[0].PresetID != custom ||
			len(r.FallbackTargets) != 1 || r.FallbackTargets[0].Target.ConnectorID != slack || r.CreateTime == "" {
			t.Fatalf("created %+v", r)
		}
		env.Restart(t)
		got := apitest.Decode[struct{ Router routerOut }](t, env.JSON(t, http.MethodGet, routersPath+"/"+r.ID, key, "")).Router
		if got.ID != r.ID || got.Rules[0].Targets[0].ID != r.Rules[0].Targets[0].ID || got.CreateTime != r.CreateTime {
			t.Fatalf("get %+v, want %+v", got, r)
		}
		// Replace: a system preset of the connector's type; the target keeps the id sent.
		env.Clock.Advance(1e9)
		body := `{"router":{"id":"` + r.ID + `","name":"Renamed","disabled":true,"rules":[{"condition":"true","targets":[{"id":"` +
			r.Rules[0].Targets[0].ID + `","connectorId":"` + slack + `","presetId":"` + slackPreset + `"}]}]}}`
		rep := apitest.Decode[struct{ Router routerOut }](t, env.JSON(t, http.MethodPut, routersPath, key, body)).Router
		if rep.Name != "Renamed" || rep.Disabled == nil || !*rep.Disabled || rep.CreateTime != r.CreateTime || rep.UpdateTime == r.UpdateTime ||
			rep.Rules[0].Targets[0].ID != r.Rules[0].Targets[0].ID || len(rep.FallbackTargets) != 0 {
			t.Fatalf("replaced %+v", rep)
		}
		// The custom preset is no longer used: it can be deleted; the connector cannot.
		if res := env.JSON(t, http.MethodDelete, presetsPath+"/"+custom, key, ""); res.Status != 200 {
			t.Fatalf("delete of an unused preset: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, connPath+"/"+slack, key, ""), 409, slack, `router "Renamed" (id `+r.ID+`)`)
		// Batch, list, delete.
		b := apitest.Decode[struct {
			Routers     map[string]routerOut
			NotFoundIds []string
		}](t, env.JSON(t, http.MethodGet, batchPath+"?global_router_ids="+r.ID+"&global_router_ids=nope&global_router_ids=nope", key, ""))
		if len(b.Routers) != 1 || b.Routers[r.ID].Name != "Renamed" || strings.Join(b.NotFoundIds, ",") != "nope" {
			t.Fatalf("batch %+v", b)
		}
		if res := env.JSON(t, http.MethodDelete, routersPath+"/"+r.ID, key, ""); res.Status != 200 || strings.TrimSpace(string(res.Body)) != "{}" {
			t.Fatalf("delete %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, routersPath+"/"+r.ID, key, ""), 404, r.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, routersPath+"/"+r.ID, key, ""), 404, r.ID)
		// Once the router is gone, the connector can be deleted.
		if res := env.JSON(t, http.MethodDelete, connPath+"/"+slack, key, ""); res.Status != 200 {
			t.Fatalf("delete of an unused connector: %d %s", res.Status, res.Body)
		}
	})
}

// TestChosenRouterID: a router created with an id keeps it (the vendor's Terraform provider lets a
// configuration choose one); a second router of that id is a 409 and a malformed id a 400, each
// changing nothing.
func TestChosenRouterID(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		conn := connector(t, env, key, "GENERIC_HTTPS", "url", "https://hooks.example.com/x")
		body := `{"id":"router_paging",` + strings.TrimPrefix(router(conn, ""), "{")
		if r := create(t, env, key, body); r.ID != "router_paging" {
			t.Fatalf("created id %q, want router_paging", r.ID)
		}
		got := apitest.Decode[struct{ Router routerOut }](t, env.JSON(t, http.MethodGet, routersPath+"/router_paging", key, "")).Router
		if got.ID != "router_paging" || got.Name != "Paging" {
			t.Fatalf("get %+v", got)
		}
		other := `{"router":{"id":"router_paging","name":"Other","rules":[]}}`
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, other), 409, "router.id", "router_paging")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, `{"router":{"id":"-bad","name":"Bad","rules":[]}}`), 400, "router.id", "-bad")
		list := apitest.Decode[struct{ Routers []routerOut }](t, env.JSON(t, http.MethodGet, routersPath, key, ""))
		if len(list.Routers) != 1 || list.Routers[0].Name != "Paging" {
			t.Fatalf("after the refusals the team holds %+v", list.Routers)
		}
	})
}

func TestTargetsMustExistAndMatch(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		slack := connector(t, env, key, "SLACK", "integrationId", hookTo(t, env, key, "SLACK", "https://hooks.slack.com/services/x"))
		pd := connector(t, env, key, "PAGERDUTY", "integrationKey", "k")
		foreign := connector(t, env, other, "SLACK", "integrationId", hookTo(t, env, other, "SLACK", "https://hooks.slack.com/services/y"))
		pdPreset := preset(t, env, key, "PAGERDUTY")
		cases := []struct {
			body      string
			fragments []string
		}{
			{router("nope", ""), []string{"router.rules[0].targets[0].connectorId", `no connector "nope"`}},
			{router(foreign, ""), []string{"router.rules[0].targets[0].connectorId", "no connector"}},
			{router(slack, "nope"), []string{"router.rules[0].targets[0].presetId", `no preset "nope"`}},
			{router(slack, pdPreset), []string{"router.rules[0].targets[0].presetId", "is for PAGERDUTY connectors", "of type SLACK"}},
			{router(pd, slackPreset), []string{"router.rules[0].targets[0].presetId", "is for SLACK connectors", "of type PAGERDUTY"}},
			{`{"name":"n","fallback":[{"connectorId":"nope"}]}`, []string{"router.fallback[0].connectorId", "no connector"}},
			{`{"name":"n","fallbackTargets":[{"entityType":"CASES","target":{"presetId":"x"}}]}`, []string{"router.fallbackTargets[0].target.connectorId", "required"}},
			{`{"name":"n","fallbackTargets":[{"entityType":"CASES"}]}`, []string{"router.fallbackTargets[0].target", "required"}},
			{`{"name":"n","fallbackTargets":[{"entityType":"OLLY_SCHEDULED_TASKS","target":{"connectorId":"` + pd + `"}}]}`,
				[]string{"router.fallbackTargets[0].target.connectorId", "does not carry OLLY_SCHEDULED_TASKS"}},
			{`{"name":"n","fallbackTargets":[{"entityType":"CASES","target":{"connectorId":"` + slack + `"}},{"entityType":"CASES","target":{"connectorId":"` + slack + `"}}]}`,
				[]string{"router.fallbackTargets[1].entityType", "one per entity type"}},
			{`{"description":"x"}`, []string{"router.name", "required"}},
			{`{"name":"n","rules":[{"targets":[]}]}`, []string{"router.rules[0].condition", "required"}},
			{`{"name":"n","rules":[{"condition":"   "}]}`, []string{"router.rules[0].condition", "blank"}},
			{`{"name":"n","rules":[{"condition":""}]}`, []string{"condition"}},
			{`{"name":"n","entityLabels":{"9env":"x"}}`, []string{"router.entityLabels", `label "9env"`, "starts with a letter"}},
			{`{"name":"n","entityLabels":{"env":""}}`, []string{"router.entityLabels", `label "env"`, "must not be empty"}},
			{`{"name":"` + strings.Repeat("n", 201) + `"}`, []string{"name"}},
			{`{"name":"n","rules":[` + strings.Repeat(`{"condition":"x"},`, 10) + `{"condition":"x"}]}`, []string{"rules"}},
		}
		for _, c := range cases {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, `{"router":`+c.body+`}`), 400, c.fragments...)
		}
		if got := apitest.Decode[struct{ Routers []routerOut }](t, env.JSON(t, http.MethodGet, routersPath, key, "")).Routers; len(got) != 0 {
			t.Fatalf("refused bodies stored %+v", got)
		}
		// A used preset cannot be deleted nor change connector type; a used connector cannot change type.
		r := create(t, env, key, router(pd, pdPreset))
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, presetsPath+"/"+pdPreset, key, ""), 409, pdPreset, `router "Paging" (id `+r.ID+`)`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, base+"presets:replaceCustom", key,
			`{"preset":{"id":"`+pdPreset+`","name":"p","connectorType":"SLACK"}}`), 409, "preset.connectorType", "cannot change connector type")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, connPath, key,
			`{"connector":{"id":"`+pd+`","name":"c","type":"MICROSOFT_TEAMS","connectorConfig":{"fields":[{"fieldName":"integrationId","value":"`+hookTo(t, env, key, "MS_TEAMS_WORKFLOW", "https://t.example/h")+`"}]}}}`),
			409, "connector.type", "cannot change type")
		// Other teams see nothing and cannot touch it.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, routersPath+"/"+r.ID, other, ""), 404, r.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, routersPath+"/"+r.ID, other, ""), 404, r.ID)
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, routersPath, other, `{"router":{"id":"`+r.ID+`","name":"x"}}`), 404, "router.id")
		if got := apitest.Decode[struct{ Routers []routerOut }](t, env.JSON(t, http.MethodGet, routersPath, other, "")).Routers; len(got) != 0 {
			t.Fatalf("other team lists %+v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, routersPath, key, `{"router":{"name":"x"}}`), 400, "router.id", "required")
	})
}

func TestListFilters(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		create(t, env, key, `{"name":"prod","entityLabels":{"environment":"production","team":"a"}}`)
		create(t, env, key, `{"name":"staging","entityType":"CASES","entityLabels":{"environment":"staging"}}`)
		create(t, env, key, `{"name":"none"}`)
		names := func(query string) string {
			var out []string
			for _, r := range apitest.Decode[struct{ Routers []routerOut }](t, env.JSON(t, http.MethodGet, routersPath+query, key, "")).Routers {
				out = append(out, r.Name)
			}
			return strings.Join(out, ",")
		}
		for query, want := range map[string]string{
			"": "prod,staging,none",
			"?" + url.QueryEscape("source_entity_labels[environment][values]") + "=production":                                                                              "prod",
			"?" + url.QueryEscape("source_entity_labels[environment][values]") + "=production&" + url.QueryEscape("source_entity_labels[environment][values]") + "=staging": "prod,staging",
			"?" + url.QueryEscape("source_entity_labels[environment][values][0]") + "=staging":                                                                              "staging",
			"?" + url.QueryEscape("source_entity_labels[team][values]") + "=a&" + url.QueryEscape("source_entity_labels[environment][values]") + "=production":              "prod",
			"?" + url.QueryEscape("source_entity_labels[team][values]") + "=b":                                                                                              "",
			"?entity_type=CASES":                   "staging",
			"?entity_type=ENTITY_TYPE_UNSPECIFIED": "prod,staging,none",
		} {
			if got := names(query); got != want {
				t.Errorf("%s: %q, want %q", query, got, want)
			}
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, routersPath+"?"+url.QueryEscape("source_entity_labels[env]")+"=x", key, ""), 400, "source_entity_labels")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, routersPath+"?entity_type=DOGS", key, ""), 400, "entity_type")
	})
}

func TestValidateEntityLabelMatcher(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		check := func(query string) (bool, string) {
			t.Helper()
			res := env.JSON(t, http.MethodPost, matcherPath+query, key, "")
			var out struct {
				Result struct {
					Success *json.RawMessage
					Failure *struct{ Message string }
				}
			}
			if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 || (out.Result.Success == nil) == (out.Result.Failure == nil) {
				t.Fatalf("%s: %d %s", query, res.Status, res.Body)
			}
			if out.Result.Failure != nil {
				return false, out.Result.Failure.Message
			}
			return true, ""
		}
		m := func(pairs ...string) string {
			v := url.Values{}
			for i := 0; i < len(pairs); i += 2 {
				v.Add("entity_label_matcher["+pairs[i]+"]", pairs[i+1])
			}
			return "?" + v.Encode()
		}
		for _, q := range []string{"", m("environment", "production"), m("k8s.io/app", "*", "_x", "y")} {
			if ok, msg := check(q); !ok {
				t.Errorf("%s refused: %s", q, msg)
			}
		}
		many := make([]string, 0, 102)
		for i := range 51 {
			many = append(many, "l"+strings.Repeat("x", i), "v")
		}
		for q, frag := range map[string]string{
			m("1abc", "x"):                     `label "1abc": a name starts with a letter`,
			m("a b", "x"):                      `label "a b"`,
			m("env", ""):                       `label "env": the value must not be empty`,
			m("env", " prod"):                  "white space",
			m("env", strings.Repeat("v", 257)): "at most 256",
			m(strings.Repeat("k", 257), "v"):   "1–256 characters",
			m(strings.Repeat("k", 20000), "v"): "…\": a name has 1–256 characters",
			m(many...):                         "has 51 labels; at most 50",
		} {
			ok, msg := check(q)
			if ok || !strings.Contains(msg, frag) || !strings.HasPrefix(msg, "entity_label_matcher: ") || len(msg) > 300 {
				t.Errorf("%.60s: %v %q, want a failure with %q", q, ok, msg, frag)
			}
		}
		// The same rules refuse a router's entityLabels.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, `{"router":{"name":"n","entityLabels":{"env":" prod"}}}`), 400, "router.entityLabels", "white space")
		if !routers.Matches(map[string]string{"env": "prod", "svc": routers.AnyValue}, map[string]string{"env": "prod", "svc": "api", "x": "y"}) ||
			routers.Matches(map[string]string{"svc": routers.AnyValue}, map[string]string{"env": "prod"}) ||
			routers.Matches(map[string]string{"env": "prod"}, map[string]string{"env": "staging"}) || !routers.Matches(nil, nil) {
			t.Fatal("Matches")
		}
	})
}

func TestPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		summary := env.MustKey(t, key, "notification-center-routers:ReadSummary")
		if res := env.JSON(t, http.MethodGet, batchPath, summary, ""); res.Status != 200 {
			t.Fatalf("summary key on batch: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, routersPath, summary, ""), 403, "notification-center-routers:ReadConfig")
		reader := env.MustKey(t, key, "notification-center-routers:ReadConfig")
		if res := env.JSON(t, http.MethodPost, matcherPath, reader, ""); res.Status != 200 {
			t.Fatalf("reader on the matcher: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, reader, `{"router":{"name":"n"}}`), 403, "notification-center-routers:UpdateConfig")
	})
}

// TestTeamBound checks that a team holds at most MaxRouters routers (the rows before the last are
// written directly, to keep the test short).
func TestTeamBound(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "acme")
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			for i := range routers.MaxRouters - 1 {
				if _, err := tx.ExecContext(context.Background(),
					`INSERT INTO notification_routers (team_id, id, name, document, created_at, updated_at) VALUES ($1, $2, 'n', '{"name":"n"}', $3, $3)`,
					teamID, fmt.Sprintf("r%04d", i), int64(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		create(t, env, key, `{"name":"last"}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, `{"router":{"name":"one too many"}}`), 429, "200 routers")
		if n := len(apitest.Decode[struct{ Routers []routerOut }](t, env.JSON(t, http.MethodGet, routersPath, key, "")).Routers); n != routers.MaxRouters {
			t.Fatalf("%d routers listed", n)
		}
	})
}

// TestConditionsReadWhatTheirEntitiesHave: a rule's condition may read only variables that the
// notifications it sees have: a router of cases refuses alertDef (400 naming the variable and
// what cases offer), a router of every entity type takes it (the rule is then skipped for cases,
// without a warning), and a name no notification has is refused everywhere.
func TestConditionsReadWhatTheirEntitiesHave(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		key := env.RootKey
		conn := connector(t, env, key, "GENERIC_HTTPS", "url", "https://hooks.example/x")
		body := func(entityType, condition string) string {
			return `{"router":{"name":"r","entityType":"` + entityType + `","rules":[{"condition":"` + condition + `","targets":[{"connectorId":"` + conn + `"}]}]}}`
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, body("CASES", "alertDef.priority == 'P1'")), 400,
			"router.rules[0].condition", "alertDef", "CASES notifications have", "case")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, routersPath, key, body("ENTITY_TYPE_UNSPECIFIED", "alertdef.priority == 'P1'")), 400,
			"router.rules[0].condition", "alertdef", "ALERTS notifications have", "alertDef")
		for _, ok := range []string{body("ENTITY_TYPE_UNSPECIFIED", "alertDef.priority == 'P1'"), body("ALERTS", "alertDef.priority == 'P1'"),
			body("CASES", "case.priority == 'P1' and priority in ['P1']")} {
			if res := env.JSON(t, http.MethodPost, routersPath, key, ok); res.Status != http.StatusOK {
				t.Errorf("%s: %d %s", ok, res.Status, res.Body)
			}
		}
		// An alert opens an incident and a case: the routers of every entity type skip their
		// alertDef rule for the case quietly (DEBUG, naming the case), and warn of nothing.
		alertmanager(t, env, env.MustKey(t, key, "contextual-data:SendData"), "DiskFull", "error", time.Now().UTC().Add(-time.Hour), time.Time{})
		var logs syncBuffer
		env.Route(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		out := logs.String()
		if strings.Contains(out, "level=WARN") || !strings.Contains(out, "reads a variable the entity has not") ||
			!strings.Contains(out, "entity_type=CASES") || !strings.Contains(out, "variable=alertDef") {
			t.Fatalf("routing an alert and its case: %s", out)
		}
	})
}
