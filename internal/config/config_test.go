package config

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parse(args []string, env map[string]string) (Config, error) {
	return Parse(args, func(k string) string { return env[k] })
}

const longKey = "0123456789abcdef0123456789abcdef" // 32 characters

func TestDefaults(t *testing.T) {
	c, err := parse(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.DataDir != "./data" || c.PolicyLimit != 200 || c.MaxBodyBytes != 16<<20 ||
		c.AccessLog != "errors" || c.KPIInterval != 30*time.Second || c.DatabaseWait != 30*time.Second ||
		c.ShutdownDelay != 5*time.Second || c.AuditRetention != 90*24*time.Hour || c.ExternalURL != "" || c.TLS() || c.LogFormat != "text" ||
		c.MaxConcurrentRequests != 64 || c.QueueLength != 64 || c.QueueWait != 20*time.Millisecond ||
		c.ConcurrencyTargetLatency != 50*time.Millisecond || c.MinConcurrentRequests != 0 ||
		c.DecodeBudgetBytes != 64<<20 || c.KeyRateLimit != 0 || c.KeyRateBurst != 100 || c.MaxConnections != 0 || c.SQLiteSharedFile || c.PostgresAlone {
		t.Fatalf("defaults: %+v", c)
	}
}

// TestFlagsWinOverBadVariables gives every variable a bad value and its flag a good one: the start
// goes on. Without the flag, the error names the variable.
func TestFlagsWinOverBadVariables(t *testing.T) {
	bad := map[string]string{
		"addr": "", "external-url": "ftp://x", "s3-endpoint": "s3.example.com", "tls-cert-file": "", "tls-key-file": "", "data-dir": "",
		"database-url": "mysql://x", "database-wait": "forever", "region": "", "policy-limit": "abc",
		"max-body-bytes": "12", "kpi-interval": "soon", "extensions-dir": "", "integrations-dir": "", "log-format": "xml",
		"log-level": "loud", "access-log": "sampled", "shutdown-delay": "1y",
		"audit-retention":         "30m",
		"max-concurrent-requests": "0", "queue-length": "-1", "queue-wait": "11s", "decode-budget-bytes": "1k",
		"concurrency-target-latency": "fast", "min-concurrent-requests": "-1",
		"key-rate-limit": "fast", "key-rate-burst": "0", "max-connections": "-1", "sqlite-file-access": "locked", "postgres-access": "alone",
		"trusted-proxies": "127.0.0.1/33",
		"notify-worker":   "maybe", "notify-allow-private": "sometimes", "notify-allow-cidr": "10.0.0.0/33",
		"notify-attempt-timeout": "0s", "notify-retry-time": "73h", "notify-per-connector": "0",
	}
	good := map[string]string{
		"addr": "127.0.0.1:0", "external-url": "https://mgmt.example.com", "s3-endpoint": "http://127.0.0.1:8333", "tls-cert-file": "", "tls-key-file": "",
		"data-dir": "/tmp/x", "database-url": "postgres://db.example.com/mgmt", "database-wait": "2s", "region": "eu2",
		"policy-limit": "5", "max-body-bytes": "2048", "kpi-interval": "10s", "extensions-dir": "/tmp/ext", "integrations-dir": "/tmp/int",
		"log-format": "json", "log-level": "warn", "access-log": "all", "shutdown-delay": "0s",
		"audit-retention":         "30d",
		"max-concurrent-requests": "8", "queue-length": "0", "queue-wait": "0s", "decode-budget-bytes": "16777216",
		"concurrency-target-latency": "0s", "min-concurrent-requests": "4",
		"key-rate-limit": "0.5", "key-rate-burst": "3", "max-connections": "500", "sqlite-file-access": "shared", "postgres-access": "exclusive",
		"trusted-proxies": "127.0.0.1, 10.0.0.0/8, ::1",
		"notify-worker":   "off", "notify-allow-private": "true", "notify-allow-cidr": "10.0.0.0/8, fd00::/8",
		"notify-attempt-timeout": "2s", "notify-retry-time": "10m", "notify-per-connector": "2",
	}
	for _, o := range options {
		if o.flag == "smtp-url" || o.flag == "smtp-from" {
			continue // each needs the other: TestSMTPSettings
		}
		badValue, ok := bad[o.flag]
		if !ok {
			t.Errorf("--%s: the test has no bad value for it", o.flag)
			continue
		}
		if badValue == "" {
			continue // any string is valid
		}
		env := map[string]string{o.env: badValue}
		given := func(v string) []string { return []string{"--" + o.flag, v} }
		if booleans[o.flag] {
			given = func(v string) []string { return []string{"--" + o.flag + "=" + v} }
		}
		if _, err := parse(given(good[o.flag]), env); err != nil {
			t.Errorf("--%s %s with %s=%s: %v", o.flag, good[o.flag], o.env, badValue, err)
		}
		_, err := parse(nil, env)
		if err == nil || !strings.HasPrefix(err.Error(), o.env+" ") || !strings.Contains(err.Error(), "--"+o.flag) {
			t.Errorf("%s=%s alone: error %v, want one naming the variable and its flag", o.env, badValue, err)
		}
		_, err = parse(given(badValue), nil)
		if err == nil || !strings.HasPrefix(err.Error(), "--"+o.flag+": ") {
			t.Errorf("--%s %s: error %v, want one naming the flag", o.flag, badValue, err)
		}
	}
}

func TestBadValues(t *testing.T) {
	for _, c := range []struct {
		args     []string
		env      map[string]string
		fragment string
	}{
		{[]string{"--policy-limit", "0"}, nil, "--policy-limit: must be at least 1"},
		{[]string{"--kpi-interval", "999ms"}, nil, "--kpi-interval: must be a duration from 1s to 1h"},
		{[]string{"--database-wait", "-1s"}, nil, "--database-wait: must be a duration from 0s to 1h"},
		{[]string{"--shutdown-delay", "6m"}, nil, "--shutdown-delay: must be a duration from 0s to 5m"},
		{[]string{"--audit-retention", "59m"}, nil, "--audit-retention: must be 0 or from 1h to 3650d"},
		{[]string{"--audit-retention", "3651d"}, nil, "--audit-retention: must be 0 or from 1h to 3650d"},
		{[]string{"--audit-retention", "-2d"}, nil, "--audit-retention: must be 0 or from 1h to 3650d"},
		{[]string{"--audit-retention", "ninety"}, nil, "--audit-retention: must be 0 or from 1h to 3650d"},
		{[]string{"--max-concurrent-requests", "100001"}, nil, "--max-concurrent-requests: must be an integer from 1 to 100000"},
		{[]string{"--key-rate-limit", "-1"}, nil, "--key-rate-limit: must be a number from 0 to 1000000"},
		{[]string{"--key-rate-limit", "NaN"}, nil, "--key-rate-limit: must be a number from 0 to 1000000"},
		{[]string{"--decode-budget-bytes", "1048576"}, nil, "--decode-budget-bytes (1048576) must be at least --max-body-bytes (16777216)"},
		{[]string{"--external-url", "mgmt.example.com"}, nil, "--external-url: must be an absolute http or https URL"},
		{[]string{"--external-url", "https://"}, nil, "--external-url: must name a host"},
		{[]string{"--external-url", "https://x.example.com/?a=b"}, nil, "--external-url: must have no query or fragment"},
		{[]string{"--external-url", "https://x.example.com/#top"}, nil, "--external-url: must have no query or fragment"},
		{[]string{"--external-url", "https://u:p@x.example.com"}, nil, "--external-url: must not carry a user"},
		{[]string{"--tls-cert-file", "c.pem"}, nil, "--tls-cert-file and --tls-key-file: give both"},
		{nil, map[string]string{"MGMTAPI_TLS_KEY_FILE": "k.pem"}, "--tls-cert-file and --tls-key-file: give both"},
		{[]string{"--nope"}, nil, "flag provided but not defined: -nope"},
		{[]string{"extra"}, nil, `unexpected argument "extra"`},
	} {
		_, err := parse(c.args, c.env)
		if err == nil || !strings.Contains(err.Error(), c.fragment) {
			t.Errorf("%v %v: error %v, want one containing %q", c.args, c.env, err, c.fragment)
		}
	}
	if _, err := parse([]string{"--help"}, nil); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
}

// TestNotifySettings: the worker is on by default and deliveries reach public addresses only;
// --notify-allow-private alone (no value) allows every address, --notify-allow-cidr the ranges
// it lists.
func TestNotifySettings(t *testing.T) {
	c, err := parse(nil, nil)
	if err != nil || !c.NotifyWorker || c.NotifyAllowPrivate || len(c.NotifyAllowCIDRs) != 0 ||
		c.NotifyAttemptTimeout != 10*time.Second || c.NotifyRetryTime != time.Hour || c.NotifyPerConnector != 4 {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	c, err = parse([]string{"--notify-allow-private", "--notify-allow-cidr", "10.1.2.3/16,fd00::/8"}, nil)
	if err != nil || !c.NotifyAllowPrivate || len(c.NotifyAllowCIDRs) != 2 || c.NotifyAllowCIDRs[0].String() != "10.1.0.0/16" {
		t.Fatalf("flags: %+v, %v", c, err)
	}
	if !strings.Contains(c.String(), "notify-addresses=all") {
		t.Errorf("String: %s", c.String())
	}
	c, err = parse(nil, map[string]string{"MGMTAPI_NOTIFY_ALLOW_PRIVATE": "true", "MGMTAPI_NOTIFY_WORKER": "off"})
	if err != nil || !c.NotifyAllowPrivate || c.NotifyWorker {
		t.Fatalf("variables: %+v, %v", c, err)
	}
	if _, err := parse([]string{"--notify-allow-cidr", "10.0.0.1"}, nil); err == nil ||
		!strings.Contains(err.Error(), "--notify-allow-cidr: must be comma-separated CIDR ranges") {
		t.Errorf("a bare address: %v", err)
	}
}

func TestExternalURLIsKeptWithoutTrailingSlash(t *testing.T) {
	c, err := parse([]string{"--external-url", "https://mgmt.example.com/api/"}, nil)
	if err != nil || c.ExternalURL != "https://mgmt.example.com/api" {
		t.Fatalf("got %q, %v", c.ExternalURL, err)
	}
	c, err = parse(nil, map[string]string{"MGMTAPI_EXTERNAL_URL": "http://10.0.0.7:8080"})
	if err != nil || c.ExternalURL != "http://10.0.0.7:8080" {
		t.Fatalf("from the variable: got %q, %v", c.ExternalURL, err)
	}
}

func TestDefaultExternalURL(t *testing.T) {
	for _, c := range []struct {
		addr string
		tls  bool
		want string
	}{
		{"127.0.0.1:8080", false, "http://127.0.0.1:8080"},
		{"[::]:40781", false, "http://127.0.0.1:40781"},
		{"0.0.0.0:80", false, "http://127.0.0.1:80"},
		{":8443", true, "https://localhost:8443"},
		{"[::]:8443", true, "https://localhost:8443"},
		{"10.1.2.3:8443", true, "https://10.1.2.3:8443"},
		{"[::1]:8080", false, "http://[::1]:8080"},
		{"mgmt.internal:8080", false, "http://mgmt.internal:8080"},
	} {
		if got := DefaultExternalURL(c.addr, c.tls); got != c.want {
			t.Errorf("DefaultExternalURL(%q, %t) = %q, want %q", c.addr, c.tls, got, c.want)
		}
	}
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNewline := write("operator", longKey+"\n")
	withCRLF := write("bootstrap", longKey+"-b\r\n")
	short := write("short", "too-short\n")
	empty := write("empty", "\n")

	c, err := parse(nil, map[string]string{"MGMTAPI_OPERATOR_KEY_FILE": withNewline, "MGMTAPI_BOOTSTRAP_KEY_FILE": withCRLF})
	if err != nil || c.OperatorKey != longKey || c.BootstrapKey != longKey+"-b" {
		t.Fatalf("from files: operator %q bootstrap %q, %v", c.OperatorKey, c.BootstrapKey, err)
	}
	c, err = parse(nil, map[string]string{"MGMTAPI_OPERATOR_KEY": longKey, "MGMTAPI_BOOTSTRAP_KEY": longKey})
	if err != nil || c.OperatorKey != longKey || c.BootstrapKey != longKey {
		t.Fatalf("from variables: %+v, %v", c, err)
	}
	if strings.Contains(c.String(), longKey) {
		t.Fatalf("String shows a secret: %s", c)
	}
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MGMTAPI_OPERATOR_KEY": longKey, "MGMTAPI_OPERATOR_KEY_FILE": withNewline},
			"MGMTAPI_OPERATOR_KEY and MGMTAPI_OPERATOR_KEY_FILE: set one or the other, not both"},
		{map[string]string{"MGMTAPI_BOOTSTRAP_KEY": longKey, "MGMTAPI_BOOTSTRAP_KEY_FILE": withNewline},
			"MGMTAPI_BOOTSTRAP_KEY and MGMTAPI_BOOTSTRAP_KEY_FILE: set one or the other"},
		{map[string]string{"MGMTAPI_OPERATOR_KEY_FILE": missing},
			"MGMTAPI_OPERATOR_KEY_FILE: cannot read the key file " + missing + ": no such file or directory"},
		{map[string]string{"MGMTAPI_BOOTSTRAP_KEY_FILE": dir},
			"MGMTAPI_BOOTSTRAP_KEY_FILE: cannot read the key file " + dir},
		{map[string]string{"MGMTAPI_OPERATOR_KEY": "op-secret"},
			"MGMTAPI_OPERATOR_KEY: must be at least 32 characters, not 9"},
		{map[string]string{"MGMTAPI_BOOTSTRAP_KEY": longKey[:31]},
			"MGMTAPI_BOOTSTRAP_KEY: must be at least 32 characters, not 31"},
		{map[string]string{"MGMTAPI_BOOTSTRAP_KEY_FILE": short},
			"MGMTAPI_BOOTSTRAP_KEY_FILE (" + short + "): must be at least 32 characters, not 9"},
		{map[string]string{"MGMTAPI_OPERATOR_KEY_FILE": empty},
			"MGMTAPI_OPERATOR_KEY_FILE (" + empty + "): the file is empty"},
	} {
		_, err := parse(nil, c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.env, err, c.want)
		}
	}
}

// TestUsageListsEverything checks that the help names every flag, every variable and the _FILE
// variants of the secrets.
func TestUsageListsEverything(t *testing.T) {
	var b bytes.Buffer
	Usage(&b)
	help := b.String()
	want := []string{"mgmtapi serve", "mgmtapi version", "mgmtapi help",
		"MGMTAPI_BOOTSTRAP_KEY, MGMTAPI_BOOTSTRAP_KEY_FILE", "MGMTAPI_OPERATOR_KEY, MGMTAPI_OPERATOR_KEY_FILE"}
	for _, o := range options {
		want = append(want, "--"+o.flag+"\n", "variable "+o.env+",")
	}
	for _, w := range want {
		if !strings.Contains(help, w) {
			t.Errorf("the help lacks %q", w)
		}
	}
}

func TestStringMasksTheDatabasePassword(t *testing.T) {
	c, err := parse([]string{"--database-url", "postgres://app:hunter2-secret@db.example.com:5432/mgmt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "hunter2") || !strings.Contains(s, "app:***@db.example.com") {
		t.Fatalf("String: %s", s)
	}
	if h := DatabaseHost(c.DatabaseURL); h != "db.example.com:5432/mgmt" {
		t.Fatalf("DatabaseHost: %q", h)
	}
}

// TestAuditRetention reads the retention as days, as a duration, and 0 as keeping for good.
func TestAuditRetention(t *testing.T) {
	for value, want := range map[string]time.Duration{
		"90d": 90 * 24 * time.Hour, "1d": 24 * time.Hour, "720h": 720 * time.Hour, "1h": time.Hour,
		"3650d": 3650 * 24 * time.Hour, "0": 0, "0s": 0,
	} {
		c, err := parse([]string{"--audit-retention", value}, nil)
		if err != nil || c.AuditRetention != want {
			t.Errorf("--audit-retention %s: %v, %v; want %v", value, c.AuditRetention, err, want)
		}
	}
}

// TestSMTPSettings: --smtp-url and --smtp-from go together; the URL's scheme chooses implicit TLS
// (smtps, port 465) or STARTTLS (smtp, port 587), which is required except to loopback or with
// ?starttls=optional; a bad value is an error naming the flag (or variable) that never quotes the
// password, and String masks the password.
func TestSMTPSettings(t *testing.T) {
	c, err := parse(nil, nil)
	if err != nil || c.SMTP != nil || !strings.Contains(c.String(), "smtp=(unset)") {
		t.Fatalf("no SMTP server by default: %+v %v", c.SMTP, err)
	}
	c, err = parse([]string{"--smtp-url", "smtp://mailer:s3cret-pass@smtp.example.com", "--smtp-from", "Alerts <alerts@example.com>"}, nil)
	if err != nil || *c.SMTP != (SMTP{Host: "smtp.example.com", Port: 587, RequireSTARTTLS: true, Username: "mailer", Password: "s3cret-pass", From: "alerts@example.com"}) {
		t.Fatalf("smtp://: %+v %v", c.SMTP, err)
	}
	if s := c.String(); strings.Contains(s, "s3cret-pass") || !strings.Contains(s, "smtp=mailer:(set)@smtp.example.com:587 starttls from=alerts@example.com") {
		t.Errorf("String: %s", s)
	}
	c, err = parse(nil, map[string]string{"MGMTAPI_SMTP_URL": "smtps://smtp.example.com", "MGMTAPI_SMTP_FROM": "alerts@example.com"})
	if err != nil || *c.SMTP != (SMTP{Host: "smtp.example.com", Port: 465, ImplicitTLS: true, From: "alerts@example.com"}) {
		t.Fatalf("smtps://: %+v %v", c.SMTP, err)
	}
	for url, want := range map[string]SMTP{
		"smtp://127.0.0.1:2525":                      {Host: "127.0.0.1", Port: 2525, From: "a@example.com"},
		"smtp://localhost":                           {Host: "localhost", Port: 587, From: "a@example.com"},
		"smtp://[::1]:25?starttls=required":          {Host: "::1", Port: 25, RequireSTARTTLS: true, From: "a@example.com"},
		"smtp://relay.internal:25?starttls=optional": {Host: "relay.internal", Port: 25, From: "a@example.com"},
		"smtps://u:p@smtp.example.com:2465":          {Host: "smtp.example.com", Port: 2465, ImplicitTLS: true, Username: "u", Password: "p", From: "a@example.com"},
	} {
		c, err := parse([]string{"--smtp-url", url, "--smtp-from", "a@example.com"}, nil)
		if err != nil || *c.SMTP != want {
			t.Errorf("%s: %+v %v, want %+v", url, c.SMTP, err, want)
		}
	}
	for _, tc := range []struct {
		args     []string
		env      map[string]string
		fragment string
	}{
		{[]string{"--smtp-url", "smtp://smtp.example.com"}, nil, "--smtp-from: required with --smtp-url"},
		{[]string{"--smtp-from", "a@example.com"}, nil, "--smtp-from: needs --smtp-url"},
		{[]string{"--smtp-url", "http://u:hidden-pw@smtp.example.com", "--smtp-from", "a@example.com"}, nil, `--smtp-url: must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port], not "http://u:***@smtp.example.com"`},
		{[]string{"--smtp-url", "smtp://u:hidden-pw@smtp.example.com:0", "--smtp-from", "a@example.com"}, nil, "--smtp-url: the port must be 1 to 65535"},
		{[]string{"--smtp-url", "smtp://u:hidden-pw@smtp.example.com/path", "--smtp-from", "a@example.com"}, nil, "--smtp-url: must be smtp://"},
		{[]string{"--smtp-url", "smtp://:hidden-pw@smtp.example.com", "--smtp-from", "a@example.com"}, nil, "--smtp-url: the user information must name a user"},
		{[]string{"--smtp-url", "smtp://smtp.example.com?tls=off", "--smtp-from", "a@example.com"}, nil, "--smtp-url: the only query parameter is starttls"},
		{[]string{"--smtp-url", "smtp://smtp.example.com?starttls=never", "--smtp-from", "a@example.com"}, nil, "--smtp-url: starttls must be required or optional"},
		{[]string{"--smtp-url", "smtps://smtp.example.com?starttls=optional", "--smtp-from", "a@example.com"}, nil, "--smtp-url: starttls applies to smtp:// only"},
		{[]string{"--smtp-url", "smtp://smtp.example.com", "--smtp-from", "not an address"}, nil, "--smtp-from: must be an email address"},
		{nil, map[string]string{"MGMTAPI_SMTP_URL": "smtp://smtp.example.com", "MGMTAPI_SMTP_FROM": "a@example.com\r\nBcc: b@example.com"}, "MGMTAPI_SMTP_FROM (the variable of --smtp-from): must be one email address, without line breaks"},
		{nil, map[string]string{"MGMTAPI_SMTP_URL": "ftp://u:hidden-pw@x", "MGMTAPI_SMTP_FROM": "a@example.com"}, "MGMTAPI_SMTP_URL (the variable of --smtp-url): must be smtp://"},
	} {
		_, err := parse(tc.args, tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.fragment) || strings.Contains(err.Error(), "hidden-pw") {
			t.Errorf("%v %v: error %v, want one containing %q and not the password", tc.args, tc.env, err, tc.fragment)
		}
	}
}

// TestTrustedProxies reads ranges and single addresses, masked, and refuses anything else.
func TestTrustedProxies(t *testing.T) {
	c, err := parse([]string{"--trusted-proxies", " 127.0.0.1, 10.1.2.3/8,,::1 "}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.TrustedProxies {
		got = append(got, p.String())
	}
	if strings.Join(got, ",") != "127.0.0.1/32,10.0.0.0/8,::1/128" {
		t.Fatalf("ranges %v", got)
	}
	if !strings.Contains(c.String(), "trusted-proxies=127.0.0.1/32,10.0.0.0/8,::1/128") {
		t.Fatalf("String() does not show them: %s", c)
	}
	_, err = parse(nil, map[string]string{"MGMTAPI_TRUSTED_PROXIES": "proxy.example.com"})
	if err == nil || !strings.Contains(err.Error(), `not "proxy.example.com"`) {
		t.Fatalf("a host name: %v", err)
	}
}

// TestS3Endpoint: --s3-endpoint takes an http(s) base URL without credentials, query or
// fragment, and drops a trailing slash; the settings line names it, or AWS when it is not set.
func TestS3Endpoint(t *testing.T) {
	c, err := Parse([]string{"--s3-endpoint", "http://127.0.0.1:8333/"}, func(string) string { return "" })
	if err != nil || c.S3Endpoint != "http://127.0.0.1:8333" || !strings.Contains(c.String(), "s3-endpoint=http://127.0.0.1:8333 ") {
		t.Fatalf("%v: %q / %s", err, c.S3Endpoint, c.String())
	}
	if c, err := Parse(nil, func(string) string { return "" }); err != nil || !strings.Contains(c.String(), "s3-endpoint=(aws) ") {
		t.Fatalf("default: %v %s", err, c.String())
	}
	for v, want := range map[string]string{
		"s3.example.com":               "absolute http or https URL",
		"http://key:secret@127.0.0.1/": "must not carry a user or password",
		"https://s3.example.com/?x=1":  "no query or fragment",
	} {
		if _, err := Parse([]string{"--s3-endpoint", v}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", v, err, want)
		}
	}
}
