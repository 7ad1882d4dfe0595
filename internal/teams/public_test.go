package teams_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

const teamsPath = "/mgmt/openapi/latest/aaa/teams/v2"

type teamInfo struct {
	TeamID     struct{ ID int64 }
	TeamName   string
	DailyQuota float64
}

const operator = apitest.OperatorKey

func TestPublicTeams(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a, keyA := env.MustTeam(t, "team a")
		b, keyB := env.MustTeam(t, "team b")

		// A team key sees its own team only; the operator every team.
		own := apitest.Decode[struct {
			DefaultTeam teamInfo
			Teams       []teamInfo
		}](t, env.JSON(t, http.MethodGet, teamsPath, keyA, ""))
		if len(own.Teams) != 1 || own.Teams[0].TeamID.ID != a || own.DefaultTeam.TeamID.ID != a || own.Teams[0].DailyQuota != 0.01 {
			t.Fatalf("team a's list %+v", own)
		}
		all := apitest.Decode[struct{ Teams []teamInfo }](t, env.JSON(t, http.MethodGet, teamsPath, operator, ""))
		if len(all.Teams) < 2 {
			t.Fatalf("the operator's list %+v", all)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", teamsPath, b), keyA, ""), http.StatusNotFound, "team_id")
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, fmt.Sprintf("%s/%d", teamsPath, b), keyA, `{"teamName":"x"}`), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, fmt.Sprintf("%s/%d", teamsPath, b), keyA, ""), http.StatusNotFound)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", teamsPath, 999999), operator, ""), http.StatusNotFound)
		// A key without the permission.
		weak := env.MustKey(t, keyA, "data-usage:Read")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, teamsPath, weak, ""), http.StatusForbidden, "org-teams:ReadConfig")

		// Create with administrators: they are members in the built-in group of Platform Admins.
		created := apitest.Decode[struct{ TeamID struct{ ID int64 } }](t, env.JSON(t, http.MethodPost, teamsPath, operator,
			`{"teamName":"payments","dailyQuota":5,"teamAdminsEmail":["lead@example.com","ops@example.com"]}`)).TeamID.ID
		if created == 0 {
			t.Fatal("no team id")
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, teamsPath, keyA, `{"teamName":"payments"}`), http.StatusConflict, "payments")
		for _, c := range []struct{ body, want string }{
			{`{"teamName":"x","dailyQuota":-1}`, "dailyQuota"},
			{`{"teamName":"x","teamAdminsEmail":["a@b","A@b"]}`, "teamAdminsEmail[1]"},
			{`{"teamName":" "}`, "teamName"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, teamsPath, operator, c.body), http.StatusBadRequest, c.want)
		}
		got := apitest.Decode[teamInfo](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", teamsPath, created), operator, ""))
		if got.TeamName != "payments" || got.DailyQuota != 5 {
			t.Fatalf("created team %+v", got)
		}
		database := env.OpenDB(t)
		admins := apitest.MustQueryString(t, database,
			`SELECT g.name || ':' || g.role_id || ':' || g.origin || ':' || (SELECT COUNT(*) FROM team_group_members m WHERE m.team_id = g.team_id AND m.group_id = g.id)
			   FROM team_groups g WHERE g.team_id = $1`, created)
		if admins != "Team Admins:1:GROUP_ORIGIN_BUILT_IN:2" {
			t.Fatalf("the admins' group: %s", admins)
		}

		// Update: what is given changes; a taken name is a conflict.
		if res := env.JSON(t, http.MethodPut, fmt.Sprintf("%s/%d", teamsPath, a), keyA, `{"dailyQuota":12.5}`); res.Status != http.StatusOK || string(res.Body) != "{}" {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		got = apitest.Decode[teamInfo](t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", teamsPath, a), keyA, ""))
		if got.TeamName != "team a" || got.DailyQuota != 12.5 {
			t.Fatalf("updated team %+v", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, fmt.Sprintf("%s/%d", teamsPath, a), keyA, `{"teamName":"team b"}`), http.StatusConflict, "team b")

		// Delete: team a's rows all go, its keys stop at once, team b keeps everything.
		for _, key := range []string{keyA, keyB} {
			if res := env.Do(t, http.MethodPost, "/ingest/alertmanager/v1", "Bearer "+key, "application/json", apitest.FiringAlert); res.Status != http.StatusOK {
				t.Fatalf("ingest: %d %s", res.Status, res.Body)
			}
			env.JSON(t, http.MethodPost, "/mgmt/openapi/latest/aaa/team-scopes/v1", key, `{"displayName":"s","filters":[]}`)
		}
		if res := env.JSON(t, http.MethodGet, teamsPath, keyA, ""); res.Status != http.StatusOK {
			t.Fatalf("before the delete: %d", res.Status)
		}
		if res := env.JSON(t, http.MethodDelete, fmt.Sprintf("%s/%d", teamsPath, a), keyA, ""); res.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, teamsPath, keyA, ""), http.StatusUnauthorized)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, fmt.Sprintf("%s/%d", teamsPath, a), operator, ""), http.StatusNotFound)
		left, kept := rowsOf(t, database, a), rowsOf(t, database, b)
		if left != "" {
			t.Errorf("rows of the deleted team remain: %s", left)
		}
		for _, table := range []string{"api_keys", "cases", "team_scopes"} {
			if !strings.Contains(kept, table+"=") {
				t.Errorf("team b lost its %s: %s", table, kept)
			}
		}
		if n := apitest.MustQueryString(t, database, `SELECT COUNT(*) FROM audit_records WHERE team_id = $1 AND operation = 'DeleteTeam'`, a); n != "1" {
			t.Errorf("audit records of the deletion: %s", n)
		}
		if res := env.JSON(t, http.MethodGet, teamsPath, keyB, ""); res.Status != http.StatusOK {
			t.Fatalf("team b after the delete: %d %s", res.Status, res.Body)
		}
	})
}

// rowsOf lists "table=count" for every table with rows of the team (audit records aside).
func rowsOf(t *testing.T, database *db.DB, team int64) string {
	t.Helper()
	ctx := context.Background()
	query := `SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'team_id'`
	if database.Engine == db.Postgres {
		query = `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'team_id'`
	}
	rows, err := database.Read().QueryContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var out []string
	for _, table := range tables {
		if table == "audit_records" {
			continue
		}
		var n int
		if err := database.Read().QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+table+`" WHERE team_id = $1`, team).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s=%d", table, n))
		}
	}
	return strings.Join(out, " ")
}
