package outgoingwebhooks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/outgoingwebhooks"
)

// TestUsersKeepAWebhook: while a Users function names a user of the webhook (by its id or its
// externalId), it is neither deleted nor changes type (409 naming the user), and a replace that
// keeps the type goes through; once nothing uses it, it is deleted.
func TestUsersKeepAWebhook(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		team, _ := env.MustTeam(t, "acme")
		used := true
		var asked []int64
		users := func(ctx context.Context, tx *db.Tx, teamID int64, id string, externalID int64) ([]string, error) {
			asked = append(asked, externalID)
			if used && teamID == team {
				return []string{`connector "Paging" (id c-1)`}, nil
			}
			return nil, nil
		}
		h := outgoingwebhooks.NewHandler(env.DB, delivery.NewSender(delivery.Options{}), users)
		ctx := auth.WithPrincipal(context.Background(), &auth.Principal{TeamID: team})
		pd := oas.OutgoingWebhookInputData{Name: oas.NewOptString("pd"), Type: oas.NewOptWebhookType(oas.WebhookTypePAGERDUTY),
			PagerDuty: oas.NewOptPagerDutyConfig(oas.PagerDutyConfig{ServiceKey: oas.NewOptString("k")})}
		created, err := h.CreateOutgoingWebhook(ctx, &oas.CreateOutgoingWebhookRequest{Data: oas.NewOptOutgoingWebhookInputData(pd)})
		if err != nil {
			t.Fatal(err)
		}
		id := created.ID.Or("")
		conflict := func(err error) {
			t.Helper()
			if e, ok := apierror.As(err); !ok || e.Kind != apierror.Conflict || !strings.Contains(e.Message, `connector "Paging"`) {
				t.Errorf("want a conflict naming the connector, got %v", err)
			}
		}
		conflict(h.DeleteOutgoingWebhook(ctx, oas.DeleteOutgoingWebhookParams{ID: id}))
		conflict(h.DeleteOutgoingWebhook(ctx, oas.DeleteOutgoingWebhookParams{ID: "1"}))
		slack := oas.OutgoingWebhookInputData{Name: oas.NewOptString("s"), Type: oas.NewOptWebhookType(oas.WebhookTypeSLACK),
			URL: oas.NewOptString("https://hooks.slack.example.com/x")}
		conflict(h.UpdateOutgoingWebhook(ctx, &oas.UpdateOutgoingWebhookRequest{ID: oas.NewOptString(id), Data: oas.NewOptOutgoingWebhookInputData(slack)}))
		pd.Name = oas.NewOptString("renamed")
		if err := h.UpdateOutgoingWebhook(ctx, &oas.UpdateOutgoingWebhookRequest{ID: oas.NewOptString(id), Data: oas.NewOptOutgoingWebhookInputData(pd)}); err != nil {
			t.Errorf("a replace keeping the type: %v", err)
		}
		if len(asked) == 0 || asked[0] != 1 {
			t.Errorf("users were asked with externalIds %v", asked)
		}
		used = false
		if err := h.DeleteOutgoingWebhook(ctx, oas.DeleteOutgoingWebhookParams{ID: id}); err != nil {
			t.Errorf("delete once unused: %v", err)
		}
		if _, err := h.GetOutgoingWebhook(ctx, oas.GetOutgoingWebhookParams{ID: id}); err == nil {
			t.Errorf("the deleted webhook is still there")
		}
	})
}
