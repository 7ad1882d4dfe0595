// Package config reads mgmtapi's configuration: flags win over environment variables, which win
// over defaults.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

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
	AccessLog    string
	BootstrapKey string
	OperatorKey  string
	// KPIInterval is how often open cases are checked for KPI breaches.
	KPIInterval time.Duration
	// ExtensionsDir holds the operator's extension catalog files (*.json); empty means the
	// built-in catalog only.
	ExtensionsDir string
}

// Parse reads the flags that follow the `serve` subcommand and the MGMTAPI_ variables through
// getenv. Errors name the flag or variable and the rule.
func Parse(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	envInt := func(name string, def int64) (int64, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: must be an integer, not %q", name, v)
		}
		return n, nil
	}
	policyLimit, err := envInt("MGMTAPI_POLICY_LIMIT", 200)
	if err != nil {
		return Config{}, err
	}
	maxBody, err := envInt("MGMTAPI_MAX_BODY_BYTES", 16<<20)
	if err != nil {
		return Config{}, err
	}

	var c Config
	var level, kpiInterval string
	var limit int
	fs := flag.NewFlagSet("mgmtapi serve", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&c.Addr, "addr", env("MGMTAPI_ADDR", "127.0.0.1:8080"), "listen address (MGMTAPI_ADDR); :0 picks a free port")
	fs.StringVar(&c.DataDir, "data-dir", env("MGMTAPI_DATA_DIR", "./data"), "directory of the SQLite database (MGMTAPI_DATA_DIR)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("MGMTAPI_DATABASE_URL", ""), "postgres:// URL; use PostgreSQL instead of SQLite (MGMTAPI_DATABASE_URL)")
	fs.StringVar(&c.Region, "region", env("MGMTAPI_REGION", "local"), "regional host name this deployment serves (MGMTAPI_REGION)")
	fs.IntVar(&limit, "policy-limit", int(policyLimit), "most policies per team and data type (MGMTAPI_POLICY_LIMIT)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", maxBody, "largest accepted request body (MGMTAPI_MAX_BODY_BYTES)")
	fs.StringVar(&c.LogFormat, "log-format", env("MGMTAPI_LOG_FORMAT", "text"), "text or json (MGMTAPI_LOG_FORMAT)")
	fs.StringVar(&level, "log-level", env("MGMTAPI_LOG_LEVEL", "info"), "debug, info, warn or error (MGMTAPI_LOG_LEVEL)")
	fs.StringVar(&c.AccessLog, "access-log", env("MGMTAPI_ACCESS_LOG", "errors"), "requests logged at info: all, errors (status 400 or more) or none (MGMTAPI_ACCESS_LOG)")
	fs.StringVar(&c.ExtensionsDir, "extensions-dir", env("MGMTAPI_EXTENSIONS_DIR", ""), "directory of extension catalog files (*.json) added to the built-in catalog (MGMTAPI_EXTENSIONS_DIR)")
	fs.StringVar(&kpiInterval, "kpi-interval", env("MGMTAPI_KPI_INTERVAL", "30s"), "how often open cases are checked for KPI breaches, 1s to 1h (MGMTAPI_KPI_INTERVAL)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.PolicyLimit = limit
	c.BootstrapKey = getenv("MGMTAPI_BOOTSTRAP_KEY")
	c.OperatorKey = getenv("MGMTAPI_OPERATOR_KEY")

	switch {
	case c.PolicyLimit < 1:
		return Config{}, errors.New("--policy-limit: must be at least 1")
	case c.MaxBodyBytes < 1024:
		return Config{}, errors.New("--max-body-bytes: must be at least 1024")
	case c.LogFormat != "text" && c.LogFormat != "json":
		return Config{}, fmt.Errorf("--log-format: must be text or json, not %q", c.LogFormat)
	case c.AccessLog != "all" && c.AccessLog != "errors" && c.AccessLog != "none":
		return Config{}, fmt.Errorf("--access-log: must be all, errors or none, not %q", c.AccessLog)
	case c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return Config{}, errors.New("--database-url: must start with postgres:// or postgresql://")
	}
	if c.KPIInterval, err = time.ParseDuration(kpiInterval); err != nil || c.KPIInterval < time.Second || c.KPIInterval > time.Hour {
		return Config{}, fmt.Errorf("--kpi-interval: must be a duration from 1s to 1h, such as 30s, not %q", kpiInterval)
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return Config{}, fmt.Errorf("--log-level: must be debug, info, warn or error, not %q", level)
	}
	return c, nil
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
	if c.DatabaseURL != "" {
		db = "postgres " + maskURL(c.DatabaseURL)
	}
	extensionsDir := c.ExtensionsDir
	if extensionsDir == "" {
		extensionsDir = "(built-in only)"
	}
	return fmt.Sprintf("addr=%s database=%s region=%s policy-limit=%d max-body-bytes=%d kpi-interval=%s extensions-dir=%s log=%s/%s access-log=%s bootstrap-key=%s operator-key=%s",
		c.Addr, db, c.Region, c.PolicyLimit, c.MaxBodyBytes, c.KPIInterval, extensionsDir, c.LogFormat, c.LogLevel, c.AccessLog, mask(c.BootstrapKey), mask(c.OperatorKey))
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
