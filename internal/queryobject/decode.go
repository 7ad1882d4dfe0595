package queryobject

import (
	"encoding/json"
	"errors"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ogen-go/ogen/validate"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
)

// Kind is the JSON type of a node of a Schema.
type Kind int

const (
	// String is a JSON string (Enum, when set, lists its allowed values).
	String Kind = iota + 1
	// Integer is a JSON integer (int64).
	Integer
	// Boolean is true or false (also 1 or 0 in a query).
	Boolean
	// DateTime is an RFC 3339 date-time string.
	DateTime
	// Object has the named Fields; fields not listed are ignored.
	Object
	// Array holds items of Elem, written repeated, indexed ([0]) or appended ([]).
	Array
	// Map holds values of Elem under arbitrary keys.
	Map
)

// Schema describes the shape of one query object closely enough to turn its query form into JSON:
// which paths are objects, arrays, maps, integers, booleans and date-times. Bounds other than
// enumerations and required fields are left to the generated types' Validate.
type Schema struct {
	Kind     Kind
	Fields   map[string]*Schema
	Required []string
	Elem     *Schema
	Enum     []string
}

// maxIndex bounds array indexes in a query, so that a huge index cannot cost memory.
const maxIndex = 100000

// node is one value being assembled from the query.
type node struct {
	schema  *Schema
	fields  map[string]*node // Object and Map
	indexed map[int]*node    // Array: items written with an index
	added   []*node          // Array: items written without one, in order
	single  *node            // Array of objects: its one item, written without an index
	value   string           // scalars
	set     bool
	source  string // the query key that set a scalar, for messages
}

// Decode reads the query object called name (e.g. "filter") from values and returns it as a JSON
// document shaped by schema, or nil when the query does not mention it. It accepts the bracket
// form (filter[severity][0]=X, filter[contextualLabels][service][contextualLabelValues]=api), the
// dot form (filter.severity=X, group_bys[0].incidentField=Y), the fields of the only item of an
// array of objects written without its index (group_bys[incidentField]=Y,
// group_bys.incidentField=Y: a one-item array; mixing that with indexed items is an error) and
// a JSON document given as the whole parameter (filter={"severity":["X"]}). Repeated keys of an
// array of scalars add items;
// indexed items come first, in index order, then the others in the order of their keys.
//
// Errors: Invalid (with the full path, e.g. "pagination.pageSize: must be an integer") for a value
// of the wrong type or enumeration, a repeated scalar, a missing required field or a malformed
// key. Unknown fields are ignored.
func Decode(values url.Values, name string, schema *Schema) ([]byte, error) {
	keys := make([]string, 0)
	for k := range values {
		if k == name || strings.HasPrefix(k, name+"[") || strings.HasPrefix(k, name+".") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sort.Strings(keys)
	if len(keys) == 1 && keys[0] == name && (schema.Kind == Object || schema.Kind == Array) {
		vs := values[name]
		if len(vs) == 1 && strings.HasPrefix(strings.TrimSpace(vs[0]), string(jsonOpener(schema.Kind))) {
			if !json.Valid([]byte(vs[0])) {
				return nil, apierror.Invalidf("%s: must be a valid JSON document", name)
			}
			return []byte(vs[0]), nil
		}
	}
	root := &node{schema: schema}
	for _, k := range keys {
		segs, err := splitKey(k[len(name):])
		if err != nil {
			return nil, apierror.Invalidf("%s: %s", k, err.Error())
		}
		if err := root.put(name, segs, values[k], k); err != nil {
			return nil, err
		}
	}
	v, err := root.render(name)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func jsonOpener(k Kind) byte {
	if k == Array {
		return '['
	}
	return '{'
}

// splitKey turns "[a][0].b[]" into ["a", "0", "b", ""].
func splitKey(rest string) ([]string, error) {
	var segs []string
	for rest != "" {
		switch rest[0] {
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, errors.New("has an unclosed '['")
			}
			segs = append(segs, rest[1:end])
			rest = rest[end+1:]
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, errors.New("has an empty field name")
			}
			segs = append(segs, rest[:end])
			rest = rest[end:]
		default:
			return nil, errors.New("is not a field path")
		}
	}
	return segs, nil
}

func (n *node) child(seg string) *node {
	if n.fields == nil {
		n.fields = map[string]*node{}
	}
	c, ok := n.fields[seg]
	if !ok {
		c = &node{schema: n.schema.Elem}
		if n.schema.Kind == Object {
			c.schema = n.schema.Fields[seg]
		}
		n.fields[seg] = c
	}
	return c
}

// put stores the values of one query key at the path segs below n (n is at path).
func (n *node) put(path string, segs []string, vals []string, key string) error {
	s := n.schema
	switch s.Kind {
	case Object, Map:
		if len(segs) == 0 {
			return apierror.Invalidf("%s: must be an object (write its fields, e.g. %s.field=value)", path, path)
		}
		if s.Kind == Object {
			if _, known := s.Fields[segs[0]]; !known {
				return nil // unknown fields are ignored
			}
		}
		return n.child(segs[0]).put(joinPath(path, segs[0]), segs[1:], vals, key)
	case Array:
		if len(segs) == 0 || segs[0] == "" {
			rest := segs
			if len(rest) > 0 {
				rest = rest[1:]
			}
			if isScalar(s.Elem.Kind) && len(rest) == 0 {
				for _, v := range vals {
					n.added = append(n.added, &node{schema: s.Elem, value: v, set: true, source: key})
				}
				return nil
			}
			return apierror.Invalidf("%s: items of this array are objects; index them, e.g. %s[0]", path, path)
		}
		i, err := strconv.Atoi(segs[0])
		if err != nil && !isScalar(s.Elem.Kind) && !isNumeric(segs[0]) {
			// group_bys[incidentField]=X: the fields of a one-item array's only item.
			if n.single == nil {
				n.single = &node{schema: s.Elem}
			}
			return n.single.put(path+"[0]", segs, vals, key)
		}
		if err != nil || i < 0 || i > maxIndex {
			return apierror.Invalidf("%s: %q is not an array index (0 to %d)", path, segs[0], maxIndex)
		}
		if n.indexed == nil {
			n.indexed = map[int]*node{}
		}
		c, ok := n.indexed[i]
		if !ok {
			c = &node{schema: s.Elem}
			n.indexed[i] = c
		}
		return c.put(path+"["+segs[0]+"]", segs[1:], vals, key)
	default:
		if len(segs) > 0 {
			return apierror.Invalidf("%s: is not an object; %q has no field %q", path, path, segs[0])
		}
		if n.set || len(vals) != 1 {
			return apierror.Invalidf("%s: must be given once", path)
		}
		n.value, n.set, n.source = vals[0], true, key
		return nil
	}
}

func isScalar(k Kind) bool { return k != Object && k != Array && k != Map }

// isNumeric says whether seg looks like an array index, valid or not ("-1", "99999999").
func isNumeric(seg string) bool {
	return strings.TrimLeft(strings.TrimPrefix(seg, "-"), "0123456789") == "" && seg != "" && seg != "-"
}

func joinPath(path, seg string) string { return path + "." + seg }

// render builds the JSON value of n, checking types, enumerations and required fields.
func (n *node) render(path string) (any, error) {
	s := n.schema
	switch s.Kind {
	case Object, Map:
		out := map[string]any{}
		for k, c := range n.fields {
			v, err := c.render(joinPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		for _, r := range s.Required {
			if _, ok := out[r]; !ok {
				return nil, apierror.Invalidf("%s: is required", joinPath(path, r))
			}
		}
		return out, nil
	case Array:
		if n.single != nil {
			if len(n.indexed) > 0 || len(n.added) > 0 {
				return nil, apierror.Invalidf("%s: index every item (%s[0][field]=…), or write the fields of a single item without one, not both", path, path)
			}
			v, err := n.single.render(path + "[0]")
			if err != nil {
				return nil, err
			}
			return []any{v}, nil
		}
		idx := make([]int, 0, len(n.indexed))
		for i := range n.indexed {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		items := make([]*node, 0, len(idx)+len(n.added))
		for _, i := range idx {
			items = append(items, n.indexed[i])
		}
		items = append(items, n.added...)
		out := make([]any, 0, len(items))
		for i, c := range items {
			v, err := c.render(path + "[" + strconv.Itoa(i) + "]")
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case Integer:
		v, err := strconv.ParseInt(n.value, 10, 64)
		if err != nil {
			return nil, apierror.Invalidf("%s: must be an integer (got %q)", path, n.value)
		}
		return v, nil
	case Boolean:
		switch n.value {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
		return nil, apierror.Invalidf("%s: must be true or false (got %q)", path, n.value)
	case DateTime:
		if _, err := time.Parse(time.RFC3339Nano, n.value); err != nil {
			return nil, apierror.Invalidf("%s: must be an RFC 3339 date-time (got %q)", path, n.value)
		}
		return n.value, nil
	default:
		if len(s.Enum) > 0 && !contains(s.Enum, n.value) {
			return nil, apierror.Invalidf("%s: must be one of %s (got %q)", path, strings.Join(s.Enum, ", "), n.value)
		}
		return n.value, nil
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Unmarshal decodes doc (from Decode) into v with its generated UnmarshalJSON and runs its
// Validate, turning failures into an Invalid error that names the full path below name.
func Unmarshal(name string, doc []byte, v interface {
	UnmarshalJSON([]byte) error
	Validate() error
}) error {
	if err := v.UnmarshalJSON(doc); err != nil {
		return apierror.Invalidf("%s: does not have the expected shape: %s", name, LastMessagePart(err.Error()))
	}
	if err := v.Validate(); err != nil {
		return Describe(name, err)
	}
	return nil
}

// LastMessagePart is the last ": "-separated part of an error message: the reason a decoder
// gave, without the chain of contexts before it.
func LastMessagePart(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// Describe turns a generated validator's error into an Invalid error whose message is the full
// path and the rule, e.g. "filter.severity: must have at most 1000 items (got 1001)".
func Describe(prefix string, err error) error {
	path := prefix
	leaf := err
	for {
		var ve *validate.Error
		if !errors.As(leaf, &ve) || len(ve.Fields) == 0 {
			break
		}
		f := ve.Fields[0]
		if strings.HasPrefix(f.Name, "[") {
			path += f.Name
		} else {
			path = joinPath(path, f.Name)
		}
		leaf = f.Error
	}
	return apierror.Invalidf("%s: %s", path, apierror.DescribeRule(leaf))
}
