package main

import (
	"strings"
	"testing"

	"github.com/go-faster/yaml"
)

// Marked parameters leave the document, inline or shared, with every reference to them; the rest
// stays as written.
func TestStripMarked(t *testing.T) {
	doc := `
paths:
  /a:
    get:
      parameters:
        - {name: keep, in: query, schema: {type: string}}
        - {name: nested, in: query, style: deepObject, x-nested-deep-object: true}
        - $ref: '#/components/parameters/Shared'
        - $ref: '#/components/parameters/Kept'
        - {name: notMarked, in: query, x-nested-deep-object: false}
components:
  parameters:
    Shared: {name: shared, in: query, x-nested-deep-object: true}
    Kept: {name: kept, in: query}
`
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	stripMarked(&root)
	out, err := yaml.Marshal(&root)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, gone := range []string{"name: nested", "Shared", "shared"} {
		if strings.Contains(text, gone) {
			t.Errorf("%q is still in\n%s", gone, text)
		}
	}
	for _, kept := range []string{"name: keep", "#/components/parameters/Kept", "Kept:", "notMarked"} {
		if !strings.Contains(text, kept) {
			t.Errorf("%q is gone from\n%s", kept, text)
		}
	}
}
