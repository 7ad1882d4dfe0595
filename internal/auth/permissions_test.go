package auth

import (
	"slices"
	"strings"
	"testing"
)

func TestCatalogIsThePublicNames(t *testing.T) {
	if len(catalog) != 293 {
		t.Fatalf("catalog holds %d permissions, want 293", len(catalog))
	}
	for _, p := range catalog {
		for _, spelling := range []string{p.Name, strings.ToUpper(p.Name), strings.ToLower(p.Name)} {
			if c, ok := Canonical(spelling); !ok || c != p.Name {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", spelling, c, ok, p.Name)
			}
		}
		if p.Group == "" || (p.Level != "team" && p.Level != "org") || p.Description == "" {
			t.Fatalf("permission %+v", p)
		}
	}
	if c, _ := Canonical("ALERTS-MAP:READ"); c != "alerts-map:Read" {
		t.Fatalf("ALERTS-MAP:READ is %q", c)
	}
	if c, _ := Canonical("incidents:read"); c != "incidents:Read" {
		t.Fatalf("incidents:read is %q", c)
	}
	for _, name := range []string{"", "alerts-map", "alerts-map:Write", "policies:Manage", " alerts-map:Read"} {
		if KnownPermission(name) {
			t.Errorf("%q is known", name)
		}
	}
	var send []string
	for _, p := range catalog {
		if p.SendData {
			send = append(send, p.Name)
		}
	}
	if !slices.Contains(send, IngestPermission) || len(send) != 8 {
		t.Fatalf("send-data permissions %v", send)
	}
}

func TestResolveOldNames(t *testing.T) {
	if len(OldNames()) != 27 {
		t.Fatalf("%d retired names, want the 27 of ours that were not public", len(OldNames()))
	}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"policies:Manage", []string{"logs.tco:UpdatePolicies", "spans.tco:UpdatePolicies", "metrics.tco:UpdatePolicies"}},
		{"POLICIES:MANAGE", []string{"logs.tco:UpdatePolicies", "spans.tco:UpdatePolicies", "metrics.tco:UpdatePolicies"}},
		{"alerts:Ingest", []string{"contextual-data:SendData"}},
		{"views:readconfig", []string{"team-saved-views:Read"}},
		{"team-saved-views:read", []string{"team-saved-views:Read"}},
		{"nope:Read", nil},
	} {
		if got := Resolve(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Resolve(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	got, err := ResolveAll("p", []string{"slos:Manage", "SLO:UpdateConfig", "case:read"})
	if err != nil || !slices.Equal(got, []string{"slo:UpdateConfig", "case:Read"}) {
		t.Fatalf("ResolveAll = %v, %v", got, err)
	}
	if _, err := ResolveAll("p", []string{"case:Read", "case:Fly"}); err == nil || !strings.Contains(err.Error(), `p[1]: unknown permission "case:Fly"`) {
		t.Fatalf("ResolveAll with an unknown name: %v", err)
	}
}

func TestAccessPolicyNames(t *testing.T) {
	text := `{"version":"2025-01-01","default":{"permissions":{"policies:Manage":"deny","LOGS.TCO:UPDATEPOLICIES":"grant","case:Read":"grant"}},"rules":[]}`
	p, err := ParseAccessPolicy("accessPolicy", text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"logs.tco:UpdatePolicies": "deny", "spans.tco:UpdatePolicies": "deny",
		"metrics.tco:UpdatePolicies": "deny", "case:Read": "grant"}
	if len(p.Default.Permissions) != len(want) {
		t.Fatalf("policy %v", p.Default.Permissions)
	}
	for k, v := range want {
		if p.Default.Permissions[k] != v {
			t.Fatalf("policy %v: %s is %q, want %q", p.Default.Permissions, k, p.Default.Permissions[k], v)
		}
	}
	set := Effective([]string{"policies:Manage", "case:Read"}, nil, p)
	if set["logs.tco:UpdatePolicies"] || !set["case:Read"] {
		t.Fatalf("effective %v", set)
	}
	stored, err := CanonicalAccessPolicy("accessPolicy", text)
	if err != nil || strings.Contains(stored, "policies:Manage") || strings.Contains(stored, "LOGS") ||
		!strings.Contains(stored, `"spans.tco:UpdatePolicies":"deny"`) {
		t.Fatalf("canonical policy %s, %v", stored, err)
	}
	public := `{"version": "2025-01-01", "default": {"permissions": {"case:Read": "deny"}}}`
	if stored, err := CanonicalAccessPolicy("accessPolicy", public); err != nil || stored != public {
		t.Fatalf("a policy of public names is rewritten: %s, %v", stored, err)
	}
	if _, err := ParseAccessPolicy("accessPolicy", `{"version":"2025-01-01","default":{"permissions":{"case:Fly":"deny"}}}`); err == nil ||
		!strings.Contains(err.Error(), `unknown permission "case:Fly"`) {
		t.Fatalf("unknown name: %v", err)
	}
}

// Effective reads stored retired names as their public names, as a replica of the previous
// release may still write them.
func TestEffectiveReadsOldNames(t *testing.T) {
	set := Effective([]string{"events2metrics:ReadConfig"}, []string{"cases"}, nil)
	if !set["logs.events2metrics:ReadConfig"] || !set["spans.events2metrics:ReadConfig"] || !set["case:Comment"] || set["events2metrics:ReadConfig"] {
		t.Fatalf("effective %v", set)
	}
}

func TestPresets(t *testing.T) {
	for _, name := range []string{"APM", "Alerts", "SendData", "DataQuerying", "TCOPolicies", "cases", FullAccess, ReadOnly} {
		if !KnownPreset(name) || len(PresetPermissions(name)) == 0 {
			t.Errorf("preset %q", name)
		}
	}
	if KnownPreset("apm") || KnownPreset("sendData") {
		t.Error("preset names match in another case")
	}
	if got := PresetPermissions(FullAccess); len(got) != 293 {
		t.Errorf("full-access holds %d", len(got))
	}
	for _, p := range PresetPermissions(ReadOnly) {
		if !ReadsOnly(p) {
			t.Errorf("read-only holds %s", p)
		}
	}
	for _, p := range PresetPermissions(SendData) {
		i := byFold[strings.ToLower(p)]
		if !catalog[i].SendData {
			t.Errorf("SendData holds %s", p)
		}
	}
	if !slices.Contains(PresetPermissions("APM"), "service-map:Read") || !slices.Contains(PresetPermissions("Alerts"), "alerts:UpdateConfig") {
		t.Error("APM or Alerts lacks its area")
	}
}
