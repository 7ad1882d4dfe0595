package teamconfig_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// The actions (actions), the logs archive target (logsArchiveTarget) and the metrics archive
// (metricsArchive) areas.

// TestActionsAndArchiveRoundTrip: a team's actions (one private and hidden), its inactive logs
// archive target and its disabled metrics archive are exported without what the server sets,
// applied to another team as they are (a second apply changes nothing), and the actions pruned;
// a bad placeholder in a document is refused naming the area and the field, changing nothing.
func TestActionsAndArchiveRoundTrip(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, body := range []string{
			`{"name":"search","url":"https://www.google.com/search?q={{$p.selected_value}}","sourceType":"SOURCE_TYPE_LOG"}`,
			`{"name":"pod","url":"https://k8s.example.com/{{$d.kubernetes.pod_name}}?env={{$p.env}}","urlFields":[{"name":"env","required":true}],"isPrivate":true}`,
		} {
			if res := env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/actions/actions/v2", env.RootKey, body); res.Status != http.StatusOK {
				t.Fatalf("create action: %d %s", res.Status, res.Body)
			}
		}
		for _, req := range []struct{ method, path, body string }{
			{http.MethodPost, "/mgmt/openapi/latest/logs/data-setup/v2", `{"isActive":false,"format":"TARGET_FORMAT_PLATFORM_DATA_V1","s3":{"bucket":"team-logs","region":"eu-west-1"}}`},
			{http.MethodPost, "/mgmt/openapi/latest/metrics/data-setup/v1", `{"s3":{"bucket":"team-metrics","region":"eu-north-1"},"retentionPolicy":{"rawResolution":1,"fiveMinutesResolution":2,"oneHourResolution":3}}`},
			{http.MethodPost, "/mgmt/openapi/latest/metrics/data-setup/v1/disable", ``},
		} {
			if res := env.JSON(t, req.method, req.path, env.RootKey, req.body); res.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", req.path, res.Status, res.Body)
			}
		}
		doc := mustExport(t, env, env.RootKey, false)
		for _, want := range []string{"actions:", "logsArchiveTarget:", "metricsArchive:", "team-logs", "team-metrics", "{{$p.selected_value}}", "disabled: true"} {
			if !strings.Contains(doc, want) {
				t.Fatalf("export lacks %q:\n%s", want, doc)
			}
		}
		for _, never := range []string{"createdBy", "tenantId", "prefix:"} {
			if strings.Contains(doc, never) {
				t.Fatalf("export holds %q, which the server sets:\n%s", never, doc)
			}
		}
		_, other := env.MustTeam(t, "copy")
		onlyActions(t, mustApply(t, env, other, "", doc), map[string]int{"actions create": 2, "logsArchiveTarget create": 1, "metricsArchive create": 1})
		if got := mustExport(t, env, other, false); got != doc {
			t.Fatalf("the copy exports\n%s\nwant\n%s", got, doc)
		}
		onlyActions(t, mustApply(t, env, other, "", doc), map[string]int{})
		bad := strings.Replace(doc, "{{$p.selected_value}}", "{{$x.selected_value}}", 1)
		res := apply(t, env, other, "", "application/yaml", bad)
		apitest.ExpectError(t, res, http.StatusBadRequest, "actions", "url: placeholder {{$x.selected_value}}")
		onlyActions(t, mustApply(t, env, other, "?prune=true", "actions: []\n"), map[string]int{"actions delete": 2})
		if got := mustExport(t, env, other, false); strings.Contains(got, "selected_value") || !strings.Contains(got, "team-logs") {
			t.Fatalf("after the prune:\n%s", got)
		}
	})
}
