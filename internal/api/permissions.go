package api

import (
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// operatorPermission is the x-permission of operations that the operator key guards.
const operatorPermission = "operator"

// operationPermissions reads, from the OpenAPI document, the permission each operation requires
// (its x-permission), keyed by operationId. The document is the one place where the table lives.
// It fails when an operation has none or names one that the catalog does not know (by its public
// spelling), so a
// forgotten permission stops the server at start instead of opening an operation to every key.
func operationPermissions(doc *openapiDocument) (map[string]string, error) {
	out := make(map[string]string)
	for _, o := range doc.operations {
		var op struct {
			OperationID string `yaml:"operationId"`
			Permission  string `yaml:"x-permission"`
		}
		if err := o.decode(&op); err != nil {
			return nil, err
		}
		if op.Permission == "" {
			return nil, fmt.Errorf("openapi document: %s %s (%s) has no x-permission", o.method, o.path, op.OperationID)
		}
		if c, ok := auth.Canonical(op.Permission); op.Permission != operatorPermission && (!ok || c != op.Permission) {
			return nil, fmt.Errorf("openapi document: %s %s (%s): x-permission %q is not a public name of the catalog",
				o.method, o.path, op.OperationID, op.Permission)
		}
		out[op.OperationID] = op.Permission
	}
	return out, nil
}

// operatorAccepted reads, from the OpenAPI document, the operations that take the operator key
// beside team keys (x-operator-key: accepted): the public teams operations, which reach every
// team of the deployment for the operator and the caller's own team for a team key.
func operatorAccepted(doc *openapiDocument) (map[string]bool, error) {
	out := make(map[string]bool)
	for _, o := range doc.operations {
		var op struct {
			OperationID string `yaml:"operationId"`
			OperatorKey string `yaml:"x-operator-key"`
		}
		if err := o.decode(&op); err != nil {
			return nil, err
		}
		switch op.OperatorKey {
		case "":
		case "accepted":
			out[op.OperationID] = true
		default:
			return nil, fmt.Errorf("openapi document: %s %s (%s): x-operator-key %q is not \"accepted\"",
				o.method, o.path, op.OperationID, op.OperatorKey)
		}
	}
	return out, nil
}
