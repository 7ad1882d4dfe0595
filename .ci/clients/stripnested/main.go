// Command stripnested copies an OpenAPI document in JSON without the query parameters that carry
// `x-nested-deep-object: true`: deepObject parameters whose fields are arrays or objects, which
// ogen v1.24 cannot express (it refuses them, and its ignore_not_implemented setting leaves code
// that does not compile). They go inline and under components/parameters, with every reference
// to a removed one; the rest of the document is kept. mgmtapi's own build does the same through
// api/ogeninput. CI runs it (`go run .ci/clients/stripnested/main.go <in> <out>`) before ogen.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

const marker = "x-nested-deep-object"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: stripnested <document.json> <output.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "stripnested:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	removed := map[string]bool{}
	if components, ok := doc["components"].(map[string]any); ok {
		if shared, ok := components["parameters"].(map[string]any); ok {
			for name, p := range shared {
				if marked(p) {
					removed["#/components/parameters/"+name] = true
					delete(shared, name)
				}
			}
		}
	}
	count := strip(doc, removed)
	fmt.Printf("stripnested: removed %d shared and %d uses of parameters marked %s\n", len(removed), count, marker)
	encoded, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(out, encoded, 0o644)
}

// strip removes, from every `parameters` list under n, the marked parameters and the references
// to removed shared ones; it returns how many it removed.
func strip(n any, removed map[string]bool) int {
	count := 0
	switch v := n.(type) {
	case map[string]any:
		for key, child := range v {
			if list, ok := child.([]any); ok && key == "parameters" {
				kept := list[:0]
				for _, p := range list {
					object, _ := p.(map[string]any)
					ref, _ := object["$ref"].(string)
					if marked(p) || removed[ref] {
						count++
						continue
					}
					kept = append(kept, p)
				}
				v[key] = kept
			}
			count += strip(v[key], removed)
		}
	case []any:
		for _, child := range v {
			count += strip(child, removed)
		}
	}
	return count
}

func marked(p any) bool {
	m, ok := p.(map[string]any)
	return ok && m[marker] == true
}
