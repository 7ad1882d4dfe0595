package notifyexpr

import (
	"reflect"
	"sort"

	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// ConditionVariables returns the top-level variables the condition reads (alert, alertDef, case,
// _context, …), each once, sorted; the functions it calls (range) are not among them, nor the
// attributes it reads of a variable.
//
// Errors: those of CheckCondition.
func ConditionVariables(src string) ([]string, error) {
	out, err := compileCondition(src)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	visited := map[uintptr]bool{}
	tokenType := reflect.TypeOf((*tokens.Token)(nil))
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || v.Type() == tokenType || visited[v.Pointer()] {
				return
			}
			visited[v.Pointer()] = true
			if n, ok := v.Interface().(*nodes.Name); ok {
				if name := n.Name.Val; !globals.Has(name) {
					seen[name] = true
				}
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		}
	}
	walk(reflect.ValueOf(out))
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
