// Package permissiontable renders the permission tables of docs/permissions.md from their
// sources: api/openapi.yaml (the x-permission of each operation) and the catalog and presets of
// internal/auth. The page's generated block is never edited by hand; its test fails when the block
// differs from what the sources give, and rewrites it when run with -update:
//
//	go test ./internal/api/permissiontable -update
package permissiontable

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-faster/yaml"

	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// OperatorPermission is the x-permission of the operations that the operator key guards; it is
// not in the catalog because no API key can hold it.
const OperatorPermission = "operator"

// Begin and End mark the generated block of docs/permissions.md; what lies between them is
// replaced, what lies around them is the page's hand-written prose.
const (
	Begin = "<!-- BEGIN GENERATED permission tables: go test ./internal/api/permissiontable -update (do not edit) -->"
	End   = "<!-- END GENERATED permission tables -->"
)

// Operation is one operation of the OpenAPI document with the permission it requires.
type Operation struct {
	Tag, OperationID, Summary, Method, Path, Permission string
}

// Operations reads every operation of the OpenAPI document, ordered by its first tag (in the
// order of the document's top-level tags) and then in document order. It fails when the document
// does not parse, or an operation has no operationId, no tag or no x-permission.
func Operations(document []byte) ([]Operation, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(document, &root); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	if len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("openapi document: the top level is not a mapping")
	}
	var tagOrder []string
	var ops []Operation
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, value := top.Content[i].Value, top.Content[i+1]
		switch key {
		case "tags":
			var tags []struct {
				Name string `yaml:"name"`
			}
			if err := value.Decode(&tags); err != nil {
				return nil, fmt.Errorf("openapi document: tags: %w", err)
			}
			for _, t := range tags {
				tagOrder = append(tagOrder, t.Name)
			}
		case "paths":
			for j := 0; j+1 < len(value.Content); j += 2 {
				path, item := value.Content[j].Value, value.Content[j+1]
				for k := 0; k+1 < len(item.Content); k += 2 {
					method := item.Content[k].Value
					if method == "parameters" || method == "summary" || method == "description" || method == "servers" {
						continue
					}
					var op struct {
						OperationID string   `yaml:"operationId"`
						Summary     string   `yaml:"summary"`
						Tags        []string `yaml:"tags"`
						Permission  string   `yaml:"x-permission"`
					}
					if err := item.Content[k+1].Decode(&op); err != nil {
						return nil, fmt.Errorf("openapi document: %s %s: %w", method, path, err)
					}
					switch {
					case op.OperationID == "":
						return nil, fmt.Errorf("openapi document: %s %s has no operationId", method, path)
					case len(op.Tags) == 0:
						return nil, fmt.Errorf("openapi document: %s (%s %s) has no tag", op.OperationID, method, path)
					case op.Permission == "":
						return nil, fmt.Errorf("openapi document: %s (%s %s) has no x-permission", op.OperationID, method, path)
					}
					ops = append(ops, Operation{Tag: op.Tags[0], OperationID: op.OperationID, Summary: op.Summary,
						Method: strings.ToUpper(method), Path: path, Permission: op.Permission})
				}
			}
		}
	}
	rank := func(tag string) int {
		if i := slices.Index(tagOrder, tag); i >= 0 {
			return i
		}
		return len(tagOrder)
	}
	slices.SortStableFunc(ops, func(a, b Operation) int { return rank(a.Tag) - rank(b.Tag) })
	return ops, nil
}

// Render returns the generated block (without its Begin and End lines): the operations and the
// permission each requires, the permission catalog with the number of operations that require
// each permission, the retired names and the public names each stands for, and the presets with
// their permissions.
func Render(ops []Operation, catalog []auth.Permission, old []auth.OldName, presets []auth.Preset) string {
	var b strings.Builder
	b.WriteString("### Operations\n\n")
	b.WriteString("| area | operation | method and path | permission |\n|---|---|---|---|\n")
	for _, op := range ops {
		permission := "`" + op.Permission + "`"
		if op.Permission == OperatorPermission {
			permission = "operator key"
		}
		fmt.Fprintf(&b, "| %s | %s (`%s`) | `%s %s` | %s |\n",
			cell(op.Tag), cell(op.Summary), op.OperationID, op.Method, op.Path, permission)
	}
	uses := make(map[string]int)
	for _, op := range ops {
		uses[op.Permission]++
	}
	b.WriteString("\n### Permission catalog\n\n")
	b.WriteString("The public names, matched in any case. Hidden: not offered in the real service's pickers, taken all the same.\n\n")
	b.WriteString("| permission | group | level | what it allows | operations requiring it |\n|---|---|---|---|---|\n")
	for _, p := range catalog {
		desc := p.Description
		if p.Hidden {
			desc += " (hidden)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %d |\n", p.Name, cell(p.Group), p.Level, cell(desc), uses[p.Name])
	}
	b.WriteString("\n### Retired names\n\n")
	b.WriteString("Taken in requests, in any case, for one release, as the public names they stand for; never answered.\n\n")
	b.WriteString("| retired name | public names |\n|---|---|\n")
	for _, o := range old {
		fmt.Fprintf(&b, "| `%s` | %s |\n", o.Name, quoted(o.Public))
	}
	b.WriteString("\n### Presets\n\n")
	b.WriteString("Usable by name (exactly as written) in `keyPermissions.presets`.\n\n")
	b.WriteString("| preset | of | what it is for | permissions |\n|---|---|---|---|\n")
	for _, p := range presets {
		perms := "every permission of the catalog, including those that later versions add"
		if p.Name != auth.FullAccess {
			perms = quoted(p.Permissions)
		}
		of := "mgmtapi"
		if p.Public {
			of = "public"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p.Name, of, cell(p.Description), perms)
	}
	return b.String()
}

func quoted(names []string) string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = "`" + name + "`"
	}
	return strings.Join(out, ", ")
}

// Replace returns page with the text between its Begin and End lines replaced by block. It fails
// unless page holds exactly one Begin line followed by one End line.
func Replace(page, block string) (string, error) {
	if strings.Count(page, Begin) != 1 || strings.Count(page, End) != 1 {
		return "", fmt.Errorf("the page must hold the line %q once and then the line %q once", Begin, End)
	}
	before, rest, _ := strings.Cut(page, Begin)
	_, after, _ := strings.Cut(rest, End)
	if strings.Contains(before, End) {
		return "", fmt.Errorf("the line %q comes before %q", End, Begin)
	}
	return before + Begin + "\n\n" + block + "\n" + End + after, nil
}

// cell makes text safe inside a Markdown table cell.
func cell(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	return strings.ReplaceAll(text, "|", `\|`)
}
