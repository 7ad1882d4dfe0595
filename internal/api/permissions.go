package api

import (
	"fmt"

	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// operatorPermission is the x-permission of operations that the operator key guards.
const operatorPermission = "operator"

// operationPermissions reads, from the OpenAPI document, the permission each operation requires
// (its x-permission), keyed by operationId. The document is the one place where the table lives.
// It fails when an operation has none or names one that the catalog does not know, so a
// forgotten permission stops the server at start instead of opening an operation to every key.
func operationPermissions() (map[string]string, error) {
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	out := make(map[string]string)
	for path, item := range doc.Paths {
		for method, node := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string `yaml:"operationId"`
				Permission  string `yaml:"x-permission"`
			}
			if err := node.Decode(&op); err != nil {
				return nil, fmt.Errorf("openapi document: %s %s: %w", method, path, err)
			}
			if op.Permission == "" {
				return nil, fmt.Errorf("openapi document: %s %s (%s) has no x-permission", method, path, op.OperationID)
			}
			if op.Permission != operatorPermission && !auth.KnownPermission(op.Permission) {
				return nil, fmt.Errorf("openapi document: %s %s (%s): x-permission %q is not in the catalog",
					method, path, op.OperationID, op.Permission)
			}
			out[op.OperationID] = op.Permission
		}
	}
	return out, nil
}
