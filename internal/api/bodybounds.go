package api

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Request bodies are checked against their bounds while they are read, before the generated
// decoder builds anything from them: a body is read through a bodyScanner, a small JSON state
// machine that knows, from the operation's request body schema in api/openapi.yaml (its record's
// bounds, built once when the document is read), the maxItems
// of each array, the maxLength of each string and the maxProperties of each map. The first
// violation ends the read: item 101 of a 100-item array stops it, and the answer is the 400 the
// validator would give after decoding ("deletes: must have at most 100 items (got 101)"), without
// the body ever being held or decoded whole. The same pass refuses text no engine stores alike:
// invalid UTF-8, the NUL character and lone UTF-16 surrogate escapes ("\ud800" without its pair),
// which the decoder would otherwise turn silently into U+FFFD.
//
// The scanner only refuses what the validator would refuse: where the schema is a choice
// (oneOf/anyOf) it applies the loosest bound of the alternatives, and a body that is not JSON is
// left, from the point where it stops being JSON, to the decoder and its "malformed JSON" answer.

// bodyRuleError is a request body refused while it was read. It reaches the API's single exit
// wrapped in the generated decoder's error (classify answers it with 400 and Message).
type bodyRuleError struct {
	Message string
}

func (e *bodyRuleError) Error() string { return e.Message }

// boundNode holds the bounds of one place in a request body; -1 is "no bound". Its two flags
// say what "not set" is there, for a value that is a declared property of an object (see
// unset.go): nullUnset, a null is not set (the schema is typed and not nullable); zeroUnset, the
// zero value of its type is not set too (the schema has a default).
type boundNode struct {
	maxItems      int
	maxLength     int
	maxProperties int
	items         *boundNode
	properties    map[string]*boundNode
	additional    *boundNode
	nullUnset     bool
	zeroUnset     bool
	// emptyArrays are the required members whose schema is an array: their null is the empty
	// array, not a missing member.
	emptyArrays map[string]bool
}

func newBoundNode() *boundNode { return &boundNode{maxItems: -1, maxLength: -1, maxProperties: -1} }

// boundsBuilder turns schemas into boundNodes, for the operations' records (readOperations);
// byRef keeps the node of each $ref already built, so shared schemas are built once.
type boundsBuilder struct {
	table *operationTable
	byRef map[string]*boundNode
}

// maxBoundsDepth is how deep the schemas are followed (the document's are far shallower; a
// recursive schema stops being bounded there, never refused wrongly).
const maxBoundsDepth = 48

// build returns the bounds of schema, or nil when it has none anywhere below it.
func (b *boundsBuilder) build(schema any, depth int) *boundNode {
	if depth > maxBoundsDepth {
		return nil
	}
	raw, _ := schema.(map[string]any)
	ref, isRef := raw["$ref"].(string)
	if isRef {
		if n, done := b.byRef[ref]; done {
			return n
		}
	}
	s := b.table.resolve(schema)
	if s == nil {
		return nil
	}
	n := newBoundNode()
	n.nullUnset, n.zeroUnset = unsetFlags(s)
	if v, ok := intOf(s["maxItems"]); ok {
		n.maxItems = v
	}
	if v, ok := intOf(s["maxLength"]); ok {
		n.maxLength = v
	}
	if v, ok := intOf(s["maxProperties"]); ok {
		n.maxProperties = v
	}
	if s["items"] != nil {
		n.items = b.build(s["items"], depth+1)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if c := b.build(p, depth+1); c != nil {
				if n.properties == nil {
					n.properties = map[string]*boundNode{}
				}
				n.properties[name] = c
			}
		}
	}
	if extra, ok := s["additionalProperties"].(map[string]any); ok {
		n.additional = b.build(extra, depth+1)
	}
	n.emptyArrays = b.requiredArrays(s)
	if all, ok := s["allOf"].([]any); ok {
		for _, part := range all {
			n = tightest(n, b.build(part, depth+1))
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, _ := s[key].([]any)
		if len(alts) == 0 {
			continue
		}
		var choice *boundNode
		for i, alt := range alts {
			c := b.build(alt, depth+1)
			if i == 0 {
				choice = c
			} else {
				choice = loosest(choice, c)
			}
		}
		n = tightest(n, choice)
	}
	if n.empty() {
		n = nil
	}
	if isRef && depth <= maxBoundsDepth/2 {
		b.byRef[ref] = n
	}
	return n
}

// empty reports whether n bounds nothing.
func (n *boundNode) empty() bool {
	return n.maxItems < 0 && n.maxLength < 0 && n.maxProperties < 0 && n.items == nil &&
		len(n.properties) == 0 && n.additional == nil && !n.nullUnset && !n.zeroUnset && len(n.emptyArrays) == 0
}

// intOf reads a non-negative integer keyword of the document.
func intOf(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, t >= 0
	case int64:
		return int(t), t >= 0
	case uint64:
		return int(t), true
	case float64:
		return int(t), t >= 0
	}
	return 0, false
}

// tightest is the bounds of a value that must meet both a and b (allOf).
func tightest(a, b *boundNode) *boundNode {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	n := &boundNode{
		maxItems:      minBound(a.maxItems, b.maxItems),
		maxLength:     minBound(a.maxLength, b.maxLength),
		maxProperties: minBound(a.maxProperties, b.maxProperties),
		items:         tightest(a.items, b.items),
		additional:    tightest(a.additional, b.additional),
		nullUnset:     a.nullUnset && b.nullUnset, // a nullable or free-form part keeps null
		zeroUnset:     a.zeroUnset || b.zeroUnset,
		emptyArrays:   unionOf(a.emptyArrays, b.emptyArrays),
	}
	n.properties = mergeProperties(a.properties, b.properties, tightest)
	return n
}

// loosest is the bounds of a value that must meet a or b (oneOf, anyOf): what both allow.
func loosest(a, b *boundNode) *boundNode {
	if a == nil || b == nil {
		// One alternative bounds nothing at this level; properties it declares elsewhere could
		// still be bounded, but an alternative without bounds allows any value here.
		return nil
	}
	n := &boundNode{
		maxItems:      maxBound(a.maxItems, b.maxItems),
		maxLength:     maxBound(a.maxLength, b.maxLength),
		maxProperties: maxBound(a.maxProperties, b.maxProperties),
		items:         loosest(a.items, b.items),
		additional:    loosest(a.additional, b.additional),
		nullUnset:     a.nullUnset && b.nullUnset,
		zeroUnset:     a.zeroUnset && b.zeroUnset,
		emptyArrays:   unionOf(a.emptyArrays, b.emptyArrays),
	}
	// A property only one alternative declares keeps that alternative's bounds: the other one
	// would not take that property's value for its own.
	n.properties = mergeProperties(a.properties, b.properties, loosest)
	if n.empty() {
		return nil
	}
	return n
}

func mergeProperties(a, b map[string]*boundNode, merge func(a, b *boundNode) *boundNode) map[string]*boundNode {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]*boundNode, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if old, both := out[k]; both {
			if m := merge(old, v); m != nil {
				out[k] = m
			} else {
				delete(out, k)
			}
		} else {
			out[k] = v
		}
	}
	return out
}

func minBound(a, b int) int {
	if a < 0 {
		return b
	}
	if b < 0 || a < b {
		return a
	}
	return b
}

func maxBound(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

// scanBody returns body read through a scanner of op's bounds; reading it fails with a
// *bodyRuleError at the first rule broken. What it reads leaves out the members that are not set
// (unset.go): a null, or a zero where the schema has a default.
func scanBody(op *operation, body io.ReadCloser) io.ReadCloser {
	return &scannedBody{body: body, scan: newBodyScanner(op.bounds)}
}

// scannedBody is a request body that is checked as it is read.
type scannedBody struct {
	body io.ReadCloser
	scan *bodyScanner
	err  error
	// held is the body's bytes from held.at on, read and not yet given out: a member whose value
	// is still to come may be left out.
	held heldBytes
	// ready is what is left to give out of the last chunk read.
	ready []byte
}

func (b *scannedBody) Read(p []byte) (int, error) {
	if len(b.ready) > 0 {
		n := copy(p, b.ready)
		b.ready = b.ready[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if n > 0 {
		if broken := b.scan.feed(p[:n]); broken != nil {
			b.err = broken
			return n, broken
		}
	}
	if err == io.EOF {
		if broken := b.scan.end(); broken != nil {
			b.err = broken
			return n, broken
		}
	}
	if len(b.held.bytes) == 0 && len(b.scan.drops) == 0 && (b.scan.hold < 0 || err != nil) {
		return n, err // nothing to leave out or hold back: most chunks of most bodies
	}
	return b.leaveOut(p, n, err)
}

func (b *scannedBody) Close() error { return b.body.Close() }

// The scanner's states between bytes.
const (
	stValue        = iota // a value is next
	stValueOrClose        // just after '[': a value or ']'
	stKeyOrClose          // just after '{': a key or '}'
	stKey                 // after ',' in an object: a key
	stColon               // after a key: ':'
	stCommaOrClose        // after a value inside a container
	stScalar              // inside a number or literal
	stString              // inside a string (key or value)
	stDone                // after the top-level value
	stNotJSON             // the body stopped being JSON: only its text is still checked
)

// maxScanDepth is the deepest nesting the scanner follows; the generated decoder refuses deeper
// bodies itself (jx's limit is 10000).
const maxScanDepth = 10000

// overrunLookahead is how many bytes the scanner still reads after a bound is passed, so that a
// value a little over it is reported with its exact size ("(got 101)"); past it, the answer says
// "(got more than N)" and the rest of the body is never read.
const overrunLookahead = 64 << 10

// scanFrame is one open array or object.
type scanFrame struct {
	object bool
	node   *boundNode
	count  int    // items or members so far
	key    []byte // an object's current member name (its buffer is reused from member to member)
	// holds: the object's schema declares properties, whose "not set" members are left out;
	// kept: a member of it has been kept (the next one keeps its comma).
	holds, kept bool
}

// bodyScanner is the state machine; feed it the body's bytes in order.
type bodyScanner struct {
	root  *boundNode
	state int
	stack []scanFrame

	// The string being read.
	inKey       bool
	strNode     *boundNode
	strRunes    int
	escape      int // 0 none; 1 after '\'; 2–5 reading the hex digits of \uXXXX
	hex         rune
	high        rune // a high surrogate escape waiting for its low half
	highPending bool // high was just completed: the next bytes must be \u and a low half
	keyBuf      []byte
	keyLong     bool

	// The UTF-8 sequence being read.
	utf8Buf  [4]byte
	utf8Len  int
	utf8Need int

	// A bound passed and the value that passed it, reported when that value ends or the
	// lookahead runs out.
	overrun      *overrun
	overrunBytes int

	// The top level has been entered.
	started bool

	// What is left out of the body (unset.go): offsets count the body's bytes from 0.
	read      int64      // the bytes fed before the current chunk
	pos       int64      // the offset of the byte jsonByte reads
	hold      int64      // where the member being read begins (its comma, or its name); -1: none
	holdComma bool       // the member began at its comma
	cut       int        // cutNone, or which "not set" value the member's value may be
	litAt     int64      // where the value's literal begins
	lit       [8]byte    // the value's literal, while cut is set
	litLen    int        // its length (past len(lit): too long to be a zero)
	drops     []dropSpan // the members left out, not yet taken out of what is given
}

// overrun is a bound passed by the value at depth (stack length when it was entered).
type overrun struct {
	path  string
	unit  string // "items", "characters", "entries"
	bound int
	got   int
	depth int
	// str marks a string overrun (counted in strRunes as it goes on).
	str bool
}

func newBodyScanner(root *boundNode) *bodyScanner {
	return &bodyScanner{root: root, stack: make([]scanFrame, 0, 8), hold: -1}
}

// end is the end of the body: an overrun still counting is reported as it stands.
func (s *bodyScanner) end() error {
	if s.overrun != nil {
		return s.overrunError(false)
	}
	if s.utf8Len > 0 {
		return &bodyRuleError{"body: must be valid UTF-8"}
	}
	return nil
}

func (s *bodyScanner) overrunError(exact bool) error {
	o := s.overrun
	got := o.got
	if o.str {
		got = s.strRunes
	}
	if exact {
		return &bodyRuleError{fmt.Sprintf("%s: must have at most %s (got %d)", o.path, countOf(o.bound, o.unit), got)}
	}
	return &bodyRuleError{fmt.Sprintf("%s: must have at most %s (got more than %d)", o.path, countOf(o.bound, o.unit), got)}
}

// countOf words "1 item", "100 items".
func countOf(n int, unit string) string {
	if n == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	return strconv.Itoa(n) + " " + unit
}

// path is where the value being entered is: "groups[0].rules", "body" for the top level.
func (s *bodyScanner) path() string {
	var b strings.Builder
	for _, f := range s.stack {
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(f.key)
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.count - 1))
			b.WriteByte(']')
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// containerPath is the path of the innermost open container (for a refused member name).
func (s *bodyScanner) containerPath() string {
	top := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	p := s.path()
	s.stack = append(s.stack, top)
	return p
}

// feed reads the next bytes of the body; it returns the first rule they break.
func (s *bodyScanner) feed(p []byte) error {
	base := s.read
	s.read += int64(len(p))
	for i := 0; i < len(p); i++ {
		if s.state == stString && s.escape == 0 && !s.highPending && s.utf8Len == 0 && s.overrun == nil {
			// A run of plain ASCII characters of a string, at once: most of most bodies.
			j := i
			for j < len(p) && p[j] >= 0x20 && p[j] < 0x80 && p[j] != '"' && p[j] != '\\' {
				j++
			}
			if j > i {
				if s.inKey {
					room := maxKeyBytes - len(s.keyBuf)
					if j-i > room {
						s.keyLong = true
						s.keyBuf = append(s.keyBuf, p[i:i+room]...)
					} else {
						s.keyBuf = append(s.keyBuf, p[i:j]...)
					}
				}
				s.strRunes += j - i
				if err := s.checkStringLength(); err != nil {
					return err
				}
				if i = j; i == len(p) {
					break
				}
			}
		}
		c := p[i]
		if s.overrun != nil {
			s.overrunBytes++
			if s.overrunBytes > overrunLookahead {
				return s.overrunError(false)
			}
		}
		// UTF-8, everywhere in the body.
		if c >= 0x80 || s.utf8Len > 0 {
			if err := s.utf8Byte(c); err != nil {
				if s.overrun != nil {
					return s.overrunError(false)
				}
				return err
			}
			if s.utf8Len > 0 {
				continue // the sequence goes on
			}
			if c >= 0x80 || s.state == stNotJSON {
				// A whole multi-byte character: only strings hold one.
				if s.state == stString && s.escape != 0 && !s.highPending {
					s.state = stNotJSON
				} else if s.state == stString {
					if s.highPending {
						if err := s.loneSurrogate(s.high); err != nil {
							return err
						}
					}
					s.strRunes++
					if err := s.checkStringLength(); err != nil {
						return err
					}
				} else if s.state != stNotJSON {
					s.state = stNotJSON
				}
				continue
			}
		}
		s.pos = base + int64(i)
		if err := s.jsonByte(c); err != nil {
			return err
		}
	}
	return nil
}

// utf8Byte adds c to the UTF-8 sequence being read.
func (s *bodyScanner) utf8Byte(c byte) error {
	invalid := &bodyRuleError{"body: must be valid UTF-8"}
	if s.utf8Len == 0 {
		switch {
		case c >= 0xC2 && c <= 0xDF:
			s.utf8Need = 2
		case c >= 0xE0 && c <= 0xEF:
			s.utf8Need = 3
		case c >= 0xF0 && c <= 0xF4:
			s.utf8Need = 4
		default:
			return invalid
		}
		s.utf8Buf[0] = c
		s.utf8Len = 1
		return nil
	}
	if c < 0x80 || c > 0xBF {
		return invalid
	}
	s.utf8Buf[s.utf8Len] = c
	s.utf8Len++
	if s.utf8Len == s.utf8Need {
		if !utf8.Valid(s.utf8Buf[:s.utf8Need]) {
			return invalid
		}
		s.utf8Len = 0
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonByte advances the JSON state machine by the ASCII byte c.
func (s *bodyScanner) jsonByte(c byte) error {
	switch s.state {
	case stNotJSON:
		return nil
	case stString:
		return s.stringByte(c)
	case stScalar:
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '+' || c == '-' {
			if s.cut != cutNone {
				s.literalByte(c)
			}
			return nil
		}
		if s.cut != cutNone {
			s.endScalarMember()
		}
		s.afterValue()
		return s.jsonByte(c)
	}
	if isSpace(c) {
		return nil
	}
	switch s.state {
	case stValue:
		return s.beginValue(c)
	case stValueOrClose:
		if c == ']' {
			return s.closeContainer(false)
		}
		return s.beginValue(c)
	case stKeyOrClose, stKey:
		if c == '}' && s.state == stKeyOrClose {
			return s.closeContainer(true)
		}
		if c != '"' {
			s.state = stNotJSON
			return nil
		}
		top := &s.stack[len(s.stack)-1]
		if top.holds && s.state == stKeyOrClose {
			s.hold, s.holdComma = s.pos, false // after ',' the member is held from its comma
		}
		top.count++
		if n := top.node; n != nil && n.maxProperties >= 0 && top.count > n.maxProperties && s.overrun == nil {
			s.overrun = &overrun{path: s.containerPath(), unit: "entries", bound: n.maxProperties, got: top.count, depth: len(s.stack)}
		} else if s.overrun != nil && s.overrun.depth == len(s.stack) && s.overrun.unit == "entries" {
			s.overrun.got = top.count
		}
		s.startString(true, nil)
	case stColon:
		if c != ':' {
			s.state = stNotJSON
			return nil
		}
		s.state = stValue
	case stCommaOrClose:
		top := &s.stack[len(s.stack)-1]
		switch {
		case c == ',' && top.object:
			s.state = stKey
			if top.holds {
				s.hold, s.holdComma = s.pos, true
			}
		case c == ',':
			s.state = stValue
		case c == '}' && top.object:
			return s.closeContainer(true)
		case c == ']' && !top.object:
			return s.closeContainer(false)
		default:
			s.state = stNotJSON
		}
	case stDone:
		s.state = stNotJSON
	}
	return nil
}

// valueNode is the bounds of the value about to begin; declared says it is a property the
// object's schema declares.
func (s *bodyScanner) valueNode() (node *boundNode, declared bool) {
	if len(s.stack) == 0 {
		return s.root, false
	}
	top := s.stack[len(s.stack)-1]
	if top.node == nil {
		return nil, false
	}
	if top.object {
		if c, ok := top.node.properties[string(top.key)]; ok {
			return c, true
		}
		return top.node.additional, false
	}
	return top.node.items, false
}

// beginValue starts the value whose first byte is c.
func (s *bodyScanner) beginValue(c byte) error {
	if len(s.stack) == 0 {
		if s.started {
			s.state = stNotJSON
			return nil
		}
		s.started = true
	} else if top := &s.stack[len(s.stack)-1]; !top.object {
		top.count++
		if n := top.node; n != nil && n.maxItems >= 0 && top.count > n.maxItems && s.overrun == nil {
			s.overrun = &overrun{path: s.containerPath(), unit: "items", bound: n.maxItems, got: top.count, depth: len(s.stack)}
		} else if o := s.overrun; o != nil && o.depth == len(s.stack) && o.unit == "items" {
			o.got = top.count
		}
	}
	node, declared := s.valueNode()
	if s.hold >= 0 {
		s.memberValue(c, node, declared)
	}
	switch {
	case c == '{' || c == '[':
		if len(s.stack) >= maxScanDepth {
			s.state = stNotJSON
			return nil
		}
		// The frame's member-name buffer is kept from the last frame at this depth.
		if len(s.stack) < cap(s.stack) {
			s.stack = s.stack[:len(s.stack)+1]
			f := &s.stack[len(s.stack)-1]
			*f = scanFrame{object: c == '{', node: node, key: f.key[:0]}
		} else {
			s.stack = append(s.stack, scanFrame{object: c == '{', node: node})
		}
		s.stack[len(s.stack)-1].holds = c == '{' && node != nil && len(node.properties) > 0
		if c == '{' {
			s.state = stKeyOrClose
		} else {
			s.state = stValueOrClose
		}
	case c == '"':
		s.startString(false, node)
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
		s.state = stScalar
	default:
		s.state = stNotJSON
	}
	return nil
}

// closeContainer ends the innermost array or object.
func (s *bodyScanner) closeContainer(object bool) error {
	if s.overrun != nil && s.overrun.depth == len(s.stack) && !s.overrun.str {
		return s.overrunError(true)
	}
	s.stack = s.stack[:len(s.stack)-1]
	s.afterValue()
	return nil
}

// afterValue moves on past a complete value.
func (s *bodyScanner) afterValue() {
	if len(s.stack) == 0 {
		s.state = stDone
	} else {
		s.state = stCommaOrClose
	}
}

func (s *bodyScanner) startString(key bool, node *boundNode) {
	s.state = stString
	s.inKey = key
	s.strNode = node
	s.strRunes = 0
	s.escape = 0
	s.highPending = false
	s.keyBuf = s.keyBuf[:0]
	s.keyLong = false
}

// maxKeyBytes is the longest member name kept to look its bounds up; no schema's names are
// near it, so a longer name has no bounds.
const maxKeyBytes = 256

// stringByte reads the ASCII byte c inside a string.
func (s *bodyScanner) stringByte(c byte) error {
	if s.escape == 1 {
		if c == 'u' {
			s.escape, s.hex = 2, 0
			return nil
		}
		if s.highPending {
			return s.loneSurrogate(s.high)
		}
		decoded, ok := simpleEscape(c)
		if !ok {
			s.state = stNotJSON
			return nil
		}
		s.escape = 0
		s.keyByte(decoded)
		return s.oneRune()
	}
	if s.escape >= 2 {
		var v rune
		switch {
		case c >= '0' && c <= '9':
			v = rune(c - '0')
		case c >= 'a' && c <= 'f':
			v = rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v = rune(c-'A') + 10
		default:
			s.state = stNotJSON
			return nil
		}
		s.hex = s.hex<<4 | v
		if s.escape < 5 {
			s.escape++
			return nil
		}
		s.escape = 0
		return s.escapedRune(s.hex)
	}
	if s.highPending {
		if c == '\\' {
			s.escape = 1
			return nil
		}
		return s.loneSurrogate(s.high)
	}
	switch {
	case c == '\\':
		s.escape = 1
		return nil
	case c == '"':
		return s.endString()
	case c < 0x20:
		s.state = stNotJSON
		return nil
	}
	s.keyByte(c)
	return s.oneRune()
}

// simpleEscape is the character the escape \c stands for; ok is false when JSON has no such
// escape.
func simpleEscape(c byte) (decoded byte, ok bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// escapedRune takes the code unit of a \uXXXX escape.
func (s *bodyScanner) escapedRune(u rune) error {
	isHigh := u >= 0xD800 && u <= 0xDBFF
	isLow := u >= 0xDC00 && u <= 0xDFFF
	if s.highPending {
		if !isLow {
			return s.loneSurrogate(s.high)
		}
		s.highPending = false
		s.keyRune(utf16.DecodeRune(s.high, u))
		return s.oneRune()
	}
	switch {
	case isHigh:
		s.high, s.highPending = u, true
		return nil
	case isLow:
		return s.loneSurrogate(u)
	case u == 0:
		if s.overrun != nil {
			return nil
		}
		p := s.stringPath()
		return &bodyRuleError{p + `: must not contain the NUL character (\u0000)`}
	}
	s.keyRune(u)
	return s.oneRune()
}

func (s *bodyScanner) loneSurrogate(u rune) error {
	if s.overrun != nil {
		// The bound passed first is the answer.
		s.highPending = false
		return nil
	}
	return &bodyRuleError{fmt.Sprintf(`%s: must not contain a lone UTF-16 surrogate (\u%04x)`, s.stringPath(), u)}
}

// stringPath names the string being read: a value's path, or for a member name the object's.
func (s *bodyScanner) stringPath() string {
	if s.inKey {
		return s.containerPath()
	}
	return s.path()
}

func (s *bodyScanner) keyByte(c byte) {
	if !s.inKey {
		return
	}
	if len(s.keyBuf) >= maxKeyBytes {
		s.keyLong = true
		return
	}
	s.keyBuf = append(s.keyBuf, c)
}

func (s *bodyScanner) keyRune(r rune) {
	if !s.inKey {
		return
	}
	var buf [utf8.UTFMax]byte
	for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
		s.keyByte(b)
	}
}

// oneRune counts a character of the string.
func (s *bodyScanner) oneRune() error {
	s.strRunes++
	return s.checkStringLength()
}

func (s *bodyScanner) checkStringLength() error {
	if s.inKey || s.strNode == nil || s.strNode.maxLength < 0 || s.overrun != nil {
		return nil
	}
	if s.strRunes > s.strNode.maxLength {
		s.overrun = &overrun{path: s.path(), unit: "characters", bound: s.strNode.maxLength, depth: len(s.stack), str: true}
	}
	return nil
}

// endString ends the string at its closing quote.
func (s *bodyScanner) endString() error {
	if o := s.overrun; o != nil && o.str && o.depth == len(s.stack) {
		return s.overrunError(true)
	}
	if s.inKey {
		top := &s.stack[len(s.stack)-1]
		top.key = append(top.key[:0], s.keyBuf...)
		if s.keyLong {
			top.key = append(top.key, "…"...)
		}
		s.state = stColon
		return nil
	}
	if s.cut != cutNone {
		s.endStringMember()
	}
	s.afterValue()
	return nil
}
