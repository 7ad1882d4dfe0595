package alertschedules_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

const alertmanagerPath = "/config/v1/alertmanager/scheduler-rules"

// TestRulesForAlertmanager: the team's enabled rules as Alertmanager would take them — a
// one-time muting window now as a silence matching the definition id, a daily window as a time
// interval and its route (a configuration amtool accepts), a DataPrime filter and a window across
// the clock changes as unmapped with the reason; a disabled rule and another team's rules are not in it; the read needs
// suppression-rules:ReadConfig.
func TestRulesForAlertmanager(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "am")
		_, otherKey := env.MustTeam(t, "other")
		now := time.Now().UTC()
		window := func(name, filter string, enabled bool) string {
			return fmt.Sprintf(`{"name":%q,"enabled":%v,"filter":%s,"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE",`+
				`"oneTime":{"timeframe":{"startTime":%q,"endTime":%q,"timezone":"UTC"}}}}`, name, enabled, filter,
				now.Add(-time.Minute).Format("2006-01-02T15:04:05"), now.Add(time.Hour).Format("2006-01-02T15:04:05"))
		}
		muted := create(t, env, key, window("deploy", `{"alertUniqueIds":{"value":["def-1"]}}`, true))
		create(t, env, key, window("off", `{"alertUniqueIds":{"value":["def-2"]}}`, false))
		create(t, env, key, dailyBerlin) // 02:30 to 03:30 in Berlin crosses the clock changes: unmapped
		create(t, env, otherKey, window("theirs", `{"alertUniqueIds":{"value":["def-3"]}}`, true))
		nightly := create(t, env, key, `{"name":"nightly","enabled":true,"filter":{"alertMetaLabels":{"value":[{"key":"team","value":"db"}]}},`+
			`"schedule":{"scheduleOperation":"SCHEDULE_OPERATION_MUTE","recurring":{"schedule":{"repeatEvery":1,"daily":{},`+
			`"timeframe":{"startTime":"2026-03-01T22:00:00","duration":{"forOver":2,"frequency":"DURATION_FREQUENCY_HOUR"},"timezone":"Europe/Berlin"}}}}}`)
		dataprime := create(t, env, key, window("dataprime", `{"whatExpression":"source logs"}`, true))

		got := apitest.Decode[struct {
			Silences []struct {
				RuleID   string `json:"ruleId"`
				Matchers []struct {
					Name, Value string
					IsRegex     bool `json:"isRegex"`
					IsEqual     bool `json:"isEqual"`
				} `json:"matchers"`
				StartsAt, EndsAt time.Time
			} `json:"silences"`
			Configuration string `json:"configuration"`
			Unmapped      []struct {
				RuleID, Name, Reason string
			} `json:"unmapped"`
		}](t, env.JSON(t, http.MethodGet, alertmanagerPath, key, ""))
		if len(got.Silences) != 1 || got.Silences[0].RuleID != muted.UniqueIdentifier {
			t.Fatalf("silences %+v, want the one-time window's", got.Silences)
		}
		s := got.Silences[0]
		if len(s.Matchers) != 1 || s.Matchers[0].Name != "alert_def_id" || s.Matchers[0].Value != "def-1" || !s.Matchers[0].IsEqual ||
			s.EndsAt.Sub(s.StartsAt) < time.Hour {
			t.Fatalf("silence %+v", s)
		}
		if len(got.Unmapped) != 2 || !strings.Contains(got.Unmapped[0].Reason, "offset") ||
			got.Unmapped[1].RuleID != dataprime.UniqueIdentifier || !strings.Contains(got.Unmapped[1].Reason, "whatExpression") {
			t.Fatalf("unmapped %+v", got.Unmapped)
		}
		if !strings.Contains(got.Configuration, "time_intervals:") || !strings.Contains(got.Configuration, "Europe/Berlin") ||
			!strings.Contains(got.Configuration, "mute_time_intervals:") {
			t.Fatalf("configuration of the nightly rule %s:\n%s", nightly.UniqueIdentifier, got.Configuration)
		}
		checkWithAmtool(t, got.Configuration)

		apitest.ExpectError(t, env.JSON(t, http.MethodGet, alertmanagerPath, env.MustKey(t, key, "alerts:ReadConfig"), ""),
			http.StatusForbidden, "suppression-rules:ReadConfig")
	})
}

// checkWithAmtool runs amtool check-config on an Alertmanager configuration holding the fragment's
// time intervals and routes (skipped, saying so, without amtool).
func checkWithAmtool(t *testing.T, fragment string) {
	t.Helper()
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Log("amtool not installed: the configuration is not checked by Alertmanager")
		return
	}
	var part struct {
		TimeIntervals []map[string]any `yaml:"time_intervals"`
		Routes        []map[string]any `yaml:"routes"`
	}
	if err := yaml.Unmarshal([]byte(fragment), &part); err != nil {
		t.Fatalf("configuration: %v\n%s", err, fragment)
	}
	for _, r := range part.Routes {
		r["receiver"] = "none"
	}
	cfg := map[string]any{
		"route":          map[string]any{"receiver": "none", "routes": part.Routes},
		"receivers":      []map[string]string{{"name": "none"}},
		"time_intervals": part.TimeIntervals,
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(amtool, "check-config", path).CombinedOutput(); err != nil {
		t.Errorf("amtool check-config: %v\n%s\n%s", err, out, b)
	}
}
