// Package ipaccess serves a team's IP access settings (the public IP access service) and enforces
// them: while a team has an enabled range, a request made with one of its keys from an address
// outside every enabled range is refused by the API's security step (Guard.Check), before its
// operation runs.
package ipaccess

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Entry is one range of a team's settings, as set.
type Entry struct {
	Name    string `json:"name,omitempty"`
	IPRange string `json:"ipRange"`
	Enabled bool   `json:"enabled"`
}

// Settings are a team's IP access settings.
type Settings struct {
	// SupportAccess is a oas.PlatformCustomerSupportAccess value.
	SupportAccess string
	Entries       []Entry
}

// defaultSettings are the settings of a team that set none.
func defaultSettings() Settings {
	return Settings{SupportAccess: string(oas.PlatformCustomerSupportAccessPLATFORMCUSTOMERSUPPORTACCESSDISABLED), Entries: []Entry{}}
}

// parseRange reads a range in CIDR notation, or one address as a single-address range.
func parseRange(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Zone() == "" {
		return netip.PrefixFrom(p.Addr().Unmap(), bitsUnmapped(p)).Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// bitsUnmapped is the prefix length of p once an IPv4-mapped IPv6 range is read as IPv4.
func bitsUnmapped(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		if b := p.Bits() - 96; b >= 0 {
			return b
		}
		return 0
	}
	return p.Bits()
}

// checkEntries checks the ranges of a create or replace body and returns them as stored.
//
// Errors: Invalid naming ipAccess[i].ipRange when it is missing or not a range, or
// ipAccess[i].name when it holds a control character.
func checkEntries(in []oas.IpAccessEntry) ([]Entry, error) {
	out := make([]Entry, 0, len(in))
	for i, e := range in {
		raw, ok := e.IpRange.Get()
		if !ok || strings.TrimSpace(raw) == "" {
			return nil, apierror.Invalidf("ipAccess[%d].ipRange: required, a range in CIDR notation such as 203.0.113.0/24", i)
		}
		raw = strings.TrimSpace(raw)
		if _, ok := parseRange(raw); !ok {
			return nil, apierror.Invalidf("ipAccess[%d].ipRange: %q is not an IPv4 or IPv6 range in CIDR notation (such as 203.0.113.0/24) nor an address", i, raw)
		}
		name := e.Name.Or("")
		if strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, apierror.Invalidf("ipAccess[%d].name: must not hold control characters", i)
		}
		out = append(out, Entry{Name: name, IPRange: raw, Enabled: e.Enabled.Or(false)})
	}
	return out, nil
}

// supportAccess is the stored support-access choice of a body: as sent, DISABLED when left out.
func supportAccess(v oas.OptPlatformCustomerSupportAccess) string {
	if a, ok := v.Get(); ok {
		return string(a)
	}
	return defaultSettings().SupportAccess
}

// enabledRanges are the ranges of the enabled entries; none means no restriction.
func enabledRanges(entries []Entry) []netip.Prefix {
	var out []netip.Prefix
	for _, e := range entries {
		if !e.Enabled {
			continue
		}
		if p, ok := parseRange(e.IPRange); ok {
			out = append(out, p)
		}
	}
	return out
}

// allows reports whether a request from addr (known when ok) may pass ranges: always when there
// is no range.
func allows(ranges []netip.Prefix, addr netip.Addr, ok bool) bool {
	if len(ranges) == 0 {
		return true
	}
	if !ok {
		return false
	}
	for _, p := range ranges {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// answer is the settings in the shape of the operations' answers: the ranges keyed by their
// place in the list.
func answer(teamID int64, s Settings) *oas.IpAccessSettingsEnvelope {
	ranges := make(oas.IpAccessSettingsIpAccess, len(s.Entries))
	for i, e := range s.Entries {
		entry := oas.IpAccessEntry{IpRange: oas.NewOptString(e.IPRange), Enabled: oas.NewOptBool(e.Enabled)}
		if e.Name != "" {
			entry.Name = oas.NewOptString(e.Name)
		}
		ranges[strconv.Itoa(i)] = entry
	}
	return &oas.IpAccessSettingsEnvelope{Settings: oas.NewOptIpAccessSettings(oas.IpAccessSettings{
		ID:                                  oas.NewOptString(strconv.FormatInt(teamID, 10)),
		EnablePlatformCustomerSupportAccess: oas.NewOptPlatformCustomerSupportAccess(oas.PlatformCustomerSupportAccess(s.SupportAccess)),
		IpAccess:                            oas.NewOptIpAccessSettingsIpAccess(ranges),
	})}
}
