package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/apidocument"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// The OpenAPI document (api/openapi.yaml) is read once, by apidocument, into one record per
// operation: everything the edge (API.ServeHTTP), the security handler, the audit and the error
// wording need to know of an operation is in its record, and every $ref of its schemas is
// resolved by apidocument's one resolver. The route table (routes.go) leads from a request's
// method and path to the record in one walk; the record then travels on the request's context
// (requestEdge), so that nothing after the edge looks the route up again.

// operation is one operation of the document.
type operation struct {
	id     string // operationId
	method string // upper case
	path   string // the document's template
	// permission is its x-permission; operatorToo, its x-operator-key: accepted (the operator
	// key is taken beside team keys).
	permission  string
	operatorToo bool
	// successStatus is its lowest 2xx response, the status of its audit records.
	successStatus int
	// otherPaths are its x-other-paths, the other names it is reached at under every version
	// segment (versionpaths.go).
	otherPaths []string
	// queryObjects are the names of its deepObject query parameters (queryobjects.go).
	queryObjects []string
	// body is its resolved request body schema (nil without a JSON body); bounds are the
	// bounds and "not set" rules the body scanner applies to it (bodybounds.go, unset.go).
	body   map[string]any
	bounds *boundNode
	// params are the resolved schemas of its parameters, by name (the path item's and its own).
	params map[string]map[string]any
	// integerArgs names, for each path parameter in the template's order, the integer ones
	// ("" for the others): checkIntegerArgs refuses them written with a sign or leading zeros.
	integerArgs []string
	// stream says how its answer is written when it is a streamed list or the stored answer
	// (streamed.go, storedanswers.go).
	stream streamKind
}

// streamKind is how an operation's answer is written.
type streamKind int

const (
	// notStreamed: through the generated encoder.
	notStreamed streamKind = iota
	// streamedHere: a streamed list served by API.serveStreamed, without the generated server.
	streamedHere
	// streamedThroughRouter: routed by the generated server, answered through a stream slot
	// (a routed streamed list, or the stored answer of storedAnswerOperation).
	streamedThroughRouter
)

// operationTable is the document's operations, read once.
type operationTable struct {
	doc  *apidocument.Document
	byID map[string]*operation
	// routes leads a request's method and path to its operation (routes.go).
	routes *routeTable
}

// operations reads the embedded document once for the whole process: every API built, and the
// error wording, share the one table.
var operations = sync.OnceValues(func() (*operationTable, error) {
	return readOperations(spec.OpenAPIYAML)
})

// schemas is the table for the error wording, which needs only the schemas: empty when the
// document does not read (the server's start, New, fails first on the same error).
func schemas() *operationTable {
	t, err := operations()
	if err != nil {
		return &operationTable{doc: &apidocument.Document{}, byID: map[string]*operation{}}
	}
	return t
}

// readOperations builds the table from an OpenAPI document. It fails when the document does not
// parse, when an operation has no x-permission or names one the catalog does not know by its
// public spelling (so that a forgotten permission stops the server at start instead of opening
// an operation to every key), when an x-operator-key is not "accepted", when a streamed list or
// the stored answer does not have the shape they need, or when the paths do not make one route
// table (routes.go).
func readOperations(text []byte) (*operationTable, error) {
	doc, err := apidocument.Parse(text)
	if err != nil {
		return nil, err
	}
	list, err := doc.Operations()
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	t := &operationTable{doc: doc, byID: make(map[string]*operation, len(list))}
	bounds := &boundsBuilder{table: t, byRef: map[string]*boundNode{}}
	for _, o := range list {
		op, err := newOperation(o)
		if err != nil {
			return nil, err
		}
		if o.Body != nil {
			op.bounds = bounds.build(o.Body, 0)
			if op.bounds == nil {
				op.bounds = newBoundNode()
			}
		}
		if _, dup := t.byID[op.id]; dup {
			return nil, fmt.Errorf("openapi document: operationId %s is used twice", op.id)
		}
		t.byID[op.id] = op
	}
	if err := t.markStreamed(); err != nil {
		return nil, err
	}
	if t.routes, err = newRouteTable(list, t.byID); err != nil {
		return nil, err
	}
	return t, nil
}

// newOperation is the record of o.
func newOperation(o apidocument.Operation) (*operation, error) {
	op := &operation{id: o.ID, method: o.Method, path: o.Path, permission: o.Permission,
		operatorToo: o.OperatorToo, successStatus: o.SuccessStatus, otherPaths: o.OtherPaths, body: o.Body,
		params: make(map[string]map[string]any, len(o.Params))}
	if op.permission == "" {
		return nil, fmt.Errorf("openapi document: %s %s (%s) has no x-permission", o.Method, o.Path, o.ID)
	}
	if c, ok := auth.Canonical(op.permission); op.permission != operatorPermission && (!ok || c != op.permission) {
		return nil, fmt.Errorf("openapi document: %s %s (%s): x-permission %q is not a public name of the catalog",
			o.Method, o.Path, o.ID, op.permission)
	}
	if rule, ok := o.Object["x-operator-key"]; ok && rule != "accepted" {
		return nil, fmt.Errorf("openapi document: %s %s (%s): x-operator-key %q is not \"accepted\"",
			o.Method, o.Path, o.ID, fmt.Sprint(rule))
	}
	for _, p := range o.Params {
		op.params[p.Name] = p.Schema
		if p.In == "query" && p.Style == "deepObject" && !slices.Contains(op.queryObjects, p.Name) {
			op.queryObjects = append(op.queryObjects, p.Name)
		}
	}
	// The path parameters in the template's order (Params keeps the path item's first).
	for _, name := range templateParams(o.Path) {
		integer := ""
		if typ, _ := op.params[name]["type"].(string); typ == "integer" {
			integer = name
		}
		op.integerArgs = append(op.integerArgs, integer)
	}
	return op, nil
}

// templateParams are the names of a template's parameters, in order.
func templateParams(template string) []string {
	var names []string
	for rest := template; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return names
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return names
		}
		names = append(names, rest[open+1:open+end])
		rest = rest[open+end+1:]
	}
}

// markStreamed marks the streamed lists and the stored answer in the table. It fails when one is
// not in the document, or is not a GET without path parameters (the stored answer: a GET whose
// path ends with its one parameter).
func (t *operationTable) markStreamed() error {
	for id := range streamedLists(handler{}) {
		op := t.byID[id]
		if op == nil || op.method != "GET" || len(op.integerArgs) > 0 {
			return fmt.Errorf("openapi document: streamed list %s must be a GET without path parameters", id)
		}
		op.stream = streamedHere
	}
	for _, id := range routedStreamedLists {
		op := t.byID[id]
		if op == nil || op.method != "GET" || len(op.integerArgs) > 0 {
			return fmt.Errorf("openapi document: streamed list %s must be a GET without path parameters", id)
		}
		op.stream = streamedThroughRouter
	}
	op := t.byID[storedAnswerOperation]
	if op == nil {
		return fmt.Errorf("openapi document: no operation %s", storedAnswerOperation)
	}
	if op.method != "GET" || len(op.integerArgs) != 1 || op.path[len(op.path)-1] != '}' {
		return fmt.Errorf("openapi document: %s must be a GET whose path ends with its one parameter", storedAnswerOperation)
	}
	op.stream = streamedThroughRouter
	return nil
}

// resolve follows $ref into the document (apidocument's resolver); nil for a reference that
// leads nowhere.
func (t *operationTable) resolve(node any) map[string]any { return t.doc.Resolve(node) }

// bodySchema is the request body schema of the operation id; known is false when it has no JSON
// body (or is not an operation).
func (t *operationTable) bodySchema(id string) (schema map[string]any, known bool) {
	op := t.byID[id]
	if op == nil || op.body == nil {
		return nil, false
	}
	return op.body, true
}

// paramSchema is the schema of the parameter name of the operation id, or nil.
func (t *operationTable) paramSchema(id, name string) map[string]any {
	if op := t.byID[id]; op != nil {
		return op.params[name]
	}
	return nil
}

// requestEdge is what API.ServeHTTP found out about a request before the generated server
// serves it, carried on the request's context: its operation's record, a refusal of its path to
// answer once the caller is authorized, and the stream slot of an operation whose answer is
// written while it is read.
type requestEdge struct {
	op      *operation
	refusal string
	slot    streamSlot
	slotted bool
}

type requestEdgeKey struct{}

// edgeOf is the request's edge, nil for a request that did not come through API.ServeHTTP.
func edgeOf(ctx context.Context) *requestEdge {
	e, _ := ctx.Value(requestEdgeKey{}).(*requestEdge)
	return e
}

// operationOf is the record of the request's operation, nil when none was found.
func operationOf(ctx context.Context) *operation {
	if e := edgeOf(ctx); e != nil {
		return e.op
	}
	return nil
}
