package api

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// checkText refuses, before routing, text that no engine can store alike: invalid UTF-8 and the
// NUL character, in the path or the query. PostgreSQL's text type holds neither, so letting them
// through would turn a bad request into a 500 on one engine and into stored garbage on the other.
// When the request is fine it returns its query parameters (nil for an empty query) and an empty
// message; otherwise the message and status. A JSON body is checked for the same (and for lone
// UTF-16 surrogates and its bounds) as the operation reads it: see bodybounds.go.
func checkText(r *http.Request) (query url.Values, msg string, status int) {
	if !utf8.ValidString(r.URL.Path) || strings.ContainsRune(r.URL.Path, 0) {
		return nil, "path: must be valid UTF-8 without NUL characters", http.StatusBadRequest
	}
	if r.URL.RawQuery != "" {
		if n := strings.Count(r.URL.RawQuery, "&") + 1; n > maxQueryParameters {
			name, times := mostRepeatedParameter(r.URL.RawQuery)
			return nil, fmt.Sprintf("%s: given %d times; a request takes at most %d query parameters (%d in all here)",
				parameterLabel(name), times, maxQueryParameters, n), http.StatusBadRequest
		}
		values, err := url.ParseQuery(r.URL.RawQuery)
		query = values
		if err != nil {
			return nil, "query: " + err.Error(), http.StatusBadRequest
		}
		for name, list := range values {
			for _, v := range list {
				if !utf8.ValidString(name+v) || strings.ContainsRune(name+v, 0) {
					return nil, fmt.Sprintf("%s: must be valid UTF-8 without NUL characters", parameterLabel(name)), http.StatusBadRequest
				}
			}
		}
	}
	return query, "", 0
}

// parameterLabel is how a message names a query parameter: by its name, or as "query" when the
// name is empty or is itself not valid UTF-8 without NUL (it cannot be shown).
func parameterLabel(name string) string {
	if name == "" || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return "query"
	}
	return name
}

// maxQueryParameters is the most query parameters a request may have: net/url refuses more, and
// no operation takes more (the incident id lists take 1–10000).
const maxQueryParameters = 10000

// mostRepeatedParameter returns the (unescaped) name that occurs most often in a raw query, and
// how often.
func mostRepeatedParameter(rawQuery string) (string, int) {
	counts := map[string]int{}
	best, most := "query", 0
	for _, pair := range strings.Split(rawQuery, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if unescaped, err := url.QueryUnescape(name); err == nil {
			name = unescaped
		}
		counts[name]++
		if counts[name] > most {
			best, most = name, counts[name]
		}
	}
	return best, most
}

// checkCharset refuses a body whose Content-Type names a charset other than UTF-8 (JSON is
// UTF-8, RFC 8259; a body in UTF-16 read as UTF-8 would only be called malformed). US-ASCII is
// UTF-8's subset. A Content-Type that does not parse is left to the operation (415 there too).
func checkCharset(contentType string) (msg string, status int) {
	if !strings.Contains(contentType, "charset") {
		return "", 0
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", 0
	}
	charset, ok := params["charset"]
	if !ok {
		return "", 0
	}
	switch strings.ToLower(charset) {
	case "utf-8", "utf8", "us-ascii":
		return "", 0
	}
	return fmt.Sprintf("Content-Type: the charset must be utf-8, not %q", charset), http.StatusUnsupportedMediaType
}

// checkIntegerArgs refuses an integer path parameter written with a sign or leading zeros
// ("/views/+1", "/views/01"): the generated decoder would read it as 1, so one resource would
// have many paths. It names the parameter; args are op's path parameters, unescaped, in its
// template's order. The refusal is answered after authentication (pathRefusal).
func checkIntegerArgs(op *operation, args []string) string {
	for i, value := range args {
		if i >= len(op.integerArgs) || op.integerArgs[i] == "" {
			continue
		}
		digits := strings.TrimPrefix(value, "+")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			continue // not an integer at all: the operation's decoder says so
		}
		if len(digits) < len(value) || (len(digits) > 1 && digits[0] == '0') {
			return fmt.Sprintf("%s: must be an integer written without a plus sign or leading zeros (got %q)", op.integerArgs[i], value)
		}
	}
	return ""
}
