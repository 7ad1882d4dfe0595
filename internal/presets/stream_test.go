package presets_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/presets"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// TestStreamedListIsTheBufferedList checks that the preset summaries, which the server streams,
// are byte for byte what the generated encoder writes for the same presets and filters: the
// system presets alone, filtered, and more than the streaming buffer holds (so the answer leaves
// in several writes).
func TestStreamedListIsTheBufferedList(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		teamID, key := env.MustTeam(t, "streamed")
		h := presets.NewHandler(env.DB)
		expect := func(query string, params oas.ListPresetSummariesParams) []byte {
			t.Helper()
			return apitest.ExpectStreamedAsBuffered(t, env, listPath+query, key, teamID,
				func(ctx context.Context) (*oas.PresetSummaryList, error) { return h.ListPresetSummaries(ctx, params) })
		}
		expect("", oas.ListPresetSummariesParams{})
		slackCases := oas.ListPresetSummariesParams{ConnectorType: oas.NewOptConnectorType(oas.ConnectorTypeSLACK),
			EntityType: oas.NewOptNotificationEntityType(oas.NotificationEntityTypeCASES)}
		if body := expect("?connector_type=SLACK&entity_type=CASES", slackCases); !strings.Contains(string(body), `"preset_system_slack_cases_basic"`) || strings.Count(string(body), `"id"`) != 1 {
			t.Fatalf("only the system Slack case preset yet: %s", body)
		}
		create(t, env, key, `{"name":"one \"q\" é <&>","connectorType":"SLACK","entityType":"CASES"}`)
		expect("?connector_type=SLACK&entity_type=CASES", slackCases)
		for i := 0; len(expect("", oas.ListPresetSummariesParams{})) <= 2*streaming.BufferBytes; i++ {
			for j := range 25 {
				create(t, env, key, fmt.Sprintf(`{"name":"preset %d-%d","description":"a preset of the streamed list","connectorType":"GENERIC_HTTPS","entityType":"ALERTS"}`, i, j))
			}
		}
		expect("?entity_type=ALERTS", oas.ListPresetSummariesParams{EntityType: oas.NewOptNotificationEntityType(oas.NotificationEntityTypeALERTS)})
		apitest.ExpectError(t, env.JSON(t, "GET", listPath+"?connector_type=TELEGRAM", key, ""), 400, "connector_type")
	})
}
