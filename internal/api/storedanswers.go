package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// storedAnswerOperation is the GET by id whose answer is the stored document as it is (see
// recordingrules.AnswerRecordingRuleSet): the hot path of reads. The generated server routes it,
// checks its security and decodes its id as for every operation, then calls handler's
// GetRecordingRuleSet (below), which writes the stored bytes to the stream slot's writer
// instead of decoding the document into the generated type for the generated encoder to encode
// again.
const storedAnswerOperation = oas.GetRecordingRuleSetOperation

// storedAnswerPrefix returns the path of storedAnswerOperation up to its one path parameter,
// which must end it, read from the OpenAPI document.
func storedAnswerPrefix(doc *openapiDocument) (string, error) {
	for _, o := range doc.operations {
		var op struct {
			OperationID string `yaml:"operationId"`
		}
		if err := o.decode(&op); err != nil {
			return "", err
		}
		if op.OperationID != storedAnswerOperation {
			continue
		}
		i := strings.IndexByte(o.path, '{')
		if o.method != "get" || i < 0 || !strings.HasSuffix(o.path, "}") || strings.ContainsAny(o.path[i+1:len(o.path)-1], "{}/") {
			return "", fmt.Errorf("openapi document: %s must be a GET whose path ends with its one parameter", storedAnswerOperation)
		}
		return o.path[:i], nil
	}
	return "", fmt.Errorf("openapi document: no operation %s", storedAnswerOperation)
}

// mayBeStoredAnswer reports whether path may be routed to storedAnswerOperation: the prefix and
// one more segment. Another operation routed to with a slot answers as without one.
func (a *API) mayBeStoredAnswer(path string) bool {
	rest, ok := strings.CutPrefix(path, a.storedAnswerPrefix)
	return ok && rest != "" && strings.IndexByte(rest, '/') < 0
}

// GetRecordingRuleSet answers with the set's stored document, written to the stream slot's
// writer, when the request came through API.ServeHTTP; as the area's method otherwise (tests).
func (h handler) GetRecordingRuleSet(ctx context.Context, params oas.GetRecordingRuleSetParams) (*oas.RecordingRuleSet, error) {
	slot, ok := ctx.Value(streamSlotKey{}).(*streamSlot)
	if !ok {
		return h.RuleSetHandler.GetRecordingRuleSet(ctx, params)
	}
	err := h.AnswerRecordingRuleSet(ctx, params, func(doc []byte) error {
		w := slot.ResponseWriter
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		// A failed write is a client gone away: the answer cannot change any more, and the
		// generated encoder's failure to write is not answered either.
		_, _ = w.Write(doc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slot.answered = true
	return nil, errAnsweredByStream
}
