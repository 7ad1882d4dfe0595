package apidocument

import (
	"sort"
	"strconv"
	"strings"
)

// FoundID is an id found in a decoded answer.
type FoundID struct {
	// Key is the property that held it: id, or a name ending in Id.
	Key string
	// Value is the id as it goes into a path: a string as it was, a number in decimal.
	Value string
	// Integer is true when the answer held the id as a JSON number (a custom role's); such an id
	// names only integer path parameters.
	Integer bool
}

// IDsIn collects the ids of an answer decoded by encoding/json into any: the values of properties
// named id or ending in Id, at most five levels deep, shallower first (an object's own ids before
// those of what it holds: an incident's before its events'), keys in sorted order. Strings count
// when not empty and under 100 bytes; numbers when whole, positive and exact in a float64.
func IDsIn(v any) []FoundID {
	return idsIn(v, 0)
}

func idsIn(v any, depth int) []FoundID {
	if depth > 4 {
		return nil
	}
	var out []FoundID
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "id" && !strings.HasSuffix(k, "Id") {
				continue
			}
			switch id := x[k].(type) {
			case string:
				if id != "" && len(id) < 100 {
					out = append(out, FoundID{Key: k, Value: id})
				}
			case float64:
				if id >= 1 && id < 1<<53 && id == float64(int64(id)) {
					out = append(out, FoundID{Key: k, Value: strconv.FormatInt(int64(id), 10), Integer: true})
				}
			}
		}
		for _, k := range keys {
			out = append(out, idsIn(x[k], depth+1)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, idsIn(e, depth+1)...)
		}
	}
	return out
}
