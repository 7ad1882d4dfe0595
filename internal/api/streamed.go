package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/server"
	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

// streamedLists are the list operations served by writing their answer while the rows are read
// (package streaming) instead of through the generated encoder, which needs the whole answer in
// memory: the lists the public documents do not page. Each is a GET without parameters, so the
// generated server would do nothing for it but the security check and the encoding, and both are
// done here the same way (TestStreamedListsTakeNoParameters holds the first point). Their records
// are marked streamedHere (operations.go), which also checks that each is such a GET.
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

// routedStreamedLists are the list operations that the public documents do not page and that
// take parameters (query parameters or query objects): the generated server routes them, checks
// their security and decodes their parameters as for every operation, then calls the handler's
// method, which handler overrides for these (below) to write the answer while the rows are read
// when the request came through API.ServeHTTP. Called otherwise (tests), they answer as the
// area's method does.
var routedStreamedLists = []string{
	oas.ListPoliciesOperation,
	oas.ListSlosOperation,
	oas.ListCustomRolesOperation,
	oas.ListPresetSummariesOperation,
}

// ListPolicies streams the area's answer (see routedStreamedLists).
func (h handler) ListPolicies(ctx context.Context, params oas.ListPoliciesParams) (*oas.PolicyList, error) {
	return streamThroughRouter(ctx, h.PolicyHandler.ListPolicies, params, h.StreamPolicies)
}

// ListCustomRoles streams the area's answer (see routedStreamedLists).
func (h handler) ListCustomRoles(ctx context.Context, params oas.ListCustomRolesParams) (*oas.CustomRoleList, error) {
	return streamThroughRouter(ctx, h.RoleHandler.ListCustomRoles, params, h.StreamCustomRoles)
}

// ListPresetSummaries streams the area's answer (see routedStreamedLists).
func (h handler) ListPresetSummaries(ctx context.Context, params oas.ListPresetSummariesParams) (*oas.PresetSummaryList, error) {
	return streamThroughRouter(ctx, h.PresetHandler.ListPresetSummaries, params, h.StreamPresetSummaries)
}

// ListSlos streams the area's answer (see routedStreamedLists); its filters are a query object.
func (h handler) ListSlos(ctx context.Context) (*oas.SloList, error) {
	return streamThroughRouter(ctx,
		func(ctx context.Context, _ struct{}) (*oas.SloList, error) {
			return h.SloHandler.ListSlos(ctx)
		},
		struct{}{},
		func(ctx context.Context, _ struct{}, a *streaming.Answer) error { return h.StreamSlos(ctx, a) })
}

// streamSlot carries the response writer of a request for a routed streamed list, or for the
// stored answer of storedAnswerOperation, from API.ServeHTTP, through the generated server, to
// the operation's method. The generated server
// writes to the slot; once the method has answered on the writer itself, the slot discards what
// the generated server writes after it (its answer to errAnsweredByStream).
type streamSlot struct {
	http.ResponseWriter
	operation string
	answered  bool
}

func (s *streamSlot) WriteHeader(code int) {
	if !s.answered {
		s.ResponseWriter.WriteHeader(code)
	}
}

func (s *streamSlot) Write(p []byte) (int, error) {
	if s.answered {
		return len(p), nil
	}
	return s.ResponseWriter.Write(p)
}

// withStreamSlot prepares a request for a routed streamed list outside API.ServeHTTP (which puts
// the slot in the request's edge itself): the generated server is to write to the returned
// writer and read the returned request.
func withStreamSlot(w http.ResponseWriter, r *http.Request, operation string) (http.ResponseWriter, *http.Request) {
	edge := &requestEdge{slot: streamSlot{ResponseWriter: w, operation: operation}, slotted: true}
	return &edge.slot, r.WithContext(context.WithValue(r.Context(), requestEdgeKey{}, edge))
}

// streamSlotOf is the request's stream slot, nil when it has none.
func streamSlotOf(ctx context.Context) *streamSlot {
	if e := edgeOf(ctx); e != nil && e.slotted {
		return &e.slot
	}
	return nil
}

// errAnsweredByStream tells the generated server that the method has answered already: it is an
// *oas.ErrorStatusCode, which the generated server writes as it is, without calling NewError, to
// a slot that discards it.
var errAnsweredByStream = &oas.ErrorStatusCode{StatusCode: http.StatusOK}

// streamThroughRouter answers a routed streamed list: by streaming when ctx carries a stream
// slot, by buffered otherwise. An error of stream before its first byte is returned, for the
// generated server to answer as the operation's errors; after it, the connection is aborted
// (see streaming.Serve).
func streamThroughRouter[P, L any](ctx context.Context, buffered func(context.Context, P) (L, error), params P,
	stream func(context.Context, P, *streaming.Answer) error) (L, error) {
	var none L
	slot := streamSlotOf(ctx)
	if slot == nil {
		return buffered(ctx, params)
	}
	err := streaming.Serve(ctx, slot.ResponseWriter, func(ctx context.Context, a *streaming.Answer) error {
		return stream(ctx, params, a)
	}, func(err error) {
		slog.ErrorContext(ctx, "list failed after its first bytes; connection aborted",
			"operation", slot.operation, "error", err.Error())
	})
	if err != nil {
		return none, err
	}
	slot.answered = true
	return none, errAnsweredByStream
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
