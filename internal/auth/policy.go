package auth

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
)

// AccessPolicy is the parsed form of a key's accessPolicy text.
type AccessPolicy struct {
	Version string `json:"version"`
	Default struct {
		Permissions map[string]string `json:"permissions"`
	} `json:"default"`
	Rules []json.RawMessage `json:"rules"`
}

// ParseAccessPolicy parses and checks the JSON text of an access policy. An empty text is no
// policy (nil, nil). Every failure is an apierror.Invalid whose message starts with field.
//
// Rules: version is a date (YYYY-MM-DD); default.permissions maps known permission names to
// "grant" or "deny"; rules must be absent or empty, because mgmtapi does not evaluate per-user or
// per-group rules and silently ignoring a deny rule would widen access.
func ParseAccessPolicy(field, text string) (*AccessPolicy, error) {
	if text == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	var p AccessPolicy
	if err := dec.Decode(&p); err != nil {
		return nil, apierror.Invalidf("%s: must be a JSON object {version, default: {permissions}, rules}: %v", field, err)
	}
	if dec.More() {
		return nil, apierror.Invalidf("%s: must hold exactly one JSON object", field)
	}
	if p.Version == "" {
		return nil, apierror.Invalidf("%s.version: is required (a date such as 2025-01-01)", field)
	}
	if _, err := time.Parse(time.DateOnly, p.Version); err != nil {
		return nil, apierror.Invalidf("%s.version: must be a date in the form YYYY-MM-DD", field)
	}
	names := make([]string, 0, len(p.Default.Permissions))
	for name := range p.Default.Permissions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !KnownPermission(name) {
			return nil, apierror.Invalidf("%s.default.permissions: unknown permission %q", field, name)
		}
		if v := p.Default.Permissions[name]; v != "grant" && v != "deny" {
			return nil, apierror.Invalidf("%s.default.permissions[%q]: must be \"grant\" or \"deny\", not %q", field, name, v)
		}
	}
	if len(p.Rules) > 0 {
		return nil, apierror.Invalidf("%s.rules: must be empty; mgmtapi applies only default.permissions", field)
	}
	return &p, nil
}

// CheckGrants returns an apierror.Invalid when a permission or preset name is unknown.
func CheckGrants(permissionsField string, permissions []string, presetsField string, presetNames []string) error {
	for i, name := range permissions {
		if !KnownPermission(name) {
			return apierror.Invalidf("%s[%d]: unknown permission %q", permissionsField, i, name)
		}
	}
	for i, name := range presetNames {
		if !KnownPreset(name) {
			return apierror.Invalidf("%s[%d]: unknown preset %q", presetsField, i, name)
		}
	}
	return nil
}

// Effective computes the permissions a key holds: its explicit permissions and those of its
// presets, then the policy's grants added and its denies removed (deny wins over everything).
func Effective(permissions, presetNames []string, policy *AccessPolicy) map[string]bool {
	set := make(map[string]bool)
	for _, p := range permissions {
		set[p] = true
	}
	for _, name := range presetNames {
		for _, p := range PresetPermissions(name) {
			set[p] = true
		}
	}
	if policy != nil {
		for name, verdict := range policy.Default.Permissions {
			if verdict == "grant" {
				set[name] = true
			}
		}
		for name, verdict := range policy.Default.Permissions {
			if verdict == "deny" {
				delete(set, name)
			}
		}
	}
	return set
}
