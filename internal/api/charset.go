package api

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// checkCharset returns the refusal (415) of a request whose body's Content-Type names a charset
// other than UTF-8, or "": every body is read as UTF-8, so a UTF-16 or Latin-1 body would
// otherwise be refused as malformed JSON or, worse, stored as the wrong text. The name is
// compared without regard to case ("UTF-8" is fine). A Content-Type the media-type parser
// refuses is left to the router, which words that refusal.
func checkCharset(r *http.Request) string {
	if r.Body == nil || r.Body == http.NoBody {
		return ""
	}
	contentType := r.Header.Get("Content-Type")
	if !containsFold(contentType, "charset") {
		return ""
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	charset, ok := params["charset"]
	if !ok || strings.EqualFold(charset, "utf-8") {
		return ""
	}
	return fmt.Sprintf("Content-Type: the charset must be utf-8, not %q", charset)
}

// containsFold reports whether s holds the lower-case ASCII word, in any case, without
// allocating.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		j := 0
		for ; j < len(word); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				break
			}
		}
		if j == len(word) {
			return true
		}
	}
	return false
}
