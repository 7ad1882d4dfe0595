package api

import (
	"context"
	"database/sql/driver"
	"fmt"
	"testing"

	"github.com/ogen-go/ogen/ogenerrors"
)

// TestClientGoneIsNotAFailure: a request whose client went away while it was served (its
// context canceled, the error its statements got) is a 499, neither a 500 logged at ERROR nor,
// when it happened in the key lookup, a 401 counted as a refused key.
func TestClientGoneIsNotAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lookup := fmt.Errorf("look up key: %w", ctx.Err())
	for name, err := range map[string]error{
		"a statement": fmt.Errorf("list recording rule sets: %w", ctx.Err()),
		"a statement whose connection pgx closed for the cancellation": fmt.Errorf("insert recording rule set: %w", driver.ErrBadConn),
		"the key lookup": &ogenerrors.SecurityError{OperationContext: ogenerrors.OperationContext{Name: "ListRecordingRuleSets"}, Security: "ApiKey", Err: lookup},
	} {
		if got := errorResponse(ctx, err); got.StatusCode != statusClientClosedRequest {
			t.Errorf("%s canceled by the client's leaving: %d %q, want %d", name, got.StatusCode, got.Response.Message, statusClientClosedRequest)
		}
		if got := errorResponse(context.Background(), err); got.StatusCode == statusClientClosedRequest {
			t.Errorf("%s: the same error with the request still there is not the client's leaving, got %d", name, got.StatusCode)
		}
	}
}
