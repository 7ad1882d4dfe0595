package dashboards

import (
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Bounds of the dashboard document, in characters (code points) or items.
const (
	IDLength              = 21
	MaxNameLength         = 100
	MaxSlugLength         = 255
	MaxDescriptionLength  = 4096
	MaxMessageTemplate    = 1000
	MaxAnnotationLabels   = 10
	MaxFolderPathSegments = 2
	MaxCatalogItems       = 100000
)

var (
	uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	slugPattern = regexp.MustCompile(`^[a-z0-9]+(?:[-_]+[a-z0-9]+)*$`)
)

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newID returns a random dashboard id: 21 letters and digits.
func newID() (string, error) {
	var b strings.Builder
	limit := big.NewInt(int64(len(idAlphabet)))
	for range IDLength {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", fmt.Errorf("dashboard id: %w", err)
		}
		b.WriteByte(idAlphabet[n.Int64()])
	}
	return b.String(), nil
}

// document is a dashboard decoded for checking: each top-level field as generic JSON.
type document map[string]any

// decode turns the request's dashboard into generic JSON for the checks.
func decode(d oas.Dashboard) (document, error) {
	doc := document{}
	for k, raw := range d {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, apierror.Invalidf("dashboard.%s: not valid JSON", k)
		}
		doc[k] = v
	}
	return doc, nil
}

// checkDashboard enforces the dashboard bounds (see the Dashboard schema of api/openapi.yaml) and
// answers the dashboard's name and slug (empty when none).
//
// Errors: Invalid naming the field path under dashboard and the rule broken (the first of
// dashboardViolations).
func checkDashboard(doc document) (name, slug string, err error) {
	name, slug, violations := dashboardViolations(doc)
	if len(violations) > 0 {
		return "", "", violations[0]
	}
	return name, slug, nil
}

// dashboardViolations checks every part of the dashboard and answers its name and slug (empty
// when missing or broken) and each broken rule, in document order of the checks: name, slugName,
// description, layout, folderId, folderPath, each variable, each variableV2, each annotation, then
// every line chart and spans-query source anywhere. Within one part, only its first broken rule is
// reported.
func dashboardViolations(doc document) (name, slug string, violations []error) {
	const at = "dashboard"
	broken := func(err error) bool {
		if err != nil {
			violations = append(violations, err)
		}
		return err != nil
	}
	if n, err := requiredText(doc, at, "name", 1, MaxNameLength); !broken(err) {
		name = n
	}
	if v, ok := present(doc, "slugName"); ok {
		s, err := text(v, at+".slugName", 1, MaxSlugLength)
		switch {
		case broken(err):
		case !slugPattern.MatchString(s):
			broken(apierror.Invalidf("%s.slugName: must be lowercase letters and digits joined by - or _ (got %q)", at, s))
		default:
			slug = s
		}
	}
	if v, ok := present(doc, "description"); ok {
		_, err := text(v, at+".description", 0, MaxDescriptionLength)
		broken(err)
	}
	if layout, ok := present(doc, "layout"); !ok {
		broken(apierror.Invalidf("%s.layout: required", at))
	} else {
		_, err := object(layout, at+".layout")
		broken(err)
	}
	if v, ok := present(doc, "folderId"); ok {
		broken(uuidObject(v, at+".folderId"))
	}
	if v, ok := present(doc, "folderPath"); ok {
		broken(checkFolderPath(v, at+".folderPath"))
	}
	eachObject(doc, at, "variables", broken, func(o map[string]any, p string) error {
		return checkNames(o, p)
	})
	eachObject(doc, at, "variablesV2", broken, func(o map[string]any, p string) error {
		if v, ok := present(o, "id"); ok {
			if err := uuidObject(v, p+".id"); err != nil {
				return err
			}
		}
		return checkNames(o, p)
	})
	eachObject(doc, at, "annotations", broken, checkAnnotation)
	for _, r := range requiredMembers {
		requireAt(map[string]any(doc), at, strings.Split(r.path, "."), r.names, broken)
	}
	walk(map[string]any(doc), at, broken)
	return name, slug, violations
}

// requiredMembers are members of the parts of a dashboard that the public dashboard schema
// requires (a section's id is the issue's example: sections are known by it), by the path of
// the part; "[]" is each item of an array. A part that is absent, or not an object, is left to
// the other checks.
var requiredMembers = []struct {
	path  string
	names []string
}{
	{"layout.sections[]", []string{"id"}},
	{"layout.sections[].rows[]", []string{"id"}},
	{"layout.sections[].rows[].widgets[].definition.lineChart.queryDefinitions[]", []string{"id", "query"}},
	{"layout.sections[].rows[].widgets[].definition.dynamic.queryDefinitions[]", []string{"id", "query"}},
}

// requireAt reports each of names missing (or null) from the objects at path under v.
func requireAt(v any, p string, path []string, names []string, broken func(error) bool) {
	o, ok := v.(map[string]any)
	if !ok {
		return
	}
	if len(path) == 0 {
		for _, n := range names {
			if _, ok := present(o, n); !ok {
				broken(apierror.Invalidf("%s.%s: required", p, n))
			}
		}
		return
	}
	name, each := strings.CutSuffix(path[0], "[]")
	next, ok := present(o, name)
	if !ok {
		return
	}
	if !each {
		requireAt(next, p+"."+name, path[1:], names, broken)
		return
	}
	items, _ := next.([]any)
	for i, it := range items {
		requireAt(it, fmt.Sprintf("%s.%s[%d]", p, name, i), path[1:], names, broken)
	}
}

// checkFolderPath requires 1 to 2 segments of 1 to 100 characters each.
func checkFolderPath(v any, p string) error {
	o, err := object(v, p)
	if err != nil {
		return err
	}
	segs, _ := present(o, "segments")
	var items []any
	if segs != nil {
		if items, err = array(segs, p+".segments"); err != nil {
			return err
		}
	}
	if len(items) < 1 || len(items) > MaxFolderPathSegments {
		return apierror.Invalidf("%s.segments: must have 1 to %d items (got %d)", p, MaxFolderPathSegments, len(items))
	}
	for i, s := range items {
		if _, err := text(s, fmt.Sprintf("%s.segments[%d]", p, i), 1, MaxNameLength); err != nil {
			return err
		}
	}
	return nil
}

// checkNames bounds a variable's name and displayName when given.
func checkNames(o map[string]any, p string) error {
	for _, f := range []string{"name", "displayName"} {
		if v, ok := present(o, f); ok {
			if _, err := text(v, p+"."+f, 1, MaxNameLength); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkAnnotation bounds an annotation's id, name and each source kind's messageTemplate,
// labelFields and labels.
func checkAnnotation(o map[string]any, p string) error {
	if v, ok := present(o, "id"); ok {
		if err := uuidText(v, p+".id"); err != nil {
			return err
		}
	}
	if v, ok := present(o, "name"); ok {
		if _, err := text(v, p+".name", 1, MaxNameLength); err != nil {
			return err
		}
	}
	src, ok := present(o, "source")
	if !ok {
		return nil
	}
	so, err := object(src, p+".source")
	if err != nil {
		return err
	}
	for _, kind := range sortedKeys(so) {
		ko, ok := so[kind].(map[string]any)
		if !ok {
			continue
		}
		kp := p + ".source." + kind
		if v, ok := present(ko, "messageTemplate"); ok {
			if _, err := text(v, kp+".messageTemplate", 0, MaxMessageTemplate); err != nil {
				return err
			}
		}
		for _, f := range []string{"labelFields", "labels"} {
			if v, ok := present(ko, f); ok {
				items, err := array(v, kp+"."+f)
				if err != nil {
					return err
				}
				if len(items) > MaxAnnotationLabels {
					return apierror.Invalidf("%s.%s: must have at most %d items (got %d)", kp, f, MaxAnnotationLabels, len(items))
				}
			}
		}
	}
	return nil
}

// walk visits every object of the document and reports to broken: each line chart needs at
// least one query definition, and each spans-query fieldValue source exactly one of
// observationField and value.
func walk(v any, p string, broken func(error) bool) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			walk(e, fmt.Sprintf("%s[%d]", p, i), broken)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			kp := p + "." + k
			switch k {
			case "lineChart":
				if lc, ok := x[k].(map[string]any); ok {
					qd, _ := present(lc, "queryDefinitions")
					items, ok := qd.([]any)
					switch {
					case qd != nil && !ok:
						broken(apierror.Invalidf("%s.queryDefinitions: must be an array", kp))
					case len(items) < 1:
						broken(apierror.Invalidf("%s.queryDefinitions: must have at least 1 item", kp))
					}
				}
			case "spansQuery":
				broken(checkSpansQuery(x[k], kp))
			}
			walk(x[k], kp, broken)
		}
	}
}

func checkSpansQuery(v any, p string) error {
	sq, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	t, ok := sq["type"].(map[string]any)
	if !ok {
		return nil
	}
	fv, ok := t["fieldValue"].(map[string]any)
	if !ok {
		return nil
	}
	_, obs := present(fv, "observationField")
	_, val := present(fv, "value")
	switch {
	case obs && val:
		return apierror.Invalidf("%s.type.fieldValue: give exactly one of observationField and value, not both", p)
	case !obs && !val:
		return apierror.Invalidf("%s.type.fieldValue: give exactly one of observationField (preferred) and value", p)
	}
	return nil
}

// eachObject calls fn on each item of the array field f of o (absent or null: no items) and
// reports to broken what is wrong: the field not being an array, an item not being an object, or
// fn's error.
func eachObject(o map[string]any, p, f string, broken func(error) bool, fn func(map[string]any, string) error) {
	v, ok := present(o, f)
	if !ok {
		return
	}
	items, err := array(v, p+"."+f)
	if broken(err) {
		return
	}
	for i, it := range items {
		ip := fmt.Sprintf("%s.%s[%d]", p, f, i)
		io, err := object(it, ip)
		if !broken(err) {
			broken(fn(io, ip))
		}
	}
}

// present answers o[f] when it is given and not null.
func present(o map[string]any, f string) (any, bool) {
	v, ok := o[f]
	return v, ok && v != nil
}

func requiredText(o map[string]any, p, f string, lo, hi int) (string, error) {
	v, ok := present(o, f)
	if !ok {
		return "", apierror.Invalidf("%s.%s: required", p, f)
	}
	return text(v, p+"."+f, lo, hi)
}

func text(v any, p string, lo, hi int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", apierror.Invalidf("%s: must be a string", p)
	}
	if n := utf8.RuneCountInString(s); n < lo || n > hi {
		return "", apierror.Invalidf("%s: length must be %d to %d characters (got %d)", p, lo, hi, n)
	}
	return s, nil
}

func uuidText(v any, p string) error {
	s, ok := v.(string)
	if !ok {
		return apierror.Invalidf("%s: must be a string", p)
	}
	if !uuidPattern.MatchString(s) {
		return apierror.Invalidf("%s: must be a UUID of 36 characters (got %q)", p, s)
	}
	return nil
}

// uuidObject checks a {value: UUID} object.
func uuidObject(v any, p string) error {
	o, err := object(v, p)
	if err != nil {
		return err
	}
	val, ok := present(o, "value")
	if !ok {
		return apierror.Invalidf("%s.value: required", p)
	}
	return uuidText(val, p+".value")
}

func object(v any, p string) (map[string]any, error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, apierror.Invalidf("%s: must be an object", p)
	}
	return o, nil
}

func array(v any, p string) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, apierror.Invalidf("%s: must be an array", p)
	}
	return a, nil
}

func sortedKeys(o map[string]any) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withID returns the dashboard with its id field set to id.
func withID(d oas.Dashboard, id string) oas.Dashboard {
	out := make(oas.Dashboard, len(d)+1)
	for k, v := range d {
		out[k] = v
	}
	out["id"] = jx.Raw(`"` + id + `"`)
	return out
}

// Bounds of a check's answer: issues, an issue's location (bytes) and message (characters).
const (
	MaxIssues        = 1000
	MaxIssueLocation = 512
	MaxIssueMessage  = 4096
)

// folderOf is the document's folderId.value (checked to be a UUID), NULL when it has none.
func folderOf(doc document) sql.NullString {
	f, _ := doc["folderId"].(map[string]any)
	v, ok := f["value"].(string)
	return sql.NullString{String: v, Valid: ok}
}

// inFolder returns the document with folderId set to {value: folder}, or removed when folder is
// empty; folderPath is removed either way, as the folder the caller named replaces it.
func inFolder(d oas.Dashboard, folder string) oas.Dashboard {
	out := make(oas.Dashboard, len(d)+1)
	for k, v := range d {
		if k != "folderId" && k != "folderPath" {
			out[k] = v
		}
	}
	if folder != "" {
		out["folderId"] = jx.Raw(`{"value":"` + folder + `"}`) // a UUID: nothing to escape
	}
	return out
}

// issueOf turns a check's message "<path>: <rule>" (the path under "dashboard") into an issue at
// that path's JSON Pointer.
func issueOf(message string, severity oas.DashboardIssueSeverity) oas.DashboardIssue {
	path, _, _ := strings.Cut(message, ": ")
	if r := []rune(message); len(r) > MaxIssueMessage {
		message = string(r[:MaxIssueMessage])
	}
	return oas.DashboardIssue{Location: pointerOf(path), Message: message, Severity: severity}
}

// pointerOf turns a path such as dashboard.layout.sections[0].rows into the JSON Pointer
// (RFC 6901) /layout/sections/0/rows of the part of the dashboard it names.
func pointerOf(path string) string {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "dashboard"), ".")
	if path == "" {
		return ""
	}
	path = strings.ReplaceAll(strings.ReplaceAll(path, "[", "."), "]", "")
	var b strings.Builder
	for _, seg := range strings.Split(path, ".") {
		seg = "/" + strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1")
		if b.Len()+len(seg) > MaxIssueLocation {
			break // the deepest part that fits: a pointer is at most MaxIssueLocation bytes
		}
		b.WriteString(seg)
	}
	return b.String()
}

// deprecatedValueSources lists the paths (as the checks name them) of every spans-query
// fieldValue source that uses the deprecated value rather than observationField.
func deprecatedValueSources(doc document) []string {
	var out []string
	var visit func(v any, p string)
	visit = func(v any, p string) {
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				visit(e, fmt.Sprintf("%s[%d]", p, i))
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				kp := p + "." + k
				if k == "spansQuery" {
					sq, _ := x[k].(map[string]any)
					t, _ := sq["type"].(map[string]any)
					fv, _ := t["fieldValue"].(map[string]any)
					_, obs := present(fv, "observationField")
					if _, val := present(fv, "value"); val && !obs {
						out = append(out, kp+".type.fieldValue.value")
					}
				}
				visit(x[k], kp)
			}
		}
	}
	visit(map[string]any(doc), "dashboard")
	return out
}
