package notifytesting_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/conformance"
)

const (
	templatesPath = "/mgmt/openapi/5/notifications/notification-center/v1/templates:test"
	conditionPath = "/mgmt/openapi/5/notifications/notification-center/v1/routers:testCondition"
	templatesPerm = "notification-center-presets:ReadConfig"
	conditionPerm = "notification-center-routers:ReadConfig"
	publicDoc     = "notifications_testing_service.json"
)

var (
	publicOnce sync.Once
	publicDocs *conformance.Documents
)

// checkPublic validates a 200 answer against the public document's schema of the operation, when
// the newest public documents are beside the checkout (the test server checks every answer too,
// the document being in conformance.LatestOnly; this check also fails when the operation is
// missing from it).
func checkPublic(t *testing.T, operation string, res apitest.Response) {
	t.Helper()
	publicOnce.Do(func() {
		if dir := conformance.LocateLatest().Dir; dir != "" {
			publicDocs, _ = conformance.LoadOnly(dir, func(name string) bool { return filepath.Base(name) == publicDoc })
		}
	})
	if publicDocs == nil {
		return
	}
	op := publicDocs.OperationByID(operation)
	if op == nil {
		t.Fatalf("%s is not in %s", operation, publicDoc)
	}
	if v := op.Check(res.Status, res.Header, res.Body); len(v) > 0 {
		t.Errorf("%s answer %s breaks the public schema: %v", operation, res.Body, v)
	}
}

type templateResult struct {
	Result struct {
		Success *struct {
			RenderedValue *string `json:"renderedValue"`
		} `json:"success"`
		Failure *struct {
			Message string `json:"message"`
			Reason  string `json:"reason"`
		} `json:"failure"`
	} `json:"result"`
}

type conditionResult struct {
	Success *struct {
		Result *bool `json:"result"`
	} `json:"success"`
	Failure *struct {
		Message string `json:"message"`
	} `json:"failure"`
}

func TestTemplateRender(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, tc := range []struct {
			body, want, reason, msg string
		}{
			{`{"entityType":"ALERTS","template":"{{alert.status}} {{alertDef.priority}} - {{alertDef.name}}"}`, "Triggered P1 - HighErrorRate", "", ""},
			{`{"template":"{{ alertDef.name }}"}`, "HighErrorRate", "", ""},
			{`{"entityType":"ENTITY_TYPE_UNSPECIFIED","template":"{{ alertDef.entityLabels.service }}"}`, "checkout", "", ""},
			{`{"entityType":"ALERTS","entitySubType":"logsImmediateResolved","template":"{{ alert.status }} {{ _context.entitySubType }}"}`, "Resolved logsImmediateResolved", "", ""},
			{`{"entityType":"TEST_NOTIFICATIONS","template":"{{ priority }}"}`, "P1", "", ""},
			{`{"entityType":"CASES","template":"{{ case.readableId }}: {{ case.title }} ({{ case.status }})"}`, "CASE-42: checkout error rate above 5% (Active)", "", ""},
			{`{"entityType":"ALERTS","template":"{% for k, v in alertDef.entityLabels | dictsort %}{{ k }}={{ v }};{% endfor %}"}`,
				"alertname=HighErrorRate;env=production;service=checkout;severity=critical;team=payments;", "", ""},
			{`{"entityType":"ALERTS"}`, "", "", ""},
			{`{}`, "", "", ""},
			{`{"template":"{{ alertDef.name "}`, "", "INVALID_TEMPLATE", "line 1, column"},
			{`{"template":"ok\n{% include 'x.html' %}"}`, "", "INVALID_TEMPLATE", "include"},
			{`{"template":"{% macro m() %}{% endmacro %}"}`, "", "INVALID_TEMPLATE", "macro"},
			{`{"template":"{{ alertDef.nothing }}"}`, "", "FIELD_NOT_FOUND", "'nothing' not found"},
			{`{"entityType":"CASES","template":"{{ alertDef.name }}"}`, "", "FIELD_NOT_FOUND", "alertDef"},
			{`{"template":"{% for i in range(1000) %}{{ 'x' * 100 }}{% endfor %}"}`, "", "RENDERED_VALUE_EXCEEDS_MAX_LENGTH", "50000"},
			{`{"template":"{% for i in range(50000) %}{% for j in range(50000) %}{% endfor %}{% endfor %}"}`, "", "INVALID_TEMPLATE", "the evaluation takes"},
		} {
			res := env.JSON(t, http.MethodPost, templatesPath, key, tc.body)
			if res.Status != 200 {
				t.Fatalf("%s: %d %s", tc.body, res.Status, res.Body)
			}
			checkPublic(t, "TestingService_TestTemplateRender", res)
			got := apitest.Decode[templateResult](t, res).Result
			if tc.reason == "" {
				if got.Success == nil || got.Failure != nil || got.Success.RenderedValue == nil || *got.Success.RenderedValue != tc.want {
					t.Errorf("%s: %s; want success %q", tc.body, res.Body, tc.want)
				}
				continue
			}
			if got.Failure == nil || got.Success != nil || got.Failure.Reason != tc.reason || !strings.Contains(got.Failure.Message, tc.msg) {
				t.Errorf("%s: %s; want failure %s with %q", tc.body, res.Body, tc.reason, tc.msg)
			}
		}
		// The same operation under the `latest` segment.
		res := env.JSON(t, http.MethodPost, strings.Replace(templatesPath, "/5/", "/latest/", 1), key, `{"template":"{{ name }}"}`)
		if got := apitest.Decode[templateResult](t, res).Result; got.Success == nil || *got.Success.RenderedValue != "HighErrorRate" {
			t.Errorf("latest segment: %d %s", res.Status, res.Body)
		}
	})
}

func TestRoutingCondition(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		for _, tc := range []struct {
			body   string
			result bool
			msg    string
		}{
			{`{"entityType":"ALERTS","template":"alertDef.priority == 'P1'"}`, true, ""},
			{`{"template":"alertDef.priority == 'P3'"}`, false, ""},
			{`{"entityType":"ALERTS","template":"alert.status == 'Triggered' and alertDef.name is containing('Error')"}`, true, ""},
			{`{"template":"alertDef.name is starting_with(\"CPU\")"}`, false, ""},
			{`{"template":"alertDef.name is matching(\"(?i)^high\")"}`, true, ""},
			{`{"template":"alertDef.entityLabels.env == \"production\""}`, true, ""},
			{`{"template":"alertDef.entityLabels.group is defined"}`, false, ""},
			{`{"template":"true"}`, true, ""},
			{`{"entityType":"CASES","template":"case.priority == 'P1' and case.labels.team == 'payments'"}`, true, ""},
			{`{"template":"alertDef.name"}`, false, "Invalid condition: the condition should evaluate to a boolean value (true or false)"},
			{`{"template":"alertDef.priority =="}`, false, "Invalid condition: line 1, column 21"},
			{`{"template":"a }}{{ b"}`, false, "one expression"},
			{`{"template":"alertDef.entityLabels.group == 'x'"}`, false, "'group' not found"},
			{`{"entityType":"CASES","template":"alertDef.priority == 'P1'"}`, false, "alertDef"},
			{`{"template":"alertDef.name | nosuch"}`, false, "filter 'nosuch' not found"},
			{`{"template":"   "}`, false, "the condition is empty"},
		} {
			res := env.JSON(t, http.MethodPost, conditionPath, key, tc.body)
			if res.Status != 200 {
				t.Fatalf("%s: %d %s", tc.body, res.Status, res.Body)
			}
			checkPublic(t, "TestingService_TestRoutingConditionValid", res)
			got := apitest.Decode[conditionResult](t, res)
			if tc.msg == "" {
				if got.Success == nil || got.Failure != nil || got.Success.Result == nil || *got.Success.Result != tc.result {
					t.Errorf("%s: %s; want success %v", tc.body, res.Body, tc.result)
				}
				continue
			}
			if got.Failure == nil || got.Success != nil || !strings.Contains(got.Failure.Message, tc.msg) {
				t.Errorf("%s: %s; want failure with %q", tc.body, res.Body, tc.msg)
			}
		}
	})
}

func TestBadRequests(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		long := strings.Repeat("x", 20001)
		for _, tc := range []struct {
			path, body string
			fragments  []string
		}{
			{templatesPath, `{"template":"` + long + `"}`, []string{"template"}},
			{templatesPath, `{"entitySubType":""}`, []string{"entitySubType"}},
			{templatesPath, `{"entitySubType":"` + strings.Repeat("s", 101) + `"}`, []string{"entitySubType"}},
			{templatesPath, `{"entityType":"NOPE"}`, []string{"entityType"}},
			{templatesPath, `{"entityType":"OLLY_SCHEDULED_TASKS","template":"x"}`, []string{"entityType", "OLLY_SCHEDULED_TASKS"}},
			{templatesPath, `{"template":`, nil},
			{conditionPath, `{"entityType":"ALERTS"}`, []string{"template", "required"}},
			{conditionPath, `{}`, []string{"template"}},
			{conditionPath, `{"template":""}`, []string{"template"}},
			{conditionPath, `{"template":"` + long + `"}`, []string{"template"}},
			{conditionPath, `{"template":"true","entityType":"OLLY_SCHEDULED_TASKS"}`, []string{"entityType"}},
			{conditionPath, `{"template":1}`, []string{"template"}},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, tc.path, key, tc.body), 400, tc.fragments...)
		}
		// Exactly at the bound, a template is rendered (a plain text of 20000 characters, with
		// multi-byte ones counted as one).
		at := strings.Repeat("é", 20000)
		res := env.JSON(t, http.MethodPost, templatesPath, key, `{"template":"`+at+`"}`)
		if got := apitest.Decode[templateResult](t, res).Result; got.Success == nil || *got.Success.RenderedValue != at {
			t.Fatalf("template at the bound: %d %.200s", res.Status, res.Body)
		}
	})
}

func TestPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		ops := []struct{ path, body, perm string }{
			{templatesPath, `{"template":"{{ name }}"}`, templatesPerm},
			{conditionPath, `{"template":"true"}`, conditionPerm},
		}
		wrong := env.MustKey(t, key, "case:Read")
		for _, op := range ops {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, op.path, wrong, op.body), 403, op.perm)
			apitest.ExpectError(t, env.Do(t, http.MethodPost, op.path, "", "application/json", op.body), 401)
			if res := env.JSON(t, http.MethodPost, op.path, env.MustKey(t, key, op.perm), op.body); res.Status != 200 {
				t.Fatalf("%s with %s: %d %s", op.path, op.perm, res.Status, res.Body)
			}
		}
		// Nothing is stored: another team gets the same answers from the same samples.
		_, other := env.MustTeam(t, "other")
		for _, op := range ops {
			a, b := env.JSON(t, http.MethodPost, op.path, key, op.body), env.JSON(t, http.MethodPost, op.path, other, op.body)
			if a.Status != 200 || string(a.Body) != string(b.Body) {
				t.Errorf("%s: %s / %s", op.path, a.Body, b.Body)
			}
		}
	})
}
