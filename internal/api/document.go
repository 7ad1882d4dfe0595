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
	// parameters are the document's shared parameters (components.parameters), by name;
	// parameterNodes the same, undecoded.
	parameters     map[string]queryParameter
	parameterNodes map[string]yaml.Node
	// pathParameters are the parameters a path item gives all its operations, undecoded, by path.
	pathParameters map[string]yaml.Node
}

// readDocument parses the embedded OpenAPI document once: the tables the API reads from it at
// start — permissions, query objects, streamed lists — share this one parse, which is most of
// the time the server takes to start. The parsed document is not kept.
func readDocument() (*openapiDocument, error) {
	var doc struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Parameters map[string]yaml.Node `yaml:"parameters"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	out := &openapiDocument{parameters: map[string]queryParameter{}, parameterNodes: doc.Components.Parameters,
		pathParameters: map[string]yaml.Node{}}
	for name, node := range doc.Components.Parameters {
		var p queryParameter
		if err := node.Decode(&p); err != nil {
			return nil, fmt.Errorf("openapi document: components.parameters.%s: %w", name, err)
		}
		out.parameters[name] = p
	}
	for path, item := range doc.Paths {
		for method, node := range item {
			if method != "parameters" {
				out.operations = append(out.operations, documentOperation{path: path, method: method, node: node})
			} else {
				out.pathParameters[path] = node
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
