// Package auth decides who a caller is and what the caller may do: API key values and their
// hashes, the permission catalog and presets, access policies, and the authenticator that turns an
// Authorization header into a Principal.
package auth

import (
	"slices"
	"sort"
)

// Permission is one right that an operation can require.
type Permission struct {
	Name        string
	Description string
}

// catalog lists every permission an operation of mgmtapi can require. Each operation of
// api/openapi.yaml names one of these in its x-permission; internal/api refuses to start if one
// does not.
var catalog = []Permission{
	{"api-keys:ReadConfig", "list and read API keys"},
	{"api-keys:Manage", "create, change and delete API keys"},
	{"recording-rules:ReadConfig", "list and read recording-rule sets, and read them as a Prometheus rule file"},
	{"recording-rules:Manage", "create, replace and delete recording-rule sets"},
	{"config:Export", "export the team's configuration document (with the read permission of every area)"},
	{"config:Apply", "apply a configuration document to the team (with the write permission of every area it changes)"},
	{"case:Read", "list and read cases and their events"},
	{"case:Update", "change a case's title, priority override and resolution reason"},
	{"case:Assign", "assign and unassign cases"},
	{"case:Acknowledge", "acknowledge and unacknowledge cases"},
	{"case:Close", "resolve and close cases"},
	{"case:Comment", "comment on cases, edit and delete comments, sync external threads"},
	{"incidents:read", "list, read and aggregate incidents"},
	{"incidents:acknowledge", "acknowledge incidents"},
	{"incidents:close", "resolve and close incidents"},
	{"incidents:assign", "assign and unassign incidents"},
	{"alerts:Ingest", "send Alertmanager notifications to /ingest/alertmanager/v1"},
	{"policies:ReadConfig", "list and read data-plan policies, forecast a draft policy's usage, test log policies against sample entries"},
	{"policies:Manage", "create, change, reorder, overwrite and delete data-plan policies"},
	{"policy-settings:ReadConfig", "read the default policy priorities"},
	{"policy-settings:Manage", "replace the default policy priorities"},
	{"team-quota-rules:Read", "read the team's quota allocation rule set"},
	{"team-quota-rules:Manage", "create, replace and delete the team's quota allocation rule set"},
	{"data-usage:Read", "query the team's data usage and its capabilities"},
	{"data-usage:Manage", "change the team's data usage export setting"},
	{"notification-presets:ReadConfig", "list and read notification presets and the default of each pair, and list entity types, their sub-types and attachment types"},
	{"notification-presets:Manage", "create, replace and delete custom notification presets, and choose the default preset of a pair"},
	{"parsing-rules:ReadConfig", "list and read parsing rule groups, their usage limits and the stored form of a group"},
	{"parsing-rules:Manage", "create, replace and delete parsing rule groups"},
	{"retention-tags:ReadConfig", "list the team's retention tags and whether they are active"},
	{"retention-tags:Manage", "rename the team's editable retention tags and activate them"},
	{"team-roles:ReadConfig", "list and read custom roles and the system roles"},
	{"team-roles:Manage", "create, change and delete custom roles"},
	{"views:ReadConfig", "list and read saved views and view folders"},
	{"views:Manage", "create, replace and delete saved views and view folders"},
	{"team-dashboards:Read", "read, look up by slug and check custom dashboards, list the dashboard catalog, and pin dashboards for the calling key"},
	{"team-dashboards:Update", "create, replace and delete custom dashboards, make one the team default and move them to folders"},
	{"extensions:ReadConfig", "list and read the extension catalog and the team's deployed extensions"},
	{"extensions:Deploy", "deploy, change and undeploy extensions (each item also needs its own deploy permission)"},
	{"actions:Manage", "deploy extension items of kind ACTION; mgmtapi has no other operation for actions"},
	{"alerts:Manage", "deploy extension items of kind ALERT and ALERT_V3; mgmtapi has no other operation for alert definitions"},
	{"enrichments:Manage", "deploy extension items of kind ENRICHMENT; mgmtapi has no other operation for enrichments"},
	{"grafana-dashboards:Manage", "deploy extension items of kind GRAFANA_DASHBOARD; mgmtapi has no other operation for Grafana dashboards"},
	{"kibana-dashboards:Manage", "deploy extension items of kind KIBANA_DASHBOARD; mgmtapi has no other operation for Kibana dashboards"},
	{"slos:ReadConfig", "list and read SLOs"},
	{"slos:Manage", "create, replace and delete SLOs, one at a time or in a batch"},
	{"events2metrics:ReadConfig", "list and read events-to-metrics rules, their limits and label cardinalities"},
	{"events2metrics:Manage", "create, replace and delete events-to-metrics rules, alone or in atomic batches, and deploy extension items of kind EVENTS_TO_METRICS"},
}

// Preset is a named bundle of permissions that a key can hold by name.
type Preset struct {
	Name        string
	Description string
	Permissions []string
}

// FullAccess is the preset that holds every permission, now and as the catalog grows.
const FullAccess = "full-access"

// SendData is the preset that makes a key a send-data key, as the real service names it. Such a
// key holds only IngestPermission and is refused on every management operation.
const SendData = "SendData"

// IngestPermission is the permission of the ingestion operation (POST /ingest/alertmanager/v1).
const IngestPermission = "alerts:Ingest"

var presets = []Preset{
	{Name: "api-keys", Description: "everything about API keys",
		Permissions: []string{"api-keys:ReadConfig", "api-keys:Manage"}},
	{Name: "recording-rules", Description: "everything about recording rules",
		Permissions: []string{"recording-rules:ReadConfig", "recording-rules:Manage"}},
	{Name: "cases", Description: "everything about cases",
		Permissions: []string{"case:Read", "case:Update", "case:Assign", "case:Acknowledge", "case:Close", "case:Comment"}},
	{Name: "incidents", Description: "everything about incidents",
		Permissions: []string{"incidents:read", "incidents:acknowledge", "incidents:close", "incidents:assign"}},
	{Name: "alertmanager", Description: "what an Alertmanager webhook receiver needs",
		Permissions: []string{"alerts:Ingest"}},
	{Name: SendData, Description: "makes a send-data key: it authenticates only ingestion, never a management operation",
		Permissions: []string{IngestPermission}},
	{Name: "data-plans", Description: "everything about data-plan policies and their settings",
		Permissions: []string{"policies:ReadConfig", "policies:Manage", "policy-settings:ReadConfig", "policy-settings:Manage"}},
	{Name: "quota-rules", Description: "everything about the team's quota allocation rule set",
		Permissions: []string{"team-quota-rules:Read", "team-quota-rules:Manage"}},
	{Name: "data-usage", Description: "reading the team's data usage and changing its export setting",
		Permissions: []string{"data-usage:Read", "data-usage:Manage"}},
	{Name: "notification-presets", Description: "everything about notification presets",
		Permissions: []string{"notification-presets:ReadConfig", "notification-presets:Manage"}},
	{Name: "parsing-rules", Description: "everything about parsing rule groups",
		Permissions: []string{"parsing-rules:ReadConfig", "parsing-rules:Manage"}},
	{Name: "retention-tags", Description: "everything about retention tags",
		Permissions: []string{"retention-tags:ReadConfig", "retention-tags:Manage"}},
	{Name: "team-roles", Description: "everything about custom roles, and reading the system roles",
		Permissions: []string{"team-roles:ReadConfig", "team-roles:Manage"}},
	{Name: "views", Description: "everything about saved views and view folders",
		Permissions: []string{"views:ReadConfig", "views:Manage"}},
	{Name: "dashboards", Description: "everything about custom dashboards",
		Permissions: []string{"team-dashboards:Read", "team-dashboards:Update"}},
	{Name: "extensions", Description: "reading the extension catalog, deploying extensions, and deploying the item kinds that have no area of their own",
		Permissions: []string{"extensions:ReadConfig", "extensions:Deploy", "actions:Manage", "alerts:Manage",
			"enrichments:Manage", "grafana-dashboards:Manage", "kibana-dashboards:Manage"}},
	{Name: "slos", Description: "everything about SLOs",
		Permissions: []string{"slos:ReadConfig", "slos:Manage"}},
	{Name: "events2metrics", Description: "everything about events-to-metrics rules",
		Permissions: []string{"events2metrics:ReadConfig", "events2metrics:Manage"}},
	{Name: "configuration", Description: "exporting and applying the team's configuration document (each area's permissions are needed too)",
		Permissions: []string{"config:Export", "config:Apply"}},
	{Name: "read-only", Description: "every permission that only reads",
		Permissions: []string{"api-keys:ReadConfig", "recording-rules:ReadConfig", "config:Export", "case:Read", "incidents:read",
			"policies:ReadConfig", "policy-settings:ReadConfig", "team-quota-rules:Read", "data-usage:Read",
			"notification-presets:ReadConfig", "parsing-rules:ReadConfig", "retention-tags:ReadConfig",
			"team-roles:ReadConfig", "views:ReadConfig", "team-dashboards:Read", "extensions:ReadConfig",
			"events2metrics:ReadConfig", "slos:ReadConfig"}},
	{Name: FullAccess, Description: "every permission", Permissions: nil},
}

// Permissions returns the catalog, in a stable order.
func Permissions() []Permission { return slices.Clone(catalog) }

// KnownPermission reports whether name is in the catalog.
func KnownPermission(name string) bool {
	return slices.ContainsFunc(catalog, func(p Permission) bool { return p.Name == name })
}

// Presets returns every preset with its permissions filled in.
func Presets() []Preset {
	out := make([]Preset, 0, len(presets))
	for _, p := range presets {
		p.Permissions = PresetPermissions(p.Name)
		out = append(out, p)
	}
	return out
}

// KnownPreset reports whether a preset of that name exists.
func KnownPreset(name string) bool {
	return slices.ContainsFunc(presets, func(p Preset) bool { return p.Name == name })
}

// PresetPermissions returns the sorted permissions of the named preset, or nil for an unknown one.
func PresetPermissions(name string) []string {
	if name == FullAccess {
		all := make([]string, 0, len(catalog))
		for _, p := range catalog {
			all = append(all, p.Name)
		}
		sort.Strings(all)
		return all
	}
	for _, p := range presets {
		if p.Name == name {
			out := slices.Clone(p.Permissions)
			sort.Strings(out)
			return out
		}
	}
	return nil
}
