package streaming_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/streaming"
)

type word string

func (w word) Encode(e *jx.Encoder) { e.Str(string(w)) }

// listOf answers {"items":[…]} with n words of 100 characters, failing with fail after them
// when fail is not nil.
func listOf(n int, fail error) streaming.List {
	return func(ctx context.Context, a *streaming.Answer) error {
		return a.Array("items", func() error {
			for range n {
				if err := a.Item(word(strings.Repeat("w", 100))); err != nil {
					return err
				}
			}
			return fail
		})
	}
}

// serve runs Serve behind a real HTTP server, answering Serve's returned error with a 500.
func serve(t *testing.T, list streaming.List) (*http.Response, []byte, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := streaming.Serve(r.Context(), w, list, func(error) {}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res, body, err
}

func TestAnswerIsTheEncodedList(t *testing.T) {
	for _, n := range []int{0, 1, 3 * streaming.BufferBytes / 100} {
		res, body, err := serve(t, listOf(n, nil))
		if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("%d items: %v, status %d, %q", n, err, res.StatusCode, res.Header.Get("Content-Type"))
		}
		e := new(jx.Encoder)
		e.ObjStart()
		e.FieldStart("items")
		e.ArrStart()
		for range n {
			word(strings.Repeat("w", 100)).Encode(e)
		}
		e.ArrEnd()
		e.ObjEnd()
		if string(body) != string(e.Bytes()) {
			t.Fatalf("%d items: body of %d bytes differs from the encoded %d bytes", n, len(body), len(e.Bytes()))
		}
	}
}

func TestErrorBeforeTheFirstByteIsAnswered(t *testing.T) {
	res, body, err := serve(t, listOf(10, errors.New("boom")))
	if err != nil || res.StatusCode != 500 || !strings.Contains(string(body), "boom") || strings.Contains(string(body), "items") {
		t.Fatalf("%v, status %d, body %q", err, res.StatusCode, body)
	}
}

func TestErrorAfterTheFirstByteAbortsTheConnection(t *testing.T) {
	logged := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = streaming.Serve(r.Context(), w, listOf(2*streaming.BufferBytes/100, errors.New("boom")), func(err error) { logged <- err })
		t.Error("Serve returned after the first byte")
	}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err == nil {
		t.Fatalf("read a complete body of %d bytes, want a broken connection", len(body))
	}
	if res.StatusCode != 200 || len(body) < streaming.BufferBytes {
		t.Fatalf("status %d, %d bytes before the break", res.StatusCode, len(body))
	}
	if err := <-logged; err == nil || err.Error() != "boom" {
		t.Fatalf("logged %v", err)
	}
}
