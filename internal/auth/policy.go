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
// Rules: version is a date (YYYY-MM-DD); default.permissions maps permission names to "grant" or
// "deny"; rules must be absent or empty, because mgmtapi does not evaluate per-user or per-group
// rules and silently ignoring a deny rule would widen access. Names match the catalog in any
// case, and a retired name stands for its public names (see Resolve); the returned policy holds
// public names only, a name given twice (say in two spellings) being denied when either says deny.
func ParseAccessPolicy(field, text string) (*AccessPolicy, error) {
	p, _, err := parseAccessPolicy(field, text)
	return p, err
}

// CanonicalAccessPolicy checks text as ParseAccessPolicy does and returns the text to store: text
// itself when it already names every permission by its public spelling, otherwise the policy
// written again (compact JSON) with the public names. Errors are ParseAccessPolicy's.
func CanonicalAccessPolicy(field, text string) (string, error) {
	p, changed, err := parseAccessPolicy(field, text)
	if err != nil || !changed {
		return text, err
	}
	out, err := json.Marshal(struct {
		Version string `json:"version"`
		Default struct {
			Permissions map[string]string `json:"permissions"`
		} `json:"default"`
		Rules []json.RawMessage `json:"rules"`
	}{Version: p.Version, Default: p.Default, Rules: []json.RawMessage{}})
	return string(out), err
}

// parseAccessPolicy is ParseAccessPolicy; changed reports whether a name was not written in its
// public spelling.
func parseAccessPolicy(field, text string) (_ *AccessPolicy, changed bool, _ error) {
	if text == "" {
		return nil, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	var p AccessPolicy
	if err := dec.Decode(&p); err != nil {
		return nil, false, apierror.Invalidf("%s: must be a JSON object {version, default: {permissions}, rules}: %v", field, err)
	}
	if dec.More() {
		return nil, false, apierror.Invalidf("%s: must hold exactly one JSON object", field)
	}
	if p.Version == "" {
		return nil, false, apierror.Invalidf("%s.version: is required (a date such as 2025-01-01)", field)
	}
	if _, err := time.Parse(time.DateOnly, p.Version); err != nil {
		return nil, false, apierror.Invalidf("%s.version: must be a date in the form YYYY-MM-DD", field)
	}
	names := make([]string, 0, len(p.Default.Permissions))
	for name := range p.Default.Permissions {
		names = append(names, name)
	}
	sort.Strings(names)
	public := make(map[string]string, len(names))
	for _, name := range names {
		resolved := Resolve(name)
		if resolved == nil {
			return nil, false, unknownPermission(field+".default.permissions", name)
		}
		v := p.Default.Permissions[name]
		if v != "grant" && v != "deny" {
			return nil, false, apierror.Invalidf("%s.default.permissions[%q]: must be \"grant\" or \"deny\", not %q", field, name, v)
		}
		if len(resolved) != 1 || resolved[0] != name {
			changed = true
		}
		for _, r := range resolved {
			if public[r] != "deny" {
				public[r] = v
			}
		}
	}
	if len(p.Rules) > 0 {
		return nil, false, apierror.Invalidf("%s.rules: must be empty; mgmtapi applies only default.permissions", field)
	}
	if p.Default.Permissions != nil {
		p.Default.Permissions = public
	}
	return &p, changed, nil
}

// CheckGrants resolves a key's permissions (see ResolveAll) and checks its preset names.
//
// Errors: apierror.Invalid naming permissionsField[i] or presetsField[i] for an unknown permission
// or preset name.
func CheckGrants(permissionsField string, permissions []string, presetsField string, presetNames []string) ([]string, error) {
	resolved, err := ResolveAll(permissionsField, permissions)
	if err != nil {
		return nil, err
	}
	for i, name := range presetNames {
		if !KnownPreset(name) {
			return nil, apierror.Invalidf("%s[%d]: unknown preset %q", presetsField, i, name)
		}
	}
	return resolved, nil
}

// Effective computes the permissions a key holds, by their public names: its explicit permissions
// (retired names standing for their public names) and those of its presets, then the policy's grants added and its denies removed (deny wins over everything).
func Effective(permissions, presetNames []string, policy *AccessPolicy) map[string]bool {
	set := make(map[string]bool)
	for _, p := range publicNames(permissions) {
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
