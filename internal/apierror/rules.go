package apierror

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ogen-go/ogen/validate"
)

// count writes "1 character", "2 characters".
func count(n int, unit string) string {
	if n == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	return strconv.Itoa(n) + " " + unit
}

var intBound = regexp.MustCompile(`value (-?\d+) (less|greater) than (-?\d+)`)

// floatBound is the generated validator's words for a number outside its minimum or maximum; it
// prints both with six decimals.
var floatBound = regexp.MustCompile(`^float: value (-?[\d.]+) (less|greater) than (-?[\d.]+)$`)

// decimal trims the validator's six-decimal form: "100.000100" → "100.0001", "0.000000" → "0".
func decimal(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// latin1Pattern is the public documents' pattern for Latin-1 text (policy names and descriptions).
const latin1Pattern = `^[\x00-\xFF]*$`

// DescribeRule says in words which rule a leaf validation error of the generated code broke
// ("must have at most 512 characters (got 513)"); errors it does not know keep their own text.
func DescribeRule(err error) string {
	text := err.Error()
	unit := "items"
	if strings.HasPrefix(text, "string") {
		unit = "characters"
	}
	var minLen *validate.MinLengthError
	var maxLen *validate.MaxLengthError
	var regex *validate.NoRegexMatchError
	var num *strconv.NumError
	switch {
	case errors.Is(err, validate.ErrFieldRequired):
		return "is required"
	case errors.As(err, &minLen):
		return fmt.Sprintf("must have at least %s (got %d)", count(minLen.MinLength, unit), minLen.Len)
	case errors.As(err, &maxLen):
		return fmt.Sprintf("must have at most %s (got %d)", count(maxLen.MaxLength, unit), maxLen.Len)
	case errors.As(err, &regex) && regex.Pattern.String() == latin1Pattern:
		return "must hold only Latin-1 characters (U+0000 to U+00FF)"
	case errors.As(err, &regex):
		return fmt.Sprintf("must match the pattern %s", regex.Pattern)
	case errors.As(err, &num) && num.Func == "ParseBool":
		return fmt.Sprintf("must be true or false (got %q)", num.Num)
	case errors.As(err, &num) && num.Func == "ParseFloat":
		return fmt.Sprintf("must be a number (got %q)", num.Num)
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange):
		return fmt.Sprintf("must be an integer within range (got %q)", num.Num)
	case errors.As(err, &num):
		return fmt.Sprintf("must be an integer (got %q)", num.Num)
	}
	if m := floatBound.FindStringSubmatch(text); m != nil {
		got, bound := decimal(m[1]), decimal(m[3])
		switch {
		case m[2] == "greater":
			return fmt.Sprintf("must be at most %s (got %s)", bound, got)
		case got == bound:
			// Only an exclusive minimum refuses its own value.
			return fmt.Sprintf("must be greater than %s (got %s)", bound, got)
		default:
			return fmt.Sprintf("must be at least %s (got %s)", bound, got)
		}
	}
	if m := intBound.FindStringSubmatch(text); m != nil {
		if m[2] == "less" {
			return fmt.Sprintf("must be at least %s (got %s)", m[3], m[1])
		}
		return fmt.Sprintf("must be at most %s (got %s)", m[3], m[1])
	}
	if strings.Contains(text, "nil is invalid value") {
		return "must not be null"
	}
	return text
}
