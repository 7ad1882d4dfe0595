package server

import (
	"context"
	"net/netip"
	"strings"
)

// ClientAddr returns the address of the client of the request whose context this is, and false
// outside a request served by New's handler or when the peer's address cannot be read.
//
// The client is the connection's peer, unless the peer is one of Options.TrustedProxies: then
// the X-Forwarded-For header (every instance, in order, comma-separated) is read from its right
// end, each hop a trusted proxy passing the request on, and the first address that is not a
// trusted proxy is the client. A header entry that is not an address ends the walk at the hop
// that passed it on: an untrusted value is never believed. A peer outside the list is the
// client whatever the header says, so that a caller cannot choose its own address.
func ClientAddr(ctx context.Context) (netip.Addr, bool) {
	req, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return netip.Addr{}, false
	}
	return clientAddr(req.remoteAddr, req.forwardedFor, req.handler.opts.TrustedProxies)
}

// clientAddr is ClientAddr for a peer address (host:port, or a bare address), the
// X-Forwarded-For values and the trusted proxies.
func clientAddr(remote string, forwardedFor []string, trusted []netip.Prefix) (netip.Addr, bool) {
	peer, ok := parseAddr(remote)
	if !ok {
		return netip.Addr{}, false
	}
	if !within(peer, trusted) {
		return peer, true
	}
	client := peer
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		hops := forwardedFor[i]
		for hops != "" {
			var hop string
			if at := strings.LastIndexByte(hops, ','); at >= 0 {
				hop, hops = hops[at+1:], hops[:at]
			} else {
				hop, hops = hops, ""
			}
			hop = strings.TrimSpace(hop)
			if hop == "" {
				continue
			}
			addr, ok := parseAddr(hop)
			if !ok {
				return client, true
			}
			client = addr
			if !within(addr, trusted) {
				return client, true
			}
		}
	}
	return client, true
}

// parseAddr reads an address as host:port, [v6]:port or a bare address, without an IPv6 zone
// and with an IPv4-mapped IPv6 address as IPv4.
func parseAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

// within reports whether addr is in one of the ranges.
func within(addr netip.Addr, ranges []netip.Prefix) bool {
	for _, p := range ranges {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
