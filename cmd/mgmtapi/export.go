package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const exportUsage = `usage: mgmtapi export [--url URL] [--key KEY] [--format yaml|json] > team.yaml

Writes the configuration of the key's team (GET /config/v1/export) to standard output: YAML, or
JSON with --format json. The key needs org-settings:ReadConfig and the read permission of every area. The
key is read from --key or, better, from MGMTAPI_KEY (a flag shows in the process list); it is
never printed. The URL is --url, else MGMTAPI_URL, else http://127.0.0.1:8080.

`

// configClient is what export and apply need to talk to a server: where, and with which key.
type configClient struct {
	url, key string
	http     *http.Client
}

// configFlags declares --url and --key, with MGMTAPI_URL and MGMTAPI_KEY as defaults; the key's
// default is not shown in the usage text.
func configFlags(fs *flag.FlagSet, getenv func(string) string, usage string) (url, key *string) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	base := getenv("MGMTAPI_URL")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	url = fs.String("url", base, "the server's base URL (MGMTAPI_URL)")
	key = fs.String("key", "", "the team API key (default: MGMTAPI_KEY)")
	return url, key
}

// newConfigClient checks the flags of export and apply.
func newConfigClient(command, url, key string, getenv func(string) string) (*configClient, error) {
	if key == "" {
		key = getenv("MGMTAPI_KEY")
	}
	if key == "" {
		return nil, fmt.Errorf("%s: no API key: set MGMTAPI_KEY (or give --key)", command)
	}
	url = strings.TrimRight(url, "/")
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("%s: --url %q: must start with http:// or https://", command, url)
	}
	return &configClient{url: url, key: key, http: &http.Client{Timeout: 10 * time.Minute}}, nil
}

// do sends a request with the key and answers the body of a 200; any other status is an error
// with the server's message. The key appears in no error.
func (c *configClient) do(ctx context.Context, method, path, contentType, accept string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := c.http.Do(req)
	if err != nil {
		var urlErr interface{ Unwrap() error }
		if errors.As(err, &urlErr) {
			err = urlErr.Unwrap() // the *url.Error repeats the URL, which holds no key, but say it once
		}
		return nil, fmt.Errorf("%s %s%s: %w", method, c.url, path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s%s: reading the answer: %w", method, c.url, path, err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(out, &e) == nil && e.Message != "" {
			return nil, fmt.Errorf("%s %s%s: %d: %s", method, c.url, path, res.StatusCode, e.Message)
		}
		return nil, fmt.Errorf("%s %s%s: status %s", method, c.url, path, res.Status)
	}
	return out, nil
}

// export is the export command: the team's document on stdout.
func export(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mgmtapi export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url, key := configFlags(fs, getenv, exportUsage)
	format := fs.String("format", "yaml", "yaml or json")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("export: unexpected argument %q", fs.Arg(0))
	}
	accept := "application/yaml"
	switch *format {
	case "yaml":
	case "json":
		accept = "application/json"
	default:
		return fmt.Errorf("export: --format %q: must be yaml or json", *format)
	}
	c, err := newConfigClient("export", *url, *key, getenv)
	if err != nil {
		return err
	}
	doc, err := c.do(ctx, http.MethodGet, "/config/v1/export", "", accept, nil)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err = stdout.Write(doc)
	return err
}
