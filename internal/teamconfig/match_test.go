package teamconfig_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
)

// detailedPlan is an apply's answer with how each resource was matched and what changes.
type detailedPlan struct {
	Changes []struct {
		Area, ID, Name, Action, MatchedBy, Note string
		Fields                                  []struct{ Path, Before, After string }
	} `json:"changes"`
}

func mustApplyDetailed(t *testing.T, env *apitest.Env, key, doc string) detailedPlan {
	t.Helper()
	return apitest.Decode[detailedPlan](t, apply(t, env, key, "", "application/yaml", doc))
}

// TestMatchByName: a resource the document gives no id is the team's resource of its name when
// that name is unique (an apply is idempotent, not a new copy each time), the plan says it was
// matched by name, and an update lists each field that changes with its value before and after.
func TestMatchByName(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "match by name")
		doc := func(expr string) string {
			return "recordingRuleSets:\n- name: from-file\n  groups:\n  - name: g\n    rules:\n    - {record: r, expr: " + expr + "}\n" +
				"views:\n- {name: errors, timeSelection: {}}\n"
		}
		first := mustApplyDetailed(t, env, key, doc("up"))
		if len(first.Changes) != 2 || first.Changes[0].Action != "create" || first.Changes[1].Action != "create" {
			t.Fatalf("first apply: %+v", first.Changes)
		}
		for round := range 2 {
			again := mustApplyDetailed(t, env, key, doc("up"))
			for _, c := range again.Changes {
				if c.Action != "unchanged" || c.MatchedBy != "name" {
					t.Fatalf("apply %d of the same file: %+v, want unchanged, matched by name", round+2, again.Changes)
				}
			}
		}
		sets := apitest.Decode[struct{ Sets []struct{ ID, Name string } }](t, env.JSON(t, http.MethodGet, recordingRuleSets, key, ""))
		views := env.JSON(t, http.MethodGet, viewsPath, key, "")
		if len(sets.Sets) != 1 || strings.Count(string(views.Body), `"errors"`) != 1 {
			t.Fatalf("three applies of a file without ids: sets %+v, views %s; want one of each", sets.Sets, views.Body)
		}

		changed := mustApplyDetailed(t, env, key, doc(`"sum(up)"`))
		c := changed.Changes[0]
		if c.Action != "update" || c.MatchedBy != "name" || c.ID != sets.Sets[0].ID || len(c.Fields) != 1 ||
			c.Fields[0].Path != "groups[0].rules[0].expr" || c.Fields[0].Before != `"up"` || c.Fields[0].After != `"sum(up)"` {
			t.Fatalf("a changed expression: %+v", c)
		}
		if changed.Changes[1].Action != "unchanged" {
			t.Fatalf("the view changed: %+v", changed.Changes[1])
		}

		// A name two of the team's sets have matches neither: the resource is created, and the
		// plan says why.
		mustCreate(t, env, key, http.MethodPost, recordingRuleSets, `{"name":"from-file","groups":[]}`)
		ambiguous := mustApplyDetailed(t, env, key, doc(`"sum(up)"`))
		if c := ambiguous.Changes[0]; c.Action != "create" || c.MatchedBy != "" || !strings.Contains(c.Note, "2 resources of the team have this name") {
			t.Fatalf("an ambiguous name: %+v", c)
		}

		// A resource that gives its id is matched by it.
		byID := mustApplyDetailed(t, env, key, "recordingRuleSets:\n- {id: "+sets.Sets[0].ID+", name: renamed, groups: []}\n")
		if c := byID.Changes[0]; c.Action != "update" || c.MatchedBy != "id" || len(c.Fields) != 2 {
			t.Fatalf("by id: %+v", c)
		}
	})
}
