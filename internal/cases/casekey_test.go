package cases

import (
	"regexp"
	"testing"
)

// TestIsLowerUUID checks the hand-written check against the regular expression it replaced.
func TestIsLowerUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	base := "0b8e3c1a-6a0e-4d4e-9a43-0c5b8e0d1f22"
	cases := []string{base, "", "CASE-1", base + "0", base[:35], "0B8E3C1A-6A0E-4D4E-9A43-0C5B8E0D1F22",
		"0b8e3c1a06a0e-4d4e-9a43-0c5b8e0d1f22", "0b8e3c1a-6a0e-4d4e-9a43-0c5b8e0d1f2g", "g" + base[1:]}
	// Every byte in every position.
	for i := range len(base) {
		for c := 0; c < 256; c++ {
			cases = append(cases, base[:i]+string([]byte{byte(c)})+base[i+1:])
		}
	}
	for _, s := range cases {
		if got, want := isLowerUUID(s), re.MatchString(s); got != want {
			t.Fatalf("isLowerUUID(%q) = %v, the expression says %v", s, got, want)
		}
	}
}
