// Package docspage serves the API reference page: Swagger UI, from the npm package swagger-ui-dist
// at the version pinned in pinned.json and embedded byte for byte as published, rendering the
// OpenAPI document the server serves at /openapi.json. The page loads nothing from another origin:
// its Content-Security-Policy allows scripts, styles and requests to the server itself only.
//
// The handler answers:
//
//	GET /                   302 to docs (relative, so a proxy prefix is kept)
//	GET /docs               the page (no-cache, ETag)
//	GET /docs/              308 to ../docs
//	GET /docs/assets/NAME   an embedded file; the renderer's script and stylesheet under names
//	                        carrying a hash of their content (cached for a year, immutable), the
//	                        license files under their own names (no-cache, ETag); 404 otherwise
//
// Assets are sent gzip-compressed to clients that accept it (compressed once, on first use).
package docspage

import (
	"compress/gzip"
	"crypto/sha256"
	_ "embed" // the files of the page
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// The renderer's files, exactly as the pinned npm package ships them, with pinned.json, which
// lists their sha256 (a test checks the files against it, CI checks it against the package), and
// the two files of our own: the page and its start script. Each is embedded as a string, served
// without a copy; their names and ETags come from pinned.json, so the start hashes nothing large.
var (
	//go:embed pinned.json
	pinnedJSON []byte
	//go:embed assets/swagger-ui-dist/swagger-ui-bundle.js
	rendererScript string
	//go:embed assets/swagger-ui-dist/swagger-ui.css
	rendererStylesheet string
	//go:embed assets/swagger-ui-dist/LICENSE
	rendererLicense string
	//go:embed assets/swagger-ui-dist/NOTICE
	rendererNotice string
	//go:embed assets/swagger-ui-dist/swagger-ui-bundle.js.LICENSE.txt
	rendererBundledLicenses string
	//go:embed page.html
	pageTemplate string
	//go:embed start.js
	startScript string
)

// contentSecurityPolicy is the page's policy. Swagger UI needs its script and our start script
// (script-src 'self'), its stylesheet, whose icons are data: URIs (style-src 'self', img-src data:),
// and requests for the document and "Try it out" (connect-src 'self'). It sets the styles of its
// elements through the DOM, which style-src does not govern, so no 'unsafe-inline' is needed: the
// browser test fails on any violation report.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// WriteError writes an error body ({code, message}) with the status, as the API does.
type WriteError func(w http.ResponseWriter, status int, message string)

// New returns the handler of the reference page and its assets (the routes are listed in the
// package comment). Unknown names under /docs/ are answered 404 through writeError.
func New(writeError WriteError) http.Handler {
	var pinned struct{ Files map[string]string }
	if err := json.Unmarshal(pinnedJSON, &pinned); err != nil { // embedded: a test reads it too
		panic("docspage: pinned.json: " + err.Error())
	}
	h := &handler{writeError: writeError, assets: map[string]*asset{}}
	add := func(name, body string) string {
		sum, ok := pinned.Files[name]
		if !ok {
			s := sha256.Sum256([]byte(body))
			sum = hex.EncodeToString(s[:])
		}
		return h.add(name, body, sum)
	}
	stylesheet := add("swagger-ui.css", rendererStylesheet)
	script := add("swagger-ui-bundle.js", rendererScript)
	add("LICENSE", rendererLicense)
	add("NOTICE", rendererNotice)
	add("swagger-ui-bundle.js.LICENSE.txt", rendererBundledLicenses)
	start := add("start.js", startScript)

	// The names are ours (letters, digits, dots and dashes): nothing to escape. html/template is
	// not used on purpose: its reflection keeps every method of every type in the binary (+8.6 MB).
	page := strings.NewReplacer(
		"{{.Stylesheet}}", "docs/assets/"+stylesheet,
		"{{.Renderer}}", "docs/assets/"+script,
		"{{.Start}}", "docs/assets/"+start,
	).Replace(pageTemplate)
	sum := sha256.Sum256([]byte(page))
	h.page = newAsset(page, hex.EncodeToString(sum[:]), "text/html; charset=utf-8", "no-cache")
	return h
}

type handler struct {
	writeError WriteError
	page       *asset
	assets     map[string]*asset // by served name
}

// add registers an embedded file, whose sha256 is sum (hex), and returns the name it is served
// under: scripts and stylesheets get the first 12 hex digits of sum before the extension, so they
// can be cached forever.
func (h *handler) add(name, body, sum string) string {
	ext := path.Ext(name)
	switch ext {
	case ".js", ".css":
		served := strings.TrimSuffix(name, ext) + "." + sum[:12] + ext
		contentType := "text/javascript; charset=utf-8"
		if ext == ".css" {
			contentType = "text/css; charset=utf-8"
		}
		h.assets[served] = newAsset(body, sum, contentType, "public, max-age=31536000, immutable")
		return served
	default:
		h.assets[name] = newAsset(body, sum, "text/plain; charset=utf-8", "no-cache")
		return name
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch p := r.URL.Path; {
	case p == "/":
		w.Header().Set("Location", "docs")
		w.WriteHeader(http.StatusFound)
	case p == "/docs":
		w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.page.serve(w, r)
	case p == "/docs/":
		w.Header().Set("Location", "../docs")
		w.WriteHeader(http.StatusPermanentRedirect)
	default:
		if name, ok := strings.CutPrefix(p, "/docs/assets/"); ok && h.assets[name] != nil {
			h.assets[name].serve(w, r)
			return
		}
		h.writeError(w, http.StatusNotFound, "path: "+strconv.Quote(p)+" is not a page of the API reference; it is at /docs")
	}
}

// asset is one answer body with its headers, and its gzip form once a client asked for it.
type asset struct {
	body         string
	contentType  string
	cacheControl string
	etag         string

	gzipOnce sync.Once
	gzipped  string
}

// newAsset makes the asset of body, whose sha256 is sum (hex); its ETag is sum's first 24 digits.
func newAsset(body, sum, contentType, cacheControl string) *asset {
	return &asset{body: body, contentType: contentType, cacheControl: cacheControl,
		etag: `"` + sum[:24] + `"`}
}

func (a *asset) serve(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("Cache-Control", a.cacheControl)
	hdr.Set("Vary", "Accept-Encoding")
	body, etag := a.body, a.etag
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, etag = a.gzip(), a.etag[:len(a.etag)-1]+`-gzip"`
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("ETag", etag)
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		hdr.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, body)
	}
}

func (a *asset) gzip() string {
	a.gzipOnce.Do(func() {
		var b strings.Builder
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // the level is valid
		_, _ = io.WriteString(zw, a.body)                      // a strings.Builder does not fail
		_ = zw.Close()
		a.gzipped = b.String()
	})
	return a.gzipped
}

// acceptsGzip reports whether an Accept-Encoding value lists gzip (or *) without q=0.
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.TrimSpace(coding)
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.TrimSpace(params)
		if v, ok := strings.CutPrefix(q, "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// matchesETag reports whether an If-None-Match value names etag (weakly, as RFC 9110 asks for
// GET) or is *.
func matchesETag(ifNoneMatch, etag string) bool {
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == "*" || candidate == etag {
			return true
		}
	}
	return false
}
