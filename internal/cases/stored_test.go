package cases_test

import (
	"context"
	"os"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// TestEarlierStoredActors writes case rows as mgmtapi stored them before the actor rename
// (alertManager, empty actor fields, a full actor as resolvedBy), runs migration 0017's text
// again over them, and reads them back through the API in the public shapes.
func TestEarlierStoredActors(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		h := newHarness(t, env)
		ref := h.open(1, "earlier", "stored long ago")
		h.ok(h.comment(h.RootKey, ref.ID, `{"text":"by a key"}`), "comment")
		migration, err := os.ReadFile("../db/migrations/" + string(env.Engine) + "/0017_case_actor_keys.sql")
		if err != nil {
			t.Fatal(err)
		}
		err = h.DB.InTx(context.Background(), func(tx *db.Tx) error {
			for _, stmt := range []string{
				`UPDATE case_events SET actor = '{"alertManager":{"receiverName":""}}' WHERE case_id = '` + ref.ID + `' AND kind = 'created'`,
				`UPDATE case_events SET actor = '{"apiKey":{"id":"k1","name":""}}' WHERE case_id = '` + ref.ID + `' AND kind = 'comment'`,
				`UPDATE cases SET status = 'CASE_STATUS_RESOLVED', resolution = '{"reason":"gone","resolveTime":"2024-05-01T12:00:00.5Z","resolvedBy":{"alertManager":{"receiverName":"r"}}}' WHERE id = '` + ref.ID + `'`,
			} {
				if _, err := tx.ExecContext(context.Background(), stmt); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(context.Background(), string(migration))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		evs := h.events(h.RootKey, ref.ID)
		if a := evs[0].Actor; !a.PrometheusAlertManager.Set || a.PrometheusAlertManager.Value.ReceiverName.Set {
			t.Fatalf("created actor %+v", a)
		}
		if a := evs[1].Actor.ApiKey; !a.Set || a.Value.ID.Value != "k1" || a.Value.Name.Set {
			t.Fatalf("comment actor %+v", a)
		}
		rd := h.getCase(h.RootKey, ref.ID).ResolutionDetails.Value
		if rd.Reason.Value != "gone" || rd.ResolveTime.Value.Nanosecond() != 5e8 || rd.ResolvedBy.Value.PrometheusAlertManager == nil ||
			rd.ResolvedBy.Value.ApiKey != nil {
			t.Fatalf("resolution %+v", rd)
		}
		// A resolution stored before the migration, with the full actor, reads the same way.
		err = h.DB.InTx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `UPDATE cases SET resolution =
				'{"resolvedBy":{"apiKey":{"id":"k1","name":"n"}}}' WHERE id = '`+ref.ID+`'`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rd := h.getCase(h.RootKey, ref.ID).ResolutionDetails.Value; rd.ResolvedBy.Value.ApiKey == nil || rd.Reason.Set {
			t.Fatalf("resolution %+v", rd)
		}
	})
}
