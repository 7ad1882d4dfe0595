package teamconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/go-faster/yaml"
)

// FormatVersion is the document format this server writes and reads.
const FormatVersion = 1

// document is a parsed configuration document: for each area present, its resources as JSON
// objects (one for a Single area).
type document struct {
	areas map[string][]json.RawMessage
}

// parseDocument reads a document, YAML or JSON (JSON is YAML): an object with an optional
// version (1) and a key per area, each a list of objects (an object for a Single area).
//
// Errors: Invalid naming the key and the rule.
func parseDocument(body []byte, singles map[string]bool) (document, error) {
	doc := document{areas: map[string][]json.RawMessage{}}
	var root yaml.Node
	if err := yaml.Unmarshal(body, &root); err != nil {
		return doc, invalidf("body: not a YAML or JSON document: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return doc, invalidf("body: empty; a configuration document is an object with a key per area (%s)", strings.Join(AreaOrder, ", "))
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return doc, invalidf("body: must be an object with a key per area (%s)", strings.Join(AreaOrder, ", "))
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, value := top.Content[i].Value, top.Content[i+1]
		if key == "version" {
			if value.Tag != "!!int" || value.Value != fmt.Sprint(FormatVersion) {
				return doc, invalidf("version: must be %d (got %s)", FormatVersion, value.Value)
			}
			continue
		}
		if !slices.Contains(AreaOrder, key) {
			return doc, invalidf("%s: not an area of a team's configuration; the areas are %s", key, strings.Join(AreaOrder, ", "))
		}
		if _, dup := doc.areas[key]; dup {
			return doc, invalidf("%s: given twice", key)
		}
		var items []*yaml.Node
		switch {
		case value.Tag == "!!null":
			// A key without a value ("slos:") leaves the area alone, as an absent key does: an
			// empty list must be written as one ([]), so that prune never empties an area by a
			// slip of the pen.
			continue
		case singles[key] && value.Kind == yaml.MappingNode:
			items = []*yaml.Node{value}
		case singles[key]:
			return doc, invalidf("%s: must be an object", key)
		case value.Kind == yaml.SequenceNode:
			items = value.Content
		default:
			return doc, invalidf("%s: must be a list of objects", key)
		}
		list := make([]json.RawMessage, 0, len(items))
		for j, item := range items {
			where := key
			if !singles[key] {
				where = fmt.Sprintf("%s[%d]", key, j)
			}
			if item.Kind != yaml.MappingNode {
				return doc, invalidf("%s: must be an object", where)
			}
			v, err := plainValue(item, where)
			if err != nil {
				return doc, err
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return doc, invalidf("%s: %v", where, err)
			}
			list = append(list, raw)
		}
		doc.areas[key] = list
	}
	return doc, nil
}

// plainValue turns a YAML node into the value encoding/json writes as the same JSON: objects,
// lists, strings, numbers (json.Number, so that no digit is lost), booleans and null. A scalar
// YAML would read as a timestamp stays the text it is.
func plainValue(n *yaml.Node, where string) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		return plainValue(n.Content[0], where)
	case yaml.AliasNode:
		return plainValue(n.Alias, where)
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, invalidf("%s: object keys must be strings", where)
			}
			v, err := plainValue(n.Content[i+1], where+"."+k.Value)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := plainValue(c, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, invalidf("%s: %v", where, err)
			}
			return b, nil
		case "!!int", "!!float":
			if json.Valid([]byte(n.Value)) { // decimal text as written: every digit kept
				return json.Number(n.Value), nil
			}
			var f any
			if err := n.Decode(&f); err != nil {
				return nil, invalidf("%s: %v", where, err)
			}
			b, err := json.Marshal(f)
			if err != nil {
				return nil, invalidf("%s: %q is not a number JSON can hold", where, n.Value)
			}
			return json.Number(b), nil
		default:
			return n.Value, nil
		}
	}
	return nil, invalidf("%s: not a value a configuration holds", where)
}

// encodeDocument writes a document holding exported, in the order of AreaOrder: JSON (indented)
// when asJSON, YAML otherwise. Within a resource, object keys are sorted, so that the same
// configuration is always the same text.
func encodeDocument(exported map[string][]Resource, singles map[string]bool, asJSON bool) ([]byte, error) {
	type entry struct {
		key   string
		value any
	}
	entries := []entry{{"version", FormatVersion}}
	for _, key := range AreaOrder {
		list, ok := exported[key]
		if !ok {
			continue
		}
		values := make([]any, 0, len(list))
		for _, r := range list {
			var v any
			dec := json.NewDecoder(bytes.NewReader(r.Doc))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s %s: %w", key, r.ID, err)
			}
			values = append(values, v)
		}
		if singles[key] {
			if len(values) == 0 {
				continue
			}
			entries = append(entries, entry{key, values[0]})
			continue
		}
		entries = append(entries, entry{key, values})
	}
	var out bytes.Buffer
	if asJSON {
		root := map[string]any{}
		order := make([]string, 0, len(entries))
		for _, e := range entries {
			root[e.key] = e.value
			order = append(order, e.key)
		}
		writeJSON(&out, root, order, "")
		out.WriteByte('\n')
		return out.Bytes(), nil
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range entries {
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.key}, yamlNode(e.value))
	}
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// keyOrder is the order of an object's keys in a document: id and name first, the others sorted,
// so that a resource reads from what names it and the same configuration is the same text.
func keyOrder(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "id" && k != "name" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, first := range []string{"name", "id"} {
		if _, ok := m[first]; ok {
			keys = append([]string{first}, keys...)
		}
	}
	return keys
}

// writeJSON writes v, indented by two spaces per level after indent, with the keys of the top
// object in order and those of every other object in keyOrder.
func writeJSON(out *bytes.Buffer, v any, order []string, indent string) {
	switch x := v.(type) {
	case map[string]any:
		if order == nil {
			order = keyOrder(x)
		}
		if len(order) == 0 {
			out.WriteString("{}")
			return
		}
		out.WriteString("{\n")
		for i, k := range order {
			key, _ := json.Marshal(k)
			out.WriteString(indent + "  ")
			out.Write(key)
			out.WriteString(": ")
			writeJSON(out, x[k], nil, indent+"  ")
			if i < len(order)-1 {
				out.WriteByte(',')
			}
			out.WriteByte('\n')
		}
		out.WriteString(indent + "}")
	case []any:
		if len(x) == 0 {
			out.WriteString("[]")
			return
		}
		out.WriteString("[\n")
		for i, e := range x {
			out.WriteString(indent + "  ")
			writeJSON(out, e, nil, indent+"  ")
			if i < len(x)-1 {
				out.WriteByte(',')
			}
			out.WriteByte('\n')
		}
		out.WriteString(indent + "]")
	default:
		b, err := json.Marshal(x)
		if err != nil { // not from a decoded document
			b = []byte("null")
		}
		out.Write(b)
	}
}

// yamlNode is v as a YAML node, objects' keys in keyOrder; numbers (json.Number) are written as
// the numbers they are, and strings that YAML would read as something else are quoted.
func yamlNode(v any) *yaml.Node {
	switch x := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range keyOrder(x) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, yamlNode(x[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range x {
			n.Content = append(n.Content, yamlNode(e))
		}
		return n
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(x), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil { // strings, booleans and null always encode
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return &n
}
