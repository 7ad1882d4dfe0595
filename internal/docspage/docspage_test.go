package docspage_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/api"
	"github.com/mgmtapi/mgmtapi/internal/docspage"
)

// pinned is pinned.json: the npm package the renderer comes from and the sha256 of each file
// taken from it.
type pinned struct {
	Package   string            `json:"package"`
	Version   string            `json:"version"`
	Integrity string            `json:"integrity"`
	Directory string            `json:"directory"`
	Files     map[string]string `json:"files"`
}

func readPinned(t *testing.T) pinned {
	t.Helper()
	b, err := os.ReadFile("pinned.json")
	if err != nil {
		t.Fatal(err)
	}
	var p pinned
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("pinned.json: %v", err)
	}
	if p.Package == "" || p.Version == "" || !strings.HasPrefix(p.Integrity, "sha512-") || len(p.Files) == 0 {
		t.Fatalf("pinned.json lacks the package, version, integrity or files: %+v", p)
	}
	return p
}

// TestEmbeddedRendererIsThePinnedOne: the files in the renderer's directory are exactly those
// pinned.json lists, with its sha256 (CI checks that these are the npm package's own files).
func TestEmbeddedRendererIsThePinnedOne(t *testing.T) {
	p := readPinned(t)
	var found []string
	err := fs.WalkDir(os.DirFS(p.Directory), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		found = append(found, name)
		b, err := os.ReadFile(path.Join(p.Directory, name))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if got, want := hex.EncodeToString(sum[:]), p.Files[name]; got != want {
			t.Errorf("%s: sha256 %s, pinned.json says %q", name, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for name := range p.Files {
		listed = append(listed, name)
	}
	sort.Strings(found)
	sort.Strings(listed)
	if strings.Join(found, ",") != strings.Join(listed, ",") {
		t.Fatalf("files in %s: %q; pinned.json lists %q", p.Directory, found, listed)
	}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, h http.Handler, target string, header ...string) answer {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.Bytes()}
}

var assetLink = regexp.MustCompile(`(?:href|src)="(docs/assets/[^"]+)"`)

// TestPageAndAssets: the page names its assets by relative links under names that carry their
// hash; each is served with its type, a year's immutable caching and an ETag, compressed only to
// a client that accepts gzip, and unchanged by the compression; a matching If-None-Match gets 304.
func TestPageAndAssets(t *testing.T) {
	h := docspage.New(api.WriteError)
	page := get(t, h, "/docs")
	if page.status != http.StatusOK || page.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /docs: %d %q", page.status, page.header.Get("Content-Type"))
	}
	csp := page.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") {
		t.Errorf("Content-Security-Policy %q allows inline code or another origin", csp)
	}
	if page.header.Get("Cache-Control") != "no-cache" || page.header.Get("ETag") == "" {
		t.Errorf("GET /docs: Cache-Control %q, ETag %q; want no-cache and an ETag",
			page.header.Get("Cache-Control"), page.header.Get("ETag"))
	}
	if bytes.Contains(page.body, []byte("{{")) {
		t.Errorf("the page keeps a placeholder:\n%s", page.body)
	}
	if !bytes.Contains(page.body, []byte(`data-document="openapi.json"`)) {
		t.Errorf("the page does not load the relative openapi.json:\n%s", page.body)
	}
	if again := get(t, h, "/docs", "If-None-Match", page.header.Get("ETag")); again.status != http.StatusNotModified || len(again.body) != 0 {
		t.Errorf("GET /docs with its ETag: %d with %d bytes, want 304 and no body", again.status, len(again.body))
	}

	links := assetLink.FindAllStringSubmatch(string(page.body), -1)
	wantTypes := map[string]string{"swagger-ui.": "text/css; charset=utf-8", "swagger-ui-bundle.": "text/javascript; charset=utf-8", "start.": "text/javascript; charset=utf-8"}
	if len(links) != len(wantTypes) {
		t.Fatalf("the page links %d assets, want %d: %q", len(links), len(wantTypes), links)
	}
	hashed := regexp.MustCompile(`^docs/assets/([a-z-]+\.)[0-9a-f]{12}\.(js|css)$`)
	for _, link := range links {
		m := hashed.FindStringSubmatch(link[1])
		if m == nil || wantTypes[m[1]] == "" {
			t.Fatalf("asset link %q: not a known name with a 12-digit hash", link[1])
		}
		plain := get(t, h, "/"+link[1])
		if plain.status != http.StatusOK || plain.header.Get("Content-Type") != wantTypes[m[1]] ||
			plain.header.Get("Content-Encoding") != "" || plain.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET /%s: %d, headers %v", link[1], plain.status, plain.header)
		}
		if cc := plain.header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET /%s: Cache-Control %q", link[1], cc)
		}
		sum := sha256.Sum256(plain.body)
		if !strings.Contains(link[1], "."+hex.EncodeToString(sum[:6])+".") {
			t.Errorf("GET /%s: the body's sha256 starts %x, not the name's hash", link[1], sum[:6])
		}
		zipped := get(t, h, "/"+link[1], "Accept-Encoding", "br, gzip")
		if zipped.header.Get("Content-Encoding") != "gzip" || zipped.header.Get("ETag") == plain.header.Get("ETag") {
			t.Fatalf("GET /%s accepting gzip: Content-Encoding %q, ETag %q (plain %q)", link[1],
				zipped.header.Get("Content-Encoding"), zipped.header.Get("ETag"), plain.header.Get("ETag"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(zipped.body))
		if err != nil {
			t.Fatal(err)
		}
		unzipped, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(unzipped, plain.body) || len(zipped.body) >= len(plain.body) {
			t.Fatalf("GET /%s gzip: %d bytes decompressing to %d (err %v), plain %d", link[1], len(zipped.body), len(unzipped), err, len(plain.body))
		}
		if get(t, h, "/"+link[1], "Accept-Encoding", "gzip;q=0").header.Get("Content-Encoding") != "" {
			t.Errorf("GET /%s: compressed though the client refused gzip (q=0)", link[1])
		}
		if again := get(t, h, "/"+link[1], "Accept-Encoding", "gzip", "If-None-Match", `W/`+zipped.header.Get("ETag")); again.status != http.StatusNotModified {
			t.Errorf("GET /%s with its weak ETag: %d, want 304", link[1], again.status)
		}
	}
}

// TestRedirectsLicensesAndUnknownNames: / and /docs/ lead to the page by relative redirects, the
// renderer's license and notice are served as text, and any other name under /docs/ is a 404 with
// an Error body naming the path.
func TestRedirectsLicensesAndUnknownNames(t *testing.T) {
	h := docspage.New(api.WriteError)
	if a := get(t, h, "/"); a.status != http.StatusFound || a.header.Get("Location") != "docs" {
		t.Errorf("GET /: %d Location %q, want 302 to docs", a.status, a.header.Get("Location"))
	}
	if a := get(t, h, "/docs/"); a.status != http.StatusPermanentRedirect || a.header.Get("Location") != "../docs" {
		t.Errorf("GET /docs/: %d Location %q, want 308 to ../docs", a.status, a.header.Get("Location"))
	}
	for _, name := range []string{"LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt"} {
		a := get(t, h, "/docs/assets/"+name)
		if a.status != http.StatusOK || a.header.Get("Content-Type") != "text/plain; charset=utf-8" || len(a.body) == 0 {
			t.Errorf("GET /docs/assets/%s: %d %q, %d bytes", name, a.status, a.header.Get("Content-Type"), len(a.body))
		}
	}
	for _, target := range []string{"/docs/assets/swagger-ui-bundle.js", "/docs/assets/", "/docs/index.html", "/docs/assets/start.000000000000.js"} {
		a := get(t, h, target)
		var body struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(a.body, &body); err != nil || a.status != http.StatusNotFound || body.Code != 404 || !strings.Contains(body.Message, target) {
			t.Errorf("GET %s: %d %s, want 404 with an Error body naming the path", target, a.status, a.body)
		}
	}
}

// BenchmarkNew measures what the reference page adds to the server's start.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		docspage.New(api.WriteError)
	}
}
