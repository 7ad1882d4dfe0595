package api

import (
	"fmt"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
)

// documentOperation is one operation of the embedded OpenAPI document: its path, its method and
// its still undecoded body.
type documentOperation struct {
	path, method string
	node         yaml.Node
}

// documentOperations returns every operation of the embedded OpenAPI document (a path item's
// `parameters` are not one). The tables the API reads from the document at start — permissions,
// query objects, streamed lists — share this one walk.
func documentOperations() ([]documentOperation, error) {
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	var out []documentOperation
	for path, item := range doc.Paths {
		for method, node := range item {
			if method != "parameters" {
				out = append(out, documentOperation{path: path, method: method, node: node})
			}
		}
	}
	return out, nil
}

// decode decodes the operation into v; the error names the operation.
func (o documentOperation) decode(v any) error {
	if err := o.node.Decode(v); err != nil {
		return fmt.Errorf("openapi document: %s %s: %w", o.method, o.path, err)
	}
	return nil
}
