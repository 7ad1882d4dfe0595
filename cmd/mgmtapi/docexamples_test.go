package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The documentation's examples, run as a reader would run them (issue 38).
//
// TestDocumentationExamplesRun reads README.md and every page it links (in the order of their
// first link), takes each fenced block whose info string is sh, bash or shell, and runs them page
// by page, in order, with bash -euo pipefail, against a server it starts on a fresh data directory:
// one shell per page, so the variables and files a block makes are there for the blocks after it
// on that page. A block fails the test when a command in it fails: a non-zero exit, which includes
// an HTTP 4xx or 5xx answered to curl -f or --fail-with-body (an example that shows a refusal
// runs curl without them). The blocks see:
//
//   - KEY, the all-permission key the server printed on its first start, and OPERATOR_KEY, the
//     server's MGMTAPI_OPERATOR_KEY;
//   - mgmtapi on PATH, this test binary acting as the program, and MGMTAPI_DATA_DIR, the server's
//     data directory (for mgmtapi backup);
//   - a working directory of their own (a page's files land there);
//   - the server's address in place of 127.0.0.1:8080, the default the pages use, since the test
//     cannot count on that port being free.
//
// A block that cannot run here (it needs docker, a Prometheus, root, minutes of downloads) is
// preceded by `<!-- example: skip, <reason> -->`; the test counts and logs those. A curl or mgmtapi
// command outside such a fenced block (an indented block or a fence of another language) fails the
// test: every command a reader can copy is either run or marked.
func TestDocumentationExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the documentation's examples take a minute")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("the examples capture ids with jq (apt-get install jq): %v", err)
	}
	pages := linkedPages(t, filepath.Join("..", "..", "README.md"))

	var all []example
	for _, p := range pages {
		blocks, stray := examplesOf(t, p)
		for _, s := range stray {
			t.Errorf("%s: a command outside a ```sh block, so no test runs it: %q; fence it as ```sh (with an example: skip marker if it cannot run here)", s.at, s.text)
		}
		all = append(all, blocks...)
	}

	srv := startDocServer(t)
	bin := t.TempDir()
	wrapper := "#!/bin/sh\n" + serveVariable + "=1 exec " + shellQuote(os.Args[0]) + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "mgmtapi"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	ran, skipped := 0, 0
	for _, p := range pages {
		var script strings.Builder
		script.WriteString("set -euo pipefail\n")
		var blocks []example
		for _, b := range all {
			if b.page != p {
				continue
			}
			if b.skip != "" {
				skipped++
				t.Logf("skipped %s: %s", b.at, b.skip)
				continue
			}
			blocks = append(blocks, b)
			fmt.Fprintf(&script, "echo '::example %d' >&2\n%s\n", len(blocks)-1, strings.ReplaceAll(b.text, "127.0.0.1:8080", srv.addr))
		}
		if len(blocks) == 0 {
			continue
		}
		ran += len(blocks)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"KEY="+srv.key, "OPERATOR_KEY="+docOperatorKey, "MGMTAPI_DATA_DIR="+srv.dataDir,
			"MGMTAPI_URL=", "MGMTAPI_KEY=") // as a reader's shell: only what the page sets
		out, err := cmd.CombinedOutput()
		cancel()
		t.Logf("%s: %d blocks, their output:\n%s", p, len(blocks), outputTail(out, 3000))
		if err != nil {
			failed := lastExample(out)
			at, text := p, ""
			if failed >= 0 && failed < len(blocks) {
				at, text = blocks[failed].at, blocks[failed].text
			}
			t.Errorf("the example at %s failed (%v):\n%s\n--- its output (and the page's before it):\n%s", at, err, text, outputTail(out, 4000))
		}
	}
	t.Logf("documentation examples: %d pages, %d blocks run, %d skipped by their marker", len(pages), ran, skipped)
	if ran == 0 {
		t.Fatal("no example ran: the pages hold no ```sh block")
	}
}

// docOperatorKey is the operator key the examples' server runs with.
const docOperatorKey = "mgmt_documentation_examples_operator_0123456789"

// example is a fenced shell block of a page.
type example struct {
	page, at string // the page's path, and "page:line" of the block's first line
	text     string
	skip     string // the reason its skip marker gives; "" runs it
}

// stray is a command a reader can copy that no example holds.
type stray struct{ at, text string }

var markdownLink = regexp.MustCompile(`\]\(((?:docs/)[^)#\s]+\.md)(?:#[^)]*)?\)`)

// linkedPages answers readme and the pages it links, each once, in the order of the first link.
func linkedPages(t *testing.T, readme string) []string {
	t.Helper()
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(readme)
	pages := []string{readme}
	seen := map[string]bool{readme: true}
	for _, m := range markdownLink.FindAllStringSubmatch(string(text), -1) {
		p := filepath.Join(root, m[1])
		if seen[p] {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("README.md links %s, which is not there", m[1])
			continue
		}
		seen[p] = true
		pages = append(pages, p)
	}
	return pages
}

var skipMarker = regexp.MustCompile(`^<!--\s*example:\s*skip,\s*(.+?)\s*-->$`)

// examplesOf answers the page's ```sh, ```bash and ```shell blocks, and the curl and mgmtapi
// commands outside them.
func examplesOf(t *testing.T, page string) ([]example, []stray) {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	var strays []stray
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, lastText, previous := 0, "", "x"
	inIndented := false
	var open *example
	var shell bool
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			previous, inIndented = trimmed, false
			if open == nil {
				info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
				shell = info == "sh" || info == "bash" || info == "shell"
				open = &example{page: page, at: fmt.Sprintf("%s:%d", page, n+1)}
				if m := skipMarker.FindStringSubmatch(lastText); m != nil {
					open.skip = m[1]
				}
			} else {
				if shell {
					out = append(out, *open)
				}
				open = nil
			}
			continue
		}
		if open != nil {
			open.text += line + "\n"
			if !shell && isCommand(trimmed) {
				strays = append(strays, stray{fmt.Sprintf("%s:%d", page, n), trimmed})
			}
			continue
		}
		// An indented code block starts after a blank line and goes on while lines are indented
		// or blank (a list item's wrapped text is indented too, but follows its text).
		indented := strings.HasPrefix(line, "    ") && (inIndented || previous == "")
		if indented && isCommand(trimmed) {
			strays = append(strays, stray{fmt.Sprintf("%s:%d", page, n), trimmed})
		}
		inIndented = indented || (inIndented && trimmed == "")
		previous = trimmed
		if trimmed != "" {
			lastText = trimmed
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if open != nil {
		t.Errorf("%s: a fence opened at line %s is never closed", page, open.at)
	}
	return out, strays
}

// isCommand reports whether a line of a code block is a curl or mgmtapi command a reader would
// run against a server.
func isCommand(line string) bool {
	return strings.HasPrefix(line, "curl ") || strings.HasPrefix(line, "mgmtapi ")
}

// lastExample answers the index of the last example whose marker the output holds, -1 if none.
func lastExample(out []byte) int {
	i := bytes.LastIndex(out, []byte("::example "))
	if i < 0 {
		return -1
	}
	var n int
	if _, err := fmt.Sscanf(string(out[i:]), "::example %d", &n); err != nil {
		return -1
	}
	return n
}

func outputTail(b []byte, n int) string {
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// docServer is the server the examples run against.
type docServer struct {
	addr, key, dataDir string
}

// startDocServer starts this binary as `mgmtapi serve` on a free loopback port and a fresh data
// directory, waits until it is ready and reads the key its first start printed.
func startDocServer(t *testing.T) docServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	logs := filepath.Join(dir, "serve.log")
	log, err := os.Create(logs)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	data := filepath.Join(dir, "data")
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--data-dir", data, "--kpi-interval", "1h")
	cmd.Env = append(os.Environ(), serveVariable+"=1", "MGMTAPI_OPERATOR_KEY="+docOperatorKey,
		"MGMTAPI_BOOTSTRAP_KEY=", "MGMTAPI_BOOTSTRAP_KEY_FILE=", "MGMTAPI_DATABASE_URL=")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			if b, err := os.ReadFile(logs); err == nil {
				t.Logf("the server's log:\n%s", outputTail(b, 6000))
			}
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logs)
			t.Fatalf("the server did not become ready: %v\n%s", err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	key := ""
	if _, after, ok := strings.Cut(string(b), "keep it:"); ok && len(strings.Fields(after)) > 0 {
		key = strings.Fields(after)[0]
	}
	if !strings.HasPrefix(key, "mgmt_") {
		t.Fatalf("no key in the first start's output:\n%s", b)
	}
	return docServer{addr: addr, key: key, dataDir: data}
}

// TestReadmeLinksEveryPage: every page under docs/ and docs/areas/ is linked from README.md, so a
// reader who starts there reaches each area's page (issue 38: four area pages were reachable from
// nowhere).
func TestReadmeLinksEveryPage(t *testing.T) {
	readme := filepath.Join("..", "..", "README.md")
	linked := map[string]bool{}
	for _, p := range linkedPages(t, readme) {
		linked[filepath.Clean(p)] = true
	}
	for _, dir := range []string{"docs", filepath.Join("docs", "areas")} {
		pages, err := filepath.Glob(filepath.Join("..", "..", dir, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		if len(pages) == 0 {
			t.Fatalf("no pages under %s", dir)
		}
		for _, p := range pages {
			if !linked[filepath.Clean(p)] {
				t.Errorf("README.md does not link %s; add it to \"Where to go next\" or to the list of areas", strings.TrimPrefix(p, "../../"))
			}
		}
	}
}
