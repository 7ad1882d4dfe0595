package promrules

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// groupSource is one part of a team's rule file: the groups it reads, and the permission a key
// needs to read them.
type groupSource struct {
	// what names the part in a 403's message.
	what       string
	permission string
	// groups answers the part's groups and what it left out (LeftOut), with the reasons.
	groups func(ctx context.Context, q db.Querier, teamID int64) ([]Group, []LeftOut, error)
}

// fileSources are the parts of a team's rule file, in the order their groups appear in it.
// GetPrometheusRules' x-permission (api/openapi.yaml) is the first part's permission; TeamFile
// checks every part's, so a key that can read the recording-rule sets but not the SLOs gets a 403
// rather than a file silently missing the SLO alerts.
var fileSources = []groupSource{
	{what: "the recording-rule sets", permission: "metrics.recording-rules:ReadConfig", groups: everySet},
	{what: "the SLOs' burn-rate rules", permission: "slo:ReadConfig", groups: SLOGroupsAndSkips},
	{what: "the alert definitions' rules", permission: "alerts:ReadConfig", groups: AlertDefGroupsAndSkips},
}

// everySet is RecordingRuleGroups as a part of the file: every stored set has its groups, so
// nothing is left out.
func everySet(ctx context.Context, q db.Querier, teamID int64) ([]Group, []LeftOut, error) {
	groups, err := RecordingRuleGroups(ctx, q, teamID)
	return groups, nil, err
}

// TeamFile returns the caller's team's rule file: the groups of every part of fileSources, in
// order, with names made unique across parts (see uniqueGroupNames), and what the parts left out.
//
// Errors: Forbidden, naming the permission, when the caller lacks the permission of a part.
func TeamFile(ctx context.Context, q db.Querier, caller *auth.Principal) (File, error) {
	for _, source := range fileSources {
		if !caller.Can(source.permission) {
			return File{}, apierror.Forbiddenf("the API key lacks the permission %q, which reading %s of the rule file requires",
				source.permission, source.what)
		}
	}
	file := File{Groups: []Group{}}
	for _, source := range fileSources {
		groups, leftOut, err := source.groups(ctx, q, caller.TeamID)
		if err != nil {
			return File{}, err
		}
		file.Groups = append(file.Groups, groups...)
		file.LeftOut = append(file.LeftOut, leftOut...)
	}
	uniqueGroupNames(file.Groups)
	return file, nil
}

// uniqueGroupNames renames, in place, each group whose name an earlier group already has, by
// appending " [2]", " [3]"… (the first free one). Each part names its own groups uniquely; this
// keeps the file loadable when two parts happen to choose the same name.
func uniqueGroupNames(groups []Group) {
	taken := make(map[string]bool, len(groups))
	for i := range groups {
		name := groups[i].Name
		for n := 2; taken[name]; n++ {
			name = groups[i].Name + " [" + strconv.Itoa(n) + "]"
		}
		groups[i].Name = name
		taken[name] = true
	}
}

// LeftOutComment starts each comment line of a rendered file that names what was left out of it:
// "# left out: <kind> <id> <name, quoted>: <reason>".
const LeftOutComment = "# left out: "

// YAML renders the file as Prometheus reads it: two-space indents, map keys (labels, annotations)
// sorted, so that the same file always renders to the same bytes and a changed rendering means a
// changed file. A file with no groups renders as "groups: []". What was left out comes first, a
// comment line each (LeftOutComment), which Prometheus ignores and a reader of the file sees.
func (f File) YAML() ([]byte, error) {
	if f.Groups == nil {
		f.Groups = []Group{}
	}
	for i := range f.Groups {
		if f.Groups[i].Rules == nil {
			f.Groups = append([]Group(nil), f.Groups...) // the caller's groups stay as they are
			for j := range f.Groups {
				if f.Groups[j].Rules == nil {
					f.Groups[j].Rules = []Rule{}
				}
			}
			break
		}
	}
	var out bytes.Buffer
	for _, l := range f.LeftOut {
		out.WriteString(LeftOutComment + oneLine(l.Kind+" "+l.ID+" "+strconv.Quote(l.Name)+": "+l.Reason) + "\n")
	}
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("render rule file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("render rule file: %w", err)
	}
	return out.Bytes(), nil
}

// oneLine is s with each control character (a line break above all) written as a space, so that
// it stays within its comment line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
