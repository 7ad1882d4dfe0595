// Package config reads mgmtapi's configuration: flags win over environment variables, which win
// over defaults. A bad variable does not matter when its flag is given; an error names the flag or
// the variable that the bad value came from, and the rule.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MinSecretLength is the fewest characters the bootstrap key and the operator key may have.
const MinSecretLength = 32

// Config is the whole configuration of `mgmtapi serve`.
type Config struct {
	Addr         string
	DataDir      string
	DatabaseURL  string
	Region       string
	PolicyLimit  int
	MaxBodyBytes int64
	LogFormat    string
	LogLevel     slog.Level
	// AccessLog chooses the requests logged at INFO: all, errors (status 400 or more) or none.
	AccessLog string
	// BootstrapKey and OperatorKey are secrets: they come from MGMTAPI_BOOTSTRAP_KEY and
	// MGMTAPI_OPERATOR_KEY or from the files their _FILE variants name, never from a flag.
	BootstrapKey string
	OperatorKey  string
	// KPIInterval is how often open cases are checked for KPI breaches.
	KPIInterval time.Duration
	// ExtensionsDir holds the operator's extension catalog files (*.json); empty means the
	// built-in catalog only.
	ExtensionsDir string
	// IntegrationsDir holds the operator's integration definition files (*.json); empty means
	// the built-in catalog only.
	IntegrationsDir string
	// ExternalURL is the base URL clients use (scheme, host, optional path, no trailing slash);
	// empty means derived from the listen address (see DefaultExternalURL).
	ExternalURL string
	// S3Endpoint is the S3 endpoint (base URL, path-style) where the archive operations check
	// buckets; empty means AWS's own endpoint of each bucket's region.
	S3Endpoint string
	// TLSCertFile and TLSKeyFile, both set or both empty, make the server speak HTTPS.
	TLSCertFile, TLSKeyFile string
	// DatabaseWait is how long the start keeps retrying an unreachable PostgreSQL; 0 tries once.
	DatabaseWait time.Duration
	// AuditRetention is how long audit records are kept; 0 keeps them for good.
	AuditRetention time.Duration
	// ShutdownDelay is how long, after SIGTERM, the server keeps serving while /readyz answers
	// 503, before it stops accepting connections.
	ShutdownDelay time.Duration
	// MaxConcurrentRequests bounds the API requests in the handler at once; a request finding
	// them all taken waits at most QueueWait behind at most QueueLength others, or gets 503.
	MaxConcurrentRequests int
	QueueLength           int
	QueueWait             time.Duration
	// ConcurrencyTargetLatency, when above 0, makes the bound on the requests in the handler
	// adaptive: while requests are refused and the admitted ones take longer than it in the
	// handler, the bound falls (by a quarter, at most once per ConcurrencyTargetLatency) down to
	// MinConcurrentRequests, and it climbs back to MaxConcurrentRequests otherwise. 0 keeps the
	// bound at MaxConcurrentRequests.
	ConcurrencyTargetLatency time.Duration
	// MinConcurrentRequests is the adaptive bound's floor; 0 means two per GOMAXPROCS.
	MinConcurrentRequests int
	// DecodeBudgetBytes bounds the request-body bytes being read and decoded at once across all
	// requests (at least MaxBodyBytes); beyond it, 503.
	DecodeBudgetBytes int64
	// KeyRateLimit is the requests per second each API key may make (0: no limit), with a burst
	// of KeyRateBurst; beyond it, 429.
	KeyRateLimit float64
	KeyRateBurst int
	// MaxConnections caps the open client connections (at the cap the longest idle one is
	// closed, else a new one gets 503); 0 derives it from the descriptor limit
	// (server.DerivedMaxConnections).
	MaxConnections int
	// SQLiteSharedFile lets other processes open the SQLite database while the server runs;
	// otherwise (the default) the server holds it alone (see internal/db.Options.SharedFile).
	SQLiteSharedFile bool
	// PostgresAlone promises that this server is the only process writing its PostgreSQL
	// database (schema); it holds an advisory lock that keeps every other mgmtapi out and keeps
	// GET-by-id answers between writes (see internal/db.Options.PostgresAlone). Off by default:
	// replicas share the database.
	PostgresAlone bool
	// NotifyWorker runs the notification delivery worker in this process.
	NotifyWorker bool
	// NotifyAllowPrivate lets deliveries connect to loopback, link-local, private and
	// unspecified addresses; NotifyAllowCIDRs allows those ranges only.
	NotifyAllowPrivate bool
	NotifyAllowCIDRs   []netip.Prefix
	// NotifyAttemptTimeout bounds one delivery attempt, NotifyRetryTime how long after its event
	// a delivery is retried, NotifyPerConnector the attempts in flight to one connector.
	NotifyAttemptTimeout time.Duration
	NotifyRetryTime      time.Duration
	NotifyPerConnector   int
	// SMTP is the server EMAIL notifications are sent through (--smtp-url, --smtp-from); nil
	// when none is configured.
	SMTP     *SMTP
	smtpFrom string
	// TrustedProxies are the peers whose X-Forwarded-For header names the client (the address
	// IP access checks); empty, the client is always the connection's peer.
	TrustedProxies []netip.Prefix
}

// SMTP is the SMTP server of --smtp-url and the From address of --smtp-from.
type SMTP struct {
	Host string
	Port int
	// ImplicitTLS is smtps:// (TLS from the first byte); otherwise STARTTLS is used when the
	// server offers it, and RequireSTARTTLS refuses a server that does not.
	ImplicitTLS, RequireSTARTTLS bool
	// Username and Password come from the URL's user information; Password is a secret.
	Username, Password string
	From               string
}

// parseSMTPURL reads --smtp-url: smtp://[user:password@]host[:port] (port 587; STARTTLS
// required unless the host is loopback or ?starttls=optional) or smtps://[user:password@]host[:port]
// (port 465, implicit TLS). The error never quotes the password.
func parseSMTPURL(v string) (*SMTP, error) {
	const form = "must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port]"
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("%s, not %q", form, maskURL(v))
	}
	s := &SMTP{}
	switch u.Scheme {
	case "smtp":
		s.Port = 587
	case "smtps":
		s.Port, s.ImplicitTLS = 465, true
	default:
		return nil, fmt.Errorf("%s, not %q", form, maskURL(v))
	}
	s.Host = u.Hostname()
	if s.Host == "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return nil, fmt.Errorf("%s, not %q", form, maskURL(v))
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("the port must be 1 to 65535, not %q", p)
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
		if s.Username == "" {
			return nil, errors.New("the user information must name a user (user:password@)")
		}
	}
	query := u.Query()
	starttls := query.Get("starttls")
	delete(query, "starttls")
	if len(query) > 0 {
		return nil, fmt.Errorf("the only query parameter is starttls (required or optional), not %q", u.RawQuery)
	}
	ip := net.ParseIP(s.Host)
	loopback := s.Host == "localhost" || ip != nil && ip.IsLoopback()
	switch starttls {
	case "":
		s.RequireSTARTTLS = !s.ImplicitTLS && !loopback
	case "required":
		s.RequireSTARTTLS = !s.ImplicitTLS
	case "optional":
		if s.ImplicitTLS {
			return nil, errors.New("starttls applies to smtp:// only; smtps:// is TLS from the first byte")
		}
	default:
		return nil, fmt.Errorf("starttls must be required or optional, not %q", starttls)
	}
	return s, nil
}

// smtpOptions are the settings of the email notifications' SMTP server.
var smtpOptions = []option{
	{"smtp-url", "MGMTAPI_SMTP_URL", "", "the SMTP server EMAIL notifications are sent through: smtp://[user:password@]host[:port] (port 587; STARTTLS used when offered, and required unless the host is loopback or ?starttls=optional) or smtps://[user:password@]host[:port] (port 465, TLS); without it, email deliveries fail. Not subject to the --notify-allow-* policy",
		func(c *Config, v string) (err error) {
			if v == "" {
				return nil
			}
			c.SMTP, err = parseSMTPURL(v)
			return err
		}},
	{"smtp-from", "MGMTAPI_SMTP_FROM", "", "the From address of EMAIL notifications (alerts@example.com or Alerts <alerts@example.com>); required with --smtp-url",
		func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			if strings.ContainsAny(v, "\r\n") {
				return errors.New("must be one email address, without line breaks")
			}
			a, err := mail.ParseAddress(v)
			if err != nil {
				return fmt.Errorf("must be an email address such as alerts@example.com, not %q", v)
			}
			c.smtpFrom = a.Address
			return nil
		}},
}

// TLS reports whether the server speaks HTTPS.
func (c Config) TLS() bool { return c.TLSCertFile != "" }

// option is one setting: a flag, the variable behind it, its default and how to read a value.
type option struct {
	flag, env, def, usage string
	set                   func(c *Config, v string) error
}

// options lists every setting of `mgmtapi serve`, in the order the help shows them.
var options = []option{
	{"addr", "MGMTAPI_ADDR", "127.0.0.1:8080", "listen address; :0 picks a free port",
		func(c *Config, v string) error { c.Addr = v; return nil }},
	{"external-url", "MGMTAPI_EXTERNAL_URL", "", "base URL clients use, such as https://mgmt.example.com (the served documents' servers); default: derived from --addr",
		func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			u, err := url.Parse(v)
			switch {
			case err != nil:
				return fmt.Errorf("must be an absolute http or https URL, not %q", v)
			case u.Scheme != "http" && u.Scheme != "https":
				return fmt.Errorf("must be an absolute http or https URL, not %q", v)
			case u.Host == "" || u.Opaque != "":
				return fmt.Errorf("must name a host, as in https://mgmt.example.com, not %q", v)
			case u.User != nil:
				return fmt.Errorf("must not carry a user or password, not %q", v)
			case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(v, "#"):
				return fmt.Errorf("must have no query or fragment, not %q", v)
			}
			c.ExternalURL = strings.TrimRight(v, "/")
			return nil
		}},
	{"s3-endpoint", "MGMTAPI_S3_ENDPOINT", "", "S3 endpoint (path-style base URL, such as http://127.0.0.1:8333) where archive buckets are checked, with the credentials of AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; default: AWS's endpoint of each bucket's region",
		func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			u, err := url.Parse(v)
			switch {
			case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
				return fmt.Errorf("must be an absolute http or https URL naming a host, not %q", v)
			case u.User != nil:
				return fmt.Errorf("must not carry a user or password (the credentials come from the AWS variables), not %q", v)
			case u.RawQuery != "" || u.Fragment != "" || strings.Contains(v, "#"):
				return fmt.Errorf("must have no query or fragment, not %q", v)
			}
			c.S3Endpoint = strings.TrimRight(v, "/")
			return nil
		}},
	{"tls-cert-file", "MGMTAPI_TLS_CERT_FILE", "", "PEM certificate chain; with --tls-key-file the server speaks HTTPS (and HTTP/2)",
		func(c *Config, v string) error { c.TLSCertFile = v; return nil }},
	{"tls-key-file", "MGMTAPI_TLS_KEY_FILE", "", "PEM private key of --tls-cert-file",
		func(c *Config, v string) error { c.TLSKeyFile = v; return nil }},
	{"data-dir", "MGMTAPI_DATA_DIR", "./data", "directory of the SQLite database",
		func(c *Config, v string) error {
			if v == "" {
				return errors.New("must not be empty")
			}
			c.DataDir = v
			return nil
		}},
	{"database-url", "MGMTAPI_DATABASE_URL", "", "postgres:// URL; use PostgreSQL instead of SQLite",
		func(c *Config, v string) error {
			if v != "" && !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
				return errors.New("must start with postgres:// or postgresql://")
			}
			c.DatabaseURL = v
			return nil
		}},
	{"database-wait", "MGMTAPI_DATABASE_WAIT", "30s", "how long the start retries an unreachable PostgreSQL, 0s to 1h; 0s tries once",
		func(c *Config, v string) (err error) {
			c.DatabaseWait, err = duration(v, 0, time.Hour, "30s")
			return err
		}},
	{"region", "MGMTAPI_REGION", "local", "regional host name this deployment serves",
		func(c *Config, v string) error { c.Region = v; return nil }},
	{"policy-limit", "MGMTAPI_POLICY_LIMIT", "200", "most policies per team and data type, at least 1",
		func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("must be an integer, not %q", v)
			}
			if n < 1 {
				return errors.New("must be at least 1")
			}
			c.PolicyLimit = n
			return nil
		}},
	{"max-body-bytes", "MGMTAPI_MAX_BODY_BYTES", "16777216", "largest accepted request body, at least 1024",
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("must be an integer, not %q", v)
			}
			if n < 1024 {
				return errors.New("must be at least 1024")
			}
			c.MaxBodyBytes = n
			return nil
		}},
	{"kpi-interval", "MGMTAPI_KPI_INTERVAL", "30s", "how often open cases are checked for KPI breaches, 1s to 1h",
		func(c *Config, v string) (err error) {
			c.KPIInterval, err = duration(v, time.Second, time.Hour, "30s")
			return err
		}},
	{"extensions-dir", "MGMTAPI_EXTENSIONS_DIR", "", "directory of extension catalog files (*.json) added to the built-in catalog",
		func(c *Config, v string) error { c.ExtensionsDir = v; return nil }},
	{"integrations-dir", "MGMTAPI_INTEGRATIONS_DIR", "", "directory of integration definition files (*.json) added to the built-in catalog",
		func(c *Config, v string) error { c.IntegrationsDir = v; return nil }},
	{"log-format", "MGMTAPI_LOG_FORMAT", "text", "text or json",
		func(c *Config, v string) error {
			if v != "text" && v != "json" {
				return fmt.Errorf("must be text or json, not %q", v)
			}
			c.LogFormat = v
			return nil
		}},
	{"log-level", "MGMTAPI_LOG_LEVEL", "info", "debug, info, warn or error",
		func(c *Config, v string) error {
			if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("must be debug, info, warn or error, not %q", v)
			}
			return nil
		}},
	{"access-log", "MGMTAPI_ACCESS_LOG", "errors", "requests logged at info: all, errors (status 400 or more) or none; probes and /metrics log at debug",
		func(c *Config, v string) error {
			if v != "all" && v != "errors" && v != "none" {
				return fmt.Errorf("must be all, errors or none, not %q", v)
			}
			c.AccessLog = v
			return nil
		}},
	{"audit-retention", "MGMTAPI_AUDIT_RETENTION", "90d", "how long audit records are kept before they are pruned, 1h to 3650d (days as Nd, or a duration such as 720h); 0 keeps them for good",
		func(c *Config, v string) (err error) {
			c.AuditRetention, err = retention(v)
			return err
		}},
	{"shutdown-delay", "MGMTAPI_SHUTDOWN_DELAY", "5s", "after SIGTERM, how long /readyz answers 503 while requests are still served, 0s to 5m (Ctrl-C skips it)",
		func(c *Config, v string) (err error) {
			c.ShutdownDelay, err = duration(v, 0, 5*time.Minute, "5s")
			return err
		}},
	{"max-concurrent-requests", "MGMTAPI_MAX_CONCURRENT_REQUESTS", "64", "most API requests in the handler at once, 1 to 100000; more wait in the queue or get 503 with Retry-After",
		func(c *Config, v string) (err error) {
			c.MaxConcurrentRequests, err = integer(v, 1, 100000)
			return err
		}},
	{"queue-length", "MGMTAPI_QUEUE_LENGTH", "64", "most API requests waiting for a slot of --max-concurrent-requests, 0 to 100000; 0 refuses at once",
		func(c *Config, v string) (err error) {
			c.QueueLength, err = integer(v, 0, 100000)
			return err
		}},
	{"queue-wait", "MGMTAPI_QUEUE_WAIT", "20ms", "longest wait in that queue before 503, 0s to 10s",
		func(c *Config, v string) (err error) {
			c.QueueWait, err = duration(v, 0, 10*time.Second, "20ms")
			return err
		}},
	{"concurrency-target-latency", "MGMTAPI_CONCURRENCY_TARGET_LATENCY", "50ms", "adaptive bound: while requests are refused and the admitted ones stay longer than this in the handler, fewer are admitted at once (down to --min-concurrent-requests), climbing back to --max-concurrent-requests otherwise; 0s to 10s, 0s keeps the bound fixed",
		func(c *Config, v string) (err error) {
			c.ConcurrencyTargetLatency, err = duration(v, 0, 10*time.Second, "50ms")
			return err
		}},
	{"min-concurrent-requests", "MGMTAPI_MIN_CONCURRENT_REQUESTS", "0", "fewest API requests the adaptive bound admits at once, 0 to 100000; 0 means two per GOMAXPROCS; above --max-concurrent-requests it is that",
		func(c *Config, v string) (err error) {
			c.MinConcurrentRequests, err = integer(v, 0, 100000)
			return err
		}},
	{"decode-budget-bytes", "MGMTAPI_DECODE_BUDGET_BYTES", "67108864", "most request-body bytes read and decoded at once across all requests, at least --max-body-bytes; beyond it 503 with Retry-After",
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("must be an integer, not %q", v)
			}
			if n < 1024 {
				return errors.New("must be at least 1024")
			}
			c.DecodeBudgetBytes = n
			return nil
		}},
	{"key-rate-limit", "MGMTAPI_KEY_RATE_LIMIT", "0", "requests per second each API key may make, 0 (no limit) to 1000000; beyond it 429 with Retry-After",
		func(c *Config, v string) error {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || r > 1e6 || r != r {
				return fmt.Errorf("must be a number from 0 to 1000000, not %q", v)
			}
			c.KeyRateLimit = r
			return nil
		}},
	{"sqlite-file-access", "MGMTAPI_SQLITE_FILE_ACCESS", "exclusive", "exclusive: while it runs, the server alone opens the SQLite database (mgmtapi backup asks it through DATA-DIR/mgmtapi.sock) and a read takes no file lock; shared: other processes may open it too (Litestream, the sqlite3 shell), at the price of two file-lock system calls per read",
		func(c *Config, v string) error {
			exclusive, err := exclusiveAccess(v)
			if err != nil {
				return err
			}
			c.SQLiteSharedFile = !exclusive
			return nil
		}},
	{"postgres-access", "MGMTAPI_POSTGRES_ACCESS", "shared", "shared: any number of mgmtapi replicas use the PostgreSQL database together; exclusive: this server alone uses it (any other mgmtapi process on it is refused, and this one refuses to start beside one), and answers a GET by id from the answers it keeps between its writes",
		func(c *Config, v string) (err error) {
			c.PostgresAlone, err = exclusiveAccess(v)
			return err
		}},
	{"key-rate-burst", "MGMTAPI_KEY_RATE_BURST", "100", "requests an API key may make at once above --key-rate-limit, 1 to 1000000",
		func(c *Config, v string) (err error) {
			c.KeyRateBurst, err = integer(v, 1, 1000000)
			return err
		}},
	{"trusted-proxies", "MGMTAPI_TRUSTED_PROXIES", "", "comma-separated address ranges (CIDR, or single addresses) of the proxies in front of the server: only from them is X-Forwarded-For believed, to find the client address that IP access checks",
		func(c *Config, v string) (err error) {
			c.TrustedProxies, err = addressRanges(v)
			return err
		}},
	{"max-connections", "MGMTAPI_MAX_CONNECTIONS", "0", "most client connections open at once, 0 to 10000000; at it the longest idle keep-alive connection is closed, or a new one gets 503 with Retry-After; 0 derives it from the descriptor limit (the limit less max(64, limit/4))",
		func(c *Config, v string) (err error) {
			c.MaxConnections, err = integer(v, 0, 10000000)
			return err
		}},
}

// booleans are the options given as a bare flag (--notify-allow-private means true).
var booleans = map[string]bool{"notify-allow-private": true}

// notifyOptions are the settings of the notification delivery worker.
var notifyOptions = []option{
	{"notify-worker", "MGMTAPI_NOTIFY_WORKER", "on", "on: this process routes the recorded incident and case events and sends the notification outbox's deliveries; off: it only records events (another replica on the same PostgreSQL database routes and sends)",
		func(c *Config, v string) error {
			if v != "on" && v != "off" {
				return fmt.Errorf("must be on or off, not %q", v)
			}
			c.NotifyWorker = v == "on"
			return nil
		}},
	{"notify-allow-private", "MGMTAPI_NOTIFY_ALLOW_PRIVATE", "false", "let notification deliveries connect to loopback, link-local, private and unspecified addresses (refused by default, whatever the URL's host name resolves to, redirects included)",
		func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("must be true or false, not %q", v)
			}
			c.NotifyAllowPrivate = b
			return nil
		}},
	{"notify-allow-cidr", "MGMTAPI_NOTIFY_ALLOW_CIDR", "", "comma-separated address ranges (CIDR, such as 10.20.0.0/16,fd00::/8) notification deliveries may connect to although they are not public",
		func(c *Config, v string) error {
			c.NotifyAllowCIDRs = nil
			for _, part := range strings.Split(v, ",") {
				part = strings.TrimSpace(part)
				if part == "" {
					continue
				}
				p, err := netip.ParsePrefix(part)
				if err != nil {
					return fmt.Errorf("must be comma-separated CIDR ranges such as 10.20.0.0/16, not %q", part)
				}
				c.NotifyAllowCIDRs = append(c.NotifyAllowCIDRs, p.Masked())
			}
			return nil
		}},
	{"notify-attempt-timeout", "MGMTAPI_NOTIFY_ATTEMPT_TIMEOUT", "10s", "longest notification delivery attempt, connection to response, 1s to 5m",
		func(c *Config, v string) (err error) {
			c.NotifyAttemptTimeout, err = duration(v, time.Second, 5*time.Minute, "10s")
			return err
		}},
	{"notify-retry-time", "MGMTAPI_NOTIFY_RETRY_TIME", "1h", "how long after its event a notification delivery is retried (5xx, 429, network errors) before it fails, 1m to 72h",
		func(c *Config, v string) (err error) {
			c.NotifyRetryTime, err = duration(v, time.Minute, 72*time.Hour, "1h")
			return err
		}},
	{"notify-per-connector", "MGMTAPI_NOTIFY_PER_CONNECTOR", "4", "most notification delivery attempts in flight to one connector, 1 to 100; a slow receiver delays only its own deliveries",
		func(c *Config, v string) (err error) {
			c.NotifyPerConnector, err = integer(v, 1, 100)
			return err
		}},
}

func init() { options = append(append(options, notifyOptions...), smtpOptions...) }

// addressRanges reads a comma-separated list of CIDR ranges and single addresses (a /32 or
// /128 range); empty parts are skipped.
func addressRanges(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if a, err := netip.ParseAddr(part); err == nil && a.Zone() == "" {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("must be comma-separated CIDR ranges or addresses such as 10.0.0.0/8,192.0.2.10, not %q", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// integer reads a whole number from lowest to highest.
func integer(v string, lowest, highest int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lowest || n > highest {
		return 0, fmt.Errorf("must be an integer from %d to %d, not %q", lowest, highest, v)
	}
	return n, nil
}

// secrets are the settings that only variables (or the files they name) carry.
var secrets = []struct {
	env, usage string
	field      func(c *Config) *string
}{
	{"MGMTAPI_BOOTSTRAP_KEY", "the first start's all-permission key instead of a random one (at least 32 characters; later starts ignore it)",
		func(c *Config) *string { return &c.BootstrapKey }},
	{"MGMTAPI_OPERATOR_KEY", "enables the operator API under /admin/v1 with this key (at least 32 characters)",
		func(c *Config) *string { return &c.OperatorKey }},
}

func duration(v string, lowest, highest time.Duration, example string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < lowest || d > highest {
		return 0, fmt.Errorf("must be a duration from %s to %s, such as %s, not %q", short(lowest), short(highest), example, v)
	}
	return d, nil
}

// retention reads a retention: whole days as "90d", any duration time.ParseDuration reads, or 0.
func retention(v string) (time.Duration, error) {
	const day, most = 24 * time.Hour, 3650 * 24 * time.Hour
	if v == "0" || v == "0s" || v == "0d" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int64
		n, err = strconv.ParseInt(days, 10, 64)
		if n > int64(most/day) {
			n = int64(most/day) + 1
		}
		d = time.Duration(n) * day
	}
	if err != nil || d < time.Hour || d > most {
		return 0, fmt.Errorf("must be 0 or from 1h to 3650d, as days (90d) or a duration (720h), not %q", v)
	}
	return d, nil
}

// short writes 1h rather than 1h0m0s.
func short(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// Parse reads the flags that follow the `serve` subcommand and the MGMTAPI_ variables through
// getenv. A flag wins over its variable, so a bad variable is an error only when its flag is
// absent; errors name the flag or the variable, and the rule. -h and --help return flag.ErrHelp
// after writing nothing: the caller shows Usage.
func Parse(args []string, getenv func(string) string) (Config, error) {
	given := map[string]string{}
	fs := flag.NewFlagSet("mgmtapi serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, o := range options {
		if booleans[o.flag] {
			fs.BoolFunc(o.flag, o.usage, func(v string) error { given[o.flag] = v; return nil })
			continue
		}
		fs.Func(o.flag, o.usage, func(v string) error { given[o.flag] = v; return nil })
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, fmt.Errorf("%w; run mgmtapi --help for the flags", err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q; run mgmtapi --help for the flags", fs.Arg(0))
	}

	var c Config
	for _, o := range options {
		value, source := o.def, "--"+o.flag
		if v, ok := given[o.flag]; ok {
			value = v
		} else if v := getenv(o.env); v != "" {
			value, source = v, fmt.Sprintf("%s (the variable of --%s)", o.env, o.flag)
		}
		if err := o.set(&c, value); err != nil {
			return Config{}, fmt.Errorf("%s: %w", source, err)
		}
	}
	if c.DecodeBudgetBytes < c.MaxBodyBytes {
		return Config{}, fmt.Errorf("--decode-budget-bytes (%d) must be at least --max-body-bytes (%d): a body of the largest size must fit",
			c.DecodeBudgetBytes, c.MaxBodyBytes)
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return Config{}, errors.New("--tls-cert-file and --tls-key-file: give both for HTTPS, or neither")
	}
	switch {
	case c.SMTP != nil && c.smtpFrom == "":
		return Config{}, errors.New("--smtp-from: required with --smtp-url; the From address of the email notifications")
	case c.SMTP == nil && c.smtpFrom != "":
		return Config{}, errors.New("--smtp-from: needs --smtp-url, the SMTP server the email notifications are sent through")
	case c.SMTP != nil:
		c.SMTP.From = c.smtpFrom
	}
	for _, s := range secrets {
		v, err := secret(s.env, getenv)
		if err != nil {
			return Config{}, err
		}
		*s.field(&c) = v
	}
	return c, nil
}

// secret reads the variable name, or the file that name_FILE names (one trailing newline
// trimmed). Setting both is an error, as is a value shorter than MinSecretLength.
func secret(name string, getenv func(string) string) (string, error) {
	value, file := getenv(name), getenv(name+"_FILE")
	source := name
	switch {
	case value != "" && file != "":
		return "", fmt.Errorf("%s and %s_FILE: set one or the other, not both", name, name)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			var pathErr *os.PathError
			if errors.As(err, &pathErr) {
				err = pathErr.Err
			}
			return "", fmt.Errorf("%s_FILE: cannot read the key file %s: %w", name, file, err)
		}
		value = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		source = fmt.Sprintf("%s_FILE (%s)", name, file)
		if value == "" {
			return "", fmt.Errorf("%s: the file is empty", source)
		}
	}
	if value != "" && len(value) < MinSecretLength {
		return "", fmt.Errorf("%s: must be at least %d characters, not %d; make one with: openssl rand -hex 32",
			source, MinSecretLength, len(value))
	}
	return value, nil
}

// Usage writes the help of every command, flag and variable.
func Usage(w io.Writer) {
	Commands(w)
	fmt.Fprint(w, `
Flags of serve (each can also come from the variable shown; a flag wins over its variable):
`)
	for _, o := range options {
		def := o.def
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(w, "  --%s\n        %s\n        variable %s, default %s\n", o.flag, o.usage, o.env, def)
	}
	fmt.Fprint(w, "\nSecrets (variables only, never flags; the _FILE variant names a file holding the value):\n")
	for _, s := range secrets {
		fmt.Fprintf(w, "  %s, %s_FILE\n        %s\n", s.env, s.env, s.usage)
	}
	fmt.Fprint(w, `
With neither --database-url nor MGMTAPI_DATABASE_URL, the data lives in SQLite under --data-dir.
`)
}

// Commands writes the list of commands, one or two lines each: what a bare "mgmtapi" prints.
func Commands(w io.Writer) {
	fmt.Fprint(w, `mgmtapi serves the management API of an observability platform.

Usage:
  mgmtapi serve [flags]   serve the API until SIGTERM or Ctrl-C
  mgmtapi backup --to FILE [--data-dir DIR] [--force]
                          copy the SQLite database, online and consistent
  mgmtapi restore --from FILE [--data-dir DIR] [--force]
                          put a backup in place (the server must be stopped)
  mgmtapi healthcheck [--url BASE-URL] [--timeout DURATION]
                          exit 0 when /healthz answers 200 (for container images)
  mgmtapi keys create --team NAME|ID [--data-dir DIR | --database-url URL]
                          issue a new key for a team, straight in the database
                          (a lost first-start key; the server may be running)
  mgmtapi export [--url URL] [--format yaml|json] > team.yaml
                          write the key's team's configuration (key: MGMTAPI_KEY)
  mgmtapi apply -f FILE [--dry-run] [--prune] [--url URL]
                          make the team's configuration equal to FILE, print the plan
  mgmtapi sync-rules --url URL --dir DIR [--reload-url URL] [--interval 30s]
                          keep a Prometheus rule file up to date with a team's
                          rules (key in MGMTAPI_KEY; sync-rules --help for more)
  mgmtapi version         print the version, VCS revision and Go version (also: --version)
  mgmtapi help            print this list with serve's flags and variables
                          (also: -h, --help, serve --help)

Each command's --help says more.
`)
}

// String shows the configuration with every secret masked.
func (c Config) String() string {
	mask := func(s string) string {
		if s == "" {
			return "(unset)"
		}
		return "(set)"
	}
	db := "sqlite in " + c.DataDir
	if abs, err := filepath.Abs(c.DataDir); err == nil && abs != c.DataDir {
		db += " (" + abs + ")" // the directory a relative path means, for one started elsewhere
	}
	if c.DatabaseURL != "" {
		db = "postgres " + maskURL(c.DatabaseURL) + " wait=" + c.DatabaseWait.String()
	}
	extensionsDir := c.ExtensionsDir
	if extensionsDir == "" {
		extensionsDir = "(built-in only)"
	}
	integrationsDir := c.IntegrationsDir
	if integrationsDir == "" {
		integrationsDir = "(built-in only)"
	}
	s3Endpoint := c.S3Endpoint
	if s3Endpoint == "" {
		s3Endpoint = "(aws)"
	}
	externalURL := c.ExternalURL
	if externalURL == "" {
		externalURL = "(from addr)"
	}
	tls := "off"
	if c.TLS() {
		tls = c.TLSCertFile
	}
	sqliteAccess := "exclusive"
	if c.SQLiteSharedFile {
		sqliteAccess = "shared"
	}
	keyRate := "off"
	if c.KeyRateLimit > 0 {
		keyRate = fmt.Sprintf("%s/s burst %d", strconv.FormatFloat(c.KeyRateLimit, 'f', -1, 64), c.KeyRateBurst)
	}
	notify := "off"
	if c.NotifyWorker {
		notify = fmt.Sprintf("on attempt-timeout=%s retry-time=%s per-connector=%d", c.NotifyAttemptTimeout, c.NotifyRetryTime, c.NotifyPerConnector)
	}
	notifyAllowed := "public"
	if c.NotifyAllowPrivate {
		notifyAllowed = "all"
	} else if len(c.NotifyAllowCIDRs) > 0 {
		ranges := make([]string, len(c.NotifyAllowCIDRs))
		for i, p := range c.NotifyAllowCIDRs {
			ranges[i] = p.String()
		}
		notifyAllowed = "public," + strings.Join(ranges, ",")
	}
	trustedProxies := "none"
	if len(c.TrustedProxies) > 0 {
		ranges := make([]string, len(c.TrustedProxies))
		for i, p := range c.TrustedProxies {
			ranges[i] = p.String()
		}
		trustedProxies = strings.Join(ranges, ",")
	}
	smtp := "(unset)"
	if s := c.SMTP; s != nil {
		tls := "starttls-if-offered"
		switch {
		case s.ImplicitTLS:
			tls = "tls"
		case s.RequireSTARTTLS:
			tls = "starttls"
		}
		user := ""
		if s.Username != "" {
			user = s.Username + ":" + mask(s.Password) + "@"
		}
		smtp = fmt.Sprintf("%s%s %s from=%s", user, net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), tls, s.From)
	}
	return fmt.Sprintf("addr=%s external-url=%s tls=%s database=%s region=%s policy-limit=%d max-body-bytes=%d kpi-interval=%s extensions-dir=%s integrations-dir=%s log=%s/%s access-log=%s shutdown-delay=%s max-concurrent-requests=%d queue=%d/%s concurrency-target-latency=%s min-concurrent-requests=%d decode-budget-bytes=%d key-rate-limit=%s trusted-proxies=%s max-connections=%d sqlite-file-access=%s postgres-access=%s notify-worker=%s notify-addresses=%s smtp=%s s3-endpoint=%s bootstrap-key=%s operator-key=%s",
		c.Addr, externalURL, tls, db, c.Region, c.PolicyLimit, c.MaxBodyBytes, c.KPIInterval, extensionsDir, integrationsDir, c.LogFormat, c.LogLevel, c.AccessLog, c.ShutdownDelay,
		c.MaxConcurrentRequests, c.QueueLength, c.QueueWait, c.ConcurrencyTargetLatency, c.MinConcurrentRequests, c.DecodeBudgetBytes, keyRate, trustedProxies, c.MaxConnections, sqliteAccess, c.PostgresAccess(), notify, notifyAllowed, smtp, s3Endpoint, mask(c.BootstrapKey), mask(c.OperatorKey))
}

// PostgresAccess is the value of --postgres-access: exclusive or shared.
func (c Config) PostgresAccess() string {
	if c.PostgresAlone {
		return "exclusive"
	}
	return "shared"
}

// exclusiveAccess reads the value of an access flag: true for exclusive, false for shared.
func exclusiveAccess(v string) (bool, error) {
	if v != "exclusive" && v != "shared" {
		return false, fmt.Errorf("must be exclusive or shared, not %q", v)
	}
	return v == "exclusive", nil
}

// DefaultExternalURL is the base URL derived from the address the server listens on: a wildcard
// host (0.0.0.0, ::, or none) becomes 127.0.0.1, or localhost under TLS (the name certificates
// for a local server carry), and the scheme is https under TLS.
func DefaultExternalURL(listenAddr string, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return scheme + "://" + listenAddr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if tls {
			host = "localhost"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// DatabaseHost names the host, port and database of a PostgreSQL URL, for messages; never the
// user or password.
func DatabaseHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(the host of --database-url)"
	}
	return u.Host + u.Path
}

// maskURL hides the password of a database URL.
func maskURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "(unparsable)"
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + user + ":***@" + rest[at+1:]
}
