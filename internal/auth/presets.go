package auth

import (
	"slices"
	"sort"
	"strings"
)

// Preset is a named bundle of permissions that a key can hold by name.
type Preset struct {
	Name        string
	Description string
	// Public marks a preset the real service offers under this name; the others are mgmtapi's.
	Public      bool
	Permissions []string
}

// FullAccess is the preset that holds every permission, now and as the catalog grows.
const FullAccess = "full-access"

// ReadOnly is the preset that holds every permission that only reads.
const ReadOnly = "read-only"

// SendData is the preset that makes a key a send-data key, as the real service names it: it
// holds every data-ingestion right of the catalog, and such a key is refused on every management
// operation.
const SendData = "SendData"

// presetDef defines a preset by its explicit permissions and by rules over the catalog: every
// permission whose resource (the part before the colon) is in resources, or whose group is in
// groups, or, with reads, every permission that only reads.
type presetDef struct {
	name, description string
	public            bool
	permissions       []string
	resources         []string
	groups            []string
	reads, sendData   bool
	all               bool
}

var presetDefs = []presetDef{
	// mgmtapi's own presets, by area of its operations.
	{name: "api-keys", description: "everything about API keys",
		permissions: []string{"team-custom-api-keys:ReadConfig", "team-custom-api-keys:Manage", "data-ingest-api-keys:ReadConfig"}},
	{name: "recording-rules", description: "everything about recording rules",
		resources: []string{"metrics.recording-rules"}},
	{name: "cases", description: "everything about cases",
		permissions: []string{"case:Read", "case:Update", "case:Assign", "case:Acknowledge", "case:Close", "case:Comment"}},
	{name: "incidents", description: "everything about incidents",
		permissions: []string{"incidents:Read", "incidents:Acknowledge", "incidents:Close", "incidents:Assign"}},
	{name: "alertmanager", description: "what an Alertmanager webhook receiver needs",
		permissions: []string{IngestPermission}},
	{name: "data-plans", description: "everything about data-plan policies and their settings",
		resources: []string{"logs.tco", "spans.tco", "metrics.tco"}},
	{name: "quota-rules", description: "everything about the team's quota allocation rule set",
		resources: []string{"team-quota-rules"}},
	{name: "data-usage", description: "reading the team's data usage and changing its export setting",
		resources: []string{"data-usage"}},
	{name: "notification-presets", description: "everything about notification presets",
		resources: []string{"notification-center-presets"}},
	{name: "parsing-rules", description: "everything about parsing rule groups",
		resources: []string{"parsing-rules"}},
	{name: "retention-tags", description: "everything about retention tags",
		permissions: []string{"logs.data-setup#low:ReadConfig", "logs.data-setup#low:UpdateConfig"}},
	{name: "team-roles", description: "everything about custom roles, and reading the system roles",
		permissions: []string{"team-roles:ReadConfig", "team-roles:Manage"}},
	{name: "views", description: "everything about saved views and view folders",
		permissions: []string{"team-saved-views:Read", "team-saved-views:Update"}},
	{name: "dashboards", description: "everything about custom dashboards",
		permissions: []string{"team-dashboards:Read", "team-dashboards:Update"}},
	{name: "extensions", description: "reading the extension catalog, deploying extensions, and deploying the item kinds that have no area of their own",
		permissions: []string{"extensions:ReadConfig", "extensions:Deploy", "team-actions:UpdateConfig", "alerts:UpdateConfig",
			"cloud-metadata-enrichment:UpdateConfig", "geo-enrichment:UpdateConfig", "security-enrichment:UpdateConfig",
			"team-custom-enrichment:UpdateConfig", "grafana:Update", "opensearch-dashboards:Update"}},
	{name: "slos", description: "everything about SLOs",
		permissions: []string{"slo:ReadConfig", "slo:UpdateConfig"}},
	{name: "events2metrics", description: "everything about events-to-metrics rules",
		resources: []string{"logs.events2metrics", "spans.events2metrics"}},
	{name: "configuration", description: "exporting and applying the team's configuration document (each area's permissions are needed too)",
		permissions: []string{"org-settings:ReadConfig", "org-settings:UpdateConfig"}},
	{name: ReadOnly, description: "every permission that only reads", reads: true},
	{name: FullAccess, description: "every permission", all: true},

	// The real service's presets, by the names its documentation uses. Their contents are our
	// reading of the catalog: the permissions of the resources or groups the name stands for.
	{name: "APIKeys", public: true, description: "managing API keys of every kind",
		resources: []string{"team-api-keys", "team-api-keys-security-settings", "team-custom-api-keys", "data-ingest-api-keys", "personal-custom-api-keys"}},
	{name: "APM", public: true, description: "application performance monitoring: services, their catalog and map, serverless",
		groups: []string{"apm"}},
	{name: "Actions", public: true, description: "shared and private actions",
		groups: []string{"actions"}},
	{name: "AiObservability", public: true, description: "observing AI applications",
		groups: []string{"ai"}},
	{name: "Alerts", public: true, description: "alert definitions of every data type, alert settings, snoozing and suppression rules",
		groups: []string{"alerts"}},
	{name: "Auditing", public: true, description: "the team's audit settings",
		groups: []string{"auditing"}},
	{name: "ContextualData", public: true, description: "contextual-data integrations, including sending contextual data",
		resources: []string{"contextual-data"}},
	{name: "Dashboards", public: true, description: "team and private custom dashboards",
		permissions: []string{"team-dashboards:Read", "team-dashboards:Update", "user-dashboards:Read", "user-dashboards:Update"}},
	{name: "DataAnalytics", public: true, description: "analytics over logs, metrics and spans",
		resources: []string{"logs.data-analytics#high", "logs.data-analytics#low", "metrics.data-analytics#high",
			"metrics.data-analytics#low", "spans.data-analytics#high", "spans.data-analytics#low"}},
	{name: "DataMap", public: true, description: "the data map",
		groups: []string{"data_map"}},
	{name: "DataQuerying", public: true, description: "querying logs, metrics, spans, profiles and the archive",
		resources: []string{"logs.data-api#high", "logs.data-api#low", "metrics.data-api#high", "metrics.data-api#low",
			"spans.data-api#high", "spans.data-api#low", "legacy-archive-queries", "profiles.cpu-profiles"}},
	{name: "DataSetup", public: true, description: "data setup and archive settings of logs, metrics and spans",
		resources: []string{"logs.data-setup#high", "logs.data-setup#low", "metrics.data-setup#high", "metrics.data-setup#low",
			"spans.data-setup#high", "spans.data-setup#low"}},
	{name: "DataUsage", public: true, description: "the team's data usage",
		resources: []string{"data-usage"}},
	{name: "Enrichments", public: true, description: "configuring enrichments",
		resources: []string{"cloud-metadata-enrichment", "geo-enrichment", "security-enrichment", "team-custom-enrichment"}},
	{name: "Events2Metrics", public: true, description: "events-to-metrics rules of logs and spans",
		resources: []string{"logs.events2metrics", "spans.events2metrics"}},
	{name: "Extensions", public: true, description: "extensions",
		resources: []string{"extensions"}},
	{name: "FleetManagement", public: true, description: "fleet management",
		groups: []string{"fleet_management"}},
	{name: "Grafana", public: true, description: "hosted Grafana",
		resources: []string{"grafana"}},
	{name: "Incidents", public: true, description: "incidents",
		groups: []string{"incidents"}},
	{name: "InfraMonitoring", public: true, description: "infrastructure monitoring",
		groups: []string{"infrastructure_monitoring"}},
	{name: "Integrations", public: true, description: "integrations",
		resources: []string{"integrations"}},
	{name: "LiveTail", public: true, description: "live tail",
		resources: []string{"livetail"}},
	{name: "NotificationCenter", public: true, description: "the notification center's connectors, presets and routers",
		resources: []string{"notification-center-connectors", "notification-center-presets", "notification-center-routers"}},
	{name: "OpenSearchDashboards", public: true, description: "hosted OpenSearch dashboards",
		resources: []string{"opensearch-dashboards"}},
	{name: "OutboundWebhooks", public: true, description: "outbound webhooks",
		resources: []string{"outbound-webhooks"}},
	{name: "ParsingRules", public: true, description: "parsing rules",
		resources: []string{"parsing-rules"}},
	{name: "Payments", public: true, description: "the team's payments and pay-as-you-go settings",
		resources: []string{"team-payments", "team-pay-as-you-go"}},
	{name: "RecordingRules", public: true, description: "recording rules",
		resources: []string{"metrics.recording-rules"}},
	{name: "SLO", public: true, description: "SLOs and their alerts",
		resources: []string{"slo", "slo-mgmt.alerts"}},
	{name: "SavedViews", public: true, description: "team and private saved views",
		resources: []string{"team-saved-views", "user-saved-views"}},
	{name: "Security", public: true, description: "security features",
		groups: []string{"snowbit"}},
	{name: SendData, public: true, description: "makes a send-data key: every data-ingestion right; it authenticates only ingestion, never a management operation",
		sendData: true},
	{name: "SourceMapping", public: true, description: "source maps",
		resources: []string{"source-mapping"}},
	{name: "TCOPolicies", public: true, description: "data-plan (TCO) policies of logs, metrics and spans",
		resources: []string{"logs.tco", "metrics.tco", "spans.tco"}},
}

// presets holds each preset's permissions, sorted; computed once from presetDefs and the catalog.
var presets []Preset

// buildPresets fills presets; it runs after the catalog is built (see the package's init).
func buildPresets() {
	for _, d := range presetDefs {
		set := make(map[string]bool)
		for _, n := range d.permissions {
			c, ok := Canonical(n)
			if !ok || c != n {
				panic("auth: preset " + d.name + " holds " + n + ", which is not a public name")
			}
			set[n] = true
		}
		for _, p := range catalog {
			resource, _, _ := strings.Cut(p.Name, ":")
			if d.all || slices.Contains(d.resources, resource) || slices.Contains(d.groups, p.Group) ||
				(d.reads && readsOnly(p.Name)) || (d.sendData && p.SendData) {
				set[p.Name] = true
			}
		}
		if len(set) == 0 {
			panic("auth: preset " + d.name + " holds no permission")
		}
		perms := make([]string, 0, len(set))
		for n := range set {
			perms = append(perms, n)
		}
		sort.Strings(perms)
		presets = append(presets, Preset{Name: d.name, Description: d.description, Public: d.public, Permissions: perms})
	}
}

// readsOnly reports whether a permission only reads: its action is a Read… or View.
func readsOnly(name string) bool {
	_, action, _ := strings.Cut(name, ":")
	return strings.HasPrefix(action, "Read") || action == "View"
}

// ReadsOnly reports whether the named catalog permission only reads (its action is Read… or
// View).
func ReadsOnly(name string) bool { return readsOnly(name) }

// Presets returns every preset with its permissions filled in: mgmtapi's, then the public ones.
func Presets() []Preset {
	out := make([]Preset, 0, len(presets))
	for _, p := range presets {
		p.Permissions = slices.Clone(p.Permissions)
		out = append(out, p)
	}
	return out
}

// KnownPreset reports whether a preset of that name exists. Preset names match exactly: the
// real service's preset names are identifiers, and two of ours differ from public ones only in
// case (incidents and Incidents, dashboards and Dashboards, extensions and Extensions).
func KnownPreset(name string) bool {
	return slices.ContainsFunc(presets, func(p Preset) bool { return p.Name == name })
}

// PresetPermissions returns the sorted permissions of the named preset, or nil for an unknown one.
func PresetPermissions(name string) []string {
	for _, p := range presets {
		if p.Name == name {
			return slices.Clone(p.Permissions)
		}
	}
	return nil
}
