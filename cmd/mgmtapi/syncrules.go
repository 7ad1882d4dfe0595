package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/promrules"
)

const syncRulesUsage = `usage: mgmtapi sync-rules --url URL --dir DIR [--key KEY] [--reload-url URL] [--interval 30s] [--file NAME] [--once]

Keeps a Prometheus rule file up to date with a team's rules: every interval it reads
GET URL/config/v1/prometheus/rules with the team's key (with the
last answer's ETag in If-None-Match, so an unchanged file is answered 304 and not transferred)
and, when the answer differs from DIR/NAME, writes it there atomically (a temporary file in DIR, synced, then
renamed over NAME) and POSTs the reload URL (a Prometheus started with --web.enable-lifecycle
answers /-/reload). It logs the groups added, removed and changed. A failed read or reload is
logged and tried again at the next interval; the file is never emptied because the server could
not be reached. Point Prometheus's rule_files at DIR/NAME.

The key needs three permissions: metrics.recording-rules:ReadConfig (the recording rules),
slo:ReadConfig (the SLOs' burn-rate rules) and alerts:ReadConfig (the alert definitions' rules);
a key without one is answered 403 naming it. It comes from --key, else MGMTAPI_KEY, else the file
named by MGMTAPI_KEY_FILE; prefer the variables (a flag shows in the process list). The key is
never printed.

`

// maxRuleFileBytes bounds the answer sync-rules reads, so that a sidecar's memory stays bounded;
// a larger answer is refused (and logged), never written cut short.
const maxRuleFileBytes = 256 << 20

// syncRulesFileMode lets a Prometheus running as another user read the file.
const syncRulesFileMode = 0o644

// syncRulesCommand runs `mgmtapi sync-rules` until ctx ends (or once, with --once). A bad command
// line is a usageError; with --once a failed sync is returned.
func syncRulesCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mgmtapi sync-rules", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), syncRulesUsage)
		fs.PrintDefaults()
	}
	baseURL := fs.String("url", getenv("MGMTAPI_URL"), "base URL of the mgmtapi server, e.g. http://mgmtapi:8080 (MGMTAPI_URL)")
	key := fs.String("key", "", "the team's API key; default MGMTAPI_KEY, else the file MGMTAPI_KEY_FILE names")
	dir := fs.String("dir", "", "directory to write the rule file to (required; must exist)")
	file := fs.String("file", "mgmtapi.yml", "name of the rule file in --dir")
	reloadURL := fs.String("reload-url", "", "URL to POST after each change, e.g. http://prometheus:9090/-/reload")
	interval := fs.Duration("interval", 30*time.Second, "time between two reads")
	once := fs.Bool("once", false, "sync once and exit (status 1 when that failed)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{fmt.Errorf("sync-rules: %w", err)}
	}
	bad := func(format string, a ...any) error { return usageError{fmt.Errorf("sync-rules: "+format, a...)} }
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	source, err := url.Parse(*baseURL)
	switch {
	case *baseURL == "":
		return bad("--url: must name the mgmtapi server (or set MGMTAPI_URL)")
	case err != nil:
		return bad("--url: not a URL")
	case source.User != nil:
		return bad("--url: must not hold credentials; the key comes from --key or MGMTAPI_KEY")
	case (source.Scheme != "http" && source.Scheme != "https") || source.Host == "":
		return bad("--url %q: must be an http:// or https:// URL with a host", *baseURL)
	}
	// The reload URL may hold credentials (a Prometheus behind basic authentication): they are
	// sent, and never printed.
	reloadShown := ""
	if *reloadURL != "" {
		u, err := url.Parse(*reloadURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("--reload-url: must be an http:// or https:// URL with a host")
		}
		reloadShown = u.Redacted()
	}
	if *interval <= 0 {
		return bad("--interval %s: must be positive", *interval)
	}
	if *dir == "" {
		return bad("--dir: must name the directory to write the rule file to")
	}
	if info, err := os.Stat(*dir); err != nil || !info.IsDir() {
		return bad("--dir %s: not an existing directory", *dir)
	}
	if *file == "" || *file != filepath.Base(*file) || strings.HasPrefix(*file, ".") {
		return bad("--file %q: must be a plain file name, not starting with '.'", *file)
	}
	teamKey, err := syncRulesKey(*key, getenv)
	if err != nil {
		return bad("%v", err)
	}

	s := &ruleSyncer{
		source:    strings.TrimSuffix(source.String(), "/") + "/config/v1/prometheus/rules",
		key:       teamKey,
		path:      filepath.Join(*dir, *file),
		reloadURL: *reloadURL,
		shownURL:  reloadShown,
		client:    &http.Client{Timeout: 30 * time.Second},
		logger:    syncRulesLogger(stderr),
	}
	s.logger.Info("sync-rules starting", "from", s.source, "file", s.path, "reload_url", s.shownURL, "interval", *interval)
	if *once {
		return s.sync(ctx)
	}
	ticker := time.NewTicker(*interval)
	defer ticker.Stop()
	for {
		if err := s.sync(ctx); err != nil && ctx.Err() == nil {
			s.logger.Error("sync failed; trying again at the next interval", "error", err)
		}
		select {
		case <-ctx.Done():
			s.logger.Info("sync-rules stopping")
			return nil
		case <-ticker.C:
		}
	}
}

// syncRulesLogger logs in slog's text format, as serve does by default.
func syncRulesLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// syncRulesKey returns the key from the flag, MGMTAPI_KEY or the file MGMTAPI_KEY_FILE names.
// Its errors never hold the key.
func syncRulesKey(flagValue string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if v := getenv("MGMTAPI_KEY"); v != "" {
		return v, nil
	}
	if name := getenv("MGMTAPI_KEY_FILE"); name != "" {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("MGMTAPI_KEY_FILE: %w", err)
		}
		if v := strings.TrimSpace(string(b)); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("MGMTAPI_KEY_FILE %s: the file is empty", name)
	}
	return "", errors.New("no key: give --key, or set MGMTAPI_KEY or MGMTAPI_KEY_FILE")
}

// ruleSyncer keeps one rule file equal to the server's answer.
type ruleSyncer struct {
	source    string // the rule file's URL
	key       string
	path      string
	reloadURL string
	shownURL  string // reloadURL without its password, for messages
	client    *http.Client
	logger    *slog.Logger
	// reloaded is false until a reload succeeded: the first sync of a process reloads even when
	// the file was already up to date (a previous process may have written it and failed to
	// reload), and a failed reload is tried again at the next sync.
	reloaded bool
	// etag and body are the last rule file the server answered (and that decoded): later reads
	// send etag in If-None-Match, and a 304 means body again, so an unchanged file is not
	// transferred. The file on disk is still compared with body, so one changed or removed by
	// hand is written again.
	etag string
	body []byte
}

// sync reads the rule file from the server and, when it differs from the file on disk, writes it
// and reloads Prometheus. A read that fails, or answers something that is not a rule file,
// changes nothing.
func (s *ruleSyncer) sync(ctx context.Context) error {
	body, etag, err := s.read(ctx)
	if err != nil {
		return err
	}
	var next promrules.File
	if err := decodeRuleFile(body, &next); err != nil {
		return fmt.Errorf("GET %s: the answer is not a rule file, so the file was left as it was: %w", s.source, err)
	}
	s.etag, s.body = etag, body
	doc := append([]byte("# Written by mgmtapi sync-rules from "+s.source+"; changes made here are overwritten.\n"), body...)
	current, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	if !bytes.Equal(current, doc) {
		var previous promrules.File
		if current != nil {
			_ = decodeRuleFile(current, &previous) // a file that does not decode counts as no groups
		}
		if err := writeFileAtomically(s.path, doc); err != nil {
			return err
		}
		added, removed, changed := groupChanges(previous, next)
		s.logger.Info("rule file written", "file", s.path, "groups", len(next.Groups),
			"added", added, "removed", removed, "changed", changed)
		for _, line := range bytes.Split(body, []byte("\n")) {
			if what, ok := bytes.CutPrefix(line, []byte(promrules.LeftOutComment)); ok {
				s.logger.Warn("left out of the rule file: it has no rules", "what", string(what))
			}
		}
		s.reloaded = false
	}
	if s.reloadURL == "" || s.reloaded {
		return nil
	}
	if err := s.reload(ctx); err != nil {
		return err
	}
	s.reloaded = true
	s.logger.Info("Prometheus reloaded", "reload_url", s.shownURL)
	return nil
}

// read GETs the rule file and answers it with its ETag; with the ETag of the last file in
// If-None-Match, a 304 answers that file again. Any other answer but a 200 is an error naming the
// status and the server's message.
func (s *ruleSyncer) read(ctx context.Context) (body []byte, etag string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.source, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Accept", "application/yaml")
	if s.etag != "" {
		req.Header.Set("If-None-Match", s.etag)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", s.source, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotModified && s.etag != "" {
		return s.body, s.etag, nil
	}
	body, err = io.ReadAll(io.LimitReader(res.Body, maxRuleFileBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", s.source, err)
	}
	if len(body) > maxRuleFileBytes {
		// Cut short, the rest might still parse as a rule file with groups missing.
		return nil, "", fmt.Errorf("GET %s: the answer is larger than %d bytes; the file was left as it was", s.source, maxRuleFileBytes)
	}
	if res.StatusCode != http.StatusOK {
		var answer struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &answer) == nil && answer.Message != "" {
			return nil, "", fmt.Errorf("GET %s: %s: %s", s.source, res.Status, answer.Message)
		}
		return nil, "", fmt.Errorf("GET %s: %s", s.source, res.Status)
	}
	return body, res.Header.Get("ETag"), nil
}

// reload POSTs the reload URL; any answer but a 2xx is an error.
func (s *ruleSyncer) reload(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.reloadURL, nil)
	if err != nil {
		return err
	}
	res, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("reload: %w", err) // net/http's error names the URL without its password
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("reload: POST %s: %s: %s", s.shownURL, res.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// decodeRuleFile decodes a rule file strictly: an unknown key (an HTML page, another document)
// is an error.
func decodeRuleFile(doc []byte, into *promrules.File) error {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil {
		return err
	}
	if into.Groups == nil {
		return errors.New("no groups key")
	}
	return nil
}

// groupChanges names the groups of next that previous lacks, those of previous that next lacks,
// and those in both that differ.
func groupChanges(previous, next promrules.File) (added, removed, changed []string) {
	before := make(map[string]promrules.Group, len(previous.Groups))
	for _, g := range previous.Groups {
		before[g.Name] = g
	}
	after := make(map[string]bool, len(next.Groups))
	for _, g := range next.Groups {
		after[g.Name] = true
		old, ok := before[g.Name]
		switch {
		case !ok:
			added = append(added, g.Name)
		case !reflect.DeepEqual(old, g):
			changed = append(changed, g.Name)
		}
	}
	for _, g := range previous.Groups {
		if !after[g.Name] {
			removed = append(removed, g.Name)
		}
	}
	return added, removed, changed
}

// writeFileAtomically replaces the file at path with doc so that a reader sees the old file or
// the new one, never a part: a temporary file in the same directory (its name starts with '.'
// and ends in .tmp, so a rule_files glob such as *.yml does not match it) is written, synced and
// renamed over path, then the directory is synced.
func writeFileAtomically(path string, doc []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(doc); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(syncRulesFileMode); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
