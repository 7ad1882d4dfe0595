package promrules

import (
	"reflect"
	"testing"
)

// TestUniqueGroupNames: a repeated name gets the first free " [n]", n from 2; the first keeps it.
func TestUniqueGroupNames(t *testing.T) {
	groups := []Group{{Name: "a"}, {Name: "b"}, {Name: "a"}, {Name: "a [2]"}, {Name: "a"}}
	uniqueGroupNames(groups)
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if want := []string{"a", "b", "a [2]", "a [2] [2]", "a [3]"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
}

// TestYAMLOfGroupsWithoutRules: nil rules render as "rules: []" (Prometheus reads both, but the
// rendering does not depend on how a part built its groups), and the caller's groups are left
// as they were.
func TestYAMLOfGroupsWithoutRules(t *testing.T) {
	file := File{Groups: []Group{{Name: "g"}}}
	doc, err := file.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if want := "groups:\n  - name: g\n    rules: []\n"; string(doc) != want {
		t.Fatalf("YAML %q, want %q", doc, want)
	}
	if file.Groups[0].Rules != nil {
		t.Fatal("YAML changed the caller's group")
	}
	if doc, err := (File{}).YAML(); err != nil || string(doc) != "groups: []\n" {
		t.Fatalf("empty file: %q, %v", doc, err)
	}
}
