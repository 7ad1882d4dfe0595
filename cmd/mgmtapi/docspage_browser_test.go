package main

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requireBrowserVariable, set to 1 (.ci/run does), makes the browser test fail when no Chromium is
// installed instead of skipping.
const requireBrowserVariable = "MGMTAPI_REQUIRE_BROWSER"

// chromiumBinary finds Debian's chromium (or another Chromium build) on the PATH.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireBrowserVariable) == "1" {
		t.Fatalf("no Chromium on the PATH and %s=1 (apt-get install chromium)", requireBrowserVariable)
	}
	t.Skipf("Chromium is not installed (apt-get install chromium); .ci/run installs it and sets %s=1", requireBrowserVariable)
	return ""
}

// headlessChromium loads url in a headless Chromium that can resolve no host but 127.0.0.1, so any
// request the page makes to the internet fails (and is reported), and returns what it printed on
// stdout (the DOM with --dump-dom) and its log, where the page's console messages appear as
// "INFO:CONSOLE" lines.
func headlessChromium(t *testing.T, url string, args ...string) (stdout, log string) {
	t.Helper()
	bin := chromiumBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args = append([]string{
		"--enable-logging=stderr", "--v=0",
		// Virtual time runs while the page is idle: the page gets 30 s of it to fetch the
		// document and render, however slow the machine.
		"--virtual-time-budget=30000",
	}, args...)
	cmd := exec.CommandContext(ctx, bin, append(chromiumFlags(t), append(args, url)...)...)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errs.String())
	}
	return out.String(), errs.String()
}

// chromiumFlags are the flags of every headless Chromium the tests start: a profile of its own,
// nothing of the browser's own networking, and no host but 127.0.0.1 resolvable.
func chromiumFlags(t *testing.T) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
	}
}

var (
	htmlTag       = regexp.MustCompile(`<[^>]*>`)
	operationElem = regexp.MustCompile(`class="opblock opblock-(?:get|put|post|delete|patch|deprecated)"`)
)

// TestReferencePageInChromium serves the real server and opens / in headless Chromium: it lands on
// /docs, which renders every operation of the served document (the window is tall enough for
// Swagger UI to render its whole virtualised list), showing the paths and summaries of the first
// and last operation of every tag; the page is not Swagger UI's error view, and the browser reports
// neither a Content-Security-Policy violation nor a request it could not make (every host but
// 127.0.0.1 is unresolvable, so a request to the internet would be one).
func TestReferencePageInChromium(t *testing.T) {
	chromiumBinary(t)
	p := start(t, nil, "--data-dir", t.TempDir())
	status, body := p.get(t, "/openapi.json", "")
	if status != 200 {
		t.Fatalf("GET /openapi.json: %d %s", status, body)
	}
	var doc struct {
		Info  struct{ Title string }
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	type operation struct{ method, path, summary string }
	var operations []operation
	byTag := map[string][]operation{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op struct {
				Summary string
				Tags    []string
			}
			if json.Unmarshal(raw, &op) != nil || len(op.Tags) == 0 { // parameters, not an operation
				continue
			}
			o := operation{method, path, op.Summary}
			operations = append(operations, o)
			byTag[op.Tags[0]] = append(byTag[op.Tags[0]], o)
		}
	}
	if len(byTag) < 5 || len(operations) < 50 {
		t.Fatalf("the served document has %d operations in %d tags; expected the whole API", len(operations), len(byTag))
	}

	dom, log := headlessChromium(t, "http://"+p.addr+"/", "--window-size=1280,40000", "--dump-dom")
	// Swagger UI breaks paths with <wbr> and zero-width spaces; other tags separate words.
	text := strings.ReplaceAll(dom, "<wbr>", "")
	text = strings.ReplaceAll(html.UnescapeString(htmlTag.ReplaceAllString(text, " ")), "\u200b", "")
	if !strings.Contains(dom, `<h1 class="title">`+html.EscapeString(doc.Info.Title)) || strings.Contains(dom, "errors-wrapper") ||
		strings.Contains(text, "Failed to load API definition") {
		t.Fatalf("the page is not the rendered reference of %q:\n%.3000s", doc.Info.Title, text)
	}
	if got := len(operationElem.FindAllString(dom, -1)); got != len(operations) {
		t.Errorf("the page renders %d operations, the document has %d", got, len(operations))
	}
	for tag, ops := range byTag {
		for _, o := range []operation{ops[0], ops[len(ops)-1]} {
			if !strings.Contains(text, o.path) || !strings.Contains(text, o.summary) {
				t.Errorf("tag %s: %s %s (%q) is not on the page", tag, strings.ToUpper(o.method), o.path, o.summary)
			}
		}
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") && (strings.Contains(line, "Content Security Policy") ||
			strings.Contains(line, "Failed to load") || strings.Contains(line, "net::ERR")) {
			t.Errorf("the browser reported: %s", line)
		}
	}
}
