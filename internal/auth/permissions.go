// Package auth decides who a caller is and what the caller may do: API key values and their
// hashes, the permission catalog and presets, access policies, and the authenticator that turns an
// Authorization header into a Principal.
package auth

import (
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Permission is one right that an operation can require or a key, policy or role can hold.
type Permission struct {
	// Name is the public spelling, as answers show it (matching ignores case).
	Name string
	// Group is the public area the permission belongs to (alerts, dataplans, aaa…).
	Group string
	// Level is "team" or "org".
	Level string
	// Hidden marks a permission the real service does not offer in its pickers; keys, policies
	// and roles still take it.
	Hidden bool
	// SendData marks a data-ingestion right.
	SendData bool
	// Description is our own one-line account of the permission, derived from its name.
	Description string
}

type catalogEntry struct{ name, group, level, flags string }

// catalog lists every public permission, in publicCatalog's order; byFold finds one by its name
// in lower case.
var (
	catalog []Permission
	byFold  map[string]int
)

func init() {
	catalog = make([]Permission, 0, len(publicCatalog))
	byFold = make(map[string]int, len(publicCatalog))
	for _, e := range publicCatalog {
		flags := strings.Fields(e.flags)
		p := Permission{Name: e.name, Group: e.group, Level: e.level,
			Hidden: slices.Contains(flags, "hidden"), SendData: slices.Contains(flags, "send-data")}
		p.Description = describe(p)
		key := strings.ToLower(e.name)
		if _, dup := byFold[key]; dup {
			panic("auth: permission " + e.name + " is listed twice")
		}
		byFold[key] = len(catalog)
		catalog = append(catalog, p)
	}
	for old, names := range oldNames {
		if old != strings.ToLower(old) {
			panic("auth: old permission name " + old + " must be written in lower case")
		}
		for _, n := range names {
			if i, ok := byFold[strings.ToLower(n)]; !ok || catalog[i].Name != n {
				panic("auth: old permission name " + old + " maps to " + n + ", which is not a public name")
			}
		}
	}
	buildPresets()
}

// describe derives a permission's description from its name, group and level: the action split
// into words, then the resource, then where it applies. It never borrows the real service's prose.
func describe(p Permission) string {
	resource, action, _ := strings.Cut(p.Name, ":")
	var words []string
	start := 0
	for i, r := range action {
		if i > 0 && unicode.IsUpper(r) {
			words = append(words, strings.ToLower(action[start:i]))
			start = i
		}
	}
	words = append(words, strings.ToLower(action[start:]))
	if words[0] == "view" {
		words[0] = "read"
	}
	verb := strings.Join(words, " ")
	resource = strings.NewReplacer("#high", " (frequent search)", "#low", " (archive)", ".", " ", "-", " ").Replace(resource)
	scope := "the team"
	if p.Level == "org" {
		scope = "the organization"
	}
	d := fmt.Sprintf("%s: %s, for %s (area %s)", resource, verb, scope, strings.ReplaceAll(p.Group, "_", " "))
	if p.SendData {
		d += "; a data-ingestion right"
	}
	return d
}

// IngestPermission is the permission of the ingestion operation (POST /ingest/alertmanager/v1):
// the public right to send contextual data through a native integration, which is what an
// Alertmanager webhook receiver does.
const IngestPermission = "contextual-data:SendData"

// oldNames maps each retired permission name (in lower case) to the public names that replace it.
// mgmtapi accepts an old name in a request for one release, as if the caller had sent its public
// names; migration 0033 rewrote the stored ones. An old name maps to several public names where
// one of our names covered what the public catalog splits (policies of logs, spans and metrics).
var oldNames = map[string][]string{
	"api-keys:readconfig":             {"team-custom-api-keys:ReadConfig", "data-ingest-api-keys:ReadConfig"},
	"api-keys:manage":                 {"team-custom-api-keys:Manage", "data-ingest-api-keys:Manage"},
	"recording-rules:readconfig":      {"metrics.recording-rules:ReadConfig"},
	"recording-rules:manage":          {"metrics.recording-rules:UpdateConfig"},
	"config:export":                   {"org-settings:ReadConfig"},
	"config:apply":                    {"org-settings:UpdateConfig"},
	"alerts:ingest":                   {IngestPermission},
	"policies:readconfig":             {"logs.tco:ReadPolicies", "spans.tco:ReadPolicies", "metrics.tco:ReadPolicies"},
	"policies:manage":                 {"logs.tco:UpdatePolicies", "spans.tco:UpdatePolicies", "metrics.tco:UpdatePolicies"},
	"policy-settings:readconfig":      {"logs.tco:ReadPolicies"},
	"policy-settings:manage":          {"logs.tco:UpdatePolicies"},
	"notification-presets:readconfig": {"notification-center-presets:ReadConfig", "notification-center-presets:ReadSummary"},
	"notification-presets:manage":     {"notification-center-presets:UpdateConfig"},
	"parsing-rules:manage":            {"parsing-rules:UpdateConfig"},
	"retention-tags:readconfig":       {"logs.data-setup#low:ReadConfig"},
	"retention-tags:manage":           {"logs.data-setup#low:UpdateConfig"},
	"views:readconfig":                {"team-saved-views:Read"},
	"views:manage":                    {"team-saved-views:Update"},
	"actions:manage":                  {"team-actions:UpdateConfig"},
	"alerts:manage":                   {"alerts:UpdateConfig"},
	"enrichments:manage": {"cloud-metadata-enrichment:UpdateConfig", "geo-enrichment:UpdateConfig",
		"security-enrichment:UpdateConfig", "team-custom-enrichment:UpdateConfig"},
	"grafana-dashboards:manage": {"grafana:Update"},
	"kibana-dashboards:manage":  {"opensearch-dashboards:Update"},
	"slos:readconfig":           {"slo:ReadConfig"},
	"slos:manage":               {"slo:UpdateConfig"},
	"events2metrics:readconfig": {"logs.events2metrics:ReadConfig", "spans.events2metrics:ReadConfig"},
	"events2metrics:manage":     {"logs.events2metrics:UpdateConfig", "spans.events2metrics:UpdateConfig"},
}

// OldName is a retired permission name and the public names it stands for.
type OldName struct {
	Name   string
	Public []string
}

// oldSpelling is how the retired names were written (oldNames keys are folded).
var oldSpelling = []string{
	"api-keys:ReadConfig", "api-keys:Manage", "recording-rules:ReadConfig", "recording-rules:Manage",
	"config:Export", "config:Apply", "alerts:Ingest", "policies:ReadConfig", "policies:Manage",
	"policy-settings:ReadConfig", "policy-settings:Manage", "notification-presets:ReadConfig",
	"notification-presets:Manage", "parsing-rules:Manage", "retention-tags:ReadConfig", "retention-tags:Manage",
	"views:ReadConfig", "views:Manage", "actions:Manage", "alerts:Manage", "enrichments:Manage",
	"grafana-dashboards:Manage", "kibana-dashboards:Manage", "slos:ReadConfig", "slos:Manage",
	"events2metrics:ReadConfig", "events2metrics:Manage",
}

// OldNames returns every retired permission name, as it was written, with its public names, in
// the order of the old catalog.
func OldNames() []OldName {
	out := make([]OldName, 0, len(oldSpelling))
	for _, n := range oldSpelling {
		out = append(out, OldName{Name: n, Public: slices.Clone(oldNames[strings.ToLower(n)])})
	}
	return out
}

// Permissions returns the catalog, in a stable order.
func Permissions() []Permission { return slices.Clone(catalog) }

// PermissionNames returns the public name of every permission of the catalog, sorted.
func PermissionNames() []string {
	all := make([]string, 0, len(catalog))
	for _, p := range catalog {
		all = append(all, p.Name)
	}
	sort.Strings(all)
	return all
}

// Canonical returns the public spelling of a catalog permission, matching name without regard
// to case; ok is false when no permission of the catalog has that name (old names included).
func Canonical(name string) (string, bool) {
	i, ok := byFold[strings.ToLower(name)]
	if !ok {
		return "", false
	}
	return catalog[i].Name, true
}

// KnownPermission reports whether name, in any case, is a permission of the catalog. Retired
// names are not: see Resolve.
func KnownPermission(name string) bool {
	_, ok := Canonical(name)
	return ok
}

// Resolve returns the public names that name stands for: its public spelling for a catalog
// permission, the public names of a retired name, in any case; nil for an unknown name.
func Resolve(name string) []string {
	if c, ok := Canonical(name); ok {
		return []string{c}
	}
	return slices.Clone(oldNames[strings.ToLower(name)])
}

// ResolveAll resolves every name (see Resolve) and returns the public names in the order they
// first appear, without repeats.
//
// Errors: apierror.Invalid naming field[i] for the first name that is neither a public nor a
// retired permission name.
func ResolveAll(field string, names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		public := Resolve(n)
		if public == nil {
			return nil, unknownPermission(fmt.Sprintf("%s[%d]", field, i), n)
		}
		for _, p := range public {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func unknownPermission(field, name string) error {
	return apierror.Invalidf("%s: unknown permission %q; it must be a name of the permission catalog (docs/permissions.md), in any case", field, name)
}

// publicNames resolves names leniently, dropping the unknown ones: for what the database holds,
// which was checked when written.
func publicNames(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, Resolve(n)...)
	}
	return out
}
