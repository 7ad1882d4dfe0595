package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// operationPrefix begins the path of every operation that has a version segment.
const operationPrefix = "/mgmt/openapi/"

// versionSegments are the segments a client may put after operationPrefix. Each reaches every
// operation: real clients keep one base URL (…/mgmt/openapi/latest or …/5) for every service,
// while the specification gives each operation the segment of the public path scheme it was
// taken from (3, 4 or 5).
var versionSegments = []string{"latest", "5", "4", "3"}

// versionPaths is the routing table that maps what a client sends to the path of api/openapi.yaml
// that the generated router serves. It is built once, at start, from the document: every
// operation under /mgmt/openapi/<n> is reached under each of versionSegments, at its own path
// and at each of its x-other-paths (the names the operation has in other versions of the public
// documents). Looking a path up walks its segments once; no area knows about segments.
type versionPaths struct {
	root *pathNode
}

// pathNode is one segment of a path template in the table.
type pathNode struct {
	literal map[string]*pathNode
	param   *pathNode // a {name} segment
	// methods are the operations whose template ends here, by method.
	methods map[string]*pathTarget
	// allow is the sorted, comma-separated list of methods, for a 405's Allow header.
	allow string
}

// pathTarget is where one method of one template goes.
type pathTarget struct {
	// bySegment is the document's path for a request under that segment; newest is the path for
	// every other segment. They differ only where the document holds the same template and method
	// under several segments, because the specification fixes a shape to one of them (E25 under 4
	// answers the version 4 shape; latest, 5 and 3 answer the newest one).
	bySegment map[string]documentPath
	newest    documentPath
}

// documentPath is a path template of the document: its version segment and the parts after it.
type documentPath struct {
	segment string
	rest    []pathPart
	// sameShape says that rest has the literals and parameters of the template the target was
	// found under, in the same places: only the segment needs changing.
	sameShape bool
}

// pathPart is a literal segment, or (param) a parameter that takes the request's segment at
// index arg of the template's parameters.
type pathPart struct {
	literal string
	param   bool
	arg     int
}

// newVersionPaths builds the table from the document. It fails when a template of
// x-other-paths is also another operation's path under the same method, or is malformed.
func newVersionPaths(doc *openapiDocument) (*versionPaths, error) {
	t := &versionPaths{root: &pathNode{}}
	type alias struct{ method, path, target string }
	var aliases []alias
	for _, o := range doc.operations {
		segment, rest, ok := splitVersion(o.path)
		if !ok {
			continue
		}
		method := strings.ToUpper(o.method)
		if err := t.add(method, rest, segment, rest, false); err != nil {
			return nil, err
		}
		var op struct {
			OtherPaths []string `yaml:"x-other-paths"`
		}
		if err := o.decode(&op); err != nil {
			return nil, err
		}
		for _, other := range op.OtherPaths {
			aliases = append(aliases, alias{method, other, o.path})
		}
	}
	// Other names go in last: they never take a template and method that an operation has.
	for _, a := range aliases {
		segment, rest, _ := splitVersion(a.target)
		if err := t.add(a.method, a.path, segment, rest, true); err != nil {
			return nil, fmt.Errorf("openapi document: x-other-paths of %s %s: %w", a.method, a.target, err)
		}
	}
	return t, nil
}

// splitVersion splits /mgmt/openapi/<segment>/rest into segment and /rest.
func splitVersion(path string) (segment, rest string, ok bool) {
	after, ok := strings.CutPrefix(path, operationPrefix)
	if !ok {
		return "", "", false
	}
	segment, rest, ok = strings.Cut(after, "/")
	return segment, "/" + rest, ok && segment != ""
}

// add routes method on template (a path after the segment) to the document's path
// /mgmt/openapi/segment/targetRest.
func (t *versionPaths) add(method, template, segment, targetRest string, isAlias bool) error {
	if !strings.HasPrefix(template, "/") || strings.HasSuffix(template, "/") && template != "/" {
		return fmt.Errorf("%q is not a path template", template)
	}
	n := t.root
	var params []string
	for _, seg := range strings.Split(template[1:], "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%q has an empty segment", template)
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			if n.param == nil {
				n.param = &pathNode{}
			}
			params = append(params, seg)
			if len(params) > len(pathArgs{}.values) {
				return fmt.Errorf("%q has more than %d parameters", template, len(pathArgs{}.values))
			}
			n = n.param
		case strings.ContainsAny(seg, "{}"):
			return fmt.Errorf("%q: a parameter must be a whole segment", template)
		default:
			if n.literal == nil {
				n.literal = map[string]*pathNode{}
			}
			next := n.literal[seg]
			if next == nil {
				next = &pathNode{}
				n.literal[seg] = next
			}
			n = next
		}
	}
	target := documentPath{segment: segment}
	arg := 0
	for _, seg := range strings.Split(targetRest[1:], "/") {
		if strings.HasPrefix(seg, "{") {
			if arg >= len(params) {
				return fmt.Errorf("%q has fewer parameters than %q", template, targetRest)
			}
			target.rest = append(target.rest, pathPart{param: true, arg: arg})
			arg++
		} else {
			target.rest = append(target.rest, pathPart{literal: seg})
		}
	}
	if arg != len(params) {
		return fmt.Errorf("%q has more parameters than %q", template, targetRest)
	}
	target.sameShape = shapeOf(template) == shapeOf(targetRest)
	if n.methods == nil {
		n.methods = map[string]*pathTarget{}
	}
	pt := n.methods[method]
	switch {
	case pt == nil:
		n.methods[method] = &pathTarget{newest: target, bySegment: map[string]documentPath{segment: target}}
		allowed := make([]string, 0, len(n.methods))
		for m := range n.methods {
			allowed = append(allowed, m)
		}
		slices.Sort(allowed)
		n.allow = strings.Join(allowed, ",")
	case isAlias:
		return fmt.Errorf("%s %s is already an operation's path", method, template)
	default:
		if _, dup := pt.bySegment[segment]; dup {
			return fmt.Errorf("%s /mgmt/openapi/%s%s is in the document twice", method, segment, template)
		}
		pt.bySegment[segment] = target
		if newerSegment(segment, pt.newest.segment) {
			pt.newest = target
		}
	}
	return nil
}

// shapeOf is a template with its parameter names dropped.
func shapeOf(template string) string {
	parts := strings.Split(template, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") {
			parts[i] = "{}"
		}
	}
	return strings.Join(parts, "/")
}

// newerSegment reports whether segment a names a newer path scheme than b (5 > 4 > 3).
func newerSegment(a, b string) bool {
	return slices.Index(versionSegments, a) < slices.Index(versionSegments, b)
}

// lookup finds where method on the path p goes. It returns the document's path, escaped as p is
// ("" when p is already it), or allow, the methods the template has, when it has not method;
// found is false when p is under no version segment or matches no template, so that the router
// answers it as it stands.
func (t *versionPaths) lookup(method, p string) (target, allow string, found bool) {
	after, ok := strings.CutPrefix(p, operationPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.IndexByte(after, '/')
	if i < 0 || !slices.Contains(versionSegments, after[:i]) {
		return "", "", false
	}
	segment, rest := after[:i], after[i+1:]
	var args pathArgs
	n := t.root.walk(rest, &args)
	if n == nil {
		return "", "", false
	}
	pt := n.methods[method]
	if pt == nil {
		return "", n.allow, true
	}
	doc, ok := pt.bySegment[segment]
	if !ok {
		doc = pt.newest
	}
	if doc.segment == segment && doc.sameShape {
		return "", "", true
	}
	if doc.sameShape {
		return operationPrefix + doc.segment + "/" + rest, "", true
	}
	var b strings.Builder
	b.Grow(len(p) + 16)
	b.WriteString(operationPrefix)
	b.WriteString(doc.segment)
	for _, part := range doc.rest {
		b.WriteByte('/')
		if part.param {
			b.WriteString(args.values[part.arg])
		} else {
			b.WriteString(part.literal)
		}
	}
	return b.String(), "", true
}

// pathArgs are the values of a path's parameters, in order; a template has at most
// len(values) of them.
type pathArgs struct {
	values [4]string
	n      int
}

// walk follows rest (the path after the segment, without its leading slash) from n: a literal
// segment before a parameter, and back to the parameter when the literal leads nowhere. It
// returns the node of the template that matches, nil when none does, with the parameters' values
// in args.
func (n *pathNode) walk(rest string, args *pathArgs) *pathNode {
	if rest == "" {
		if n.methods == nil {
			return nil
		}
		return n
	}
	seg, next := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		seg, next = rest[:i], rest[i+1:]
		if next == "" {
			return nil // a trailing slash is part of no template
		}
	}
	if seg == "" {
		return nil
	}
	if child := n.literal[seg]; child != nil {
		if found := child.walk(next, args); found != nil {
			return found
		}
	}
	if n.param == nil || args.n == len(args.values) {
		return nil
	}
	args.values[args.n] = seg
	args.n++
	if found := n.param.walk(next, args); found != nil {
		return found
	}
	args.n--
	return nil
}

// route sends r to the path the document serves it at. It answers 405 itself when the template
// exists under no segment with r's method, and reports done; otherwise it returns the request to
// serve, r itself when its path needs no change. The path is matched in its escaped form only
// when the request's escaping is not the default one (RawPath set), so that an escaped slash
// stays inside its segment.
func (t *versionPaths) route(w http.ResponseWriter, r *http.Request) (_ *http.Request, done bool) {
	if !strings.HasPrefix(r.URL.Path, operationPrefix) {
		return r, false
	}
	escaped := r.URL.RawPath != ""
	p := r.URL.Path
	if escaped {
		p = r.URL.EscapedPath()
	}
	target, allow, found := t.lookup(r.Method, p)
	switch {
	case !found || (target == "" && allow == ""):
		return r, false
	case allow != "":
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+allow)
		return r, true
	}
	u := *r.URL
	u.Path, u.RawPath = target, ""
	if escaped {
		unescaped, err := url.PathUnescape(target)
		if err != nil {
			return r, false
		}
		u.Path, u.RawPath = unescaped, target
	}
	routed := *r
	routed.URL = &u
	return &routed, false
}

// documentPathOf is the path of the document that r is served at (r's own path when it is one,
// or when it matches no template).
func (t *versionPaths) documentPathOf(r *http.Request) string {
	if r.URL.RawPath == "" {
		if target, _, _ := t.lookup(r.Method, r.URL.Path); target != "" {
			return target
		}
		return r.URL.Path
	}
	if target, _, _ := t.lookup(r.Method, r.URL.EscapedPath()); target != "" {
		if unescaped, err := url.PathUnescape(target); err == nil {
			return unescaped
		}
	}
	return r.URL.Path
}
