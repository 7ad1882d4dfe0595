package delivery

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Policy says which addresses deliveries may connect to. The zero Policy allows public
// addresses only.
type Policy struct {
	// AllowPrivate allows every address (--notify-allow-private): loopback, link-local, private,
	// unspecified and multicast included.
	AllowPrivate bool
	// AllowCIDRs are ranges allowed although they are not public (--notify-allow-cidr).
	AllowCIDRs []netip.Prefix
}

// RefusedAddressError is a connection the policy refused.
type RefusedAddressError struct {
	Addr netip.Addr
	Kind string // loopback, link-local, private, unspecified, multicast, reserved
}

func (e *RefusedAddressError) Error() string {
	return fmt.Sprintf("address %s is %s; deliveries to loopback, link-local, private and unspecified addresses are refused unless --notify-allow-private or --notify-allow-cidr allows them",
		e.Addr, e.Kind)
}

// thisNetwork is 0.0.0.0/8, "this network": no destination.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// Check returns a *RefusedAddressError when the policy refuses addr, nil when it allows it.
func (p Policy) Check(addr netip.Addr) error {
	addr = addr.Unmap()
	if p.AllowPrivate {
		return nil
	}
	for _, c := range p.AllowCIDRs {
		if c.Contains(addr) {
			return nil
		}
	}
	kind := ""
	switch {
	case !addr.IsValid():
		kind = "not an IP address"
	case addr.IsLoopback():
		kind = "loopback"
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		kind = "link-local"
	case addr.IsPrivate():
		kind = "private"
	case addr.IsUnspecified(), thisNetwork.Contains(addr):
		kind = "unspecified"
	case addr.IsMulticast(), addr.IsInterfaceLocalMulticast():
		kind = "multicast"
	default:
		return nil
	}
	return &RefusedAddressError{Addr: addr, Kind: kind}
}

// control is the dialer's check, run for every connection after the name was resolved: the
// address a DNS answer or a redirect leads to is checked as any other.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("address %q: %w", address, err)
	}
	return p.Check(ap.Addr())
}

// maxRedirects is how many redirects a delivery follows; each leads to an address the policy
// checks when it connects.
const maxRedirects = 3

// errTooManyRedirects ends a delivery led through more than maxRedirects redirects.
var errTooManyRedirects = fmt.Errorf("more than %d redirects", maxRedirects)

// newClient is the HTTP client of deliveries: the policy checked at every connection, no proxy
// from the environment (a proxy would connect for us, past the check), at most maxRedirects
// redirects, and timeouts for the connection and TLS steps (the whole attempt is bounded by the
// request's context).
func newClient(p Policy, connectTimeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second, Control: p.control}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    connectTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}
}

// refused reports whether err is the policy's refusal.
func refused(err error) (*RefusedAddressError, bool) {
	var r *RefusedAddressError
	ok := errors.As(err, &r)
	return r, ok
}
