package notifyexpr

import "testing"

// The cost of one routing decision and one rendered field, parse included (nothing is cached).
func BenchmarkEvalCondition(b *testing.B) {
	e, _ := SampleEntity(EntityAlerts, "")
	for b.Loop() {
		if ok, err := EvalCondition("alertDef.priority == 'P1' and alertDef.name is containing('Error')", e); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	e, _ := SampleEntity(EntityAlerts, "")
	for b.Loop() {
		if _, err := Render("{{alert.status}} {{alertDef.priority}} - {{alertDef.name}} ({{ alertDef.entityLabels.service }})", e); err != nil {
			b.Fatal(err)
		}
	}
}

// The parse-and-check share of BenchmarkRender.
func BenchmarkCheckTemplate(b *testing.B) {
	for b.Loop() {
		if err := CheckTemplate("{{alert.status}} {{alertDef.priority}} - {{alertDef.name}} ({{ alertDef.entityLabels.service }})"); err != nil {
			b.Fatal(err)
		}
	}
}
