// Command ogeninput runs ogen on api/openapi.yaml without the query parameters that ogen cannot
// express: deepObject parameters whose fields are arrays or objects (ogen refuses to generate
// them, and would then drop the whole operation). Each such parameter carries
// `x-nested-deep-object: true` in the document; its operation reads it from the raw query
// (internal/queryobject). Every other part of the document reaches ogen unchanged.
//
// Usage (from internal/oas/generate.go): ogeninput <document> <ogen arguments...>; the document
// ogen sees is a temporary copy, given to it as its last argument.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-faster/yaml"
)

// marker is the extension that leaves a parameter out of the generated code.
const marker = "x-nested-deep-object"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ogeninput <document> <ogen arguments...>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "ogeninput:", err)
		os.Exit(1)
	}
}

func run(document string, ogenArgs []string) error {
	raw, err := os.ReadFile(document)
	if err != nil {
		return err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return fmt.Errorf("%s: %w", document, err)
	}
	stripMarked(&root)
	out, err := yaml.Marshal(&root)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ogeninput")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, filepath.Base(document))
	if err := os.WriteFile(input, out, 0o600); err != nil {
		return err
	}
	cmd := exec.Command("go", append(append([]string{"tool", "ogen"}, ogenArgs...), input)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// stripMarked removes from the document every parameter that carries the marker with the value
// true: inline in a `parameters` list, and under components/parameters together with every
// reference to it.
func stripMarked(root *yaml.Node) {
	refs := map[string]bool{}
	if doc := root; doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		if shared := child(child(doc.Content[0], "components"), "parameters"); shared != nil {
			kept := shared.Content[:0]
			for i := 0; i+1 < len(shared.Content); i += 2 {
				if isMarked(shared.Content[i+1]) {
					refs["#/components/parameters/"+shared.Content[i].Value] = true
					continue
				}
				kept = append(kept, shared.Content[i], shared.Content[i+1])
			}
			shared.Content = kept
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, value := n.Content[i], n.Content[i+1]
				if key.Value != "parameters" || value.Kind != yaml.SequenceNode {
					continue
				}
				kept := value.Content[:0]
				for _, p := range value.Content {
					if ref := child(p, "$ref"); !isMarked(p) && (ref == nil || !refs[ref.Value]) {
						kept = append(kept, p)
					}
				}
				value.Content = kept
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
}

// child is the value of key in the mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func isMarked(p *yaml.Node) bool {
	v := child(p, marker)
	return v != nil && v.Value == "true"
}
