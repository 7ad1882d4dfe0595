package notifyexpr_test

import (
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
)

func TestConditionVariables(t *testing.T) {
	for src, want := range map[string]string{
		"alertDef.priority == 'P1'":                                       "alertDef",
		"case.status == 'Active' and alert.labels.x | default('') == 'y'": "alert case",
		"priority in ['P1', 'P2'] or _context.entityType == 'CASES'":      "_context priority",
		"true": "",
		"alert.labels['svc'] is defined and 3 in range(5)":       "alert",
		"(name ~ 'x') | length > 2 if correlationKey else false": "correlationKey name",
	} {
		got, err := notifyexpr.ConditionVariables(src)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%s: %v %v, want %s", src, got, err, want)
		}
	}
}
