package api_test

import (
	"testing"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
)

// TestNoSchemaTakesAGeneratedClientsName: oapi-codegen names each operation's wrappers after its
// operationId (<operationId>Response, <operationId>Params, <operationId>JSONRequestBody, …), so a
// schema of one of those names makes the client it generates from our document fail to compile
// (a schema TestTemplateRenderResponse once did). The clients CI step would find it minutes later;
// this finds it at once.
func TestNoSchemaTakesAGeneratedClientsName(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]yaml.Node `yaml:"paths"`
		Components struct {
			Schemas map[string]yaml.Node `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths {
		for method, node := range item {
			var op struct {
				OperationID string `yaml:"operationId"`
			}
			if method == "parameters" || node.Decode(&op) != nil || op.OperationID == "" {
				continue
			}
			n++
			for _, suffix := range []string{"Response", "Params", "JSONRequestBody", "JSONBody", "RequestBody"} {
				if _, taken := doc.Components.Schemas[op.OperationID+suffix]; taken {
					t.Errorf("%s %s: schema %s%s is the name oapi-codegen gives the operation's own type; rename the schema",
						method, path, op.OperationID, suffix)
				}
			}
		}
	}
	if n < 200 {
		t.Fatalf("only %d operations read from the document", n)
	}
}
