// Package notifyexpr evaluates the notification center's routing conditions and renders its message
// templates.
//
// Both are Jinja-style (the public product documents them as Tera): a template is text with
// `{{ expression }}` outputs and `{% if %}` / `{% for %}` / `{% set %}` blocks
// (`{{alert.status}} {{alertDef.priority}} - {{alertDef.name}}`); a condition is one such expression,
// the text that would sit between `{{` and `}}`, and must evaluate to a boolean
// (`alertDef.priority == 'P3'`, `alert.status == 'Triggered' and alertDef.name is containing('db')`).
// The parsing and evaluation are gonja's (github.com/nikolalohinski/gonja/v2); this package chooses
// what of it is reachable and bounds what it may cost:
//
//   - no file or environment access: the loader serves only the one source given, and the
//     constructs that read other templates (include, import, from, extends), macros, call blocks
//     and recursive loops are refused when the source is checked;
//   - bounded source (MaxSourceLen), output (MaxOutputLen) and every intermediate string or list
//     (MaxValueLen): the operators that build values (`+`, `~`, `*`), `set` and every filter are
//     checked before or as they build;
//   - bounded work: every loop iteration, filter, test and value-building operator spends from a
//     step budget (MaxSteps) and checks a deadline (Timeout); the first exhausted ends the
//     evaluation with a *Error of kind ReasonTooExpensive.
//
// Undefined names and fields are errors (ReasonFieldNotFound), as in Tera; `x is defined` and
// `x | default('…')` are the ways to allow a field to be missing.
package notifyexpr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/builtins"
	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// The bounds every evaluation keeps. MaxSourceLen (characters) and MaxOutputLen (bytes, so never
// more characters) are the public documents' bounds of a template and of a rendered value.
const (
	MaxSourceLen = 20000
	MaxOutputLen = 50000
	// MaxValueLen bounds every string (bytes) and list or map (entries) built while evaluating.
	MaxValueLen = 50000
	// MaxSteps bounds the work of one evaluation: loop iterations, filter and test calls, and
	// value-building operators (each costs one step plus one per dataPerStep bytes or entries it reads).
	MaxSteps = 200000
	// Timeout bounds the wall time of one evaluation.
	Timeout = 250 * time.Millisecond
)

// Reason classifies why a source was refused or an evaluation failed.
type Reason string

const (
	// ReasonInvalid: the source does not parse, uses a refused construct, or fails while evaluating
	// (a wrong type, an unknown filter, a condition that is not a boolean).
	ReasonInvalid Reason = "invalid"
	// ReasonFieldNotFound: the source names a variable or field the entity does not have.
	ReasonFieldNotFound Reason = "field_not_found"
	// ReasonSourceTooLong: the source is longer than MaxSourceLen.
	ReasonSourceTooLong Reason = "source_too_long"
	// ReasonOutputTooLong: the rendered text, or a value built on the way, passes its bound.
	ReasonOutputTooLong Reason = "output_too_long"
	// ReasonTooExpensive: the evaluation ran out of steps or time.
	ReasonTooExpensive Reason = "too_expensive"
)

// Error is a refused source or a failed evaluation. Line and Column (1-based) are set when the
// library names a position; Message is meant for the user and names it too.
type Error struct {
	Reason  Reason
	Line    int
	Column  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// maxMessageLen keeps library messages (which quote parts of the source) readable and within the
// public bound of a failure message.
const maxMessageLen = 2000

func newError(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: clip(fmt.Sprintf(format, args...))}
}

func clip(s string) string {
	if len(s) <= maxMessageLen {
		return s
	}
	cut := maxMessageLen
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// sourceName is the only identifier the loader answers.
const sourceName = "template"

// budgetKey holds the evaluation's budget in its context. It is not an identifier, so no source
// can read or replace it.
const budgetKey = "$budget"

var (
	gonjaConfig = func() *config.Config {
		c := config.New()
		c.StrictUndefined = true
		c.KeepTrailingNewline = true
		return c
	}()
	controls = exec.NewControlStructureSet(map[string]parser.ControlStructureParser{})
	filters  = exec.NewFilterSet(map[string]exec.FilterFunction{})
	tests    = exec.NewTestSet(map[string]exec.TestFunction{})
	// No methods: Python's str/list/dict methods are not Tera's, and some size their output
	// from an argument (center, ljust, zfill).
	methods = exec.Methods{
		Bool:  exec.NewMethodSet(map[string]exec.Method[bool]{}),
		Int:   exec.NewMethodSet(map[string]exec.Method[int]{}),
		Float: exec.NewMethodSet(map[string]exec.Method[float64]{}),
		Str:   exec.NewMethodSet(map[string]exec.Method[string]{}),
		Dict:  exec.NewMethodSet(map[string]exec.Method[map[string]any]{}),
		List:  exec.NewMethodSet(map[string]exec.Method[[]any]{}),
	}
	globals *exec.Context
)

func init() {
	for _, name := range []string{"if", "raw", "break", "continue"} {
		p, ok := builtins.ControlStructures.Get(name)
		if !ok {
			panic("notifyexpr: gonja lacks the control structure " + name)
		}
		mustRegister(controls.Register(name, p))
	}
	mustRegister(controls.Register("for", forParser))
	mustRegister(controls.Register("set", setParser))
	registerFilters()
	registerTests()
	globals = exec.NewContext(map[string]any{"range": rangeFunc})
}

func mustRegister(err error) {
	if err != nil {
		panic("notifyexpr: " + err.Error())
	}
}

// loader serves the one source being compiled and refuses every other name, so nothing outside
// the request is ever read.
type loader struct{ source string }

func (l loader) Read(path string) (io.Reader, error) {
	if path != sourceName {
		return nil, fmt.Errorf("templates cannot read other templates (%q)", path)
	}
	return strings.NewReader(l.source), nil
}

func (l loader) Resolve(path string) (string, error) {
	if path != sourceName {
		return "", fmt.Errorf("templates cannot read other templates (%q)", path)
	}
	return path, nil
}

func (l loader) Inherit(string) (loaders.Loader, error) {
	return nil, errors.New("templates cannot read other templates")
}

func environment(ctx *exec.Context) *exec.Environment {
	return &exec.Environment{Context: ctx, Filters: filters, Tests: tests, ControlStructures: controls, Methods: methods}
}

// compile parses src and hardens the tree. colShift is subtracted from first-line columns (a
// condition is compiled inside "{{ "). A position in a template is named as the template's
// ("the template's line 1, column 5: '}}' expected here"), so that the message, read after the
// field's path, is not taken for a position in the request's body; a condition's keeps the form
// "line 1, column 21" that the notification center's answers use.
func compile(src string, colShift int, what string) (tpl *exec.Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			tpl, err = nil, newError(ReasonInvalid, "the %s cannot be parsed: %v", what, p)
		}
		var e *Error
		if what == "template" && errors.As(err, &e) && e.Line > 0 && strings.HasPrefix(e.Message, "line ") {
			e.Message = "the template's " + e.Message
		}
	}()
	tpl, err = exec.NewTemplate(sourceName, gonjaConfig, loader{source: src}, environment(globals))
	if err != nil {
		return nil, syntaxError(err, colShift)
	}
	if err := harden(tpl.Root()); err != nil {
		return nil, err
	}
	return tpl, nil
}

func syntaxError(err error, colShift int) *Error {
	var se *parser.SyntaxError
	if errors.As(err, &se) {
		col := se.Column
		if se.Line == 1 && col > colShift {
			col -= colShift
		}
		e := newError(ReasonInvalid, "line %d, column %d: %s", se.Line, col, strings.TrimSuffix(se.Message, "."))
		if se.Raw != "" {
			e.Message = clip(fmt.Sprintf("%s (near %q)", e.Message, se.Raw))
		}
		e.Line, e.Column = se.Line, col
		return e
	}
	msg := err.Error()
	// exec.NewTemplate quotes the whole source before the reason; keep the reason.
	if i := strings.LastIndex(msg, "': "); strings.HasPrefix(msg, "failed to parse template '") && i >= 0 {
		msg = msg[i+3:]
	}
	return newError(ReasonInvalid, "%s", msg)
}

func checkSourceLen(src, what string) error {
	// Characters, as the public bound counts them (a JSON string's length).
	if len(src) > MaxSourceLen && utf8.RuneCountInString(src) > MaxSourceLen {
		return &Error{Reason: ReasonSourceTooLong, Message: fmt.Sprintf("the %s is %d characters long; at most %d are allowed", what, utf8.RuneCountInString(src), MaxSourceLen)}
	}
	// gonja's lexer can loop forever on some invalid UTF-8 (found by FuzzSources); JSON bodies
	// are valid UTF-8, so only a Go caller can hand such a source in.
	if !utf8.ValidString(src) {
		return &Error{Reason: ReasonInvalid, Message: fmt.Sprintf("the %s is not valid UTF-8", what)}
	}
	// gonja's lexer also loops forever on a number, a dot and a multi-byte character (it backs up
	// by the width of the character instead of the dot's), found by FuzzSources.
	if loc := numberDotWide.FindStringIndex(src); loc != nil {
		line := 1 + strings.Count(src[:loc[0]], "\n")
		col := 1 + utf8.RuneCountInString(src[strings.LastIndex(src[:loc[0]], "\n")+1:loc[0]])
		return &Error{Reason: ReasonInvalid, Line: line, Column: col, Message: fmt.Sprintf(
			"%sline %d, column %d: a digit followed by '.' and a non-ASCII character cannot be parsed; put a space after the dot", positionOf(what), line, col)}
	}
	return nil
}

// positionOf is what a position in the source what is prefixed with (see compile).
func positionOf(what string) string {
	if what == "template" {
		return "the template's "
	}
	return ""
}

var numberDotWide = regexp.MustCompile(`\p{Nd}\.[^\x00-\x7F]`)

// CheckTemplate reports whether src is a template this package renders: within MaxSourceLen, and
// parsing to constructs that are allowed. It does not evaluate anything.
//
// Errors: *Error with ReasonSourceTooLong or ReasonInvalid (naming line and column).
func CheckTemplate(src string) error {
	if err := checkSourceLen(src, "template"); err != nil {
		return err
	}
	_, err := compile(src, 0, "template")
	return err
}

// Render renders src with entity as its variables (see AlertEntity, CaseEntity), within the
// package's bounds.
//
// Errors: *Error with the reasons of CheckTemplate, ReasonFieldNotFound, ReasonInvalid (an
// evaluation error), ReasonOutputTooLong, ReasonTooExpensive.
func Render(src string, entity map[string]any) (string, error) {
	return RenderContext(context.Background(), src, entity)
}

// RenderContext is Render paced as ctx says (see Paced), in the evaluation child when ctx says
// so (see Offloaded).
func RenderContext(ctx context.Context, src string, entity map[string]any) (string, error) {
	if err := checkSourceLen(src, "template"); err != nil {
		return "", err
	}
	if a, ok := offload(ctx, childRequest{Src: src, Entity: entity}); ok {
		return a.Out, a.err()
	}
	tpl, err := compile(src, 0, "template")
	if err != nil {
		return "", err
	}
	b := newBudget(ctx)
	out := &limitedWriter{budget: b}
	err = run(b, func() error { return tpl.Execute(out, evalContext(entity, b)) })
	if err != nil {
		return "", err
	}
	return out.buf.String(), nil
}

// CheckCondition reports whether src is a condition this package evaluates: one expression,
// within MaxSourceLen, parsing to allowed constructs. It does not evaluate anything.
//
// Errors: *Error with ReasonSourceTooLong or ReasonInvalid (naming line and column).
func CheckCondition(src string) error {
	_, err := compileCondition(src)
	return err
}

// EvalCondition evaluates the condition src with entity as its variables; the condition must
// evaluate to a boolean.
//
// Errors: *Error with the reasons of CheckCondition, ReasonFieldNotFound, ReasonInvalid (an
// evaluation error, or a result that is not a boolean), ReasonOutputTooLong, ReasonTooExpensive.
func EvalCondition(src string, entity map[string]any) (bool, error) {
	return EvalConditionContext(context.Background(), src, entity)
}

// EvalConditionContext is EvalCondition paced as ctx says (see Paced), in the evaluation child
// when ctx says so (see Offloaded).
func EvalConditionContext(ctx context.Context, src string, entity map[string]any) (bool, error) {
	if a, ok := offload(ctx, childRequest{Condition: true, Src: src, Entity: entity}); ok {
		return a.Holds, a.err()
	}
	out, err := compileCondition(src)
	if err != nil {
		return false, err
	}
	b := newBudget(ctx)
	var result *exec.Value
	err = run(b, func() error {
		e := &exec.Evaluator{Config: gonjaConfig, Environment: environment(globals.Inherit().Update(evalContext(entity, b))), Loader: loader{}}
		v := e.Eval(out.Expression)
		if out.Condition != nil && !v.IsError() {
			c := e.Eval(out.Condition)
			switch {
			case c.IsError():
				v = c
			case !c.IsTrue() && out.Alternative != nil:
				v = e.Eval(out.Alternative)
			case !c.IsTrue():
				v = exec.AsValue(nil)
			}
		}
		if v.IsError() {
			return v
		}
		result = v
		return nil
	})
	if err != nil {
		return false, err
	}
	if !result.IsBool() {
		shown := result.String()
		if result.IsString() {
			shown = fmt.Sprintf("%q", shown)
		}
		return false, newError(ReasonInvalid, "the condition should evaluate to a boolean value (true or false), but it evaluates to %s", clip(shown))
	}
	return result.Bool(), nil
}

func compileCondition(src string) (*nodes.Output, error) {
	if err := checkSourceLen(src, "condition"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Reason: ReasonInvalid, Message: "the condition is empty; write an expression such as alertDef.priority == 'P1', or true"}
	}
	// The condition is the inside of one {{ }} output, as the product documents it.
	tpl, err := compile("{{ "+src+" }}", 3, "condition")
	if err != nil {
		// A position in the closing braces is the end of the condition.
		var e *Error
		lines := strings.Split(src, "\n")
		if errors.As(err, &e) && e.Line == len(lines) && e.Column > len(lines[len(lines)-1])+1 {
			old := fmt.Sprintf("line %d, column %d", e.Line, e.Column)
			e.Column = len(lines[len(lines)-1]) + 1
			e.Message = strings.Replace(e.Message, old, fmt.Sprintf("line %d, column %d", e.Line, e.Column), 1)
		}
		return nil, err
	}
	root := tpl.Root()
	if len(root.Nodes) == 1 {
		if out, ok := root.Nodes[0].(*nodes.Output); ok {
			return out, nil
		}
	}
	return nil, &Error{Reason: ReasonInvalid, Message: "a condition is one expression (the inside of {{ }}), without {{, }}, {% or %}"}
}

func evalContext(entity map[string]any, b *budget) *exec.Context {
	data := make(map[string]any, len(entity)+1)
	for k, v := range entity {
		data[k] = v
	}
	data[budgetKey] = b
	return exec.NewContext(data)
}

// run executes f, turning a panic into an error and preferring the budget's record of a bound
// that was passed (the library wraps errors in ways that hide their kind).
func run(b *budget, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if b.exceeded != nil {
				err = b.exceeded
				return
			}
			// A panic here is the library's (e.g. a negative repeat count); its value is the message.
			err = newError(ReasonInvalid, "the evaluation failed: %v", p)
		}
	}()
	err = f()
	if b.exceeded != nil {
		return b.exceeded
	}
	if err != nil {
		return evalError(err)
	}
	return nil
}

var atLine = regexp.MustCompile(`at line (\d+)`)

// evalError turns the library's chain of wrapped messages ("outer: inner: cause") into the cause
// and the step before it, dropping the parts that print internal structures, prefixed with the
// line the library names.
func evalError(err error) *Error {
	full := err.Error()
	segs := strings.Split(full, ": ")
	var keep []string
	for i := len(segs) - 1; i >= 0 && len(keep) < 2; i-- {
		s := strings.TrimSpace(segs[i])
		if s == "" || strings.Contains(s, "&{<Token") || strings.Contains(s, "filtered_expression(") ||
			strings.HasPrefix(s, "Unable to render expression at line") || strings.HasPrefix(s, "unable to execute template") ||
			strings.HasPrefix(s, "Unable to execute controlStructure at line") || strings.HasPrefix(s, "unable to evaluate filter") {
			continue
		}
		keep = append([]string{s}, keep...)
	}
	msg := strings.Join(keep, ": ")
	if msg == "" {
		msg = full
	}
	line := 0
	if m := atLine.FindStringSubmatch(full); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = "line " + m[1] + ": " + msg
	}
	reason := ReasonInvalid
	if strings.Contains(full, "' not found") && !strings.Contains(msg, "filter '") && !strings.Contains(msg, "test '") ||
		strings.Contains(full, `Unable to evaluate name "`) || strings.Contains(full, " not found") && strings.Contains(full, "item ") {
		reason = ReasonFieldNotFound
	}
	e := newError(reason, "%s", msg)
	e.Line = line
	return e
}

// budget is what one evaluation may still spend.
type budget struct {
	steps    int
	deadline time.Time
	exceeded *Error
	// yieldAt is when the evaluation next lets other goroutines run (see spend).
	yieldAt time.Time
	// busy is the pacing of Paced, nil when the evaluation is not paced; askAt is when spend
	// next asks it (after a step aside that ended with requests still under way, the
	// evaluation runs pacedRun before it asks again).
	busy  func() bool
	askAt time.Time
	// cpu, when set, is the clock the time bound counts (the evaluation child's CPU time), read
	// only once the wall clock passes the deadline; cpuStart is its reading at the start.
	cpu      func() time.Duration
	cpuStart time.Duration
}

func newBudget(ctx context.Context) *budget {
	now := time.Now()
	busy, _ := ctx.Value(pacedKey{}).(func() bool)
	b := &budget{steps: MaxSteps, deadline: now.Add(Timeout), yieldAt: now.Add(yieldEvery), busy: busy}
	if cpu, ok := ctx.Value(cpuClockKey{}).(func() time.Duration); ok {
		b.cpu, b.cpuStart = cpu, cpu()
	}
	return b
}

// spend takes n steps; it fails once steps or time run out, and from then on.
func (b *budget) spend(n int) error {
	if b.exceeded != nil {
		return b.exceeded
	}
	b.steps -= n
	if b.steps < 0 {
		b.exceeded = &Error{Reason: ReasonTooExpensive, Message: fmt.Sprintf("the evaluation takes more than %d steps; loop over less, or use fewer filters", MaxSteps)}
		return b.exceeded
	}
	now := time.Now()
	if now.After(b.deadline) {
		if used := b.cpuUsed(); used < Timeout {
			b.deadline = now.Add(Timeout - used) // the wall clock ran faster than the CPU
		} else {
			b.exceeded = &Error{Reason: ReasonTooExpensive, Message: fmt.Sprintf("the evaluation takes longer than %s", Timeout)}
			return b.exceeded
		}
	}
	if b.busy != nil && !now.Before(b.askAt) && b.busy() {
		b.stepAside(now)
	} else if now.After(b.yieldAt) {
		runtime.Gosched()
		b.yieldAt = time.Now().Add(yieldEvery)
	}
	return nil
}

// cpuUsed is the CPU time the evaluation has used by the budget's CPU clock, or Timeout when it
// has none (the wall clock's deadline is then the bound).
func (b *budget) cpuUsed() time.Duration {
	if b.cpu == nil {
		return Timeout
	}
	return b.cpu() - b.cpuStart
}

// stepAside is a paced evaluation's answer to foreground work under way: it sleeps until the
// work is done, for pacedAside at most. If requests are still being answered then, it runs
// pacedRun before it asks again, so that it keeps a small share of a core (pacedRun ÷
// (pacedRun + pacedAside)) when requests never stop. The deadline moves by the time it slept,
// and the CPU its sleeps and wakes used is not counted (a render beside an endless request
// wakes fifty times for each pacedRun), so pacing never makes an evaluation fail its time bound.
func (b *budget) stepAside(now time.Time) {
	if b.cpu != nil {
		before := b.cpu()
		defer func() { b.cpuStart += b.cpu() - before }()
	}
	stillBusy := true
	for time.Since(now) < pacedAside {
		time.Sleep(pacedStep)
		if !b.busy() {
			stillBusy = false
			break
		}
	}
	resumed := time.Now()
	pacedWaiting.Add(int64(resumed.Sub(now)))
	b.deadline = b.deadline.Add(resumed.Sub(now))
	if stillBusy {
		b.askAt = resumed.Add(pacedRun)
	}
	b.yieldAt = resumed.Add(yieldEvery)
}

// yieldEvery is how long an evaluation runs before it lets waiting goroutines run. A long
// template renders in the delivery worker beside request handlers; without yielding it keeps a
// core until the scheduler preempts it (about 10 ms), and a request that became ready meanwhile
// waits that long.
const yieldEvery = 200 * time.Microsecond

// pacedStep is one sleep of a paced evaluation that steps aside: it asks again whether
// foreground work is under way after each. Each sleep and wake costs CPU of its own (in the
// evaluation child, 200 µs steps cost it about half as much CPU again as the evaluation), and
// a sleep lasts longer than asked.
const pacedStep = time.Millisecond

// pacedAside and pacedRun are a paced evaluation's share while requests never stop being
// answered: it steps aside for pacedAside, then runs pacedRun without asking, about 2 % of a
// core. Between requests it runs freely, and it steps aside at its next step once one begins.
const (
	pacedAside = 10 * time.Millisecond
	pacedRun   = 200 * time.Microsecond
)

type pacedKey struct{}

// pacedWaiting is the time paced evaluations of this process have stepped aside, with the time
// its evaluation child reported for the evaluations it answered (nanoseconds).
var pacedWaiting atomic.Int64

// PacedWaiting is the time paced evaluations have stepped aside so far while requests were
// answered, in this process and in its evaluation child: how much background templates were
// slowed so that requests were not.
func PacedWaiting() time.Duration { return time.Duration(pacedWaiting.Load()) }

// Paced returns ctx with pacing for the evaluations of RenderContext and EvalConditionContext
// under it: an evaluation asks busy at each of its steps, and while busy reports foreground work
// (requests being served) it sleeps, taking about 2 % of a core when that work never stops
// (pacedAside, pacedRun), so templates rendered in the background (the delivery worker's) do
// not take the cores requests need. Its time bound counts only the time it ran.
func Paced(ctx context.Context, busy func() bool) context.Context {
	return context.WithValue(ctx, pacedKey{}, busy)
}

// tooLong records that a value passed MaxValueLen.
func (b *budget) tooLong(what string, n int) error {
	if b.exceeded == nil {
		b.exceeded = &Error{Reason: ReasonOutputTooLong, Message: fmt.Sprintf("%s would be %d long; values are bounded to %d", what, n, MaxValueLen)}
	}
	return b.exceeded
}

func budgetOf(ctx *exec.Context) *budget {
	if v, ok := ctx.Get(budgetKey); ok {
		if b, ok := v.(*budget); ok {
			return b
		}
	}
	// Compiled but evaluated without a budget cannot happen through this package's API; fail
	// closed with an exhausted budget rather than run unbounded.
	return &budget{exceeded: &Error{Reason: ReasonTooExpensive, Message: "the evaluation has no budget"}}
}

// limitedWriter keeps the rendered text, failing past MaxOutputLen.
type limitedWriter struct {
	buf    strings.Builder
	budget *budget
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > MaxOutputLen {
		if w.budget.exceeded == nil {
			w.budget.exceeded = &Error{Reason: ReasonOutputTooLong, Message: fmt.Sprintf("the rendered text is longer than %d bytes", MaxOutputLen)}
		}
		return 0, w.budget.exceeded
	}
	if err := w.budget.spend(1 + len(p)/dataPerStep); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// forParser is gonja's for loop, refusing `recursive` (unbounded recursion) and spending a step on
// every iteration.
func forParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	original, _ := builtins.ControlStructures.Get("for")
	cs, err := original(p, args)
	if err != nil {
		return nil, err
	}
	fcs, ok := cs.(*controlStructures.ForControlStructure)
	if !ok {
		return nil, errors.New("for loops are not available")
	}
	if fcs.Recursive {
		pos := fcs.Position()
		return nil, &parser.SyntaxError{Message: "recursive loops are not allowed", Line: pos.Line, Column: pos.Col, Raw: "recursive"}
	}
	step := &nodes.ControlStructureBlock{Location: fcs.Position(), Name: "step", ControlStructure: &stepStructure{at: fcs}}
	fcs.BodyWrapper.Nodes = append([]nodes.Node{step}, fcs.BodyWrapper.Nodes...)
	return fcs, nil
}

// stepStructure is placed first in every loop body: it spends one step per iteration.
type stepStructure struct{ at nodes.ControlStructure }

func (s *stepStructure) Position() *tokens.Token { return s.at.Position() }
func (s *stepStructure) String() string          { return "step" }
func (s *stepStructure) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	return budgetOf(r.Environment.Context).spend(1)
}
