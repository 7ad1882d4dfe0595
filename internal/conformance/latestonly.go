package conformance

import (
	"os"
	"path/filepath"
	"slices"
)

// LatestOnly are the public documents that only the newest set (`public-spec-latest`, beside the
// loaded directory) has, for services mgmtapi serves: Load adds each to a directory's documents
// when the directory has none of that name and the sibling has it, so their answers are checked
// too. Dashboard folders are issue 24 §6; case notification deliveries, case settings,
// connectors, the connector schema, global routers and notification testing are issue 25; alert
// definitions, alert scheduler rules and the alert event feed (events, alert events) are issue 26;
// teams, members (users), groups and scopes are issue 34;
// AI applications and AI evaluations are issue 36;
// IP access, the SAML configuration and the bulk operations of key administration are issue 34;
// enrichments and custom enrichment data sets, actions, the logs archive target and the metrics
// archive are issue 35.
var LatestOnly = []string{"dashboard_folders_service.json", "cases_notification_service.json", "case_settings_service.json",
	"connectors_service.json", "connector_schema_service.json", "global_routers_service.json",
	"notifications_testing_service.json", "alert_definitions_service.json", "alert_scheduler_rule_service.json",
	"events_service.json", "alert_events_service.json", "outgoing_webhooks_service.json",
	"integration_service.json", "contextual_data_integration_service.json",
	"teams_service.json", "users_management_service.json", "team_groups_management_service.json", "scopes_service.json",
	"ai_applications_service.json", "ai_evaluations_service.json",
	"ip_access_service.json", "saml_configuration_service.json", "api_keys_admin_service.json",
	"enrichments_service.json", "custom_enrichments_service.json",
	"actions_service.json", "target_service.json", "metrics_data_archive_service.json"}

// latestOnlyFiles returns the paths of the LatestOnly documents that dir lacks and its sibling
// `public-spec-latest` holds.
func latestOnlyFiles(dir string, files []string) []string {
	var out []string
	for _, name := range LatestOnly {
		if slices.ContainsFunc(files, func(f string) bool { return filepath.Base(f) == name }) {
			continue
		}
		p := filepath.Join(filepath.Dir(filepath.Clean(dir)), "public-spec-latest", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}
