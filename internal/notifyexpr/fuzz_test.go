package notifyexpr

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// FuzzSources: no condition or template source panics or escapes the package's error type, and
// what the checks accept, the evaluations do not refuse as malformed.
// Run longer with: go test ./internal/notifyexpr -fuzz FuzzSources -fuzztime 60s
func FuzzSources(f *testing.F) {
	for _, seed := range []string{
		"alertDef.priority == 'P3'",
		"alert.status == 'Triggered' and alertDef.name is containing('db')",
		"{{ alertDef.name }}",
		"{{alert.status}} {{alertDef.priority}} - {{alertDef.name}}",
		"{% for g in alert.groups %}{{ g.keyValues.host }}{% endfor %}",
		"{% if a %}{% elif b %}{% else %}{% endif %}",
		"{% set x = 'a' * 3 %}{{ x ~ x }}",
		"{{ (((1 + 2) * 3)) | string | length }}",
		"{% raw %}{{{% endraw %}",
		"{{ x[1:2:0] }}", "{{ range(3)[::-1] }}", "{{ 'a' * -1 }}",
		"{# c #}{{ 1 if true else 2 }}", "}}{{", "{%", "{{", "{{ 'unterminated }}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		// Each of the four calls is bounded by Timeout once parsed; parsing is linear. A generous
		// ceiling catches work that escapes the budget.
		start := time.Now()
		// A source that never finishes would stall the fuzzer silently: crash the worker instead, so
		// the input is recorded.
		watchdog := time.AfterFunc(30*time.Second, func() { panic(fmt.Sprintf("source %q did not finish in 30s", src)) })
		defer watchdog.Stop()
		defer func() {
			if took := time.Since(start); took > 4*(Timeout+time.Second) {
				t.Fatalf("took %s", took)
			}
		}()
		var e *Error
		checkTemplate := CheckTemplate(src)
		if checkTemplate != nil && !errors.As(checkTemplate, &e) {
			t.Fatalf("CheckTemplate error %T", checkTemplate)
		}
		if _, err := Render(src, entity()); err != nil {
			if !errors.As(err, &e) {
				t.Fatalf("Render error %T: %v", err, err)
			}
		} else if checkTemplate != nil {
			t.Fatalf("Render succeeded where CheckTemplate refused: %v", checkTemplate)
		}
		checkCondition := CheckCondition(src)
		if checkCondition != nil && !errors.As(checkCondition, &e) {
			t.Fatalf("CheckCondition error %T", checkCondition)
		}
		if _, err := EvalCondition(src, entity()); err != nil {
			if !errors.As(err, &e) {
				t.Fatalf("EvalCondition error %T: %v", err, err)
			}
		} else if checkCondition != nil {
			t.Fatalf("EvalCondition succeeded where CheckCondition refused: %v", checkCondition)
		}
	})
}
