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
		case singles[key] && value.Kind == yaml.MappingNode:
			items = []*yaml.Node{value}
		case singles[key]:
			return doc, invalidf("%s: must be an object", key)
		case value.Kind == yaml.SequenceNode:
			items = value.Content
		case value.Tag == "!!null":
			items = nil
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
		out.WriteString("{\n")
		for i, e := range entries {
			b, err := json.MarshalIndent(e.value, "  ", "  ")
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&out, "  %q: %s", e.key, b)
			if i < len(entries)-1 {
				out.WriteByte(',')
			}
			out.WriteByte('\n')
		}
		out.WriteString("}\n")
		return out.Bytes(), nil
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, e := range entries {
		var v yaml.Node
		if err := v.Encode(yamlValue(e.value)); err != nil {
			return nil, err
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: e.key}, &v)
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

// yamlValue replaces the json.Number values of v by the YAML scalars of the same text, so that
// numbers are written as numbers and strings that look like numbers stay quoted strings.
func yamlValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = yamlValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = yamlValue(e)
		}
		return out
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(x), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	}
	return v
}
