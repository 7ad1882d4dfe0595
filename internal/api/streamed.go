package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// streamedLists are the list operations served by writing their answer while the rows are read
// (package streaming) instead of through the generated encoder, which needs the whole answer in
// memory: the lists the public documents do not page. Each is a GET without parameters, so the
// generated server would do nothing for it but the security check and the encoding, and both are
// done here the same way (TestStreamedListsTakeNoParameters holds the first point).
func streamedLists(h handler) map[string]streaming.List {
	return map[string]streaming.List{
		oas.ListRecordingRuleSetsOperation: h.StreamRecordingRuleSets,
		oas.ListParsingRuleGroupsOperation: h.StreamParsingRuleGroups,
		oas.ListE2MOperation:               h.StreamE2M,
		oas.ListViewsOperation:             h.StreamViews,
		oas.ListViewFoldersOperation:       h.StreamViewFolders,
		oas.ListDashboardCatalogOperation:  h.StreamDashboardCatalog,
	}
}

// streamedList is a streamed list and the operation it answers.
type streamedList struct {
	operation string
	list      streaming.List
}

// streamedRoutes keys the streamed lists by "GET <path>", read from the OpenAPI document, so
// that a request for one is recognised without routing it. It fails when a streamed operation is
// not a GET without path parameters in the document.
func streamedRoutes(h handler) (map[string]streamedList, error) {
	lists := streamedLists(h)
	ops, err := documentOperations()
	if err != nil {
		return nil, err
	}
	routes := map[string]streamedList{}
	for _, o := range ops {
		var op struct {
			OperationID string `yaml:"operationId"`
		}
		if err := o.decode(&op); err != nil {
			return nil, err
		}
		list, ok := lists[op.OperationID]
		if !ok {
			continue
		}
		if o.method != "get" || strings.Contains(o.path, "{") {
			return nil, fmt.Errorf("openapi document: streamed list %s must be a GET without path parameters", op.OperationID)
		}
		routes["GET "+o.path] = streamedList{operation: op.OperationID, list: list}
	}
	if len(routes) != len(lists) {
		return nil, fmt.Errorf("openapi document: %d streamed lists, %d found", len(lists), len(routes))
	}
	return routes, nil
}

// serveStreamed serves a streamed list: the same security check as every operation, with the
// same errors, then the answer. An error before the first byte is an ordinary {code, message}
// answer; after it, the connection is aborted (see streaming.Serve).
func (a *API) serveStreamed(w http.ResponseWriter, r *http.Request, operation string, list streaming.List) {
	ctx := r.Context()
	server.SetOperation(ctx, operation)
	opContext := ogenerrors.OperationContext{Name: operation, ID: operation}
	key := r.Header.Get("Authorization")
	if key == "" {
		a.answerError(w, r, &ogenerrors.SecurityError{OperationContext: opContext, Err: ogenerrors.ErrSecurityRequirementIsNotSatisfied})
		return
	}
	ctx, err := a.security.HandleApiKey(ctx, operation, oas.ApiKey{APIKey: key})
	if err != nil {
		a.answerError(w, r, &ogenerrors.SecurityError{OperationContext: opContext, Security: "ApiKey", Err: err})
		return
	}
	err = streaming.Serve(ctx, w, list, func(err error) {
		slog.ErrorContext(ctx, "list failed after its first bytes; connection aborted",
			"operation", operation, "error", err.Error())
	})
	if err != nil {
		a.answerError(w, r.WithContext(ctx), err)
	}
}

func (a *API) answerError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorResponse(r.Context(), err)
	writeError(w, e.StatusCode, e.Response.Message)
}
