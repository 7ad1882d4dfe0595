package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/go-faster/yaml"

	spec "github.com/mgmtapi/mgmtapi/api"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// The streamed lists bypass the generated server, which would decode parameters and check other
// security schemes: each must be a GET without parameters under the document's default security
// (the team API key), so that the security check is all the generated server would have done.
func TestStreamedListsTakeNoParameters(t *testing.T) {
	var doc struct {
		Security []map[string][]string `yaml:"security"`
		Paths    map[string]map[string]yaml.Node
	}
	if err := yaml.Unmarshal(spec.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Security) != 1 || len(doc.Security[0]) != 1 || doc.Security[0]["apiKey"] == nil {
		t.Fatalf("default security %v, want the API key alone", doc.Security)
	}
	found := map[string]bool{}
	for path, item := range doc.Paths {
		for method, node := range item {
			var op struct {
				OperationID string         `yaml:"operationId"`
				Parameters  []any          `yaml:"parameters"`
				Security    *[]yaml.Node   `yaml:"security"`
				Body        map[string]any `yaml:"requestBody"`
			}
			if method == "parameters" || node.Decode(&op) != nil {
				continue
			}
			if _, ok := streamedLists(handler{})[op.OperationID]; !ok {
				continue
			}
			found[op.OperationID] = true
			_, pathParams := item["parameters"]
			if method != "get" || len(op.Parameters) > 0 || pathParams || op.Security != nil || op.Body != nil {
				t.Errorf("%s (%s %s): a streamed list must be a GET without parameters, body or own security", op.OperationID, method, path)
			}
		}
	}
	for op := range streamedLists(handler{}) {
		if !found[op] {
			t.Errorf("streamed list %s is not in the document", op)
		}
	}
}

// Each streamed list is recognised by its method and path in the one route walk, its record
// saying how it is answered.
func TestStreamedListsAreFoundByTheirPath(t *testing.T) {
	table, err := operations()
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]string{
		"/mgmt/openapi/5/dataplans/policies/v1":                                      "ListPolicies",
		"/mgmt/openapi/4/slo/slos/v1":                                                "ListSlos",
		"/mgmt/openapi/5/aaa/team-roles/v1/custom-roles":                             "ListCustomRoles",
		"/mgmt/openapi/5/notifications/notification-center/v1/presets:summariesList": "ListPresetSummaries",
		"/mgmt/openapi/5/recording-rules/recording-rules/v1/some-id":                 "GetRecordingRuleSet",
	}
	want := map[string]string{
		"/mgmt/openapi/5/recording-rules/recording-rules/v1":    "ListRecordingRuleSets",
		"/mgmt/openapi/5/parsing-rules/rule-groups/v1":          "ListParsingRuleGroups",
		"/mgmt/openapi/5/events2metrics/events2metrics/v2":      "ListE2M",
		"/mgmt/openapi/5/data-exploration/views/v1/views":       "ListViews",
		"/mgmt/openapi/5/data-exploration/views/v1/folders":     "ListViewFolders",
		"/mgmt/openapi/5/dashboards/dashboards/v1/catalog/list": "ListDashboardCatalog",
	}
	streamed := 0
	for _, op := range table.byID {
		if op.stream != notStreamed {
			streamed++
		}
	}
	if streamed != len(want)+len(routed) {
		t.Errorf("%d streamed operations, want %d", streamed, len(want)+len(routed))
	}
	for path, operation := range routed {
		if op := table.routes.match("GET", path).op; op == nil || op.id != operation || op.stream != streamedThroughRouter {
			t.Errorf("%s: got %+v, want %s served by the router through a stream slot", path, op, operation)
		}
	}
	for path, operation := range want {
		if op := table.routes.match("GET", path).op; op == nil || op.id != operation || op.stream != streamedHere {
			t.Errorf("%s: got %+v, want %s served here", path, op, operation)
		}
	}
}

// chunk is a list item of n bytes for the stream slot tests.
type chunk int

func (c chunk) Encode(e *jx.Encoder) { e.Str(strings.Repeat("x", int(c))) }

// A routed streamed list writes its answer to the client while it produces it, through the stream
// slot; what the generated server writes after (its answer to errAnsweredByStream) is discarded.
// Without a slot (a call from outside API.ServeHTTP) the buffered method answers.
func TestStreamThroughRouter(t *testing.T) {
	buffered := func(context.Context, int) (*oas.PolicyList, error) { return &oas.PolicyList{}, nil }
	rec := httptest.NewRecorder()
	w, r := withStreamSlot(rec, httptest.NewRequest("GET", "/list", nil), oas.ListPoliciesOperation)
	var sentBefore int
	list, err := streamThroughRouter(r.Context(), buffered, 3, func(_ context.Context, n int, a *streaming.Answer) error {
		return a.Array("items", func() error {
			for range n {
				if err := a.Item(chunk(streaming.BufferBytes)); err != nil {
					return err
				}
			}
			sentBefore = rec.Body.Len()
			return nil
		})
	})
	if list != nil || err != errAnsweredByStream {
		t.Fatalf("streamThroughRouter = %v, %v", list, err)
	}
	if sentBefore < 2*streaming.BufferBytes {
		t.Fatalf("%d bytes had left when the last item was encoded: the answer was not streamed", sentBefore)
	}
	// The generated server answers errAnsweredByStream on the slot: nothing of it reaches the client.
	w.WriteHeader(http.StatusTeapot)
	_, _ = w.Write([]byte("after"))
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(body, `{"items":["xxx`) || !strings.HasSuffix(body, `xxx"]}`) ||
		len(body) != 3*(streaming.BufferBytes+3)+len(`{"items":[]}`)-1 {
		t.Fatalf("status %d, %d bytes: %.40s … %.40s", rec.Code, len(body), body, body[max(0, len(body)-40):])
	}

	// An error before the first byte is returned for the generated server to answer, on the slot.
	rec = httptest.NewRecorder()
	w, r = withStreamSlot(rec, httptest.NewRequest("GET", "/list", nil), oas.ListPoliciesOperation)
	refused := errors.New("refused")
	if _, err := streamThroughRouter(r.Context(), buffered, 1, func(context.Context, int, *streaming.Answer) error { return refused }); err != refused {
		t.Fatalf("error before the first byte: %v", err)
	}
	w.WriteHeader(http.StatusBadRequest)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("the error answer did not reach the client: %d", rec.Code)
	}

	// Without a slot.
	if list, err := streamThroughRouter(context.Background(), buffered, 1, nil); err != nil || list == nil {
		t.Fatalf("without a slot: %v, %v", list, err)
	}
}
