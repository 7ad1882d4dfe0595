package parsingrules_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/parsingrules"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

const (
	limitsPath  = "/mgmt/openapi/5/parsing-rules/limits/v1"
	mappingPath = "/mgmt/openapi/5/parsing-rules/mapping/v1"
)

type counts struct{ Groups, Rules, ParsingThemes int }

type usageLimits struct {
	CompanyID string `json:"companyId"`
	Limits    counts
	Usage     counts
}

// insertGroups stores n groups directly, the first holding rules rules in one subgroup, each with
// its number of rules (rule_count), as the server stores them.
func insertGroups(t *testing.T, env *apitest.Env, team int64, n, rules int) {
	t.Helper()
	err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
		for i := 0; i < n; i++ {
			doc, count := `{"id":"bulk-`+strconv.Itoa(i)+`","name":"bulk"}`, 0
			if i == 0 {
				doc, count = `{"id":"bulk-0","name":"bulk","ruleSubgroups":[{"rules":[`+strings.TrimSuffix(strings.Repeat(`{},`, rules), ",")+`]}]}`, rules
			}
			_, err := tx.ExecContext(context.Background(),
				`INSERT INTO parsing_rule_groups (team_id, id, sort_order, document, rule_count, created_at, updated_at) VALUES ($1, $2, 0, $3, $4, 0, 0)`,
				team, "bulk-"+strconv.Itoa(i), doc, count)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUsageLimits(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, other := env.MustTeam(t, "other")
		read := func(key string) usageLimits {
			t.Helper()
			return apitest.Decode[usageLimits](t, env.JSON(t, http.MethodPost, limitsPath, key, ""))
		}
		want := usageLimits{strconv.FormatInt(team, 10), counts{1000, 10000, 0}, counts{0, 0, 0}}
		if got := read(key); got != want {
			t.Fatalf("empty team %+v, want %+v", got, want)
		}
		g := create(t, env, key, strings.Replace(allKinds, "TEAM", strconv.FormatInt(team, 10), 1))
		create(t, env, key, `{"name":"empty"}`)
		if got := read(key).Usage; got != (counts{2, 10, 0}) {
			t.Fatalf("after two creates %+v", got)
		}
		// E7 replaces the group's rules; delete frees them.
		env.JSON(t, http.MethodPut, e7Path+g.ID, key, `{"name":"g","ruleSubgroups":[{"rules":[{"name":"r","parameters":{"removeFieldsParameters":{"fields":["a"]}}}]}]}`)
		if got := read(key).Usage; got != (counts{2, 1, 0}) {
			t.Fatalf("after E7 %+v", got)
		}
		env.JSON(t, http.MethodDelete, itemPath+g.ID, key, "")
		if got := read(key).Usage; got != (counts{1, 0, 0}) {
			t.Fatalf("after delete %+v", got)
		}
		if got := read(other).Usage; got != (counts{}) {
			t.Fatalf("other team %+v", got)
		}
	})
}

func TestGroupAndRuleLimits(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		// 998 stored groups, the first with 9998 rules.
		insertGroups(t, env, team, 998, 9998)
		rule := `{"name":"r","parameters":{"removeFieldsParameters":{"fields":["a"]}}}`
		two := `{"name":"two","ruleSubgroups":[{"rules":[` + rule + `,` + rule + `]}]}`
		// 10001 rules: refused; 10000: accepted.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, collPath, key, `{"name":"three","ruleSubgroups":[{"rules":[`+rule+`,`+rule+`,`+rule+`]}]}`), 429, "10000", "10001")
		g := create(t, env, key, two)
		// E7 of a group counts the others plus the new body.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, e7Path+g.ID, key, `{"name":"two","ruleSubgroups":[{"rules":[`+rule+`,`+rule+`,`+rule+`]}]}`), 429, "10001")
		if got := apitest.Decode[usageLimits](t, env.JSON(t, http.MethodPost, limitsPath, key, "")).Usage; got != (counts{999, 10000, 0}) {
			t.Fatalf("usage %+v", got)
		}
		// The 1000th group fits, the 1001st does not.
		create(t, env, key, `{"name":"1000th"}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, collPath, key, `{"name":"1001st"}`), 429, "1000", "1001")
		if n := len(list(t, env, key)); n != 1000 {
			t.Fatalf("%d groups", n)
		}
		// At the group limit, E7 still works (it adds no group).
		if res := env.JSON(t, http.MethodPut, e7Path+g.ID, key, `{"name":"two renamed","ruleSubgroups":[{"rules":[`+rule+`]}]}`); res.Status != http.StatusOK {
			t.Fatalf("E7 at the limit: %d %s", res.Status, res.Body)
		}
		// A team above the rule limit (from before it existed) may replace a group without adding rules.
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE parsing_rule_groups SET document = $2, rule_count = 10005 WHERE team_id = $1 AND id = 'bulk-0'`,
				team, `{"id":"bulk-0","name":"bulk","ruleSubgroups":[{"rules":[`+strings.TrimSuffix(strings.Repeat(`{},`, 10005), ",")+`]}]}`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if res := env.JSON(t, http.MethodPut, e7Path+g.ID, key, `{"name":"same size","ruleSubgroups":[{"rules":[`+rule+`]}]}`); res.Status != http.StatusOK {
			t.Fatalf("E7 above the rule limit: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, e7Path+g.ID, key, two), 429, "10007")
	})
}

func TestModelMapping(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		create(t, env, key, `{"name":"first","order":7}`)
		body := `{"name":"m","ruleMatchers":[{"severity":{}}],"ruleSubgroups":[{"rules":[
			{"name":"b","order":2,"parameters":{"blockParameters":{"rule":"x+"}}},
			{"name":"a","order":1,"parameters":{"jsonParseParameters":{"destinationField":"p"}}}]}],"id":"ignored","teamId":{}}`
		got := apitest.Decode[struct{ RuleDefinition groupOut }](t, env.JSON(t, http.MethodPost, mappingPath, key, body)).RuleDefinition
		if got.ID != "" || got.Name != "m" || got.Order != 8 || got.Description == nil || *got.Description != "" ||
			got.Enabled == nil || *got.Enabled || got.Hidden == nil || got.Creator == nil || len(got.TeamID) != 0 {
			t.Fatalf("group %+v", got)
		}
		if len(got.RuleSubgroups) != 1 || got.RuleSubgroups[0].ID != "" || got.RuleSubgroups[0].Order != 1 {
			t.Fatalf("subgroups %+v", got.RuleSubgroups)
		}
		rs := got.RuleSubgroups[0].Rules
		if len(rs) != 2 || rs[0].Name != "a" || rs[1].Name != "b" || rs[0].ID != "" || rs[0].SourceField == nil {
			t.Fatalf("rules %+v", rs)
		}
		if v := got.RuleMatchers[0]["severity"]["value"]; v != "VALUE_DEBUG_OR_UNSPECIFIED" {
			t.Fatalf("matcher %+v", got.RuleMatchers)
		}
		// The stored form equals what a create then stores, but for ids.
		stored := create(t, env, key, body)
		if stored.Order != 8 || stored.RuleSubgroups[0].Rules[0].Name != "a" {
			t.Fatalf("stored %+v", stored)
		}
		// Nothing was stored by the mapping: two groups.
		if n := len(list(t, env, key)); n != 2 {
			t.Fatalf("%d groups", n)
		}
		// A given order is kept; the checks are the create's.
		if o := apitest.Decode[struct{ RuleDefinition groupOut }](t, env.JSON(t, http.MethodPost, mappingPath, key, `{"name":"x","order":3}`)).RuleDefinition.Order; o != 3 {
			t.Fatalf("order %d", o)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, mappingPath, key, `{"name":" "}`), 400, "name")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, mappingPath, key,
			`{"name":"x","ruleSubgroups":[{"rules":[{"name":"r","parameters":{"allowParameters":{"rule":"(?=x)"}}}]}]}`), 400, "ruleSubgroups[0].rules[0].parameters.allowParameters.rule")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, mappingPath, key, `{"name":"x","order":-1}`), 400, "order")
	})
}

func TestLimitsAndMappingPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		reader := env.MustKey(t, key, "parsing-rules:ReadConfig")
		writer := env.MustKey(t, key, "parsing-rules:UpdateConfig")
		for _, c := range []struct{ path, body string }{{limitsPath, ""}, {mappingPath, `{"name":"x"}`}} {
			if res := env.JSON(t, http.MethodPost, c.path, reader, c.body); res.Status != http.StatusOK {
				t.Fatalf("reader %s: %d %s", c.path, res.Status, res.Body)
			}
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, c.path, writer, c.body), 403)
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, c.path, "nope", c.body), 401)
		}
	})
}

// TestStreamedListIsTheBufferedList checks that the list, which the server streams, is byte for
// byte what the generated encoder writes for the same groups: empty, a few of every kind, and
// more than two streaming buffers.
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "streamed")
		h := parsingrules.NewHandler(env.DB)
		buffered := func(ctx context.Context) (*oas.ParsingRuleGroupList, error) { return h.ListParsingRuleGroups(ctx) }
		if body := apitest.ExpectStreamedAsBuffered(t, env, collPath, key, team, buffered); string(body) != `{"ruleGroups":[]}` {
			t.Fatalf("empty list: %s", body)
		}
		for range 3 {
			create(t, env, key, strings.ReplaceAll(allKinds, "TEAM", strconv.FormatInt(team, 10)))
		}
		apitest.ExpectStreamedAsBuffered(t, env, collPath, key, team, buffered)
		insertGroups(t, env, team, 2000, 3)
		if body := apitest.ExpectStreamedAsBuffered(t, env, collPath, key, team, buffered); len(body) <= 2*streaming.BufferBytes {
			t.Fatalf("the list is %d bytes, want more than two buffers", len(body))
		}
	})
}

// TestRuleCountBackfill runs the backfill of migration 0023 over groups stored without their
// number of rules, of every shape a document can have, and expects the number the server counts
// for each (the rules over its subgroups).
func TestRuleCountBackfill(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		create(t, env, key, strings.Replace(allKinds, "TEAM", strconv.FormatInt(team, 10), 1))
		docs := []string{
			`{"id":"a","name":"no subgroups"}`,
			`{"id":"b","name":"empty","ruleSubgroups":[]}`,
			`{"id":"c","name":"subgroups without rules","ruleSubgroups":[{},{"rules":[]}]}`,
			`{"id":"d","name":"several","ruleSubgroups":[{"rules":[{},{}]},{"rules":[{},{},{}]},{}]}`,
		}
		migration, err := os.ReadFile(filepath.Join("..", "db", "migrations", string(env.DB.Engine), "0023_write_counts.sql"))
		if err != nil {
			t.Fatal(err)
		}
		_, backfill, ok := strings.Cut(string(migration), "UPDATE parsing_rule_groups SET rule_count")
		if !ok {
			t.Fatal("the migration has no rule_count backfill")
		}
		backfill, _, _ = strings.Cut(backfill, ";")
		ctx := context.Background()
		err = env.DB.InTx(ctx, func(tx *db.Tx) error {
			for _, doc := range docs {
				var g oas.ParsingRuleGroup
				if err := g.UnmarshalJSON([]byte(doc)); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO parsing_rule_groups (team_id, id, sort_order, document, rule_count, created_at, updated_at)
					VALUES ($1, $2, 0, $3, 0, 0, 0)`, team, g.ID.Value, doc)
				if err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, "UPDATE parsing_rule_groups SET rule_count"+backfill)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := env.DB.Read().QueryContext(ctx, `SELECT document, rule_count FROM parsing_rule_groups WHERE team_id = $1`, team)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		seen := 0
		for rows.Next() {
			var doc string
			var stored int
			if err := rows.Scan(&doc, &stored); err != nil {
				t.Fatal(err)
			}
			var g oas.ParsingRuleGroup
			if err := g.UnmarshalJSON([]byte(doc)); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, sg := range g.RuleSubgroups {
				want += len(sg.Rules)
			}
			if stored != want {
				t.Fatalf("group %q: backfilled %d rules, holds %d", g.Name.Value, stored, want)
			}
			seen++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if seen != len(docs)+1 {
			t.Fatalf("%d groups", seen)
		}
		if got := apitest.Decode[usageLimits](t, env.JSON(t, http.MethodPost, limitsPath, key, "")).Usage; got != (counts{5, 15, 0}) {
			t.Fatalf("usage after the backfill %+v", got)
		}
	})
}
