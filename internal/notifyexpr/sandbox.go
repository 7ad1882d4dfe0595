package notifyexpr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nikolalohinski/gonja/v2/builtins"
	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// The value-building operators are rewritten into calls of these filters, whose names no source
// can spell (a filter name is an identifier), so that their size is checked before they build.
const (
	opAdd    = "+"
	opConcat = "~"
	opMul    = "*"
	// opIterate charges a loop for the items it is about to prepare.
	opIterate = "for"
)

// dataPerStep is how many bytes or entries a filter, test or operator reads for one step (a loop
// iteration): about the same time on this machine.
const dataPerStep = 16

// spendFor spends for reading in (nothing more once the budget is exhausted).
func spendFor(e *exec.Evaluator, in *exec.Value) error {
	b := budgetOf(e.Environment.Context)
	if b.exceeded != nil {
		return b.exceeded
	}
	return b.spend(1 + valueSize(in)/dataPerStep)
}

// growthLimit bounds input × argument sizes for the filters whose output can be their product
// (join, replace), checked before the library allocates.
const growthLimit = 4 * MaxValueLen

// harden walks a parsed template: it refuses every node this package does not know (failing
// closed if the library grows a construct), and rewrites +, ~ and * into size-checked filter
// calls.
func harden(root *nodes.Template) error {
	if root.Parent != nil || len(root.Macros) > 0 {
		return &Error{Reason: ReasonInvalid, Message: "templates cannot extend other templates or define macros"}
	}
	for _, n := range root.Nodes {
		if err := hardenNode(n); err != nil {
			return err
		}
	}
	return nil
}

func refused(what string, pos *tokens.Token) error {
	e := &Error{Reason: ReasonInvalid, Message: fmt.Sprintf("%s is not allowed in notification templates", what)}
	if pos != nil {
		e.Line, e.Column = pos.Line, pos.Col
		e.Message = fmt.Sprintf("line %d, column %d: %s", pos.Line, pos.Col, e.Message)
	}
	return e
}

func hardenNode(n nodes.Node) error {
	switch n := n.(type) {
	case nil, *nodes.Data, *nodes.Comment:
		return nil
	case *nodes.Output:
		var err error
		if n.Expression, err = hardenExpr(n.Expression); err != nil {
			return err
		}
		if n.Condition, err = hardenExpr(n.Condition); err != nil {
			return err
		}
		n.Alternative, err = hardenExpr(n.Alternative)
		return err
	case *nodes.Wrapper:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := hardenNode(c); err != nil {
				return err
			}
		}
		return nil
	case *nodes.ControlStructureBlock:
		return hardenControl(n)
	default:
		return refused(fmt.Sprintf("the construct %T", n), n.Position())
	}
}

func hardenControl(b *nodes.ControlStructureBlock) error {
	var err error
	switch cs := b.ControlStructure.(type) {
	case *stepStructure, *controlStructures.RawControlStructure,
		*controlStructures.BreakControlStructure, *controlStructures.ContinueControlStructure:
		return nil
	case *controlStructures.IfControlStructure:
		for i := range cs.Conditions {
			if cs.Conditions[i], err = hardenExpr(cs.Conditions[i]); err != nil {
				return err
			}
		}
		for _, w := range cs.Wrappers {
			if err := hardenNode(w); err != nil {
				return err
			}
		}
		return nil
	case *controlStructures.ForControlStructure:
		if cs.ObjectEvaluator, err = hardenExpr(cs.ObjectEvaluator); err != nil {
			return err
		}
		// The loop prepares all its items before the first iteration: charge for them first.
		cs.ObjectEvaluator = &nodes.FilteredExpression{
			Expression: cs.ObjectEvaluator,
			Filters:    []*nodes.FilterCall{{Token: cs.Position(), Name: opIterate, Args: []nodes.Expression{}, Kwargs: map[string]nodes.Expression{}}},
		}
		if cs.IfCondition, err = hardenExpr(cs.IfCondition); err != nil {
			return err
		}
		if err := hardenNode(cs.BodyWrapper); err != nil {
			return err
		}
		if cs.EmptyWrapper != nil {
			return hardenNode(cs.EmptyWrapper)
		}
		return nil
	case *setStructure:
		cs.value, err = hardenExpr(cs.value)
		return err
	default:
		return refused(fmt.Sprintf("the block %q", b.Name), b.Location)
	}
}

func hardenExprs(es []nodes.Expression) error {
	for i := range es {
		var err error
		if es[i], err = hardenExpr(es[i]); err != nil {
			return err
		}
	}
	return nil
}

func hardenKwargs(kw map[string]nodes.Expression) error {
	for k, e := range kw {
		h, err := hardenExpr(e)
		if err != nil {
			return err
		}
		kw[k] = h
	}
	return nil
}

func hardenAny(n nodes.Node) (nodes.Node, error) {
	if n == nil {
		return nil, nil
	}
	e, ok := n.(nodes.Expression)
	if !ok {
		return nil, refused(fmt.Sprintf("the construct %T", n), n.Position())
	}
	return hardenExpr(e)
}

func hardenExpr(e nodes.Expression) (nodes.Expression, error) {
	var err error
	switch n := e.(type) {
	case nil:
		return nil, nil
	case *nodes.String, *nodes.Integer, *nodes.Float, *nodes.Bool, *nodes.Name, *nodes.None, *nodes.Error:
		return e, nil
	case *nodes.List:
		return n, hardenExprs(n.Val)
	case *nodes.Tuple:
		return n, hardenExprs(n.Val)
	case *nodes.Dict:
		for _, p := range n.Pairs {
			if _, err := hardenExpr(p); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *nodes.Pair:
		if n.Key, err = hardenExpr(n.Key); err != nil {
			return nil, err
		}
		n.Value, err = hardenExpr(n.Value)
		return n, err
	case *nodes.FilteredExpression:
		if n.Expression, err = hardenExpr(n.Expression); err != nil {
			return nil, err
		}
		for _, f := range n.Filters {
			if err := hardenExprs(f.Args); err != nil {
				return nil, err
			}
			if err := hardenKwargs(f.Kwargs); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *nodes.TestExpression:
		if n.Expression, err = hardenExpr(n.Expression); err != nil {
			return nil, err
		}
		if err := hardenExprs(n.Test.Args); err != nil {
			return nil, err
		}
		return n, hardenKwargs(n.Test.Kwargs)
	case *nodes.Call:
		if n.Func, err = hardenAny(n.Func); err != nil {
			return nil, err
		}
		if n.Parent, err = hardenAny(n.Parent); err != nil {
			return nil, err
		}
		if err := hardenExprs(n.Args); err != nil {
			return nil, err
		}
		return n, hardenKwargs(n.Kwargs)
	case *nodes.GetItem:
		if n.Node, err = hardenAny(n.Node); err != nil {
			return nil, err
		}
		n.Arg, err = hardenAny(n.Arg)
		return n, err
	case *nodes.GetSlice:
		for _, p := range []*nodes.Node{&n.Node, &n.Start, &n.End, &n.Step} {
			if *p, err = hardenAny(*p); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *nodes.GetAttribute:
		n.Node, err = hardenAny(n.Node)
		return n, err
	case *nodes.Negation:
		n.Term, err = hardenExpr(n.Term)
		return n, err
	case *nodes.UnaryExpression:
		n.Term, err = hardenExpr(n.Term)
		return n, err
	case *nodes.BinaryExpression:
		if n.Left, err = hardenExpr(n.Left); err != nil {
			return nil, err
		}
		if n.Right, err = hardenExpr(n.Right); err != nil {
			return nil, err
		}
		var op string
		switch n.Operator.Token.Type {
		case tokens.Addition:
			op = opAdd
		case tokens.Tilde:
			op = opConcat
		case tokens.Multiply:
			op = opMul
		default:
			return n, nil
		}
		return &nodes.FilteredExpression{
			Expression: n.Left,
			Filters:    []*nodes.FilterCall{{Token: n.Operator.Token, Name: op, Args: []nodes.Expression{n.Right}, Kwargs: map[string]nodes.Expression{}}},
		}, nil
	default:
		return nil, refused(fmt.Sprintf("the expression %T", e), e.Position())
	}
}

// setStructure is `{% set name = expression %}`: the value is checked against MaxValueLen. The
// block form and attribute targets are not offered.
type setStructure struct {
	location *tokens.Token
	name     string
	value    nodes.Expression
}

func (s *setStructure) Position() *tokens.Token { return s.location }
func (s *setStructure) String() string {
	return fmt.Sprintf("set(Line=%d Col=%d)", s.location.Line, s.location.Col)
}

func (s *setStructure) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	b := budgetOf(r.Environment.Context)
	if err := b.spend(1); err != nil {
		return err
	}
	v := r.Eval(s.value)
	if v.IsError() {
		return v
	}
	if n := valueSize(v); n > MaxValueLen {
		return b.tooLong(fmt.Sprintf("the value set to %s", s.name), n)
	}
	r.Environment.Context.Set(s.name, v.Interface())
	return nil
}

func setParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &setStructure{location: p.Current()}
	at := func(msg string) error {
		pos := s.location
		if t := args.Current(); t != nil && t.Line > 0 {
			pos = t
		}
		return &parser.SyntaxError{Message: msg, Line: pos.Line, Column: pos.Col, Raw: pos.Val}
	}
	name := args.Match(tokens.Name)
	if name == nil {
		return nil, at("set needs a variable name: {% set name = expression %}")
	}
	if args.Match(tokens.Assign) == nil {
		return nil, at("set needs '=' and an expression: {% set name = expression %}")
	}
	value, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	if !args.End() {
		return nil, at("set takes one expression")
	}
	s.name, s.value = name.Val, value
	return s, nil
}

// valueSize is a value's length in bytes (strings) or entries (lists, maps), nested, stopping
// once past MaxValueLen.
func valueSize(v *exec.Value) int {
	if v == nil || v.IsNil() || v.IsError() {
		return 0
	}
	return sizeOf(v.Interface(), 0)
}

func sizeOf(x any, acc int) int {
	if acc > MaxValueLen {
		return acc
	}
	switch x := x.(type) {
	case string:
		return acc + len(x)
	case *exec.Value:
		if x == nil || x.IsNil() || x.IsError() {
			return acc
		}
		return sizeOf(x.Interface(), acc)
	case []any:
		acc += len(x)
		for _, e := range x {
			if acc = sizeOf(e, acc); acc > MaxValueLen {
				break
			}
		}
		return acc
	case exec.ValuesList:
		acc += len(x)
		for _, e := range x {
			if acc = sizeOf(e, acc); acc > MaxValueLen {
				break
			}
		}
		return acc
	case []string:
		acc += len(x)
		for _, e := range x {
			acc += len(e)
		}
		return acc
	case map[string]any:
		acc += len(x)
		for k, e := range x {
			if acc = sizeOf(e, acc+len(k)); acc > MaxValueLen {
				break
			}
		}
		return acc
	case map[string]string:
		acc += len(x)
		for k, e := range x {
			acc += len(k) + len(e)
		}
		return acc
	case *exec.Dict:
		acc += len(x.Pairs)
		for _, p := range x.Pairs {
			if acc = sizeOf(p.Value, sizeOf(p.Key, acc)); acc > MaxValueLen {
				break
			}
		}
		return acc
	default:
		return acc // numbers, booleans, none: their entry in a list or map is counted there
	}
}

// allowedFilters are gonja's filters whose cost is linear in their input and arguments and whose
// output is bounded by them; growth marks those whose output can reach input × argument.
// Refused: those taking a width or count that sizes the output (center, indent, wordwrap,
// format, batch, slice, filesizeformat), random, and pprint/urlize/xmlattr.
var allowedFilters = map[string]bool{
	"abs": false, "attr": false, "capitalize": false, "count": false, "d": false, "default": false,
	"dictsort": false, "e": false, "escape": false, "first": false, "float": false, "groupby": false,
	"int": false, "items": false, "join": true, "last": false, "length": false, "list": false,
	"lower": false, "map": false, "max": false, "min": false, "reject": false, "rejectattr": false,
	"replace": true, "reverse": false, "round": false, "select": false, "selectattr": false,
	"sort": false, "string": false, "striptags": false, "sum": false, "title": false, "tojson": false,
	"trim": false, "truncate": false, "unique": false, "upper": false, "urlencode": false,
	"wordcount": false,
}

// teraAliases are Tera's names for gonja filters, so templates written for Tera render.
var teraAliases = map[string]string{"json_encode": "tojson", "as_str": "string", "length": "length"}

func registerFilters() {
	for name, growth := range allowedFilters {
		f, ok := builtins.Filters.Get(name)
		if !ok {
			panic("notifyexpr: gonja lacks the filter " + name)
		}
		mustRegister(filters.Register(name, guardFilter(name, f, growth)))
	}
	for alias, name := range teraAliases {
		if alias == name {
			continue
		}
		f, _ := builtins.Filters.Get(name)
		mustRegister(filters.Register(alias, guardFilter(alias, f, false)))
	}
	mustRegister(filters.Register("split", guardFilter("split", filterSplit, false)))
	mustRegister(filters.Register(opAdd, guardFilter(opAdd, opAddFilter, false)))
	mustRegister(filters.Register(opConcat, guardFilter(opConcat, opConcatFilter, false)))
	mustRegister(filters.Register(opMul, guardFilter(opMul, opMulFilter, false)))
	mustRegister(filters.Register(opIterate, iterateFilter))
}

// guardFilter spends steps for the data a filter reads, refuses a growth filter whose output could
// pass the bound, and checks the size of what it returns.
func guardFilter(name string, f exec.FilterFunction, growth bool) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
		b := budgetOf(e.Environment.Context)
		if b.exceeded != nil {
			return exec.AsValue(b.exceeded)
		}
		inSize, argSize := valueSize(in), 0
		for _, a := range params.Args {
			argSize += valueSize(a)
		}
		for _, a := range params.KwArgs {
			argSize += valueSize(a)
		}
		if err := b.spend(1 + (inSize+argSize)/dataPerStep); err != nil {
			return exec.AsValue(err)
		}
		if growth && (inSize+1)*(argSize+1) > growthLimit {
			return exec.AsValue(b.tooLong(fmt.Sprintf("the result of %s", name), (inSize+1)*(argSize+1)))
		}
		out := f(e, in, params)
		if out != nil && !out.IsError() {
			if n := valueSize(out); n > MaxValueLen {
				return exec.AsValue(b.tooLong(fmt.Sprintf("the result of %s", name), n))
			}
		}
		return out
	}
}

// opAddFilter is `+`: numbers add, strings and lists concatenate (sizes checked first).
func opAddFilter(e *exec.Evaluator, l *exec.Value, params *exec.VarArgs) *exec.Value {
	if l.IsError() {
		return l
	}
	r := params.First()
	b := budgetOf(e.Environment.Context)
	switch {
	case l.IsList():
		if !r.IsList() {
			return exec.AsValue(fmt.Errorf("cannot add %s to a list", kind(r)))
		}
		if n := l.Len() + r.Len(); n > MaxValueLen {
			return exec.AsValue(b.tooLong("the list", n))
		}
		out := make([]any, 0, l.Len()+r.Len())
		for i := 0; i < l.Len(); i++ {
			out = append(out, l.Index(i).Interface())
		}
		for i := 0; i < r.Len(); i++ {
			out = append(out, r.Index(i).Interface())
		}
		return exec.AsValue(out)
	case l.IsFloat() || r.IsFloat():
		return exec.AsValue(l.Float() + r.Float())
	case l.IsString() || r.IsString():
		return concat(b, l, r)
	default:
		return exec.AsValue(l.Integer() + r.Integer())
	}
}

// opConcatFilter is `~`: both sides as text, joined.
func opConcatFilter(e *exec.Evaluator, l *exec.Value, params *exec.VarArgs) *exec.Value {
	if l.IsError() {
		return l
	}
	return concat(budgetOf(e.Environment.Context), l, params.First())
}

func concat(b *budget, l, r *exec.Value) *exec.Value {
	if n := valueSize(l) + valueSize(r); n > MaxValueLen {
		return exec.AsValue(b.tooLong("the text", n))
	}
	return exec.AsValue(l.String() + r.String())
}

// opMulFilter is `*`: numbers multiply; text times a count repeats (Jinja), bounded.
func opMulFilter(e *exec.Evaluator, l *exec.Value, params *exec.VarArgs) *exec.Value {
	if l.IsError() {
		return l
	}
	r := params.First()
	switch {
	case l.IsFloat() || r.IsFloat():
		return exec.AsValue(l.Float() * r.Float())
	case l.IsString() && r.IsInteger():
		count := r.Integer()
		if count <= 0 {
			return exec.AsValue("")
		}
		if count > MaxValueLen || len(l.String())*count > MaxValueLen {
			return exec.AsValue(budgetOf(e.Environment.Context).tooLong("the repeated text", MaxValueLen+1))
		}
		return exec.AsValue(strings.Repeat(l.String(), count))
	case l.IsString() || r.IsString() || l.IsList() || r.IsList() || l.IsDict() || r.IsDict():
		return exec.AsValue(fmt.Errorf("cannot multiply %s by %s", kind(l), kind(r)))
	default:
		return exec.AsValue(l.Integer() * r.Integer())
	}
}

// iterateFilter spends a step for every item a loop will prepare, and passes the value on.
func iterateFilter(e *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	if in.IsError() || !in.IsIterable() {
		return in
	}
	if err := budgetOf(e.Environment.Context).spend(1 + in.Len()); err != nil {
		return exec.AsValue(err)
	}
	return in
}

// filterSplit is Tera's split: text split on a separator (`pat`, or the first argument).
func filterSplit(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	sep := params.First()
	if p, ok := params.KwArgs["pat"]; ok {
		sep = p
	}
	if sep == nil || sep.IsNil() || !sep.IsString() || sep.String() == "" {
		return exec.AsValue(errors.New("split needs a non-empty separator: split(pat=',')"))
	}
	parts := strings.Split(in.String(), sep.String())
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return exec.AsValue(out)
}

func kind(v *exec.Value) string {
	switch {
	case v == nil || v.IsNil():
		return "none"
	case v.IsString():
		return "text"
	case v.IsBool():
		return "a boolean"
	case v.IsNumber():
		return "a number"
	case v.IsList():
		return "a list"
	case v.IsDict():
		return "a map"
	default:
		return "a value"
	}
}

// allowedTests are gonja's tests (all bounded by their inputs); teraTests adds Tera's names.
var allowedTests = []string{
	"boolean", "defined", "divisibleby", "eq", "equalto", "even", "false", "float", "ge", "gt",
	"greaterthan", "in", "integer", "iterable", "le", "lower", "lt", "lessthan", "mapping", "ne",
	"none", "number", "odd", "sameas", "sequence", "string", "true", "undefined", "upper",
}

func registerTests() {
	for _, name := range allowedTests {
		mustRegister(tests.Register(name, guardTest(mustTest(name))))
	}
	mustRegister(tests.Register("object", guardTest(mustTest("mapping"))))
	mustRegister(tests.Register("starting_with", textTest("starting_with", strings.HasPrefix)))
	mustRegister(tests.Register("ending_with", textTest("ending_with", strings.HasSuffix)))
	mustRegister(tests.Register("containing", testContaining))
	mustRegister(tests.Register("matching", testMatching))
}

func mustTest(name string) exec.TestFunction {
	t, ok := builtins.Tests.Get(name)
	if !ok {
		panic("notifyexpr: gonja lacks the test " + name)
	}
	return t
}

// guardTest spends steps for the data a test reads (`in` against a long list, from a select
// over another long list, would otherwise be quadratic work without a step).
func guardTest(t exec.TestFunction) func(*exec.Evaluator, *exec.Value, *exec.VarArgs) (bool, error) {
	return func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) (bool, error) {
		b := budgetOf(e.Environment.Context)
		if b.exceeded != nil {
			return false, b.exceeded
		}
		n := valueSize(in)
		for _, a := range params.Args {
			n += valueSize(a)
		}
		if err := b.spend(1 + n/dataPerStep); err != nil {
			return false, err
		}
		switch f := t.(type) {
		case func(*exec.Context, *exec.Value, *exec.VarArgs) (bool, error):
			return f(e.Environment.Context, in, params)
		case func(*exec.Evaluator, *exec.Value, *exec.VarArgs) (bool, error):
			return f(e, in, params)
		}
		return false, fmt.Errorf("the test has an unexpected signature %T", t)
	}
}

func textTest(name string, f func(s, x string) bool) func(*exec.Evaluator, *exec.Value, *exec.VarArgs) (bool, error) {
	return func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) (bool, error) {
		if err := spendFor(e, in); err != nil {
			return false, err
		}
		if in.IsError() {
			return false, in
		}
		arg := params.First()
		if len(params.Args) != 1 || !arg.IsString() {
			return false, exec.ErrInvalidCall(fmt.Errorf("%s takes one text argument", name))
		}
		if !in.IsString() {
			return false, nil
		}
		return f(in.String(), arg.String()), nil
	}
}

// testContaining is Tera's `containing`: a substring of text, an element of a list, a key of a map.
func testContaining(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) (bool, error) {
	if err := spendFor(e, in); err != nil {
		return false, err
	}
	if in.IsError() {
		return false, in
	}
	if len(params.Args) != 1 {
		return false, exec.ErrInvalidCall(errors.New("containing takes one argument"))
	}
	arg := params.First()
	switch {
	case in.IsString():
		return arg.IsString() && strings.Contains(in.String(), arg.String()), nil
	case in.IsList() || in.IsDict():
		return in.Contains(arg), nil
	default:
		return false, nil
	}
}

var regexCache sync.Map // pattern → *regexp.Regexp (RE2: matching is linear in the input)

// testMatching is Tera's `matching`: the text matches the regular expression (RE2 syntax).
func testMatching(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) (bool, error) {
	if err := spendFor(e, in); err != nil {
		return false, err
	}
	if in.IsError() {
		return false, in
	}
	arg := params.First()
	if len(params.Args) != 1 || !arg.IsString() {
		return false, exec.ErrInvalidCall(errors.New("matching takes one regular expression"))
	}
	var re *regexp.Regexp
	if cached, ok := regexCache.Load(arg.String()); ok {
		re = cached.(*regexp.Regexp)
	} else {
		compiled, err := regexp.Compile(arg.String())
		if err != nil {
			// The library splits messages on ": "; keep this one whole.
			return false, fmt.Errorf("invalid regular expression %q (%s)", arg.String(), strings.ReplaceAll(err.Error(), ": ", " - "))
		}
		re = compiled
		if len(arg.String()) <= 1024 {
			regexCache.Store(arg.String(), re)
		}
	}
	return in.IsString() && re.MatchString(in.String()), nil
}

// rangeFunc is range(stop) / range(start, stop[, step]), at most MaxValueLen numbers.
func rangeFunc(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	var start, stop, step = 0, 0, 1
	args := va.Args
	for _, a := range args {
		if !a.IsInteger() {
			return exec.AsValue(exec.ErrInvalidCall(errors.New("range takes integers")))
		}
	}
	switch len(args) {
	case 1:
		stop = args[0].Integer()
	case 2:
		start, stop = args[0].Integer(), args[1].Integer()
	case 3:
		start, stop, step = args[0].Integer(), args[1].Integer(), args[2].Integer()
	default:
		return exec.AsValue(exec.ErrInvalidCall(errors.New("range takes 1 to 3 integers")))
	}
	if step == 0 {
		return exec.AsValue(exec.ErrInvalidCall(errors.New("range step cannot be 0")))
	}
	n := 0
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && start > stop {
		n = (start - stop - step - 1) / -step
	}
	b := budgetOf(e.Environment.Context)
	if n > MaxValueLen || n < 0 {
		return exec.AsValue(b.tooLong("the range", n))
	}
	if err := b.spend(1 + n/dataPerStep); err != nil {
		return exec.AsValue(err)
	}
	out := make([]any, n)
	for i := range out {
		out[i] = start + i*step
	}
	return exec.AsValue(out)
}
