package server

import (
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct {
		name      string
		remote    string
		forwarded []string
		trusted   []netip.Prefix
		want      string
	}{
		{"no proxy trusted: the peer, whatever the header says", "127.0.0.1:5000", []string{"203.0.113.9"}, nil, "127.0.0.1"},
		{"an untrusted peer's header is ignored", "192.0.2.1:5000", []string{"203.0.113.9"}, proxies, "192.0.2.1"},
		{"a trusted peer names the client", "127.0.0.1:5000", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
		{"the rightmost untrusted hop wins over what the client wrote", "127.0.0.1:5000", []string{"198.51.100.7, 203.0.113.9, 10.1.2.3"}, proxies, "203.0.113.9"},
		{"instances are read in order, the last first", "127.0.0.1:5000", []string{"198.51.100.7", "203.0.113.9"}, proxies, "203.0.113.9"},
		{"every hop trusted: the leftmost", "127.0.0.1:5000", []string{"10.0.0.1, 10.0.0.2"}, proxies, "10.0.0.1"},
		{"no header: the peer", "127.0.0.1:5000", nil, proxies, "127.0.0.1"},
		{"garbage stops at the hop that passed it on", "127.0.0.1:5000", []string{"203.0.113.9, not-an-address, 10.0.0.5"}, proxies, "10.0.0.5"},
		{"an entry with a port", "127.0.0.1:5000", []string{"203.0.113.9:4711"}, proxies, "203.0.113.9"},
		{"IPv6 with brackets", "127.0.0.1:5000", []string{"[2001:db8::1]"}, proxies, "2001:db8::1"},
		{"an IPv4-mapped peer is IPv4", "[::ffff:192.0.2.1]:80", nil, nil, "192.0.2.1"},
		{"empty entries are skipped", "127.0.0.1:5000", []string{"203.0.113.9, ,"}, proxies, "203.0.113.9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := clientAddr(c.remote, c.forwarded, c.trusted)
			if !ok || got.String() != c.want {
				t.Fatalf("clientAddr(%q, %q) = %v, %v; want %s", c.remote, c.forwarded, got, ok, c.want)
			}
		})
	}
	if _, ok := clientAddr("pipe", nil, proxies); ok {
		t.Fatal("an unreadable peer address gave a client")
	}
}
