package teamconfig_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const (
	exportPath = "/config/v1/export"
	applyPath  = "/config/v1/apply"
)

// export answers the team's document as sent, YAML unless asJSON.
func export(t *testing.T, env *apitest.Env, key string, asJSON bool) apitest.Response {
	t.Helper()
	headers := map[string]string{}
	if asJSON {
		headers["Accept"] = "application/json"
	}
	return env.Get(t, exportPath, key, headers)
}

func mustExport(t *testing.T, env *apitest.Env, key string, asJSON bool) string {
	t.Helper()
	res := export(t, env, key, asJSON)
	if res.Status != http.StatusOK {
		t.Fatalf("export: %d %s", res.Status, res.Body)
	}
	return string(res.Body)
}

// plan is the answer of an apply.
type plan struct {
	DryRun  bool `json:"dryRun"`
	Changes []struct {
		Area, ID, Name, Action string
	} `json:"changes"`
	Summary map[string]int `json:"summary"`
}

func apply(t *testing.T, env *apitest.Env, key, query, contentType, doc string) apitest.Response {
	t.Helper()
	return env.Do(t, http.MethodPost, applyPath+query, "Bearer "+key, contentType, doc)
}

func mustApply(t *testing.T, env *apitest.Env, key, query, doc string) plan {
	t.Helper()
	return apitest.Decode[plan](t, apply(t, env, key, query, "application/yaml", doc))
}

// actions counts a plan's actions per area: "recordingRuleSets create" → 2.
func actions(p plan) map[string]int {
	out := map[string]int{}
	for _, c := range p.Changes {
		out[c.Area+" "+c.Action]++
	}
	return out
}

func mustCreate(t *testing.T, env *apitest.Env, key, method, path, body string) []byte {
	t.Helper()
	res := env.JSON(t, method, path, key, body)
	if res.Status/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
	}
	return res.Body
}

const (
	recordingRuleSets = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
	e2mRules          = "/mgmt/openapi/5/events2metrics/events2metrics/v2"
	slosPath          = "/mgmt/openapi/4/slo/slos/v1"
	parsingRuleGroups = "/mgmt/openapi/5/parsing-rules/rule-groups/v1"
	customPresets     = "/mgmt/openapi/4/notifications/notification-center/v1/presets/custom"
	createPolicy      = "/mgmt/openapi/3/dataplans/policies/v1"
	policySettings    = "/mgmt/openapi/5/dataplans/policiy-settings/v1"
	quotaRuleSet      = "/mgmt/openapi/4/dataplan/quota-rules/v1"
	retentionTags     = "/mgmt/openapi/5/dataengine/retention-tags/v1"
	customRoles       = "/mgmt/openapi/3/aaa/team-roles/v1/custom-roles"
	viewsPath         = "/mgmt/openapi/5/data-exploration/views/v1/views"
	viewFolders       = "/mgmt/openapi/5/data-exploration/views/v1/folders"
	dashboardsPath    = "/mgmt/openapi/5/dashboards/dashboards/v1"
	dashboardFolders  = "/mgmt/openapi/5/dashboards/folders/v1"
	deployedPath      = "/mgmt/openapi/3/integrations/extensions/v1/deployed"
	pinnedPath        = "/mgmt/openapi/5/dashboards/pinned/v1"
	presetDefaultPath = "/mgmt/openapi/5/notifications/notification-center/v1/presets/custom/"
	caseSettings      = "/mgmt/openapi/5/cases/cases/case-settings/v1/configs"
	connectorsPath    = "/mgmt/openapi/5/notifications/notification-center/v1/connectors"
	routersPath       = "/mgmt/openapi/5/notifications/notification-center/v1/routers"
	alertDefsPath     = "/mgmt/openapi/latest/alerts/alerts/v3"
	schedulerRules    = "/mgmt/openapi/5/alerts/suppression-rules/v1"
	ipAccessSettings  = "/mgmt/openapi/5/aaa/team-sec-ip-access/v1"
)

// everyParsingRuleKind is one parsing rule of each parameter kind, in a group with each matcher
// kind.
const everyParsingRuleKind = `{"name":"every kind","description":"d","creator":"c","enabled":true,"hidden":true,
 "ruleMatchers":[{"applicationName":{"value":"app"}},{"subsystemName":{"value":"sub"}},{"severity":{"value":"VALUE_ERROR"}},{"severity":{}}],
 "ruleSubgroups":[{"enabled":true,"rules":[
  {"name":"ex","sourceField":"text","parameters":{"extractParameters":{"rule":"(?P<level>\\w+) (?<msg>.*)"}}},
  {"name":"je","parameters":{"jsonExtractParameters":{"rule":"level","destinationFieldType":"DESTINATION_FIELD_SEVERITY"}}},
  {"name":"re","parameters":{"replaceParameters":{"rule":"a+","destinationField":"text","replaceNewVal":"b"}}},
  {"name":"pa","parameters":{"parseParameters":{"rule":"(?P<x>\\d+)","destinationField":"text"}}},
  {"name":"al","parameters":{"allowParameters":{"rule":"keep","keepBlockedLogs":true}}},
  {"name":"bl","parameters":{"blockParameters":{"rule":"drop"}}},
  {"name":"ts","parameters":{"extractTimestampParameters":{"format":"%Y","standard":"FORMAT_STANDARD_GOLANG"}}},
  {"name":"rf","parameters":{"removeFieldsParameters":{"fields":["a","b"]}}},
  {"name":"js","parameters":{"jsonStringifyParameters":{"destinationField":"s","deleteSource":true}}},
  {"name":"jp","parameters":{"jsonParseParameters":{"destinationField":"p","escapedValue":true,"overrideDest":true}}}
 ]},{"order":2,"rules":[{"name":"second","parameters":{"blockParameters":{"rule":"x"}}}]}]}`

// richDashboard has checked parts and fields the server does not interpret.
const richDashboard = `{"name":"Service health","description":"d","slugName":"service-health","relativeTimeFrame":"900s","fiveMinutes":{},
 "folderId":{"value":"00000000-0000-4000-8000-0000000000d1"},"folderPath":{"segments":["ops","web"]},
 "layout":{"sections":[{"id":{"value":"00000000-0000-4000-8000-0000000000d2"},"rows":[{"id":{"value":"00000000-0000-4000-8000-0000000000e1"},"appearance":{"height":19},"widgets":[
   {"id":{"value":"00000000-0000-4000-8000-0000000000d3"},"title":"cpu","definition":{"lineChart":{"queryDefinitions":[{"id":"q","query":{"metrics":{"promqlQuery":{"value":"up"}}},"seriesCountLimit":"20"}],"legend":{"isVisible":true}}}}]}]}]},
 "futureField":{"nested":[1,2.50,{"x":null}],"when":"2026-01-02T03:04:05Z","yes":"yes","octal":"0755"}}`

// fillTeam gives the team of key one resource or more in every area the document covers.
func fillTeam(t *testing.T, env *apitest.Env, key string) {
	t.Helper()
	mustCreate(t, env, key, http.MethodPost, recordingRuleSets,
		`{"name":"api","groups":[{"name":"latency","interval":60,"limit":"10","rules":[{"record":"job:http_requests:rate5m","expr":"sum by (job) (rate(http_requests_total[5m]))","labels":{"team":"a","tier":"1"}}]}]}`)
	mustCreate(t, env, key, http.MethodPost, recordingRuleSets,
		`{"name":"db","groups":[{"name":"g","rules":[{"record":"job:up:sum","expr":"sum(up)"}]}]}`)
	mustCreate(t, env, key, http.MethodPost, e2mRules,
		`{"name":"errors","type":"E2M_TYPE_LOGS2METRICS","logsQuery":{"lucene":"level:error"},"permutationsLimit":500,`+
			`"metricFields":[{"sourceField":"duration","targetBaseMetricName":"req_duration","aggregations":[{"histogram":{"buckets":[0.1,0.5,1]}}]}],`+
			`"metricLabels":[{"targetLabel":"svc","sourceField":"service"}]}`)
	mustCreate(t, env, key, http.MethodPost, e2mRules,
		`{"name":"spans","type":"E2M_TYPE_SPANS2METRICS","spansQuery":{"lucene":"*"}}`)
	parent := apitest.Decode[struct{ Preset struct{ ID string } }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, customPresets, `{"preset":{"name":"base","connectorType":"SLACK","entityType":"ALERTS"}}`)})
	mustCreate(t, env, key, http.MethodPost, customPresets,
		`{"preset":{"name":"child","description":"derived","connectorType":"SLACK","entityType":"ALERTS","parentId":"`+parent.Preset.ID+`"}}`)
	mustCreate(t, env, key, http.MethodPost, presetDefaultPath+parent.Preset.ID+"/default", "")
	// A connector without sensitive fields (a copy to a new team needs no secret; secrets are
	// notificationcenter_test.go's), and a router sending to it with a preset of its type.
	mail := apitest.Decode[struct{ Preset struct{ ID string } }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, customPresets, `{"preset":{"name":"mail","connectorType":"EMAIL","entityType":"ALERTS"}}`)})
	mailbox := apitest.Decode[struct{ Connector struct{ ID string } }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, connectorsPath, `{"connector":{"name":"on call","description":"d","type":"EMAIL",`+
			`"connectorConfig":{"fields":[{"fieldName":"emailAddresses","value":"[\"oncall@example.com\"]"}]},`+
			`"configOverrides":[{"entityType":"ALERTS","fields":[{"fieldName":"emailAddresses","template":"{{ alert.labels.owner }}"}]}]}}`)})
	mustCreate(t, env, key, http.MethodPost, routersPath, `{"router":{"name":"Paging","entityLabels":{"environment":"production"},`+
		`"rules":[{"name":"P1","condition":"alertDef.priority == 'P1'","targets":[{"connectorId":"`+mailbox.Connector.ID+`","presetId":"`+mail.Preset.ID+`"}]}],`+
		`"fallbackTargets":[{"entityType":"ALERTS","target":{"connectorId":"`+mailbox.Connector.ID+`"}}]}}`)
	mustCreate(t, env, key, http.MethodPost, createPolicy,
		`{"name":"errors","priority":"PRIORITY_TYPE_HIGH","logRules":{"severities":["SEVERITY_ERROR"]},`+
			`"applicationRule":{"name":"checkout","ruleTypeId":"RULE_TYPE_ID_IS"},`+
			`"priorityOverride":{"quotaBased":{"usageTiers":[{"dailyQuotaPercentage":50,"priority":"PRIORITY_TYPE_MEDIUM"}]}}}`)
	mustCreate(t, env, key, http.MethodPost, createPolicy,
		`{"name":"debug first","priority":"PRIORITY_TYPE_LOW","disabled":true,"logRules":{"severities":["SEVERITY_DEBUG"]},"placement":{"first":{}}}`)
	mustCreate(t, env, key, http.MethodPost, createPolicy, `{"name":"spans","priority":"PRIORITY_TYPE_MEDIUM","spanRules":{}}`)
	mustCreate(t, env, key, http.MethodPost, policySettings, `{"logsPolicySettings":{"defaultPriority":"PRIORITY_TYPE_LOW"}}`)
	mustCreate(t, env, key, http.MethodPost, quotaRuleSet,
		`{"ruleSet":{"rules":[{"entityType":"logs","allocation":60,"enabled":true,"canOverflow":false},{"entityType":"spans","allocation":10,"enabled":false,"canOverflow":true}]}}`)
	mustCreate(t, env, key, http.MethodPost, retentionTags,
		`{"retentionUpdateElements":[{"id":"00000000-0000-4000-8000-000000000002","name":"Two weeks"},{"id":"00000000-0000-4000-8000-000000000004","name":"A year"}]}`)
	mustCreate(t, env, key, http.MethodPut, customRoles, `{"name":"oncall","description":"d","parentRoleId":2,"permissions":["case:Read","case:Comment"]}`)
	mustCreate(t, env, key, http.MethodPut, customRoles, `{"name":"auditor","parentRoleName":"viewer","permissions":[]}`)
	folder := apitest.Decode[struct{ ID string }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, viewFolders, `{"name":"ops"}`)})
	mustCreate(t, env, key, http.MethodPost, viewFolders, `{"name":"empty"}`)
	mustCreate(t, env, key, http.MethodPost, viewsPath, `{"name":"errors","folderId":"`+folder.ID+`","isCompactMode":true,"viewType":"VIEW_TYPE_LOGS",
		"searchQuery":{"query":"level:error","syntaxType":"SYNTAX_TYPE_LUCENE"},
		"filters":{"filters":[{"name":"applicationName","selectedValues":{"api":true,"web":false}}]},
		"timeSelection":{"quickSelection":{"caption":"Last hour","seconds":3600}}}`)
	mustCreate(t, env, key, http.MethodPost, viewsPath, `{"name":"bare","timeSelection":{}}`)
	// The rich dashboard's folder, inside a top-level one (whose name sorts after it, so the
	// export's parents-first order differs from the list's order by name).
	mustCreate(t, env, key, http.MethodPost, dashboardFolders, `{"folder":{"id":"00000000-0000-4000-8000-0000000000d0","name":"z top"}}`)
	mustCreate(t, env, key, http.MethodPost, dashboardFolders,
		`{"folder":{"id":"00000000-0000-4000-8000-0000000000d1","name":"a inside","parentId":"00000000-0000-4000-8000-0000000000d0"}}`)
	rich := apitest.Decode[struct{ DashboardID string }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, dashboardsPath, `{"requestId":"r1","isLocked":true,"accessPolicy":"{\"a\":1}","dashboard":`+richDashboard+`}`)})
	plain := apitest.Decode[struct{ DashboardID string }](t, apitest.Response{Status: 200,
		Body: mustCreate(t, env, key, http.MethodPost, dashboardsPath, `{"requestId":"r2","dashboard":{"name":"Plain","layout":{}}}`)})
	mustCreate(t, env, key, http.MethodPut, dashboardsPath+"/"+rich.DashboardID+"/default", `{"requestId":"d"}`)
	mustCreate(t, env, key, http.MethodPut, pinnedPath+"/"+plain.DashboardID, "")
	mustCreate(t, env, key, http.MethodPost, retentionTags+"/activate", "")
	if res := env.Do(t, http.MethodPut, deployedPath+"?id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard&item_ids=k8s-container-logs&applications=shop&subsystems=api",
		"Bearer "+key, "", ""); res.Status != 200 {
		t.Fatalf("deploy: %d %s", res.Status, res.Body)
	}
	mustCreate(t, env, key, http.MethodPost, parsingRuleGroups, everyParsingRuleKind)
	mustCreate(t, env, key, http.MethodPost, parsingRuleGroups, `{"name":"plain"}`)
	availability := apitest.Decode[struct{ Slo struct{ ID string } }](t, apitest.Response{Status: 200, Body: mustCreate(t, env, key, http.MethodPost, slosPath,
		`{"name":"availability","targetThresholdPercentage":99.9,"sloTimeFrame":"SLO_TIME_FRAME_28_DAYS","labels":{"team":"a"},`+
			`"requestBasedMetricSli":{"goodEvents":{"query":"sum(rate(http_requests_total{code!~\"5..\"}[5m]))"},"totalEvents":{"query":"sum(rate(http_requests_total[5m]))"}}}`)})
	mustCreate(t, env, key, http.MethodPost, caseSettings,
		`{"name":"on call","globalIndicatorSettings":{"enabled":true,"filteringConditions":[{"enabled":true,`+
			`"priorities":{"values":{"items":["INDICATOR_PRIORITY_P1"]}},"entityLabels":{"all":{}}}]},`+
			`"caseLifecycle":{"suppressionPeriod":"3600s","autoClose":{"postResolutionPeriod":"86400s"},"kpi":{"thresholds":[`+
			`{"type":"KPI_TYPE_TIME_TO_ACKNOWLEDGE","priority":"CASE_PRIORITY_P1","threshold":"300s","enabled":true},`+
			`{"type":"KPI_TYPE_TIME_TO_UPDATE","priority":"CASE_PRIORITY_P5"}]}}}`)
	mustCreate(t, env, key, http.MethodPost, slosPath,
		`{"name":"up","targetThresholdPercentage":95,"sloTimeFrame":"SLO_TIME_FRAME_7_DAYS",`+
			`"windowBasedMetricSli":{"query":{"query":"avg(up)"},"window":"WINDOW_SLO_WINDOW_5_MINUTES","comparisonOperator":"COMPARISON_OPERATOR_GREATER_THAN_OR_EQUALS","threshold":0.95}}`)
	latency := apitest.Decode[struct{ AlertDef struct{ ID string } }](t, apitest.Response{Status: 200, Body: mustCreate(t, env, key, http.MethodPost, alertDefsPath,
		`{"accessPolicy":"{\"team\":\"a\"}","alertDefProperties":`+latencyAlert+`}`)})
	burn := apitest.Decode[struct{ AlertDef struct{ ID string } }](t, apitest.Response{Status: 200, Body: mustCreate(t, env, key, http.MethodPost, alertDefsPath,
		`{"alertDefProperties":`+sloAlert(availability.Slo.ID)+`}`)})
	mustCreate(t, env, key, http.MethodPost, alertDefsPath, `{"alertDefProperties":{"name":"both","flow":{"stages":[{"flowStagesGroups":{"groups":[`+
		`{"alertDefs":[{"id":"`+latency.AlertDef.ID+`"},{"id":"`+burn.AlertDef.ID+`","not":true}],"nextOp":"NEXT_OP_AND_OR_UNSPECIFIED"}]}}]}}}`)
	mustCreate(t, env, key, http.MethodPost, schedulerRules, `{"alertSchedulerRule":`+oneTimeWindow+`}`)
	mustCreate(t, env, key, http.MethodPost, schedulerRules, `{"alertSchedulerRule":`+weeklyBerlin+`}`)
	// The tests' requests come from 127.0.0.1, which the ranges keep in.
	mustCreate(t, env, key, http.MethodPost, ipAccessSettings, `{"enablePlatformCustomerSupportAccess":"PLATFORM_CUSTOMER_SUPPORT_ACCESS_ENABLED",`+
		`"ipAccess":[{"name":"office","ipRange":"203.0.113.0/24","enabled":true},{"ipRange":"127.0.0.0/8","enabled":true},{"name":"old","ipRange":"2001:db8::/32"}]}`)
	fillEnrichments(t, env, key)
}

// latencyAlert is a metric threshold alert definition's properties, with a number the server
// writes in another form (2.50) and a type left out.
const latencyAlert = `{"name":"Latency","priority":"ALERT_DEF_PRIORITY_P2","enabled":true,"description":"slow","entityLabels":{"team":"a"},` +
	`"groupByKeys":["service"],"activeOn":{"dayOfWeek":["DAY_OF_WEEK_SUNDAY"],"startTime":{"hours":22},"endTime":{"hours":6,"minutes":30}},` +
	`"metricThreshold":{"metricFilter":{"promql":"sum by (service) (rate(http_requests_total[5m]))"},"rules":[{"condition":{"threshold":2.50,` +
	`"forOverPct":50,"ofTheLast":{"metricTimeWindowDynamicDuration":"15m"},"conditionType":"METRIC_THRESHOLD_CONDITION_TYPE_MORE_THAN_OR_EQUALS"},` +
	`"override":{"priority":"ALERT_DEF_PRIORITY_P1"}}],"missingValues":{"minNonNullValuesPct":10}}}`

// sloAlert is the properties of an enabled burn-rate alert definition on the SLO sloID.
func sloAlert(sloID string) string {
	return `{"name":"Burning","enabled":true,"sloThreshold":{"sloDefinition":{"sloId":"` + sloID + `"},"burnRate":{` +
		`"dual":{"timeDuration":{"duration":"1","unit":"DURATION_UNIT_HOURS"}},"rules":[{"condition":{"threshold":14.4}}]}}}`
}

// filled is what the first apply of fillTeam's export to an empty team creates, per area.
var filled = map[string]int{
	"recordingRuleSets create":          2,
	"events2metrics create":             2,
	"slos create":                       2,
	"parsingRuleGroups create":          2,
	"notificationPresets create":        3,
	"connectors create":                 1,
	"routers create":                    1,
	"policies create":                   3,
	"policySettings update":             1, // every team has settings (unspecified priorities)
	"quotaRuleSet create":               1,
	"retentionTags create":              2,
	"customRoles create":                2,
	"viewFolders create":                2,
	"views create":                      2,
	"dashboards create":                 2,
	"dashboardFolders create":           2,
	"notificationPresetDefaults create": 1,
	"retentionTagsEnabled update":       1, // every team has it (false)
	"defaultDashboard update":           1, // every team has it ({})
	"dashboardPins create":              1,
	"extensionDeployments create":       1,
	"caseSettings create":               1,
	"alertDefinitions create":           3,
	"alertSchedulerRules create":        2,
	"ipAccess update":                   1, // every team has settings (no range)
	"enrichmentDataSets create":         1,
	"enrichments create":                2,
}

// TestRoundTrip: export → apply to an empty team → export gives the same document, in YAML and
// in JSON; a second apply is all unchanged.
func TestRoundTrip(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		fillTeam(t, env, env.RootKey)
		yamlDoc := mustExport(t, env, env.RootKey, false)
		jsonDoc := mustExport(t, env, env.RootKey, true)
		if !json.Valid([]byte(jsonDoc)) {
			t.Fatalf("JSON export is not JSON: %s", jsonDoc)
		}
		for _, format := range []struct {
			name, contentType, doc string
			asJSON                 bool
		}{
			{"yaml", "application/yaml", yamlDoc, false},
			{"json", "application/json", jsonDoc, true},
		} {
			t.Run(format.name, func(t *testing.T) {
				_, key := env.MustTeam(t, "copy-"+format.name)
				first := apitest.Decode[plan](t, apply(t, env, key, "", format.contentType, format.doc))
				if first.DryRun {
					t.Fatalf("first apply is a dry run: %+v", first)
				}
				if got := actions(first); !maps.Equal(got, filled) {
					t.Fatalf("first apply to an empty team: %v, want %v", got, filled)
				}
				if testing.Verbose() && format.name == "yaml" {
					t.Logf("exported:\n%s", format.doc)
				}
				if again := mustExport(t, env, key, format.asJSON); again != format.doc {
					t.Fatalf("export of the copy differs:\n--- source\n%s\n--- copy\n%s", format.doc, again)
				}
				second := apitest.Decode[plan](t, apply(t, env, key, "", format.contentType, format.doc))
				if second.Summary["unchanged"] != len(second.Changes) || len(second.Changes) != len(first.Changes) {
					t.Fatalf("second apply is not all unchanged: %+v", second)
				}
			})
		}
		if !strings.HasPrefix(yamlDoc, "version: 1\n") {
			t.Errorf("YAML export does not start with the version:\n%s", yamlDoc)
		}
	})
}

// TestDryRunChangesNothing: a dry run answers the plan an apply would carry out, and the team is
// as before.
func TestDryRunChangesNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		fillTeam(t, env, env.RootKey)
		doc := mustExport(t, env, env.RootKey, false)
		_, key := env.MustTeam(t, "target")
		mustCreate(t, env, key, http.MethodPost, recordingRuleSets,
			`{"name":"stale","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`)
		before := mustExport(t, env, key, false)
		dry := mustApply(t, env, key, "?dry_run=true&prune=true", doc)
		if !dry.DryRun {
			t.Errorf("dryRun is false")
		}
		got := actions(dry)
		if got["recordingRuleSets create"] != 2 || got["recordingRuleSets delete"] != 1 {
			t.Errorf("dry-run plan %v, want 2 creates and 1 delete", got)
		}
		if after := mustExport(t, env, key, false); after != before {
			t.Fatalf("a dry run changed the team:\n%s\n---\n%s", before, after)
		}
		real := mustApply(t, env, key, "?prune=true", doc)
		if real.DryRun || !equalPlans(dry, real) {
			t.Errorf("the apply's plan differs from the dry run's:\n%+v\n%+v", dry, real)
		}
	})
}

func equalPlans(a, b plan) bool {
	ja, _ := json.Marshal(a.Changes)
	jb, _ := json.Marshal(b.Changes)
	return bytes.Equal(ja, jb)
}

// TestPrune: without prune, resources the document lacks stay; with it, those of the areas the
// document holds go, and areas absent from the document are left alone.
func TestPrune(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		fillTeam(t, env, env.RootKey)
		keep := mustApply(t, env, env.RootKey, "", "version: 1\nrecordingRuleSets: []\n")
		if len(keep.Changes) != 0 {
			t.Errorf("apply of an empty list without prune: %+v", keep)
		}
		for _, doc := range []string{"version: 1\n", "version: 1\nrecordingRuleSets:\n", `{"recordingRuleSets":null}`} {
			untouched := mustApply(t, env, env.RootKey, "?prune=true", doc)
			if len(untouched.Changes) != 0 {
				t.Errorf("prune of %q, without areas: %+v", doc, untouched)
			}
		}
		pruned := mustApply(t, env, env.RootKey, "?prune=true", "version: 1\nrecordingRuleSets: []\n")
		if got := actions(pruned); got["recordingRuleSets delete"] != 2 || len(got) != 1 {
			t.Errorf("prune plan %v, want 2 deletes", got)
		}
		res := env.JSON(t, http.MethodGet, recordingRuleSets, env.RootKey, "")
		if !strings.Contains(string(res.Body), `"sets":[]`) {
			t.Errorf("sets left after prune: %s", res.Body)
		}
		// Every list area empty, with prune: the team is as a new one (the single objects stay).
		_, fresh := env.MustTeam(t, "fresh")
		var empty strings.Builder
		empty.WriteString("version: 1\n")
		for _, area := range []string{"recordingRuleSets", "notificationPresets", "notificationPresetDefaults", "connectors", "routers", "parsingRuleGroups",
			"policies", "retentionTags", "customRoles", "viewFolders", "views", "dashboardFolders", "dashboards", "dashboardPins",
			"extensionDeployments", "slos", "events2metrics", "alertDefinitions", "alertSchedulerRules",
			"enrichmentDataSets", "enrichments"} {
			empty.WriteString(area + ": []\n")
		}
		all := mustApply(t, env, env.RootKey, "?prune=true", empty.String())
		for _, c := range all.Changes {
			if c.Action != "delete" {
				t.Errorf("prune to nothing: %+v", c)
			}
		}
		single := "policySettings:\n  logsPolicySettings: {defaultPriority: PRIORITY_TYPE_UNSPECIFIED}\n" +
			"  spansPolicySettings: {defaultPriority: PRIORITY_TYPE_UNSPECIFIED}\n"
		mustApply(t, env, env.RootKey, "", single)
		if res := env.JSON(t, http.MethodDelete, "/mgmt/openapi/5/dataplan/quota-rules/v1", env.RootKey, ""); res.Status != 200 {
			t.Fatalf("delete quota rule set: %d %s", res.Status, res.Body)
		}
		active := apitest.Decode[struct{ CaseSettings struct{ ID string } }](t, env.JSON(t, http.MethodGet, caseSettings+":getActive", env.RootKey, ""))
		if res := env.JSON(t, http.MethodDelete, caseSettings+"/"+active.CaseSettings.ID, env.RootKey, ""); res.Status != 200 {
			t.Fatalf("delete case settings: %d %s", res.Status, res.Body)
		}
		if res := env.JSON(t, http.MethodDelete, ipAccessSettings, env.RootKey, ""); res.Status != 200 {
			t.Fatalf("delete IP access settings: %d %s", res.Status, res.Body)
		}
		// Activation cannot be undone: the new team activates too.
		mustCreate(t, env, fresh, http.MethodPost, retentionTags+"/activate", "")
		if got, want := mustExport(t, env, env.RootKey, false), mustExport(t, env, fresh, false); got != want {
			t.Errorf("after pruning everything:\n%s\nwant as a new team's:\n%s", got, want)
		}
	})
}

// withoutArea returns the YAML document doc without the top-level key area and its value.
func withoutArea(doc, area string) string {
	var out strings.Builder
	skipping := false
	for _, line := range strings.SplitAfter(doc, "\n") {
		if line != "" && line[0] != ' ' && line[0] != '-' {
			skipping = strings.HasPrefix(line, area+":")
		}
		if !skipping {
			out.WriteString(line)
		}
	}
	return out.String()
}

// TestFailureChangesNothing: one bad resource anywhere answers its error, naming the resource
// and the field, and nothing of the document is applied.
func TestFailureChangesNothing(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		fillTeam(t, env, env.RootKey)
		before := mustExport(t, env, env.RootKey, false)
		for _, c := range []struct {
			name, doc string
			status    int
			fragments []string
		}{
			{"bad PromQL", `recordingRuleSets:
- name: ok
  groups: [{name: g, rules: [{record: r, expr: up}]}]
- name: broken
  groups: [{name: g, rules: [{record: r, expr: "sum by (job (up)"}]}]
`, 400, []string{`recordingRuleSets[1] ("broken")`, "groups[0]", ".expr: not valid PromQL"}},
			{"bound of the operation's body", `recordingRuleSets:
- name: ""
  groups: []
`, 400, []string{`recordingRuleSets[0]`, "name"}},
			{"duplicate id", `recordingRuleSets:
- {id: a, name: x, groups: []}
- {id: a, name: y, groups: []}
`, 400, []string{`recordingRuleSets[1] ("y"): id:`}},
			{"unknown area", "cases: []\n", 400, []string{"cases: not an area"}},
			{"e2m names are unique", `events2metrics:
- {name: same, type: E2M_TYPE_SPANS2METRICS, spansQuery: {lucene: "*"}}
- {name: same, type: E2M_TYPE_SPANS2METRICS, spansQuery: {lucene: "*"}}
`, 409, []string{`events2metrics[1] ("same"): name: another events-to-metrics rule of the team is named "same"`}},
			{"SLO rule", `slos:
- {name: bad, targetThresholdPercentage: 99, sloTimeFrame: SLO_TIME_FRAME_7_DAYS}
`, 400, []string{`slos[0] ("bad"): requestBasedMetricSli: an SLI is required`}},
			{"enum of the operation's body", `slos:
- {name: bad, targetThresholdPercentage: 99, sloTimeFrame: NEVER, requestBasedMetricSli: {goodEvents: {query: up}, totalEvents: {query: up}}}
`, 400, []string{`slos[0] ("bad"): sloTimeFrame`}},
			// Routers pruned too: prune refuses to delete the presets and the connector fillTeam's
			// router uses (notificationcenter_test.go), before the failure meant here.
			{"preset parent", `routers: []
notificationPresets:
- {name: orphan, parentId: nothing}
`, 400, []string{`notificationPresets[0] ("orphan"): preset.parentId: no preset "nothing"`}},
			{"router's connector", `routers:
- {name: lost, rules: [{condition: "true", targets: [{connectorId: nowhere}]}]}
`, 400, []string{`routers[0] ("lost"): router.rules[0].targets[0].connectorId: no connector "nowhere"`}},
			{"mask of a new connector", `routers: []
connectors:
- {id: fresh, name: hook, type: SERVICE_NOW, connectorConfig: {fields: [{fieldName: password, value: "********"}, {fieldName: instanceUrl, value: "https://x.service-now.com"}, {fieldName: username, value: u}]}}
`, 400, []string{`connectors[0] ("hook"): connector.connectorConfig.fields[0].value:`, "password", "send the value itself"}},
			{"connector field", `connectors:
- {name: mail, type: EMAIL, connectorConfig: {fields: [{fieldName: to, value: x}]}}
`, 400, []string{`connectors[0] ("mail"): connector.connectorConfig.fields[0].fieldName: "to" is not a field of EMAIL connectors`}},
			{"connector id", `connectors:
- {id: "on call", name: mail, type: EMAIL, connectorConfig: {fields: [{fieldName: emailAddresses, value: '["a@example.com"]'}]}}
`, 400, []string{`connectors[0] ("mail"): id: "on call" is not a notification-center id`}},
			{"router id", `routers:
- {id: "-paging", name: Paging}
`, 400, []string{`routers[0] ("Paging"): id: "-paging" is not a notification-center id`}},
			{"connector type of the operation's body", `connectors:
- {name: mail, type: PIGEON}
`, 400, []string{`connectors[0] ("mail"): connector.type`}},
			{"view folder", `views:
- {name: lost, folderId: 00000000-0000-4000-8000-000000000999, timeSelection: {}}
`, 400, []string{`views[0] ("lost"): folderId: no view folder`}},
			{"retention tag not editable", `retentionTags:
- {id: 00000000-0000-4000-8000-000000000001, name: Mine}
`, 400, []string{`retentionTags[0] ("Mine"): id:`, "not editable"}},
			{"role name taken", `customRoles:
- {roleId: 3000, name: twin, parentRoleId: 2, permissions: []}
- {roleId: 3001, name: twin, parentRoleId: 2, permissions: []}
`, 409, []string{`customRoles[1] ("twin"): name: the team already has a role named "twin"`}},
			{"quota percentages", `quotaRuleSet:
  rules: [{entityType: logs, allocation: 70, enabled: true, canOverflow: false}, {entityType: logs, allocation: 40, enabled: true, canOverflow: false}]
`, 400, []string{`quotaRuleSet: ruleSet.rules: the percentage allocations for entity type "logs" add up to 110`}},
			{"case settings KPI threshold", `caseSettings:
  globalIndicatorSettings: {}
  caseLifecycle: {kpi: {thresholds: [{type: KPI_TYPE_TIME_TO_ACKNOWLEDGE, priority: CASE_PRIORITY_P1, threshold: 5s, enabled: true}]}}
`, 400, []string{`caseSettings: caseLifecycle.kpi.thresholds[0].threshold: "5s" is out of range`}},
			{"case settings id", `caseSettings: {id: mine, globalIndicatorSettings: {}}
`, 400, []string{`caseSettings: id: "mine" is not a lowercase UUID`}},
			{"unknown extension", `extensionDeployments:
- {id: no-such-extension, version: "1", itemIds: [], applications: [], subsystems: []}
`, 400, []string{`extensionDeployments[0] ("no-such-extension"): id: no extension "no-such-extension" in the catalog`}},
			{"dashboard slug", `dashboards:
- {dashboard: {name: A, slugName: same, layout: {}}}
- {dashboard: {name: B, slugName: same, layout: {}}}
`, 409, []string{`dashboards[1] ("B"): dashboard.slugName: "same" is already the slug`}},
			{"parsing rule regex", `parsingRuleGroups:
- {name: g, ruleSubgroups: [{rules: [{name: r, parameters: {blockParameters: {rule: "("}}}]}]}
`, 400, []string{`parsingRuleGroups[0] ("g"): ruleSubgroups[0].rules[0]`}},
			{"policy data type", `policies:
- {name: p, priority: PRIORITY_TYPE_LOW, logRules: {severities: []}, spanRules: {}}
`, 400, []string{`policies[0] ("p"): logRules, spanRules, rumRules: must set only one of them`}},
			{"alert definition name", `alertDefinitions:
- {alertDefProperties: {name: "", logsImmediate: {}}}
`, 400, []string{"alertDefinitions[0]: alertDefProperties.name"}},
			{"alert definition on a missing SLO, after the document's SLOs", `slos: []
alertDefinitions:
- {alertDefProperties: {name: lost, sloThreshold: {sloDefinition: {sloId: 00000000-0000-4000-8000-000000000999}, errorBudget: {rules: [{condition: {threshold: 5}}]}}}}
`, 400, []string{`alertDefinitions[0] ("lost"): alertDefProperties.sloThreshold.sloDefinition.sloId: no SLO`}},
			{"scheduler rule zone", `alertSchedulerRules:
- {name: fine, schedule: {recurring: {alwaysActive: {}}}}
- {name: lost, schedule: {oneTime: {timeframe: {startTime: "2026-06-01T22:00", endTime: "2026-06-02T02:00", timezone: Mars/Olympus}}}}
`, 400, []string{`alertSchedulerRules[1] ("lost"): schedule.oneTime.timeframe.timezone: unknown time zone "Mars/Olympus"`}},
			{"late failure after earlier areas", `recordingRuleSets:
- {name: fine, groups: []}
events2metrics:
- {name: bad, type: E2M_TYPE_LOGS2METRICS, spansQuery: {}}
`, 400, []string{`events2metrics[0] ("bad"): spansQuery: must be absent`}},
			{"not a list", "recordingRuleSets: 3\n", 400, []string{"recordingRuleSets: must be a list"}},
			{"version", "version: 2\n", 400, []string{"version: must be 1"}},
			{"not YAML", "recordingRuleSets: [\n", 400, []string{"body: not a YAML or JSON document"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.ExpectError(t, apply(t, env, env.RootKey, "?prune=true", "application/yaml", c.doc), c.status, c.fragments...)
				if after := mustExport(t, env, env.RootKey, false); after != before {
					t.Fatalf("a refused apply changed the team:\n%s\n---\n%s", before, after)
				}
			})
		}
	})
}

// TestMediaTypes: apply reads YAML (also without a Content-Type parameter's charset) and JSON by
// Content-Type; another type is a 415 naming both; export answers YAML unless JSON is asked for.
func TestMediaTypes(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, ct := range []string{"application/yaml", "application/yaml; charset=utf-8"} {
			if res := apply(t, env, env.RootKey, "?dry_run=true", ct, "recordingRuleSets: []\n"); res.Status != 200 {
				t.Errorf("%s: %d %s", ct, res.Status, res.Body)
			}
		}
		if res := apply(t, env, env.RootKey, "?dry_run=true", "application/json", `{"recordingRuleSets":[]}`); res.Status != 200 {
			t.Errorf("JSON: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, apply(t, env, env.RootKey, "", "text/plain", "recordingRuleSets: []\n"), 415,
			"Content-Type: must be application/yaml or application/json")
		res := export(t, env, env.RootKey, false)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/yaml") {
			t.Errorf("export Content-Type %q, want application/yaml", ct)
		}
		res = export(t, env, env.RootKey, true)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("export with Accept: application/json: Content-Type %q", ct)
		}
	})
}

// TestPermissions: export needs org-settings:ReadConfig and every area's read permission; apply needs
// org-settings:UpdateConfig and the write permission of every area it changes (not of those it leaves
// unchanged).
func TestPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		fillTeam(t, env, env.RootKey)
		doc := mustExport(t, env, env.RootKey, false)

		noExport := env.MustKey(t, env.RootKey, "metrics.recording-rules:ReadConfig")
		apitest.ExpectError(t, export(t, env, noExport, false), 403, `"org-settings:ReadConfig"`)
		noRead := env.MustKey(t, env.RootKey, "org-settings:ReadConfig")
		apitest.ExpectError(t, export(t, env, noRead, false), 403, `"metrics.recording-rules:ReadConfig"`, "recordingRuleSets")

		noApply := env.MustKey(t, env.RootKey, "metrics.recording-rules:UpdateConfig")
		apitest.ExpectError(t, apply(t, env, noApply, "", "application/yaml", doc), 403, `"org-settings:UpdateConfig"`)
		applyOnly := env.MustKey(t, env.RootKey, "org-settings:UpdateConfig")
		// Pins are the calling key's: the root key's pin would be a create for another key.
		if p := mustApply(t, env, applyOnly, "", withoutArea(doc, "dashboardPins")); p.Summary["unchanged"] != len(p.Changes) {
			t.Errorf("an unchanged document needs no area permission, got %+v", p)
		}
		apitest.ExpectError(t, apply(t, env, applyOnly, "?prune=true", "application/yaml", "recordingRuleSets: []\n"),
			403, `"metrics.recording-rules:UpdateConfig"`, "recordingRuleSets")
		apitest.ExpectError(t, apply(t, env, applyOnly, "?dry_run=true&prune=true", "application/yaml", "recordingRuleSets: []\n"),
			403, `"metrics.recording-rules:UpdateConfig"`)
		if after := mustExport(t, env, env.RootKey, false); after != doc {
			t.Fatalf("a refused apply changed the team")
		}
	})
}

// TestPolicyLimitAndOrder: the policy cap of the individual operations holds in an apply (429
// naming the policy, nothing changed), deletes made by prune count first, and policies take the
// document's order.
func TestPolicyLimitAndOrder(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{PolicyLimit: 2}, func(t *testing.T, env *apitest.Env) {
		policy := func(id, name string, order int) string {
			return fmt.Sprintf("- {id: %s, name: %s, order: %d, priority: PRIORITY_TYPE_LOW, logRules: {severities: [SEVERITY_INFO]}}\n", id, name, order)
		}
		const a, b, c = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b", "00000000-0000-4000-8000-00000000000c"
		mustApply(t, env, env.RootKey, "", "policies:\n"+policy(a, "a", 1)+policy(b, "b", 2))
		before := mustExport(t, env, env.RootKey, false)
		apitest.ExpectError(t, apply(t, env, env.RootKey, "", "application/yaml", "policies:\n"+policy(c, "c", 3)),
			429, `policies[0] ("c")`, "at most 2")
		if after := mustExport(t, env, env.RootKey, false); after != before {
			t.Fatalf("a refused apply changed the team")
		}
		// With prune, a goes first, so c fits; c comes first, then b.
		p := mustApply(t, env, env.RootKey, "?prune=true", "policies:\n"+policy(c, "c", 1)+policy(b, "b", 2))
		if got := actions(p); got["policies delete"] != 1 || got["policies create"] != 1 || got["policies update"] != 0 {
			t.Errorf("plan %v", got)
		}
		// Swapping the order is an update of both.
		p = mustApply(t, env, env.RootKey, "", "policies:\n"+policy(c, "c", 2)+policy(b, "b", 1))
		if got := actions(p); got["policies update"] != 2 {
			t.Errorf("plan %v, want 2 updates", got)
		}
		list := apitest.Decode[struct{ Policies []struct{ ID, Name string } }](t,
			env.JSON(t, http.MethodGet, "/mgmt/openapi/5/dataplans/policies/v1", env.RootKey, ""))
		if len(list.Policies) != 2 || list.Policies[0].ID != b || list.Policies[1].ID != c {
			t.Errorf("policies %+v, want b then c", list.Policies)
		}
		if p := mustApply(t, env, env.RootKey, "", "policies:\n"+policy(c, "c", 2)+policy(b, "b", 1)); p.Summary["unchanged"] != 2 {
			t.Errorf("the same document again: %+v", p)
		}
	})
}

// TestIdentity: resources keep the ids a document gives them, and the team's counters move past
// them; a resource without an id gets a fresh one; a folder dropped by prune may lose its views
// to the same document first.
func TestIdentity(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		const folder = "00000000-0000-4000-8000-0000000000f1"
		mustApply(t, env, env.RootKey, "", `
viewFolders: [{id: `+folder+`, name: ops}]
views:
- {id: 7, name: seven, folderId: `+folder+`, timeSelection: {}}
customRoles:
- {roleId: 2000, name: oncall, parentRoleId: 2, permissions: [case:Read]}
recordingRuleSets:
- {name: no id, groups: []}
`)
		if res := env.JSON(t, http.MethodGet, viewsPath+"/7", env.RootKey, ""); res.Status != 200 {
			t.Fatalf("view 7: %d %s", res.Status, res.Body)
		}
		next := apitest.Decode[struct{ ID int }](t, env.JSON(t, http.MethodPost, viewsPath, env.RootKey, `{"name":"next","timeSelection":{}}`))
		if next.ID != 8 {
			t.Errorf("the next view's id is %d, want 8", next.ID)
		}
		role := apitest.Decode[struct{ ID int64 }](t, env.JSON(t, http.MethodPut, customRoles, env.RootKey, `{"name":"next","parentRoleId":3,"permissions":[]}`))
		if role.ID != 2001 {
			t.Errorf("the next role's id is %d, want 2001", role.ID)
		}
		sets := apitest.Decode[struct{ Sets []struct{ ID, Name string } }](t, env.JSON(t, http.MethodGet, recordingRuleSets, env.RootKey, ""))
		if len(sets.Sets) != 1 || len(sets.Sets[0].ID) != 36 {
			t.Errorf("a set without an id: %+v", sets.Sets)
		}
		// The view leaves the folder and the folder goes, in one apply.
		p := mustApply(t, env, env.RootKey, "?prune=true", "viewFolders: []\nviews:\n- {id: 7, name: seven, timeSelection: {}}\n")
		if got := actions(p); got["viewFolders delete"] != 1 || got["views update"] != 1 || got["views delete"] != 1 {
			t.Errorf("plan %v", got)
		}
		// A folder that keeps a view is not deleted: 409, and nothing changes.
		mustApply(t, env, env.RootKey, "", "viewFolders: [{id: "+folder+", name: ops}]\nviews:\n- {id: 7, name: seven, folderId: "+folder+", timeSelection: {}}\n")
		before := mustExport(t, env, env.RootKey, false)
		apitest.ExpectError(t, apply(t, env, env.RootKey, "?prune=true", "application/yaml", "viewFolders: []\n"), 409,
			"viewFolders \""+folder+"\" (deleted by prune)", "holds 1 views")
		if after := mustExport(t, env, env.RootKey, false); after != before {
			t.Fatalf("a refused apply changed the team")
		}
	})
}

// TestConcurrentApplies: applies of one document to one team at once each get their turn: one
// creates the document's recording-rule set (whose id the document gives), every other finds
// it there (and replaces or leaves it), and none fails (the mutation run of cmd/mgmtload found a 500, a duplicate key,
// on PostgreSQL).
func TestConcurrentApplies(t *testing.T) {
	const doc = `{"recordingRuleSets":[{"id":"0196f3a0-7c1e-7a55-9d3f-2a4b6c8d0e1f","name":"api",` +
		`"groups":[{"name":"latency","interval":60,"rules":[{"record":"job:up:sum","expr":"sum by (job) (up)"}]}]}]}`
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for round := range 4 {
			_, key := env.MustTeam(t, fmt.Sprintf("concurrent applies %d", round))
			const applies = 6
			answers := make([]apitest.Response, applies)
			var wg sync.WaitGroup
			for i := range answers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answers[i] = apply(t, env, key, "", "application/json", doc)
				}()
			}
			wg.Wait()
			creates := 0
			for _, res := range answers {
				if res.Status != http.StatusOK {
					t.Fatalf("round %d: an apply answered %d %s", round, res.Status, res.Body)
				}
				var p plan
				if err := json.Unmarshal(res.Body, &p); err != nil {
					t.Fatal(err)
				}
				got := actions(p)
				creates += got["recordingRuleSets create"]
				if got["recordingRuleSets create"]+got["recordingRuleSets update"]+got["recordingRuleSets unchanged"] != 1 {
					t.Errorf("round %d: plan %v", round, got)
				}
			}
			if creates != 1 {
				t.Errorf("round %d: %d applies created the set, want 1", round, creates)
			}
			if n := strings.Count(mustExport(t, env, key, true), `"0196f3a0-7c1e-7a55-9d3f-2a4b6c8d0e1f"`); n != 1 {
				t.Errorf("round %d: the export names the set %d times", round, n)
			}
		}
	})
}
