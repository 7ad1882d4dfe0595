package delivery_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/cases"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const listPath = "/mgmt/openapi/5/cases/notifications/v1/deliveries"

// TestListNotificationDeliveries: a case's deliveries are grouped by notification request and
// router, oldest first, each connector's attempt with its outcome (success, failure with the
// message, neither while pending); a case without deliveries, an unknown id and another team's
// case answer empty lists; every requested case is answered once.
func TestListNotificationDeliveries(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		quiet := f.openCase(t, "group-2")
		good := newReceiver(t, ok)
		bad := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			http.Error(w, "no such channel", http.StatusNotFound)
		})
		// the first event: two connectors through one router, one more through another router
		first := uuid.NewString()
		a := f.record(good.URL, "slack-ok", "first-a")
		b := f.record(bad.URL, "hook-bad", "first-b")
		c := f.record(good.URL, "teams-ok", "first-c")
		a.RequestID, b.RequestID, c.RequestID = first, first, first
		a.ConnectorType, a.Fields = delivery.Slack, map[string]any{"text": "disk full"}
		c.RouterID, c.RouterName = "router-2", "Night shift"
		c.ConnectorType, c.Fields = delivery.MicrosoftTeams, map[string]any{"title": "disk full"}
		f.enqueue(t, a, b, c)
		if err := worker(env, nil).Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Second)
		// the second event: pending
		second := f.record(good.URL, "slack-ok", "second-a")
		f.enqueue(t, second)

		// another team's case with a delivery
		otherTeam, otherKey := env.MustTeam(t, "other")
		other := &fixture{env: env, team: otherTeam, key: otherKey}
		other.caseID = other.openCase(t, "group-1")
		other.enqueue(t, other.record(good.URL, "slack-ok", "other-a"))

		res, err := env.Client(t, f.key).ListNotificationDeliveries(context.Background(), &oas.NotificationDeliveriesInput{
			CaseIds: []string{f.caseID, quiet, f.caseID, other.caseID, "no-such-case"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.DeliveriesByCase) != 4 {
			t.Fatalf("cases answered: %v", res.DeliveriesByCase)
		}
		for _, id := range []string{quiet, other.caseID, "no-such-case"} {
			if list, ok := res.DeliveriesByCase[id]; !ok || len(list.NotificationDeliveries) != 0 {
				t.Errorf("%s: %+v, want an empty list", id, list)
			}
		}
		got := res.DeliveriesByCase[f.caseID].NotificationDeliveries
		if len(got) != 3 {
			t.Fatalf("entries: %+v", got)
		}
		e0, e1, e2 := got[0], got[1], got[2]
		if e0.RequestNotificationId.Value != first || e1.RequestNotificationId.Value != first ||
			e2.RequestNotificationId.Value != second.RequestID || !e2.Timestamp.After(e0.Timestamp) {
			t.Errorf("order: %+v", got)
		}
		r0, r1 := e0.Attempted.Value, e1.Attempted.Value
		if r0.Router.RouterId != "router-1" || r0.Router.RouterName != "Production" || len(r0.Attempts) != 2 ||
			r1.Router.RouterId != "router-2" || r1.Router.RouterName != "Night shift" || len(r1.Attempts) != 1 {
			t.Fatalf("routers: %+v %+v", r0, r1)
		}
		failed, sent := r0.Attempts[0], r0.Attempts[1] // by connector id: hook-bad, slack-ok
		if failed.Connector.ConnectorId != "hook-bad" || failed.Connector.ConnectorName != "Hook hook-bad" ||
			failed.Connector.ConnectorType != oas.DeliveryAttemptConnectorConnectorTypeCONNECTORTYPEGENERICHTTPS ||
			!failed.Outcome.Failure.Set || failed.Outcome.Success.Set ||
			failed.Outcome.Failure.Value.ErrorMessage != bad.URL[len("http://"):]+" answered 404 Not Found: no such channel" {
			t.Errorf("failed attempt: %+v", failed)
		}
		if sent.Connector.ConnectorId != "slack-ok" || sent.Connector.ConnectorType != oas.DeliveryAttemptConnectorConnectorTypeCONNECTORTYPESLACK ||
			!sent.Outcome.Success.Set || sent.Outcome.Failure.Set {
			t.Errorf("sent attempt: %+v", sent)
		}
		if a := r1.Attempts[0]; a.Connector.ConnectorType != oas.DeliveryAttemptConnectorConnectorTypeCONNECTORTYPEMICROSOFTTEAMS || !a.Outcome.Success.Set {
			t.Errorf("teams attempt: %+v", a)
		}
		if p := e2.Attempted.Value.Attempts[0].Outcome; p.Success.Set || p.Failure.Set {
			t.Errorf("pending attempt has an outcome: %+v", p)
		}

		// the other team sees its own case's delivery only
		res, err = env.Client(t, otherKey).ListNotificationDeliveries(context.Background(), &oas.NotificationDeliveriesInput{
			CaseIds: []string{other.caseID, f.caseID}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.DeliveriesByCase[other.caseID].NotificationDeliveries) != 1 || len(res.DeliveriesByCase[f.caseID].NotificationDeliveries) != 0 {
			t.Errorf("other team: %+v", res.DeliveriesByCase)
		}
	})
}

// TestListNotificationDeliveriesRefusals: the bounds of caseIds and the case:Read permission.
func TestListNotificationDeliveriesRefusals(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		long := make([]byte, 65)
		for i := range long {
			long[i] = 'a'
		}
		many := "["
		for i := range 1001 {
			if i > 0 {
				many += ","
			}
			many += `"c"`
		}
		many += "]"
		for _, c := range []struct {
			body     string
			status   int
			fragment string
		}{
			{`{}`, 400, "caseIds"},
			{`{"caseIds": []}`, 400, "caseIds"},
			{`{"caseIds": [""]}`, 400, "caseIds"},
			{`{"caseIds": ["` + string(long) + `"]}`, 400, "caseIds"},
			{`{"caseIds": ` + many + `}`, 400, "caseIds"},
		} {
			res := env.JSON(t, "POST", listPath, key, c.body)
			apitest.ExpectError(t, res, c.status, c.fragment)
		}
		reader := env.MustKey(t, key, "case:Read")
		if res := env.JSON(t, "POST", listPath, reader, `{"caseIds": ["x"]}`); res.Status != 200 {
			t.Errorf("with case:Read: %d %s", res.Status, res.Body)
		}
		other := env.MustKey(t, key, "incidents:Read")
		apitest.ExpectError(t, env.JSON(t, "POST", listPath, other, `{"caseIds": ["x"]}`), 403, "case:Read")
		apitest.ExpectError(t, env.JSON(t, "POST", "/mgmt/openapi/latest/cases/notifications/v1/deliveries", "", `{"caseIds": ["x"]}`), 401)
	})
}

// TestDeliveriesByReadableIdWhileRetrying: the deliveries list reads a case by its readable id
// (CASE-1) as by its id, keyed as requested; a readable id the team does not have (another
// team's CASE-1 included) answers an empty list. A delivery the receiver refused with a 503, and
// that waits for its retry, has no outcome yet, and says how many sends were made, why the last
// one failed and when the next is due.
func TestDeliveriesByReadableIdWhileRetrying(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		f := newFixture(t, env)
		var ref cases.CaseRef
		if err := env.DB.InTx(context.Background(), func(tx *db.Tx) (err error) {
			ref, _, err = cases.OpenForGroup(context.Background(), tx, cases.AlertGroup{TeamID: f.team, GroupKey: "group-1", Receiver: "am", Title: "disk full"})
			return err
		}); err != nil || ref.ID != f.caseID || ref.ReadableID == "" {
			t.Fatalf("the fixture's case: %+v %v", ref, err)
		}
		busy := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			http.Error(w, "try again later", http.StatusServiceUnavailable)
		})
		f.enqueue(t, f.record(busy.URL, "hook-busy", "key-busy"))
		if err := worker(env, nil).Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := f.stored(t, "key-busy"); s.State != "pending" || s.Attempts != 1 {
			t.Fatalf("the refused delivery: %+v, want pending after one send", s)
		}
		res, err := env.Client(t, f.key).ListNotificationDeliveries(context.Background(), &oas.NotificationDeliveriesInput{
			CaseIds: []string{ref.ReadableID, f.caseID, "CASE-99"}})
		if err != nil {
			t.Fatal(err)
		}
		byReadable, byID := res.DeliveriesByCase[ref.ReadableID].NotificationDeliveries, res.DeliveriesByCase[f.caseID].NotificationDeliveries
		if len(res.DeliveriesByCase) != 3 || len(byReadable) != 1 || len(byID) != 1 || len(res.DeliveriesByCase["CASE-99"].NotificationDeliveries) != 0 ||
			byReadable[0].RequestNotificationId != byID[0].RequestNotificationId {
			t.Fatalf("by readable id and by id: %+v", res.DeliveriesByCase)
		}
		a := byReadable[0].Attempted.Value.Attempts[0]
		if a.Outcome.Success.Set || a.Outcome.Failure.Set {
			t.Errorf("a delivery still retried has an outcome: %+v", a.Outcome)
		}
		if a.Attempts.Value != 1 || !strings.Contains(a.LastError.Value, "503") || !a.NextAttemptTime.Set ||
			a.NextAttemptTime.Value.Before(env.Clock.Now().Add(-time.Second)) {
			t.Errorf("a delivery still retried: attempts %v, last error %v, next %v", a.Attempts, a.LastError, a.NextAttemptTime)
		}

		otherTeam, otherKey := env.MustTeam(t, "other")
		other := &fixture{env: env, team: otherTeam, key: otherKey}
		other.caseID = other.openCase(t, "group-1")
		res, err = env.Client(t, otherKey).ListNotificationDeliveries(context.Background(), &oas.NotificationDeliveriesInput{
			CaseIds: []string{ref.ReadableID}})
		if err != nil {
			t.Fatal(err)
		}
		if list := res.DeliveriesByCase[ref.ReadableID].NotificationDeliveries; len(list) != 0 {
			t.Errorf("another team's %s shows this team's deliveries: %+v", ref.ReadableID, list)
		}
	})
}
