package notifyexpr

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func entity() map[string]any {
	return map[string]any{
		"alertDef": map[string]any{
			"name": "db CPU high", "priority": "P3",
			"entityLabels": map[string]any{"team": "storage", "region": "EU"},
		},
		"alert": map[string]any{"status": "Triggered", "groups": []any{
			map[string]any{"keyValues": map[string]any{"host": "a"}},
			map[string]any{"keyValues": map[string]any{"host": "b"}},
		}},
	}
}

func reasonOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *notifyexpr.Error", err, err)
	}
	return e
}

func TestEvalCondition(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"alertDef.priority == 'P3'", true},
		{`alertDef.priority == "P1"`, false},
		{"alert.status == 'Triggered' and alertDef.name is containing('db')", true},
		{"alert.status == 'Resolved' or 'CPU' in alertDef.name", true},
		{"not (alertDef.priority == 'P3')", false},
		{`alertDef.name is starting_with("db")`, true},
		{`alertDef.name is ending_with("db")`, false},
		{`alertDef.name is matching("(?i)^DB cpu")`, true},
		{"alertDef.entityLabels.region == 'EU'", true},
		{"alertDef.entityLabels.group is defined", false},
		{"alertDef.entityLabels.team is defined", true},
		{"alertDef.entityLabels.group | default('none') == 'none'", true},
		{"alert.groups | length == 2", true},
		{"alertDef.name | upper == 'DB CPU HIGH'", true},
		{"true", true},
		{"false", false},
		{"alertDef.priority in ['P1', 'P2', 'P3']", true},
		{"(alertDef.priority ~ '!') == 'P3!'", true},
		{"alertDef.name != '}}'", true}, // braces inside a string do not end the condition
		{"'%}' in alertDef.name", false},
	} {
		if err := CheckCondition(tc.src); err != nil {
			t.Errorf("CheckCondition(%q) = %v", tc.src, err)
		}
		got, err := EvalCondition(tc.src, entity())
		if err != nil || got != tc.want {
			t.Errorf("EvalCondition(%q) = %v, %v; want %v", tc.src, got, err, tc.want)
		}
	}
}

func TestConditionErrors(t *testing.T) {
	for _, tc := range []struct {
		src    string
		reason Reason
		msg    string
		line   int
		column int
	}{
		{"", ReasonInvalid, "the condition is empty", 0, 0},
		{"alertDef.priority ==", ReasonInvalid, "line 1, column 21", 1, 21},
		{"alertDef.priority == 'P3'\nand alert.status ==", ReasonInvalid, "line 2", 2, 0},
		{"x }}{{ y", ReasonInvalid, "one expression", 0, 0},
		{"a }}{% include 'x' %}{{ b", ReasonInvalid, "", 0, 0},
		{strings.Repeat("a", MaxSourceLen+1), ReasonSourceTooLong, "at most 20000", 0, 0},
		{"x == 1\nor 0!0.디", ReasonInvalid, "line 2, column 6: a digit followed by '.'", 2, 6},
		{"0.\xca0.디", ReasonInvalid, "not valid UTF-8", 0, 0},
	} {
		err := CheckCondition(tc.src)
		if err == nil {
			t.Errorf("CheckCondition(%q) accepted", tc.src)
			continue
		}
		e := reasonOf(t, err)
		if e.Reason != tc.reason || !strings.Contains(e.Message, tc.msg) || (tc.line != 0 && e.Line != tc.line) || (tc.column != 0 && e.Column != tc.column) {
			t.Errorf("CheckCondition(%q) = %+v; want reason %s, message with %q, line %d column %d", tc.src, e, tc.reason, tc.msg, tc.line, tc.column)
		}
		if _, evalErr := EvalCondition(tc.src, entity()); evalErr == nil {
			t.Errorf("EvalCondition(%q) accepted what CheckCondition refused", tc.src)
		}
	}
	// Evaluation errors: a source that checks but fails on this entity.
	for _, tc := range []struct {
		src    string
		reason Reason
		msg    string
	}{
		{"alertDef.name", ReasonInvalid, `should evaluate to a boolean value (true or false), but it evaluates to "db CPU high"`},
		{"alertDef.entityLabels.group == 'x'", ReasonFieldNotFound, "'group' not found"},
		{"nothing == 1", ReasonFieldNotFound, `"nothing"`},
		{"alertDef.name | nosuchfilter", ReasonInvalid, "filter 'nosuchfilter' not found"},
		{"alertDef.name is matching('(')", ReasonInvalid, "invalid regular expression"},
	} {
		if err := CheckCondition(tc.src); err != nil {
			t.Errorf("CheckCondition(%q) = %v; the source is well formed", tc.src, err)
		}
		_, err := EvalCondition(tc.src, entity())
		if err == nil {
			t.Errorf("EvalCondition(%q) succeeded", tc.src)
			continue
		}
		e := reasonOf(t, err)
		if e.Reason != tc.reason || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("EvalCondition(%q) = %+v; want reason %s and %q", tc.src, e, tc.reason, tc.msg)
		}
	}
}

func TestRender(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"{{ alertDef.name }}", "db CPU high"},
		{"{{alert.status}} {{alertDef.priority}} - {{alertDef.name}}", "Triggered P3 - db CPU high"},
		{"", ""},
		{"plain text\n", "plain text\n"},
		{"{% if alertDef.priority == 'P3' %}warn{% else %}other{% endif %}", "warn"},
		{"{% for g in alert.groups %}{{ g.keyValues.host }}{% if not loop.last %},{% endif %}{% endfor %}", "a,b"},
		{"{% set who = alertDef.entityLabels.team | upper %}{{ who }}", "STORAGE"},
		{"{{ alertDef.entityLabels.owner | default('nobody') }}", "nobody"},
		{"{{ alertDef.name | replace('db', 'database') | title }}", "Database Cpu High"},
		{"{{ alertDef.name | split(pat=' ') | join('/') }}", "db/CPU/high"},
		{"{{ '-' * 3 }}{{ 2 * 3 }}{{ 1 + 2 }}{{ 'a' + 'b' }}", "---63ab"},
		{"{% raw %}{{ not rendered }}{% endraw %}", "{{ not rendered }}"},
		{"{% for i in range(3) %}{{ i }}{% endfor %}", "012"},
		{"{{ alertDef.entityLabels | json_encode }}", `{"region":"EU","team":"storage"}`},
	} {
		if err := CheckTemplate(tc.src); err != nil {
			t.Errorf("CheckTemplate(%q) = %v", tc.src, err)
		}
		got, err := Render(tc.src, entity())
		if err != nil || got != tc.want {
			t.Errorf("Render(%q) = %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, tc := range []struct {
		src    string
		reason Reason
		msg    string
		line   int
	}{
		{"{{ alertDef.name ", ReasonInvalid, "the template's line 1, column", 1},
		{"ok\n{% if x %}", ReasonInvalid, "line 2", 0},
		{"{% include 'other.html' %}", ReasonInvalid, "include", 1},
		{"{% extends 'base.html' %}", ReasonInvalid, "extends", 1},
		{"{% import 'm.html' as m %}", ReasonInvalid, "import", 1},
		{"{% from 'm.html' import x %}", ReasonInvalid, "from", 1},
		{"{% macro m() %}x{% endmacro %}", ReasonInvalid, "macro", 1},
		{"{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", ReasonInvalid, "recursive loops are not allowed", 1},
		{"{% set x %}block{% endset %}", ReasonInvalid, "set needs '='", 1},
		{strings.Repeat("x", MaxSourceLen+1), ReasonSourceTooLong, "at most 20000", 0},
	} {
		err := CheckTemplate(tc.src)
		if err == nil {
			t.Errorf("CheckTemplate(%q) accepted", tc.src)
			continue
		}
		e := reasonOf(t, err)
		if e.Reason != tc.reason || !strings.Contains(e.Message, tc.msg) || (tc.line != 0 && e.Line != tc.line) {
			t.Errorf("CheckTemplate(%q) = %+v; want %s with %q at line %d", tc.src, e, tc.reason, tc.msg, tc.line)
		}
	}
	for _, tc := range []struct {
		src    string
		reason Reason
		msg    string
	}{
		{"{{ alertDef.nope }}", ReasonFieldNotFound, "attribute 'nope' not found"},
		{"x\n{{ nothing }}", ReasonFieldNotFound, "line 2"},
		{"{{ alertDef.name | center(100000) }}", ReasonInvalid, "filter 'center' not found"},
		{"{{ alertDef.name.upper() }}", ReasonInvalid, "unknown method"},
		{"{{ lipsum(1000000) }}", ReasonInvalid, "lipsum is not callable"},
		{"{{ [1] * 3 }}", ReasonInvalid, "cannot multiply a list"},
	} {
		_, err := Render(tc.src, entity())
		if err == nil {
			t.Errorf("Render(%q) succeeded", tc.src)
			continue
		}
		e := reasonOf(t, err)
		if e.Reason != tc.reason || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("Render(%q) = %+v; want %s with %q", tc.src, e, tc.reason, tc.msg)
		}
	}
}

// TestSandboxLimits: pathological sources end within the bounds with a clear error.
func TestSandboxLimits(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		reason    Reason
		msg       string
	}{
		{"nested loops without output", "{% for i in range(50000) %}{% for j in range(50000) %}{% endfor %}{% endfor %}", ReasonTooExpensive, "the evaluation takes"},
		{"loops over a long text", "{% set s = 'x' * 50000 %}{% for a in s %}{% for b in s %}{% for c in s %}{% endfor %}{% endfor %}{% endfor %}", ReasonTooExpensive, "the evaluation takes"},
		{"a huge range", "{% for i in range(1000000000) %}x{% endfor %}", ReasonOutputTooLong, "the range"},
		{"output past the bound", "{% for i in range(1000) %}{{ 'x' * 100 }}{% endfor %}", ReasonOutputTooLong, "longer than 50000 bytes"},
		{"one long output", "{{ 'ab' * 30000 }}", ReasonOutputTooLong, "repeated text"},
		{"repetition bomb", "{{ ('x' * 50000) * 1000000000 }}", ReasonOutputTooLong, "repeated text"},
		{"doubling by set", "{% set s = 'xx' %}" + strings.Repeat("{% set s = s ~ s %}", 40) + "{{ s | length }}", ReasonOutputTooLong, "values are bounded"},
		{"doubling by list add", "{% set l = [1] %}" + strings.Repeat("{% set l = l + l %}", 40), ReasonOutputTooLong, "values are bounded"},
		{"replace growth", "{% set s = 'a' * 40000 %}{{ s | replace('a', 'aaaaaaaaaa') }}", ReasonOutputTooLong, "replace"},
		{"quadratic select", "{{ range(50000) | select('in', range(50000)) | list | length }}", ReasonTooExpensive, "the evaluation takes"},
		{"membership in a long list, in a loop", "{% set l = range(50000) %}{% for i in range(5000) %}{% if i in l %}{% endif %}{% endfor %}", ReasonTooExpensive, "the evaluation takes"},
		{"join growth", "{% set l = range(40000) %}{{ l | join('-----') }}", ReasonOutputTooLong, "join"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Render(tc.src, entity())
			took := time.Since(start)
			if err == nil {
				t.Fatalf("rendered")
			}
			e := reasonOf(t, err)
			if e.Reason != tc.reason || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("error %+v; want %s with %q", e, tc.reason, tc.msg)
			}
			// The bound is Timeout; allow for a slow shared machine, not for unbounded work.
			if took > 4*Timeout+time.Second {
				t.Errorf("took %s; the evaluation is bounded by %s", took, Timeout)
			}
		})
	}
	// A condition is bounded the same way.
	_, err := EvalCondition("(range(50000) | join(',') | length) > 0 and ('y' * 50000 * 50000) == ''", entity())
	if e := reasonOf(t, err); e.Reason != ReasonOutputTooLong {
		t.Errorf("condition bomb: %+v", e)
	}
}

// TestNoEnvironmentOrFiles: names that reach the host in Jinja environments are undefined here.
func TestNoEnvironmentOrFiles(t *testing.T) {
	for _, src := range []string{"{{ self }}", "{{ cycler }}", "{{ namespace }}", "{{ gonja }}", "{{ environ }}", "{{ config }}"} {
		out, err := Render(src, entity())
		if src == "{{ self }}" {
			// gonja's renderer binds self (the template's blocks, which are none here).
			if err != nil || strings.Contains(out, "/") {
				t.Errorf("Render(%q) = %q, %v", src, out, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Render(%q) = %q; want undefined", src, out)
		}
	}
	if _, err := (loader{source: "x"}).Read("/etc/passwd"); err == nil {
		t.Error("the loader read a file")
	}
	if _, err := (loader{source: "x"}).Inherit("/"); err == nil {
		t.Error("the loader inherited a directory")
	}
}

func TestConcurrentUse(t *testing.T) {
	done := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			for j := 0; j < 50; j++ {
				out, err := Render("{% for g in alert.groups %}{{ g.keyValues.host }}{% endfor %}", entity())
				if err != nil || out != "ab" {
					done <- errors.New("render: " + out)
					return
				}
				if ok, err := EvalCondition("alertDef.priority == 'P3'", entity()); err != nil || !ok {
					done <- errors.New("condition")
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestBudget(t *testing.T) {
	b := &budget{steps: 2, deadline: time.Now().Add(time.Hour)}
	if err := b.spend(2); err != nil {
		t.Fatalf("spend within the budget: %v", err)
	}
	if err := b.spend(1); err == nil || !strings.Contains(err.Error(), "steps") {
		t.Fatalf("spend past the steps: %v", err)
	}
	b = &budget{steps: 100, deadline: time.Now().Add(-time.Millisecond)}
	if err := b.spend(1); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("spend past the deadline: %v", err)
	}
	if err := b.spend(1); err == nil {
		t.Fatal("an exhausted budget spent again")
	}
}
