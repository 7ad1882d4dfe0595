package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// ExpectStreamedAsBuffered checks that GET path, which the server answers by streaming (package
// streaming), answers with the bytes the generated encoder writes for the list the operation's
// handler method returns for the same team; buffered calls that method with a caller of teamID.
// Objects held in Go maps (free-form labels, selected values) are encoded in Go's map order,
// which changes between two encodings: when the bytes differ, both answers must then be the same
// JSON value (arrays in the same order). It returns the streamed body.
func ExpectStreamedAsBuffered[L interface{ Encode(e *jx.Encoder) }](t testing.TB, env *Env, path, key string, teamID int64,
	buffered func(ctx context.Context) (L, error)) []byte {
	t.Helper()
	return ExpectStreamedAsBufferedFor(t, env, path, key, &auth.Principal{TeamID: teamID}, buffered)
}

// ExpectStreamedAsBufferedFor is ExpectStreamedAsBuffered for a list that depends on more of the
// caller than its team (the calling key's id): buffered is called with caller.
func ExpectStreamedAsBufferedFor[L interface{ Encode(e *jx.Encoder) }](t testing.TB, env *Env, path, key string, caller *auth.Principal,
	buffered func(ctx context.Context) (L, error)) []byte {
	t.Helper()
	res := env.JSON(t, "GET", path, key, "")
	if res.Status != 200 {
		t.Fatalf("GET %s: status %d; body %.600s", path, res.Status, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	list, err := buffered(auth.WithPrincipal(context.Background(), caller))
	if err != nil {
		t.Fatalf("buffered list: %v", err)
	}
	e := new(jx.Encoder)
	list.Encode(e)
	if !bytes.Equal(res.Body, e.Bytes()) && !sameJSONValue(res.Body, e.Bytes()) {
		at := 0
		for at < len(res.Body) && at < len(e.Bytes()) && res.Body[at] == e.Bytes()[at] {
			at++
		}
		t.Fatalf("GET %s: the streamed answer (%d bytes) differs from the buffered one (%d bytes) at byte %d:\nstreamed %.300s\nbuffered %.300s",
			path, len(res.Body), len(e.Bytes()), at, res.Body[max(0, at-100):], e.Bytes()[max(0, at-100):])
	}
	return res.Body
}

func sameJSONValue(a, b []byte) bool {
	var va, vb any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
