package apidocument

import (
	"encoding/json"
	"slices"
	"testing"
)

const sample = `
openapi: 3.0.3
paths:
  /things/v1/{thing_id}:
    parameters:
      - $ref: '#/components/parameters/ThingID'
    delete:
      operationId: DeleteThing
      x-permission: things:Write
    get:
      operationId: GetThing
      x-permission: things:Read
      parameters:
        - {name: filter, in: query, style: deepObject, schema: {type: object}}
  /things/v1:
    post:
      operationId: CreateThing
      x-permission: things:Write
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Thing'}
            example: {name: a}
            x-example-needs-existing: true
  /admin/v1/things:
    put:
      operationId: ReplaceThings
      x-permission: operator
      security: [{operatorKey: []}]
      requestBody:
        content:
          application/json: {}
components:
  parameters:
    ThingID: {name: thing_id, in: path, required: true, schema: {type: string, format: uuid}}
  schemas:
    Thing:
      type: object
      required: [kind, tags, size]
      properties:
        name: {type: string, minLength: 3}
        kind: {type: string, enum: [KIND_UNSPECIFIED, KIND_BIG]}
        size: {type: integer, minimum: 5, maximum: 10}
        tags: {type: array, minItems: 2, items: {type: string, pattern: '^[0-9]+$'}}
        parts:
          type: array
          items: {$ref: '#/components/schemas/Thing'}
`

func TestOperations(t *testing.T) {
	d, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := d.Operations()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, op := range ops {
		ids = append(ids, op.ID)
	}
	// By path, then reads before writes and deletes last.
	if want := []string{"ReplaceThings", "CreateThing", "GetThing", "DeleteThing"}; !slices.Equal(ids, want) {
		t.Fatalf("operations %v, want %v", ids, want)
	}
	get := ops[2]
	if get.Method != "GET" || !get.HasPathParams() || get.IsWrite() || len(get.PathParams()) != 1 ||
		get.PathParams()[0].Schema["format"] != "uuid" || !slices.Equal(get.Objects, []string{"filter"}) || get.Body != nil {
		t.Errorf("GetThing read as %+v", get)
	}
	if create := ops[1]; create.Body["type"] != "object" || !create.NeedsExisting || create.Example == nil || create.Permission != "things:Write" {
		t.Errorf("CreateThing read as %+v", create)
	}
	if replace := ops[0]; !replace.Operator || replace.Body == nil || len(replace.Body) != 0 {
		t.Errorf("ReplaceThings read as %+v", replace)
	}
	if _, err := Parse([]byte("paths: {/x: {get: {}}}")); err != nil {
		t.Fatal(err)
	}
	noID, _ := Parse([]byte("paths: {/x: {get: {}}}"))
	if _, err := noID.Operations(); err == nil {
		t.Error("an operation without operationId was read")
	}
}

func TestMinimalAndSetPath(t *testing.T) {
	d, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	thing := d.Lookup("#/components/schemas/Thing")
	got, _ := json.Marshal(d.Minimal(thing))
	if want := `{"kind":"KIND_BIG","name":"aaa","size":5,"tags":["1","1"]}`; string(got) != want {
		t.Errorf("minimal %s, want %s", got, want)
	}
	var paths []string
	for _, p := range d.PropertyPaths(thing) {
		paths = append(paths, p.String())
	}
	if !slices.Contains(paths, "parts[0].kind") || !slices.Contains(paths, "tags[0]") || slices.Contains(paths, "parts[0].parts[0].parts[0].kind") {
		t.Errorf("property paths %v", paths)
	}
	base := d.Minimal(thing)
	var deep PropertyPath
	for _, p := range d.PropertyPaths(thing) {
		if p.String() == "parts[0].size" {
			deep = p
		}
	}
	set, _ := json.Marshal(d.SetPath(base, deep, -1))
	if want := `{"kind":"KIND_BIG","name":"aaa","parts":[{"kind":"KIND_BIG","name":"aaa","size":-1,"tags":["1","1"]}],"size":5,"tags":["1","1"]}`; string(set) != want {
		t.Errorf("set %s, want %s", set, want)
	}
	if again, _ := json.Marshal(base); string(again) != string(got) {
		t.Errorf("SetPath changed its base: %s", again)
	}
}

func TestTheServedDocument(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := d.Operations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 100 {
		t.Fatalf("%d operations", len(ops))
	}
	for _, op := range ops {
		if op.Permission == "" || op.Path == "" {
			t.Errorf("%s: no permission or path", op)
		}
	}
}
