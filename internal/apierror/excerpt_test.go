package apierror

import (
	"strings"
	"testing"
)

func TestExcerpt(t *testing.T) {
	short := strings.Repeat("a", 64)
	if got := Excerpt(short); got != short {
		t.Fatalf("64 bytes: %q", got)
	}
	if got := Excerpt(strings.Repeat("a", 65)); got != short+"…" {
		t.Fatalf("65 bytes: %q", got)
	}
	// a two-byte rune across the 64th byte is left out whole
	s := strings.Repeat("a", 63) + "é" + "bbb"
	if got := Excerpt(s); got != strings.Repeat("a", 63)+"…" {
		t.Fatalf("cut rune: %q", got)
	}
}
