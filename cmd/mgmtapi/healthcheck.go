package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"
)

// healthcheckCommand runs `mgmtapi healthcheck` and exits when args (the command line without
// the program name) name it; otherwise it returns and nothing happened. It exists for container
// images that hold nothing but the binary (no curl, no shell) and still want a HEALTHCHECK.
func healthcheckCommand(args []string) {
	if len(args) > 0 && args[0] == "healthcheck" {
		os.Exit(healthcheck(args[1:], os.Getenv, os.Stderr))
	}
}

const healthcheckUsage = `usage: mgmtapi healthcheck [--url BASE-URL] [--timeout DURATION]

Exits 0 when GET BASE-URL/healthz answers 200, 1 otherwise (the reason is printed), 2 on a bad
command line. --url is the server's base URL, as every other command takes it
(http://127.0.0.1:8080); a URL whose path already ends in /healthz or /readyz is asked as it is.
The default is /healthz of the address in MGMTAPI_ADDR (127.0.0.1:8080 when unset), on the
loopback interface when that address is a wildcard, over HTTPS when MGMTAPI_TLS_CERT_FILE is set
(the certificate is not verified for that derived loopback URL: the check asks whether this
process serves, not who it is).
`

// healthcheck is the healthcheck command: it returns the process's exit status. The server's
// /healthz answers 200 while the process serves, so anything else — another status, no answer
// within the timeout, a refused connection — is unhealthy.
func healthcheck(args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, healthcheckUsage) }
	url := fs.String("url", "", "base URL of the server (its /healthz is asked); default: /healthz of MGMTAPI_ADDR")
	timeout := fs.Duration("timeout", 5*time.Second, "longest wait for the answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mgmtapi healthcheck: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "mgmtapi healthcheck: --timeout must be positive")
		return 2
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if *url != "" {
		health, err := healthURLOf(*url)
		if err != nil {
			fmt.Fprintln(stderr, "mgmtapi healthcheck:", err)
			return 2
		}
		*url = health
	} else {
		derived, err := healthcheckURL(getenv)
		if err != nil {
			fmt.Fprintln(stderr, "mgmtapi healthcheck:", err)
			return 2
		}
		*url = derived
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // a loopback liveness check: see healthcheckUsage
	}
	client := &http.Client{
		Timeout:       *timeout,
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := client.Get(*url)
	if err != nil {
		fmt.Fprintf(stderr, "mgmtapi healthcheck: GET %s: %v\n", *url, err)
		return 1
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "mgmtapi healthcheck: GET %s: status %s, want 200\n", *url, res.Status)
		return 1
	}
	return 0
}

// healthcheckURL is /healthz of the address the server listens on according to MGMTAPI_ADDR,
// with a wildcard host replaced by the loopback address.
func healthcheckURL(getenv func(string) string) (string, error) {
	addr := getenv("MGMTAPI_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("MGMTAPI_ADDR %q is not host:port: %w", addr, err)
	}
	if port == "0" {
		return "", fmt.Errorf("MGMTAPI_ADDR %q picks a free port, which cannot be known here; give --url", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	scheme := "http"
	if getenv("MGMTAPI_TLS_CERT_FILE") != "" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// healthURLOf is the URL healthcheck asks for --url: BASE/healthz for a base URL, or the URL
// itself when its path already ends in /healthz or /readyz (the form --url took before it took
// the base URL, still accepted).
func healthURLOf(raw string) (string, error) {
	u, err := neturl.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--url %q: must be the server's base URL, http:// or https:// with a host (e.g. http://127.0.0.1:8080)", raw)
	}
	if strings.HasSuffix(u.Path, "/healthz") || strings.HasSuffix(u.Path, "/readyz") {
		return u.String(), nil
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/healthz"
	u.RawPath = ""
	return u.String(), nil
}
