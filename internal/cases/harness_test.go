package cases_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	casesPath  = "/mgmt/openapi/5/cases/cases/v1"
	eventsPath = "/mgmt/openapi/5/cases/events/v1/"
)

// harness wraps an apitest.Env with the helpers these tests share.
type harness struct {
	t       *testing.T
	env     *apitest.Env
	DB      *db.DB
	Clock   *apitest.Clock
	RootKey string
}

func newHarness(t *testing.T, env *apitest.Env) *harness {
	return &harness{t: t, env: env, DB: env.DB, Clock: env.Clock, RootKey: env.RootKey}
}

func (h *harness) do(method, path, key, body string) apitest.Response {
	h.t.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	auth := ""
	if key != "" {
		auth = "Bearer " + key
	}
	return h.env.Do(h.t, method, path, auth, ct, body)
}

func (h *harness) ok(res apitest.Response, what string) apitest.Response {
	h.t.Helper()
	if res.Status != 200 {
		h.t.Fatalf("%s: status %d, want 200; body %s", what, res.Status, res.Body)
	}
	return res
}

// team creates a team with the operator API and returns its id and a full-access key.
func (h *harness) team(name string) (int64, string) {
	h.t.Helper()
	res := h.ok(h.do("POST", "/admin/v1/teams", apitest.OperatorKey, fmt.Sprintf(`{"name":%q}`, name)), "create team")
	var out oas.AdminTeamCreated
	if err := out.UnmarshalJSON(res.Body); err != nil {
		h.t.Fatalf("decode team: %v", err)
	}
	return out.Team.ID, out.ApiKey.Value
}

// key creates, with teamKey, a key holding exactly the permissions.
func (h *harness) key(teamKey string, permissions ...string) string {
	h.t.Helper()
	b, _ := json.Marshal(map[string]any{"name": "test key", "keyPermissions": map[string]any{"permissions": permissions}})
	res := h.ok(h.do("POST", "/mgmt/openapi/4/aaa/api-keys/v3", teamKey, string(b)), "create key")
	var out oas.ApiKeyCreated
	if err := out.UnmarshalJSON(res.Body); err != nil {
		h.t.Fatalf("decode key: %v", err)
	}
	return out.Value
}

// open opens a case for a new group through the ingestion entry point.
func (h *harness) open(teamID int64, group, title string, labels ...oas.KeyValue) cases.CaseRef {
	h.t.Helper()
	ref, opened, err := openCase(h.DB, cases.AlertGroup{
		TeamID: teamID, GroupKey: group, Receiver: "team-receiver", Title: title, Labels: labels,
		Groupings: []oas.KeyValue{{Key: "alertname", Value: group}},
	})
	if err != nil || !opened {
		h.t.Fatalf("open case for %q: opened %v, %v", group, opened, err)
	}
	return ref
}

// openWith opens a case for a new group and records its first alerts in the same transaction,
// as ingestion does.
func (h *harness) openWith(teamID int64, group string, alerts ...cases.IndicatorAlert) cases.CaseRef {
	h.t.Helper()
	var ref cases.CaseRef
	err := h.DB.InTx(context.Background(), func(tx *db.Tx) error {
		var err error
		ref, _, err = cases.OpenForGroup(context.Background(), tx, cases.AlertGroup{TeamID: teamID, GroupKey: group, Receiver: "team-receiver"})
		if err != nil {
			return err
		}
		return cases.RecordAlerts(context.Background(), tx, teamID, ref.ID, "team-receiver", alerts)
	})
	if err != nil {
		h.t.Fatalf("open case for %q with alerts: %v", group, err)
	}
	return ref
}

// openCase runs OpenForGroup in its own transaction, retrying while another one wins the group.
func openCase(database *db.DB, g cases.AlertGroup) (ref cases.CaseRef, opened bool, err error) {
	for range 20 {
		err = database.InTx(context.Background(), func(tx *db.Tx) error {
			var err error
			ref, opened, err = cases.OpenForGroup(context.Background(), tx, g)
			return err
		})
		if !db.IsConflict(err) {
			return ref, opened, err
		}
	}
	return ref, opened, err
}

func (h *harness) record(teamID int64, caseID string, alerts ...cases.IndicatorAlert) {
	h.t.Helper()
	err := h.DB.InTx(context.Background(), func(tx *db.Tx) error {
		return cases.RecordAlerts(context.Background(), tx, teamID, caseID, "team-receiver", alerts)
	})
	if err != nil {
		h.t.Fatalf("record alerts: %v", err)
	}
}

func (h *harness) getCase(key, ident string) oas.Case {
	h.t.Helper()
	return decodeCase(h.t, h.ok(h.do("GET", casesPath+"/"+ident, key, ""), "get case "+ident))
}

func decodeCase(t *testing.T, res apitest.Response) oas.Case {
	t.Helper()
	var out oas.CaseResponse
	if err := out.UnmarshalJSON(res.Body); err != nil {
		t.Fatalf("decode case: %v; body %s", err, res.Body)
	}
	return out.Case
}

func decodeEvent(t *testing.T, res apitest.Response) oas.CaseEvent {
	t.Helper()
	var out oas.CaseEventResponse
	if err := out.UnmarshalJSON(res.Body); err != nil {
		t.Fatalf("decode event: %v; body %s", err, res.Body)
	}
	return out.Event
}

func (h *harness) events(key, ident string) []oas.CaseEvent {
	h.t.Helper()
	res := h.ok(h.do("GET", casesPath+"/"+ident+"/events", key, ""), "list events")
	var out oas.CaseEventList
	if err := out.UnmarshalJSON(res.Body); err != nil {
		h.t.Fatalf("decode events: %v", err)
	}
	return out.Events
}

// kinds names the variant of each event.
func kinds(events []oas.CaseEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		b, _ := e.EventData.MarshalJSON()
		var m map[string]json.RawMessage
		_ = json.Unmarshal(b, &m)
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		out[i] = strings.Join(ks, "+")
	}
	return out
}

func (h *harness) evaluate() int {
	h.t.Helper()
	n, err := cases.EvaluateKPIs(context.Background(), h.DB)
	if err != nil {
		h.t.Fatalf("evaluate KPIs: %v", err)
	}
	return n
}

// Operations on a case by path.
func (h *harness) ack(key, id string) apitest.Response {
	return h.do("PUT", "/mgmt/openapi/5/cases/acknowledged/v1/"+id, key, "")
}
func (h *harness) unack(key, id string) apitest.Response {
	return h.do("DELETE", "/mgmt/openapi/5/cases/acknowledged/v1/"+id, key, "")
}
func (h *harness) resolve(key, id, body string) apitest.Response {
	return h.do("PUT", "/mgmt/openapi/5/cases/resolved/v1/"+id, key, body)
}
func (h *harness) close(key, id string) apitest.Response {
	return h.do("POST", "/mgmt/openapi/5/cases/closed/v1/"+id, key, "")
}
func (h *harness) assign(key, id, user string) apitest.Response {
	return h.do("POST", "/mgmt/openapi/5/cases/assigned/v1/"+id, key, `{"assignee":{"userId":"`+user+`"}}`)
}
func (h *harness) unassign(key, id string) apitest.Response {
	return h.do("DELETE", "/mgmt/openapi/5/cases/assigned/v1/"+id, key, "")
}
func (h *harness) update(key, id, body string) apitest.Response {
	return h.do("PUT", casesPath+"/"+id, key, body)
}
func (h *harness) comment(key, id, body string) apitest.Response {
	return h.do("POST", casesPath+"/"+id+"/comments", key, body)
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
