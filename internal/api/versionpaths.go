package api

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ogen-go/ogen/uri"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
)

// operationPrefix begins the path of every operation that has a version segment.
const operationPrefix = "/mgmt/openapi/"

// versionSegments are the segments a client may put after operationPrefix. Each reaches every
// operation: real clients keep one base URL (…/mgmt/openapi/latest or …/5) for every service,
// while the specification gives each operation the segment of the public path scheme it was
// taken from (3, 4 or 5).
var versionSegments = []string{"latest", "5", "4", "3"}

// routeTable is the one routing table of the edge: it leads what a client sends to the record of
// the operation (operations.go) and, for an operation under a version segment, to the path of
// api/openapi.yaml that the generated router serves. It is built once, at start, from the
// document: every operation under /mgmt/openapi/<n> is reached under each of versionSegments,
// at its own path and at each of its x-other-paths (the names the operation has in other
// versions of the public documents); every other operation at its path. Looking a path up walks
// its segments once; no area knows about segments.
type routeTable struct {
	// versioned holds the templates after their version segment; plain, the others whole.
	versioned, plain *pathNode
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

// documentPath is a path template of the document: its version segment and the parts after it,
// and its operation.
type documentPath struct {
	segment string
	rest    []pathPart
	// sameShape says that rest has the literals and parameters of the template the target was
	// found under, in the same places: only the segment needs changing.
	sameShape bool
	op        *operation
}

// pathPart is a literal segment, or (param) a parameter that takes the request's segment at
// index arg of the template's parameters.
type pathPart struct {
	literal string
	param   bool
	arg     int
}

// newRouteTable builds the table from the document's operations and their records (by
// operationId). It fails when a template of x-other-paths is also another operation's path under
// the same method, or is malformed, or when a template and method are in the document twice.
func newRouteTable(list []apidocument.Operation, byID map[string]*operation) (*routeTable, error) {
	t := &routeTable{versioned: &pathNode{}, plain: &pathNode{}}
	type alias struct {
		path, target string
		op           *operation
	}
	var aliases []alias
	for _, o := range list {
		op := byID[o.ID]
		segment, rest, ok := splitVersion(o.Path)
		if !ok || !slices.Contains(versionSegments, segment) {
			if err := add(t.plain, o.Method, o.Path, "", o.Path, false, op); err != nil {
				return nil, fmt.Errorf("openapi document: %w", err)
			}
			continue
		}
		if err := add(t.versioned, o.Method, rest, segment, rest, false, op); err != nil {
			return nil, fmt.Errorf("openapi document: %w", err)
		}
		for _, other := range op.otherPaths {
			aliases = append(aliases, alias{other, o.Path, op})
		}
	}
	// Other names go in last: they never take a template and method that an operation has.
	for _, a := range aliases {
		segment, rest, _ := splitVersion(a.target)
		if err := add(t.versioned, a.op.method, a.path, segment, rest, true, a.op); err != nil {
			return nil, fmt.Errorf("openapi document: x-other-paths of %s %s: %w", a.op.method, a.target, err)
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

// add routes method on template, under root, to op at the document's path
// /mgmt/openapi/segment/targetRest (for a versioned template: a path after the segment), or at
// targetRest itself when segment is "" (a plain template).
func add(root *pathNode, method, template, segment, targetRest string, isAlias bool, op *operation) error {
	if !strings.HasPrefix(template, "/") || strings.HasSuffix(template, "/") && template != "/" {
		return fmt.Errorf("%q is not a path template", template)
	}
	n := root
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
	target := documentPath{segment: segment, op: op}
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
			if segment == "" {
				return fmt.Errorf("%s %s is in the document twice", method, template)
			}
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

// routeMatch is what the table found for a request's method and path.
type routeMatch struct {
	// op is the operation, nil when none matches (the router answers the request as it stands).
	op *operation
	// target is the document's path, escaped as the request's path is, when it differs from it.
	target string
	// allow lists the methods of the versioned template matched, when it has not the request's
	// method (a 405).
	allow string
	// args are the values of the path's parameters, in the document template's order, escaped
	// as the request's path is.
	args pathArgs
	// versioned says that the path matched a template under a version segment.
	versioned bool
}

// match finds where method on the path p goes.
func (t *routeTable) match(method, p string) routeMatch {
	var m routeMatch
	after, ok := strings.CutPrefix(p, operationPrefix)
	i := strings.IndexByte(after, '/')
	if !ok || i < 0 || !slices.Contains(versionSegments, after[:i]) {
		if len(p) < 2 || p[0] != '/' {
			return m
		}
		if n := t.plain.walk(p[1:], &m.args); n != nil {
			if pt := n.methods[method]; pt != nil {
				m.op = pt.newest.op
			}
		}
		return m
	}
	segment, rest := after[:i], after[i+1:]
	var args pathArgs
	n := t.versioned.walk(rest, &args)
	if n == nil {
		return m
	}
	m.versioned = true
	pt := n.methods[method]
	if pt == nil {
		m.allow = n.allow
		return m
	}
	doc, ok := pt.bySegment[segment]
	if !ok {
		doc = pt.newest
	}
	m.op = doc.op
	if doc.sameShape {
		m.args = args
		if doc.segment != segment {
			m.target = operationPrefix + doc.segment + "/" + rest
		}
		return m
	}
	var b strings.Builder
	b.Grow(len(p) + 16)
	b.WriteString(operationPrefix)
	b.WriteString(doc.segment)
	for _, part := range doc.rest {
		b.WriteByte('/')
		if part.param {
			b.WriteString(args.values[part.arg])
			m.args.values[m.args.n] = args.values[part.arg]
			m.args.n++
		} else {
			b.WriteString(part.literal)
		}
	}
	m.target = b.String()
	return m
}

// lookup is match in the words of the version segments: the document's path, escaped as p is
// ("" when p is already it), or allow, the methods the template has, when it has not method;
// found is false when p is under no version segment or matches no template.
func (t *routeTable) lookup(method, p string) (target, allow string, found bool) {
	m := t.match(method, p)
	return m.target, m.allow, m.versioned
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

// requestPath is the path of r that the table matches: the escaped one when r's escaping is
// not the default one (RawPath set, normalized as the generated router normalizes it), so that
// an escaped slash stays inside its segment.
func requestPath(r *http.Request) (p string, escaped bool) {
	if r.URL.RawPath == "" {
		return r.URL.Path, false
	}
	if normalized, ok := uri.NormalizeEscapedPath(r.URL.RawPath); ok {
		return normalized, true
	}
	return r.URL.EscapedPath(), true
}

// route finds r's operation. It answers 405 itself when a versioned template exists with
// other methods only, and reports done; otherwise it returns the match, with the document's path
// to serve r at (unescaped, and escaped when r's path is) when it differs from r's, and the path
// parameters unescaped.
func (t *routeTable) route(w http.ResponseWriter, r *http.Request) (m routeMatch, path, rawPath string, done bool) {
	p, escaped := requestPath(r)
	m = t.match(r.Method, p)
	if m.allow != "" {
		w.Header().Set("Allow", m.allow)
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+m.allow)
		return m, "", "", true
	}
	if !escaped {
		return m, m.target, "", false
	}
	for i := range m.args.n {
		if unescaped, err := url.PathUnescape(m.args.values[i]); err == nil {
			m.args.values[i] = unescaped
		}
	}
	if m.target == "" {
		return m, "", "", false
	}
	unescaped, err := url.PathUnescape(m.target)
	if err != nil {
		return routeMatch{}, "", "", false
	}
	return m, unescaped, m.target, false
}
