package apidocument

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
)

// AddMinimal adds query parameter p with the smallest value its schema allows (Minimal) to q:
// an array as one value per item, an object as its JSON text, a scalar as text (a whole number
// without a decimal point).
func (d *Document) AddMinimal(q url.Values, p Parameter) {
	switch v := d.Minimal(p.Schema).(type) {
	case []any:
		for _, e := range v {
			q.Add(p.Name, scalarText(e))
		}
	case map[string]any:
		b, _ := json.Marshal(v)
		q.Set(p.Name, string(b))
	default:
		q.Set(p.Name, scalarText(v))
	}
}

func scalarText(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprint(v)
}
