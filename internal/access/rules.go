package access

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Member statuses as stored and answered.
const (
	statusActive   = string(oas.TeamMemberStatusUSERSTATUSACTIVE)
	statusInactive = string(oas.TeamMemberStatusUSERSTATUSINACTIVE)
)

// Bounds of the access resources, in characters (code points) or items.
const (
	MaxNameLength        = 255
	MaxDescriptionLength = 1000
	MaxUsernameLength    = 320
	MaxExpressionLength  = 4096
	MaxScopeFilters      = 50
	MaxGroupUsers        = 1000
	MaxPageSize          = 1000
	DefaultPageSize      = 100
	// MaxTeamAdmins is the most addresses a team creation names as administrators.
	MaxTeamAdmins = 100
)

// The groups' origins as answered.
const (
	originBuiltIn     = string(oas.TeamGroupGroupOriginGROUPORIGINBUILTIN)
	originUserDefined = string(oas.TeamGroupGroupOriginGROUPORIGINUSERDEFINED)
)

// TeamAdminsGroup is the name of the built-in group a team creation puts its administrators in;
// it holds the system role Platform Admin (id 1).
const TeamAdminsGroup = "Team Admins"

// platformAdminRole is the id of the system role Platform Admin (internal/roles).
const platformAdminRole = 1

var emailPattern = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)

// CheckEmail enforces the shape of a member's username, an email address.
//
// Errors: Invalid naming field.
func CheckEmail(field, email string) error {
	if n := utf8.RuneCountInString(email); n < 1 || n > MaxUsernameLength {
		return apierror.Invalidf("%s: length must be 1 to %d characters (got %d)", field, MaxUsernameLength, n)
	}
	if !emailPattern.MatchString(email) {
		return apierror.Invalidf("%s: must be an email address (local@domain), not %q", field, email)
	}
	return nil
}

// checkLength enforces an upper bound, and a lower one of 1 non-whitespace character when
// required.
func checkLength(field, s string, max int, required bool) error {
	n := utf8.RuneCountInString(s)
	if n > max {
		return apierror.Invalidf("%s: length must be at most %d characters (got %d)", field, max, n)
	}
	if required && strings.TrimSpace(s) == "" {
		return apierror.Invalidf("%s: is required and must contain a non-whitespace character", field)
	}
	return nil
}

// checkExpression enforces a scope expression: "<v1>" and a condition of at most
// MaxExpressionLength characters, not empty, whose quotes (' and ") are closed and whose
// parentheses balance.
//
// Errors: Invalid naming field.
func checkExpression(field, e string) error {
	body, ok := strings.CutPrefix(e, "<v1>")
	if !ok {
		return apierror.Invalidf("%s: must begin with the version tag <v1>, as in <v1>true", field)
	}
	if strings.TrimSpace(body) == "" {
		return apierror.Invalidf("%s: must hold a condition after <v1>, as in <v1>true", field)
	}
	if n := utf8.RuneCountInString(body); n > MaxExpressionLength {
		return apierror.Invalidf("%s: the condition must be at most %d characters (got %d)", field, MaxExpressionLength, n)
	}
	depth := 0
	var quote rune
	escaped := false
	for i, r := range body {
		switch {
		case quote != 0:
			if escaped {
				escaped = false
			} else if r == '\\' {
				escaped = true
			} else if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return apierror.Invalidf("%s: the ')' at character %d closes no '('", field, i+5)
			}
		}
	}
	if quote != 0 {
		return apierror.Invalidf("%s: a %c quote is not closed", field, quote)
	}
	if depth > 0 {
		return apierror.Invalidf("%s: %d '(' not closed", field, depth)
	}
	return nil
}

// pageOf turns a page size and an offset token into a limit and offset.
//
// Errors: Invalid naming page_size or page_token.
func pageOf(size int64, sizeSet bool, token string) (limit, offset int64, err error) {
	limit = DefaultPageSize
	if sizeSet && size > 0 {
		if size > MaxPageSize {
			return 0, 0, apierror.Invalidf("page_size: must be at most %d (got %d)", MaxPageSize, size)
		}
		limit = size
	}
	if token != "" {
		if _, err := fmt.Sscanf(token, "%d", &offset); err != nil || offset < 0 || fmt.Sprint(offset) != token {
			return 0, 0, apierror.Invalidf("page_token: %q is not a token this server gave (a nextPageToken)", token)
		}
	}
	return limit, offset, nil
}
