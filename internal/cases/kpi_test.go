package cases_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

func p1Alert(name string) cases.IndicatorAlert {
	return cases.IndicatorAlert{AlertName: name, Fingerprint: "fp-" + name, Priority: oas.CasePriorityCASEPRIORITYP1,
		Firing: true, StartsAt: t0}
}

// breaches returns the case's breaches by KPI type, in order.
func breachList(c oas.Case) []string {
	var out []string
	for _, b := range c.KpiBreaches.BreachedKpis {
		out = append(out, fmt.Sprintf("%s/%s", b.KpiType, b.BreachStatus))
	}
	return out
}

func kpiEvents(evs []oas.CaseEvent) []oas.CaseEvent {
	var out []oas.CaseEvent
	for _, e := range evs {
		if e.EventData.KpiBreached.Set {
			out = append(out, e)
		}
	}
	return out
}

func TestKPIBreaches(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "g1", "kpi")
		h.record(1, ref.ID, p1Alert("A")) // P1: acknowledge 900s, resolve 14400s, update 1800s
		created := h.getCase(h.RootKey, ref.ID).CreateTime

		h.Clock.Advance(899 * time.Second)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("%d breaches 1s before the threshold", n)
		}
		h.Clock.Advance(2 * time.Second)
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches after the threshold, want 1", n)
		}
		if n := h.evaluate(); n != 0 {
			t.Fatalf("evaluating again recorded %d", n)
		}
		c := h.getCase(h.RootKey, ref.ID)
		if len(c.KpiBreaches.BreachedKpis) != 1 {
			t.Fatalf("breaches %v", breachList(c))
		}
		b := c.KpiBreaches.BreachedKpis[0]
		if b.KpiType != oas.KPITypeKPITYPETIMETOACKNOWLEDGE || b.CasePriority != oas.KPIPriorityKPIPRIORITYP1 ||
			b.BreachStatus != oas.BreachedKPIBreachStatusBREACHSTATUSBREACHED || !b.BreachedAt.Equal(created.Add(900*time.Second)) ||
			len(b.ID) != 36 {
			t.Fatalf("breach %+v (created %v)", b, created)
		}
		evs := kpiEvents(h.events(h.RootKey, ref.ID))
		if len(evs) != 1 {
			t.Fatalf("%d kpiBreached events", len(evs))
		}
		k := evs[0].EventData.KpiBreached.Value
		if k.KpiType.Value != oas.KPITypeKPITYPETIMETOACKNOWLEDGE || k.Priority.Value != oas.CasePriorityCASEPRIORITYP1 ||
			k.Threshold.Value != "900s" || evs[0].Actor.System == nil {
			t.Fatalf("kpiBreached %+v actor %+v", k, evs[0].Actor)
		}

		// Time to update: 1800s from creation.
		h.Clock.Advance(900 * time.Second) // 1801s
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches at 1801s, want the time-to-update one", n)
		}
		// A human update mitigates it and restarts the clock; a new breach comes 1800s later.
		h.ok(h.comment(h.RootKey, ref.ID, `{"text":"looking"}`), "comment")
		c = h.getCase(h.RootKey, ref.ID)
		if got := fmt.Sprint(breachList(c)); got != "[KPI_TYPE_TIME_TO_ACKNOWLEDGE/BREACH_STATUS_BREACHED KPI_TYPE_TIME_TO_UPDATE/BREACH_STATUS_MITIGATED]" {
			t.Fatalf("after comment: %s", got)
		}
		h.Clock.Advance(1799 * time.Second)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("%d breaches 1799s after the update", n)
		}
		h.Clock.Advance(2 * time.Second)
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches 1801s after the update, want 1", n)
		}
		h.ok(h.ack(h.RootKey, ref.ID), "ack")
		h.ok(h.resolve(h.RootKey, ref.ID, ""), "resolve")
		c = h.getCase(h.RootKey, ref.ID)
		for _, b := range c.KpiBreaches.BreachedKpis {
			if b.BreachStatus != oas.BreachedKPIBreachStatusBREACHSTATUSMITIGATED {
				t.Fatalf("after ack and resolve: %v", breachList(c))
			}
		}
		if len(c.KpiBreaches.BreachedKpis) != 3 {
			t.Fatalf("breaches %v", breachList(c))
		}
		h.Clock.Advance(30 * 24 * time.Hour)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("a resolved case breached %d", n)
		}
	})
}

func TestKPIThresholdsByOperator(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		teamID, teamKey := h.team("kpis")
		path := fmt.Sprintf("/admin/v1/teams/%d/case-kpis", teamID)

		res := h.ok(h.do("GET", path, apitest.OperatorKey, ""), "get defaults")
		var got oas.CaseKPIThresholds
		if err := got.UnmarshalJSON(res.Body); err != nil {
			t.Fatal(err)
		}
		if got != cases.DefaultKPIThresholds() || got.TimeToAcknowledge.P1 != 900 || got.TimeToResolve.P5 != 604800 || got.TimeToUpdate.P3 != 14400 {
			t.Fatalf("defaults %+v", got)
		}
		apitest.ExpectError(t, h.do("GET", "/admin/v1/teams/999/case-kpis", apitest.OperatorKey, ""), 404, "team_id")
		apitest.ExpectError(t, h.do("GET", path, teamKey, ""), 401)

		body := `{"timeToAcknowledge":{"p1":60,"p2":60,"p3":60,"p4":60,"p5":120},
			"timeToResolve":{"p1":31536000,"p2":31536000,"p3":31536000,"p4":31536000,"p5":31536000},
			"timeToUpdate":{"p1":31536000,"p2":31536000,"p3":31536000,"p4":31536000,"p5":31536000}}`
		apitest.ExpectError(t, h.do("PUT", "/admin/v1/teams/999/case-kpis", apitest.OperatorKey, body), 404)
		apitest.ExpectError(t, h.do("PUT", path, apitest.OperatorKey, `{"timeToAcknowledge":{"p1":59,"p2":60,"p3":60,"p4":60,"p5":60},
			"timeToResolve":{"p1":60,"p2":60,"p3":60,"p4":60,"p5":60},"timeToUpdate":{"p1":60,"p2":60,"p3":60,"p4":60,"p5":60}}`), 400)
		apitest.ExpectError(t, h.do("PUT", path, apitest.OperatorKey, `{"timeToAcknowledge":{"p1":60}}`), 400)
		h.ok(h.do("PUT", path, apitest.OperatorKey, body), "set")
		res = h.ok(h.do("GET", path, apitest.OperatorKey, ""), "get")
		if err := got.UnmarshalJSON(res.Body); err != nil || got.TimeToAcknowledge.P5 != 120 {
			t.Fatalf("read back %+v %v", got, err)
		}

		theirs := h.open(teamID, "g", "theirs") // P5: 120s in this team
		ours := h.open(1, "g", "ours")          // P5: 86400s by default
		h.Clock.Advance(119 * time.Second)
		if n := h.evaluate(); n != 0 {
			t.Fatalf("%d breaches at 119s", n)
		}
		h.Clock.Advance(2 * time.Second)
		if n := h.evaluate(); n != 1 {
			t.Fatalf("%d breaches at 121s, want 1", n)
		}
		evs := kpiEvents(h.events(teamKey, theirs.ID))
		if len(evs) != 1 || evs[0].EventData.KpiBreached.Value.Threshold.Value != "120s" {
			t.Fatalf("their kpiBreached events %+v", evs)
		}
		if evs := kpiEvents(h.events(h.RootKey, ours.ID)); len(evs) != 0 {
			t.Fatalf("team 1 breached with another team's thresholds")
		}
	})
}

func TestKPIEvaluationByTwoReplicas(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		for i := range 10 {
			ref := h.open(1, fmt.Sprintf("g%d", i), "kpi")
			h.record(1, ref.ID, p1Alert("A"))
		}
		h.Clock.Advance(901 * time.Second)
		var wg sync.WaitGroup
		counts := make([]int, 4)
		errs := make([]error, 4)
		for i := range counts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts[i], errs[i] = cases.EvaluateKPIs(t.Context(), h.DB)
			}()
		}
		wg.Wait()
		total := 0
		for i := range counts {
			if errs[i] != nil {
				t.Fatalf("evaluate: %v", errs[i])
			}
			total += counts[i]
		}
		if total != 10 {
			t.Fatalf("%d breaches recorded by concurrent evaluations, want 10", total)
		}
		for i := 1; i <= 10; i++ {
			if evs := kpiEvents(h.events(h.RootKey, fmt.Sprintf("CASE-%d", i))); len(evs) != 1 {
				t.Fatalf("CASE-%d has %d kpiBreached events", i, len(evs))
			}
		}
	})
}
