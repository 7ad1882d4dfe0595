package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
)

// Unknown fields of a request body are ignored, as the real service ignores them (clients built
// from newer public documents send fields this server does not know yet); see docs/errors.md.
// So that a misspelt field ("grups") is not lost without a word, a server logging at DEBUG
// writes one line per request naming the paths of the fields its operation does not know:
//
//	level=DEBUG msg="request body fields this server does not know; ignored" operation=CreateRecordingRuleSet fields=[grups]
//
// Below DEBUG nothing is kept or parsed: the cost is one Enabled call per request with a body.

// maxUnknownFieldBody bounds the body kept for the check; a larger body is not checked.
const maxUnknownFieldBody = 1 << 20

// maxUnknownFieldsLogged bounds the paths one line names.
const maxUnknownFieldsLogged = 20

// watchUnknownFields returns body, which the operation will read, wrapped so that once it has
// been read to its end the unknown fields are logged; body itself when DEBUG is off.
func watchUnknownFields(ctx context.Context, operation string, body io.ReadCloser) io.ReadCloser {
	logger := slog.Default()
	if !logger.Enabled(ctx, slog.LevelDebug) {
		return body
	}
	return &unknownFieldWatch{ReadCloser: body, ctx: ctx, operation: operation, logger: logger}
}

type unknownFieldWatch struct {
	io.ReadCloser
	ctx       context.Context
	operation string
	logger    *slog.Logger
	kept      bytes.Buffer
	tooLarge  bool
	done      bool
}

func (u *unknownFieldWatch) Read(p []byte) (int, error) {
	n, err := u.ReadCloser.Read(p)
	if !u.tooLarge {
		if u.kept.Len()+n > maxUnknownFieldBody {
			u.tooLarge = true
			u.kept = bytes.Buffer{}
		} else {
			u.kept.Write(p[:n])
		}
	}
	if err == io.EOF && !u.done {
		u.done = true
		if !u.tooLarge {
			if fields := unknownFields(u.operation, u.kept.Bytes()); len(fields) > 0 {
				u.logger.DebugContext(u.ctx, "request body fields this server does not know; ignored",
					"operation", u.operation, "fields", fields)
			}
		}
	}
	return n, err
}

// unknownFields returns the paths ("groups[0].rulez") of the members of body's objects that the
// request body schema of operation does not declare, in body order, at most
// maxUnknownFieldsLogged. Objects whose schema admits any member (additionalProperties, or no
// properties at all) hold none; a member is known when any alternative of a oneOf, anyOf or allOf
// declares it. A body that is not JSON, or an operation without a body schema, has none.
func unknownFields(operation string, body []byte) []string {
	d := schemas()
	schema, ok := d.bodySchema(operation)
	if !ok {
		return nil
	}
	v, err := parseOrdered(body)
	if err != nil {
		return nil
	}
	var out []string
	d.unknownIn(schema, v, "", 0, &out)
	return out
}

// unknownIn adds to out the paths of the members of v that schema does not declare.
func (d *operationTable) unknownIn(schema any, v *jsonValue, path string, depth int, out *[]string) {
	s := d.resolve(schema)
	if s == nil || v == nil || depth > 64 || len(*out) >= maxUnknownFieldsLogged {
		return
	}
	switch v.kind {
	case "object":
		props, open := d.declared(s, map[string]any{}, 0)
		for _, m := range v.members {
			sub, known := props[m.key]
			member := m.key
			if path != "" {
				member = path + "." + m.key
			}
			switch {
			case known:
				d.unknownIn(sub, m.value, member, depth+1, out)
			case open != nil:
				d.unknownIn(open, m.value, member, depth+1, out)
			case len(props) > 0:
				if len(*out) < maxUnknownFieldsLogged {
					*out = append(*out, member)
				}
			}
		}
	case "array":
		items := s["items"]
		for i, item := range v.items {
			d.unknownIn(items, item, fmt.Sprintf("%s[%d]", path, i), depth+1, out)
		}
	}
}

// declared collects the properties schema declares, through allOf, oneOf and anyOf, into props,
// and returns the schema of its other members: additionalProperties' schema, an empty schema for
// additionalProperties true, nil when there are none.
func (d *operationTable) declared(schema map[string]any, props map[string]any, depth int) (map[string]any, any) {
	var open any
	if schema == nil || depth > 16 {
		return props, nil
	}
	if p, ok := schema["properties"].(map[string]any); ok {
		for name, sub := range p {
			if _, seen := props[name]; !seen {
				props[name] = sub
			}
		}
	}
	switch extra := schema["additionalProperties"].(type) {
	case map[string]any:
		open = extra
	case bool:
		if extra {
			open = map[string]any{}
		}
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		list, _ := schema[key].([]any)
		for _, part := range list {
			if _, o := d.declared(d.resolve(part), props, depth+1); o != nil && open == nil {
				open = o
			}
		}
	}
	return props, open
}
