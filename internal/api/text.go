package api

import (
	"fmt"
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
				name, times, maxQueryParameters, n), http.StatusBadRequest
		}
		values, err := url.ParseQuery(r.URL.RawQuery)
		query = values
		if err != nil {
			return nil, "query: " + err.Error(), http.StatusBadRequest
		}
		for name, list := range values {
			for _, v := range list {
				if !utf8.ValidString(name+v) || strings.ContainsRune(name+v, 0) {
					return nil, fmt.Sprintf("%s: must be valid UTF-8 without NUL characters", name), http.StatusBadRequest
				}
			}
		}
	}
	return query, "", 0
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
