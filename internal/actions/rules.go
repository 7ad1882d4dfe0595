package actions

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxActions is the most actions a team may hold.
const MaxActions = 1000

// selectedValue is the parameter every action may name: the value the user selected.
const selectedValue = "selected_value"

// placeholder is what may stand between double braces in an action's URL: a scope ($p the
// action's parameters, $d the log's data, $l its labels, $m its metadata) and a dotted path.
var placeholder = regexp.MustCompile(`^\$([pdlm])\.([A-Za-z0-9_@-]+(?:\.[A-Za-z0-9_@-]+)*)$`)

// checkInput checks an action as clients write it and returns it as it is stored (without id
// and createdBy). field is the place of the action in the request ("" for a whole body,
// "action." for a replace), put in front of every field the errors name.
//
// Errors: Invalid naming the field and the rule: name blank; url missing, not http(s), not a URL,
// or with a placeholder that is malformed, of an unknown scope or naming an undeclared
// parameter; urlFields with a blank or repeated name; an empty or repeated application or
// subsystem name.
func checkInput(field string, in oas.ActionInput) (oas.Action, error) {
	name := in.Name.Or("")
	if strings.TrimSpace(name) == "" {
		return oas.Action{}, apierror.Invalidf("%sname: required, 1 to 50 characters, not only spaces", field)
	}
	params := map[string]bool{selectedValue: true}
	for i, f := range in.UrlFields {
		if strings.TrimSpace(f.Name) == "" {
			return oas.Action{}, apierror.Invalidf("%surlFields[%d].name: must not be blank", field, i)
		}
		if params[f.Name] && f.Name != selectedValue {
			return oas.Action{}, apierror.Invalidf("%surlFields[%d].name: %q is declared twice; names must be unique", field, i, f.Name)
		}
		params[f.Name] = true
	}
	if err := checkURL(field+"url", in.URL.Or(""), params); err != nil {
		return oas.Action{}, err
	}
	if err := checkNames(field+"applicationNames", in.ApplicationNames); err != nil {
		return oas.Action{}, err
	}
	if err := checkNames(field+"subsystemNames", in.SubsystemNames); err != nil {
		return oas.Action{}, err
	}
	return oas.Action{
		Name: in.Name, Description: in.Description, URL: in.URL, IsPrivate: oas.NewOptBool(in.IsPrivate.Or(false)),
		SourceType: in.SourceType, ApplicationNames: orEmpty(in.ApplicationNames), SubsystemNames: orEmpty(in.SubsystemNames),
		DpxlFilter: in.DpxlFilter, UrlFields: orEmptyFields(in.UrlFields),
	}, nil
}

// inputOf is a stored or replacing action as the create's input, for checkInput.
func inputOf(a oas.Action) oas.ActionInput {
	return oas.ActionInput{
		Name: a.Name, Description: a.Description, URL: a.URL, IsPrivate: a.IsPrivate, SourceType: a.SourceType,
		ApplicationNames: a.ApplicationNames, SubsystemNames: a.SubsystemNames, DpxlFilter: a.DpxlFilter, UrlFields: a.UrlFields,
	}
}

// checkURL checks the URL template raw: http or https, a URL once its placeholders are filled,
// and every placeholder well formed, of a known scope, and naming a declared parameter when it
// is one ($p).
func checkURL(field, raw string, params map[string]bool) error {
	if raw == "" {
		return apierror.Invalidf("%s: required, an http:// or https:// URL", field)
	}
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return apierror.Invalidf("%s: must start with http:// or https://", field)
	}
	var filled strings.Builder
	rest := raw
	for {
		open := strings.Index(rest, "{{")
		closing := strings.Index(rest, "}}")
		if open < 0 {
			if closing >= 0 {
				return apierror.Invalidf("%s: \"}}\" at offset %d closes no placeholder", field, len(raw)-len(rest)+closing)
			}
			filled.WriteString(rest)
			break
		}
		if closing >= 0 && closing < open {
			return apierror.Invalidf("%s: \"}}\" at offset %d closes no placeholder", field, len(raw)-len(rest)+closing)
		}
		end := strings.Index(rest[open+2:], "}}")
		if end < 0 {
			return apierror.Invalidf("%s: the placeholder at offset %d is not closed with \"}}\"", field, len(raw)-len(rest)+open)
		}
		inner := strings.TrimSpace(rest[open+2 : open+2+end])
		m := placeholder.FindStringSubmatch(inner)
		if m == nil {
			return apierror.Invalidf("%s: placeholder {{%s}} must be {{$p.NAME}}, {{$d.PATH}}, {{$l.NAME}} or {{$m.NAME}}", field, apierror.Excerpt(inner))
		}
		if m[1] == "p" && !params[m[2]] {
			return apierror.Invalidf("%s: placeholder {{%s}} names parameter %q, which is neither %s nor one of urlFields", field, inner, m[2], selectedValue)
		}
		filled.WriteString(rest[:open])
		filled.WriteString("x")
		rest = rest[open+2+end+2:]
	}
	u, err := url.Parse(filled.String())
	if err != nil || u.Host == "" {
		return apierror.Invalidf("%s: not a URL with a host once its placeholders are filled in", field)
	}
	return nil
}

// checkNames refuses an empty or repeated name in names.
func checkNames(field string, names []string) error {
	seen := map[string]bool{}
	for i, n := range names {
		if n == "" {
			return apierror.Invalidf("%s[%d]: must not be empty", field, i)
		}
		if seen[n] {
			return apierror.Invalidf("%s[%d]: %q is listed twice", field, i, n)
		}
		seen[n] = true
	}
	return nil
}

// checkID refuses an action id that is not a UUID.
func checkID(field, id string) error {
	if id == "" {
		return apierror.Invalidf("%s: required; it names the action", field)
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return apierror.Invalidf("%s: %q is not an action id (a UUID)", field, apierror.Excerpt(id))
	}
	return nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyFields(s []oas.ActionURLField) []oas.ActionURLField {
	if s == nil {
		return []oas.ActionURLField{}
	}
	return s
}
