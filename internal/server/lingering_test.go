package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// earlyAnswerAPI answers every request as the API does a body over one of its bounds: it reads
// the start of the body (64 KiB), then writes a 400 Error body, closes the body and returns with
// the rest unread. A request to /mgmt/openapi/5/held it holds until release is closed.
type earlyAnswerAPI struct{ entered, release chan struct{} }

func (a earlyAnswerAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/mgmt/openapi/5/held" {
		a.entered <- struct{}{}
		<-a.release
		return
	}
	defer r.Body.Close() // as the generated decoder does
	_, _ = io.CopyN(io.Discard, r.Body, 64<<10)
	writeErrorBody(w, http.StatusBadRequest, "requests: at most 100 items")
}

// lingerBodyBytes is the size of the bodies refused early: far over the socket buffers of
// loopback on both sides, so that a client writing it all is still writing when the answer comes.
const lingerBodyBytes = 15 << 20

// startLingerServer serves New's handler over earlyAnswerAPI on a real listener, with
// maxBodyBytes as --max-body-bytes. When shed, one slot and no queue: a request is held in the
// only slot, so that every other API request is shed (503) before its body is read.
func startLingerServer(t *testing.T, maxBodyBytes int64, shed bool) string {
	t.Helper()
	api := earlyAnswerAPI{entered: make(chan struct{}, 1), release: make(chan struct{})}
	opts := Options{MaxBodyBytes: maxBodyBytes}
	if shed {
		opts.MaxConcurrent, opts.QueueLength = 1, 0
	}
	srv := &http.Server{Handler: testHandler(api, opts),
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(RefusalListener(l, srv)) }()
	t.Cleanup(func() {
		close(api.release)
		_ = srv.Close()
	})
	if shed {
		go func() {
			if res, err := http.Get("http://" + l.Addr().String() + "/mgmt/openapi/5/held"); err == nil {
				res.Body.Close()
			}
		}()
		<-api.entered
	}
	return l.Addr().String()
}

// checkErrorAnswer fails unless status and body are the Error body with status want.
func checkErrorAnswer(t *testing.T, what string, status int, body []byte, want int) {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil || status != want || e.Code != want || e.Message == "" {
		t.Fatalf("%s: status %d, body %q (%v); want %d with the Error body", what, status, short(string(body)), err, want)
	}
}

// lingerCases are the early answers: the API's, after reading a little of a body within
// --max-body-bytes; the server's own 413 for a declared length over it and its 503 for a request
// shed, both read not at all.
var lingerCases = []struct {
	name         string
	maxBodyBytes int64
	shed         bool
	status       int
}{
	{"api-400", 16 << 20, false, http.StatusBadRequest},
	{"declared-413", 1 << 20, false, http.StatusRequestEntityTooLarge},
	{"shed-503", 16 << 20, true, http.StatusServiceUnavailable},
}

const lingerRounds = 20

// TestEarlyAnswerReachesGoClients: Go's default transport, with and without
// Expect: 100-continue, reads the whole early answer to a body it is still sending.
func TestEarlyAnswerReachesGoClients(t *testing.T) {
	body := bytes.Repeat([]byte("x"), lingerBodyBytes)
	for _, c := range lingerCases {
		for _, expect := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/expect-100-continue=%v", c.name, expect), func(t *testing.T) {
				addr := startLingerServer(t, c.maxBodyBytes, c.shed)
				client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 30 * time.Second}
				defer client.CloseIdleConnections()
				for i := range lingerRounds {
					req, err := http.NewRequest("POST", "http://"+addr+"/mgmt/openapi/5/batch", bytes.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/json")
					if expect {
						req.Header.Set("Expect", "100-continue")
					}
					res, err := client.Do(req)
					if err != nil {
						t.Fatalf("round %d: %v", i, err)
					}
					answer, err := io.ReadAll(res.Body)
					res.Body.Close()
					if err != nil {
						t.Fatalf("round %d: reading the answer: %v", i, err)
					}
					checkErrorAnswer(t, fmt.Sprintf("round %d", i), res.StatusCode, answer, c.status)
				}
			})
		}
	}
}

// TestEarlyAnswerReachesARawClientThatWritesEverythingFirst: a client that writes the whole
// request before reading anything (as many simple clients do) reads the early answer.
func TestEarlyAnswerReachesARawClientThatWritesEverythingFirst(t *testing.T) {
	body := bytes.Repeat([]byte("x"), lingerBodyBytes)
	for _, c := range lingerCases {
		t.Run(c.name, func(t *testing.T) {
			addr := startLingerServer(t, c.maxBodyBytes, c.shed)
			head := "POST /mgmt/openapi/5/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
				strconv.Itoa(len(body)) + "\r\n\r\n"
			for i := range lingerRounds {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // keeps a broken server from hanging the test
				if _, err := conn.Write(append([]byte(head), body...)); err != nil {
					conn.Close()
					t.Fatalf("round %d: writing the request: %v", i, err)
				}
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					conn.Close()
					t.Fatalf("round %d: reading the answer: %v", i, err)
				}
				answer, err := io.ReadAll(res.Body)
				conn.Close()
				if err != nil {
					t.Fatalf("round %d: reading the answer's body: %v", i, err)
				}
				checkErrorAnswer(t, fmt.Sprintf("round %d", i), res.StatusCode, answer, c.status)
			}
		})
	}
}

// pythonPoster posts a body of sys.argv[2] bytes to sys.argv[1] with urllib, sys.argv[3] times,
// printing one line per round: the status and the answer's body, or the exception.
const pythonPoster = `
import sys, urllib.request, urllib.error
url, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = b"x" * size
for i in range(rounds):
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            print(res.status, res.read().decode().strip(), flush=True)
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip(), flush=True)
    except Exception as e:
        print("exception", repr(e), flush=True)
`

// TestEarlyAnswerReachesPythonUrllib: Python's urllib (http.client under it writes the whole
// body before reading) reads the early answer.
func TestEarlyAnswerReachesPythonUrllib(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; this test needs it as the client")
	}
	for _, c := range lingerCases {
		t.Run(c.name, func(t *testing.T) {
			addr := startLingerServer(t, c.maxBodyBytes, c.shed)
			out, err := exec.Command(python, "-c", pythonPoster, "http://"+addr+"/mgmt/openapi/5/batch",
				strconv.Itoa(lingerBodyBytes), strconv.Itoa(lingerRounds)).Output()
			if err != nil {
				t.Fatalf("python3: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != lingerRounds {
				t.Fatalf("python3 printed %d lines, want %d:\n%s", len(lines), lingerRounds, out)
			}
			for i, line := range lines {
				status, answer, _ := strings.Cut(line, " ")
				code, _ := strconv.Atoi(status)
				checkErrorAnswer(t, fmt.Sprintf("round %d (%s)", i, short(line)), code, []byte(answer), c.status)
			}
		})
	}
}

// TestEarlyAnswerOverHTTP2: over TLS with HTTP/2 (where the drain does nothing: the stream ends,
// not the connection), the early answer arrives, and the connection serves the next request.
func TestEarlyAnswerOverHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(testHandler(earlyAnswerAPI{}, Options{MaxBodyBytes: 16 << 20}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	body := bytes.Repeat([]byte("x"), lingerBodyBytes)
	for i := range 5 {
		res, err := client.Post(srv.URL+"/mgmt/openapi/5/batch", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		answer, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("round %d: reading the answer: %v", i, err)
		}
		if res.ProtoMajor != 2 {
			t.Fatalf("round %d: answered over %s, want HTTP/2", i, res.Proto)
		}
		checkErrorAnswer(t, fmt.Sprintf("round %d", i), res.StatusCode, answer, http.StatusBadRequest)
	}
	res, err := client.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz after the early answers: %d", res.StatusCode)
	}
}

// bodyReadingOKAPI reads the whole body and answers 204, as the API does a valid request.
type bodyReadingOKAPI struct{}

func (bodyReadingOKAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.WriteHeader(http.StatusNoContent)
}

// BenchmarkRootMiddleware is the root middleware's cost of a normal request, net/http's reading
// and writing apart: a GET, and a POST whose 1 KiB body the API reads to its end (the requests
// the lingering close must not slow down).
func BenchmarkRootMiddleware(b *testing.B) {
	h := testHandler(bodyReadingOKAPI{}, Options{})
	body := bytes.Repeat([]byte("x"), 1<<10)
	for _, method := range []string{"GET", "POST"} {
		b.Run(method, func(b *testing.B) {
			w := &discardingWriter{header: http.Header{}}
			reader := bytes.NewReader(body)
			req := httptest.NewRequest(method, "/mgmt/openapi/5/x", nil)
			b.ReportAllocs()
			for b.Loop() {
				if method == "POST" {
					reader.Reset(body)
					req.Body, req.ContentLength = io.NopCloser(reader), int64(len(body))
				}
				clear(w.header)
				h.ServeHTTP(w, req)
				if w.status != http.StatusNoContent {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}
