package notifyexpr_test

import (
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/ingest"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// An alert's priority is the one alert ingestion gives a case for the same severity (an external
// test package, so that ingestion may one day import notifyexpr).
func TestAlertPriorityMatchesIngestion(t *testing.T) {
	for _, s := range []oas.IncidentSeverity{"", oas.IncidentSeverityINCIDENTSEVERITYINFO, oas.IncidentSeverityINCIDENTSEVERITYWARNING,
		oas.IncidentSeverityINCIDENTSEVERITYERROR, oas.IncidentSeverityINCIDENTSEVERITYCRITICAL, oas.IncidentSeverityINCIDENTSEVERITYLOW} {
		got := notifyexpr.AlertEntity(oas.Incident{Severity: s}, 1)["priority"]
		if want := string(ingest.PriorityOf(s)); "CASE_PRIORITY_"+got.(string) != want {
			t.Errorf("severity %q: priority %v, ingestion gives %s", s, got, want)
		}
	}
}
