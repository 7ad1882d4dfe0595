package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCheckTextNamesTheParameter: a refused query parameter is named in the message, and one
// whose name is empty or cannot be shown is called "query" (the fuzzer found ": must be…").
func TestCheckTextNamesTheParameter(t *testing.T) {
	for _, c := range []struct{ rawQuery, want string }{
		{"name=%B3", "name: must be valid UTF-8 without NUL characters"},
		{"=%B3", "query: must be valid UTF-8 without NUL characters"},
		{"=\xb3", "query: must be valid UTF-8 without NUL characters"},
		{"%B3=1", "query: must be valid UTF-8 without NUL characters"},
		{"a=%00", "a: must be valid UTF-8 without NUL characters"},
		{strings.Repeat("id=1&", maxQueryParameters) + "id=2", "id: given 10001 times; a request takes at most 10000 query parameters (10001 in all here)"},
		{strings.Repeat("=1&", maxQueryParameters) + "=2", "query: given 10001 times; a request takes at most 10000 query parameters (10001 in all here)"},
	} {
		r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/a", RawQuery: c.rawQuery}}
		_, msg, status := checkText(r)
		if msg != c.want || status != http.StatusBadRequest {
			t.Errorf("%.40q: got %d %q, want 400 %q", c.rawQuery, status, msg, c.want)
		}
	}
}
