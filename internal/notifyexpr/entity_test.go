package notifyexpr

import (
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func TestAlertEntity(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	inc := oas.Incident{
		ID: "i-1", Name: oas.NewOptString("HighLatency"), Description: oas.NewOptString("slow"),
		State: oas.IncidentStateINCIDENTSTATETRIGGERED, Status: oas.IncidentStatusINCIDENTSTATUSACKNOWLEDGED,
		Severity:         oas.IncidentSeverityINCIDENTSEVERITYWARNING,
		ContextualLabels: oas.IncidentContextualLabels{"service": "api", "region": "EU"},
		DisplayLabels:    oas.IncidentDisplayLabels{"summary": "p99 above 1s"},
		MetaLabels:       []oas.MetaLabel{{Key: oas.NewOptString("service"), Value: oas.NewOptString("api")}},
		CreatedAt:        at, LastStateUpdateTime: at, Duration: "60s",
	}
	e := AlertEntity(inc, 7)
	for src, want := range map[string]string{
		"{{ alertDef.name }}|{{ alertDef.priority }}|{{ alertDef.description }}|{{ alertDef.entityLabels.region }}": "HighLatency|P3|slow|EU",
		"{{ alert.status }}|{{ alert.id }}|{{ alert.timestamp }}|{{ alert.annotations.summary }}":                   "Acknowledged|i-1|2026-05-06T07:08:09Z|p99 above 1s",
		"{{ alert.groups[0].keyValues.service }}|{{ alert.highestPriority }}|{{ alert.severity }}":                  "api|P3|WARNING",
		"{{ _context.entityType }}|{{ _context.teamId }}|{{ correlationKey }}|{{ name }}|{{ priority }}":            "ALERTS|7|i-1|HighLatency|P3",
	} {
		if got, err := Render(src, e); err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", src, got, err, want)
		}
	}
	inc.State = oas.IncidentStateINCIDENTSTATERESOLVED
	if ok, err := EvalCondition("alert.status == 'Resolved' and _context.entitySubType is ending_with('Resolved')", AlertEntity(inc, 7)); err != nil || !ok {
		t.Errorf("resolved incident: %v, %v", ok, err)
	}
}

func TestCaseEntity(t *testing.T) {
	c := sampleCase()
	c.Status = oas.CaseStatusCASESTATUSACKNOWLEDGED
	e := CaseEntity(c, 3, "statusChanged")
	src := "{{ case.readableId }}|{{ case.title }}|{{ case.status }}|{{ case.priority }}|{{ case.labels.team }}|{{ case.category }}|{{ caseMetadata.event }}|{{ _context.entitySubType }}|{{ _context.teamId }}|{{ case.assignee }}"
	want := "CASE-42|checkout error rate above 5%|Acknowledged|P1|payments|AVAILABILITY|statusChanged|caseStatusChanged|3|"
	if got, err := Render(src, e); err != nil || got != want {
		t.Errorf("Render = %q, %v; want %q", got, err, want)
	}
}

func TestSampleEntity(t *testing.T) {
	for _, tc := range []struct{ typ, sub, cond string }{
		{"ALERTS", "", "alertDef.priority == 'P1' and alert.status == 'Triggered'"},
		{"", "", "_context.entityType == 'ALERTS'"},
		{"ENTITY_TYPE_UNSPECIFIED", "", "_context.entityType == 'ALERTS'"},
		{"TEST_NOTIFICATIONS", "", "alertDef.name is defined"},
		{"ALERTS", "logsImmediateResolved", "alert.status == 'Resolved' and _context.entitySubType == 'logsImmediateResolved'"},
		{"CASES", "", "case.status == 'Active' and case.priority == 'P1'"},
	} {
		e, err := SampleEntity(tc.typ, tc.sub)
		if err != nil {
			t.Fatalf("SampleEntity(%q): %v", tc.typ, err)
		}
		if ok, err := EvalCondition(tc.cond, e); err != nil || !ok {
			t.Errorf("SampleEntity(%q, %q): %q = %v, %v", tc.typ, tc.sub, tc.cond, ok, err)
		}
	}
	if _, err := SampleEntity("OLLY_SCHEDULED_TASKS", ""); err == nil {
		t.Error("SampleEntity(OLLY_SCHEDULED_TASKS) answered an entity")
	}
}
