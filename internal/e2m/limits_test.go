package e2m_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

const (
	limitsPath        = "/mgmt/openapi/5/events2metrics/limits/v2"
	cardinalitiesPath = "/mgmt/openapi/5/events2metrics/labels/v2/cardinalities"
)

type limitUsage struct{ Limit, Used int64 }

type limits struct {
	CompanyID         string `json:"companyId"`
	LabelsLimit       int
	MetricsLimit      limitUsage
	PermutationsLimit limitUsage
}

func TestLimitsFollowTheStoredRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		got := apitest.Decode[limits](t, env.JSON(t, http.MethodGet, limitsPath, key, ""))
		want := limits{strconv.FormatInt(team, 10), 10, limitUsage{10000, 0}, limitUsage{300000000, 0}}
		if got != want {
			t.Fatalf("empty team: %+v, want %+v", got, want)
		}
		a := create(t, env, key, logsBody("a", ""))
		create(t, env, key, logsBody("b", `,"permutationsLimit":5`))
		got = apitest.Decode[limits](t, env.JSON(t, http.MethodGet, limitsPath, key, ""))
		if got.MetricsLimit != (limitUsage{10000, 2}) || got.PermutationsLimit != (limitUsage{300000000, 30005}) {
			t.Fatalf("two rules: %+v", got)
		}
		// A replace that lowers a limit and a delete are reflected.
		env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(a.ID, "a", `,"permutationsLimit":100`))
		got = apitest.Decode[limits](t, env.JSON(t, http.MethodGet, limitsPath, key, ""))
		if got.PermutationsLimit.Used != 105 {
			t.Fatalf("after replace: %+v", got)
		}
		apitest.Decode[struct{ ID string }](t, env.JSON(t, http.MethodDelete, rulesPath+"/"+a.ID, key, ""))
		got = apitest.Decode[limits](t, env.JSON(t, http.MethodGet, limitsPath, key, ""))
		if got.MetricsLimit.Used != 1 || got.PermutationsLimit.Used != 5 {
			t.Fatalf("after delete: %+v", got)
		}
		// Team isolation.
		if o := apitest.Decode[limits](t, env.JSON(t, http.MethodGet, limitsPath, otherKey, "")); o.MetricsLimit.Used != 0 || o.PermutationsLimit.Used != 0 {
			t.Fatalf("other team sees %+v", o)
		}
	})
}

func TestTeamPermutationLimit(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		// 29 rules at 10000000 and one at 9999999 reserve 299999999 permutations.
		err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(),
				`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
				 INSERT INTO e2m_rules (team_id, id, name, permutations_limit, document, created_at, updated_at)
				 SELECT $1, 'bulk-' || i, 'bulk-' || i, CASE WHEN i = 30 THEN 9999999 ELSE 10000000 END, '{}', 0, 0 FROM n`, team)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// One more permutation fits exactly; a second does not.
		last := create(t, env, key, logsBody("the last one", `,"permutationsLimit":1`))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, logsBody("too many", `,"permutationsLimit":1`)), 429, "body", "300000000", "300000001")
		// Raising a limit by replace is refused too, and changes nothing.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(last.ID, "the last one", `,"permutationsLimit":2`)), 429, "300000000")
		if g := get(t, env, key, last.ID); g.Permutations.Limit != 1 {
			t.Fatalf("refused replace changed the limit: %+v", g.Permutations)
		}
		// In a batch, freeing room first makes the later request fit.
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, executePath, key,
			batch(createReq(logsBody("x", `,"permutationsLimit":1`)))), 429, "requests[0].create.e2m")
		x := apitest.Decode[batchAnswer](t, env.JSON(t, http.MethodPost, executePath, key,
			batch(deleteReq(last.ID), createReq(logsBody("x", `,"permutationsLimit":1`))))).MatchingResponses[1].Created.E2M
		if l := apitest.Decode[limits](t, env.JSON(t, http.MethodGet, limitsPath, key, "")); l.PermutationsLimit.Used != 300000000 {
			t.Fatalf("reserved %+v", l.PermutationsLimit)
		}
		// A team over the bound (from before it existed) may still lower its reservation, but not raise it.
		if err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE e2m_rules SET permutations_limit = 10000000 WHERE team_id = $1 AND id = 'bulk-30'`, team)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, rulesPath, key, logsBody("more", `,"permutationsLimit":1`)), 429, "300000002")
		apitest.Decode[envelope](t, env.JSON(t, http.MethodPut, rulesPath, key, replaceBody(x.ID, "x renamed", `,"permutationsLimit":1`)))
	})
}

type cardinality struct {
	Permutations []struct {
		Day          string
		Permutations int
	}
}

func importUsage(t *testing.T, env *apitest.Env, team int64, records ...string) {
	t.Helper()
	res := env.JSON(t, http.MethodPost, fmt.Sprintf("/admin/v1/teams/%d/usage", team), apitest.OperatorKey, `{"records":[`+strings.Join(records, ",")+`]}`)
	if res.Status != http.StatusOK {
		t.Fatalf("import: %d %s", res.Status, res.Body)
	}
}

// usageRecord is one hour of events with the given labels ("key=value" pairs).
func usageRecord(hour time.Time, labels ...string) string {
	ls := make([]string, len(labels))
	for i, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		ls[i] = fmt.Sprintf(`{"key":%q,"value":%q}`, k, v)
	}
	return fmt.Sprintf(`{"hour":%q,"labels":[%s],"kind":"MEASUREMENT_KIND_PROCESSED_EVENTS","unit":"MEASUREMENT_UNIT_EVENTS","value":"1"}`,
		hour.Format(time.RFC3339), strings.Join(ls, ","))
}

func TestLabelsCardinality(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, key := env.MustTeam(t, "acme")
		_, otherKey := env.MustTeam(t, "other")
		now := time.Now().UTC()
		today := now.Truncate(24 * time.Hour)
		yesterday := today.Add(-24 * time.Hour)
		importUsage(t, env, team,
			usageRecord(today, "pillar=PILLAR_LOGS", "applicationName=web", "subsystemName=api", "severity=SEVERITY_ERROR"),
			usageRecord(today.Add(time.Hour), "pillar=PILLAR_LOGS", "applicationName=web", "subsystemName=db", "severity=SEVERITY_INFO"),
			usageRecord(today, "pillar=PILLAR_LOGS", "applicationName=shop", "subsystemName=api", "severity=SEVERITY_ERROR"),
			usageRecord(today, "pillar=PILLAR_SPANS", "applicationName=web", "subsystemName=checkout", "serviceName=cart"),
			usageRecord(yesterday, "pillar=PILLAR_LOGS", "applicationName=web", "subsystemName=api"),
			usageRecord(today.Add(-40*24*time.Hour), "pillar=PILLAR_LOGS", "applicationName=old", "subsystemName=old"),
		)
		ask := func(key, query string) []int {
			t.Helper()
			got := apitest.Decode[cardinality](t, env.JSON(t, http.MethodGet, cardinalitiesPath+"?"+query, key, ""))
			if len(got.Permutations) != 30 {
				t.Fatalf("%s: %d days, want 30", query, len(got.Permutations))
			}
			if first, last := got.Permutations[0].Day, got.Permutations[29].Day; first != today.AddDate(0, 0, -29).Format(time.DateOnly) || last != today.Format(time.DateOnly) {
				t.Fatalf("%s: days %s … %s", query, first, last)
			}
			counts := make([]int, 30)
			for i, d := range got.Permutations {
				counts[i] = d.Permutations
			}
			return counts
		}
		q := func(pairs ...string) string {
			v := url.Values{}
			for i := 0; i < len(pairs); i += 2 {
				v.Add(pairs[i], pairs[i+1])
			}
			return v.Encode()
		}
		cases := []struct {
			query           string
			today, yestrday int
		}{
			// No labels: one permutation on a day with a record.
			{"", 1, 1},
			// Subsystems over every pillar: api, db, checkout today; api yesterday.
			{q("metric_labels[0][sourceField]", "subsystemName", "metric_labels[0][targetLabel]", "subsystem"), 3, 1},
			// One label unindexed, as a generated client sends the declared deepObject parameter.
			{q("metric_labels[sourceField]", "subsystemName", "metric_labels[targetLabel]", "subsystem"), 3, 1},
			// The source field's last part names the record label; logs only.
			{q("metric_labels[0].sourceField", "metadata.subsystemName", "metric_labels[0].targetLabel", "s", "logs_query[alias]", "q"), 2, 1},
			// Two labels: (web, api), (web, db), (shop, api).
			{q("metric_labels[0][sourceField]", "applicationName", "metric_labels[0][targetLabel]", "app",
				"metric_labels[1][sourceField]", "subsystemName", "metric_labels[1][targetLabel]", "sub", "logs_query[alias]", "q"), 3, 1},
			// Filters keep only the listed values.
			{q("metric_labels[0][sourceField]", "subsystemName", "metric_labels[0][targetLabel]", "s",
				"logs_query[applicationnameFilters]", "web", "logs_query[severityFilters]", "SEVERITY_ERROR"), 1, 0},
			{q("metric_labels[0][sourceField]", "serviceName", "metric_labels[0][targetLabel]", "svc", "spans_query[serviceFilters]", "cart"), 1, 0},
			// A label no record has is one (empty) value.
			{q("metric_labels[0][sourceField]", "log_obj.region", "metric_labels[0][targetLabel]", "region", "logs_query[alias]", "q"), 1, 1},
		}
		for _, c := range cases {
			got := ask(key, c.query)
			if got[29] != c.today || got[28] != c.yestrday {
				t.Fatalf("%s: today %d, yesterday %d; want %d, %d", c.query, got[29], got[28], c.today, c.yestrday)
			}
			for i := 0; i < 28; i++ {
				if got[i] != 0 {
					t.Fatalf("%s: day %d has %d", c.query, i, got[i])
				}
			}
		}
		// Team isolation: the other team has no records.
		if got := ask(otherKey, ""); got[29] != 0 {
			t.Fatalf("other team counts %v", got)
		}
		// Bad input names the parameter path.
		bad := []struct{ query, frag string }{
			{q("logs_query[lucene]", "level:error"), "logs_query.lucene: cannot be evaluated"},
			{q("spans_query[lucene]", "x"), "spans_query.lucene"},
			{q("logs_query[alias]", "a", "spans_query[lucene]", ""), "logs_query, spans_query: give at most one"},
			{q("logs_query[severityFilters]", "SEVERITY_LOUD"), "logs_query.severityFilters[0]"},
			{q("logs_query[alias]", ""), "logs_query.alias"},
			{q("metric_labels[0][sourceField]", "a"), "metric_labels[0].targetLabel"},
			{q("metric_labels[0][sourceField]", "a", "metric_labels[0][targetLabel]", "bad label"), "metric_labels[0].targetLabel"},
			{q("metric_labels[0][sourceField]", "", "metric_labels[0][targetLabel]", "x"), "metric_labels[0].sourceField"},
			{q("metric_labels[0][sourceField]", "a", "metric_labels[0][targetLabel]", "x", "metric_labels[1][sourceField]", "b", "metric_labels[1][targetLabel]", "x"),
				"metric_labels[1].targetLabel: \"x\" is already"},
		}
		for _, c := range bad {
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, cardinalitiesPath+"?"+c.query, key, ""), 400, c.frag)
		}
		// At most 10 labels.
		var ten, eleven []string
		for i := 0; i < 11; i++ {
			pair := []string{fmt.Sprintf("metric_labels[%d][sourceField]", i), "f", fmt.Sprintf("metric_labels[%d][targetLabel]", i), fmt.Sprintf("l%d", i)}
			if i < 10 {
				ten = append(ten, pair...)
			}
			eleven = append(eleven, pair...)
		}
		ask(key, q(ten...))
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, cardinalitiesPath+"?"+q(eleven...), key, ""), 400, "metric_labels", "10")
	})
}

func TestLimitsPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "acme")
		reader := env.MustKey(t, key, "logs.events2metrics:ReadConfig")
		writer := env.MustKey(t, key, "logs.events2metrics:UpdateConfig")
		for _, p := range []string{limitsPath, cardinalitiesPath} {
			if res := env.JSON(t, http.MethodGet, p, reader, ""); res.Status != http.StatusOK {
				t.Fatalf("reader %s: %d %s", p, res.Status, res.Body)
			}
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p, writer, ""), 403)
			apitest.ExpectError(t, env.JSON(t, http.MethodGet, p, "nope", ""), 401)
		}
	})
}
