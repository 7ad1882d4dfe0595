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

// openapiDocument is what the API reads from the embedded OpenAPI document at start.
type openapiDocument struct {
	// operations are every operation (a path item's `parameters` are not one).
	operations []documentOperation
	// parameters are the document's shared parameters (components.parameters), by name.
	parameters map[string]queryParameter
}

// readDocument parses the embedded OpenAPI document once: the tables the API reads from it at
// start — permissions, query objects, streamed lists — share this one parse, which is most of
// the time the server takes to start. The parsed document is not kept.
func readDocument() (*openapiDocument, error) {
	var doc struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Parameters map[string]queryParameter `yaml:"parameters"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	out := &openapiDocument{parameters: doc.Components.Parameters}
	for path, item := range doc.Paths {
		for method, node := range item {
			if method != "parameters" {
				out.operations = append(out.operations, documentOperation{path: path, method: method, node: node})
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
