package apierror

import "unicode/utf8"

// excerptBytes is the most of a caller's value that a message quotes.
const excerptBytes = 64

// Excerpt is s as a message quotes a value the caller sent: whole when it has at most 64 bytes,
// else its first whole runes within 64 bytes followed by "…".
func Excerpt(s string) string {
	if len(s) <= excerptBytes {
		return s
	}
	end := excerptBytes
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}
