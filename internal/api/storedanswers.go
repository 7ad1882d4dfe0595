package api

import (
	"context"
	"net/http"

	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// storedAnswerOperation is the GET by id whose answer is the stored document as it is (see
// recordingrules.AnswerRecordingRuleSet): the hot path of reads. The generated server routes it,
// checks its security and decodes its id as for every operation, then calls handler's
// GetRecordingRuleSet (below), which writes the stored bytes to the stream slot's writer
// instead of decoding the document into the generated type for the generated encoder to encode
// again. Its record is marked streamedThroughRouter (operations.go), which also checks that it is
// a GET whose path ends with its one parameter.
const storedAnswerOperation = oas.GetRecordingRuleSetOperation

// GetRecordingRuleSet answers with the set's stored document, written to the stream slot's
// writer, when the request came through API.ServeHTTP; as the area's method otherwise (tests).
func (h handler) GetRecordingRuleSet(ctx context.Context, params oas.GetRecordingRuleSetParams) (*oas.RecordingRuleSet, error) {
	slot := streamSlotOf(ctx)
	if slot == nil {
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
