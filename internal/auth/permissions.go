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
	oldNames = make(map[string][]string, len(retired))
	for _, old := range retired {
		key := strings.ToLower(old.Name)
		if _, dup := oldNames[key]; dup {
			panic("auth: old permission name " + old.Name + " is listed twice")
		}
		for _, n := range old.Public {
			if i, ok := byFold[strings.ToLower(n)]; !ok || catalog[i].Name != n {
				panic("auth: old permission name " + old.Name + " maps to " + n + ", which is not a public name")
			}
		}
		oldNames[key] = old.Public
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

// OldName is a retired permission name, as it was written, and the public names it stands for.
type OldName struct {
	Name   string
	Public []string
}

// retired lists each retired permission name, in the order of the old catalog, with the public
// names that replace it. mgmtapi accepts an old name in a request for one release, as if the
// caller had sent its public names; migration 0033 rewrote the stored ones. An old name maps to
// several public names where one of our names covered what the public catalog splits (policies
// of logs, spans and metrics).
var retired = []OldName{
	{"api-keys:ReadConfig", []string{"team-custom-api-keys:ReadConfig", "data-ingest-api-keys:ReadConfig"}},
	{"api-keys:Manage", []string{"team-custom-api-keys:Manage", "data-ingest-api-keys:Manage"}},
	{"recording-rules:ReadConfig", []string{"metrics.recording-rules:ReadConfig"}},
	{"recording-rules:Manage", []string{"metrics.recording-rules:UpdateConfig"}},
	{"config:Export", []string{"org-settings:ReadConfig"}},
	{"config:Apply", []string{"org-settings:UpdateConfig"}},
	{"alerts:Ingest", []string{IngestPermission}},
	{"policies:ReadConfig", []string{"logs.tco:ReadPolicies", "spans.tco:ReadPolicies", "metrics.tco:ReadPolicies"}},
	{"policies:Manage", []string{"logs.tco:UpdatePolicies", "spans.tco:UpdatePolicies", "metrics.tco:UpdatePolicies"}},
	{"policy-settings:ReadConfig", []string{"logs.tco:ReadPolicies"}},
	{"policy-settings:Manage", []string{"logs.tco:UpdatePolicies"}},
	{"notification-presets:ReadConfig", []string{"notification-center-presets:ReadConfig", "notification-center-presets:ReadSummary"}},
	{"notification-presets:Manage", []string{"notification-center-presets:UpdateConfig"}},
	{"parsing-rules:Manage", []string{"parsing-rules:UpdateConfig"}},
	{"retention-tags:ReadConfig", []string{"logs.data-setup#low:ReadConfig"}},
	{"retention-tags:Manage", []string{"logs.data-setup#low:UpdateConfig"}},
	{"views:ReadConfig", []string{"team-saved-views:Read"}},
	{"views:Manage", []string{"team-saved-views:Update"}},
	{"actions:Manage", []string{"team-actions:UpdateConfig"}},
	{"alerts:Manage", []string{"alerts:UpdateConfig"}},
	{"enrichments:Manage", []string{"cloud-metadata-enrichment:UpdateConfig", "geo-enrichment:UpdateConfig", "security-enrichment:UpdateConfig", "team-custom-enrichment:UpdateConfig"}},
	{"grafana-dashboards:Manage", []string{"grafana:Update"}},
	{"kibana-dashboards:Manage", []string{"opensearch-dashboards:Update"}},
	{"slos:ReadConfig", []string{"slo:ReadConfig"}},
	{"slos:Manage", []string{"slo:UpdateConfig"}},
	{"events2metrics:ReadConfig", []string{"logs.events2metrics:ReadConfig", "spans.events2metrics:ReadConfig"}},
	{"events2metrics:Manage", []string{"logs.events2metrics:UpdateConfig", "spans.events2metrics:UpdateConfig"}},
}

// oldNames finds a retired name's public names by its name in lower case (built from retired).
var oldNames map[string][]string

// OldNames returns every retired permission name, as it was written, with its public names, in
// the order of the old catalog.
func OldNames() []OldName {
	out := make([]OldName, 0, len(retired))
	for _, o := range retired {
		out = append(out, OldName{Name: o.Name, Public: slices.Clone(o.Public)})
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
