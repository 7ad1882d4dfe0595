package api

import (
	"reflect"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Every operation the generated router knows has a permission from the catalog.
func TestEveryOperationHasAPermission(t *testing.T) {
	table, err := operations()
	if err != nil {
		t.Fatal(err)
	}
	perms := map[string]string{}
	for id, op := range table.byID {
		perms[id] = op.permission
	}
	handler := reflect.TypeOf((*oas.Handler)(nil)).Elem()
	for i := 0; i < handler.NumMethod(); i++ {
		name := handler.Method(i).Name
		if name == "NewError" {
			continue
		}
		if perms[name] == "" {
			t.Errorf("operation %s has no x-permission", name)
		}
	}
	if len(perms) != handler.NumMethod()-1 {
		t.Errorf("document has %d operations, the generated handler %d", len(perms), handler.NumMethod()-1)
	}
}
