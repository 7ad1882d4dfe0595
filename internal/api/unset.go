package api

// What "not set" means in a request body, done once for every operation as the body is read
// (the body scanner of bodybounds.go), before the generated decoder sees it. The real service
// reads JSON the proto3 way, and its clients count on it:
//
//   - a null member is not set, wherever the object's schema declares that member and the
//     member's schema has a type and is not nullable (a nullable member's null is a value; the
//     members of free-form objects are kept as sent); a required array sent null is the empty
//     array, which is what an unset repeated field is;
//   - a member that is the zero value of its type (0, -0, 0.0, false, "") is not set where the
//     member's schema has a default: the operation then applies that default. The document
//     writes it as `default:` where the generated decoder may apply it, and as `x-default:` where
//     the operation applies it itself (a replace that keeps the stored value when the member is
//     not set: the decoder's default would overwrite it).
//
// Such a member is left out of what the decoder reads, as if it had not been written: a member
// is held back from its first byte (its comma, or its name for the first member) until its
// value shows whether it is kept (a null or zero that may be left out, to its end). Only those
// few bytes are held; a body without such members passes through unchanged, copied only where
// a read ends inside a held member.

import "io"

// The "not set" value a member's value may turn out to be.
const (
	cutNone = iota
	cutNull
	cutZero
)

// dropSpan is the bytes [from, to) of the body, left out, and with written in their place (never
// longer than they are).
type dropSpan struct {
	from, to int64
	with     string
}

// heldBytes are the bytes of the body from offset at on, read and not yet given out.
type heldBytes struct {
	at    int64
	bytes []byte
}

// unsetFlags say what is not set in a value of schema s, when it is a declared member: null,
// unless s is nullable or free-form (no type, no composition); the zero value, when s has a
// default.
func unsetFlags(s map[string]any) (nullUnset, zeroUnset bool) {
	nullable, _ := s["nullable"].(bool)
	_, composed := s["allOf"]
	if _, ok := s["oneOf"]; ok {
		composed = true
	}
	if _, ok := s["anyOf"]; ok {
		composed = true
	}
	_, hasDefault := s["default"]
	if _, ok := s["x-default"]; ok {
		hasDefault = true
	}
	return !nullable && (expectedType(s) != "" || composed), hasDefault
}

// memberValue decides, at the first byte c of a held member's value, whether the member is
// kept at once or may be left out once its value ends.
func (s *bodyScanner) memberValue(c byte, node *boundNode, declared bool) {
	if declared && node != nil {
		switch {
		case c == 'n' && node.nullUnset:
			s.cut, s.litAt = cutNull, s.pos
		case node.zeroUnset && (c == '0' || c == '-' || c == 'f' || c == '"'):
			s.cut = cutZero
		}
		if s.cut != cutNone {
			s.litLen = 0
			if c != '"' {
				s.literalByte(c)
			}
			return
		}
	}
	s.keepMember()
}

// keepMember gives out the held member. The first member kept in an object loses its comma
// when the members before it were all left out.
func (s *bodyScanner) keepMember() {
	top := &s.stack[len(s.stack)-1]
	if s.holdComma && !top.kept {
		s.drops = append(s.drops, dropSpan{s.hold, s.hold + 1, ""})
	}
	top.kept = true
	s.hold, s.cut = -1, cutNone
}

// leaveMember leaves out the held member, which ends before the byte at end.
func (s *bodyScanner) leaveMember(end int64) {
	s.drops = append(s.drops, dropSpan{s.hold, end, ""})
	s.hold, s.cut = -1, cutNone
}

func (s *bodyScanner) literalByte(c byte) {
	if s.litLen < len(s.lit) {
		s.lit[s.litLen] = c
	}
	s.litLen++
}

// endScalarMember ends a held member whose value is a number or literal, at the byte after it.
func (s *bodyScanner) endScalarMember() {
	lit := ""
	if s.litLen <= len(s.lit) {
		lit = string(s.lit[:s.litLen])
	}
	if s.cut == cutNull && lit == "null" {
		top := s.stack[len(s.stack)-1]
		if top.node.emptyArrays[string(top.key)] {
			at := s.litAt
			s.keepMember()
			s.drops = append(s.drops, dropSpan{at, s.pos, "[]"})
			return
		}
		s.leaveMember(s.pos)
		return
	}
	if s.cut == cutZero && (lit == "false" || isZeroNumber(lit)) {
		s.leaveMember(s.pos)
		return
	}
	s.keepMember()
}

// endStringMember ends a held member whose value is a string, at its closing quote.
func (s *bodyScanner) endStringMember() {
	if s.cut == cutZero && s.strRunes == 0 {
		s.leaveMember(s.pos + 1)
		return
	}
	s.keepMember()
}

// requiredArrays are the members schema s requires whose schema is an array.
func (b *boundsBuilder) requiredArrays(s map[string]any) map[string]bool {
	required, _ := s["required"].([]any)
	props, _ := s["properties"].(map[string]any)
	var out map[string]bool
	for _, r := range required {
		name, _ := r.(string)
		if p := b.table.resolve(props[name]); p != nil && expectedType(p) == "array" {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}

// unionOf is the names in a or b.
func unionOf(a, b map[string]bool) map[string]bool {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// isZeroNumber reports whether lit is a JSON number whose value is zero: -?0(.0+)?([eE][+-]?d+)?
func isZeroNumber(lit string) bool {
	i := 0
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	if i >= len(lit) || lit[i] != '0' {
		return false
	}
	i++
	if i < len(lit) && lit[i] == '.' {
		i++
		start := i
		for i < len(lit) && lit[i] == '0' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		start := i
		for i < len(lit) && lit[i] >= '0' && lit[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(lit)
}

// leaveOut gives out what the chunk just read into p[:n] completes: the held bytes and the
// chunk, without the members left out, up to the member still held. err is the chunk's read
// error, returned once everything before it is given out.
func (b *scannedBody) leaveOut(p []byte, n int, err error) (int, error) {
	s := b.scan
	data, at := p[:n], s.read-int64(n)
	if len(b.held.bytes) > 0 {
		b.held.bytes = append(b.held.bytes, p[:n]...)
		data, at = b.held.bytes, b.held.at
	}
	end := len(data)
	if s.hold >= 0 && err == nil {
		end = int(s.hold - at)
	}
	// Compact data[:end] in place: every member left out ends before end.
	w, r := 0, 0
	for _, d := range s.drops {
		from, to := int(d.from-at), int(d.to-at)
		w += copy(data[w:], data[r:from])
		w += copy(data[w:], d.with)
		r = to
	}
	w += copy(data[w:], data[r:end])
	s.drops = s.drops[:0]
	given := data[:w]
	k := w
	if len(b.held.bytes) > 0 {
		k = copy(p, given)
		b.ready = append(b.ready[:0:0], given[k:]...)
	}
	// What stays held moves to the front of its own buffer (a move within it when data is it).
	b.held.bytes = append(b.held.bytes[:0], data[end:]...)
	b.held.at = at + int64(end)
	if err != nil && len(b.ready) > 0 {
		b.err = err
		return k, nil
	}
	return k, err
}

var _ io.Reader = (*scannedBody)(nil)
